"""Would OME's runtime admission webhook accept this ServingRuntime or ClusterServingRuntime?

The checks and their order follow `pkg/webhook/admission/servingruntime/servingruntime_webhook.go`
(spec 7.3): at 17b77eda (ome-projects/ome, the same file at the v0.1.5 snapshot cfa05c69) a
disabled runtime is always allowed, then the accelerator classes are checked, then, only while
other runtimes of its scope exist, the runtime's own priorities and its priorities against each
of them. The newer webhook (the sigs.k8s.io/ome module: `validateProfileMarker` and the
`runtimeinheritance` chain check run before the disabled shortcut, and
`validation.ValidateModelFormatPrioritySame` outside the loop) is behaviour A1 and A2; its texts
are those of ome-docs `concepts/runtimes/runtime-inheritance.md` ("What admission checks"),
`reference/matching/runtime-accelerator-class-matching.md` and `runtime-selection-scoring.md`.

Proposal ome#594 (behaviour P594, profile `pr594`; an open issue, not yet code): the webhook
refuses an enabled runtime whose auto-select entry overlaps an auto-select entry of another
enabled runtime, of either scope, at the same priority. "Overlap" follows the issue's acceptance
criteria: the same model format (format, framework, architecture and quantization, compared by
value) and model size ranges that share a size. Omitted priorities count as OME's default, 1
(the issue leaves that open). Upstream has no text for it yet: ours says so.

Not ported: checks that do not bear on selection and read fields this library does not hold
(17b77eda's `invalid configuration: ...` worker checks; the newer scaling-policy and autoscaler
checks).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import reasons
from .behaviour import (
    DEFAULT_BEHAVIOUR,
    INHERIT_FROM_ANNOTATION,
    RUNTIME_PROFILE_ANNOTATION,
    Behaviour,
    BehaviourInput,
    as_behaviour,
)
from .keys import key_text
from .named import resolve
from .parse import as_runtime
from .sizes import SizeRange
from .types import Entry, FormatRef, ObjectKey, Runtime

RuntimeInput = Runtime | Mapping[str, Any]

CLASSES_UNKNOWN = "accelerator classes not checked: which AcceleratorClasses exist is unknown"


PROFILE_FIELD = f"metadata.annotations.{RUNTIME_PROFILE_ANNOTATION}"
CHAIN_FIELD = f"metadata.annotations.{INHERIT_FROM_ANNOTATION}"
CLASSES_FIELD = "spec.acceleratorRequirements.acceleratorClasses"
FORMATS_FIELD = "spec.supportedModelFormats"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One denial of the runtime webhook: OME's text and the field it is about."""

    field: str
    text: str


@dataclass(frozen=True, slots=True)
class Admission:
    """What the runtime webhook answers for one runtime. `errors`: its denial texts in its check
    order (it denies with the first; the others are what it would say once the earlier ones are
    fixed), each with its field in `refusals`. `warnings`: what could not be checked.
    `denial`: what `kubectl apply` prints for the first, as the API server words it."""

    kind: str
    refusals: tuple[Refusal, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(refusal.text for refusal in self.refusals)

    @property
    def allowed(self) -> bool:
        return not self.refusals

    @property
    def denial(self) -> str | None:
        if not self.refusals:
            return None
        webhook = f"{self.kind.lower()}.ome-webhook-server.validator"
        return f'admission webhook "{webhook}" denied the request: {self.refusals[0].text}'

    def to_dict(self) -> dict[str, object]:
        return {"allowed": self.allowed, "errors": list(self.errors), "warnings": list(self.warnings)}


def _go_struct_equal(first: FormatRef | None, second: FormatRef | None) -> bool:
    """Go's `*a == *b` on ModelFormat or ModelFrameworkSpec: their `version` and `operator` are
    pointers compared by identity, so two objects decoded apart are equal only when both are
    absent (quirk Q20)."""
    if first is None or second is None:
        return first is second
    return (
        first.name == second.name
        and first.weight == second.weight
        and first.version is None
        and second.version is None
        and first.operator is None
        and second.operator is None
    )


def _entries_equal(first: Entry, second: Entry) -> bool:
    """`areSupportedModelFormatsEqual`."""
    return (
        first.name.casefold() == second.name.casefold()
        and first.version == second.version
        and first.quantization == second.quantization
        and _go_struct_equal(first.framework, second.framework)
        and _go_struct_equal(first.format, second.format)
        and first.architecture == second.architecture
    )


def _different_priorities(runtime: Runtime) -> str | None:
    """`validateModelFormatPrioritySame`: auto-select entries of one deprecated `name` (usually "")."""
    seen: dict[str, int | None] = {}
    for entry in runtime.entries:
        if entry.auto_select is not True:
            continue
        if entry.name not in seen:
            seen[entry.name] = entry.priority
            continue
        first = seen[entry.name]
        if first is not None and entry.priority is not None and first != entry.priority:
            return reasons.different_priorities(entry.name, runtime.kind, runtime.name)
    return None


def _same_priority(runtime: Runtime, existing: Runtime) -> str | None:
    """`validateServingRuntimePriority` against one other enabled runtime of the scope."""
    if existing.is_disabled or existing.name == runtime.name:
        return None
    if not set(existing.protocols) & set(runtime.protocols) or existing.size_range != runtime.size_range:
        return None
    for old in existing.entries:
        for new in runtime.entries:
            if old.auto_select is not True or new.auto_select is not True or not _entries_equal(old, new):
                continue
            if old.priority is not None and old.priority == new.priority:
                namespace = None if runtime.is_cluster else runtime.namespace
                return reasons.same_priority(new.name, existing.name, runtime.name, namespace)
    return None


def _sizes_overlap(first: SizeRange | None, second: SizeRange | None) -> bool:
    """Whether two modelSizeRanges share a size (an absent bound is an open end)."""
    ranges = [found for found in (first, second) if found is not None]
    lows = [found.min_value for found in ranges if found.min_value is not None]
    highs = [found.max_value for found in ranges if found.max_value is not None]
    return not lows or not highs or max(lows) <= min(highs)


def _same_format(first: Entry, second: Entry) -> bool:
    return (first.format, first.framework, first.architecture, first.quantization) == (
        second.format,
        second.framework,
        second.architecture,
        second.quantization,
    )


def _overlapping_priority(runtime: Runtime, existing: Runtime) -> str | None:
    """Proposal ome#594 against one other enabled runtime, of either scope."""
    if (
        existing.is_disabled
        or existing.key == runtime.key
        or not _sizes_overlap(existing.size_range, runtime.size_range)
    ):
        return None
    if not (existing.is_cluster or runtime.is_cluster or existing.namespace == runtime.namespace):
        return None
    for old in existing.entries:
        for new in runtime.entries:
            both_auto = old.auto_select is True and new.auto_select is True
            if both_auto and _same_format(old, new) and old.effective_priority == new.effective_priority:
                return reasons.overlapping_priority(
                    key_text(existing.key), key_text(runtime.key), new.effective_priority
                )
    return None


def _scope(runtime: Runtime, runtimes: Iterable[Runtime]) -> list[Runtime]:
    """The runtimes the webhook lists (the stored self included on an update): ClusterServingRuntimes,
    or ServingRuntimes of the namespace, in the API server's (name) order."""
    return sorted(
        (other for other in runtimes if other.kind == runtime.kind and other.namespace == runtime.namespace),
        key=lambda other: other.name,
    )


def _marker_and_chain(runtime: Runtime, runtimes: Mapping[ObjectKey, Runtime]) -> list[Refusal]:
    refusals = []
    if runtime.profile and not runtime.is_disabled:
        refusals.append(Refusal(PROFILE_FIELD, reasons.RUNTIME_PROFILE_NOT_DISABLED))
    if runtime.inherit_from:
        _, error = resolve(runtime, runtimes)
        if error is not None:
            refusals.append(Refusal(CHAIN_FIELD, error))
    return refusals


def _enabled_checks(
    runtime: Runtime, existing: list[Runtime], classes: frozenset[str] | None, behaviour: Behaviour
) -> list[Refusal]:
    refusals = []
    missing = [name for name in runtime.accelerator_classes if classes is not None and name not in classes]
    if missing:
        refusals.append(Refusal(CLASSES_FIELD, reasons.unknown_accelerator_classes(missing)))
    different = _different_priorities(runtime)
    if different is not None and (existing or behaviour.has("A2")):
        refusals.append(Refusal(FORMATS_FIELD, different))
    clashes = (_same_priority(runtime, other) for other in existing)
    refusals.extend(Refusal(FORMATS_FIELD, clash) for clash in clashes if clash is not None)
    return refusals


def _proposal_594(runtime: Runtime, every: list[Runtime]) -> list[Refusal]:
    overlaps = (_overlapping_priority(runtime, other) for other in sorted(every, key=lambda other: other.key))
    return [Refusal(FORMATS_FIELD, overlap) for overlap in overlaps if overlap is not None]


def admit_runtime(
    runtime: RuntimeInput,
    runtimes: Iterable[RuntimeInput],
    accelerator_classes: Iterable[str] | None = None,
    *,
    behaviour: BehaviourInput = DEFAULT_BEHAVIOUR,
) -> Admission:
    """What OME's webhook says to creating or updating `runtime` in a cluster that holds `runtimes`
    (the runtime's stored self may be among them) and the AcceleratorClasses named
    `accelerator_classes` (None: unknown, not checked). Raises ManifestError for malformed input."""
    profile = as_behaviour(behaviour)
    new = as_runtime(runtime)
    given = [as_runtime(other) for other in runtimes]
    stored = {**{other.key: other for other in given}, new.key: new}
    refusals = _marker_and_chain(new, stored) if profile.has("A1") else []
    warnings = []
    if not new.is_disabled:
        classes = None if accelerator_classes is None else frozenset(accelerator_classes)
        if classes is None and new.accelerator_classes:
            warnings.append(CLASSES_UNKNOWN)
        refusals.extend(_enabled_checks(new, _scope(new, given), classes, profile))
        if profile.has("P594"):
            refusals.extend(_proposal_594(new, given))
    return Admission(new.kind, tuple(refusals), tuple(warnings))


def refused_apply(
    runtimes: Mapping[ObjectKey, Runtime], keys: Iterable[ObjectKey], *, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR
) -> list[tuple[Runtime, Admission]]:
    """Of the runtimes `keys` names, those OME's webhook would refuse when they are applied to a
    cluster holding `runtimes` (themselves included: one `kubectl apply` of a whole tree), in key
    order."""
    every = list(runtimes.values())
    found = []
    for key in sorted(keys):
        if key in runtimes:
            admission = admit_runtime(runtimes[key], every, behaviour=behaviour)
            if not admission.allowed:
                found.append((runtimes[key], admission))
    return found
