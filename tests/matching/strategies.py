"""Hypothesis strategies for OME objects built from small alphabets, so that matches happen."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

NAMES = st.sampled_from(["safetensors", "diffusers", "pytorch"])
VERSIONS = st.sampled_from(["1.0.0", "1", "v1.0.0", "0.34.0.dev0", "2.0", "latest", ""])
OPERATORS = st.sampled_from([None, "Equal", "GreaterThan", "GreaterThanOrEqual", "Foo"])
ARCHITECTURES = st.sampled_from(["QwenImagePipeline", "FluxPipeline", "LlamaForCausalLM", ""])
LIBRARIES = st.sampled_from(["", "diffusers", "transformers"])
TYPES = st.sampled_from(["", "AutoencoderKL", "CLIPTokenizer"])
SIZES = st.sampled_from(["7B", "500M", "1.5T", "7b", "0"])
COMPONENTS = ("scheduler", "textEncoder", "tokenizer", "transformer", "vae")


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


def _drop_none(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if value is not None}


components = st.builds(
    lambda library, type_: _drop_none({"library": library or None, "type": type_ or None}), LIBRARIES, TYPES
)


@st.composite
def pipelines(draw: st.DrawFn) -> dict[str, Any]:
    pipeline: dict[str, Any] = _drop_none({"className": draw(optional(ARCHITECTURES))})
    for name in draw(st.lists(st.sampled_from(COMPONENTS), unique=True, max_size=3)):
        pipeline[name] = draw(components)
    extra = draw(st.dictionaries(st.sampled_from(["safety_checker", "processor"]), components, max_size=2))
    if extra:
        pipeline["additionalComponents"] = extra
    return pipeline


@st.composite
def format_refs(draw: st.DrawFn, *, with_operator: bool) -> dict[str, Any]:
    ref = {"name": draw(NAMES), "version": draw(optional(VERSIONS))}
    if with_operator:
        ref["operator"] = draw(OPERATORS)
    return _drop_none(ref)


@st.composite
def model_specs(draw: st.DrawFn) -> dict[str, Any]:
    return _drop_none(
        {
            "modelFormat": draw(format_refs(with_operator=False)),
            "modelFramework": draw(optional(format_refs(with_operator=False))),
            "modelArchitecture": draw(optional(ARCHITECTURES)),
            "quantization": draw(optional(st.sampled_from(["fp8", "int4"]))),
            "modelParameterSize": draw(optional(SIZES)),
            "diffusionPipeline": draw(optional(pipelines())),
        }
    )


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    return _drop_none(
        {
            "modelFormat": draw(format_refs(with_operator=True)),
            "modelFramework": draw(optional(format_refs(with_operator=True))),
            "modelArchitecture": draw(optional(ARCHITECTURES)),
            "quantization": draw(optional(st.sampled_from(["fp8", "int4"]))),
            "diffusionPipeline": draw(optional(pipelines())),
            "autoSelect": draw(optional(st.booleans())),
            "priority": draw(optional(st.integers(min_value=0, max_value=3))),
        }
    )


def model(spec: dict[str, Any], name: str = "m", namespace: str | None = None) -> dict[str, Any]:
    kind = "BaseModel" if namespace else "ClusterBaseModel"
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": spec}


def runtime(
    formats: list[dict[str, Any]], name: str = "rt", namespace: str | None = None, **spec: Any
) -> dict[str, Any]:
    kind = "ServingRuntime" if namespace else "ClusterServingRuntime"
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": kind,
        "metadata": metadata,
        "spec": {"supportedModelFormats": formats, **spec},
    }


@st.composite
def runtimes(draw: st.DrawFn, name: str = "rt") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    size_range = draw(optional(st.fixed_dictionaries({}, optional={"min": SIZES, "max": SIZES})))
    if size_range is not None:
        spec["modelSizeRange"] = size_range
    if draw(st.booleans()):
        spec["disabled"] = draw(st.booleans())
    namespace = draw(optional(st.sampled_from(["team-a", "team-b"])))
    return runtime(draw(st.lists(entries(), max_size=3)), name=name, namespace=namespace, **spec)
