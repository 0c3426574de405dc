"""What the lint returns: findings, each with a severity, a code, the runtimes and models it
concerns and a message, and the report of a cluster."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from matching import ObjectKey, key_dict

if TYPE_CHECKING:
    from .groups import FindingGroup

SEVERITIES = ("error", "warning", "info")
_SEVERITY_RANK = {name: rank for rank, name in enumerate(SEVERITIES)}
MODEL_LIST_LIMIT = 20


@dataclass(frozen=True)
class Finding:
    """One lint finding. `namespaces` are the matrix rows it was seen in ("" = cluster scope)."""

    severity: str
    code: str
    message: str
    runtimes: list[ObjectKey] = field(default_factory=list)
    models: list[ObjectKey] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def sort_key(self) -> tuple[object, ...]:
        return (_SEVERITY_RANK[self.severity], self.code, self.runtimes, self.models, self.message)

    def to_dict(self) -> dict[str, object]:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "runtimes": [key_dict(key) for key in self.runtimes],
            "models": [key_dict(key) for key in self.models],
            "namespaces": list(self.namespaces),
            "details": self.details,
        }


@dataclass(frozen=True)
class LintReport:
    """A cluster's findings, and the same findings grouped by root cause (`groups`)."""

    cluster: str
    findings: list[Finding]
    groups: list[FindingGroup] = field(default_factory=list)
    fixes_pending_for: int | None = None
    """Set on the lint page's report while the fixes of this inventory version are being proven
    (lint.selectors): its groups carry no fixes meanwhile."""
    fingerprint: str = ""
    """What the proofs of its fixes are stored under (lint.rules.proofs.proofs_key of the
    inventory it was made at; lint.selectors): the page's fix forms read the same."""

    def counts(self) -> dict[str, int]:
        """Findings per severity."""
        return severity_counts(finding.severity for finding in self.findings)

    def by_code(self, code: str) -> list[Finding]:
        return [finding for finding in self.findings if finding.code == code]

    def for_runtime(self, runtime: ObjectKey) -> list[Finding]:
        return [finding for finding in self.findings if runtime in finding.runtimes]

    def to_dict(self) -> dict[str, object]:
        codes: dict[str, int] = defaultdict(int)
        for finding in self.findings:
            codes[finding.code] += 1
        return {
            "cluster": self.cluster,
            "counts": self.counts(),
            "codes": dict(sorted(codes.items())),
            "group_counts": severity_counts(group.severity for group in self.groups),
            "groups": [group.to_dict() for group in self.groups],
            "findings": [finding.to_dict() for finding in self.findings],
        }


def severity_counts(severities: Iterable[str]) -> dict[str, int]:
    found = dict.fromkeys(SEVERITIES, 0)
    for severity in severities:
        found[severity] += 1
    return found


def key_names(keys: Iterable[ObjectKey], limit: int = MODEL_LIST_LIMIT) -> str:
    keys = list(keys)
    text = ", ".join(key[2] if not key[1] else f"{key[1]}/{key[2]}" for key in keys[:limit])
    return text if len(keys) <= limit else f"{text} and {len(keys) - limit} more"
