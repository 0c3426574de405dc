"""The shapes of the what-if API's answers, for the OpenAPI schema (web.api.whatif and
web.api.whatif_check build them)."""

from __future__ import annotations

from rest_framework import serializers

from core.schema import ObjectKeySerializer, ObjectRefSerializer, OmeBehaviourSerializer, ProblemSerializer
from web.api.freshness import FreshnessSerializer

OUTCOME_HELP = "The row's outcome: selected, no-runtime or invalid; null where the model is absent."


class ObjectChangeSerializer(ObjectKeySerializer):
    action = serializers.CharField(help_text="added, changed or deleted")


# What a cell's and a row's change say in both the what-if and the check (the pick's name
# differs); comments, not docstrings, which would become the subclasses' schema descriptions.
class CellChangeSerializer(serializers.Serializer):
    runtime = ObjectKeySerializer()
    old_status = serializers.CharField(allow_null=True)
    new_status = serializers.CharField(allow_null=True)
    old_score = serializers.IntegerField(allow_null=True)
    new_score = serializers.IntegerField(allow_null=True)


class RowChangeSerializer(serializers.Serializer):
    model = ObjectKeySerializer()
    namespace = serializers.CharField()
    old_outcome = serializers.CharField(allow_null=True, help_text=OUTCOME_HELP)
    new_outcome = serializers.CharField(allow_null=True, help_text=OUTCOME_HELP)
    old_score = serializers.IntegerField(allow_null=True)
    new_score = serializers.IntegerField(allow_null=True)


class CellDiffSerializer(CellChangeSerializer):
    old_rank = serializers.IntegerField(allow_null=True)
    new_rank = serializers.IntegerField(allow_null=True)


class RowDiffSerializer(RowChangeSerializer):
    old_selected = ObjectKeySerializer(allow_null=True)
    new_selected = ObjectKeySerializer(allow_null=True)
    pick_changed = serializers.BooleanField()
    gained = ObjectKeySerializer(many=True)
    lost = ObjectKeySerializer(many=True)
    old_error = serializers.CharField(allow_null=True)
    new_error = serializers.CharField(allow_null=True)
    old_row = serializers.BooleanField()
    new_row = serializers.BooleanField()
    cells = CellDiffSerializer(many=True)


class ValueWarningSerializer(serializers.Serializer):
    object = ObjectKeySerializer()
    path = serializers.CharField()
    problem = serializers.CharField()


class WhatIfSummarySerializer(serializers.Serializer):
    rows_changed = serializers.IntegerField()
    cells_changed = serializers.IntegerField()
    picks_changed = serializers.IntegerField()
    models_evaluated = serializers.IntegerField()
    rows_evaluated = serializers.IntegerField()


class WhatIfSerializer(serializers.Serializer):
    ome = OmeBehaviourSerializer()
    freshness = FreshnessSerializer()
    cluster = serializers.CharField()
    objects = ObjectChangeSerializer(many=True)
    rows = RowDiffSerializer(many=True, help_text="Only the rows that would change.")
    warnings = ValueWarningSerializer(many=True)
    summary = WhatIfSummarySerializer()


class MissSerializer(serializers.Serializer):
    check = serializers.CharField()
    model = serializers.JSONField(allow_null=True, help_text="The model's value for the check.")
    runtime = serializers.JSONField(allow_null=True, help_text="The runtime entry's value for the check.")
    reason = serializers.CharField(help_text="OME's reason text.")


class FixPatchSerializer(ObjectKeySerializer):
    operations = serializers.ListField(child=serializers.DictField(), help_text="JSON patch operations.")


class FixImpactSerializer(serializers.Serializer):
    gains = serializers.ListField(child=serializers.DictField(), help_text="Other models that get a runtime.")
    losses = serializers.ListField(child=serializers.DictField(), help_text="Other models that lose their runtime.")
    renames = serializers.ListField(
        child=serializers.DictField(), help_text="Models that would be served under another model's name."
    )
    moves = serializers.ListField(child=serializers.DictField(), help_text="Other models that change runtime.")
    changes = serializers.ListField(child=serializers.DictField(), help_text="The matrix rows the fix changes.")


class FixSerializer(serializers.Serializer):
    side = serializers.ChoiceField(choices=["model", "runtime", "both"])
    runtime = ObjectKeySerializer(help_text="The runtime the fix makes match (a created one, if any).")
    distance = serializers.IntegerField(help_text="The failed checks of the near miss it fixes.")
    checks = serializers.ListField(child=serializers.CharField())
    changes = serializers.ListField(child=serializers.CharField())
    patches = FixPatchSerializer(many=True)
    pipeline_patch = serializers.JSONField(
        allow_null=True, help_text="The diffusionPipeline merge patch, if only that."
    )
    created = serializers.ListField(
        child=serializers.DictField(), help_text="The manifests of the objects it creates (a derived runtime)."
    )
    arguments = serializers.ListField(
        child=serializers.DictField(), help_text="Container arguments a created runtime changes: where, old, new."
    )
    needs_review = serializers.ListField(
        child=serializers.CharField(), help_text="Model-specific arguments it kept as they were: review them."
    )
    kubectl = serializers.ListField(child=serializers.CharField())
    impact = FixImpactSerializer(allow_null=True, help_text="Null when it was not measured.")


class NearMissRuntimeSerializer(ObjectKeySerializer):
    id = serializers.IntegerField(allow_null=True, help_text="Resource id (/api/v1/runtimes/{id}/).")


class NearMissSerializer(serializers.Serializer):
    runtime = NearMissRuntimeSerializer()
    entry = serializers.IntegerField(allow_null=True)
    distance = serializers.IntegerField(help_text="The number of failed checks.")
    failed = MissSerializer(many=True)
    fixes_evaluated = serializers.BooleanField()
    dedicated_to_another_model = serializers.CharField(
        allow_null=True, help_text="Why the runtime serves another model: then no fix is offered on it."
    )
    withheld_fixes = serializers.ListField(
        child=serializers.CharField(), help_text="Fixes not offered: they would serve a model under another's name."
    )
    fixes = FixSerializer(many=True)


class NearMissesSerializer(serializers.Serializer):
    ome = OmeBehaviourSerializer()
    freshness = FreshnessSerializer()
    model = ObjectRefSerializer()
    namespace = serializers.CharField()
    unserved = serializers.CharField(allow_null=True, help_text="The recorded fact no runtime accepts, if none does.")
    fixes = FixSerializer(many=True, help_text="Every fix of every near miss, best first.")
    near_misses = NearMissSerializer(many=True)


class CheckCellSerializer(CellChangeSerializer):
    reason = serializers.CharField(allow_null=True)


class CheckRowSerializer(RowChangeSerializer):
    everywhere = serializers.BooleanField(
        help_text="A cluster-scoped model that changes alike in cluster scope and every namespace: one row "
        "stands for them all (`namespace` is then empty)."
    )
    stands_for = serializers.IntegerField(help_text="How many rows (cluster scope and each namespace) this one is.")
    old_pick = ObjectKeySerializer(allow_null=True)
    new_pick = ObjectKeySerializer(allow_null=True)
    reason = serializers.CharField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    conditions = serializers.ListField(child=serializers.CharField())
    cells = CheckCellSerializer(many=True)


class CheckIsvcSerializer(serializers.Serializer):
    isvc = ObjectKeySerializer()
    old_verdict = serializers.CharField(allow_null=True)
    new_verdict = serializers.CharField(allow_null=True)
    old_model = ObjectKeySerializer(allow_null=True)
    new_model = ObjectKeySerializer(allow_null=True)
    old_runtime = ObjectKeySerializer(allow_null=True)
    new_runtime = ObjectKeySerializer(allow_null=True)
    reason = serializers.CharField(allow_null=True)
    fix = serializers.CharField(allow_null=True)
    conditions = serializers.ListField(child=serializers.CharField())


class CheckSummarySerializer(serializers.Serializer):
    rows_compared = serializers.IntegerField()
    isvcs_compared = serializers.IntegerField()
    rows_changed = serializers.IntegerField()
    cells_changed = serializers.IntegerField()
    isvcs_changed = serializers.IntegerField()
    conditions = serializers.DictField(child=serializers.IntegerField(), help_text="Occurrences per condition.")


class CheckSectionSerializer(serializers.Serializer):
    title = serializers.CharField()
    behaviour = serializers.CharField()
    objects = ObjectChangeSerializer(many=True)
    rows = CheckRowSerializer(many=True)
    isvcs = CheckIsvcSerializer(many=True)
    summary = CheckSummarySerializer()
    ome = OmeBehaviourSerializer()
    freshness = FreshnessSerializer()


class CheckReportSerializer(serializers.Serializer):
    sections = CheckSectionSerializer(many=True, help_text="One per cluster checked.")
    fail_on = serializers.ListField(child=serializers.CharField())
    failed = serializers.BooleanField()
    found = serializers.DictField(
        child=serializers.IntegerField(), help_text="Occurrences of each `fail_on` condition."
    )
    exit_code = serializers.IntegerField(help_text="0, or 1 when a `fail_on` condition occurs.")
    problems = ProblemSerializer(many=True, help_text="The manifests' schema warnings (`lenient`).")
    rendered = serializers.CharField(required=False, help_text="The report in `format`, unless json.")
