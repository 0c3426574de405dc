"""What `check`, `select`, `validate` and `pipeline_patch` return; each has `.to_dict()`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """One check of one entry: the values compared and, when it fails, OME's phrase.

    `reason` is None when the check passes, and also where OME fails a check without a
    phrase (an entry without modelFormat, quirk Q23). `runtime_wide` marks the checks that
    apply to the whole runtime (size, accelerator, deployment mode).
    """

    check: str
    passed: bool
    model: str | None
    runtime: str | None
    reason: str | None = None
    runtime_wide: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class EntryReport:
    """One `supportedModelFormats` entry against the model: every check, not just the first."""

    index: int
    passed: bool
    checks: tuple[CheckOutcome, ...]
    mismatch: str | None
    score: int
    priority: int
    auto_select: bool | None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "index": self.index,
            "passed": self.passed,
            "mismatch": self.mismatch,
            "score": self.score,
            "priority": self.priority,
            "autoSelect": self.auto_select,
        }
        out["checks"] = [outcome.to_dict() for outcome in self.checks]
        return out


@dataclass(frozen=True, slots=True)
class CheckReport:
    """One model against one runtime, as OME's GetCompatibilityDetails sees it, plus the trace."""

    runtime: str
    is_cluster: bool
    compatible: bool
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    entries: tuple[EntryReport, ...]
    matched_entry: int | None
    score: int
    label: str
    behaviour: str = ""
    error: str | None = None
    """Set where this OME crashes on the pair instead of answering (then `compatible` is False)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "behaviour": self.behaviour,
            "error": self.error,
            "runtime": self.runtime,
            "isCluster": self.is_cluster,
            "compatible": self.compatible,
            "reasons": list(self.reasons),
            "warnings": list(self.warnings),
            "matchedEntry": self.matched_entry,
            "score": self.score,
            "label": self.label,
            "entries": [entry.to_dict() for entry in self.entries],
        }


@dataclass(frozen=True, slots=True)
class Match:
    """A runtime OME could auto-select, in OME's order."""

    name: str
    score: int
    is_cluster: bool
    namespace: str = ""
    entry: int | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        kind = "ClusterServingRuntime" if self.is_cluster else "ServingRuntime"
        return (kind, self.namespace, self.name)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "score": self.score,
            "isCluster": self.is_cluster,
            "namespace": self.namespace,
            "entry": self.entry,
        }


class Selection:
    """OME's auto-selection for one model in one namespace.

    `excluded` (and `error`, which lists the exclusions) are computed on first use: the
    matrix needs the verdicts of millions of pairs but the reason texts of only a few.
    """

    def __init__(
        self,
        *,
        model: str,
        namespace: str,
        compatible: list[Match],
        manual_only: dict[str, str],
        excluded: Callable[[], dict[str, str]],
        error: Callable[[dict[str, str]], str | None],
        manual_keys: dict[tuple[str, str, str], str] | None = None,
        behaviour: str = "",
    ) -> None:
        self.behaviour = behaviour
        self.model = model
        self.namespace = namespace
        self.compatible = compatible
        self.manual_only = manual_only
        # manual_only keyed by (kind, namespace, name): names alone can collide across scopes.
        self.manual_keys = manual_keys or {}
        self._excluded = excluded
        self._error = error

    @property
    def selected(self) -> str | None:
        return self.compatible[0].name if self.compatible else None

    @cached_property
    def excluded(self) -> dict[str, str]:
        return self._excluded()

    @cached_property
    def error(self) -> str | None:
        return self._error(self.excluded)

    @cached_property
    def error_head(self) -> str | None:
        """`error` without OME's list of excluded runtimes, which `excluded` holds as data:
        what a page shows above that list."""
        return self._error({})

    def to_dict(self) -> dict[str, object]:
        return {
            "behaviour": self.behaviour,
            "model": self.model,
            "namespace": self.namespace,
            "selected": self.selected,
            "compatible": [match.to_dict() for match in self.compatible],
            "excluded": dict(self.excluded),
            "manualOnly": dict(self.manual_only),
            "error": self.error,
        }

    def __repr__(self) -> str:
        return f"Selection(model={self.model!r}, namespace={self.namespace!r}, selected={self.selected!r})"


@dataclass(frozen=True, slots=True)
class PatchPlan:
    """The smallest merge patch of a model's diffusionPipeline that makes it pass a runtime."""

    patch: dict[str, object] | None
    entry: int | None
    blocked: tuple[str, ...] = ()
    behaviour: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"behaviour": self.behaviour, "patch": self.patch, "entry": self.entry, "blocked": list(self.blocked)}
