"""OME's reason and error texts, in one place. Each is copied from the spec, where it is exact."""

from __future__ import annotations

from collections.abc import Iterable

RUNTIME_DISABLED = "runtime is disabled"
ACCELERATOR_UNSUPPORTED = "runtime does not support the required accelerator class"
NO_SUPPORTED_FORMATS = "no supported formats defined"
UNKNOWN_MISMATCH = "unknown mismatch"
PIPELINE_REQUIRED = "diffusion pipeline required by runtime but not specified in model"
ADDITIONAL_COMPONENTS_MISSING = "diffusion pipeline missing required additional components"
NO_AUTO_SELECT_WARNING = "runtime does not have auto-select enabled for any supported format"
NO_SIZE_WARNING = "model does not specify size, but runtime has size constraints"
NO_CACHE_PROVIDER = "no model cache provider is configured for sharded model loading"
MODEL_NIL = "invalid model specification: model: model specification is nil"
MODEL_FORMAT_REQUIRED = "invalid model specification: modelFormat.name: model format name is required"

# kubectl ome runtime explain's texts for compatible runtimes that auto-selection skips (10.4).
MANUAL_NO_AUTO_SELECT = (
    "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic "
    "selection skips it (pin it explicitly via spec.runtime.name instead)"
)
MANUAL_ZERO_SCORE = "auto-select score is 0"


def _text(value: str | None) -> str:
    """How Go's %s prints a *string: the value, or <nil>."""
    return "<nil>" if value is None else value


def pipeline_class_mismatch(model: str | None, runtime: str) -> str:
    return f"pipeline class mismatch (model={_text(model)}, runtime={runtime})"


def component_missing(name: str) -> str:
    return f"component {name} required by runtime but not specified in model"


def component_library_mismatch(name: str, model: str, runtime: str) -> str:
    return f"{name} library mismatch (model={model}, runtime={runtime})"


def component_type_mismatch(name: str, model: str, runtime: str) -> str:
    return f"{name} type mismatch (model={model}, runtime={runtime})"


def additional_component_missing(name: str) -> str:
    return f"diffusion component {name} missing in model"


def two_sided(field: str, model: str | None, runtime: str | None) -> str | None:
    """Architecture and quantization: both present and equal, or both absent (quirk Q9)."""
    if model is not None and runtime is not None:
        return None if model == runtime else f"{field} mismatch (model={model}, runtime={runtime})"
    if runtime is not None:
        return f"model has no {field} but runtime requires {runtime}"
    if model is not None:
        return f"model has {field} {model} but runtime has no {field} requirement"
    return None


def name_mismatch(kind: str, model: str, runtime: str) -> str:
    return f"{kind} name mismatch (model={model}, runtime={runtime})"


def version_mismatch(kind: str, model: str, runtime: str) -> str:
    return f"{kind} version mismatch (model={model}, runtime={runtime})"


def version_required(kind: str, runtime: str) -> str:
    return f"model has no {kind} version but runtime requires {runtime}"


def version_unwanted(kind: str) -> str:
    return f"model has {kind} version but runtime has no version requirement"


def framework_required(runtime: str) -> str:
    return f"model has no framework but runtime requires {runtime}"


def framework_unwanted(model: str) -> str:
    return f"model has framework {model} but runtime has no framework requirement"


def cache_provider_unsupported(provider: str, supported: tuple[str, ...]) -> str:
    if not supported:
        return f'runtime format does not support model cache provider "{provider}"'
    return f'runtime format supports model cache providers [{", ".join(supported)}], not "{provider}"'


def deployment_mode_mismatch(component: str, runtime: str, requested: str) -> str:
    return (
        f"runtime {component} deployment mode {runtime} does not match "
        f"requested {component} deployment mode {requested}"
    )


def formats_not_supported(label: str, entry_texts: Iterable[str]) -> str:
    texts = list(entry_texts)
    detail = "; ".join(texts) if texts else NO_SUPPORTED_FORMATS
    return f"model format '{label}' not in supported formats: {detail}"


def no_runtime_found(
    format_name: str,
    namespace: str,
    *,
    namespaced: int,
    cluster: int,
    excluded: Iterable[tuple[str, str]],
) -> str:
    text = f"no runtime found to support model {format_name} with format {format_name} in namespace {namespace}"
    if namespaced + cluster:
        total = namespaced + cluster
        text += f". Checked {total} runtimes ({namespaced} namespace-scoped, {cluster} cluster-scoped)"
    items = [f"{name} ({reason})" for name, reason in excluded]
    if items:
        text += ". Excluded runtimes: " + "; ".join(items)
    return text


def runtime_not_found(name: str, namespace: str) -> str:
    return f"runtime {name} not found in namespace {namespace} or at cluster scope"


def runtime_disabled(name: str, *, is_cluster: bool) -> str:
    scope = "cluster-scoped" if is_cluster else "namespace-scoped"
    return f"{scope} runtime {name} is disabled"


def runtime_does_not_support(name: str, model: str, reason: str) -> str:
    return f"runtime {name} does not support model {model}: {reason}"


def manual_entry_not_auto(format_name: str) -> str:
    return (
        f"matching format {format_name} is not autoSelect-enabled (a different supportedModelFormats "
        "entry on this runtime has autoSelect=true, but not the one that matches this model)"
    )


# InferenceServices (spec sections 7 and 10): the model lookup, events, and the hints for a
# service that OME does not re-check when a model changes.
LEAN_WITHOUT_RUNTIME = "InferenceService must specify spec.runtime when spec.model is omitted"
MODEL_REFERENCE_REQUIRED = "model reference is required"
REAPPLY = "re-apply the InferenceService: OME does not re-check it when a model changes"

EVENT_MODEL_RECONCILE = "ModelReconcileError"
EVENT_RUNTIME_NOT_FOUND = "RuntimeNotFound"
EVENT_RUNTIME_SELECTION = "RuntimeSelectionError"
EVENT_RUNTIME_VALIDATION = "RuntimeValidationError"
EVENT_ADVISORY = "RuntimeCompatibilityAdvisory"
EVENT_RUNTIME_FETCH = "RuntimeFetchError"
EVENT_MODEL_NOT_READY = "ModelNotReady"
"""A Normal event: OME waits for a Sharded model and checks again after 5 s (U3w)."""

# ShardedBaseModelReady's messages; a Ready condition that is not True gives its own message,
# or SHARDED_NOT_READY when it has none.
READY_CONDITION_MISSING = "model Ready condition is not available"
READY_CONDITION_STALE = "model Ready condition has not observed the latest generation"
SHARDED_NOT_READY = "sharded BaseModel is not ready"


def model_not_found(name: str) -> str:
    return f"No BaseModel or ClusterBaseModel with the name: {name}"


def base_model_api_not_found(name: str) -> str:
    """The API server's NotFound for `kind: BaseModel`, which newer OME passes on as it is."""
    return f'basemodels.ome.io "{name}" not found'


def model_kind_unsupported(kind: str) -> str:
    return f'unsupported Model kind "{kind}"'


def model_group_unsupported(group: str) -> str:
    return f'unsupported Model API group "{group}"'


def base_model_disabled(name: str) -> str:
    return f"specified base model {name} is disabled"


def serving_runtime_not_found(name: str, namespace: str) -> str:
    """A named runtime of `kind: ServingRuntime` that the namespace lacks (no cluster fallback)."""
    return f"ServingRuntime {name} not found in namespace {namespace}"


def selection_failed(model: str, error: str) -> str:
    return f"Failed to find runtime for model {model}: {error}"


def validation_failed(runtime: str, error: str) -> str:
    return f"Runtime {runtime} failed validation: {error}"


def runtime_rejects_model(runtime: str, model: str, error: str) -> str:
    return f"Runtime {runtime} does not support model {model}: {error}"


def advisory(runtime: str, model: str, error: str) -> str:
    return (
        f"Runtime {runtime} does not declare support for model {model} ({error}); proceeding because the "
        "runtime was named explicitly"
    )


def reapply_to_move(runtime: str) -> str:
    return f"re-apply the InferenceService to move it to {runtime}: OME does not re-check it when a model changes"


def size_range_panic(behaviour: str, runtime: str, size_range: str, size: str) -> str:
    """What a dashboard says where OME before U1 crashes (a nil-pointer panic, quirk Q22)."""
    return (
        f"OME {behaviour} crashes (nil pointer dereference) on runtime {runtime}: its modelSizeRange {size_range} "
        f"lacks a bound and the model has modelParameterSize {size}; the controller and the webhook fail"
    )


def inheritance_parent_missing(parent: str, chain: Iterable[str]) -> str:
    return f'inherit-from parent "{parent}" not found (chain so far: [{" ".join(chain)}])'


def inheritance_cycle(chain: Iterable[str]) -> str:
    return f"inheritance cycle detected: [{' '.join(chain)}]"


def inheritance_too_deep(depth: int, chain: Iterable[str]) -> str:
    return f"inheritance chain exceeds max depth {depth} (chain: [{' '.join(chain)}])"


# The runtime admission webhook's denial texts (spec 7.3; `pkg/webhook/admission/servingruntime/`
# of ome-projects/ome at 17b77eda and of the newer sigs.k8s.io/ome module, with
# `validateProfileMarker` and the `pkg/validation` priority check).
RUNTIME_PROFILE_NOT_DISABLED = 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'


def unknown_accelerator_classes(classes: Iterable[str]) -> str:
    return f"unknown accelerator classes referenced in AcceleratorRequirements: [{' '.join(classes)}]"


def different_priorities(entry_name: str, kind: str, runtime: str) -> str:
    return f"different priorities assigned for the model format {entry_name} under the {kind.lower()} {runtime}"


def same_priority(entry_name: str, existing: str, runtime: str, namespace: str | None) -> str:
    text = f"same priority assigned for the model format {entry_name}"
    if namespace is None:
        return f"{text} in the clusterservingruntimes {existing} and {runtime}"
    return f"{text} in the servingruntimes {existing} and {runtime} in namespace {namespace}"


def overlapping_priority(existing: str, runtime: str, priority: int) -> str:
    """Proposal ome#594 has no upstream wording yet; this text is OME Compat's and says so."""
    return (
        f"(proposal ome#594, no upstream text yet) auto-select runtimes {existing} and {runtime} overlap "
        f"on a model format and model size range at the same priority {priority}: give them different priorities"
    )


def model_config_not_found(kind: str) -> str:
    """The controller's log line when the model-config step finds no model of the service's
    `spec.model.kind` (v1.3, U7c; exact words from ome-docs
    `src/lib/content/guides/troubleshoot/troubleshoot-an-inferenceservice.md`, "An
    InferenceService that serves a BaseModel gets no pods"). OME records no event."""
    return f"Failed to get referenced {kind}"


def pvc_namespace(model: str, claim_namespace: str, namespace: str) -> str:
    """The InferenceService webhook's denial for a pvc:// ClusterBaseModel of another namespace
    (`validateClusterBaseModelPVCNamespace`, ome-projects/ome
    `pkg/webhook/admission/isvc/inference_service_validation.go` at 58a57f25; Go's %q quotes)."""
    return (
        f'ClusterBaseModel "{model}" references PVC in namespace "{claim_namespace}", but InferenceService is in '
        f'namespace "{namespace}"; Kubernetes does not allow pods to mount PVCs from another namespace. '
        f'Either move the InferenceService to namespace "{claim_namespace}" or replicate the PVC into namespace '
        f'"{namespace}".'
    )
