"""`/api/v1/tokens/`: a user's API tokens (an administrator's: everyone's). POST makes one and
answers its key, once; DELETE revokes one. Tokens are made from a signed-in session only, so a
token cannot extend its own life by minting another."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from access.models import ApiToken
from access.tokens import api_token_create, api_token_list, api_token_revocable


class ApiTokenSerializer(serializers.ModelSerializer):
    user: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ApiToken
        fields = ["id", "name", "user", "prefix", "created_at", "expires_at", "last_used_at"]


class ApiTokenCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    days = serializers.IntegerField(required=False, help_text="Lifetime in days (default OME_API_TOKEN_DAYS).")


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    key = serializers.CharField(read_only=True, help_text="The key: shown this once, never stored.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "key"]


class ApiTokenViewSet(
    mixins.ListModelMixin, mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
):
    """API tokens: list (your own; an administrator's: everyone's, `?user=NAME`), make, revoke."""

    serializer_class = ApiTokenSerializer
    permission_classes = [IsAuthenticated]
    filter_backends = ()
    lookup_value_regex = "[0-9]+"

    def get_queryset(self) -> Any:
        tokens = api_token_list(self.request.user)
        user = self.request.query_params.get("user")
        return tokens.filter(user__username=user) if user else tokens

    @extend_schema(request=ApiTokenCreateSerializer, responses={201: ApiTokenCreatedSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if isinstance(request.auth, ApiToken):
            raise PermissionDenied(
                "Tokens are made from a signed-in session (or `manage.py api_token`), not with a token."
            )
        given = ApiTokenCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        token, key = api_token_create(
            request.user, name=given.validated_data["name"], days=given.validated_data.get("days")
        )
        # The key is shown this once: no cache (browser, proxy) may keep the answer.
        return Response(
            {**ApiTokenSerializer(token).data, "key": key},
            status=status.HTTP_201_CREATED,
            headers={"Cache-Control": "no-store", "Pragma": "no-cache"},
        )

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # Another user's token answers as a missing one.
        get_object_or_404(api_token_revocable(request.user), pk=kwargs["pk"]).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
