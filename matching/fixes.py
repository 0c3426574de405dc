"""The smallest fixes of a near miss, on either side: the model or the runtime.

Each failed check of a near miss (nearmiss.py) offers changes: on the runtime, a version set
or an operator widened, autoSelect turned on, a size bound moved, a requirement set or relaxed,
or a new entry that accepts the model as it is; on the model, only a fact it does not record
filled in (facts.py): a model-side fix never changes or removes what the model's files say.
A fix takes one change per failed check, as JSON patch operations (RFC 6902) of the objects
as stored, and is kept only when applying it makes OME auto-select the runtime for the model.
When no runtime accepts the model's facts, the answer is a new runtime (derived.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .behaviour import DEFAULT_BEHAVIOUR, Behaviour, BehaviourInput, as_behaviour
from .errors import ManifestError
from .facts import entry_serving, records_facts, serves_format
from .jsonpatch import Operation, json_patch, merge_operations, pointer
from .nearmiss import Miss, NearMiss, near_miss
from .parse import parse_model, parse_runtime
from .patches import pipeline_patch, plan_pipeline
from .pipeline import pipeline_mismatch
from .sizes import parse_size
from .types import Component, Entry, FormatRef, Model, ObjectKey, Pipeline, Runtime

MODEL, RUNTIME = "model", "runtime"
_MAX_VARIANTS = 4
_RUNTIME_WIDE = frozenset({"disabled", "size", "autoSelect", "score"})


@dataclass(frozen=True, slots=True)
class Change:
    """One change of one object: what it does in words, and its JSON patch operations."""

    side: str
    text: str
    operations: tuple[Operation, ...]


@dataclass(frozen=True, slots=True)
class ObjectPatch:
    """The JSON patch of one object (`kubectl patch --type json`)."""

    target: ObjectKey
    operations: tuple[Operation, ...]

    def to_dict(self) -> dict[str, object]:
        kind, namespace, name = self.target
        return {"kind": kind, "namespace": namespace, "name": name, "operations": list(self.operations)}


@dataclass(frozen=True, slots=True)
class Fix:
    """A verified fix of one near miss. `side` is model, runtime or both; `pipeline` is the
    `{"spec": {"diffusionPipeline": ...}}` merge patch when the fix is only that (the one
    change the dashboard applies itself); `created` holds the manifests of new objects (a
    derived runtime), which `runtime` then names."""

    side: str
    runtime: ObjectKey
    checks: tuple[str, ...]
    changes: tuple[str, ...]
    patches: tuple[ObjectPatch, ...]
    pipeline: dict[str, object] | None = None
    created: tuple[dict[str, Any], ...] = ()
    arguments: tuple[tuple[str, str, str], ...] = ()  # (where, old, new): a created runtime's rewrites
    review: tuple[str, ...] = ()  # the model-specific arguments it could not rewrite: to review

    @property
    def size(self) -> int:
        """How many operations and new objects it takes."""
        return sum(len(patch.operations) for patch in self.patches) + len(self.created)

    def to_dict(self) -> dict[str, object]:
        return {
            "side": self.side,
            "checks": list(self.checks),
            "changes": list(self.changes),
            "patches": [patch.to_dict() for patch in self.patches],
            "pipeline_patch": self.pipeline,
            "created": list(self.created),
            "arguments": [{"where": at, "old": old, "new": new} for at, old, new in self.arguments],
            "needs_review": list(self.review),
        }


def _add(*path: str | int, value: object) -> Operation:
    return {"op": "add", "path": pointer(*path), "value": value}


def _remove(*path: str | int) -> Operation:
    return {"op": "remove", "path": pointer(*path)}


def _ref_dict(ref: FormatRef) -> dict[str, object]:
    return {"name": ref.name} if ref.version is None else {"name": ref.name, "version": ref.version}


class _Planner:
    """The changes each failed check offers, for one model and one entry of a runtime."""

    def __init__(self, model_obj: Mapping[str, Any], model: Model, runtime: Runtime, index: int | None) -> None:
        self.model, self.runtime, self.index = model, runtime, index
        spec = model_obj.get("spec")
        self.raw_pipeline = spec.get("diffusionPipeline") if isinstance(spec, Mapping) else None
        self.entry: Entry | None = None if index is None else runtime.entries[index]
        self.recorded = records_facts(model_obj)

    def entry_path(self, *parts: str | int) -> tuple[str | int, ...]:
        return ("spec", "supportedModelFormats", self.index or 0, *parts)

    def on_runtime(self, text: str, *operations: Operation) -> Change:
        return Change(RUNTIME, f"runtime: {text}", operations)

    def on_model(self, text: str, *operations: Operation) -> Change:
        """A change of the model: only ever fills in what it does not record."""
        return Change(MODEL, f"model: {text}", operations)

    def changes(self, miss: Miss) -> list[Change]:
        handler: Callable[[], list[Change]] | None = getattr(self, "_" + miss.check.lower(), None)
        return [] if handler is None else handler()

    def _disabled(self) -> list[Change]:
        return [self.on_runtime("set spec.disabled to false", _add("spec", "disabled", value=False))]

    def _autoselect(self) -> list[Change]:
        return [
            self.on_runtime(
                f"set autoSelect: true on entry {self.index}", _add(*self.entry_path("autoSelect"), value=True)
            )
        ]

    def _score(self) -> list[Change]:
        if self.entry is None or self.entry.priority != 0:
            return []
        return [self.on_runtime(f"set priority 1 on entry {self.index}", _add(*self.entry_path("priority"), value=1))]

    def _size(self) -> list[Change]:
        size_range, size = self.runtime.size_range, self.model.size
        if size_range is None or size is None:
            return []
        bound = "min" if size_range.min_value is not None and parse_size(size) < size_range.min_value else "max"
        return [
            self.on_runtime(f"set modelSizeRange.{bound} to {size}", _add("spec", "modelSizeRange", bound, value=size))
        ]

    def _two_sided(self, field: str, model_value: str | None, entry_value: str | None) -> list[Change]:
        at = self.entry_path(field)
        runtime = (
            self.on_runtime(f"remove {field} from entry {self.index}", _remove(*at))
            if model_value is None
            else self.on_runtime(f"set {field} {model_value} on entry {self.index}", _add(*at, value=model_value))
        )
        if model_value is not None or entry_value is None:
            return [runtime]  # a recorded fact stays; removing it would falsify the model
        if field == "quantization" and self.recorded:
            return [runtime]  # OME looked: this model's weights are not quantized
        filled = self.on_model(
            f"fill in spec.{field} {entry_value} (OME could not record it)", _add("spec", field, value=entry_value)
        )
        return [runtime, filled]

    def _architecture(self) -> list[Change]:
        return self._two_sided(
            "modelArchitecture", self.model.architecture, None if self.entry is None else self.entry.architecture
        )

    def _quantization(self) -> list[Change]:
        return self._two_sided(
            "quantization", self.model.quantization, None if self.entry is None else self.entry.quantization
        )

    def _version(self, field: str, present: FormatRef, required: FormatRef) -> list[Change]:
        at, mine = self.entry_path(field), ("spec", field)
        have, want = present.version, required.version
        if have is not None and want is not None:
            return [
                self.on_runtime(f"set {field}.version {have} on entry {self.index}", _add(*at, "version", value=have)),
                self.on_runtime(
                    f"set {field}.operator GreaterThanOrEqual on entry {self.index}",
                    _add(*at, "operator", value="GreaterThanOrEqual"),
                ),
            ]
        if want is not None:
            return [
                self.on_runtime(f"remove {field}.version from entry {self.index}", _remove(*at, "version")),
                self.on_model(
                    f"fill in spec.{field}.version {want} (OME could not record it)",
                    _add(*mine, "version", value=want),
                ),
            ]
        if have is not None:
            return [
                self.on_runtime(f"set {field}.version {have} on entry {self.index}", _add(*at, "version", value=have))
            ]
        return []

    def _format(self) -> list[Change]:
        required = None if self.entry is None else self.entry.format
        if required is None or required.name != self.model.format.name:
            return []  # another format is another runtime
        return self._version("modelFormat", self.model.format, required)

    def _framework(self) -> list[Change]:
        present, required = self.model.framework, None if self.entry is None else self.entry.framework
        at = self.entry_path("modelFramework")
        if present is not None and required is not None:
            return [] if present.name != required.name else self._version("modelFramework", present, required)
        if required is not None:
            return [
                self.on_runtime(f"remove modelFramework from entry {self.index}", _remove(*at)),
                self.on_model(
                    f"fill in spec.modelFramework {required.describe()} (OME could not record it)",
                    _add("spec", "modelFramework", value=_ref_dict(required)),
                ),
            ]
        if present is not None:
            return [
                self.on_runtime(
                    f"set modelFramework {present.describe()} on entry {self.index}",
                    _add(*at, value=_ref_dict(present)),
                )
            ]
        return []

    def _pipeline(self) -> list[Change]:
        required = None if self.entry is None else self.entry.pipeline
        if required is None:
            return []
        found = []
        relaxed = _relaxed_requirement(self.model.pipeline, required, self.entry_path("diffusionPipeline"))
        if relaxed:
            found.append(self.on_runtime(f"relax entry {self.index}'s diffusionPipeline requirement", *relaxed))
        additions, conflicts = plan_pipeline(self.model.pipeline, required)
        if not conflicts and additions:
            operations = merge_operations(self.raw_pipeline, additions, "spec", "diffusionPipeline")
            found.append(self.on_model("complete spec.diffusionPipeline", *operations))
        return found


def _component_relaxations(
    name: str, present: Component | None, needed: Component, at: tuple[str | int, ...]
) -> list[Operation]:
    if present is None:
        return [_remove(*at, name)]
    found = []
    for field in ("library", "type"):
        wanted, recorded = getattr(needed, field), getattr(present, field)
        if wanted and wanted != recorded:
            found.append(_add(*at, name, field, value=recorded) if recorded else _remove(*at, name, field))
    return found


def _relaxed_requirement(model: Pipeline | None, required: Pipeline, at: tuple[str | int, ...]) -> list[Operation]:
    """Operations that make the entry require only what the model records (never more)."""
    if pipeline_mismatch(model, required) is None:
        return []
    if model is None:
        return [_remove(*at)]
    found = []
    if required.class_name is not None and model.class_name != required.class_name:
        found.append(
            _remove(*at, "className") if model.class_name is None else _add(*at, "className", value=model.class_name)
        )
    for name, needed in required.components:
        found += _component_relaxations(name, model.component(name), needed, at)
    if required.additional and not model.additional:
        return [*found, _remove(*at, "additionalComponents")]
    for name, needed in required.additional:
        found += _component_relaxations(name, model.additional_component(name), needed, (*at, "additionalComponents"))
    return found


def _combinations(options: list[list[Change]]) -> list[tuple[Change, ...]]:
    """One change per failed check: all on the runtime, all on the model, and (when neither
    side can do it alone) the model where it can, else the runtime; then variants that swap
    one check to its other changes on the same side."""
    found: list[tuple[Change, ...]] = []
    for side in (RUNTIME, MODEL):
        firsts = [next((change for change in option if change.side == side), None) for option in options]
        if all(change is not None for change in firsts):
            base = tuple(change for change in firsts if change is not None)
            found.append(base)
            for position, option in enumerate(options):
                for other in option:
                    if other.side == side and other is not base[position] and len(found) < _MAX_VARIANTS:
                        found.append((*base[:position], other, *base[position + 1 :]))
    if not found and all(options):
        mixed = [next((change for change in option if change.side == MODEL), option[0]) for option in options]
        found.append(tuple(mixed))
    return found


def _patched(obj: Mapping[str, Any], changes: tuple[Change, ...], side: str) -> dict[str, Any] | None:
    operations = [operation for change in changes if change.side == side for operation in change.operations]
    if not operations:
        return None
    try:
        result: dict[str, Any] = json_patch(dict(obj), operations)
    except ValueError:
        return None
    return result


def _fix(
    miss: NearMiss,
    model: Model,
    changes: tuple[Change, ...],
    objects: tuple[Mapping[str, Any], Mapping[str, Any]],
    behaviour: Behaviour,
) -> Fix | None:
    """The fix the changes make, when applying them makes OME auto-select the runtime."""
    model_obj, runtime_obj = objects
    new_model, new_runtime = _patched(model_obj, changes, MODEL), _patched(runtime_obj, changes, RUNTIME)
    try:
        parsed_model = model if new_model is None else parse_model(new_model)
        parsed_runtime = parse_runtime(new_runtime if new_runtime is not None else runtime_obj)
    except ManifestError:
        return None
    if parsed_model.key != model.key or near_miss(parsed_model, parsed_runtime, behaviour) is not None:
        return None
    sides = {change.side for change in changes}
    patches = tuple(
        ObjectPatch(key, tuple(op for change in changes if change.side == side for op in change.operations))
        for side, key in ((MODEL, model.key), (RUNTIME, miss.runtime))
        if side in sides
    )
    pipeline = None
    if sides == {MODEL} and miss.checks == ("pipeline",):
        pipeline = pipeline_patch(model_obj, runtime_obj).patch
    side = sides.pop() if len(sides) == 1 else "both"
    texts = tuple(change.text for change in changes)
    return Fix(side, miss.runtime, miss.checks, texts, patches, pipeline)


def _new_entry(
    planner: _Planner, miss: NearMiss, model_obj: Mapping[str, Any], runtime_obj: Mapping[str, Any]
) -> Change | None:
    """A runtime change that adds an entry accepting the model as it is, copied from the
    closest entry; None when only runtime-wide checks fail (then no entry is needed)."""
    if all(failed.check in _RUNTIME_WIDE for failed in miss.failed) or not serves_format(planner.model, planner.entry):
        return None
    spec = runtime_obj.get("spec")
    entries = spec.get("supportedModelFormats") if isinstance(spec, Mapping) else None
    like = entries[miss.entry] if isinstance(entries, list) and miss.entry is not None else None
    entry = entry_serving(planner.model, model_obj, like if isinstance(like, Mapping) else None)
    operation = (
        _add("spec", "supportedModelFormats", "-", value=entry)
        if entries
        else _add("spec", "supportedModelFormats", value=[entry])
    )
    facts = ", ".join(str(value) for key, value in entry.items() if key in ("modelArchitecture", "quantization"))
    what = f"{planner.model.format.describe()}{', ' + facts if facts else ''}"
    return planner.on_runtime(f"add an entry that accepts this model as it is ({what}), with autoSelect", operation)


def _with_new_entry(
    planner: _Planner, miss: NearMiss, options: list[list[Change]], objects: tuple[Mapping[str, Any], Mapping[str, Any]]
) -> tuple[Change, ...] | None:
    """The runtime-wide changes of the near miss, and a new entry instead of the entry's."""
    added = _new_entry(planner, miss, *objects)
    if added is None:
        return None
    wide = []
    for failed, option in zip(miss.failed, options, strict=True):
        if failed.check in ("disabled", "size"):
            change = next((change for change in option if change.side == RUNTIME), None)
            if change is None:
                return None
            wide.append(change)
    return (*wide, added)


def propose_fixes(
    model: Mapping[str, Any], runtime: Mapping[str, Any], behaviour: BehaviourInput = DEFAULT_BEHAVIOUR
) -> tuple[Fix, ...]:
    """The verified fixes that make OME auto-select the runtime for the model, fewest
    operations first; () when it already does, when the runtime is dedicated to another model
    (dedicated.py), or when no small fix exists (another format, a Sharded model without cache). Both objects as stored (Kubernetes dicts);
    ManifestError when either is malformed."""
    parsed_model, parsed_runtime, profile = parse_model(model), parse_runtime(runtime), as_behaviour(behaviour)
    miss = near_miss(parsed_model, parsed_runtime, profile)
    if miss is None or parsed_runtime.serves_as_other(parsed_model):
        return ()  # a runtime dedicated to another model would serve this one under its name
    planner = _Planner(model, parsed_model, parsed_runtime, miss.entry)
    options = [planner.changes(failed) for failed in miss.failed]
    combinations = _combinations(options) if all(options) else []
    with_entry = _with_new_entry(planner, miss, options, (model, runtime))
    if with_entry is not None:
        combinations.append(with_entry)
    found: dict[str, Fix] = {}
    for changes in combinations:
        fix = _fix(miss, parsed_model, changes, (model, runtime), profile)
        if fix is not None:
            found.setdefault(repr(fix.patches), fix)
    return tuple(sorted(found.values(), key=lambda fix: fix.size))
