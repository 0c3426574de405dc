"""The Policy Report objects OME Compat writes into a cluster (reports/): list ours by label,
create, replace and delete them, with the cluster's own credentials (`client_for`).

`wgpolicyk8s.io/v1alpha2` `PolicyReport` (namespaced) and `ClusterPolicyReport` (cluster
scope): the API Policy Reporter, Headlamp and Kyverno read today (docs/reports.md says why not
yet `openreports.io`). Errors come out as `KubeError` subclasses, as for the OME kinds.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from . import _CLIENT_ERRORS, CONNECT_TIMEOUT, READ_TIMEOUT, KubeNotFound, _as_dict, _translated

REPORT_GROUP = "wgpolicyk8s.io"
REPORT_VERSION = "v1alpha2"
REPORT_API_VERSION = f"{REPORT_GROUP}/{REPORT_VERSION}"
REPORT_PLURALS = {"PolicyReport": "policyreports", "ClusterPolicyReport": "clusterpolicyreports"}
_TIMEOUT = (CONNECT_TIMEOUT, READ_TIMEOUT)


def reports_list(api: client.CustomObjectsApi, kind: str, *, label_selector: str) -> list[dict[str, Any]]:
    """Every report of `kind` (all namespaces) that the label selector matches."""
    plural = REPORT_PLURALS[kind]
    try:
        if kind == "ClusterPolicyReport":
            listed = api.list_cluster_custom_object(
                REPORT_GROUP, REPORT_VERSION, plural, label_selector=label_selector, _request_timeout=_TIMEOUT
            )
        else:
            listed = api.list_custom_object_for_all_namespaces(
                REPORT_GROUP, REPORT_VERSION, plural, label_selector=label_selector, _request_timeout=_TIMEOUT
            )
    except _CLIENT_ERRORS as error:
        translated = _translated(error, plural=plural, collection=False)
        if isinstance(translated, KubeNotFound):
            raise KubeNotFound(f"the Policy Report CRD {plural}.{REPORT_GROUP} is not installed (404)") from None
        raise translated from None
    return list(_as_dict(listed).get("items") or [])


def report_create(api: client.CustomObjectsApi, report: dict[str, Any]) -> dict[str, Any]:
    kind, namespace = report["kind"], report["metadata"].get("namespace", "")
    plural = REPORT_PLURALS[kind]
    try:
        if kind == "ClusterPolicyReport":
            created = api.create_cluster_custom_object(
                REPORT_GROUP, REPORT_VERSION, plural, report, _request_timeout=_TIMEOUT
            )
        else:
            created = api.create_namespaced_custom_object(
                REPORT_GROUP, REPORT_VERSION, namespace, plural, report, _request_timeout=_TIMEOUT
            )
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural=plural, collection=False) from None
    return _as_dict(created)


def report_replace(api: client.CustomObjectsApi, report: dict[str, Any]) -> dict[str, Any]:
    """PUT the report; its `metadata.resourceVersion` (the one listed) makes it conditional: a
    report changed since answers 409 (`KubeConflict`)."""
    kind, metadata = report["kind"], report["metadata"]
    plural = REPORT_PLURALS[kind]
    try:
        if kind == "ClusterPolicyReport":
            replaced = api.replace_cluster_custom_object(
                REPORT_GROUP, REPORT_VERSION, plural, metadata["name"], report, _request_timeout=_TIMEOUT
            )
        else:
            replaced = api.replace_namespaced_custom_object(
                REPORT_GROUP,
                REPORT_VERSION,
                metadata["namespace"],
                plural,
                metadata["name"],
                report,
                _request_timeout=_TIMEOUT,
            )
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural=plural, collection=False) from None
    return _as_dict(replaced)


def report_delete(api: client.CustomObjectsApi, kind: str, namespace: str, name: str, *, uid: str) -> None:
    """Delete the report with this uid only (a precondition): a report re-created by someone
    else under the same name is not ours to delete."""
    plural = REPORT_PLURALS[kind]
    body = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=uid))
    try:
        if kind == "ClusterPolicyReport":
            api.delete_cluster_custom_object(
                REPORT_GROUP, REPORT_VERSION, plural, name, body=body, _request_timeout=_TIMEOUT
            )
        else:
            api.delete_namespaced_custom_object(
                REPORT_GROUP, REPORT_VERSION, namespace, plural, name, body=body, _request_timeout=_TIMEOUT
            )
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural=plural, collection=False) from None
