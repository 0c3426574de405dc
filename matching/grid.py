"""The whole model x runtime grid at once, at a cost that grows with distinct model signatures.

An entry can pass a model only if format name, architecture, quantization and framework name
are equal (quirk Q9 makes absent a value of its own), so entries are indexed by that key and a
model signature meets only its candidates. Verdicts are computed eagerly, texts on demand.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from .behaviour import DEFAULT_BEHAVIOUR, BehaviourInput, as_behaviour
from .candidates import MatchKey, entry_match_key, model_match_key
from .memo import Memo
from .parse import as_isvc, as_model, as_runtime
from .pipeline import pipeline_mismatch
from .results import CheckReport, Selection
from .rules import SHARDED, runtime_panic, runtime_reason, size_problem, versions_match
from .score import fetch_order, runtime_score
from .select import build_selection, check, excluded_reasons, invalid_selection, model_error
from .types import Entry, InferenceService, Model, ObjectKey, Runtime

Verdict = tuple[bool, int | None]
_INCOMPATIBLE: Verdict = (False, None)


def _candidate_passes(model: Model, entry: Entry) -> bool:
    """The rest of the entry check, for an entry whose match key equals the model's."""
    if entry.format is None:  # its match key has a format name, so it has a format
        raise ValueError(f"entry {entry} has no modelFormat")
    if not versions_match(model.format.version, entry.format):
        return False
    framework, required = model.framework, entry.framework
    if framework is not None and required is not None and not versions_match(framework.version, required):
        return False
    return entry.pipeline is None or pipeline_mismatch(model.pipeline, entry.pipeline) is None


class Grid:
    """Every model against every runtime; `check` and `select` agree with the pairwise functions."""

    text_memo_entries: ClassVar[int] = 65_536
    """How many reasons, and how many checks, a grid keeps (the most recently asked for): one
    per distinct model signature and runtime would be unbounded for a big cluster's export."""

    def __init__(
        self,
        models: Iterable[Model | Mapping[str, Any]],
        runtimes: Iterable[Runtime | Mapping[str, Any]],
        isvcs: Iterable[InferenceService | Mapping[str, Any]] = (),
        *,
        behaviour: BehaviourInput = DEFAULT_BEHAVIOUR,
    ) -> None:
        self.behaviour = as_behaviour(behaviour)
        self.models: dict[ObjectKey, Model] = {m.key: m for m in map(as_model, models)}
        self.runtimes: dict[ObjectKey, Runtime] = {r.key: r for r in map(as_runtime, runtimes)}
        self.isvcs: dict[ObjectKey, InferenceService] = {}
        for item in isvcs:
            isvc = as_isvc(item)
            if isvc is not None:
                self.isvcs[isvc.key] = isvc
        self.namespaces: list[str] = sorted(
            {rt.namespace for rt in self.runtimes.values() if not rt.is_cluster}
            | {isvc.namespace for isvc in self.isvcs.values()}
        )
        by_namespace: dict[str, list[Runtime]] = defaultdict(list)
        for runtime in self.runtimes.values():
            if not runtime.is_cluster:
                by_namespace[runtime.namespace].append(runtime)
        self._namespaced = {ns: fetch_order(runtimes) for ns, runtimes in by_namespace.items()}
        self._cluster = fetch_order([rt for rt in self.runtimes.values() if rt.is_cluster])
        self._position = {
            rt.key: position
            for position, rt in enumerate([rt for group in self._namespaced.values() for rt in group] + self._cluster)
        }
        self._index: dict[MatchKey, list[tuple[Runtime, int, Entry]]] = defaultdict(list)
        for runtime in self.runtimes.values():
            if runtime.is_disabled:
                continue
            for position, entry in enumerate(runtime.entries):
                key = entry_match_key(entry)
                if key is not None:
                    self._index[key].append((runtime, position, entry))
        # Models with equal signatures share every verdict, score and text, memoised by an
        # integer id so that the deep signature tuple is hashed once per model, when first used.
        self._signature_ids: dict[tuple[object, ...], int] = {}
        self._signature: dict[ObjectKey, int] = {}
        self._verdicts: dict[int, dict[ObjectKey, int]] = {}
        # Runtimes this OME crashes on, per signature (a half-open size range before U1).
        self._panics: dict[int, dict[ObjectKey, str]] = {}
        self._scores: dict[tuple[int, ObjectKey], int] = {}
        self._reasons: Memo[tuple[int, ObjectKey], str] = Memo(self.text_memo_entries)
        self._checks: Memo[tuple[int, ObjectKey], CheckReport] = Memo(self.text_memo_entries)

    def _signature_id(self, model_key: ObjectKey) -> int:
        found = self._signature.get(model_key)
        if found is None:
            ids = self._signature_ids
            found = self._signature[model_key] = ids.setdefault(self.models[model_key].signature, len(ids))
        return found

    def compatible_entries(self, model_key: ObjectKey) -> dict[ObjectKey, int]:
        """Runtime key -> first passing entry, for every runtime compatible with the model."""
        signature = self._signature_id(model_key)
        found = self._verdicts.get(signature)
        if found is None:
            found = self._verdicts[signature] = self._evaluate(signature, self.models[model_key])
        return found

    def _evaluate(self, signature: int, model: Model) -> dict[ObjectKey, int]:
        if model.distribution == SHARDED and self.behaviour.has("U3"):
            return {}
        found: dict[ObjectKey, int] = {}
        rejected_by_size: set[ObjectKey] = set()
        for runtime, position, entry in self._index.get(model_match_key(model), ()):
            key = runtime.key
            if key in found or key in rejected_by_size:
                continue
            if not _candidate_passes(model, entry):
                continue
            if size_problem(model, runtime, self.behaviour) is not None:
                rejected_by_size.add(key)
                panic = runtime_panic(model, runtime, None, self.behaviour)
                if panic is not None:
                    self._panics.setdefault(signature, {})[key] = panic
                continue
            found[key] = position
        return found

    def panics(self, model_key: ObjectKey) -> dict[ObjectKey, str]:
        """The runtimes this OME crashes on for the model instead of answering, with the error
        that says so (a half-open size range before U1)."""
        self.compatible_entries(model_key)
        return self._panics.get(self._signature_id(model_key), {})

    def verdict(self, model_key: ObjectKey, runtime_key: ObjectKey) -> Verdict:
        entry = self.compatible_entries(model_key).get(runtime_key)
        return _INCOMPATIBLE if entry is None else (True, entry)

    def score(self, model_key: ObjectKey, runtime_key: ObjectKey) -> int:
        memo_key = (self._signature_id(model_key), runtime_key)
        points = self._scores.get(memo_key)
        if points is None:
            model, runtime = self.models[model_key], self.runtimes[runtime_key]
            points = self._scores[memo_key] = runtime_score(model, runtime, self.behaviour)
        return points

    def reason(self, model_key: ObjectKey, runtime_key: ObjectKey) -> str | None:
        """OME's first incompatibility reason for the pair, or None when compatible."""
        if self.verdict(model_key, runtime_key)[0]:
            return None
        model, runtime = self.models[model_key], self.runtimes[runtime_key]
        return self._reasons.get(
            (self._signature_id(model_key), runtime_key),
            lambda: runtime_reason(model, runtime, None, self.behaviour) or "",
        )

    def check(self, model_key: ObjectKey, runtime_key: ObjectKey) -> CheckReport:
        """Exactly `matching.check(model, runtime, behaviour=self.behaviour)`."""
        model, runtime = self.models[model_key], self.runtimes[runtime_key]
        return self._checks.get(
            (self._signature_id(model_key), runtime_key), lambda: check(model, runtime, behaviour=self.behaviour)
        )

    def select(self, model_key: ObjectKey, namespace: str | None = None) -> Selection:
        """Exactly `matching.select(model, runtimes, namespace=namespace, behaviour=self.behaviour)`."""
        model = self.models[model_key]
        ns = model.namespace if namespace is None else namespace
        error = model_error(model)
        if error is not None:
            return invalid_selection(model, ns, error, self.behaviour)
        namespaced = self._namespaced.get(ns, [])
        found = self.compatible_entries(model_key)
        panics = self._panics.get(self._signature_id(model_key))
        if panics:
            for runtime in namespaced + self._cluster:
                if runtime.key in panics:
                    return invalid_selection(model, ns, panics[runtime.key], self.behaviour)
        in_scope = [
            (self.runtimes[key], entry) for key, entry in found.items() if key[1] == ns or self.runtimes[key].is_cluster
        ]
        in_scope.sort(key=lambda item: (item[0].is_cluster, self._position[item[0].key]))
        return build_selection(
            model,
            ns,
            in_scope,
            counts=(len(namespaced), len(self._cluster)),
            points=lambda rt: self.score(model_key, rt.key),
            excluded=lambda: excluded_reasons(
                namespaced, self._cluster, found, lambda rt: self.reason(model_key, rt.key) or ""
            ),
            behaviour=self.behaviour,
        )


def grid(
    models: Iterable[Model | Mapping[str, Any]],
    runtimes: Iterable[Runtime | Mapping[str, Any]],
    isvcs: Iterable[InferenceService | Mapping[str, Any]] = (),
    *,
    behaviour: BehaviourInput = DEFAULT_BEHAVIOUR,
) -> Grid:
    """Evaluate the whole grid at once under one OME's behaviour; see `Grid`."""
    return Grid(models, runtimes, isvcs, behaviour=behaviour)
