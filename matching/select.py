"""check, select, validate and score: OME's GetCompatibilityDetails, SelectRuntime and
ValidateRuntime (section 5), with every runtime explained."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cmp_to_key
from typing import Any

from . import reasons
from .advice import explain_values
from .behaviour import DEFAULT_BEHAVIOUR, Behaviour, BehaviourInput, as_behaviour
from .named import find_named
from .parse import as_isvc, as_model, as_runtime
from .results import CheckReport, EntryReport, Match, Selection
from .rules import (
    entry_checks,
    entry_mismatch_text,
    first_passing_entry,
    format_label,
    pre_format_reason,
    runtime_panic,
    runtime_reason,
    runtime_wide_checks,
    size_problem,
)
from .score import compare_runtimes, entry_score, fetch_order, model_size_value, runtime_score
from .types import InferenceService, Model, ObjectKey, Runtime

ModelInput = Model | Mapping[str, Any]
RuntimeInput = Runtime | Mapping[str, Any]
IsvcInput = InferenceService | Mapping[str, Any] | None


def model_error(model: Model | None) -> str | None:
    """validateModel (5.2): OME's error for a model it refuses to select for."""
    if model is None:
        return reasons.MODEL_NIL
    if not model.format.name:
        return reasons.MODEL_FORMAT_REQUIRED
    return None


def is_compatible(
    model: Model, runtime: Runtime, isvc: InferenceService | None, behaviour: Behaviour
) -> tuple[bool, int | None]:
    """The verdict and the first passing entry, without building any text."""
    if pre_format_reason(runtime, isvc, behaviour) is not None:
        return False, None
    entry = first_passing_entry(model, runtime, behaviour)
    return entry is not None and size_problem(model, runtime, behaviour) is None, entry


def _ome_warnings(model: Model, runtime: Runtime) -> list[str]:
    found = []
    if not runtime.has_auto_select:
        found.append(reasons.NO_AUTO_SELECT_WARNING)
    if model.size is None and runtime.size_range is not None:
        found.append(reasons.NO_SIZE_WARNING)
    return found


def check(
    model: ModelInput, runtime: RuntimeInput, isvc: IsvcInput = None, *, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR
) -> CheckReport:
    """One model against one runtime: OME's verdict and reason, and every entry's every check.

    `.reasons` holds OME's incompatibility reason (at most one, exact text); `.warnings` OME's
    warnings for a compatible runtime, then explanations of values OME cannot match. Where
    this OME crashes on the pair (a half-open size range before U1), `.error` says so and
    `.reasons` is empty.
    """
    model, runtime, isvc = as_model(model), as_runtime(runtime), as_isvc(isvc)
    profile = as_behaviour(behaviour)
    panic = runtime_panic(model, runtime, isvc, profile)
    reason = None if panic else runtime_reason(model, runtime, isvc, profile)
    wide = runtime_wide_checks(model, runtime, isvc, profile)
    entries = []
    for index, entry in enumerate(runtime.entries):
        checks = entry_checks(model, entry, profile)
        passed = all(outcome.passed for outcome in checks)
        entries.append(
            EntryReport(
                index=index,
                passed=passed,
                checks=(*checks, *wide),
                mismatch=None if passed else entry_mismatch_text(model, entry, profile),
                score=entry_score(model, entry, entry.effective_priority, profile),
                priority=entry.effective_priority,
                auto_select=entry.auto_select,
            )
        )
    compatible = reason is None and panic is None
    warnings = _ome_warnings(model, runtime) if compatible else []
    return CheckReport(
        runtime=runtime.name,
        is_cluster=runtime.is_cluster,
        compatible=compatible,
        reasons=() if reason is None else (reason,),
        warnings=(*warnings, *explain_values(model, runtime)),
        entries=tuple(entries),
        matched_entry=first_passing_entry(model, runtime, profile),
        score=runtime_score(model, runtime, profile),
        label=format_label(model),
        behaviour=profile.name,
        error=panic,
    )


def score(model: ModelInput, runtime: RuntimeInput, *, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR) -> int:
    """OME's runtime score (CalculateScore, section 4.2)."""
    return runtime_score(as_model(model), as_runtime(runtime), as_behaviour(behaviour))


def in_scope(runtimes: Iterable[Runtime], namespace: str) -> tuple[list[Runtime], list[Runtime]]:
    """The ServingRuntimes of `namespace` and all ClusterServingRuntimes, each in OME's fetch
    order; of two objects with the same kind, namespace and name, the later one counts."""
    unique = {runtime.key: runtime for runtime in runtimes}
    namespaced = [rt for rt in unique.values() if not rt.is_cluster and rt.namespace == namespace]
    cluster = [rt for rt in unique.values() if rt.is_cluster]
    return fetch_order(namespaced), fetch_order(cluster)


def rank(model: Model, scored: Sequence[tuple[Runtime, int, int | None]]) -> list[Match]:
    """Sort one scope's auto-selectable runtimes as CompareRuntimes does."""
    size = model_size_value(model)

    def before(first: tuple[Runtime, int, int | None], second: tuple[Runtime, int, int | None]) -> int:
        return -compare_runtimes((first[0], first[1]), (second[0], second[1]), size)

    ordered = sorted(scored, key=cmp_to_key(before))
    return [
        Match(name=rt.name, score=points, is_cluster=rt.is_cluster, namespace=rt.namespace, entry=entry)
        for rt, points, entry in ordered
    ]


def manual_reason(model: Model, runtime: Runtime, entry: int | None) -> str:
    """Why a compatible runtime cannot be auto-selected, in kubectl ome runtime explain's words."""
    if not runtime.has_auto_select:
        return reasons.MANUAL_NO_AUTO_SELECT
    matched = runtime.entries[entry] if entry is not None else None
    if matched is not None and matched.auto_select is not True:
        return reasons.manual_entry_not_auto(model.format.name)
    if matched is not None and matched.priority == 0:
        return f"{reasons.MANUAL_ZERO_SCORE} (format priority 0)"
    return reasons.MANUAL_ZERO_SCORE


def no_runtime_error(model: Model, namespace: str, namespaced: int, cluster: int, excluded: Mapping[str, str]) -> str:
    return reasons.no_runtime_found(
        model.format.name, namespace, namespaced=namespaced, cluster=cluster, excluded=excluded.items()
    )


def invalid_selection(model: Model | None, namespace: str, error: str, behaviour: Behaviour) -> Selection:
    """A selection that fails before any runtime is ranked: an invalid model, or a crash."""
    return Selection(
        model="" if model is None else model.name,
        namespace=namespace,
        compatible=[],
        manual_only={},
        excluded=dict,
        error=lambda _excluded: error,
        behaviour=behaviour.name,
    )


def selection_namespace(model: Model | None, isvc: InferenceService | None, namespace: str | None) -> str:
    if namespace is not None:
        return namespace
    if isvc is not None:
        return isvc.namespace
    return "" if model is None else model.namespace


def select(
    model: ModelInput | None,
    runtimes: Iterable[RuntimeInput],
    isvc: IsvcInput = None,
    namespace: str | None = None,
    *,
    behaviour: BehaviourInput = DEFAULT_BEHAVIOUR,
) -> Selection:
    """OME's auto-selection (GetCompatibleRuntimes / SelectRuntime) for one model.

    Only ServingRuntimes in `namespace` (default: the InferenceService's, else the model's) and
    all ClusterServingRuntimes count. `.excluded` lists every incompatible runtime with OME's
    first reason, in scope order then by name (OME's own order is random, quirk Q5); a
    ClusterServingRuntime's reason replaces a same-named ServingRuntime's (quirk Q27). Where
    this OME crashes on a runtime in scope, `.error` says so and nothing is selected.
    """
    profile = as_behaviour(behaviour)
    parsed = None if model is None else as_model(model)
    isvc_value = as_isvc(isvc)
    ns = selection_namespace(parsed, isvc_value, namespace)
    error = model_error(parsed)
    if error is not None or parsed is None:
        return invalid_selection(parsed, ns, error or reasons.MODEL_NIL, profile)
    namespaced, cluster = in_scope((as_runtime(runtime) for runtime in runtimes), ns)
    compatible: dict[ObjectKey, int] = {}
    candidates = []
    for runtime in namespaced + cluster:
        panic = runtime_panic(parsed, runtime, isvc_value, profile)
        if panic is not None:
            return invalid_selection(parsed, ns, panic, profile)
        passes, entry = is_compatible(parsed, runtime, isvc_value, profile)
        if passes and entry is not None:
            compatible[runtime.key] = entry
            candidates.append((runtime, entry))
    return build_selection(
        parsed,
        ns,
        candidates,
        counts=(len(namespaced), len(cluster)),
        points=lambda rt: runtime_score(parsed, rt, profile),
        excluded=lambda: excluded_reasons(
            namespaced, cluster, compatible, lambda rt: runtime_reason(parsed, rt, isvc_value, profile) or ""
        ),
        behaviour=profile,
    )


def excluded_reasons(
    namespaced: Sequence[Runtime],
    cluster: Sequence[Runtime],
    compatible: Mapping[ObjectKey, int],
    reason: Callable[[Runtime], str],
) -> dict[str, str]:
    """Every incompatible runtime in scope with its reason, namespaced first, each by name; a
    cluster runtime's reason replaces a same-named namespaced one's (quirk Q27)."""
    found: dict[str, str] = {}
    for runtimes in (namespaced, cluster):
        for runtime in sorted(runtimes, key=lambda rt: rt.name):
            if runtime.key not in compatible:
                found[runtime.name] = reason(runtime)
    return found


def build_selection(
    model: Model,
    namespace: str,
    candidates: Sequence[tuple[Runtime, int]],
    *,
    counts: tuple[int, int],
    points: Callable[[Runtime], int],
    excluded: Callable[[], dict[str, str]],
    behaviour: Behaviour,
) -> Selection:
    """Assemble a Selection from the compatible runtimes in OME's fetch order (namespaced ones
    first) with their first passing entries; shared by `select` and the grid."""
    groups: tuple[list[tuple[Runtime, int, int | None]], ...] = ([], [])
    manual: dict[ObjectKey, str] = {}
    for runtime, entry in candidates:
        runtime_points = points(runtime)
        if runtime.has_auto_select and runtime_points > 0:
            groups[runtime.is_cluster].append((runtime, runtime_points, entry))
        else:
            manual[runtime.key] = manual_reason(model, runtime, entry)
    matches = rank(model, groups[0]) + rank(model, groups[1])

    def error(excluded_now: dict[str, str]) -> str | None:
        if matches:
            return None
        return no_runtime_error(model, namespace, counts[0], counts[1], excluded_now)

    return Selection(
        model=model.name,
        namespace=namespace,
        compatible=matches,
        manual_only={key[2]: reason for key, reason in manual.items()},
        excluded=excluded,
        error=error,
        manual_keys=manual,
        behaviour=behaviour.name,
    )


def validate(
    runtime_name: str,
    model: ModelInput | None,
    runtimes: Iterable[RuntimeInput],
    isvc: IsvcInput = None,
    namespace: str | None = None,
    *,
    behaviour: BehaviourInput = DEFAULT_BEHAVIOUR,
) -> str | None:
    """ValidateRuntime (5.5): None when OME accepts the named runtime, else its exact error.

    The runtime is looked up as this OME does (since U4 by the service's `spec.runtime.kind`
    when the service names this runtime, merged with what it inherits since U9). autoSelect, priority and score do not matter for a
    named runtime (quirk Q29).
    """
    profile = as_behaviour(behaviour)
    parsed = None if model is None else as_model(model)
    error = model_error(parsed)
    if error is not None or parsed is None:
        return error or reasons.MODEL_NIL
    isvc_value = as_isvc(isvc)
    ns = selection_namespace(parsed, isvc_value, namespace)
    table = {runtime.key: runtime for runtime in map(as_runtime, runtimes)}
    found = find_named(runtime_name, ns, _declared_kind(runtime_name, isvc_value), table, profile)
    if found.runtime is None:
        return found.error
    return validate_found(runtime_name, parsed, found.runtime, isvc_value, profile)


def _declared_kind(runtime_name: str, isvc: InferenceService | None) -> str | None:
    """The service's spec.runtime.kind, which ValidateRuntime applies only to the runtime the
    service itself names; any other name is looked up without a kind (sgl-project/ome
    `pkg/runtimeselector/selector.go` at 078c923f)."""
    if isvc is None or isvc.runtime_name != runtime_name:
        return None
    return isvc.runtime_kind


def validate_found(
    runtime_name: str, model: Model, runtime: Runtime, isvc: InferenceService | None, behaviour: Behaviour
) -> str | None:
    """ValidateRuntime's checks once the runtime is found: disabled, then compatibility."""
    if runtime.is_disabled:
        return reasons.runtime_disabled(runtime_name, is_cluster=runtime.is_cluster)
    panic = runtime_panic(model, runtime, isvc, behaviour)
    if panic is not None:
        return panic
    reason = runtime_reason(model, runtime, isvc, behaviour)
    if reason is None:
        return None
    # IsCompatible's own errors (accelerator, deployment mode) carry an empty model name (Q11).
    subject = "" if reason == pre_format_reason(runtime, isvc, behaviour) else model.format.name
    return reasons.runtime_does_not_support(runtime_name, subject, reason)
