"""A set of OME objects as matching values (a manifest tree's, or a cluster's), and reading a
manifest tree the way `kubectl apply -f` and the dashboard's `load_manifests` see it.

Only the five OME kinds of API group ome.io count; other documents of the tree (Deployments,
kustomization.yaml, KServe's InferenceService) are skipped. Every object gets the CRD defaults
and the default namespace (`as_applied`); of two documents with the same identity the later
one wins, as when both are applied in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from .behaviour import DEFAULT_BEHAVIOUR, Behaviour, BehaviourInput, as_behaviour
from .crd import as_applied
from .errors import ManifestError
from .files import read_documents
from .grid import Grid
from .parse import parse_object
from .positions import Origin
from .problems import Problem
from .schema import manifest_problems
from .types import BASE_MODEL, ISVC_KIND, MODEL_KINDS, RUNTIME_KINDS, InferenceService, Model, ObjectKey, Runtime

OME_KINDS = frozenset({*MODEL_KINDS, *RUNTIME_KINDS, ISVC_KIND})


class TreeError(ValueError):
    """Manifests that cannot be read or parsed: one line per bad document, each naming the
    file, the document, the object and the field. `details`: the schema problems, errors and
    warnings together, each with its file, document, line and path."""

    def __init__(self, problems: list[str], details: list[Problem] | None = None) -> None:
        self.problems = problems
        self.details = details or []
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Objects:
    """Models, runtimes and InferenceServices by key. `invalid`: malformed objects' errors by
    key (a cluster can hold them; a tree read by `read_tree` cannot). `pinned`: services with
    `spec.runtime.autoSync: false`. `behaviour`: the OME profile that judges them. `origins`:
    the document (file, line) each object of a manifest tree was read from."""

    models: Mapping[ObjectKey, Model] = field(default_factory=dict)
    runtimes: Mapping[ObjectKey, Runtime] = field(default_factory=dict)
    isvcs: Mapping[ObjectKey, InferenceService] = field(default_factory=dict)
    invalid: Mapping[ObjectKey, str] = field(default_factory=dict)
    pinned: frozenset[ObjectKey] = frozenset()
    behaviour: Behaviour = field(default_factory=lambda: as_behaviour(DEFAULT_BEHAVIOUR))
    origins: Mapping[ObjectKey, Origin] = field(default_factory=dict)
    warnings: tuple[Problem, ...] = ()

    @cached_property
    def grid(self) -> Grid:
        return Grid(self.models.values(), self.runtimes.values(), self.isvcs.values(), behaviour=self.behaviour)

    @property
    def model_keys(self) -> set[ObjectKey]:
        """Every model key, malformed models included."""
        return set(self.models) | {key for key in self.invalid if key[0] in MODEL_KINDS}

    @property
    def isvc_keys(self) -> set[ObjectKey]:
        return set(self.isvcs) | {key for key in self.invalid if key[0] == ISVC_KIND}

    def namespaces_for(self, model_key: ObjectKey) -> list[str]:
        """The matrix's rows of a model: a BaseModel in its namespace; a ClusterBaseModel at
        cluster scope ("") and in every namespace with ServingRuntimes or InferenceServices."""
        if model_key[0] == BASE_MODEL:
            return [model_key[1]]
        return ["", *self.grid.namespaces]

    def value(self, key: ObjectKey) -> Model | Runtime | InferenceService | None:
        return self.models.get(key) or self.runtimes.get(key) or self.isvcs.get(key)


def isvc_pinned(obj: Mapping[str, Any]) -> bool:
    """`spec.runtime.autoSync: false` (newer OME): the runtime comes from a stored revision."""
    spec = obj.get("spec")
    runtime = spec.get("runtime") if isinstance(spec, Mapping) else None
    return isinstance(runtime, Mapping) and runtime.get("autoSync") is False


def is_ome_object(obj: Mapping[str, Any]) -> bool:
    api_version = obj.get("apiVersion")
    group = api_version.split("/")[0] if isinstance(api_version, str) else None
    return group == "ome.io" and obj.get("kind") in OME_KINDS


Found = list[tuple[Origin, dict[str, Any], Model | Runtime | InferenceService]]


def read_objects(paths: Iterable[str | Path], *, lenient: bool = False) -> Found:
    """(origin, object as applied, parsed value) for every OME object of the files and folders,
    in file order (see read_checked)."""
    return read_checked(paths, lenient=lenient)[0]


def read_checked(paths: Iterable[str | Path], *, lenient: bool = False) -> tuple[Found, list[Problem]]:
    """Every OME object of the files and folders (see read_objects), and the schema warnings.
    Each object is checked against OME's CRD schema (matching.schema); `lenient` demotes its
    errors to warnings. Raises TreeError listing every bad document, schema errors and
    warnings together, or every path that does not exist."""
    paths = list(paths)
    missing = [f"{path}: no such file or folder" for path in paths if not Path(path).exists()]
    if missing:
        raise TreeError(missing)
    found = []
    problems = []
    details: list[Problem] = []
    for document in read_documents(paths):
        if document.error is not None or document.obj is None:
            problems.append(f"{document.where}: {document.error}")
            continue
        if not is_ome_object(document.obj):
            continue
        checked = manifest_problems(
            document.obj, positions=document.positions, file=document.path, document=document.index, lenient=lenient
        )
        details += checked
        if any(problem.is_error for problem in checked):
            continue
        obj = as_applied(document.obj)
        try:
            found.append((document.origin, obj, parse_object(obj)))
        except ManifestError as error:
            problems.append(f"{document.where}: {error}")
        except RecursionError:
            problems.append(f"{document.where}: the object is nested too deeply")
    if problems or any(problem.is_error for problem in details):
        raise TreeError([*problems, *map(str, details)], details)
    return found, details


def read_tree(
    paths: Iterable[str | Path], *, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR, lenient: bool = False
) -> Objects:
    """The OME objects of manifest files and folders (see the module's docstring), judged by
    `behaviour`, with the schema warnings. A path that does not exist, a file that is not YAML
    or JSON, or an object OME's API server would refuse raises TreeError (see read_checked)."""
    found, warnings = read_checked(paths, lenient=lenient)
    return tree_of(found, warnings, behaviour=behaviour)


def tree_of(found: Found, warnings: Iterable[Problem], *, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR) -> Objects:
    """The Objects of what read_checked found, with each object's origin and the warnings."""
    objects = objects_of([(obj, value) for _origin, obj, value in found], behaviour=behaviour)
    return replace(objects, origins={value.key: origin for origin, _obj, value in found}, warnings=tuple(warnings))


def objects_of(
    items: Iterable[tuple[Mapping[str, Any], Model | Runtime | InferenceService]],
    *,
    behaviour: BehaviourInput = DEFAULT_BEHAVIOUR,
) -> Objects:
    """Objects from (object, parsed value) pairs, judged by `behaviour`; a later value
    replaces an earlier one's key."""
    models: dict[ObjectKey, Model] = {}
    runtimes: dict[ObjectKey, Runtime] = {}
    isvcs: dict[ObjectKey, InferenceService] = {}
    pinned = set()
    for obj, value in items:
        pinned.discard(value.key)
        if isinstance(value, Model):
            models[value.key] = value
        elif isinstance(value, Runtime):
            runtimes[value.key] = value
        else:
            isvcs[value.key] = value
            if isvc_pinned(obj):
                pinned.add(value.key)
    return Objects(
        models=models, runtimes=runtimes, isvcs=isvcs, pinned=frozenset(pinned), behaviour=as_behaviour(behaviour)
    )
