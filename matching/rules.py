"""OME's matcher (section 2): entry checks, runtime-wide checks, reasons and the check trace."""

from __future__ import annotations

from . import reasons
from .behaviour import DEFAULT_BEHAVIOUR, Behaviour, BehaviourInput, as_behaviour
from .pipeline import pipeline_mismatch
from .results import CheckOutcome
from .sizes import parse_size, size_outside_reason
from .types import Entry, FormatRef, InferenceService, Model, Pipeline, Runtime
from .versions import version_matches

SHARDED = "Sharded"
# OME's selector is configured with no model cache provider by default (section 10, U3).
CACHE_PROVIDER = ""


def format_label(model: Model) -> str:
    """The `mt:` label OME prints in format reasons (section 2.8)."""
    parts = [f"mt:{model.format.name}"]
    optional = [model.format.version, model.architecture, model.quantization]
    if model.framework is not None:
        optional += [model.framework.name, model.framework.version]
    parts += [value for value in optional if value is not None]
    return ":".join(parts)


def versions_match(model_version: str | None, required: FormatRef) -> bool:
    """Both absent passes, one absent fails, both present uses OME's version match (3.3)."""
    if model_version is None or required.version is None:
        return model_version is None and required.version is None
    return version_matches(required.version, required.operator, model_version)


def cache_provider_problem(model: Model, entry: Entry, behaviour: Behaviour) -> str | None:
    """U3: a Sharded model needs the configured provider on the entry (none is configurable)."""
    if not behaviour.has("U3"):
        return None
    return provider_problem(model, entry)


def provider_problem(model: Model, entry: Entry) -> str | None:
    """The model-cache-provider test of newer OME (`model_cache.go`), whatever the profile."""
    if model.distribution != SHARDED:
        return None
    if not CACHE_PROVIDER:
        return reasons.NO_CACHE_PROVIDER
    if CACHE_PROVIDER in entry.cache_providers:
        return None
    return reasons.cache_provider_unsupported(CACHE_PROVIDER, entry.cache_providers)


def entry_passes(model: Model, entry: Entry, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR) -> bool:
    """OME's entry check (2.1), in its order; the fast path of `entry_checks`."""
    if model.distribution == SHARDED and cache_provider_problem(model, entry, as_behaviour(behaviour)):
        return False
    if entry.pipeline is not None and pipeline_mismatch(model.pipeline, entry.pipeline):
        return False
    # Absent is not a wildcard: None only equals None (quirk Q9).
    if model.architecture != entry.architecture or model.quantization != entry.quantization:
        return False
    if entry.format is None or entry.format.name != model.format.name:
        return False
    if not versions_match(model.format.version, entry.format):
        return False
    if entry.framework is None or model.framework is None:
        return entry.framework is None and model.framework is None
    return entry.framework.name == model.framework.name and versions_match(model.framework.version, entry.framework)


def _format_problem(model: Model, required: FormatRef | None) -> str | None:
    if required is None:
        return None
    if required.name != model.format.name:
        return reasons.name_mismatch("format", model.format.name, required.name)
    return _version_problem("format", model.format.version, required)


def _version_problem(kind: str, model_version: str | None, required: FormatRef) -> str | None:
    if model_version is not None and required.version is not None:
        if version_matches(required.version, required.operator, model_version):
            return None
        return reasons.version_mismatch(kind, model_version, required.version)
    if required.version is not None:
        return reasons.version_required(kind, required.version)
    if model_version is not None:
        return reasons.version_unwanted(kind)
    return None


def _framework_problem(model: FormatRef | None, required: FormatRef | None) -> str | None:
    if model is not None and required is not None:
        if model.name != required.name:
            return reasons.name_mismatch("framework", model.name, required.name)
        return _version_problem("framework", model.version, required)
    if required is not None:
        return reasons.framework_required(required.name)
    if model is not None:
        return reasons.framework_unwanted(model.name)
    return None


def _describe_pipeline(pipeline: Pipeline | None) -> str | None:
    if pipeline is None:
        return None
    return pipeline.class_name or "(pipeline without className)"


def _describe(ref: FormatRef | None) -> str | None:
    return None if ref is None else ref.describe()


def _outcome(check: str, model: str | None, runtime: str | None, reason: str | None) -> CheckOutcome:
    return CheckOutcome(check=check, passed=reason is None, model=model, runtime=runtime, reason=reason)


def entry_checks(model: Model, entry: Entry, behaviour: Behaviour) -> list[CheckOutcome]:
    """Every entry-level check with the values compared, in the order of OME's mismatch text."""
    outcomes = []
    if model.distribution == SHARDED and behaviour.has("U3"):
        providers = ", ".join(entry.cache_providers) or None
        outcomes.append(_outcome("cacheProvider", SHARDED, providers, cache_provider_problem(model, entry, behaviour)))
    if entry.pipeline is not None or model.pipeline is not None:
        outcomes.append(
            _outcome(
                "pipeline",
                _describe_pipeline(model.pipeline),
                _describe_pipeline(entry.pipeline),
                pipeline_mismatch(model.pipeline, entry.pipeline),
            )
        )
    outcomes += [
        _outcome(
            "architecture",
            model.architecture,
            entry.architecture,
            reasons.two_sided("architecture", model.architecture, entry.architecture),
        ),
        _outcome(
            "quantization",
            model.quantization,
            entry.quantization,
            reasons.two_sided("quantization", model.quantization, entry.quantization),
        ),
    ]
    format_outcome = _outcome(
        "format", model.format.describe(), _describe(entry.format), _format_problem(model, entry.format)
    )
    if entry.format is None:
        # OME fails such an entry without saying why (quirk Q23).
        format_outcome = CheckOutcome("format", False, model.format.describe(), None)
    outcomes.append(format_outcome)
    outcomes.append(
        _outcome(
            "framework",
            _describe(model.framework),
            _describe(entry.framework),
            _framework_problem(model.framework, entry.framework),
        )
    )
    return outcomes


def entry_mismatch_text(model: Model, entry: Entry, behaviour: Behaviour) -> str:
    """OME's text for one failing entry: every problem, joined with ", " (section 2.4)."""
    phrases = [outcome.reason for outcome in entry_checks(model, entry, behaviour) if outcome.reason]
    return ", ".join(phrases) if phrases else reasons.UNKNOWN_MISMATCH


def accelerator_passes(runtime: Runtime, isvc: InferenceService | None) -> bool:
    """Section 2.6: every required class must be listed; no requirement always passes."""
    if isvc is None or not isvc.accelerator_classes:
        return True
    listed = runtime.accelerator_classes
    return bool(listed) and all(required in listed for required in isvc.accelerator_classes)


def deployment_mode_problem(runtime: Runtime, isvc: InferenceService | None, behaviour: Behaviour) -> str | None:
    """Section 10, U2: both sides declare a valid mode for a component and the modes differ."""
    if isvc is None or not behaviour.has("U2"):
        return None
    valid = behaviour.deployment_modes
    pairs = (("engine", runtime.engine_mode, isvc.engine_mode), ("decoder", runtime.decoder_mode, isvc.decoder_mode))
    for component, offered, requested in pairs:
        if offered and requested and offered in valid and requested in valid and offered != requested:
            return reasons.deployment_mode_mismatch(component, offered, requested)
    return None


def size_panic(model: Model, runtime: Runtime, behaviour: Behaviour) -> str | None:
    """Before U1, OME dereferences both bounds once an entry passed a sized model: a range
    without one of them crashes it (quirk Q22). The error that says so, or None."""
    size_range = runtime.size_range
    if behaviour.has("U1") or model.size is None or size_range is None:
        return None
    if size_range.min_text is not None and size_range.max_text is not None:
        return None
    return reasons.size_range_panic(behaviour.name, runtime.name, size_range.describe(), model.size)


def size_problem(model: Model, runtime: Runtime, behaviour: Behaviour) -> str | None:
    """The size reason, or the crash where this OME crashes (`size_panic`)."""
    if model.size is None or runtime.size_range is None:
        return None
    panic = size_panic(model, runtime, behaviour)
    if panic is not None:
        return panic
    if runtime.size_range.contains(parse_size(model.size)):
        return None
    return size_outside_reason(model.size, runtime.size_range)


def runtime_wide_checks(
    model: Model, runtime: Runtime, isvc: InferenceService | None, behaviour: Behaviour
) -> list[CheckOutcome]:
    size_range = runtime.size_range.describe() if runtime.size_range is not None else None
    accelerator = None if accelerator_passes(runtime, isvc) else reasons.ACCELERATOR_UNSUPPORTED
    required = ", ".join(isvc.accelerator_classes) if isvc is not None and isvc.accelerator_classes else None
    size = size_problem(model, runtime, behaviour)
    outcomes = [
        CheckOutcome("size", size is None, model.size, size_range, size, runtime_wide=True),
        CheckOutcome(
            "accelerator",
            accelerator is None,
            required,
            ", ".join(runtime.accelerator_classes) or None,
            accelerator,
            runtime_wide=True,
        ),
    ]
    if isvc is not None and behaviour.has("U2"):
        mode = deployment_mode_problem(runtime, isvc, behaviour)
        requested = "/".join(filter(None, (isvc.engine_mode, isvc.decoder_mode))) or None
        offered = "/".join(filter(None, (runtime.engine_mode, runtime.decoder_mode))) or None
        outcomes.append(CheckOutcome("deploymentMode", mode is None, requested, offered, mode, runtime_wide=True))
    return outcomes


def first_passing_entry(model: Model, runtime: Runtime, behaviour: Behaviour) -> int | None:
    for index, entry in enumerate(runtime.entries):
        if entry_passes(model, entry, behaviour):
            return index
    return None


def pre_format_reason(runtime: Runtime, isvc: InferenceService | None, behaviour: Behaviour) -> str | None:
    """The runtime-wide reasons OME gives before looking at formats, in its order."""
    if runtime.is_disabled:
        return reasons.RUNTIME_DISABLED
    if not accelerator_passes(runtime, isvc):
        return reasons.ACCELERATOR_UNSUPPORTED
    return deployment_mode_problem(runtime, isvc, behaviour)


def formats_reason(model: Model, runtime: Runtime, behaviour: Behaviour) -> str:
    texts = [entry_mismatch_text(model, entry, behaviour) for entry in runtime.entries]
    return reasons.formats_not_supported(format_label(model), texts)


def runtime_reason(model: Model, runtime: Runtime, isvc: InferenceService | None, behaviour: Behaviour) -> str | None:
    """OME's first incompatibility reason (GetCompatibilityDetails), or None when compatible;
    where this OME crashes, the text that says so (`size_panic`)."""
    reason = pre_format_reason(runtime, isvc, behaviour)
    if reason is not None:
        return reason
    if first_passing_entry(model, runtime, behaviour) is None:
        return formats_reason(model, runtime, behaviour)
    return size_problem(model, runtime, behaviour)


def runtime_panic(model: Model, runtime: Runtime, isvc: InferenceService | None, behaviour: Behaviour) -> str | None:
    """Whether evaluating this runtime crashes this OME: it gets past the formats to the size."""
    if behaviour.has("U1") or pre_format_reason(runtime, isvc, behaviour) is not None:
        return None
    if size_panic(model, runtime, behaviour) is None or first_passing_entry(model, runtime, behaviour) is None:
        return None
    return size_panic(model, runtime, behaviour)


def reason_behaviours(model: Model, runtime: Runtime) -> frozenset[str]:
    """The behaviours (U-numbers) that can change this pair's reason text without an
    InferenceService: U1 for a sized model against a half-open range, U3 for a Sharded model.
    Keep in step with the rules above; tests/matching/test_behaviours.py checks it."""
    found = set()
    size_range = runtime.size_range
    if model.size is not None and size_range is not None and None in (size_range.min_text, size_range.max_text):
        found.add("U1")
    if model.distribution == SHARDED:
        found.add("U3")
    return frozenset(found)
