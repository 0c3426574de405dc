"""The matrix API's output shapes (the cell shape is built by `cell_data`, used by pages and exports)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from access.scope import Scope
from core.api import NamespaceField, namespace_tokens
from core.cache import VersionedCache
from core.schema import ObjectKeySerializer, ObjectRefSerializer, OmeBehaviourSerializer
from core.web import CLUSTER_TOKEN, namespace_token
from inventory.models import Cluster
from matching import ObjectKey, Selection
from matrix.cells import Cell
from matrix.models import CellChange, CellStatus, MatrixBuild
from matrix.selectors import CellTrace
from web.api.freshness import FreshnessSerializer

Reasoner = Callable[[Cell], str | None]


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
        scope: Scope = self.context["scope"]
        if not scope.reads_whole(instance.cluster.name):
            # The cluster's totals: only for readers of all of it.
            data.update(models_count=None, runtimes_count=None, rows_count=None)
        return data


class CellSerializer(serializers.Serializer):
    """Documents `cell_data`, which builds the same shape without a serializer per cell."""

    model = ObjectRefSerializer()
    runtime = ObjectRefSerializer()
    namespace = serializers.CharField(help_text=f"Namespace of the selection; `{CLUSTER_TOKEN}` for cluster scope.")
    status = serializers.ChoiceField(choices=CellStatus.choices)
    score = serializers.IntegerField(allow_null=True, help_text="OME's score, for auto-selectable runtimes.")
    rank = serializers.IntegerField(allow_null=True, help_text="0 is OME's pick, then the order OME would prefer.")
    entry = serializers.IntegerField(allow_null=True, help_text="The first supportedModelFormats entry that matches.")
    reason = serializers.CharField(
        allow_null=True, required=False, help_text="Why not a match (absent unless reasons are asked for)."
    )


class EntryScoreSerializer(serializers.Serializer):
    entry = serializers.IntegerField()
    weights = serializers.DictField(
        child=serializers.IntegerField(), help_text="The weights that count: `format`, `framework` (none when 0)."
    )
    priority = serializers.IntegerField(help_text="The entry's priority, by which the weights are multiplied.")
    result = serializers.IntegerField(help_text="The entry's score: the sum of the weights times the priority.")
    text = serializers.CharField(help_text="The same arithmetic as text, e.g. `(10 + 5) x 2 = 30`.")


class CellExportSerializer(serializers.Serializer):
    """Documents export.json, which is streamed line by line without a serializer."""

    ome = OmeBehaviourSerializer()
    build = BuildSerializer()
    freshness = FreshnessSerializer()
    cluster = serializers.CharField()
    cells = CellSerializer(many=True)


class UpgradeFromSerializer(serializers.Serializer):
    profile = serializers.CharField()
    # A field named like an attribute of DRF's Field: the serializer's metaclass takes it off the class.
    source = serializers.CharField()  # type: ignore[assignment]
    version = serializers.CharField(allow_blank=True)
    why = serializers.CharField()
    summary = serializers.CharField()


class BehaviourChangeSerializer(serializers.Serializer):
    code = serializers.CharField()
    description = serializers.CharField()


class DifferenceSerializer(serializers.Serializer):
    subject = serializers.ChoiceField(choices=["cell", "selection", "isvc"])
    field = serializers.CharField()
    model = ObjectKeySerializer(allow_null=True)
    runtime = ObjectKeySerializer(allow_null=True)
    namespace = serializers.CharField(allow_null=True)
    isvc = ObjectKeySerializer(allow_null=True)
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    causes = serializers.ListField(child=serializers.CharField(), help_text="The behaviour changes that cause it.")
    together = serializers.BooleanField()
    explanation = serializers.CharField()
    model_id = serializers.IntegerField(allow_null=True)
    runtime_id = serializers.IntegerField(allow_null=True)


class UpgradeSerializer(serializers.Serializer):
    ome = OmeBehaviourSerializer()
    freshness = FreshnessSerializer()
    cluster = serializers.CharField()
    # "from" is a Python keyword: the field is declared under its API name below.
    to = OmeBehaviourSerializer()
    changes = BehaviourChangeSerializer(many=True)
    count = serializers.IntegerField()
    differences = DifferenceSerializer(many=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        return {**super().get_fields(), "from": UpgradeFromSerializer()}


class CellDetailSerializer(CellSerializer):
    ome = OmeBehaviourSerializer()
    build = BuildSerializer()
    freshness = FreshnessSerializer()
    check = serializers.JSONField(
        allow_null=True, help_text="matching.check(model, runtime): every entry's every check (snake_case keys)."
    )
    score_breakdown = EntryScoreSerializer(many=True)


class MatchSerializer(serializers.Serializer):
    runtime = ObjectKeySerializer()
    score = serializers.IntegerField()
    entry = serializers.IntegerField(allow_null=True, help_text="The first supportedModelFormats entry that matches.")


class RuntimeReasonSerializer(serializers.Serializer):
    runtime = ObjectKeySerializer()
    reason = serializers.CharField()


class SelectionSerializer(serializers.Serializer):
    """matching.select for one model in one namespace; every runtime by kind, namespace and name."""

    model = ObjectKeySerializer()
    namespace = serializers.CharField(help_text=f"Namespace selected in; `{CLUSTER_TOKEN}` for cluster scope.")
    selected = ObjectKeySerializer(allow_null=True, help_text="OME's pick: the first of `compatible`.")
    compatible = MatchSerializer(many=True, help_text="Auto-selectable runtimes, in the order OME prefers them.")
    manual_only = RuntimeReasonSerializer(many=True, help_text="Runtimes that match but that OME never auto-selects.")
    excluded = RuntimeReasonSerializer(many=True, help_text="Runtimes in scope that cannot serve the model.")
    error = serializers.CharField(allow_null=True, help_text="OME's error when nothing can be selected.")


class CauseSerializer(ObjectKeySerializer):
    action = serializers.CharField(help_text="added, changed or deleted")
    values = serializers.DictField(required=False, help_text="Each field's old and new value, by path.")
    version = serializers.DictField(required=False, help_text="The object's resourceVersion before and after.")

    def get_fields(self) -> dict[str, serializers.Field]:
        # `fields` is the name of Serializer's own property: declared here, not as an attribute.
        changed = serializers.ListField(child=serializers.CharField(), help_text="The changed fields, as paths.")
        return {**super().get_fields(), "fields": changed}


class CellChangeSerializer(serializers.ModelSerializer):
    cluster: serializers.SlugRelatedField[Cluster] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    model = serializers.SerializerMethodField()
    runtime = serializers.SerializerMethodField()

    class Meta:
        model = CellChange
        fields = ["id", "cluster", "changed_at", "namespace", "model", "runtime", "old_status", "new_status", "cause"]

    namespace = NamespaceField()
    cause = serializers.SerializerMethodField(help_text="The inventory changes that caused it.")

    @staticmethod
    def _key(kind: str, namespace: str, name: str) -> dict[str, str]:
        return key_data((kind, namespace, name))

    @extend_schema_field(ObjectKeySerializer)
    def get_model(self, change: CellChange) -> dict[str, str]:
        return self._key(change.model_kind, change.model_namespace, change.model_name)

    @extend_schema_field(ObjectKeySerializer)
    def get_runtime(self, change: CellChange) -> dict[str, str]:
        return self._key(change.runtime_kind, change.runtime_namespace, change.runtime_name)

    @extend_schema_field(CauseSerializer(many=True))
    def get_cause(self, change: CellChange) -> Any:
        return namespace_tokens(change.cause)


def cell_data(cell: Cell, reason: Reasoner | None = None) -> dict[str, Any]:
    """One cell as the API shows it; `reason` is included when a reasoner is given."""
    model, runtime = cell.model, cell.runtime
    data: dict[str, Any] = {
        "model": {"id": model.pk, **key_data(model.key)},
        "runtime": {"id": runtime.pk, **key_data(runtime.key)},
        "namespace": namespace_token(cell.namespace),
        "status": cell.status,
        "score": cell.score,
        "rank": cell.rank,
        "entry": cell.entry,
    }
    if reason is not None:
        data["reason"] = reason(cell)
    return data


# Build id -> its serialized form, for as long as every field it shows is the same: a
# ModelSerializer is costly to make, and every page of cells carries its build.
_BUILD_DATA: VersionedCache[tuple[object, ...], dict[str, Any]] = VersionedCache("build_data")
_BUILD_FIELDS = tuple("cluster_id" if name == "cluster" else name for name in BuildSerializer.Meta.fields)


def key_data(key: tuple[str, str, str]) -> dict[str, str]:
    """An object as the API names it: kind, namespace (`_cluster` for cluster scope), name."""
    kind, namespace, name = key
    return {"kind": kind, "namespace": namespace_token(namespace), "name": name}


def score_data(trace: CellTrace) -> list[dict[str, Any]]:
    return [
        {"entry": index, **terms.to_dict(), "text": text}
        for index, (terms, text) in enumerate(zip(trace.terms, trace.breakdown, strict=True))
    ]


def selection_data(model: tuple[str, str, str], selection: Selection, excluded: dict[ObjectKey, str]) -> dict[str, Any]:
    compatible = [{"runtime": key_data(m.key), "score": m.score, "entry": m.entry} for m in selection.compatible]
    return {
        "model": key_data(model),
        "namespace": namespace_token(selection.namespace),
        "selected": compatible[0]["runtime"] if compatible else None,
        "compatible": compatible,
        "manual_only": [{"runtime": key_data(k), "reason": r} for k, r in sorted(selection.manual_keys.items())],
        "excluded": [{"runtime": key_data(k), "reason": r} for k, r in excluded.items()],
        "error": selection.error,
    }


def build_data(build: MatrixBuild, scope: Scope) -> dict[str, Any]:
    # Readers of part of the cluster see no totals (BuildSerializer), so that is part of the version.
    version = (*(getattr(build, name) for name in _BUILD_FIELDS), scope.reads_whole(build.cluster.name))
    return dict(
        _BUILD_DATA.get(build.pk, version, lambda _stale: dict(BuildSerializer(build, context={"scope": scope}).data))
    )
