"""MCP over streamable HTTP (docs/mcp.md): the assistant's tools of `ome-compat mcp`
(matching.mcp_tools), each with a `cluster` argument, answering about the part of that cluster
the caller's API token reads, and for a token that may patch the one tool that writes:
`apply_pipeline_patch`, through the one patch service (patches.assistant), audit included. A
read-only token's server has no such tool at all.

The dashboard runs under gunicorn's WSGI workers, so the SDK's ASGI app is not mounted: each
POST is served whole by a fresh server in the SDK's stateless JSON-response mode (no session
to keep between requests or workers, no stream left open), bridged by asgiref as Django bridges
async code; the tools' reads run back on the request's thread, on its database connection.

Only `Authorization: Bearer <key>` (or `Token <key>`) authenticates: a session cookie does not,
so the endpoint is CSRF-exempt (DRF's APIView) without opening it to a browser's forged call.
It is not in the OpenAPI document: it speaks JSON-RPC (MCP), not the API's shapes."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

import matching
from access.current import scope_of
from access.scope import Scope
from access.tokens import ApiTokenAuthentication, BearerApiTokenAuthentication
from core.errors import DomainError
from fleet.assistant import model_reach
from inventory.assistant import assistant_tree
from patches.apply import User
from patches.assistant import may_patch_somewhere, planned_patch_apply

# The argument every tool about one cluster takes before its own: the cluster's name.
CLUSTER = inspect.Parameter("cluster", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)
# How a tool runs its work: back on the request's thread, for the ORM.
Run = Callable[[Callable[[], Any]], Awaitable[Any]]


def server_for(scope: Scope, user: User) -> Any:
    """A server whose tools answer within `scope`: the assistant's tools about one cluster, and
    where a model can run across the clusters `scope` reads whole; when `scope` may patch
    somewhere, the applying tool too, acting as `user`."""
    server = matching.assistant_server()
    on_request_thread: Run = sync_to_async(lambda work: work(), thread_sensitive=True)
    matching.add_assistant_tools(
        server, lambda cluster: assistant_tree(cluster, scope=scope), leading=[CLUSTER], run=on_request_thread
    )
    add_reach_tool(server, scope, on_request_thread)
    if may_patch_somewhere(scope):
        add_applying_tool(server, scope, user, on_request_thread)
    return server


def add_reach_tool(server: Any, scope: Scope, run: Run) -> None:
    """`where_can_this_model_run`: the fleet page's rows of one model."""
    from mcp.server.mcpserver.exceptions import ToolError

    async def where_can_this_model_run(model: str) -> dict[str, Any]:
        """Where OME would serve a model (`name` or `namespace/name`) across the fleet: in each
        cluster you may read whole and each namespace, the runtime OME auto-selects, or none,
        and why the clusters disagree."""
        found = await run(lambda: model_reach(model, scope=scope))
        if found is None:
            raise ToolError(f"model {model!r}: no model of that name in the clusters you read whole")
        return found

    server.add_tool(where_can_this_model_run, annotations=matching.assistant_annotations())


def add_applying_tool(server: Any, scope: Scope, user: User, run: Run) -> None:
    """`apply_pipeline_patch`: not read-only, not destructive (it sets spec.diffusionPipeline
    only), idempotent (once applied, the same call finds nothing to patch)."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    def work(cluster: str, model: str, runtime: str) -> dict[str, Any]:
        try:
            outcome = planned_patch_apply(cluster, model, runtime, user=user, scope=scope)
        except DomainError as error:
            raise ToolError(error.message) from None
        attempt = outcome.attempt
        if not outcome.ok:
            raise ToolError(f"{attempt.result}: {attempt.detail} (audit record {attempt.pk})")
        return {
            "result": attempt.result,
            "detail": attempt.detail,
            "target": attempt.target,
            "model": matching.key_dict(attempt.model_key),
            "runtime": attempt.runtime,
            "patch": attempt.patch,
            "resourceVersion": outcome.resource_version,
            "auditRecord": attempt.pk,
        }

    async def apply_pipeline_patch(cluster: str, model: str, runtime: str) -> dict[str, Any]:
        """Applies the one-click patch the dashboard offers for a model that a runtime excludes
        for its diffusion pipeline ("Make this model match"): the smallest
        `spec.diffusionPipeline` merge patch that makes `model` pass `runtime` on `cluster`
        (each `name`, `Kind/name` or `Kind/namespace/name`), with your rights (the patcher role,
        or the cluster's RBAC), recorded in the audit log."""
        return await run(lambda: work(cluster, model, runtime))

    annotations = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    server.add_tool(apply_pipeline_patch, annotations=annotations)


def asgi_scope(request: HttpRequest) -> dict[str, Any]:
    """The ASGI HTTP scope of a Django request, for the SDK's transport."""
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in request.headers.items()]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": "",
        "headers": headers,
        "server": (request.get_host(), int(request.get_port())),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


async def exchange(server: Any, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """(status, headers, body) of the SDK's stateless JSON-response transport for one request."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    # Django's ALLOWED_HOSTS has checked the Host header already.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    manager = StreamableHTTPSessionManager(
        server._lowlevel_server, json_response=True, stateless=True, security_settings=security
    )
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    content = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    return start["status"], list(start.get("headers", [])), content


class McpView(APIView):
    """POST one MCP JSON-RPC message (streamable HTTP, stateless, JSON answers)."""

    authentication_classes = [BearerApiTokenAuthentication, ApiTokenAuthentication]
    permission_classes = [IsAuthenticated]

    @extend_schema(exclude=True)
    def post(self, request: Request) -> HttpResponse:
        django_request = request._request
        status, headers, content = async_to_sync(exchange)(
            server_for(scope_of(request), request.user), asgi_scope(django_request), django_request.body
        )
        response = HttpResponse(content, status=status)
        for name, value in headers:
            if name.lower() != b"content-length":
                response[name.decode("latin-1")] = value.decode("latin-1")
        return response
