"""Evaluating assertions over OME's verdicts: which subjects in an assertion's scope break it,
each with OME's reason. Pure: the caller supplies the objects, the cluster's name, the
objects' labels and, for the assertions that compare, a baseline."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..isvc import BLOCKED
from ..keys import key_text
from ..types import Model, ObjectKey
from .types import BASELINE_ASSERTIONS, ERROR, Assertion
from .verdicts import Baseline, Row, Verdicts

Labels = Mapping[ObjectKey, Mapping[str, str]]
NO_LABELS: Mapping[str, str] = {}


@dataclass(frozen=True, slots=True)
class Failure:
    """One subject that breaks an assertion. `subject` identifies it stably (to compare runs
    and to deduplicate notifications); `objects`: the objects involved (model, runtimes, service);
    `namespace`: where it happens ("" cluster scope, or a count over several namespaces)."""

    subject: str
    message: str
    reason: str | None = None
    objects: tuple[ObjectKey, ...] = ()
    namespace: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"subject": self.subject, "namespace": self.namespace, "message": self.message, "reason": self.reason,
                "objects": [key_text(key) for key in self.objects]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Outcome:
    """An assertion's result: `checked` subjects in scope, the `failures` among them."""

    assertion: Assertion
    checked: int
    failures: tuple[Failure, ...] = ()
    note: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def blocking(self) -> bool:
        """Failed with severity error: a check exits 1."""
        return not self.passed and self.assertion.severity == ERROR

    def to_dict(self) -> dict[str, object]:
        return {**self.assertion.to_dict(), "passed": self.passed, "checked": self.checked, "note": self.note,
                "failures": [failure.to_dict() for failure in self.failures]}  # fmt: skip


@dataclass(frozen=True)
class _Context:
    verdicts: Verdicts
    labels: Labels
    baseline: Baseline | None

    def rows(self, assertion: Assertion) -> list[Row]:
        subjects = assertion.subjects
        return [
            row
            for (key, namespace), row in self.verdicts.rows.items()
            if subjects.covers(namespace, key[2], self.labels.get(key, NO_LABELS))
            and subjects.covers_model(self.verdicts.objects.models.get(key))
        ]

    def model_of(self, isvc: ObjectKey) -> Model | None:
        """The model an InferenceService names, as OME resolved it (None when none)."""
        found = self.verdicts.isvcs[isvc].model
        return None if found is None else self.verdicts.objects.models.get(found)


def evaluate(
    assertions: Iterable[Assertion],
    verdicts: Verdicts,
    *,
    cluster: str | None = None,
    labels: Labels | None = None,
    baseline: Baseline | None = None,
) -> list[Outcome]:
    """The outcome of each assertion whose cluster scope covers `cluster` (None: every one).
    Without a baseline, pickUnchanged and decisionUnchanged pass with a note saying so."""
    context = _Context(verdicts, labels or {}, baseline)
    found = []
    for assertion in assertions:
        if not assertion.subjects.covers_cluster(cluster):
            continue
        if assertion.kind in BASELINE_ASSERTIONS and baseline is None:
            found.append(Outcome(assertion, 0, note="no baseline to compare with"))
            continue
        found.append(_CHECKS[assertion.kind](assertion, context))
    return found


def _row_subject(row: Row) -> str:
    return f"{key_text(row.model)} in {row.namespace or 'cluster scope'}"


def _pick_text(row: Row) -> str:
    return f"{key_text(row.pick)} (score {row.score})" if row.pick else "no runtime"


def _outcome(assertion: Assertion, checked: int, failures: Iterable[Failure]) -> Outcome:
    return Outcome(assertion, checked, tuple(sorted(failures, key=lambda failure: failure.subject)))


def _served_by(assertion: Assertion, context: _Context) -> Outcome:
    rows = context.rows(assertion)
    failures = [
        Failure(
            _row_subject(row),
            f"{_row_subject(row)}: OME picks {_pick_text(row)}, not {assertion.runtime}",
            _why_not(context, row, str(assertion.runtime)),
            tuple(key for key in (row.model, row.pick) if key),
            row.namespace,
        )
        for row in rows
        if row.pick is None or row.pick[2] != assertion.runtime
    ]
    return _outcome(assertion, len(rows), failures)


def _why_not(context: _Context, row: Row, runtime: str) -> str | None:
    """OME's reason the named runtime is not the pick: outranked, manual-only, excluded."""
    for rank, match in enumerate(row.ranked):
        if match.name == runtime and rank > 0:
            return f"{runtime} is compatible (score {match.score}) but ranks below {_pick_text(row)}"
    grid = context.verdicts.objects.grid
    for key in grid.runtimes:
        if key[2] == runtime and (key[1] in ("", row.namespace)) and row.model in grid.models:
            selection = grid.select(row.model, row.namespace)
            if key in selection.manual_keys:
                return selection.manual_keys[key]
            return grid.reason(row.model, key) or row.error
    return f"no runtime named {runtime} in scope of {row.namespace or 'cluster scope'}" + (
        f"; {row.error}" if row.error else ""
    )


def _has_runtime(assertion: Assertion, context: _Context) -> Outcome:
    rows = context.rows(assertion)
    failures = [
        Failure(_row_subject(row), f"{_row_subject(row)}: OME picks no runtime", row.error, (row.model,), row.namespace)
        for row in rows
        if row.pick is None
    ]
    return _outcome(assertion, len(rows), failures)


def _baseline(assertion: Assertion, context: _Context) -> Baseline:
    """The baseline a BASELINE_ASSERTIONS check compares with (evaluate answers them without one)."""
    if context.baseline is None:
        raise ValueError(f"a {assertion.kind} assertion needs a baseline")
    return context.baseline


def _pick_unchanged(assertion: Assertion, context: _Context) -> Outcome:
    picks = _baseline(assertion, context).picks
    rows = [row for row in context.rows(assertion) if (row.model, row.namespace) in picks]
    failures = []
    for row in rows:
        before = picks[(row.model, row.namespace)]
        if before != row.pick:
            was = key_text(before) if before else "no runtime"
            failures.append(
                Failure(
                    _row_subject(row),
                    f"{_row_subject(row)}: OME's pick drifted from {was} to {_pick_text(row)}",
                    row.error if row.pick is None else _why_not(context, row, before[2]) if before else None,
                    tuple(key for key in (row.model, before, row.pick) if key),
                    row.namespace,
                )
            )
    return _outcome(assertion, len(rows), failures)


def _isvcs_in_scope(assertion: Assertion, context: _Context) -> list[ObjectKey]:
    subjects = assertion.subjects
    return [
        key
        for key in context.verdicts.isvcs
        if subjects.covers(key[1], key[2], context.labels.get(key, NO_LABELS))
        and subjects.covers_model(context.model_of(key))
    ]


def _not_blocked(assertion: Assertion, context: _Context) -> Outcome:
    keys = _isvcs_in_scope(assertion, context)
    outcomes = context.verdicts.isvcs
    failures = [
        Failure(key_text(key), f"{key_text(key)}: OME blocks it", outcomes[key].error, (key,), key[1])
        for key in keys
        if outcomes[key].verdict == BLOCKED
    ]
    return _outcome(assertion, len(keys), failures)


def _not_ignored(assertion: Assertion, context: _Context) -> Outcome:
    keys = _isvcs_in_scope(assertion, context)
    ignored = context.verdicts.ignored
    failures = [
        Failure(
            key_text(key),
            f"{key_text(key)}: OME silently ignores it ({ignored[key].reason}); fix: {ignored[key].fix}",
            ignored[key].text,
            (key,),
            key[1],
        )
        for key in keys
        if key in ignored
    ]
    return _outcome(assertion, len(keys), failures)


def _decision_unchanged(assertion: Assertion, context: _Context) -> Outcome:
    before = _baseline(assertion, context).decisions
    keys = [key for key in _isvcs_in_scope(assertion, context) if key in before]
    failures = []
    for key in keys:
        outcome = context.verdicts.isvcs[key]
        now = (outcome.verdict, outcome.model, outcome.runtime)
        if now != before[key]:
            failures.append(
                Failure(
                    key_text(key),
                    f"{key_text(key)}: OME decides it differently: {_decision_text(before[key])} -> {_decision_text(now)}",
                    outcome.error or "; ".join(outcome.notes) or None,
                    tuple(k for k in (key, before[key][2], outcome.runtime) if k),
                    key[1],
                )
            )
    return _outcome(assertion, len(keys), failures)


def _decision_text(decision: tuple[str, ObjectKey | None, ObjectKey | None]) -> str:
    verdict, _model, runtime = decision
    return verdict + (f" ({key_text(runtime)})" if runtime else "")


def _pick_count(assertion: Assertion, context: _Context) -> Outcome:
    rows = context.rows(assertion)
    models = sorted({row.model for row in rows if row.pick is not None and row.pick[2] == assertion.runtime})
    low, high = assertion.at_least, assertion.at_most
    if (low is None or len(models) >= low) and (high is None or len(models) <= high):
        return _outcome(assertion, len(rows), [])
    bound = f"at least {low}" if low is not None and len(models) < low else f"at most {high}"
    names = ", ".join(key[2] for key in models[:10]) + (" ..." if len(models) > 10 else "")
    message = f"{assertion.runtime} is the pick for {len(models)} model(s), not {bound}" + (
        f": {names}" if names else ""
    )
    return _outcome(assertion, len(rows), [Failure(str(assertion.runtime), message, None, tuple(models))])


def _not_shadowed(assertion: Assertion, context: _Context) -> Outcome:
    """Runtimes (named by the scope's `names`; namespaced ones of the scope's namespaces) that
    rank among the compatible ones for some model in the scope's namespaces yet are never first."""
    subjects = assertion.subjects
    ranks: dict[ObjectKey, list[Row]] = defaultdict(list)
    won: set[ObjectKey] = set()
    models = context.verdicts.objects.models
    for (model, namespace), row in context.verdicts.rows.items():
        if not subjects.covers_namespace(namespace) or not subjects.covers_model(models.get(model)):
            continue
        if row.ranked:
            won.add(row.ranked[0].key)
        for match in row.ranked[1:]:
            ranks[match.key].append(row)
    runtimes = context.verdicts.objects.runtimes
    in_scope = [
        key
        for key in runtimes
        if (not key[1] or subjects.covers_namespace(key[1]))
        and subjects.covers_name(key[2], context.labels.get(key, NO_LABELS))
    ]
    failures = [
        Failure(
            key_text(key),
            f"{key_text(key)} matches {len(ranks[key])} row(s) but OME never picks it",
            f"{_pick_text(ranks[key][0])} ranks first for {_row_subject(ranks[key][0])}",
            (key, *sorted({row.model for row in ranks[key]})[:10]),
            key[1],
        )
        for key in in_scope
        if ranks.get(key) and key not in won
    ]
    return _outcome(assertion, len(in_scope), failures)


def _min_score(assertion: Assertion, context: _Context) -> Outcome:
    rows = [row for row in context.rows(assertion) if row.pick is not None]
    floor = int(assertion.score or 0)
    failures = [
        Failure(
            _row_subject(row),
            f"{_row_subject(row)}: the pick {_pick_text(row)} scores below {floor}",
            None,
            (row.model, row.pick) if row.pick else (row.model,),
            row.namespace,
        )
        for row in rows
        if (row.score or 0) < floor
    ]
    return _outcome(assertion, len(rows), failures)


_CHECKS: Mapping[str, Callable[[Assertion, _Context], Outcome]] = {
    "servedBy": _served_by,
    "hasRuntime": _has_runtime,
    "pickUnchanged": _pick_unchanged,
    "notBlocked": _not_blocked,
    "decisionUnchanged": _decision_unchanged,
    "pickCount": _pick_count,
    "notShadowed": _not_shadowed,
    "minScore": _min_score,
    "notIgnored": _not_ignored,
}
