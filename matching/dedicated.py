"""Runtimes dedicated to one model: what their containers run says so.

Almost every runtime of OME's catalog (config/runtimes in ome-projects/ome, copied in
catalog/runtimes) serves one model: its runner passes `--served-model-name microsoft/phi-2`
(the flag of both SGLang and vLLM), and some pin other engine settings that only fit that
model (a chat template, a tool-call or reasoning parser, a context length). OME itself never
reads these arguments (it renders them into the pod as written: ome-docs
concepts/runtimes/serving-runtimes.md, "A serving runtime ... can target one model, or any
model its engine loads, with the differences set in each InferenceService"), so a runtime that
OME auto-selects for another model serves that model's weights under the first one's name.

The rule (docs/guide.md, "Runtimes dedicated to one model"):
- a runtime is dedicated when a runner of its engine or decoder (leader and worker included)
  passes a served model name that is a literal (not an `{{.Name}}` placeholder), a literal
  model path instead of `$(MODEL_PATH)`, or one of the model-specific settings below;
- its own models are those the served name names (the Hugging Face id of the model's
  `hf://` storage, or a repository of the model's name or of its storage's last folder); when it passes no model id (no
  served name, or an alias such as `vllm-model`), those the runtime is named after;
- a generic runtime passes none of these: no served name or a placeholder, only `$(MODEL_PATH)`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .types import Model

SERVED_NAME = "--served-model-name"
MODEL_PATH_FLAGS = ("--model-path", "--model")
MODEL_PATH = "$(MODEL_PATH)"
SETTINGS = (
    "--chat-template",
    "--tool-call-parser",
    "--reasoning-parser",
    "--tokenizer",
    "--tokenizer-path",
    "--context-length",
    "--max-model-len",
    "--speculative-draft-model-path",
    "--hf-overrides",
)
"""Engine flags (SGLang's and vLLM's) whose value fits one model: another model needs its own."""
_RUNNER_PATHS = (
    ("engineConfig", "runner"),
    ("engineConfig", "leader", "runner"),
    ("engineConfig", "worker", "runner"),
    ("decoderConfig", "runner"),
    ("decoderConfig", "leader", "runner"),
    ("decoderConfig", "worker", "runner"),
)
_PLACEHOLDER = re.compile(r"^\{\{.*\}\}$")


@dataclass(frozen=True, slots=True)
class ModelArgument:
    """One model-specific argument of a runner: where (`spec.engineConfig.runner.command[14]`),
    the flag and its value."""

    where: str
    flag: str
    value: str

    def describe(self) -> str:
        return f"{self.flag} {self.value} ({self.where})"


@dataclass(frozen=True, slots=True)
class Dedication:
    """Why a runtime serves one model: its model-specific arguments, and the served names."""

    arguments: tuple[ModelArgument, ...]

    @property
    def served_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(item.value for item in self.arguments if item.flag == SERVED_NAME))

    @property
    def settings(self) -> tuple[ModelArgument, ...]:
        """The model-specific settings other than the served name and the model path."""
        return tuple(item for item in self.arguments if item.flag in SETTINGS)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why, in words: one line per distinct flag and value."""
        return tuple(dict.fromkeys(f"{item.flag} {_short(item.value)}" for item in self.arguments))

    def describe(self) -> str:
        named = f"serves as {', '.join(self.served_names)}" if self.served_names else "pins model-specific settings"
        return f"dedicated to one model: {named} ({'; '.join(self.reasons)})"


def _short(value: str) -> str:
    return value if len(value) <= 60 else value[:57] + "..."


def _runners(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for path in _RUNNER_PATHS:
        node: Any = spec
        for part in path:
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping):
            yield "spec." + ".".join(path), node


def _flag_values(words: Sequence[object]) -> Iterator[tuple[int, str, str]]:
    """(index of the value, flag, value) of each `--flag value` or `--flag=value` word."""
    for index, word in enumerate(words):
        if not isinstance(word, str) or not word.startswith("--"):
            continue
        flag, equals, value = word.partition("=")
        if equals:
            yield index, flag, value
        elif index + 1 < len(words) and isinstance(words[index + 1], str):
            yield index + 1, flag, str(words[index + 1])


def _is_specific(flag: str, value: str) -> bool:
    if flag == SERVED_NAME:
        return not _PLACEHOLDER.match(value.strip())
    if flag in MODEL_PATH_FLAGS:
        return MODEL_PATH not in value
    return flag in SETTINGS


def model_arguments(spec: Mapping[str, Any]) -> tuple[ModelArgument, ...]:
    """Every model-specific argument of the runtime spec's runners (command and args)."""
    found = []
    for where, runner in _runners(spec):
        for field in ("command", "args"):
            words = runner.get(field)
            if not isinstance(words, list):
                continue
            for index, flag, value in _flag_values(words):
                if _is_specific(flag, value):
                    found.append(ModelArgument(f"{where}.{field}[{index}]", flag, value))
    return tuple(found)


def dedication(runtime: Mapping[str, Any]) -> Dedication | None:
    """Why the runtime (as stored) is dedicated to one model; None for a generic runtime."""
    spec = runtime.get("spec")
    arguments = model_arguments(spec) if isinstance(spec, Mapping) else ()
    return Dedication(arguments) if arguments else None


def served_name(model: Model) -> str:
    """The name a runtime of the model's own serves it under: the Hugging Face id of its
    `hf://` storage (what the catalog's runtimes pass), else its name."""
    uri = model.storage_uri or ""
    if uri.startswith("hf://"):
        return uri[len("hf://") :].split("@")[0].strip("/")
    return model.name


def _repository_names(model: Model) -> set[str]:
    """The names a repository of the model would have: the model's, and the last folder of its
    storage (`pvc://research:models/Qwen-Image` holds Qwen-Image)."""
    folder = (model.storage_uri or "").split("@")[0].rstrip("/").rsplit("/", 1)[-1]
    return {model.name.lower(), folder.lower()} - {""}


def is_own_model(runtime_name: str, found: Dedication, model: Model) -> bool:
    """Whether the model is one the dedicated runtime was written for: its served name is the
    model's id, or a repository of the model's name or of its storage's last folder (the
    catalog's srt-glm-4-9b-chat serves ZhipuAI/glm-4-9b-chat; the demo's qwen-image-pvc is
    stored in `pvc://.../Qwen-Image`); without a served name that is a model id (none, or an alias such
    as `vllm-model`), the runtime is named after the model (`vllm-deepseek-v4-flash`)."""
    ids = [name.lower() for name in found.served_names if "/" in name]
    if ids:
        repositories = {name.rsplit("/", 1)[-1] for name in ids}
        return served_name(model).lower() in ids or bool(repositories & _repository_names(model))
    name = runtime_name.lower()
    return name == model.name.lower() or name.endswith("-" + model.name.lower())


def serves_under_other_name(runtime_name: str, found: Dedication | None, model: Model) -> bool:
    """Whether the runtime would serve the model as another model (its dedication is not the model's)."""
    return found is not None and not is_own_model(runtime_name, found, model)


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A runtime spec's runners made to serve another model: the spec, each argument changed
    (where, old, new), and the model-specific arguments left as they were (to review)."""

    spec: dict[str, Any]
    changed: tuple[tuple[str, str, str], ...]
    unchanged: tuple[ModelArgument, ...]


def _rewritten(flag: str, value: str, model: Model) -> str | None:
    if flag == SERVED_NAME:
        return served_name(model)
    if flag in MODEL_PATH_FLAGS:
        return MODEL_PATH
    return None


def rewrite_for(spec: Mapping[str, Any], model: Model) -> Rewrite:
    """The spec (a deep copy) with its served name set to the model's and a literal model path
    set to `$(MODEL_PATH)`; the other model-specific settings cannot be derived from the
    model's facts, so they stay and are named."""
    copied: dict[str, Any] = copy.deepcopy(dict(spec))
    changed, unchanged = [], []
    for where, runner in _runners(copied):
        for field in ("command", "args"):
            words = runner.get(field)
            if not isinstance(words, list):
                continue
            for index, flag, value in list(_flag_values(words)):
                if not _is_specific(flag, value):
                    continue
                new = _rewritten(flag, value, model)
                at = f"{where}.{field}[{index}]"
                if new is None:
                    unchanged.append(ModelArgument(at, flag, value))
                    continue
                words[index] = new if words[index] == value else f"{flag}={new}"
                if new != value:
                    changed.append((at, value, new))
    return Rewrite(copied, tuple(changed), tuple(unchanged))
