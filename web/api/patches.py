"""The patches API: preview and apply pipeline patches, read the audit log.

    POST patches/preview/                   plan / preview (login; throttled)
    POST patches/apply/                     apply (login + the patcher role, or the cluster's RBAC)
    POST patches/pipeline-from-model-index/ model_index.json text -> diffusion_pipeline (login; throttled)
    GET  patches/audit/[ID/]                the audit log, read-only (patches.view_patchattempt)

The routes are web.urls'. The views only
validate the request's shape and call patches.services; errors come back as
`{"detail", "code", "field"}`.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from access.current import scope_of
from core.api import namespace_tokens
from inventory.selectors import cluster_choose
from matching import key_dict
from patches import services
from patches.errors import PatchInvalid
from patches.filters import PatchAttemptFilter
from patches.models import PatchAttempt
from patches.selectors import may_audit, patch_attempt_list


class _Reference(serializers.JSONField):
    """A cluster, model or runtime reference: an id, a name, `Kind/[namespace/]name`, or
    {"kind", "namespace", "name"}."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, bool) or not isinstance(data, str | int | dict | list):
            raise serializers.ValidationError(
                "expected an id, a name, Kind/[namespace/]name or {kind, namespace, name}"
            )
        return data


class PreviewInput(serializers.Serializer):
    cluster = serializers.CharField(max_length=63)
    model = _Reference()
    runtime = _Reference(required=False)
    diffusion_pipeline = serializers.JSONField(required=False, help_text="A spec.diffusionPipeline value.")
    model_index = serializers.CharField(
        required=False, trim_whitespace=False, max_length=services.MAX_UPLOAD_BYTES, help_text="model_index.json text"
    )
    patch = serializers.JSONField(required=False)

    def validate_diffusion_pipeline(self, value: Any) -> Any:
        if not isinstance(value, dict):
            raise serializers.ValidationError("expected a JSON object")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in ("runtime", "diffusion_pipeline", "model_index", "patch") if name in attrs]
        if len(given) != 1:
            raise PatchInvalid("give exactly one of runtime, diffusion_pipeline, model_index or patch", field="runtime")
        return attrs


class ApplyInput(serializers.Serializer):
    cluster = serializers.CharField(max_length=63)
    model = _Reference()
    patch = serializers.JSONField()
    resource_version = serializers.CharField(max_length=128)
    runtime = _Reference(required=False, help_text="The runtime the patch was planned for (recorded only).")


class ModelIndexInput(serializers.Serializer):
    model_index = serializers.CharField(trim_whitespace=False, max_length=services.MAX_UPLOAD_BYTES)


class PatchAttemptSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="username", read_only=True)
    identity = serializers.CharField(read_only=True, help_text="The OIDC username (else the account name).")
    groups = serializers.ListField(child=serializers.CharField(), read_only=True)
    cluster = serializers.CharField(source="cluster_name", read_only=True)
    model = serializers.SerializerMethodField()

    class Meta:
        model = PatchAttempt
        fields = [
            "id",
            "created_at",
            "user",
            "identity",
            "groups",
            "cluster",
            "model",
            "runtime",
            "patch",
            "resource_version",
            "new_resource_version",
            "target",
            "result",
            "detail",
        ]
        read_only_fields = fields

    def get_model(self, attempt: PatchAttempt) -> dict[str, str]:
        return dict(namespace_tokens(key_dict(attempt.model_key)))


def _outcome_body(outcome: services.ApplyOutcome) -> dict[str, Any]:
    attempt = PatchAttemptSerializer(outcome.attempt).data
    if outcome.ok:
        return {
            "result": outcome.result,
            "detail": outcome.attempt.detail,
            "target": outcome.attempt.target,
            "object": outcome.obj,
            "resource_version": outcome.resource_version,
            "attempt": attempt,
        }
    body: dict[str, Any] = {
        "detail": outcome.attempt.detail,
        "code": outcome.result,
        "field": outcome.field,
        "result": outcome.result,
        "attempt": attempt,
    }
    if outcome.obj is not None:
        body["current"] = {"object": outcome.obj, "resource_version": outcome.resource_version}
    return body


class PipelinePatchViewSet(viewsets.ViewSet):
    """Preview and apply `spec.diffusionPipeline` merge patches.

    Login only at this level: a preview is a read sent as POST, and apply's rights (the
    patcher role, or the cluster's RBAC) are checked by patch_apply itself, so that a refusal
    is recorded in the audit log like any other attempt.
    """

    permission_classes = [IsAuthenticated]
    # Set per action (preview, model_index); apply is not throttled: every attempt is recorded.
    throttle_scope = ""

    @extend_schema(request=PreviewInput, responses={200: OpenApiResponse(description="The preview.")})
    @action(detail=False, methods=["post"], throttle_scope="patch-preview")
    def preview(self, request: Request) -> Response:
        data = _valid(PreviewInput, request)
        scope = scope_of(request)
        cluster = cluster_choose(data["cluster"], default="none", scope=scope)
        pipeline = data.get("diffusion_pipeline")
        if "model_index" in data:
            pipeline = services.pipeline_from_upload(data["model_index"])
        try:
            preview = services.patch_preview(
                cluster,
                model=data["model"],
                runtime=data.get("runtime"),
                pipeline=pipeline,
                patch=data.get("patch"),
                scope=scope,
            )
        except PatchInvalid as error:
            # The services name OME's field; the request names it diffusion_pipeline.
            if "diffusion_pipeline" in data and (error.field or "").startswith("diffusionPipeline"):
                error.field = "diffusion_pipeline" + (error.field or "").removeprefix("diffusionPipeline")
            raise
        return Response(namespace_tokens(preview.to_dict()))

    @extend_schema(
        request=ApplyInput,
        responses={
            200: OpenApiResponse(description="Applied, or already applied (nothing sent)."),
            400: OpenApiResponse(description="Rejected: a field other than spec.diffusionPipeline, or invalid."),
            403: OpenApiResponse(description="The user may not patch this model (role or cluster RBAC)."),
            404: OpenApiResponse(description="No such model, here or on the cluster."),
            409: OpenApiResponse(description="The model changed since the preview; nothing was overwritten."),
            502: OpenApiResponse(description="The cluster refused the credentials, or rejected the patch."),
            503: OpenApiResponse(description="The cluster is unavailable."),
        },
    )
    @action(detail=False, methods=["post"])
    def apply(self, request: Request) -> Response:
        data = _valid(ApplyInput, request)
        cluster = cluster_choose(data["cluster"], default="none", scope=scope_of(request))
        outcome = services.patch_apply(
            cluster,
            model=data["model"],
            patch=data["patch"],
            resource_version=data["resource_version"],
            user=request.user,
            runtime=data.get("runtime"),
        )
        return Response(namespace_tokens(_outcome_body(outcome)), status=outcome.http_status)

    @extend_schema(request=ModelIndexInput, responses={200: OpenApiResponse(description="{diffusion_pipeline}")})
    @action(detail=False, methods=["post"], url_path="pipeline-from-model-index", throttle_scope="model-index")
    def pipeline_from_model_index(self, request: Request) -> Response:
        data = _valid(ModelIndexInput, request)
        return Response({"diffusion_pipeline": services.pipeline_from_upload(data["model_index"])})


def _valid(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class CanViewAudit(BasePermission):
    message = "Reading the audit log needs the patches.view_patchattempt permission."

    def has_permission(self, request: Request, view: Any) -> bool:
        return may_audit(request.user)


class PatchAttemptViewSet(viewsets.ReadOnlyModelViewSet):
    """The audit log of pipeline patches: append-only, so read-only here. Needs the
    patches.view_patchattempt permission, and shows the attempts on objects the user reads."""

    permission_classes = [CanViewAudit]
    serializer_class = PatchAttemptSerializer
    filterset_class = PatchAttemptFilter
    ordering_fields = ["created_at", "result", "cluster_name", "model_name", "username"]
    ordering = ["-created_at", "-id"]

    def get_queryset(self) -> Any:
        return patch_attempt_list(scope_of(self.request))
