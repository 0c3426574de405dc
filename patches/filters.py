"""The audit log's one FilterSet, for the API list and any HTML list alike."""

from __future__ import annotations

import django_filters

from .models import PatchAttempt


class PatchAttemptFilter(django_filters.FilterSet):
    cluster = django_filters.CharFilter(field_name="cluster_name", help_text="Cluster name.")
    model = django_filters.CharFilter(field_name="model_name", help_text="Model name.")
    model_kind = django_filters.ChoiceFilter(
        choices=[("ClusterBaseModel", "ClusterBaseModel"), ("BaseModel", "BaseModel")]
    )
    namespace = django_filters.CharFilter(field_name="model_namespace")
    user = django_filters.CharFilter(field_name="username", help_text="Username of who applied.")
    result = django_filters.MultipleChoiceFilter(choices=PatchAttempt.Result.choices)
    after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = PatchAttempt
        fields: list[str] = []
