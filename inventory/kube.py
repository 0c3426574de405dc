"""The one module that talks to the Kubernetes API: list, watch, get and merge-patch OME objects.

Everything here takes and returns plain dicts; errors come out as `KubeError` subclasses (each
with a machine-readable `code` and an HTTP `status`), never as client or urllib3 exceptions.
Credentials stay inside the client object: nothing here logs or stores them, and error messages
are built from the API's `Status` message, not from the exception's text (which carries headers).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any

import urllib3
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from core.errors import DomainError

from .models import CLUSTER_SCOPED, OME_GROUP, OME_VERSION, PLURALS, Cluster

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


class KubeError(DomainError):
    """A Kubernetes API call failed. `code` is stable for programs, `http_status` is the HTTP
    status to answer with, `message` is for people."""

    code = "kube_error"
    http_status = 502

    def __init__(self, message: str, *, http_status: int | None = None, cluster_wide: bool = False) -> None:
        super().__init__(message)
        if http_status is not None:
            self.http_status = http_status
        # True when every request to this API server would fail the same way (unreachable,
        # credentials refused), so there is no point asking about the other kinds.
        self.cluster_wide = cluster_wide


class KubeUnavailable(KubeError):
    """The API server cannot be reached, or answered 5xx/429: worth retrying later."""

    code = "unavailable"
    http_status = 503


class KubeUnauthorized(KubeError):
    """The API server refused the credentials (401) or the permission (403)."""

    code = "unauthorized"
    http_status = 401


class KubeNotFound(KubeError):
    """The object does not exist, or (on a list or watch) the CRD is not installed."""

    code = "not_found"
    http_status = 404


class KubeConflict(KubeError):
    """The object changed since the resourceVersion the caller sent (409)."""

    code = "conflict"
    http_status = 409


class KubeGone(KubeError):
    """The resourceVersion is too old (410): list again and watch from the new one."""

    code = "gone"
    http_status = 410


class KubeConfigError(KubeError):
    """The kubeconfig (or in-cluster service account) cannot be used to build a client."""

    code = "bad_config"
    http_status = 500


def client_for(cluster: Cluster) -> client.CustomObjectsApi:
    """A client for one cluster: its kubeconfig file and context, or the pod's service account.

    Each call builds a fresh configuration, so several clusters can be used side by side. Close it
    with `close()`.
    """
    try:
        if cluster.source == Cluster.Source.IN_CLUSTER:
            configuration = client.Configuration()
            config.load_incluster_config(client_configuration=configuration)
            api_client = client.ApiClient(configuration)
        elif cluster.source == Cluster.Source.KUBECONFIG:
            # persist_config=False: a refreshed token must never be written back to the file.
            api_client = config.new_client_from_config(
                config_file=cluster.kubeconfig, context=cluster.context or None, persist_config=False
            )
        else:
            raise KubeConfigError(f"cluster {cluster.name} is a manifest snapshot, not a live cluster")
    except ConfigException as error:
        raise KubeConfigError(f"cannot use {cluster.describe_source()}: {error}") from None
    except OSError as error:
        raise KubeConfigError(f"cannot read {cluster.describe_source()}: {error.strerror or error}") from None
    return client.CustomObjectsApi(api_client)


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
    """Our exception for a client or connection error. `collection`: the call was a list or a
    watch, where 404 means the resource type itself is not served."""
    if isinstance(error, urllib3.exceptions.ProtocolError):
        # The server accepted the request, then the connection broke (e.g. a watch stream cut).
        return KubeUnavailable(f"connection to the API server broke: {error}")
    if not isinstance(error, ApiException):
        reason = getattr(error, "reason", None) or error
        return KubeUnavailable(f"API server unreachable: {reason}", cluster_wide=True)
    status = int(error.status or 0)
    message = _status_message(error)
    if status == 401:
        return KubeUnauthorized("credentials refused (401)", http_status=401, cluster_wide=True)
    if status == 403:
        return KubeUnauthorized(f"permission denied (403): {message}", http_status=403)
    if status == 404:
        if collection:
            return KubeNotFound(f"OME CRD {plural} not installed (404)")
        return KubeNotFound(f"not found (404): {message}")
    if status == 409:
        return KubeConflict(f"conflict (409): {message}")
    if status == 410:
        return KubeGone(f"resourceVersion expired (410): {message}")
    if status == 429 or status >= 500:
        return KubeUnavailable(f"API server error ({status}): {message}", http_status=status)
    return KubeError(f"API request failed ({status}): {message}", http_status=status)


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
        items: list[dict[str, Any]] = []
        resource_version = ""
        token: str | None = None
        try:
            while True:
                page = call(limit=page_size, _continue=token, _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
                metadata = page.get("metadata") or {}
                # Every page carries the snapshot's resourceVersion; keep the first page's.
                resource_version = resource_version or str(metadata.get("resourceVersion") or "")
                items.extend(_with_identity(item, kind) for item in page.get("items") or [])
                token = metadata.get("continue") or None
                if not token:
                    return items, resource_version
        except _CLIENT_ERRORS as error:
            translated = _translated(error, plural=plural, collection=True)
            if isinstance(translated, KubeGone) and token is not None and attempt < LIST_RESTARTS:
                logger.info("list of %s: continue token expired; listing again", plural)
                continue
            raise translated from None
    raise AssertionError("unreachable")  # pragma: no cover


class WatchStream:
    """One watch request: iterate for `(type, object)` pairs, ADDED, MODIFIED, DELETED or BOOKMARK.

    The stream ends when the server closes it (after `timeout_seconds`) or after `stop()`, which
    may be called from another thread and ends a silent stream at once. An `ERROR` event (410
    Gone, ...) and a broken connection raise `KubeError`s.
    """

    def __init__(
        self,
        api: client.CustomObjectsApi,
        kind: str,
        resource_version: str,
        timeout_seconds: int,
        *,
        allow_bookmarks: bool = True,
        on_connect: Callable[[], None] | None = None,
    ) -> None:
        if timeout_seconds < 1:
            raise ValueError("a watch needs timeout_seconds >= 1, or the client re-watches forever")
        self.kind = kind
        self.resource_version = resource_version
        self.timeout_seconds = int(timeout_seconds)
        self.allow_bookmarks = allow_bookmarks
        self._call = _collection_call(api, kind)
        self._on_connect = on_connect
        self._watch = watch.Watch()
        self._stopped = False
        self._response: Any = None

    def _connected_call(self) -> Callable[..., Any]:
        list_call = self._call.func

        # Watch.stream reads the return type and the parameter names from the function it is
        # given; functools.wraps keeps both. The wrapper keeps the response, so that stop() can
        # end it even before Watch.stream has it, and runs the "connected" hook.
        @functools.wraps(list_call)
        def call(*args: Any, **kwargs: Any) -> Any:
            response = list_call(*args, **kwargs)
            self._response = response
            if self._stopped:
                _shut_down(response)
            elif self._on_connect is not None and 200 <= getattr(response, "status", 0) < 300:
                self._on_connect()
            return response

        return call

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        plural = PLURALS[self.kind]
        try:
            for event in self._watch.stream(
                self._connected_call(),
                *self._call.args,
                resource_version=self.resource_version or None,
                timeout_seconds=self.timeout_seconds,
                allow_watch_bookmarks=self.allow_bookmarks,
                _request_timeout=(CONNECT_TIMEOUT, self.timeout_seconds + WATCH_READ_MARGIN),
            ):
                obj = event.get("raw_object")
                if isinstance(obj, dict):
                    if event["type"] != "BOOKMARK":
                        _with_identity(obj, self.kind)
                    yield event["type"], obj
                if self._stopped:
                    return
        except _CLIENT_ERRORS as error:
            if self._stopped:
                # stop() shuts the socket down under the reading thread; that is no error.
                return
            raise _translated(error, plural=plural, collection=True) from None

    def stop(self) -> None:
        """End the stream; safe from any thread, at any moment (before, during or after it)."""
        self._stopped = True
        if self._response is not None:
            _shut_down(self._response)
        self._watch.stop()


def _shut_down(response: Any) -> None:
    # Shutting the socket down wakes a thread blocked reading it (closing it would not).
    sock = getattr(getattr(response, "connection", None), "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def watch_kind(
    api: client.CustomObjectsApi,
    kind: str,
    resource_version: str,
    timeout_seconds: int,
    allow_bookmarks: bool = True,
    *,
    on_connect: Callable[[], None] | None = None,
) -> WatchStream:
    """Watch one kind (all namespaces) from `resource_version`; iterate the result for
    `(type, object)` pairs. `on_connect` runs once the server has accepted the watch."""
    return WatchStream(
        api, kind, resource_version, timeout_seconds, allow_bookmarks=allow_bookmarks, on_connect=on_connect
    )


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
