"""The MCP endpoint's applying tool (web/api/mcp.py, patches/assistant.py, docs/mcp.md), driven by
the SDK's own client over streamable HTTP against the live test server and a live cluster served
by the fake Kubernetes API server: offered only to a token that may patch, applied through the
one patch service (its audit row names the token's user), and another team's model refused as
a missing one."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from access.models import Delegation
from access.scope import scope_for_user
from access.tokens import api_token_create
from inventory.models import Cluster
from patches.assistant import may_patch_somewhere
from patches.models import PatchAttempt
from tests.api.test_mcp_http import session
from tests.fakes.kube_api import FakeKubeAPI
from tests.patches.seed import PIPELINE, RUNTIME
from tests.support.access import grant

APPLYING_TOOL = "apply_pipeline_patch"
TEAM_A_MODEL = "BaseModel/team-a/qwen-image-team"


@pytest.fixture(autouse=True)
def production_reads(settings: Any) -> None:
    """Anonymous users read nothing, as in production: a token reads its grants only."""
    settings.API_ANONYMOUS_READ = False


def token(django_user_model: Any, name: str, role: str, *, namespace: str = "") -> str:
    user = django_user_model.objects.create_user(name)
    grant(user, role, cluster="live", namespace=namespace)
    return api_token_create(user, name="assistant")[1]


def apply(model: str) -> dict[str, str]:
    return {"cluster": "live", "model": model, "runtime": RUNTIME}


def test_a_viewer_s_token_is_not_offered_the_applying_tool_and_cannot_call_it(
    live: Cluster, fake: FakeKubeAPI, live_server: Any, django_user_model: Any
) -> None:
    key = token(django_user_model, "viewer", "viewer")

    async def work(client: Client) -> Any:
        return await client.list_tools(), await client.call_tool(APPLYING_TOOL, apply(TEAM_A_MODEL))

    tools, called = session(f"{live_server.url}/api/v1/mcp/", key, work)

    assert APPLYING_TOOL not in {tool.name for tool in tools.tools}
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in tools.tools)
    assert called.is_error
    assert not [request for request in fake.requests if request.method == "PATCH"]
    assert not PatchAttempt.objects.exists()


def test_an_editor_s_token_applies_the_patch_to_the_cluster_and_the_audit_row_names_its_user(
    live: Cluster, fake: FakeKubeAPI, live_server: Any, django_user_model: Any
) -> None:
    key = token(django_user_model, "team-a-editor", "patcher", namespace="team-a")

    async def work(client: Client) -> Any:
        return (
            await client.list_tools(),
            await client.call_tool(APPLYING_TOOL, apply(TEAM_A_MODEL)),
            await client.call_tool(APPLYING_TOOL, apply(TEAM_A_MODEL)),
        )

    tools, applied, again = session(f"{live_server.url}/api/v1/mcp/", key, work)

    (tool,) = [tool for tool in tools.tools if tool.name == APPLYING_TOOL]
    assert tool.annotations is not None
    assert (tool.annotations.read_only_hint, tool.annotations.destructive_hint) == (False, False)
    assert tool.annotations.idempotent_hint is True
    assert not applied.is_error, applied.content
    assert applied.structured_content["result"] == "applied"
    on_cluster = fake.get("BaseModel", "qwen-image-team", namespace="team-a")
    assert on_cluster is not None
    assert on_cluster["spec"]["diffusionPipeline"]["className"] == PIPELINE["className"]
    attempt = PatchAttempt.objects.get()
    assert (attempt.username, attempt.result, attempt.target) == ("team-a-editor", "applied", "cluster")
    assert attempt.pk == applied.structured_content["auditRecord"]
    assert (attempt.model_kind, attempt.model_namespace, attempt.model_name) == (
        "BaseModel",
        "team-a",
        "qwen-image-team",
    )
    assert again.is_error  # the model now passes the runtime: nothing left to patch, nothing attempted
    assert "nothing to patch" in again.content[0].text
    assert PatchAttempt.objects.count() == 1


def test_another_team_s_model_is_refused_as_a_missing_one(
    live: Cluster, fake: FakeKubeAPI, live_server: Any, django_user_model: Any
) -> None:
    key = token(django_user_model, "team-b-editor", "patcher", namespace="team-b")

    async def work(client: Client) -> Any:
        return (
            await client.list_tools(),
            await client.call_tool(APPLYING_TOOL, apply(TEAM_A_MODEL)),
            await client.call_tool(APPLYING_TOOL, apply("BaseModel/team-a/no-such-model")),
        )

    tools, other_team, missing = session(f"{live_server.url}/api/v1/mcp/", key, work)

    assert APPLYING_TOOL in {tool.name for tool in tools.tools}
    assert other_team.is_error
    assert missing.is_error
    assert other_team.content[0].text == missing.content[0].text.replace("no-such-model", "qwen-image-team")
    assert fake.get("BaseModel", "qwen-image-team", namespace="team-a")["spec"].get("diffusionPipeline") is None
    assert not [request for request in fake.requests if request.method == "PATCH"]


def test_a_reader_of_the_model_without_the_patcher_role_there_is_denied_by_the_patch_service_and_audited(
    live: Cluster, fake: FakeKubeAPI, live_server: Any, django_user_model: Any
) -> None:
    user = django_user_model.objects.create_user("team-b-editor-reading-team-a")
    grant(user, "patcher", cluster="live", namespace="team-b")
    grant(user, "viewer", cluster="live", namespace="team-a")
    key = api_token_create(user, name="assistant")[1]

    async def work(client: Client) -> Any:
        return await client.call_tool(APPLYING_TOOL, apply(TEAM_A_MODEL))

    denied = session(f"{live_server.url}/api/v1/mcp/", key, work)

    attempt = PatchAttempt.objects.get()
    assert denied.is_error
    assert (attempt.username, attempt.result) == ("team-b-editor-reading-team-a", "denied")
    assert denied.content[0].text.endswith(f"denied: {attempt.detail} (audit record {attempt.pk})")
    assert "needs the patcher role on namespace team-a of cluster live" in attempt.detail
    assert not [request for request in fake.requests if request.method == "PATCH"]


def test_a_reader_of_a_cluster_whose_rbac_decides_patches_is_offered_the_applying_tool(
    live: Cluster, django_user_model: Any
) -> None:
    """On a delegating cluster patch_apply asks the cluster's RBAC, so its readers may try."""
    user = django_user_model.objects.create_user("reader-of-live")
    grant(user, "viewer", cluster="live")

    before = may_patch_somewhere(scope_for_user(user))
    Delegation.objects.create(cluster="live")

    assert not before
    assert may_patch_somewhere(scope_for_user(user))
