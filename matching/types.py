"""Typed, immutable views of the OME objects that runtime selection reads.

Absent and empty stay distinct wherever OME's Go types keep them apart (pointer fields): an
absent value is None, a present one is its value, even "" (section 1.5 of the spec).
"""

from __future__ import annotations

from dataclasses import dataclass

from .dedicated import Dedication, serves_under_other_name
from .sizes import SizeRange

ObjectKey = tuple[str, str, str]
"""(kind, namespace, name); namespace is "" for cluster-scoped objects."""

BASE_MODEL = "BaseModel"
CLUSTER_BASE_MODEL = "ClusterBaseModel"
SERVING_RUNTIME = "ServingRuntime"
CLUSTER_SERVING_RUNTIME = "ClusterServingRuntime"
MODEL_KINDS = (CLUSTER_BASE_MODEL, BASE_MODEL)
RUNTIME_KINDS = (CLUSTER_SERVING_RUNTIME, SERVING_RUNTIME)
ISVC_KIND = "InferenceService"
CLUSTER_KINDS = frozenset({CLUSTER_BASE_MODEL, CLUSTER_SERVING_RUNTIME})

NAMED_COMPONENTS = ("scheduler", "textEncoder", "tokenizer", "transformer", "vae")
"""The pipeline's named components, in the order OME checks them."""


@dataclass(frozen=True, slots=True)
class FormatRef:
    """A `modelFormat` or `modelFramework` object."""

    name: str
    version: str | None = None
    operator: str | None = None
    weight: int = 0

    def describe(self) -> str:
        text = self.name if self.version is None else f"{self.name} {self.version}"
        return text if self.operator is None else f"{text} ({self.operator})"


@dataclass(frozen=True, slots=True)
class Component:
    """One pipeline component; `library` and `type` are "" when absent (not pointers in OME)."""

    library: str = ""
    type: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {}
        if self.library:
            out["library"] = self.library
        if self.type:
            out["type"] = self.type
        return out


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A `diffusionPipeline`. Named components and additional ones are (name, Component) pairs,
    present ones only; additional components are sorted by name."""

    class_name: str | None = None
    components: tuple[tuple[str, Component], ...] = ()
    additional: tuple[tuple[str, Component], ...] = ()

    def component(self, name: str) -> Component | None:
        for key, value in self.components:
            if key == name:
                return value
        return None

    def additional_component(self, name: str) -> Component | None:
        for key, value in self.additional:
            if key == name:
                return value
        return None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.class_name is not None:
            out["className"] = self.class_name
        for name, value in self.components:
            out[name] = value.to_dict()
        if self.additional:
            out["additionalComponents"] = {name: value.to_dict() for name, value in self.additional}
        return out


@dataclass(frozen=True, slots=True)
class ReadyCondition:
    """A model's `status.conditions[]` entry of type Ready, as Go's metav1.Condition holds it
    (an absent message is "", an absent observedGeneration 0)."""

    status: str
    message: str = ""
    observed_generation: int = 0


@dataclass(frozen=True, slots=True)
class Model:
    """A BaseModel or ClusterBaseModel: the spec fields that runtime selection reads, and the
    status newer OME waits on before it selects for a Sharded model (`ready`, `generation`)."""

    kind: str
    namespace: str
    name: str
    format: FormatRef
    framework: FormatRef | None = None
    architecture: str | None = None
    quantization: str | None = None
    size: str | None = None
    pipeline: Pipeline | None = None
    distribution: str | None = None
    disabled: bool | None = None
    storage_uri: str | None = None
    ready: ReadyCondition | None = None
    generation: int = 0
    """`metadata.generation` (0 when absent)."""
    capabilities: tuple[str, ...] = ()
    """`spec.modelCapabilities` (TEXT_TO_TEXT, ...): not read by selection, only by policy scopes."""

    @property
    def key(self) -> ObjectKey:
        return (self.kind, self.namespace, self.name)

    @property
    def signature(self) -> tuple[object, ...]:
        """Everything that decides a verdict; models with equal signatures match alike."""
        return (
            self.format,
            self.framework,
            self.architecture,
            self.quantization,
            self.size,
            self.pipeline,
            self.distribution,
        )


@dataclass(frozen=True, slots=True)
class Entry:
    """One `supportedModelFormats[]` entry of a runtime."""

    format: FormatRef | None = None
    framework: FormatRef | None = None
    architecture: str | None = None
    quantization: str | None = None
    pipeline: Pipeline | None = None
    auto_select: bool | None = None
    priority: int | None = None
    cache_providers: tuple[str, ...] = ()
    name: str = ""
    """The deprecated entry `name` (a Go string: "" when absent); only the runtime webhook reads it."""
    version: str | None = None
    """The deprecated entry-level `version`; only the runtime webhook reads it."""

    @property
    def effective_priority(self) -> int:
        return 1 if self.priority is None else self.priority


@dataclass(frozen=True, slots=True)
class Runtime:
    """A ServingRuntime or ClusterServingRuntime."""

    kind: str
    namespace: str
    name: str
    entries: tuple[Entry, ...] = ()
    disabled: bool | None = None
    size_range: SizeRange | None = None
    accelerator_classes: tuple[str, ...] = ()
    engine_mode: str | None = None
    decoder_mode: str | None = None
    created: str = ""
    inherit_from: str | None = None
    """The parent named by the `ome.io/inherit-from` annotation (spec U9)."""
    dedication: Dedication | None = None
    """Why its runners serve one model (dedicated.py); None for a generic runtime."""
    profile: bool = False
    """Marked `ome.io/runtime-profile: "true"`: a runtime meant only to be inherited from."""
    protocols: tuple[str, ...] = ()
    """`spec.protocolVersions`; only the runtime webhook's priority check reads them."""

    @property
    def key(self) -> ObjectKey:
        return (self.kind, self.namespace, self.name)

    def serves_as_other(self, model: Model) -> bool:
        """Whether selecting it for the model would serve the model under another's name."""
        return serves_under_other_name(self.name, self.dedication, model)

    @property
    def is_cluster(self) -> bool:
        return self.kind == "ClusterServingRuntime"

    @property
    def is_disabled(self) -> bool:
        return self.disabled is True

    @property
    def has_auto_select(self) -> bool:
        """OME's per-runtime test: any entry, not necessarily the matching one (quirk Q3)."""
        return any(entry.auto_select is True for entry in self.entries)


@dataclass(frozen=True, slots=True)
class InferenceService:
    """The InferenceService fields that affect runtime selection."""

    namespace: str
    name: str
    model_name: str | None = None
    model_kind: str | None = None
    model_api_group: str | None = None
    runtime_name: str | None = None
    runtime_kind: str | None = None
    accelerator_classes: tuple[str, ...] = ()
    engine_mode: str | None = None
    decoder_mode: str | None = None
    pinned: bool = False
    """`spec.runtime.autoSync: false`: newer OME runs a stored revision of the runtime (U5)."""
    accelerator_requests: tuple[tuple[str, str], ...] = ()
    """(field path, value) of the class names and the policy that give a component its class
    (`spec.acceleratorSelector`, the engine's and decoder's `acceleratorOverride`); the
    `ome.io/accelerator-class` annotation counts only for matching and is not among them."""

    @property
    def key(self) -> ObjectKey:
        return ("InferenceService", self.namespace, self.name)

    @property
    def names_runtime(self) -> bool:
        """OME treats `spec.runtime: {name: ""}` as auto-select (quirk Q33)."""
        return bool(self.runtime_name)
