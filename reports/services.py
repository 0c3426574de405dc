"""Write a cluster's findings into it as PolicyReports (docs/reports.md), with the cluster's
own credentials, touching only our reports: those with our label and our name.

A report that changed is replaced (conditional on the resourceVersion listed), a namespace that
no longer has findings has its report deleted (conditional on its uid), and a report of ours
that is already right is left alone. A namespace whose report name is taken by an object
without our label is left alone too: the create is refused (409) and said in the outcome.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from inventory import kube
from inventory.kube.reports import REPORT_PLURALS, report_create, report_delete, report_replace, reports_list
from inventory.models import Cluster

from .build import MANAGED_BY_SELECTOR, REPORT_NAME, reports_build
from .findings import cluster_findings

logger = logging.getLogger(__name__)

# What a replace compares: a report whose findings, labels and annotations are the same is not written.
_COMPARED = ("results", "summary")
_COMPARED_METADATA = ("labels", "annotations")


@dataclass
class ReportsOutcome:
    created: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        return {name: list(getattr(self, name)) for name in ("created", "replaced", "deleted", "unchanged", "refused")}


def _where(kind: str, namespace: str) -> str:
    return f"{kind} {namespace}/{REPORT_NAME}" if namespace else f"{kind} {REPORT_NAME}"


def _same(listed: dict[str, Any], wanted: dict[str, Any]) -> bool:
    metadata, wanted_metadata = listed.get("metadata") or {}, wanted["metadata"]
    return all(listed.get(key) == wanted.get(key) for key in _COMPARED) and all(
        metadata.get(key) == wanted_metadata.get(key) for key in _COMPARED_METADATA
    )


def _ours(api: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """Our reports in the cluster: our label (the list asks for it) and our name."""
    found = {}
    for kind in REPORT_PLURALS:
        for report in reports_list(api, kind, label_selector=MANAGED_BY_SELECTOR):
            metadata = report.get("metadata") or {}
            if metadata.get("name") == REPORT_NAME:
                found[(kind, str(metadata.get("namespace") or ""))] = report
    return found


def _write(
    api: Any, where: tuple[str, str], wanted: dict[str, Any], listed: dict[str, Any] | None, done: ReportsOutcome
) -> None:
    name = _where(*where)
    try:
        if listed is None:
            report_create(api, wanted)
            done.created.append(name)
        elif _same(listed, wanted):
            done.unchanged.append(name)
        else:
            wanted["metadata"]["resourceVersion"] = listed["metadata"]["resourceVersion"]
            report_replace(api, wanted)
            done.replaced.append(name)
    except kube.KubeConflict as error:
        # Someone else's object holds the name, or ours changed since the list: leave it.
        done.refused.append(f"{name}: {error.message}")


def reports_write(cluster: Cluster) -> ReportsOutcome:
    """Make the cluster's reports match its findings now. Only for a live cluster that opted
    in (`Cluster.policy_reports`); raises KubeError when the cluster cannot be reached."""
    done = ReportsOutcome()
    if not (cluster.policy_reports and cluster.is_live):
        return done
    wanted = reports_build(cluster_findings(cluster))
    api = kube.client_for(cluster)
    try:
        listed = _ours(api)
        for where, report in sorted(wanted.items()):
            _write(api, where, report, listed.get(where), done)
        for (kind, namespace), report in sorted(listed.items()):
            if (kind, namespace) not in wanted:
                _delete(api, kind, namespace, report, done)
    finally:
        kube.close(api)
    return done


def _delete(api: Any, kind: str, namespace: str, report: dict[str, Any], done: ReportsOutcome) -> None:
    name = _where(kind, namespace)
    try:
        report_delete(api, kind, namespace, REPORT_NAME, uid=str(report["metadata"].get("uid") or ""))
    except kube.KubeNotFound:
        pass  # deleted since the list: what was wanted
    except kube.KubeConflict as error:
        done.refused.append(f"{name}: {error.message}")
        return
    done.deleted.append(name)
