"""Kubernetes-shaped dicts -> the typed values of `matching.types`, parsed once.

Type errors raise ManifestError naming the object, the field path and the problem; values of
the right type that OME cannot match (a version "latest", an operator "Foo") pass through.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .behaviour import INHERIT_FROM_ANNOTATION, RUNTIME_PROFILE_ANNOTATION
from .dedicated import dedication
from .errors import ManifestError
from .sizes import SizeRange
from .types import (
    CLUSTER_KINDS,
    ISVC_KIND,
    MODEL_KINDS,
    NAMED_COMPONENTS,
    RUNTIME_KINDS,
    Component,
    Entry,
    FormatRef,
    InferenceService,
    Model,
    Pipeline,
    ReadyCondition,
    Runtime,
)

T = TypeVar("T")

ACCELERATOR_ANNOTATION = "ome.io/accelerator-class"
DEPLOYMENT_MODE_ANNOTATION = "ome.io/deploymentMode"
TYPED_DEPLOYMENT_MODES = frozenset({"OMENative", "RawDeployment"})


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


class _Reader:
    """Reads fields of one object, naming the object in every error."""

    def __init__(self, obj: Mapping[str, Any]) -> None:
        if not isinstance(obj, Mapping):
            raise ManifestError("object", "(document)", f"expected a mapping, got {_type_name(obj)}")
        self.obj = obj
        self.kind = obj.get("kind")
        if not isinstance(self.kind, str) or not self.kind:
            raise ManifestError("object", "kind", "missing or not a string")
        metadata = obj.get("metadata")
        self.label = self.kind
        if not isinstance(metadata, Mapping):
            raise ManifestError(self.kind, "metadata", f"expected a mapping, got {_type_name(metadata)}")
        name = metadata.get("name")
        namespace = metadata.get("namespace")
        if not isinstance(name, str) or not name:
            raise ManifestError(self.kind, "metadata.name", "missing or not a string")
        if namespace is not None and not isinstance(namespace, str):
            raise ManifestError(self.kind, "metadata.namespace", "expected a string")
        self.name = name
        self.namespace = "" if self.kind in CLUSTER_KINDS else (namespace or "")
        self.label = f"{self.kind} {self.namespace}/{name}" if self.namespace else f"{self.kind} {name}"
        self.metadata = metadata

    def fail(self, path: str, problem: str) -> ManifestError:
        return ManifestError(self.label, path, problem)

    def mapping(self, value: object, path: str) -> Mapping[str, Any] | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping, got {_type_name(value)}")
        return value

    def string(self, value: object, path: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {_type_name(value)} {value!r}")
        return value

    def boolean(self, value: object, path: str) -> bool | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self.fail(path, f"expected true or false, got {_type_name(value)} {value!r}")
        return value

    def integer(self, value: object, path: str, *, bits: int) -> int | None:
        """An integer that fits OME's Go field of `bits` bits (the API server rejects others)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"expected an integer, got {_type_name(value)} {value!r}")
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise self.fail(path, f"{value} does not fit a {bits}-bit integer")
        return value

    def string_list(self, value: object, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list of strings, got {_type_name(value)}")
        return tuple(self.string(item, f"{path}[{index}]") or "" for index, item in enumerate(value))

    def spec(self) -> Mapping[str, Any]:
        return self.mapping(self.obj.get("spec"), "spec") or {}

    def annotations(self, value: object, path: str) -> Mapping[str, Any]:
        annotations = self.mapping(value, path) or {}
        for key, item in annotations.items():
            self.string(item, f"{path}.{key}")
        return annotations


def _format(reader: _Reader, value: object, path: str) -> FormatRef | None:
    data = reader.mapping(value, path)
    if data is None:
        return None
    return FormatRef(
        name=reader.string(data.get("name"), f"{path}.name") or "",
        version=reader.string(data.get("version"), f"{path}.version"),
        operator=reader.string(data.get("operator"), f"{path}.operator"),
        weight=reader.integer(data.get("weight"), f"{path}.weight", bits=64) or 0,
    )


def _component(reader: _Reader, value: object, path: str) -> Component | None:
    data = reader.mapping(value, path)
    if data is None:
        return None
    return Component(
        library=reader.string(data.get("library"), f"{path}.library") or "",
        type=reader.string(data.get("type"), f"{path}.type") or "",
    )


def _pipeline(reader: _Reader, value: object, path: str) -> Pipeline | None:
    data = reader.mapping(value, path)
    if data is None:
        return None
    components = []
    for name in NAMED_COMPONENTS:
        component = _component(reader, data.get(name), f"{path}.{name}")
        if component is not None:
            components.append((name, component))
    additional_data = reader.mapping(data.get("additionalComponents"), f"{path}.additionalComponents") or {}
    additional = []
    for name in sorted(additional_data):
        item_path = f"{path}.additionalComponents.{name}"
        component = _component(reader, additional_data[name], item_path)
        additional.append((name, component if component is not None else Component()))
    return Pipeline(
        class_name=reader.string(data.get("className"), f"{path}.className"),
        components=tuple(components),
        additional=tuple(additional),
    )


def parse_model(obj: Mapping[str, Any]) -> Model:
    """Parse a BaseModel or ClusterBaseModel; raises ManifestError for malformed input."""
    reader = _Reader(obj)
    if reader.kind not in MODEL_KINDS:
        raise reader.fail("kind", f"expected BaseModel or ClusterBaseModel, got {reader.kind}")
    spec = reader.spec()
    storage = reader.mapping(spec.get("storage"), "spec.storage") or {}
    return Model(
        kind=reader.kind,
        namespace=reader.namespace,
        name=reader.name,
        format=_format(reader, spec.get("modelFormat"), "spec.modelFormat") or FormatRef(name=""),
        framework=_format(reader, spec.get("modelFramework"), "spec.modelFramework"),
        architecture=reader.string(spec.get("modelArchitecture"), "spec.modelArchitecture"),
        quantization=reader.string(spec.get("quantization"), "spec.quantization"),
        size=reader.string(spec.get("modelParameterSize"), "spec.modelParameterSize"),
        pipeline=_pipeline(reader, spec.get("diffusionPipeline"), "spec.diffusionPipeline"),
        distribution=reader.string(spec.get("distribution"), "spec.distribution"),
        disabled=reader.boolean(spec.get("disabled"), "spec.disabled"),
        storage_uri=reader.string(storage.get("storageUri"), "spec.storage.storageUri"),
        ready=_status_read(_ready_condition, reader),
        generation=_status_read(_generation, reader) or 0,
        capabilities=_capabilities(spec.get("modelCapabilities")),
    )


def _capabilities(raw: object) -> tuple[str, ...]:
    """Read leniently: selection never reads them, so they never make a model malformed."""
    return tuple(item for item in raw if isinstance(item, str)) if isinstance(raw, list) else ()


def _status_read(read: Callable[[_Reader], T | None], reader: _Reader) -> T | None:
    """What the API server and OME write themselves (status, metadata.generation) is read
    leniently: a live cluster cannot hold a malformed one, and a malformed one in a manifest
    must not make the model invalid under a profile that never reads it (17b77eda). It reads as
    absent, so newer OME waits as for a model without a Ready condition."""
    try:
        return read(reader)
    except ManifestError:
        return None


def _generation(reader: _Reader) -> int | None:
    return reader.integer(reader.metadata.get("generation"), "metadata.generation", bits=64)


def _ready_condition(reader: _Reader) -> ReadyCondition | None:
    """The first `status.conditions[]` entry of type Ready (meta.FindStatusCondition)."""
    status = reader.mapping(reader.obj.get("status"), "status") or {}
    conditions = status.get("conditions")
    if conditions is None:
        return None
    if not isinstance(conditions, list):
        raise reader.fail("status.conditions", f"expected a list, got {_type_name(conditions)}")
    for index, value in enumerate(conditions):
        path = f"status.conditions[{index}]"
        condition = reader.mapping(value, path) or {}
        if reader.string(condition.get("type"), f"{path}.type") != "Ready":
            continue
        return ReadyCondition(
            status=reader.string(condition.get("status"), f"{path}.status") or "",
            message=reader.string(condition.get("message"), f"{path}.message") or "",
            observed_generation=reader.integer(
                condition.get("observedGeneration"), f"{path}.observedGeneration", bits=64
            )
            or 0,
        )
    return None


def _entry(reader: _Reader, value: object, path: str) -> Entry:
    data = reader.mapping(value, path)
    if data is None:
        raise reader.fail(path, "expected a mapping, got null")
    return Entry(
        format=_format(reader, data.get("modelFormat"), f"{path}.modelFormat"),
        framework=_format(reader, data.get("modelFramework"), f"{path}.modelFramework"),
        architecture=reader.string(data.get("modelArchitecture"), f"{path}.modelArchitecture"),
        quantization=reader.string(data.get("quantization"), f"{path}.quantization"),
        pipeline=_pipeline(reader, data.get("diffusionPipeline"), f"{path}.diffusionPipeline"),
        auto_select=reader.boolean(data.get("autoSelect"), f"{path}.autoSelect"),
        priority=reader.integer(data.get("priority"), f"{path}.priority", bits=32),
        cache_providers=reader.string_list(data.get("modelCacheProviders"), f"{path}.modelCacheProviders"),
        name=reader.string(data.get("name"), f"{path}.name") or "",
        version=reader.string(data.get("version"), f"{path}.version"),
    )


def _size_range(reader: _Reader, value: object) -> SizeRange | None:
    data = reader.mapping(value, "spec.modelSizeRange")
    if data is None:
        return None
    return SizeRange(
        min_text=reader.string(data.get("min"), "spec.modelSizeRange.min"),
        max_text=reader.string(data.get("max"), "spec.modelSizeRange.max"),
    )


def _deployment_mode(reader: _Reader, config: object, path: str) -> str | None:
    """The annotation as written; which values count depends on the OME (`Behaviour.deployment_modes`)."""
    data = reader.mapping(config, path) or {}
    annotations = reader.annotations(data.get("annotations"), f"{path}.annotations")
    return annotations.get(DEPLOYMENT_MODE_ANNOTATION)


def parse_runtime(obj: Mapping[str, Any]) -> Runtime:
    """Parse a ServingRuntime or ClusterServingRuntime; raises ManifestError for malformed input."""
    reader = _Reader(obj)
    if reader.kind not in RUNTIME_KINDS:
        raise reader.fail("kind", f"expected ServingRuntime or ClusterServingRuntime, got {reader.kind}")
    spec = reader.spec()
    formats = spec.get("supportedModelFormats")
    if formats is not None and not isinstance(formats, list):
        raise reader.fail("spec.supportedModelFormats", f"expected a list, got {_type_name(formats)}")
    accelerators = reader.mapping(spec.get("acceleratorRequirements"), "spec.acceleratorRequirements") or {}
    created = reader.string(reader.metadata.get("creationTimestamp"), "metadata.creationTimestamp")
    annotations = reader.annotations(reader.metadata.get("annotations"), "metadata.annotations")
    return Runtime(
        kind=reader.kind,
        namespace=reader.namespace,
        name=reader.name,
        entries=tuple(
            _entry(reader, item, f"spec.supportedModelFormats[{index}]") for index, item in enumerate(formats or ())
        ),
        disabled=reader.boolean(spec.get("disabled"), "spec.disabled"),
        size_range=_size_range(reader, spec.get("modelSizeRange")),
        accelerator_classes=reader.string_list(
            accelerators.get("acceleratorClasses"), "spec.acceleratorRequirements.acceleratorClasses"
        ),
        engine_mode=_deployment_mode(reader, spec.get("engineConfig"), "spec.engineConfig"),
        decoder_mode=_deployment_mode(reader, spec.get("decoderConfig"), "spec.decoderConfig"),
        created=created or "",
        inherit_from=annotations.get(INHERIT_FROM_ANNOTATION) or None,
        profile=annotations.get(RUNTIME_PROFILE_ANNOTATION) == "true",
        protocols=reader.string_list(spec.get("protocolVersions"), "spec.protocolVersions"),
        dedication=dedication(obj),
    )


def _required_accelerators(reader: _Reader, spec: Mapping[str, Any]) -> tuple[str, ...]:
    annotations = reader.annotations(reader.metadata.get("annotations"), "metadata.annotations")
    candidates: list[str | None] = [annotations.get(ACCELERATOR_ANNOTATION)]
    selector = reader.mapping(spec.get("acceleratorSelector"), "spec.acceleratorSelector") or {}
    candidates.append(reader.string(selector.get("acceleratorClass"), "spec.acceleratorSelector.acceleratorClass"))
    for component in ("engine", "decoder"):
        section = reader.mapping(spec.get(component), f"spec.{component}") or {}
        path = f"spec.{component}.acceleratorOverride"
        override = reader.mapping(section.get("acceleratorOverride"), path) or {}
        candidates.append(reader.string(override.get("acceleratorClass"), f"{path}.acceleratorClass"))
    return tuple(dict.fromkeys(value for value in candidates if value is not None))


def _accelerator_requests(reader: _Reader, spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """What gives the service's components an accelerator class (ome-docs
    `reference/matching/runtime-accelerator-class-matching.md`, "A named runtime without classes
    drops the class"): the selector's class and policy, and each component override's class."""
    selector = reader.mapping(spec.get("acceleratorSelector"), "spec.acceleratorSelector") or {}
    found = [
        ("spec.acceleratorSelector.acceleratorClass", selector.get("acceleratorClass")),
        ("spec.acceleratorSelector.policy", selector.get("policy")),
    ]
    for component in ("engine", "decoder"):
        section = reader.mapping(spec.get(component), f"spec.{component}") or {}
        override = reader.mapping(section.get("acceleratorOverride"), f"spec.{component}.acceleratorOverride") or {}
        found.append((f"spec.{component}.acceleratorOverride.acceleratorClass", override.get("acceleratorClass")))
    checked = [(path, reader.string(value, path)) for path, value in found]
    return tuple((path, value) for path, value in checked if value)


def _isvc_mode(reader: _Reader, spec: Mapping[str, Any], component: str) -> str | None:
    section = reader.mapping(spec.get(component), f"spec.{component}")
    typed = reader.string(spec.get("deploymentMode"), "spec.deploymentMode")
    if section is not None:
        annotations = reader.annotations(section.get("annotations"), f"spec.{component}.annotations")
        mode = annotations.get(DEPLOYMENT_MODE_ANNOTATION)
        if mode:
            return str(mode)
    elif component == "decoder":
        return None
    return typed if typed in TYPED_DEPLOYMENT_MODES else None


def parse_isvc(obj: Mapping[str, Any]) -> InferenceService:
    """Parse an InferenceService; raises ManifestError for malformed input."""
    reader = _Reader(obj)
    if reader.kind != ISVC_KIND:
        raise reader.fail("kind", f"expected InferenceService, got {reader.kind}")
    spec = reader.spec()
    model = reader.mapping(spec.get("model"), "spec.model") or {}
    runtime = reader.mapping(spec.get("runtime"), "spec.runtime") or {}
    return InferenceService(
        namespace=reader.namespace,
        name=reader.name,
        model_name=reader.string(model.get("name"), "spec.model.name"),
        model_kind=reader.string(model.get("kind"), "spec.model.kind"),
        model_api_group=reader.string(model.get("apiGroup"), "spec.model.apiGroup"),
        runtime_name=reader.string(runtime.get("name"), "spec.runtime.name"),
        runtime_kind=reader.string(runtime.get("kind"), "spec.runtime.kind"),
        accelerator_classes=_required_accelerators(reader, spec),
        engine_mode=_isvc_mode(reader, spec, "engine"),
        decoder_mode=_isvc_mode(reader, spec, "decoder"),
        pinned=reader.boolean(runtime.get("autoSync"), "spec.runtime.autoSync") is False,
        accelerator_requests=_accelerator_requests(reader, spec),
    )


def parse_object(obj: Mapping[str, Any]) -> Model | Runtime | InferenceService:
    """Parse any of the five OME kinds."""
    kind = obj.get("kind") if isinstance(obj, Mapping) else None
    if kind in MODEL_KINDS:
        return parse_model(obj)
    if kind in RUNTIME_KINDS:
        return parse_runtime(obj)
    if kind == ISVC_KIND:
        return parse_isvc(obj)
    raise ManifestError("object", "kind", f"not an OME kind: {kind!r}")


def as_model(value: Model | Mapping[str, Any]) -> Model:
    return value if isinstance(value, Model) else parse_model(value)


def as_runtime(value: Runtime | Mapping[str, Any]) -> Runtime:
    return value if isinstance(value, Runtime) else parse_runtime(value)


def as_isvc(value: InferenceService | Mapping[str, Any] | None) -> InferenceService | None:
    if value is None or isinstance(value, InferenceService):
        return value
    return parse_isvc(value)
