"""The asyncio side of inventory.kube: lists and watches for the watch hub (inventory.live.hub).

Built on `kubernetes.aio`, the asyncio client that ships inside the pinned `kubernetes` package
(same generated API, same kubeconfig and in-cluster loading, on aiohttp), so that one event loop
can hold the watches of many clusters: a silent watch costs a coroutine and a socket, not a
thread. Errors come out as the same `KubeError` subclasses as the blocking client's, built by
the same status mapping, and credentials stay inside the client object as there.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import aiohttp
from kubernetes.aio import client, config
from kubernetes.aio.client.exceptions import ApiException
from kubernetes.aio.config.kube_config import KubeConfigLoader
from kubernetes.client.exceptions import ApiException as BlockingApiException

from core.redact import redact

from ..models import CLUSTER_SCOPED, OME_GROUP, OME_VERSION, PLURALS, Cluster
from . import (
    LIST_PAGE_SIZE,
    LIST_RESTARTS,
    READ_TIMEOUT,
    WATCH_READ_MARGIN,
    KubeError,
    KubeGone,
    KubeUnavailable,
    ListedPages,
    _translated,
    _with_identity,
    configuring,
)

logger = logging.getLogger(__name__)

# What aiohttp raises for connections that fail, break or time out.
_CONNECTION_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError, OSError)


async def client_for(cluster: Cluster) -> client.CustomObjectsApi:
    """An asyncio client for one cluster, configured as inventory.kube.client_for does (the
    kubeconfig read by inventory.kubeconfigs, never merged; errors as fixed texts); close it
    with `close()`."""
    configuration = client.Configuration()
    with configuring(cluster):
        # The source may read a file or the Argo CD hub: off the event loop.
        found = await asyncio.to_thread(cluster.registered_source.client_config, cluster)
        if found.kubeconfig is None:
            config.load_incluster_config(client_configuration=configuration)
        else:
            loader = KubeConfigLoader(
                config_dict=found.kubeconfig, active_context=found.context, config_base_path=found.base_path
            )
            await loader.load_and_set(configuration)
    return client.CustomObjectsApi(client.ApiClient(configuration))


async def close(api: client.CustomObjectsApi) -> None:
    await api.api_client.close()


def _http_error(status: int, reason: str | None, body: str | None, *, plural: str) -> KubeError:
    # The blocking client's translation, so that both clients raise the same errors and texts.
    return _translated(BlockingApiException(status=status, reason=reason, body=body), plural=plural, collection=True)


def _translated_aio(error: BaseException, *, plural: str) -> KubeError:
    """As the blocking client's `_translated`: fixed texts, the client's own text to the log only."""
    if isinstance(error, ApiException):
        return _http_error(int(error.status or 0), error.reason, error.body, plural=plural)
    logger.info("Kubernetes API error on %s: %s", plural, redact(f"{type(error).__name__}: {error}"))
    if isinstance(error, asyncio.TimeoutError):
        return KubeUnavailable("API server did not answer in time")
    if isinstance(error, (aiohttp.ClientConnectorError, ConnectionRefusedError)):
        return KubeUnavailable(f"API server unreachable ({type(error).__name__})", cluster_wide=True)
    return KubeUnavailable("connection to the API server broke (unavailable)")


def _collection_call(api: client.CustomObjectsApi, kind: str, *, raw: bool) -> Callable[..., Awaitable[Any]]:
    plural = PLURALS[kind]
    suffix = "_without_preload_content" if raw else ""
    if kind in CLUSTER_SCOPED:
        call = getattr(api, f"list_cluster_custom_object{suffix}")
    else:
        call = getattr(api, f"list_custom_object_for_all_namespaces{suffix}")

    def bound(**kwargs: Any) -> Awaitable[Any]:
        return call(OME_GROUP, OME_VERSION, plural, **kwargs)

    return bound


async def list_kind(
    api: client.CustomObjectsApi, kind: str, *, page_size: int = LIST_PAGE_SIZE
) -> tuple[list[dict[str, Any]], str]:
    """Every object of one kind and the list's resourceVersion; as inventory.kube.list_kind."""
    plural = PLURALS[kind]
    call = _collection_call(api, kind, raw=False)
    for attempt in range(LIST_RESTARTS + 1):
        pages, token = ListedPages(kind), None
        try:
            while True:
                page = await call(limit=page_size, _continue=token, _request_timeout=READ_TIMEOUT)
                if (token := pages.add(page)) is None:
                    return pages.items, pages.resource_version
        except (ApiException, *_CONNECTION_ERRORS) as error:
            translated = _translated_aio(error, plural=plural)
            if isinstance(translated, KubeGone) and token is not None and attempt < LIST_RESTARTS:
                continue
            raise translated from None
    raise AssertionError("unreachable")  # pragma: no cover


async def watch_kind(
    api: client.CustomObjectsApi,
    kind: str,
    resource_version: str,
    timeout_seconds: int,
    *,
    allow_bookmarks: bool = True,
    on_connect: Callable[[], Awaitable[None]] | None = None,
) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
    """One watch request: yields `(type, object)` for ADDED, MODIFIED, DELETED and BOOKMARK until
    the server ends the stream (after `timeout_seconds`). An ERROR event (410 Gone, ...), an error
    answer and a broken, refused or silent connection raise `KubeError`s. Cancel the task that
    iterates it to stop at once; `on_connect` is awaited once the server accepted the watch.
    """
    if timeout_seconds < 1:
        raise ValueError("a watch needs timeout_seconds >= 1")
    plural = PLURALS[kind]
    call = _collection_call(api, kind, raw=True)
    try:
        # The whole request is bounded: the server ends a watch after timeout_seconds, so a
        # stream still open well past that belongs to a hung server or a dead connection.
        response = await call(
            watch=True,
            resource_version=resource_version or None,
            timeout_seconds=int(timeout_seconds),
            allow_watch_bookmarks=allow_bookmarks,
            _request_timeout=float(timeout_seconds + WATCH_READ_MARGIN),
        )
    except (ApiException, *_CONNECTION_ERRORS) as error:
        raise _translated_aio(error, plural=plural) from None
    try:
        if response.status >= 300:
            body = (await response.read()).decode(errors="replace")
            raise _http_error(response.status, response.reason, body, plural=plural)
        if on_connect is not None:
            await on_connect()
        while line := await response.content.readline():
            event = _event(line, kind)
            if event is not None:
                yield event
    except _CONNECTION_ERRORS as error:
        raise _translated_aio(error, plural=plural) from None
    finally:
        response.release()


def _event(line: bytes, kind: str) -> tuple[str, dict[str, Any]] | None:
    plural = PLURALS[kind]
    try:
        event = json.loads(line)
    except ValueError:
        raise KubeUnavailable(f"watch of {plural} sent a line that is not JSON") from None
    obj = event.get("object") if isinstance(event, dict) else None
    if not isinstance(obj, dict):
        return None
    if event.get("type") == "ERROR":
        raise _http_error(int(obj.get("code") or 500), str(obj.get("reason") or ""), json.dumps(obj), plural=plural)
    if event.get("type") != "BOOKMARK":
        _with_identity(obj, kind)
    return str(event.get("type")), obj
