"""Where OME finds the runtime an InferenceService names (GetRuntime, spec 5.1): by
`spec.runtime.kind` since U4, and resolved to its inheritance-merged spec since U9.

Facts from sgl-project/ome `pkg/runtimeselector/fetcher.go` and `pkg/runtimeinheritance/`
(`resolve.go`, `merge.go`, `from_client.go`) at 078c923f / 865bebfd: the child wins on every
field it sets and the parent fills the gaps (lists such as supportedModelFormats are replaced
whole, maps and objects merge per key); a ClusterServingRuntime inherits from
ClusterServingRuntimes, a ServingRuntime from its namespace first, then the cluster; chains
are at most 5 long.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from . import reasons
from .behaviour import INHERIT_MAX_DEPTH, Behaviour
from .sizes import SizeRange
from .types import CLUSTER_SERVING_RUNTIME, SERVING_RUNTIME, ObjectKey, Runtime

Runtimes = Mapping[ObjectKey, Runtime]


def lookup_order(name: str, namespace: str, kind: str | None, behaviour: Behaviour) -> list[ObjectKey]:
    """The keys GetRuntime tries, in order. Before U4 the kind is ignored (namespace first)."""
    namespaced = (SERVING_RUNTIME, namespace, name)
    cluster = (CLUSTER_SERVING_RUNTIME, "", name)
    if behaviour.has("U4") and kind == SERVING_RUNTIME:
        return [namespaced]
    if behaviour.has("U4") and kind == CLUSTER_SERVING_RUNTIME:
        return [cluster, namespaced]
    return [namespaced, cluster]


def not_found_text(name: str, namespace: str, kind: str | None, behaviour: Behaviour) -> str:
    if behaviour.has("U4") and kind == SERVING_RUNTIME:
        return reasons.serving_runtime_not_found(name, namespace)
    return reasons.runtime_not_found(name, namespace)


def _merged_range(parent: SizeRange | None, child: SizeRange | None) -> SizeRange | None:
    if parent is None or child is None:
        return child if parent is None else parent
    return SizeRange(
        min_text=parent.min_text if child.min_text is None else child.min_text,
        max_text=parent.max_text if child.max_text is None else child.max_text,
    )


def merge(parent: Runtime, child: Runtime) -> Runtime:
    """The child's spec over its parent's, for the fields selection reads; the child's identity."""
    return dataclasses.replace(
        child,
        entries=child.entries or parent.entries,
        disabled=parent.disabled if child.disabled is None else child.disabled,
        size_range=_merged_range(parent.size_range, child.size_range),
        accelerator_classes=child.accelerator_classes or parent.accelerator_classes,
        engine_mode=parent.engine_mode if child.engine_mode is None else child.engine_mode,
        decoder_mode=parent.decoder_mode if child.decoder_mode is None else child.decoder_mode,
    )


def _parent(start: Runtime, name: str, runtimes: Runtimes) -> Runtime | None:
    keys: list[ObjectKey] = [(CLUSTER_SERVING_RUNTIME, "", name)]
    if not start.is_cluster:
        keys.insert(0, (SERVING_RUNTIME, start.namespace, name))
    return next((runtimes[key] for key in keys if key in runtimes), None)


def resolve(start: Runtime, runtimes: Runtimes) -> tuple[Runtime | None, str | None]:
    """The runtime with what it inherits merged in, or (None, OME's resolution error)."""
    chain = [start]
    current = start
    while current.inherit_from:
        names = [runtime.name for runtime in chain]
        if len(chain) >= INHERIT_MAX_DEPTH:
            return None, reasons.inheritance_too_deep(INHERIT_MAX_DEPTH, names)
        if current.inherit_from in names:
            return None, reasons.inheritance_cycle([*names, current.inherit_from])
        parent = _parent(start, current.inherit_from, runtimes)
        if parent is None:
            return None, reasons.inheritance_parent_missing(current.inherit_from, names)
        chain.append(parent)
        current = parent
    effective = chain[-1]
    for child in reversed(chain[:-1]):
        effective = merge(effective, child)
    return effective, None


@dataclass(frozen=True, slots=True)
class NamedLookup:
    """What GetRuntime gives for a name: the runtime (merged since U9), or OME's error.

    `not_found` marks OME's RuntimeNotFoundError, the only error its controller treats as a
    missing runtime; a chain that does not resolve is another error (sgl-project/ome
    `pkg/runtimeselector/errors.go` and `fetcher.go` at 078c923f).
    """

    runtime: Runtime | None
    error: str | None = None
    not_found: bool = False


def find_named(name: str, namespace: str, kind: str | None, runtimes: Runtimes, behaviour: Behaviour) -> NamedLookup:
    """The named runtime as this OME sees it (merged since U9), or OME's error."""
    for key in lookup_order(name, namespace, kind, behaviour):
        runtime = runtimes.get(key)
        if runtime is not None:
            if not behaviour.has("U9"):
                return NamedLookup(runtime)
            merged, error = resolve(runtime, runtimes)
            return NamedLookup(merged, error)
    return NamedLookup(None, not_found_text(name, namespace, kind, behaviour), not_found=True)
