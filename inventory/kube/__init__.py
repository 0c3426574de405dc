"""The one module that talks to the Kubernetes API: list, watch, get and merge-patch OME objects.

Everything here takes and returns plain dicts; errors come out as `KubeError` subclasses (each
with a machine-readable `code` and an HTTP `status`), never as client or urllib3 exceptions.
Credentials stay inside the client object: nothing here logs or stores them. Error messages
are fixed texts with a code (and the HTTP status); the client's own text, which can carry a
kubeconfig's user entry or headers, goes to the log only, redacted (core.redact).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from collections.abc import Iterator
from typing import Any

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.kube_config import KubeConfigLoader

from core.redact import redact

# The errors live in kube_errors; callers catch them as kube.KubeError and so on.
from ..kube_errors import (
    KubeConfigError,
    KubeConflict,
    KubeError,
    KubeGone,
    KubeNotFound,
    KubeUnauthorized,
    KubeUnavailable,
)
from ..kubeconfigs import KubeconfigInvalid
from ..models import CLUSTER_SCOPED, OME_GROUP, OME_VERSION, PLURALS, Cluster

logger = logging.getLogger(__name__)

API_VERSION = f"{OME_GROUP}/{OME_VERSION}"
# client-go's default page size for lists.
LIST_PAGE_SIZE = 500
# Seconds to open a connection, and to wait for a (non-watch) response.
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 60.0
# A watch is silent while nothing changes; the server ends it after timeout_seconds, so a read
# that blocks longer than that (plus this margin) means the connection died without a FIN.
WATCH_READ_MARGIN = 15.0
# A continue token can expire (410) during a long paginated list; start over this many times.
LIST_RESTARTS = 2


def client_for(cluster: Cluster, *, impersonate: tuple[str, tuple[str, ...]] | None = None) -> client.CustomObjectsApi:
    """A client for one cluster (see `configuration_for`). With `impersonate` = (user, groups)
    every request carries Impersonate-User and one Impersonate-Group per group, so the
    cluster's RBAC decides as for that user. Close it with `close()`."""
    api_client = client.ApiClient(configuration_for(cluster))
    if impersonate is not None:
        _impersonating(api_client, *impersonate)
    return client.CustomObjectsApi(api_client)


def configuration_for(cluster: Cluster) -> client.Configuration:
    """The client configuration of one cluster, from what its source gives (inventory.sources):
    a kubeconfig in memory (a file's context, an Argo CD cluster Secret read from the hub now)
    or the pod's service account.

    Each call builds a fresh configuration, so several clusters can be used side by side. The
    kubeconfig is never merged with other files, and no credential is written anywhere.
    """
    configuration = client.Configuration()
    with configuring(cluster):
        found = cluster.registered_source.client_config(cluster)
        if found.kubeconfig is None:
            config.load_incluster_config(client_configuration=configuration)
        else:
            # No persister: a refreshed token must never be written back to the file.
            KubeConfigLoader(
                config_dict=found.kubeconfig, active_context=found.context, config_base_path=found.base_path
            ).load_and_set(configuration)
    return configuration


@contextlib.contextmanager
def configuring(cluster: Cluster) -> Iterator[None]:
    """Around building a client (blocking or asyncio): every loader error becomes a KubeConfigError
    with a fixed text (config_failed), a kubeconfig refused by inventory.kubeconfigs says why,
    and our own errors (an Argo CD hub's) pass unchanged."""
    try:
        yield
    except KubeconfigInvalid as error:
        raise KubeConfigError(error.message) from None
    except KubeError:
        raise
    except Exception as error:
        raise config_failed(cluster, error) from None


def config_failed(cluster: Cluster, error: Exception) -> KubeConfigError:
    """The error for whatever a client loader raises (ConfigException, OSError, a token
    refresh's network error, ...): a fixed text, since the loader's text can hold the
    kubeconfig's whole user entry (client-secret, tokens). The detail goes to the log, redacted."""
    logger.warning("cluster %s: cannot configure a client: %s", cluster.name, redact(str(error)))
    return KubeConfigError(
        f"cannot use {cluster.describe_source()}: its credentials cannot be loaded (bad_config; details in the log)"
    )


def _impersonating(api_client: client.ApiClient, user: str, groups: tuple[str, ...]) -> None:
    """Every request of `api_client` carries the impersonation headers. The generated client
    keeps headers in a dict (one value per name); urllib3's HTTPHeaderDict sends the repeated
    Impersonate-Group the API server expects."""
    rest = api_client.rest_client
    send = rest.request

    def request(method: str, url: str, headers: Any = None, *args: Any, **kwargs: Any) -> Any:
        merged = urllib3.HTTPHeaderDict(headers or {})
        merged["Impersonate-User"] = user
        for group in groups:
            merged.add("Impersonate-Group", group)
        return send(method, url, merged, *args, **kwargs)

    rest.request = request  # type: ignore[method-assign]


def subject_access_review(
    api: client.CustomObjectsApi, *, user: str, groups: tuple[str, ...], verb: str, kind: str, namespace: str, name: str
) -> tuple[bool, str]:
    """Ask the cluster whether `user` (in `groups`) may `verb` the object: (allowed, reason).
    Sent with the dashboard's own credentials, which need `create` on subjectaccessreviews."""
    attributes = {"group": OME_GROUP, "version": OME_VERSION, "resource": PLURALS[kind], "verb": verb, "name": name}
    if kind not in CLUSTER_SCOPED:
        attributes["namespace"] = namespace
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": list(groups), "resourceAttributes": attributes},
    }
    try:
        # The generated client serializes a plain dict as it does its own model objects.
        review = client.AuthorizationV1Api(api.api_client).create_subject_access_review(
            body,  # type: ignore[arg-type]
            _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT),
        )
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural="subjectaccessreviews", collection=False) from None
    status = review.status
    allowed = bool(status is not None and status.allowed and not status.denied)
    reason = str((status.reason if status is not None else "") or "")
    return allowed, redact(reason)[:500]


def probe(api: client.CustomObjectsApi) -> tuple[str, dict[str, str | None]]:
    """A connection test: the API server's version, and for each OME kind None when a list of
    it can be read, else why not (one object per list: enough to know, cheap on a big cluster)."""
    try:
        version = client.VersionApi(api.api_client).get_code(_request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural="version", collection=False) from None
    readable: dict[str, str | None] = {}
    for kind in PLURALS:
        try:
            _collection_call(api, kind)(limit=1, _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
            readable[kind] = None
        except _CLIENT_ERRORS as error:
            readable[kind] = _translated(error, plural=PLURALS[kind], collection=True).message
    return str(version.git_version), readable


def close(api: client.CustomObjectsApi) -> None:
    api.api_client.close()


def _status_message(error: ApiException) -> str:
    """The `message` of the Status object the API server answered with, or the HTTP reason."""
    if error.body:
        try:
            body = json.loads(error.body)
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            return str(body["message"])
    return str(error.reason or "").strip() or "no message"


def _translated(error: Exception, *, plural: str, collection: bool) -> KubeError:
    """Our exception for a client or connection error: a fixed message per case (with the
    HTTP status), never the client's text. That text (the Status message, the connection error,
    which may name hosts, users or headers) is logged, redacted. `collection`: the call was a
    list or a watch, where 404 means the resource type itself is not served."""
    logger.info("Kubernetes API error on %s: %s", plural, redact(_detail(error)))
    if isinstance(error, urllib3.exceptions.ProtocolError):
        # The server accepted the request, then the connection broke (e.g. a watch stream cut).
        return KubeUnavailable("connection to the API server broke (unavailable)")
    if not isinstance(error, ApiException):
        return KubeUnavailable(f"API server unreachable ({type(error).__name__})", cluster_wide=True)
    status = int(error.status or 0)
    if status == 401:
        return KubeUnauthorized("credentials refused (401)", http_status=401, cluster_wide=True)
    if status == 403:
        return KubeUnauthorized(f"permission denied on {plural} (403)", http_status=403)
    if status == 404:
        if collection:
            return KubeNotFound(f"OME CRD {plural} not installed (404)")
        return KubeNotFound(f"{plural}: not found (404)")
    if status == 409:
        return KubeConflict(f"{plural}: conflict (409), the object was modified")
    if status == 410:
        return KubeGone("resourceVersion expired (410)")
    if status == 429 or status >= 500:
        return KubeUnavailable(f"API server error ({status})", http_status=status)
    return KubeError(f"API request failed ({status})", http_status=status)


def _detail(error: Exception) -> str:
    if isinstance(error, ApiException):
        return f"{error.status} {_status_message(error)}"
    return f"{type(error).__name__}: {getattr(error, 'reason', None) or error}"


# What the client raises: ApiException for HTTP errors; urllib3 errors (MaxRetryError,
# ProtocolError, ReadTimeoutError, ...) and OSError for connections that fail or break.
_CLIENT_ERRORS = (ApiException, urllib3.exceptions.HTTPError, OSError)


def _collection_call(api: client.CustomObjectsApi, kind: str) -> functools.partial[Any]:
    if kind in CLUSTER_SCOPED:
        return functools.partial(api.list_cluster_custom_object, OME_GROUP, OME_VERSION, PLURALS[kind])
    return functools.partial(api.list_custom_object_for_all_namespaces, OME_GROUP, OME_VERSION, PLURALS[kind])


def _with_identity(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    # A real apiserver includes kind and apiVersion in each item of a custom resource list, but
    # list items of other servers (and old ones) may leave them out.
    obj.setdefault("kind", kind)
    obj.setdefault("apiVersion", API_VERSION)
    return obj


class ListedPages:
    """The pages of one list of a kind, gathered (for the blocking and the asyncio client)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.items: list[dict[str, Any]] = []
        self.resource_version = ""

    def add(self, page: dict[str, Any]) -> str | None:
        """Take one page; returns the continue token for the next, None after the last page."""
        metadata = page.get("metadata") or {}
        # Every page carries the snapshot's resourceVersion; keep the first page's.
        self.resource_version = self.resource_version or str(metadata.get("resourceVersion") or "")
        self.items.extend(_with_identity(item, self.kind) for item in page.get("items") or [])
        return metadata.get("continue") or None


def list_kind(
    api: client.CustomObjectsApi, kind: str, *, page_size: int = LIST_PAGE_SIZE
) -> tuple[list[dict[str, Any]], str]:
    """Every object of one kind (all namespaces) and the list's resourceVersion, to watch from.

    Pages through the list with limit/continue; the pages form one consistent snapshot. A
    continue token that expires midway (410) restarts the list from the first page.
    """
    plural = PLURALS[kind]
    call = _collection_call(api, kind)
    for attempt in range(LIST_RESTARTS + 1):
        pages, token = ListedPages(kind), None
        try:
            while True:
                page = call(limit=page_size, _continue=token, _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
                if (token := pages.add(page)) is None:
                    return pages.items, pages.resource_version
        except _CLIENT_ERRORS as error:
            translated = _translated(error, plural=plural, collection=True)
            if isinstance(translated, KubeGone) and token is not None and attempt < LIST_RESTARTS:
                logger.info("list of %s: continue token expired; listing again", plural)
                continue
            raise translated from None
    raise AssertionError("unreachable")  # pragma: no cover


def get_object(api: client.CustomObjectsApi, kind: str, namespace: str, name: str) -> dict[str, Any]:
    plural = PLURALS[kind]
    try:
        if kind in CLUSTER_SCOPED:
            obj = api.get_cluster_custom_object(
                OME_GROUP, OME_VERSION, plural, name, _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT)
            )
        else:
            obj = api.get_namespaced_custom_object(
                OME_GROUP, OME_VERSION, namespace, plural, name, _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT)
            )
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural=plural, collection=False) from None
    return _with_identity(_as_dict(obj), kind)


def patch_object(
    api: client.CustomObjectsApi,
    kind: str,
    namespace: str,
    name: str,
    merge_patch: dict[str, Any],
    *,
    timeout: float = 10.0,
) -> dict[str, Any]:
    """Apply a JSON merge patch (RFC 7386) and return the object as stored.

    Put `metadata.resourceVersion` into the patch to make it conditional: the API server then
    answers 409 (`KubeConflict`) if the object changed since. A merge patch replaces lists whole.
    """
    plural = PLURALS[kind]
    options: dict[str, Any] = {
        "_content_type": "application/merge-patch+json",
        "_request_timeout": (CONNECT_TIMEOUT, timeout),
    }
    try:
        if kind in CLUSTER_SCOPED:
            obj = api.patch_cluster_custom_object(OME_GROUP, OME_VERSION, plural, name, merge_patch, **options)
        else:
            obj = api.patch_namespaced_custom_object(
                OME_GROUP, OME_VERSION, namespace, plural, name, merge_patch, **options
            )
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural=plural, collection=False) from None
    return _with_identity(_as_dict(obj), kind)


def _as_dict(obj: object) -> dict[str, Any]:
    # Custom objects come back as the decoded JSON: a dict for any object the API returns.
    if not isinstance(obj, dict):
        raise KubeError(f"API answered with {type(obj).__name__}, not an object")
    return obj


def read_object(api: client.CustomObjectsApi, plural: str, namespace: str, name: str) -> dict[str, Any]:
    """A Deployment (`plural="deployments"`) or a CRD (`"customresourcedefinitions"`, cluster
    scoped) as a plain dict: what tells a cluster's OME release (inventory.ome_release)."""
    timeout = (CONNECT_TIMEOUT, READ_TIMEOUT)
    obj: object
    try:
        if plural == "deployments":
            obj = client.AppsV1Api(api.api_client).read_namespaced_deployment(name, namespace, _request_timeout=timeout)
        else:
            obj = client.ApiextensionsV1Api(api.api_client).read_custom_resource_definition(
                name, _request_timeout=timeout
            )
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural=plural, collection=False) from None
    return _as_dict(api.api_client.sanitize_for_serialization(obj))
