"""The shapes of the policies API's answers, for the OpenAPI schema (web.api.policies builds them
from matching.policy's report and policies.selectors' states)."""

from __future__ import annotations

from rest_framework import serializers

import matching.policy
from core.schema import ERROR_OR_WARNING, ProblemSerializer
from web.api.matrix.serializers import CauseSerializer

OBJECTS_HELP = "The objects it involves, as `Kind name in namespace`."
# The schema's AssertionKindEnum (SPECTACULAR_SETTINGS' ENUM_NAME_OVERRIDES).
ASSERTION_KINDS = sorted(matching.policy.ASSERTIONS)


class FailureSerializer(serializers.Serializer):
    subject = serializers.CharField(help_text="What failed: a model in a namespace, a runtime or an InferenceService.")
    namespace = serializers.CharField(help_text="Its namespace; `_cluster` for cluster scope.")
    message = serializers.CharField()
    reason = serializers.CharField(allow_null=True, help_text="OME's reason text, where OME gives one.")
    objects = serializers.ListField(child=serializers.CharField(), help_text=OBJECTS_HELP)


class CheckFailureSerializer(FailureSerializer):
    change = serializers.CharField(
        allow_null=True, help_text="`new in HEAD` or `already failing in BASE`: compared with the cluster as it is."
    )
    broken_by = serializers.ListField(child=serializers.CharField(), help_text="The checked objects it involves.")


class AssertionOutcomeSerializer(serializers.Serializer):
    """An assertion (matching.policy.Assertion) and its outcome on one cluster."""

    id = serializers.CharField(help_text="`policy/assertion`.")
    policy = serializers.CharField()
    name = serializers.CharField()
    severity = serializers.ChoiceField(choices=ERROR_OR_WARNING)
    owner = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)
    runtime = serializers.CharField(required=False, help_text="The runtime of servedBy, pickCount and notShadowed.")
    at_least = serializers.IntegerField(required=False)
    at_most = serializers.IntegerField(required=False)
    score = serializers.IntegerField(required=False, help_text="The least score of minScore.")
    passed = serializers.BooleanField()
    checked = serializers.IntegerField(help_text="The subjects in the assertion's scope.")
    note = serializers.CharField(allow_null=True)
    failures = CheckFailureSerializer(many=True)
    fixed = serializers.ListField(child=serializers.CharField(), help_text="Subjects failing before that pass now.")

    def get_fields(self) -> dict[str, serializers.Field]:
        # `assert` is a Python keyword: declared here, not as an attribute.
        kind = serializers.ChoiceField(choices=ASSERTION_KINDS, help_text="The assertion's kind.")
        return {**super().get_fields(), "assert": kind}


class PolicySectionSerializer(serializers.Serializer):
    title = serializers.CharField(help_text="`cluster <name>`.")
    assertions = AssertionOutcomeSerializer(many=True)


class PolicyCheckSerializer(serializers.Serializer):
    sections = PolicySectionSerializer(many=True, help_text="One per cluster checked.")
    failed = serializers.BooleanField()
    summary = serializers.CharField()
    exit_code = serializers.IntegerField(help_text="0, or 1 when an error-severity assertion fails.")
    problems = ProblemSerializer(many=True, help_text="The manifests' schema warnings (`lenient`).")
    rendered = serializers.CharField(required=False, help_text="The report in `format`, unless json.")


class ChangedBySerializer(serializers.Serializer):
    inventory_version = serializers.IntegerField(help_text="The cluster's inventory version at the change.")
    changes = CauseSerializer(many=True, help_text="The inventory changes that flipped the state, that you may read.")
    patches = serializers.ListField(
        child=serializers.IntegerField(), help_text="Their patches' audit records (/api/v1/patches/audit/{id}/)."
    )


class AssertionStateSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="`policy/assertion`.")
    policy = serializers.CharField()
    policy_version = serializers.IntegerField()
    assertion = serializers.CharField()
    kind = serializers.ChoiceField(choices=ASSERTION_KINDS)
    severity = serializers.ChoiceField(choices=ERROR_OR_WARNING)
    state = serializers.ChoiceField(choices=["passing", "failing"])
    since = serializers.DateTimeField()
    checked = serializers.IntegerField()
    note = serializers.CharField(allow_blank=True)
    failures = FailureSerializer(many=True, help_text="The failures among objects you may read.")
    failures_hidden = serializers.IntegerField(help_text="The failures among objects you may not read.")
    failures_withheld = serializers.IntegerField(
        help_text="Failures counted over namespaces you do not all read (pickCount), withheld from you."
    )
    changed_by = ChangedBySerializer()
    evaluated_at = serializers.DateTimeField()


class PolicyStatesSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    count = serializers.IntegerField()
    results = AssertionStateSerializer(many=True)
