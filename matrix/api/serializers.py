"""The matrix API's output shapes (the cell shape is built by `cell_data`, used by pages and exports)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from access.current import current_scope
from inventory.models import Cluster

from ..cells import Cell
from ..models import CellChange, CellStatus, MatrixBuild

Reasoner = Callable[[Cell], str | None]


class OmeBehaviourSerializer(serializers.Serializer):
    commit = serializers.CharField(help_text="The OME commit whose runtime selection the verdicts follow.")
    date = serializers.CharField()
    summary = serializers.CharField()


class BuildSerializer(serializers.ModelSerializer):
    cluster: serializers.SlugRelatedField[Cluster] = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = MatrixBuild
        fields = [
            "id",
            "cluster",
            "status",
            "trigger",
            "ome_behaviour",
            "started_at",
            "finished_at",
            "updated_at",
            "duration_ms",
            "models_count",
            "runtimes_count",
            "rows_count",
            "chunks",
            "chunks_done",
            "error",
        ]

    def to_representation(self, instance: MatrixBuild) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        if not current_scope().reads_whole(instance.cluster.name):
            # The cluster's totals: only for readers of all of it.
            data.update(models_count=None, runtimes_count=None, rows_count=None)
        return data


class ObjectRefSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Resource id (/api/v1/models/{id}/ or /api/v1/runtimes/{id}/).")
    kind = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    name = serializers.CharField()


class CellSerializer(serializers.Serializer):
    """Documents `cell_data`, which builds the same shape without a serializer per cell."""

    model = ObjectRefSerializer()
    runtime = ObjectRefSerializer()
    namespace = serializers.CharField(allow_blank=True, help_text='Namespace of the selection; "" is cluster scope.')
    status = serializers.ChoiceField(choices=CellStatus.choices)
    score = serializers.IntegerField(allow_null=True, help_text="OME's score, for auto-selectable runtimes.")
    rank = serializers.IntegerField(allow_null=True, help_text="0 is OME's pick, then the order OME would prefer.")
    entry = serializers.IntegerField(allow_null=True, help_text="The first supportedModelFormats entry that matches.")
    reason = serializers.CharField(
        allow_null=True, required=False, help_text="Why not a match (absent unless reasons are asked for)."
    )


class EntryBreakdownSerializer(serializers.Serializer):
    entry = serializers.IntegerField()
    # The multiplication sign is matching's own text.
    breakdown = serializers.CharField(help_text="The arithmetic of the entry's score, e.g. `10 × 2 = 20`.")  # noqa: RUF001


class CellDetailSerializer(CellSerializer):
    ome = OmeBehaviourSerializer()
    build = BuildSerializer()
    check = serializers.JSONField(
        allow_null=True, help_text="matching.check(model, runtime).to_dict(): every entry's every check."
    )
    score_breakdown = EntryBreakdownSerializer(many=True)


class MatchSerializer(serializers.Serializer):
    name = serializers.CharField()
    score = serializers.IntegerField()
    isCluster = serializers.BooleanField()
    namespace = serializers.CharField(allow_blank=True)
    entry = serializers.IntegerField(allow_null=True)


class SelectionSerializer(serializers.Serializer):
    """Documents matching.Selection.to_dict()."""

    model = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    selected = serializers.CharField(allow_null=True)
    compatible = MatchSerializer(many=True)
    excluded = serializers.DictField(child=serializers.CharField(), help_text="Runtime name -> OME's reason.")
    manualOnly = serializers.DictField(child=serializers.CharField())
    error = serializers.CharField(allow_null=True)


class ObjectKeySerializer(serializers.Serializer):
    kind = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    name = serializers.CharField()


class CellChangeSerializer(serializers.ModelSerializer):
    cluster: serializers.SlugRelatedField[Cluster] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    model = serializers.SerializerMethodField()
    runtime = serializers.SerializerMethodField()

    class Meta:
        model = CellChange
        fields = ["id", "cluster", "changed_at", "namespace", "model", "runtime", "old_status", "new_status", "cause"]

    @staticmethod
    def _key(kind: str, namespace: str, name: str) -> dict[str, str]:
        return {"kind": kind, "namespace": namespace, "name": name}

    @extend_schema_field(ObjectKeySerializer)
    def get_model(self, change: CellChange) -> dict[str, str]:
        return self._key(change.model_kind, change.model_namespace, change.model_name)

    @extend_schema_field(ObjectKeySerializer)
    def get_runtime(self, change: CellChange) -> dict[str, str]:
        return self._key(change.runtime_kind, change.runtime_namespace, change.runtime_name)


def cell_data(cell: Cell, reason: Reasoner | None = None) -> dict[str, Any]:
    """One cell as the API shows it; `reason` is included when a reasoner is given."""
    model, runtime = cell.model, cell.runtime
    data: dict[str, Any] = {
        "model": {"id": model.pk, "kind": model.kind, "namespace": model.namespace, "name": model.name},
        "runtime": {"id": runtime.pk, "kind": runtime.kind, "namespace": runtime.namespace, "name": runtime.name},
        "namespace": cell.namespace,
        "status": cell.status,
        "score": cell.score,
        "rank": cell.rank,
        "entry": cell.entry,
    }
    if reason is not None:
        data["reason"] = reason(cell)
    return data


def build_data(build: MatrixBuild) -> dict[str, Any]:
    return dict(BuildSerializer(build).data)
