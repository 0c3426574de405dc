"""The shapes of the lint API's answers, for the OpenAPI schema (web.api.lint builds them)."""

from __future__ import annotations

from rest_framework import serializers

from core.schema import ObjectKeySerializer, OmeBehaviourSerializer, SeverityCountsSerializer
from lint.rules import SEVERITIES
from matching import EFFECTS
from web.api.freshness import FreshnessSerializer


class LintFindingSerializer(serializers.Serializer):
    severity = serializers.ChoiceField(choices=SEVERITIES)
    code = serializers.CharField()
    message = serializers.CharField()
    runtimes = ObjectKeySerializer(many=True)
    models = ObjectKeySerializer(many=True)
    namespaces = serializers.ListField(child=serializers.CharField())
    details = serializers.DictField(help_text="What the rule found, by code (free-form).")


class LintQuirkSerializer(serializers.Serializer):
    code = serializers.CharField()
    meaning = serializers.CharField()


class LintGroupFixSerializer(serializers.Serializer):
    target = ObjectKeySerializer()
    summary = serializers.CharField()
    merge_patch = serializers.JSONField(help_text="The Kubernetes merge patch of `target`.")
    entries = serializers.JSONField(allow_null=True)
    others = serializers.JSONField(allow_null=True)


class LintMoveSerializer(serializers.Serializer):
    model = ObjectKeySerializer()
    vars()["from"] = ObjectKeySerializer(allow_null=True)  # a keyword: declared by name
    to = ObjectKeySerializer(allow_null=True)
    rows = serializers.IntegerField()
    effect = serializers.ChoiceField(
        choices=EFFECTS, help_text="What the move does to people (matching.effects); a gain is no harm."
    )


class LintProofSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="What the what-if found, the harm first.")
    rows_changed = serializers.IntegerField()
    together_with = serializers.ListField(child=serializers.CharField())
    harm = serializers.DictField(
        child=serializers.IntegerField(), help_text="Models it takes off their runtime, renames, moves: less is better."
    )
    effects = serializers.DictField(
        child=LintMoveSerializer(many=True), help_text="The moves by effect: gains, losses, renames, moves."
    )
    moves = LintMoveSerializer(many=True)


class LintProvenFixSerializer(serializers.Serializer):
    fix = LintGroupFixSerializer()
    proof = LintProofSerializer(allow_null=True)


class AcknowledgementSerializer(serializers.Serializer):
    key = serializers.CharField()
    title = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    by = serializers.CharField()
    at = serializers.DateTimeField()
    withdrawn_at = serializers.DateTimeField(allow_null=True)
    withdrawn_by = serializers.CharField(allow_null=True)


class LintGroupSerializer(serializers.Serializer):
    key = serializers.CharField()
    cause = serializers.CharField()
    severity = serializers.ChoiceField(choices=SEVERITIES)
    title = serializers.CharField()
    count = serializers.IntegerField()
    signature = serializers.CharField()
    runtimes = ObjectKeySerializer(many=True)
    models = ObjectKeySerializer(many=True)
    quirks = LintQuirkSerializer(many=True)
    fix = LintGroupFixSerializer(allow_null=True)
    proof = LintProofSerializer(allow_null=True, help_text="The what-if of the fix; groups are ranked by its harm.")
    alternative = LintProvenFixSerializer(allow_null=True)
    together = LintProvenFixSerializer(allow_null=True, help_text="The fix together with another group's fix.")
    no_fix = serializers.CharField(allow_null=True)
    dedicated = serializers.CharField(
        allow_null=True, help_text="Why the group's runtime serves one model (its container's served name, settings)."
    )
    findings = LintFindingSerializer(many=True)
    acknowledged = AcknowledgementSerializer(allow_null=True)


class LintReportSerializer(serializers.Serializer):
    ome = OmeBehaviourSerializer()
    freshness = FreshnessSerializer()
    cluster = serializers.CharField()
    counts = SeverityCountsSerializer()
    codes = serializers.DictField(child=serializers.IntegerField(), help_text="Findings per rule code.")
    group_counts = SeverityCountsSerializer()
    groups = LintGroupSerializer(many=True)
    findings = LintFindingSerializer(many=True)
    fixes_pending_for = serializers.IntegerField(
        allow_null=True,
        help_text="The inventory version whose fixes the what-if is proving; meanwhile no group lists a fix. "
        "Null: every fix listed is proven for the current inventory.",
    )


class AcknowledgementListSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    results = AcknowledgementSerializer(many=True)
