"""The shapes of the fleet API's answers, for the OpenAPI schema (web.api.fleet builds them)."""

from __future__ import annotations

from rest_framework import serializers

from core.schema import ObjectKeySerializer, SeverityCountsSerializer
from web.api.freshness import FreshnessSerializer


class FleetCellSerializer(serializers.Serializer):
    outcome = serializers.CharField(help_text="selected, no-runtime, invalid, or absent from the cluster.")
    pick = ObjectKeySerializer(allow_null=True)
    score = serializers.IntegerField(allow_null=True)


class FleetRowSerializer(serializers.Serializer):
    model = ObjectKeySerializer()
    namespace = serializers.CharField()
    same_in_every_namespace = serializers.BooleanField(
        help_text="A cluster-scoped model whose verdicts are the same in every namespace: one row stands for all."
    )
    disagree = serializers.BooleanField()
    reasons = serializers.ListField(child=serializers.CharField(), help_text="Why the clusters disagree.")
    clusters = serializers.DictField(
        child=FleetCellSerializer(allow_null=True), help_text="By cluster name; null where the model is absent."
    )


class FleetSyncSerializer(serializers.Serializer):
    state = serializers.CharField()
    synced_at = serializers.DateTimeField(allow_null=True)
    age_seconds = serializers.IntegerField(allow_null=True)
    # A field named like an attribute of DRF's Field: the serializer's metaclass takes it off the class.
    errors = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]


class FleetClusterSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    # A field named like an attribute of DRF's Field: the serializer's metaclass takes it off the class.
    source = serializers.CharField()  # type: ignore[assignment]
    ome_behaviour = serializers.CharField()
    built_at = serializers.DateTimeField(allow_null=True)
    models = serializers.IntegerField(help_text="The cluster's models, each counted once where it lives.")
    models_where = serializers.CharField(help_text='The scope of the model counts: "across the cluster".')
    models_without_runtime = serializers.IntegerField(help_text="No runtime selected: no match or manual-only.")
    models_no_match = serializers.IntegerField(help_text="No runtime matches at all.")
    models_manual_only = serializers.IntegerField(help_text="Manual-only matches only (a named runtime works).")
    models_invalid = serializers.IntegerField()
    isvcs = serializers.IntegerField()
    isvcs_at_risk = serializers.IntegerField()
    lint = SeverityCountsSerializer()
    lint_total = serializers.IntegerField()
    sync = FleetSyncSerializer()
    freshness = FreshnessSerializer()


class FleetSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = FleetRowSerializer(many=True)
    clusters = FleetClusterSerializer(many=True)
    disagreeing = serializers.IntegerField(help_text="Rows where the clusters disagree.")


class RuntimeReachSerializer(serializers.Serializer):
    runtime = ObjectKeySerializer()
    clusters = serializers.IntegerField(help_text="In how many clusters it is OME's pick for some model.")
    models = serializers.IntegerField()
    models_by_cluster = serializers.DictField(child=serializers.IntegerField())
    definition_differs = serializers.BooleanField()


class FleetRuntimesSerializer(serializers.Serializer):
    clusters = serializers.ListField(child=serializers.CharField())
    runtimes = RuntimeReachSerializer(many=True)
