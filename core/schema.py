"""Response shapes every app's API shares, for the OpenAPI schema: an object's key, and the OME
that judged a cluster. Each app describes its own responses with these (tests/api/test_contract.py
fails on any 2xx answer the schema leaves untyped)."""

from __future__ import annotations

from rest_framework import serializers

from .web import CLUSTER_TOKEN

# The severity of a manifest's problem and of a policy's assertion (matching.Problem,
# matching.policy.Assertion).
ERROR_OR_WARNING = ["error", "warning"]


class ObjectKeySerializer(serializers.Serializer):
    kind = serializers.CharField()
    namespace = serializers.CharField(help_text=f"`{CLUSTER_TOKEN}` for a cluster-scoped kind.")
    name = serializers.CharField()


class ObjectRefSerializer(ObjectKeySerializer):
    id = serializers.IntegerField(help_text="Resource id (/api/v1/models/{id}/ or /api/v1/runtimes/{id}/).")


class OmeBehaviourSerializer(serializers.Serializer):
    """An OME behaviour profile (matching.BEHAVIOURS) and, for a cluster, why it judges it."""

    name = serializers.CharField(help_text="The profile's name, e.g. `078c923f`.")
    commit = serializers.CharField(help_text="The OME commit whose runtime selection the verdicts follow.")
    date = serializers.CharField()
    summary = serializers.CharField()
    changes = serializers.ListField(child=serializers.CharField(), help_text="The behaviour changes it includes.")
    deployment_modes = serializers.ListField(child=serializers.CharField())
    up_to_release = serializers.CharField(
        allow_null=True, help_text="The newest OME release it stands for; null for every later one."
    )
    profile = serializers.CharField(required=False, help_text="The profile judging the cluster.")
    # A field named like an attribute of DRF's Field: the serializer's metaclass takes it off the class.
    source = serializers.CharField(required=False, help_text="How it was chosen: detected, registration, admin, ...")  # type: ignore[assignment]
    version = serializers.CharField(required=False, allow_blank=True, help_text="The OME release detected or set.")
    why = serializers.CharField(required=False)


class SeverityCountsSerializer(serializers.Serializer):
    error = serializers.IntegerField()
    warning = serializers.IntegerField()
    info = serializers.IntegerField()


class ProblemSerializer(serializers.Serializer):
    """A manifest's schema problem (matching.Problem): a warning beside an answer, or one of the
    problems of a 400."""

    severity = serializers.ChoiceField(choices=ERROR_OR_WARNING)
    file = serializers.CharField(allow_null=True)
    document = serializers.IntegerField(allow_null=True, help_text="The document's number in the text, from 1.")
    line = serializers.IntegerField(allow_null=True)
    object = serializers.CharField(allow_null=True, help_text="`Kind name`.")
    path = serializers.CharField(help_text="The field, e.g. `spec.supportedModelFormats[0].modelFormat`.")
    message = serializers.CharField()
    hint = serializers.CharField(allow_null=True)
    blocking = serializers.BooleanField(help_text="An error: it refuses the input.")
