"""Runtime lint: findings about a cluster's serving runtimes, from OME's selections and the grid.

Each finding has a severity (`error`, `warning`, `info`), a code, the runtimes and models it
concerns and a message. The checks, by family:

- `rows`: what OME picks today (`shadowed`, `matches-no-model`);
- `scorer`: the scorer quirks that give surprising winners (Q1, Q2, Q3, Q16, `zero-score`);
- `pipelines`: the diffusionPipeline risks of the seed page;
- `static`: what a runtime's values alone make unmatchable or risky;
- `admission`: runtimes OME's own runtime webhook would refuse as they stand (`webhook-refuses`).

The rows are read once (`selections`); only pairs the rows single out are checked one by one.
The findings are then grouped by root cause (`groups`), each group with a fix where one can be
worked out (`fixes`) and OME's quirks it cites in words (`quirks`).
"""

from __future__ import annotations

from inventory.parsed import Inventory
from matching import CandidateIndex

from .admission import webhook_refusals
from .fixes import Fix
from .groups import FindingGroup, group_findings
from .pipelines import pipeline_missing_on_model, pipeline_would_exclude
from .quirks import quirks_in
from .report import SEVERITIES, Finding, LintReport
from .rows import matches_nothing, shadowed
from .scorer import scorer_quirks
from .selections import Rows
from .static import runtime_findings

__all__ = ["SEVERITIES", "Finding", "FindingGroup", "Fix", "LintReport", "lint_inventory", "quirks_in"]


def lint_inventory(inventory: Inventory, *, cluster_name: str = "") -> LintReport:
    """Every finding for an Inventory."""
    indexed = Rows(inventory)
    findings: list[Finding] = []
    for runtime in inventory.runtimes.values():
        findings += runtime_findings(runtime)
    findings += webhook_refusals(inventory)
    findings += shadowed(indexed)
    candidates = CandidateIndex(inventory.models)
    findings += matches_nothing(indexed, candidates)
    findings += pipeline_would_exclude(indexed)
    findings += pipeline_missing_on_model(inventory, candidates)
    findings += scorer_quirks(indexed)
    findings.sort(key=Finding.sort_key)
    return LintReport(cluster=cluster_name, findings=findings, groups=group_findings(findings, indexed))
