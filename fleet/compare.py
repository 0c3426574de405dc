"""Why clusters disagree about a model's pick: what differs in the inputs of OME's selection
between them, in the order that explains most: the OME behaviour the matrix follows, the
model's recorded metadata, the picked runtimes (missing, defined differently, or tied and
ordered by creation time), then the other runtimes in scope."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from matching import FormatRef, Model, ObjectKey, Runtime, key_text

# Each dataclass field as the manifest names it.
MODEL_FIELDS = {
    "format": "modelFormat",
    "framework": "modelFramework",
    "architecture": "modelArchitecture",
    "quantization": "quantization",
    "size": "modelParameterSize",
    "pipeline": "diffusionPipeline",
    "distribution": "distribution",
    "disabled": "disabled",
    "storage_uri": "storage.storageUri",
}
RUNTIME_FIELDS = {
    "entries": "supportedModelFormats",
    "disabled": "disabled",
    "size_range": "modelSizeRange",
    "accelerator_classes": "acceleratorRequirements",
    "engine_mode": "engineConfig",
    "decoder_mode": "decoderConfig",
}
MAX_SHOWN = 3


def _shown(value: Any) -> str:
    if value is None:
        return "absent"
    if value in ("", (), []):
        return "(none)"
    if isinstance(value, FormatRef):
        return value.describe()
    if hasattr(value, "min_text"):
        return f"{value.min_text or '-'}..{value.max_text or '-'}"
    text = str(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _grouped(values: Mapping[str, Any]) -> str:
    """`a, b: X; c: Y` — clusters with equal values together."""
    groups: dict[str, list[str]] = {}
    for cluster, value in values.items():
        groups.setdefault(_shown(value), []).append(cluster)
    return "; ".join(f"{', '.join(clusters)}: {shown}" for shown, clusters in groups.items())


def field_differences(values: Mapping[str, Any], names: Mapping[str, str]) -> list[str]:
    """`field (a: X; b: Y)` for each field of the dataclass values that is not equal in all."""
    present = {cluster: value for cluster, value in values.items() if value is not None}
    found = []
    for attribute, label in names.items():
        by_cluster = {cluster: getattr(value, attribute) for cluster, value in present.items()}
        if len(set(map(repr, by_cluster.values()))) > 1:
            shown = "differs" if attribute == "entries" else f"({_grouped(by_cluster)})"
            found.append(f"{label} {shown}")
    return found


def _missing(values: Mapping[str, Any]) -> list[str]:
    return [cluster for cluster, value in values.items() if value is None]


def _runtime_reasons(key: ObjectKey, values: Mapping[str, Runtime | None]) -> list[str]:
    found = []
    missing = _missing(values)
    if missing:
        found.append(f"{key_text(key)} is not in {', '.join(missing)}")
    differences = field_differences(values, RUNTIME_FIELDS)
    if differences:
        found.append(f"{key_text(key)} differs: {', '.join(differences)}")
    return found


RuntimeValues = Callable[[ObjectKey], Mapping[str, Runtime | None]]
"""A runtime's value in each cluster (None where the cluster lacks it)."""


def _created_reason(picks: Sequence[ObjectKey], runtimes: RuntimeValues) -> str | None:
    """Equal definitions but different creation times: OME breaks ties by age (quirk of
    CompareRuntimes), so clusters created in another order pick differently."""
    for key in picks:
        created = {c: rt.created for c, rt in runtimes(key).items() if rt is not None}
        if len(set(created.values())) > 1:
            return f"equal scores: OME takes the older runtime, and creation times differ ({_grouped(created)})"
    return None


def difference_reasons(
    *,
    behaviours: Mapping[str, str],
    behaviour_changes: bool,
    models: Mapping[str, Model | None],
    invalid: Mapping[str, str],
    picks: Sequence[ObjectKey],
    runtimes: RuntimeValues,
    others: Sequence[ObjectKey] = (),
) -> list[str]:
    """Why the clusters (keys of `models`) pick differently. `behaviours`: each cluster's OME
    behaviour, named only when `behaviour_changes` (the upgrade diff between the profiles
    changes this row); `invalid`: malformed models' errors by cluster; `picks`: every runtime picked
    in some cluster; `runtimes`: a runtime's value per cluster (None where absent), asked for
    the picks and, only when they explain nothing, for `others` (further runtimes in scope)."""
    found = []
    if behaviour_changes and len(set(behaviours.values())) > 1:
        found.append(f"OME behaviour differs ({_grouped(behaviours)})")
    if invalid:
        found.append("the model is malformed in " + ", ".join(sorted(invalid)))
    differences = field_differences(models, MODEL_FIELDS)
    if differences:
        found.append("recorded metadata differs: " + ", ".join(differences))
    for key in picks:
        found += _runtime_reasons(key, runtimes(key))
    if not found:
        other = [reason for key in others for reason in _runtime_reasons(key, runtimes(key))]
        found += other[:MAX_SHOWN] + (
            [f"and {len(other) - MAX_SHOWN} more runtime differences"] if len(other) > MAX_SHOWN else []
        )
    if not found:
        tie = _created_reason(picks, runtimes)
        found.append(tie or "no difference in the inputs: a matrix may be out of date (see each cluster's build time)")
    return found


def runtime_signature(runtime: Runtime) -> tuple[object, ...]:
    """What selection reads of a runtime: creation time aside (clusters apply it at other
    times), and its containers' arguments (which OME renders but never reads to select)."""
    return tuple(
        getattr(runtime, field.name)
        for field in dataclasses.fields(runtime)
        if field.name not in ("created", "dedication")
    )
