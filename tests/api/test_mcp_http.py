"""MCP over streamable HTTP (web/api/mcp.py, docs/mcp.md): the SDK's own client (`mcp.Client`
with its streamable HTTP transport) against the live test server, on the stored demo. The
expectations are OME's, as in tests/cli/test_mcp.py: the selection error is OME's SelectRuntime
message (ome-projects/ome pkg/runtimeselector, as matching.select cites)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from access.scope import scope_for_user
from access.tokens import api_token_create
from inventory.models import Cluster
from inventory.selectors import resources_visible
from tests.cli.test_mcp import (
    GEMMA_RUNTIME,
    TEAM_A_RUNTIME,
    assert_gemma_2b_has_no_runtime,
)
from tests.support.access import grant
from tests.support.aio import run_alone
from tests.support.demo import stored_demo
from whatif.admission import PREFIX, admission_warnings

TOOLS = {
    "why_no_runtime_for",
    "explain_one_cell",
    "what_if_applied",
    "impact_of_edit",
    "inference_services_not_served",
    "where_can_this_model_run",
}
CLUSTER_TOOLS = TOOLS - {"where_can_this_model_run"}
# A BaseModel of the demo's namespace team-b, and the ServingRuntimes there.
TEAM_B_MODEL = "team-b/qwen3-30b-a3b-fp8"


@pytest.fixture(autouse=True)
def production_reads(settings: Any) -> None:
    """Anonymous users read nothing, as in production: a token reads its grants only."""
    settings.API_ANONYMOUS_READ = False


@pytest.fixture
def demo(live_server: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The demo, stored in each test: the live server's tests flush the database after each."""
    with stored_demo(django_db_blocker, tmp_path_factory.getbasetemp().parent) as cluster:
        yield cluster


def session(url: str, key: str, work: Callable[[Client], Awaitable[Any]]) -> Any:
    """The work's answer, from a client session with the token."""

    async def run() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"})
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            return await work(client)

    return run_alone(run())


def token(django_user_model: Any, name: str, *, namespace: str = "") -> str:
    user = django_user_model.objects.create_user(name)
    grant(user, "viewer", cluster="demo", namespace=namespace)
    return api_token_create(user, name="assistant")[1]


def test_a_viewer_s_session_lists_the_read_only_tools_and_answers_why_gemma_2b_has_no_runtime(
    demo: Cluster, live_server: Any, django_user_model: Any
) -> None:
    key = token(django_user_model, "viewer")

    async def work(client: Client) -> Any:
        asked = {"cluster": "demo", "model": "gemma-2b"}
        return await client.list_tools(), await client.call_tool("why_no_runtime_for", asked)

    tools, answer = session(f"{live_server.url}/api/v1/mcp/", key, work)

    assert {tool.name for tool in tools.tools} == TOOLS
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in tools.tools)
    assert all("cluster" in tool.input_schema["required"] for tool in tools.tools if tool.name in CLUSTER_TOOLS)
    assert_gemma_2b_has_no_runtime(answer)


def test_another_team_s_token_answers_nothing_of_team_b(
    demo: Cluster, live_server: Any, django_user_model: Any
) -> None:
    whole = token(django_user_model, "whole-cluster")
    team_a = token(django_user_model, "team-a", namespace="team-a")
    url = f"{live_server.url}/api/v1/mcp/"

    async def work(client: Client) -> Any:
        return (
            await client.call_tool("why_no_runtime_for", {"cluster": "demo", "model": TEAM_B_MODEL}),
            await client.call_tool("why_no_runtime_for", {"cluster": "demo", "model": "team-b/no-such-model"}),
            await client.call_tool("inference_services_not_served", {"cluster": "demo"}),
            await client.call_tool("why_no_runtime_for", {"cluster": "demo", "model": "gemma-2b"}),
            await client.call_tool("where_can_this_model_run", {"model": TEAM_B_MODEL}),
            await client.call_tool("what_if_applied", {"cluster": "demo", "manifest": GEMMA_RUNTIME}),
        )

    seen_whole = session(url, whole, work)
    model, missing, unserved, gemma, fleet, what_if = session(url, team_a, work)

    assert not seen_whole[0].is_error
    assert "team-b" in json.dumps([answer.model_dump(mode="json") for answer in seen_whole[:3]])
    assert model.is_error
    assert missing.is_error
    assert model.content[0].text == missing.content[0].text.replace("no-such-model", "qwen3-30b-a3b-fp8")
    assert not gemma.is_error
    assert not seen_whole[4].is_error
    assert fleet.is_error  # the fleet is the clusters read whole, as on the fleet page
    rows = {row["model"]["name"]: row for row in what_if.structured_content["rows"]}
    assert rows["gemma-2b"]["newPick"]["name"] == "srt-gemma"
    for answer in (model, missing, unserved, gemma, fleet, what_if):
        dumped = answer.model_dump(mode="json")
        assert "team-b" not in json.dumps(dumped).replace("team-b/no-such-model", "").replace(TEAM_B_MODEL, "")


def test_a_cluster_the_token_may_not_read_answers_as_one_that_does_not_exist(
    demo: Cluster, live_server: Any, django_user_model: Any
) -> None:
    user = django_user_model.objects.create_user("elsewhere")
    grant(user, "viewer", cluster="another")
    key = api_token_create(user, name="assistant")[1]

    async def work(client: Client) -> Any:
        return [
            await client.call_tool("inference_services_not_served", {"cluster": name})
            for name in ("demo", "no-such-cluster")
        ]

    hidden, missing = session(f"{live_server.url}/api/v1/mcp/", key, work)

    assert hidden.is_error
    assert missing.is_error
    assert hidden.content[0].text == missing.content[0].text.replace("no-such-cluster", "demo")


@pytest.mark.django_db
def test_no_token_is_401_and_a_signed_in_session_without_a_token_is_refused(
    client: Any, django_user_model: Any
) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

    anonymous = client.post("/api/v1/mcp/", message, content_type="application/json")
    client.force_login(django_user_model.objects.create_user("signed-in", is_superuser=True))
    cookie_only = client.post("/api/v1/mcp/", message, content_type="application/json")

    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"] == "Bearer"
    assert cookie_only.status_code == 401


def test_where_a_model_can_run_names_each_cluster_read_whole_and_its_pick(
    demo: Cluster, live_server: Any, django_user_model: Any
) -> None:
    user = django_user_model.objects.create_user("fleet-viewer")
    grant(user, "viewer", cluster="demo")
    key = api_token_create(user, name="assistant")[1]

    async def work(client: Client) -> Any:
        return (
            await client.call_tool("where_can_this_model_run", {"model": "gemma-2b"}),
            await client.call_tool("where_can_this_model_run", {"model": TEAM_B_MODEL}),
        )

    gemma, team_b = session(f"{live_server.url}/api/v1/mcp/", key, work)

    assert gemma.structured_content["clusters"] == ["demo"]
    assert {cell["outcome"] for row in gemma.structured_content["rows"] for cell in row["byCluster"].values()} == {
        "no-runtime"
    }
    (row,) = team_b.structured_content["rows"]
    assert row["byCluster"]["demo"]["outcome"] == "selected"
    assert row["byCluster"]["demo"]["pick"]["name"] == "sglang-qwen3-moe-fp8-h100"


def test_the_impact_of_an_edit_says_what_the_admission_webhook_warns_and_nothing_of_another_team(
    demo: Cluster, live_server: Any, django_user_model: Any
) -> None:
    team_a = token(django_user_model, "team-a", namespace="team-a")
    team_b = token(django_user_model, "team-b", namespace="team-b")
    url = f"{live_server.url}/api/v1/mcp/"
    disable = TEAM_A_RUNTIME | {"cluster": "demo", "patch": {"spec": {"disabled": True}}}

    async def work(client: Client) -> Any:
        return (
            await client.call_tool("impact_of_edit", disable),
            await client.call_tool("impact_of_edit", disable | {"name": "no-such-runtime"}),
        )

    (seen_by_team_a, _), (seen_by_team_b, missing) = session(url, team_a, work), session(url, team_b, work)
    reader = scope_for_user(django_user_model.objects.get(username="team-a"))
    stored = resources_visible(reader).get(cluster=demo, namespace="team-a", name="team-a-sglang-llama").obj
    disabled = stored | {"spec": stored["spec"] | {"disabled": True}}
    review = {"operation": "UPDATE", "object": disabled, "oldObject": stored, "namespace": "team-a"}

    summary = seen_by_team_a.structured_content["summary"]
    assert summary[0].startswith("moves 2 InferenceServices to ")
    assert [PREFIX + sentence for sentence in summary] == admission_warnings("demo", review, scope=reader)
    assert seen_by_team_b.is_error
    assert seen_by_team_b.content[0].text == missing.content[0].text.replace("no-such-runtime", "team-a-sglang-llama")
