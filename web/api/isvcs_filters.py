"""The one filter of the InferenceService verdicts list, for its page and its API endpoint."""

from __future__ import annotations

from rest_framework import serializers

from isvcs.services import IsvcVerdict, isvc_at_risk
from web.api.inventory import ClusterQuerySerializer


class IsvcVerdictQuerySerializer(ClusterQuerySerializer):
    """`?cluster=` and the verdict filters; each filter left out (or false) keeps every service."""

    at_risk = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Only services OME would not deploy, deploys with an advisory, or would decide differently today.",
    )
    ignored = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Only services OME admits but silently will not (re)render (the `ignored` field says why).",
    )
    reapply = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Only services waiting for a re-apply after a model change (the `reapply` field is the command).",
    )

    def keeps(self, verdict: IsvcVerdict) -> bool:
        """Whether the verdict passes the filters; call after `is_valid`."""
        data = self.validated_data
        return (
            (not data["at_risk"] or isvc_at_risk(verdict))
            and (not data["ignored"] or verdict.ignored is not None)
            and (not data["reapply"] or verdict.reapply is not None)
        )
