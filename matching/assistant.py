"""Answers for an assistant about a set of OME objects: a manifest tree (`ome-compat mcp --tree
DIR`) or a reader's part of a dashboard cluster (the MCP endpoint), docs/mcp.md. The same
functions the command line and the dashboard's pages use (select, propose_fixes, diff,
evaluate_isvc, admit_runtime), shaped as JSON-ready dicts. Standard library only, like the rest of matching;
the MCP tools and the stdio transport live in matching.cli_mcp."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .admit import admit_runtime
from .behaviour import DEFAULT_BEHAVIOUR, BehaviourInput
from .crd import as_applied
from .diff import diff
from .diff_results import Diff, DiffIsvc
from .errors import ManifestError
from .files import load_text
from .fixes import propose_fixes
from .impact import impact_sentences
from .isvc import SELECTED, evaluate_isvc
from .keys import key_dict, key_text
from .parse import parse_object
from .patches import merge_patch
from .select import select
from .tree import Objects, is_ome_object, objects_of, read_checked, tree_of
from .types import CLUSTER_KINDS, MODEL_KINDS, RUNTIME_KINDS, InferenceService, Model, ObjectKey, Runtime

# The nearest fixes an answer lists: the smallest verified ones, as the pages show them.
FIXES_SHOWN = 3
# Verdicts of an InferenceService OME will not serve as written.
NOT_SERVED = ("blocked", "waiting")
# The rows an edit's impact names (matching.DIFF_CONDITIONS): its pick changes, it loses its
# only runtime, it gains one.
EDIT_CONDITIONS = ("pick-changed", "lost-runtime", "gained-runtime")


Stored = tuple[Mapping[str, Any], Model | Runtime | InferenceService]


class AssistantError(ValueError):
    """A question about an object the tree does not hold, or a pasted manifest that cannot be read."""


@dataclass(frozen=True)
class Tree:
    """OME objects as a cluster holds them (CRD defaults applied): each object with its parsed
    value, and the Objects they make."""

    items: tuple[Stored, ...]
    objects: Objects

    @classmethod
    def read(cls, paths: list[str], *, behaviour: str = DEFAULT_BEHAVIOUR) -> Tree:
        """A manifest tree's objects."""
        found, warnings = read_checked(paths)
        return cls(tuple((obj, value) for _origin, obj, value in found), tree_of(found, warnings, behaviour=behaviour))

    @classmethod
    def of(cls, items: Iterable[Stored], *, behaviour: BehaviourInput, invalid: Mapping[ObjectKey, str]) -> Tree:
        """Stored objects (a cluster's, as one reader reads them) and the malformed ones' errors."""
        items = tuple(items)
        return cls(items, replace(objects_of(items, behaviour=behaviour), invalid=invalid))

    def stored(self, key: ObjectKey) -> Mapping[str, Any]:
        return next(obj for obj, value in self.items if value.key == key)

    def model(self, name: str) -> Model:
        """A model by `name` or `namespace/name` (a ClusterBaseModel has no namespace)."""
        namespace, _, short = name.rpartition("/")
        matches = [
            model
            for key, model in self.objects.models.items()
            if key[2] == short and (not namespace or key[1] == namespace)
        ]
        if len(matches) != 1:
            found = "no model" if not matches else "several models (give namespace/name)"
            raise AssistantError(f"model {name!r}: {found} in the tree")
        return matches[0]


def _selection(tree: Tree, model: Model, namespace: str | None) -> dict[str, Any]:
    selection = select(model, tree.objects.runtimes.values(), namespace=namespace, behaviour=tree.objects.behaviour)
    return selection.to_dict() | {"selected": selection.selected, "error": selection.error}


def why_no_runtime(tree: Tree, model: str, namespace: str | None = None) -> dict[str, Any]:
    """OME's selection for a model and, when it gets no runtime, its nearest verified fixes."""
    found = tree.model(model)
    answer: dict[str, Any] = {"model": key_dict(found.key), "behaviour": tree.objects.behaviour.name}
    answer |= _selection(tree, found, namespace)
    fixes = []
    if not answer["selected"]:
        stored = tree.stored(found.key)
        in_scope = [key for key in sorted(tree.objects.runtimes) if key[1] in ("", answer["namespace"])]
        for key in in_scope:
            fixes += [
                (fix.size, key_text(key), fix.to_dict())
                for fix in propose_fixes(stored, tree.stored(key), tree.objects.behaviour)
            ]
    answer["fixes"] = [fix for _size, _runtime, fix in sorted(fixes, key=lambda item: item[:2])[:FIXES_SHOWN]]
    return answer


def explain_cell(tree: Tree, model: str, runtime: str, namespace: str | None = None) -> dict[str, Any]:
    """One cell of the matrix: whether OME picks `runtime` for `model`, or why not."""
    answer = why_no_runtime(tree, model, namespace)
    ranks = [match["name"] for match in answer["compatible"]]
    if runtime in ranks:
        status, reason = ("selected" if ranks[0] == runtime else "compatible"), None
    elif runtime in answer["manualOnly"]:
        status, reason = "manual-only", answer["manualOnly"][runtime]
    elif runtime in answer["excluded"]:
        status, reason = "excluded", answer["excluded"][runtime]
    else:
        raise AssistantError(f"runtime {runtime!r}: not in scope of model {model!r} in the tree")
    return {"model": answer["model"], "runtime": runtime, "status": status, "reason": reason, "fixes": answer["fixes"]}


def what_if(tree: Tree, manifest: str) -> dict[str, Any]:
    """What OME would decide differently once the pasted OME objects are applied over the tree."""
    try:
        documents = [obj for obj, _positions in load_text(manifest)]
    except ValueError as error:
        raise AssistantError(f"manifest: not YAML or JSON ({error})") from None
    pasted = []
    for index, obj in enumerate(documents, start=1):
        if not isinstance(obj, dict) or not is_ome_object(obj):
            continue
        try:
            pasted.append((as_applied(obj), parse_object(as_applied(obj))))
        except ManifestError as error:
            raise AssistantError(f"manifest document {index}: {error}") from None
    if not pasted:
        raise AssistantError("manifest: no OME object (BaseModel, ServingRuntime, InferenceService, ...)")
    return _applied(tree, pasted).to_dict()


def _applied(tree: Tree, changed: Sequence[Stored]) -> Diff:
    """What OME would decide differently once `changed` replace (or join) the tree's objects."""
    base = tree.objects
    head = objects_of([*tree.items, *changed], behaviour=base.behaviour)
    return diff(base, replace(head, origins=base.origins))


def _edited(tree: Tree, kind: str, namespace: str, name: str, patch: Mapping[str, Any]) -> Stored:
    """The tree's runtime or model `kind` `namespace`/`name` with the JSON merge patch applied
    (CRD defaults applied again), parsed."""
    if kind not in (*MODEL_KINDS, *RUNTIME_KINDS):
        raise AssistantError(
            f"kind {kind!r}: not a runtime or model kind ({', '.join((*RUNTIME_KINDS, *MODEL_KINDS))})"
        )
    key = (kind, "" if kind in CLUSTER_KINDS else namespace, name)
    stored = next((obj for obj, value in tree.items if value.key == key), None)
    if stored is None:
        raise AssistantError(f"{key_text(key)}: not in the tree")
    try:
        edited = as_applied(merge_patch(stored, patch))
        value = parse_object(edited)
    except ManifestError as error:
        raise AssistantError(f"patch: the edited {key_text(key)} is not valid: {error}") from None
    if value.key != key:
        raise AssistantError("patch: it must not change kind, metadata.name or metadata.namespace")
    return edited, value


def _moved(change: Diff) -> list[DiffIsvc]:
    """The auto-selected InferenceServices that go to another runtime, or to none."""
    return [isvc for isvc in change.isvcs if isvc.old_verdict == SELECTED and isvc.old_runtime != isvc.new_runtime]


def _moved_to(isvc: DiffIsvc) -> str | None:
    return isvc.new_runtime[2] if isvc.new_verdict == SELECTED and isvc.new_runtime is not None else None


def edit_impact(tree: Tree, kind: str, name: str, patch: dict[str, Any], namespace: str = "") -> dict[str, Any]:
    """The impact of editing one runtime or model of the tree (`kind`, `namespace` unless it is
    cluster-scoped, `name`) with a JSON merge patch (RFC 7386, `kubectl patch --type merge`):
    what OME's runtime webhook would refuse of the edited runtime, the models whose pick changes,
    those that lose their only runtime or gain one, and the InferenceServices that move; and all
    that in the admission webhook's sentences (`summary`). Nothing is applied."""
    edited, value = _edited(tree, kind, namespace, name, patch)
    refusals: list[str] = []
    if kind in RUNTIME_KINDS:
        refusals += admit_runtime(edited, tree.objects.runtimes.values(), behaviour=tree.objects.behaviour).errors
    change = _applied(tree, [(edited, value)])
    rows = {condition: [row for row in change.rows if condition in row.conditions] for condition in EDIT_CONDITIONS}
    moved = _moved(change)
    summary = impact_sentences(
        Counter(map(_moved_to, moved)),
        {row.model for row in rows["lost-runtime"]},
        {row.model for row in rows["gained-runtime"]},
    )
    return {
        "object": key_dict(value.key),
        "changed": bool(change.objects),
        "summary": summary,
        "omeRefuses": refusals,
        "pickChanges": [row.to_dict() for row in rows["pick-changed"]],
        "losesOnlyRuntime": [row.to_dict() for row in rows["lost-runtime"]],
        "gainsRuntime": [row.to_dict() for row in rows["gained-runtime"]],
        "inferenceServicesMoved": [isvc.to_dict() for isvc in moved],
    }


def unserved_isvcs(tree: Tree) -> list[dict[str, Any]]:
    """The InferenceServices OME will not serve as written: blocked, or waiting on their model."""
    objects = tree.objects
    answers = []
    for key in sorted(objects.isvcs):
        outcome = evaluate_isvc(objects.grid, objects.isvcs[key], objects.invalid, pinned=key in objects.pinned)
        if outcome.verdict in NOT_SERVED:
            answers.append(
                {"isvc": key_dict(key), "verdict": outcome.verdict, "failure": outcome.failure, "error": outcome.error}
            )
    return answers
