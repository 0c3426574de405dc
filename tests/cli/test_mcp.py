"""`ome-compat mcp --tree DIR`: the MCP server over stdio, driven by the official SDK's own
client (`mcp.Client`), on the demo's manifest tree. The expectations are OME's: the selection
error text is OME's SelectRuntime message ("no runtime found to support model ... Excluded
runtimes: ..."; ome-projects/ome pkg/runtimeselector, as matching.select cites), and a runtime
whose supportedModelFormats entry matches the model's format, framework and architecture with
autoSelect is auto-selected (ome-docs content/en/docs/concepts/serving_runtime.md, "Runtime
Selection")."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from matching.assistant import Tree
from matching.mcp_tools import tree_server
from tests.support.aio import run_alone

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "demo")
GEMMA_RUNTIME = """
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt-gemma
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: "4.38.0.dev0"}
      modelArchitecture: GemmaForCausalLM
      autoSelect: true
      priority: 1
  engineConfig:
    runner: {name: ome-container, image: vllm:latest}
"""


def session(server: Any, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        async with Client(server) as client:
            return await work(client)

    return run_alone(run())


def assert_gemma_2b_has_no_runtime(answer: Any) -> None:
    """The demo's gemma-2b, asked why it has no runtime, over either transport: OME's selection
    error, and the diffusion runtime excluded for its architecture."""
    found = answer.structured_content
    assert not answer.is_error
    assert found["selected"] is None
    assert found["error"].startswith("no runtime found to support model safetensors with format safetensors")
    assert (
        "architecture mismatch (model=GemmaForCausalLM, runtime=QwenImagePipeline)"
        in found["excluded"]["srt-qwen-image-pipeline"]
    )


def in_process() -> Any:
    return tree_server(Tree.read([DEMO]))


def test_a_stdio_session_lists_the_read_only_tools_and_answers_why_gemma_2b_has_no_runtime() -> None:
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "matching", "mcp", "--tree", DEMO], cwd=str(ROOT)
    )

    async def work(client: Client) -> Any:
        return await client.list_tools(), await client.call_tool("why_no_runtime_for", {"model": "gemma-2b"})

    tools, answer = session(command, work)

    assert {tool.name for tool in tools.tools} == {
        "why_no_runtime_for",
        "explain_one_cell",
        "what_if_applied",
        "impact_of_edit",
        "inference_services_not_served",
    }
    assert all(tool.annotations and tool.annotations.read_only_hint for tool in tools.tools)
    assert_gemma_2b_has_no_runtime(answer)


def test_one_cell_names_ome_s_reason() -> None:
    async def work(client: Client) -> Any:
        return await client.call_tool("explain_one_cell", {"model": "gemma-2b", "runtime": "srt-qwen-image-pipeline"})

    found = session(in_process(), work).structured_content

    assert (found["status"], found["runtime"]) == ("excluded", "srt-qwen-image-pipeline")
    assert "format name mismatch (model=safetensors, runtime=diffusers)" in found["reason"]


def test_the_what_if_of_a_pasted_runtime_gives_gemma_2b_that_runtime_and_changes_nothing() -> None:
    async def work(client: Client) -> Any:
        changed = await client.call_tool("what_if_applied", {"manifest": GEMMA_RUNTIME})
        again = await client.call_tool("why_no_runtime_for", {"model": "gemma-2b"})
        return changed, again

    changed, again = session(in_process(), work)
    rows = {row["model"]["name"]: row for row in changed.structured_content["rows"]}

    assert rows["gemma-2b"]["oldOutcome"] == "no-runtime"
    assert rows["gemma-2b"]["newPick"] == {"kind": "ClusterServingRuntime", "namespace": "", "name": "srt-gemma"}
    assert again.structured_content["selected"] is None


# The demo's team-a runtime that OME auto-selects for two ClusterBaseModels, each served there by
# an InferenceService; disabling it leaves OME no runtime for them in team-a ("runtime is
# disabled", ome-projects/ome pkg/runtimeselector, as matching.select cites).
TEAM_A_RUNTIME = {"kind": "ServingRuntime", "namespace": "team-a", "name": "team-a-sglang-llama"}
DISABLED_TEAM_A_RUNTIME_SAYS = [
    "leaves 2 InferenceServices without a runtime on their next reconcile",
    "2 models lose their only runtime: ClusterBaseModel deepseek-r1-distill-llama-70b, "
    "ClusterBaseModel llama-3-3-70b-instruct",
]


def test_the_impact_of_disabling_a_runtime_names_the_services_it_strands_and_the_models_it_leaves_without_one() -> None:
    async def work(client: Client) -> Any:
        return await client.call_tool("impact_of_edit", TEAM_A_RUNTIME | {"patch": {"spec": {"disabled": True}}})

    found = session(in_process(), work).structured_content

    assert found["summary"] == DISABLED_TEAM_A_RUNTIME_SAYS
    assert found["omeRefuses"] == []
    assert {row["model"]["name"] for row in found["losesOnlyRuntime"]} == {
        "deepseek-r1-distill-llama-70b",
        "llama-3-3-70b-instruct",
    }
    assert {(isvc["isvc"]["name"], isvc["newVerdict"]) for isvc in found["inferenceServicesMoved"]} == {
        ("llama-70b-chat", "blocked"),
        ("r1-distill-70b", "blocked"),
    }


def test_the_impact_of_an_edit_ome_s_runtime_webhook_refuses_carries_its_refusal() -> None:
    """OME's webhook refuses auto-select entries of one format name with different priorities
    (validateModelFormatPrioritySame, as matching.admit_runtime cites)."""
    entry = Tree.read([DEMO]).stored(("ServingRuntime", "team-a", "team-a-sglang-llama"))["spec"][
        "supportedModelFormats"
    ][0]
    second = entry | {"priority": 2, "modelArchitecture": "MistralForCausalLM"}

    async def work(client: Client) -> Any:
        edit = {"patch": {"spec": {"supportedModelFormats": [entry, second]}}}
        return (
            await client.call_tool("impact_of_edit", TEAM_A_RUNTIME | edit),
            await client.call_tool("impact_of_edit", TEAM_A_RUNTIME | {"name": "no-such-runtime", "patch": {}}),
            await client.call_tool("impact_of_edit", TEAM_A_RUNTIME | {"patch": {"metadata": {"name": "renamed"}}}),
        )

    refused, missing, renamed = session(in_process(), work)

    assert refused.structured_content["omeRefuses"] == [
        "different priorities assigned for the model format  under the servingruntime team-a-sglang-llama"
    ]
    assert missing.is_error
    assert missing.content[0].text.endswith(": ServingRuntime team-a/no-such-runtime: not in the tree")
    assert renamed.is_error
    assert "must not change kind, metadata.name or metadata.namespace" in renamed.content[0].text


def test_the_services_ome_will_not_serve_carry_ome_s_error() -> None:
    async def work(client: Client) -> Any:
        return await client.call_tool("inference_services_not_served", {})

    found = session(in_process(), work).structured_content["result"]
    by_name = {item["isvc"]["name"]: item for item in found}

    assert by_name["command-r-plus"]["verdict"] == "blocked"
    assert (
        by_name["command-r-plus"]["error"]
        == "invalid model specification: modelFormat.name: model format name is required"
    )


def test_a_question_about_an_object_the_tree_lacks_is_an_error_naming_it() -> None:
    async def work(client: Client) -> Any:
        return (
            await client.call_tool("why_no_runtime_for", {"model": "no-such-model"}),
            await client.call_tool("what_if_applied", {"manifest": "kind: ConfigMap\n"}),
        )

    missing, pasted = session(in_process(), work)

    assert missing.is_error
    assert "model 'no-such-model': no model in the tree" in missing.content[0].text
    assert pasted.is_error
    assert "manifest: no OME object" in pasted.content[0].text
