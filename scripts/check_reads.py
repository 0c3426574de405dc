#!/usr/bin/env python3
"""Fail on a read of a tenant's rows that does not go through the one read path.

A tenant-bearing model is one whose class body sets `TENANCY` (access.restrict). Everywhere in
the project's packages, a read of such a model must start from `Model.objects.restrict(scope,
action)` (or from a selector that does). This check reads the source (no Django needed) and
reports, with file, line and what to do:

- `Model.objects` used for anything but `.restrict(...)`, `.create(...)` or `.bulk_create(...)`;
- `get_object_or_404(Model, ...)` / `get_list_or_404(Model, ...)` on such a model;
- a related manager that reads such rows (`cluster.resources.filter(...)`), in code or in a
  template (`{{ cluster.resources.all }}`);
- in pages, API modules, selectors and template tags (SERVES_READERS), derived data read for
  no reader: `load_inventory(...)` (a reader's comes through `inventory.parsed.inventory_for`)
  and the `SYSTEM` scope.

Code that reads everything by design (sync, matrix builds, the catch-up, the operator's
commands) is named in ALLOWED, function by function, with the reason; management commands and
migrations are not request code and are left out whole. Run from the repository root:

    .venv/bin/python scripts/check_reads.py      # exit 1 and one line per finding
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The project's packages: the one list, the import contracts' in pyproject.toml (matching has no models).
with (ROOT / "pyproject.toml").open("rb") as _file:
    PACKAGES = tuple(p for p in tomllib.load(_file)["tool"]["importlinter"]["root_packages"] if p != "matching")
TEMPLATES = ROOT / "templates"
# Pages, API modules, selectors and template tags, and the modules only they call (a model's
# rankings, the upgrade report, near misses): they answer a reader, so derived data (a parsed inventory, a read
# for the system) comes through the reader's scope there too.
SERVES_READERS = re.compile(
    r"(^|/)(pages|api|selectors|templatetags)(/|\.py$)|^web/rankings\.py$|^matrix/upgrade\.py$|^whatif/fixes\.py$"
)
# Writes that read nothing; `restrict` is the read path itself.
MANAGER_USES = frozenset({"restrict", "create", "bulk_create"})
QUERYSET_METHODS = frozenset(
    {
        "aggregate",
        "all",
        "annotate",
        "count",
        "defer",
        "delete",
        "distinct",
        "earliest",
        "exclude",
        "exists",
        "filter",
        "first",
        "get",
        "in_bulk",
        "iterator",
        "last",
        "latest",
        "none",
        "only",
        "order_by",
        "prefetch_related",
        "select_for_update",
        "select_related",
        "update",
        "values",
        "values_list",
    }
)


def _each(module: str, reason: str, *functions: str) -> dict[str, str]:
    """One allowance per function of `module`, each with the reason."""
    return {f"{module}:{function}": reason for function in functions}


# The functions (module:function, or module:Class.method) that read every tenant's rows by
# design, and why. No whole module: a module serves readers one function at a time.
ALLOWED: dict[str, str] = {
    # Derived data in modules that answer readers (SERVES_READERS), each read for no reader:
    "lint/selectors.py:lint_report_get": "lint judges the whole cluster (a finding's causes may be in any namespace) "
    "and caches that report once per inventory; "
    "the one way out is this function, which gives the reader only the findings and groups whose objects it reads",
    **_each(
        "inventory/sync.py",
        "sync and the inventory's other writes (a patch's): make the stored objects equal the cluster's, whoever reads them",
        "_EventBatch.write",
        "_held",
        "_recount",
        "object_locked",
        "record_error",
        "record_list",
        "returned_store",
        "snapshot_apply",
    ),
    **_each(
        "inventory/live/hub.py",
        "the watch workers and their leases: store every event of every cluster",
        "_give_back",
        "_live_cluster",
        "_release",
    ),
    **_each(
        "inventory/live/leases.py",
        "the watch workers and their leases: store every event of every cluster",
        "_claim",
        "_release",
        "live_clusters_count",
        "watch_lease_renew",
        "watch_leases_renew",
        "watch_leases_hand_over",
        "watches_claim_idle",
    ),
    **_each(
        "inventory/live/state.py",
        "the watch workers and their leases: store every event of every cluster",
        "locked_state",
    ),
    **_each(
        "inventory/live/watch.py",
        "the watch workers and their leases: store every event of every cluster",
        "_count_reconnect",
        "_listed",
        "_set_connected",
        "_stored_rv",
    ),
    **_each(
        "inventory/services.py",
        "cluster registration and the resync service: run for the system",
        "cluster_register",
        "registration_check",
    ),
    **_each(
        "inventory/tasks.py",
        "Celery tasks: the system's own work, no reader",
        "argocd_discover",
        "resync_all",
        "resync_cluster",
        "watch_cluster",
    ),
    **_each(
        "inventory/parsed.py",
        "load_inventory parses a whole cluster; readers get a readable part (inventory.parsed.inventory_for; lint and isvcs selectors filter by scope)",
        "_catch_up",
        "_full_load",
        "_place_all",
        "cluster_state",
    ),
    **_each(
        "isvcs/services.py",
        "isvc_verdicts_refresh records every InferenceService's verdict after matrix updates; isvc_verdicts itself filters its result by the scope it is given",
        "_objects",
        "isvc_verdicts",
        "isvc_verdicts_refresh",
    ),
    **_each(
        "lint/services.py",
        "acknowledging writes; the group is looked up in the reader's report (scope given)",
        "lint_acknowledge",
    ),
    **_each(
        "matrix/services.py",
        "matrix builds read the whole inventory of a cluster",
        "_store_chunk",
        "matrix_build_chunk",
        "matrix_build_fail",
        "matrix_build_finish",
        "matrix_builds_abandon",
    ),
    **_each(
        "matrix/updates.py",
        "incremental matrix updates, the catch-up included, read what changed",
        "_mark_level",
        "_stored_rows",
        "inventory_version",
        "matrix_staleness",
        "scope_digest",
        "write_rows",
    ),
    **_each("matrix/cell_changes.py", "records the cell changes of a matrix update", "record_build_history"),
    **_each("matrix/audit.py", "the matrix audit recomputes a sample of every cluster's rows", "matrix_audit"),
    **_each(
        "matrix/tasks.py",
        "Celery tasks: the system's own work, no reader",
        "_supervise",
        "matrix_audit_all_task",
        "matrix_catch_up_all_task",
        "matrix_rebuild_task",
        "matrix_update_task",
    ),
    "matrix/cells.py:runtimes_in_scope": "the runtimes of a namespace whose rows the caller read through restrict: a reader of a namespace reads its runtimes and the cluster-scoped ones",
    "matrix/selectors.py:current_build": "the build of a cluster the caller got from clusters_visible(scope)",
    **_each(
        "fleet/services.py",
        "the fleet compares whole clusters: fleet_get keeps only those its reader reads whole",
        "_cells",
        "_sync",
        "cluster_counts",
    ),
    **_each(
        "inventory/sources/argocd.py",
        "a cluster about to be registered: whether its Argo CD Secret has a cluster already, whoever may read that one (the page needs inventory.add_cluster)",
        "ArgoCDSource.spec_from_page",
    ),
    **_each(
        "inventory/argocd.py",
        "the Argo CD source registers and removes clusters for the system, whoever reads them",
        "argocd_clusters_sync",
    ),
    **_each(
        "inventory/locks.py",
        "the lock order: every writer of a cluster locks its row first, for the system",
        "cluster_write_lock",
        "cluster_write_lock_or_skip",
    ),
    **_each(
        "lint/proving.py",
        "the proving task proves and stores every cluster's lint fixes for the system; readers read the proofs through LintProofs.objects.restrict (lint_report_get)",
        "_prove",
        "lint_proofs_refresh",
        "lint_proofs_request",
    ),
    **_each("lint/tasks.py", "Celery tasks: the system's own work, no reader", "lint_prove_task"),
    "inventory/ome_release.py:_no_evidence": "whether a cluster the caller already holds was ever listed, to say why its OME version is unknown",
    **_each(
        "matrix/freshness.py",
        "the freshness of a cluster the caller already read (clusters_visible(scope)): one state per cluster, judged from all of its sync states and builds",
        "_behind_since",
        "_current_builds",
        "stored_freshness_of",
    ),
    **_each("policies/tasks.py", "Celery tasks: the system's own work, no reader", "policies_evaluate_task"),
    "policies/evaluation.py:policies_evaluate": "continuous evaluation judges the whole cluster for the system; readers see its states through assertion_state_list(scope)",
    "policies/evaluation.py:_baseline": "policies_evaluate's baseline of a policy on a cluster, for the system",
    "policies/evaluation.py:_record": "policies_evaluate stores each assertion's state, for the system",
    "policies/notify.py:deliveries_create": "an evaluation's events, for every receiver that covers them: the system's own work after the evaluation commits",
    **_each(
        "policies/receivers.py",
        "a matrix update's signal asks whether anything is to evaluate, for the system",
        "_anything_to_evaluate",
    ),
    **_each(
        "policies/webhooks.py",
        "the workers send every receiver's deliveries, for the system; no reader",
        "_claim",
        "deliveries_due",
    ),
    **_each(
        "policies/metrics.py",
        "the scrape's families, of the clusters the metrics reader reads whole (scope.q_whole)",
        "_assertion_families",
        "_delivery_families",
        "_isvc_family",
        "policy_families",
    ),
    **_each(
        "ome_dashboard/ops/metrics.py",
        "probes and /metrics: answer for the deployment (i19b/i22 decide what they show)",
        "_freshness_families",
        "_matrix_check_families",
        "_matrix_families",
        "_patch_families",
        "_sync_families",
    ),
    **_each(
        "ome_dashboard/ops/probes.py",
        "probes and /metrics: answer for the deployment (i19b/i22 decide what they show)",
        "_sync_ages",
        "check_freshness",
    ),
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    text: str
    qualname: str = ""  # the dotted name of the function or class it is in

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"

    def allowed_by(self, allowed: Iterable[str]) -> str | None:
        """The ALLOWED key that names its module, a folder holding it, or the function or class
        (or an enclosing one) it is in."""
        names = self.qualname.split(".") if self.qualname else []
        held = {self.path, *(f"{self.path}:{'.'.join(names[:depth])}" for depth in range(1, len(names) + 1))}
        return next((key for key in allowed if key in held or self.path.startswith(key + "/")), None)


def python_files(root: Path = ROOT) -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).parts
            if "migrations" in parts or ("management" in parts and "commands" in parts):
                continue
            yield path


def _class_sets_tenancy(node: ast.ClassDef) -> bool:
    return any(
        isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TENANCY" for t in item.targets)
        for item in node.body
    )


def _related_name(call: ast.Call, model: str) -> str | None:
    """The accessor a ForeignKey gives its target: related_name, or `<model>_set`; None for "+"."""
    for keyword in call.keywords:
        if keyword.arg == "related_name" and isinstance(keyword.value, ast.Constant):
            name = str(keyword.value.value)
            return None if name.endswith("+") else name
    return f"{model.lower()}_set"


def tenant_models(files: Iterable[Path]) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the models that set TENANCY, and the related managers that read them."""
    models: set[str] = set()
    related: set[str] = set()
    for path in files:
        if path.name != "models.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef) or not _class_sets_tenancy(node):
                continue
            models.add(node.name)
            for item in ast.walk(node):
                if (
                    isinstance(item, ast.Call)
                    and isinstance(item.func, ast.Attribute)
                    and item.func.attr in ("ForeignKey", "OneToOneField")
                    and (name := _related_name(item, node.name))
                ):
                    related.add(name)
    return frozenset(models), frozenset(related)


class _Reads(ast.NodeVisitor):
    def __init__(self, path: str, models: frozenset[str], related: frozenset[str]) -> None:
        self.path, self.models, self.related = path, models, related
        self.serves_readers = bool(SERVES_READERS.search(path))
        self.names: list[str] = []
        self.parents: dict[ast.AST, ast.AST] = {}
        self.found: list[Finding] = []

    def visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            self.parents[child] = node
        super().visit(node)

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.names.append(node.name)
        self.generic_visit(node)
        self.names.pop()

    visit_FunctionDef = _scoped
    visit_AsyncFunctionDef = _scoped
    visit_ClassDef = _scoped

    def _report(self, node: ast.AST, text: str) -> None:
        self.found.append(Finding(self.path, getattr(node, "lineno", 0), text, ".".join(self.names)))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        parent = self.parents.get(node)
        if isinstance(node.value, ast.Name) and node.value.id in self.models and node.attr != "TENANCY":
            used = parent.attr if isinstance(parent, ast.Attribute) else None
            if node.attr in ("objects", "_default_manager", "_base_manager") and used not in MANAGER_USES:
                self._report(
                    node,
                    f"{node.value.id}.{node.attr}.{used or '...'}: read a tenant's rows through "
                    f"{node.value.id}.objects.restrict(scope, action) or a selector that takes the scope",
                )
        elif (
            node.attr in self.related
            and isinstance(parent, ast.Attribute)
            and parent.attr in QUERYSET_METHODS
            # An object's own attribute of that name (a queryset it was given) is no related manager.
            and not (isinstance(node.value, ast.Name) and node.value.id == "self")
        ):
            self._report(
                node, f".{node.attr}.{parent.attr}: a related manager reads unscoped; use a selector with the scope"
            )
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        first = node.args[0] if node.args else None
        if name in ("get_object_or_404", "get_list_or_404") and isinstance(first, ast.Name) and first.id in self.models:
            self._report(node, f"{name}({first.id}, ...): pass a queryset from restrict(scope, action) or a selector")
        if name == "load_inventory" and self.serves_readers:
            self._report(
                node, "load_inventory(...): a reader's inventory comes through inventory_for(cluster, scope=...)"
            )
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "SYSTEM" and isinstance(node.ctx, ast.Load) and self.serves_readers:
            self._report(node, "SYSTEM: code that answers a reader reads with the reader's scope")
        self.generic_visit(node)


def check_source(path: str, source: str, models: frozenset[str], related: frozenset[str]) -> list[Finding]:
    visitor = _Reads(path, models, related)
    visitor.visit(ast.parse(source, path))
    return visitor.found


def check_template(path: str, text: str, related: frozenset[str]) -> list[Finding]:
    names = "|".join(sorted(related))
    pattern = re.compile(rf"\.({names})\.(all|count|exists|first|last|iterator)\b")
    return [
        Finding(
            path, text.count("\n", 0, match.start()) + 1, f"{match.group(0)}: templates get scoped data from the view"
        )
        for match in pattern.finditer(text)
    ]


def every_read(root: Path = ROOT) -> list[Finding]:
    """Every direct read of a tenant's rows in the project, allowed or not."""
    files = list(python_files(root))
    models, related = tenant_models(files)
    found: list[Finding] = []
    for path in files:
        found += check_source(str(path.relative_to(root)), path.read_text(), models, related)
    for path in sorted((root / "templates").rglob("*.html")):
        found += check_template(str(path.relative_to(root)), path.read_text(), related)
    return found


def check(root: Path = ROOT) -> tuple[list[Finding], list[str]]:
    """The reads ALLOWED does not name, and the ALLOWED entries that name no read (stale)."""
    found = every_read(root)
    used = {finding.allowed_by(ALLOWED) for finding in found}
    return [finding for finding in found if finding.allowed_by(ALLOWED) is None], sorted(set(ALLOWED) - used)


def main() -> int:
    unscoped, stale = check()
    for finding in unscoped:
        print(finding)
    for key in stale:
        print(f"scripts/check_reads.py: ALLOWED names {key!r}, which reads nothing unscoped now: remove it")
    if unscoped:
        print(f"{len(unscoped)} unscoped reads (the read path: access/restrict.py; allow-list: scripts/check_reads.py)")
    return 1 if unscoped or stale else 0


if __name__ == "__main__":
    sys.exit(main())
