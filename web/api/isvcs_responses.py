"""The shape of the InferenceService verdicts answer, for the OpenAPI schema (web.api.isvcs builds it)."""

from __future__ import annotations

from rest_framework import serializers

from core.schema import ObjectKeySerializer, OmeBehaviourSerializer
from web.api.freshness import FreshnessSerializer


class IsvcEventSerializer(serializers.Serializer):
    reason = serializers.CharField()
    message = serializers.CharField()


class IsvcObservedSerializer(serializers.Serializer):
    ready = serializers.CharField(allow_null=True, help_text="The Ready condition's status: True, False or Unknown.")
    runtime_ready = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_null=True, allow_blank=True)
    message = serializers.CharField(allow_null=True, allow_blank=True)


class IsvcFirstVerdictSerializer(serializers.Serializer):
    verdict = serializers.CharField()
    runtime = ObjectKeySerializer(allow_null=True)
    failure = serializers.CharField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    at = serializers.CharField()


class IsvcIgnoredSerializer(serializers.Serializer):
    reason = serializers.CharField(
        help_text="wrong-kind, shadowed, pvc-namespace, runtime-chain, model-disabled, runtime-disabled or "
        "accelerator-dropped (matching.IGNORED_REASONS)."
    )
    text = serializers.CharField(help_text="What OME does, with OME's own words where it has any.")
    fix = serializers.CharField(help_text="The one-line fix.")


class IsvcVerdictSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    uid = serializers.CharField(allow_blank=True)
    model = ObjectKeySerializer(allow_null=True)
    behaviour = serializers.CharField(help_text="The OME behaviour profile of the verdict.")
    webhook_model = ObjectKeySerializer(allow_null=True)
    runtime = ObjectKeySerializer(allow_null=True)
    runtime_named = serializers.BooleanField()
    score = serializers.IntegerField(allow_null=True)
    verdict = serializers.CharField()
    # A field named like an attribute of DRF's Field: the serializer's metaclass takes it off the class.
    label = serializers.CharField()  # type: ignore[assignment]
    failure = serializers.CharField(allow_null=True, allow_blank=True)
    error = serializers.CharField(allow_null=True, allow_blank=True)
    event = IsvcEventSerializer(allow_null=True)
    observed = IsvcObservedSerializer(allow_null=True)
    first = IsvcFirstVerdictSerializer(allow_null=True)
    drift = serializers.CharField(allow_null=True)
    drift_basis = serializers.CharField(allow_null=True)
    fix = serializers.CharField(allow_null=True, allow_blank=True)
    notes = serializers.ListField(child=serializers.CharField())
    ignored = IsvcIgnoredSerializer(
        allow_null=True, help_text="Why OME admits the service but silently will not (re)render it; null when it does."
    )
    reapply = serializers.CharField(
        allow_null=True,
        help_text="The command that makes OME decide again, for a service waiting for a re-apply after a model "
        "change (OME does not watch models); null otherwise.",
    )


class IsvcVerdictListSerializer(serializers.Serializer):
    ome = OmeBehaviourSerializer()
    freshness = FreshnessSerializer()
    results = IsvcVerdictSerializer(many=True)
