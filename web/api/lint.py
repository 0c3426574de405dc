"""The lint endpoints: a cluster's findings and finding groups, and their acknowledgements."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from access.current import scope_of
from core.api import namespace_tokens
from core.permissions import CanRead, HasPermissionOrReadOnly
from inventory.selectors import cluster_choose
from lint.models import ACKNOWLEDGE_PERMISSION, LintAcknowledgement
from lint.proving import lint_proofs_request
from lint.selectors import lint_acknowledgement_list, lint_group_states, lint_report_get
from lint.services import lint_acknowledge, lint_withdraw
from web.api.freshness import verdicts_envelope
from web.api.inventory import ClusterQuerySerializer
from web.api.lint_responses import AcknowledgementListSerializer, AcknowledgementSerializer, LintReportSerializer


class LintView(APIView):
    """Runtime lint findings of a cluster: shadowed runtimes, runtimes matching nothing, the
    diffusionPipeline risks of the seed page, OME scorer quirks, unmatchable values; and the
    same findings grouped by root cause (`groups`, each with its fix, its quirks in words and
    `acknowledged` when someone hid it). A fix is listed only once the what-if has proven it for
    the current inventory: until then `fixes_pending_for` names the inventory version being
    proven, and the groups that will have fixes say so in `no_fix`."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[ClusterQuerySerializer], responses=LintReportSerializer)
    def get(self, request: Request) -> Response:
        scope = scope_of(request)
        cluster = ClusterQuerySerializer(data=request.query_params).chosen_cluster(scope)
        report = lint_report_get(cluster, scope=scope, proven=True)
        if report.fixes_pending_for is not None:
            lint_proofs_request(cluster.pk)
        data = {**verdicts_envelope(cluster), **report.to_dict(), "fixes_pending_for": report.fixes_pending_for}
        states = {state.group.key: state for state in lint_group_states(cluster, scope=scope, report=report)}
        for group in data["groups"]:
            state = states[group["key"]]
            group["acknowledged"] = _ack_dict(state.acknowledgement) if state.hidden else None
        return Response(namespace_tokens(data))


def _ack_dict(ack: LintAcknowledgement | None) -> dict[str, object] | None:
    if ack is None:
        return None
    return {
        "key": ack.key,
        "title": ack.title,
        "reason": ack.reason,
        "by": ack.username,
        "at": ack.created_at.isoformat(),
        "withdrawn_at": ack.withdrawn_at.isoformat() if ack.withdrawn_at else None,
        "withdrawn_by": ack.withdrawn_by or None,
    }


class AcknowledgeSerializer(serializers.Serializer):
    cluster = serializers.CharField(required=False, help_text="Cluster name; defaults to the only cluster.")
    key = serializers.CharField(help_text="The finding group's key (`groups[].key` of matrix/lint).")
    reason = serializers.CharField(required=False, allow_blank=True, help_text="Why it can be hidden.")


class LintAcknowledgementsView(APIView):
    """GET: every acknowledgement of a cluster, withdrawn ones included (the record). POST
    {cluster, key, reason}: hide a finding group; DELETE ?cluster=&key=: show it again. Writes
    need the lint.acknowledge_finding permission."""

    permission_classes = [HasPermissionOrReadOnly]
    write_permissions = {"post": (ACKNOWLEDGE_PERMISSION,), "delete": (ACKNOWLEDGE_PERMISSION,)}

    @extend_schema(parameters=[ClusterQuerySerializer], responses=AcknowledgementListSerializer)
    def get(self, request: Request) -> Response:
        cluster = ClusterQuerySerializer(data=request.query_params).chosen_cluster(scope_of(request))
        acks = lint_acknowledgement_list(cluster, scope=scope_of(request))
        return Response({"cluster": cluster.name, "results": [_ack_dict(ack) for ack in acks]})

    @extend_schema(request=AcknowledgeSerializer, responses={201: AcknowledgementSerializer})
    def post(self, request: Request) -> Response:
        data = AcknowledgeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        scope = scope_of(request)
        cluster = cluster_choose(data.validated_data.get("cluster"), default="only", scope=scope)
        reason = data.validated_data.get("reason", "")
        ack = lint_acknowledge(cluster, data.validated_data["key"], reason, request.user, scope=scope)
        return Response(_ack_dict(ack), status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[AcknowledgeSerializer], responses={204: None})
    def delete(self, request: Request) -> Response:
        data = AcknowledgeSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        cluster = cluster_choose(data.validated_data.get("cluster"), default="only", scope=scope_of(request))
        lint_withdraw(cluster, data.validated_data["key"], request.user, scope=scope_of(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
