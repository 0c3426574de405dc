"""The MCP tools (docs/mcp.md): one home for each tool's name, description and annotations, served
over stdio for a manifest tree (`ome-compat mcp`, matching.cli_mcp) and over streamable HTTP for
a reader's part of a dashboard cluster (web/api/mcp.py). The answers are matching.assistant's,
read-only. The official MCP SDK is imported only when a server is made: the rest of matching
needs only the standard library."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._version import __version__
from .assistant import AssistantError, Tree, edit_impact, explain_cell, unserved_isvcs, what_if, why_no_runtime

INSTRUCTIONS = (
    "OME Compat answers which runtime OME (the Kubernetes operator serving LLMs) auto-selects for each model "
    "of a manifest tree or a dashboard cluster, why a model has none and the smallest verified fixes, what a "
    "pasted manifest or an edit would change, and which InferenceServices OME will not serve."
)


@dataclass(frozen=True)
class AssistantTool:
    """One MCP tool: its name, its description, and the matching.assistant function that
    answers it, whose parameters after the Tree are the tool's. The one home of each tool's
    definition, for the stdio server here and the dashboard's HTTP endpoint (web/api/mcp.py)."""

    name: str
    description: str
    answers: Callable[..., Any]


TOOLS = (
    AssistantTool(
        "why_no_runtime_for",
        "Which runtime OME auto-selects for a model (`name` or `namespace/name`), why each other runtime "
        "is not picked, and when none is, the nearest verified fixes.",
        why_no_runtime,
    ),
    AssistantTool(
        "explain_one_cell",
        "One cell of the matrix: whether OME picks `runtime` for `model`, or OME's reason why not.",
        explain_cell,
    ),
    AssistantTool(
        "what_if_applied",
        "What OME would decide differently (models' runtimes, InferenceServices) once the pasted YAML "
        "manifest (runtimes, models, services) is applied. Nothing is applied.",
        what_if,
    ),
    AssistantTool(
        "impact_of_edit",
        "The impact of editing an existing runtime or model (`kind`, `name`, and `namespace` unless it is "
        "cluster-scoped) with a JSON merge patch (as `kubectl patch --type merge`): what OME's runtime webhook "
        "would refuse, the models whose pick changes, that lose their only runtime or gain one, and the "
        "InferenceServices that move. Nothing is applied.",
        edit_impact,
    ),
    AssistantTool(
        "inference_services_not_served",
        "The InferenceServices OME will not serve as written (blocked, or waiting on their model), with OME's error.",
        unserved_isvcs,
    ),
)


def read_only() -> Any:
    """Every tool's annotations: it reads, and reads only the objects it is given."""
    from mcp.types import ToolAnnotations

    return ToolAnnotations(read_only_hint=True, open_world_hint=False)


Work = Callable[[], Any]


async def run_inline(work: Work) -> Any:
    """Runs a tool's work on the event loop: a tree held in memory needs nothing else."""
    return work()


def tool_function(
    tool: AssistantTool,
    tree_for: Callable[..., Tree],
    leading: Sequence[inspect.Parameter],
    run: Callable[[Work], Awaitable[Any]],
) -> Any:
    """The function the SDK serves for `tool`: its parameters are `leading` (handed to
    `tree_for`, which gives the Tree to answer about) and then the answering function's own;
    the SDK builds the input schema from this signature. `run` runs the work (the tree and the
    answer). A bad question (an object the tree lacks, an unreadable manifest) answers as a tool
    error naming it; anything else stays an unexpected error."""
    from mcp.server.mcpserver.exceptions import ToolError

    signature = inspect.signature(tool.answers, eval_str=True)
    asked = list(signature.parameters.values())[1:]
    names = [parameter.name for parameter in leading]

    async def function(**arguments: Any) -> Any:
        tree_arguments = [arguments.pop(name) for name in names]

        def work() -> Any:
            try:
                return tool.answers(tree_for(*tree_arguments), **arguments)
            except AssistantError as error:
                raise ToolError(str(error)) from None

        return await run(work)

    parameters = [*leading, *asked]
    function.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    function.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": signature.return_annotation}
    function.__name__ = function.__qualname__ = tool.name
    return function


def add_tools(
    server: Any,
    tree_for: Callable[..., Tree],
    leading: Sequence[inspect.Parameter] = (),
    run: Callable[[Work], Awaitable[Any]] = run_inline,
) -> None:
    """Every tool of TOOLS on the MCPServer, read-only, answering about `tree_for(*leading)`,
    its work run by `run` (the dashboard runs it on the request's thread, for the ORM)."""
    for tool in TOOLS:
        function = tool_function(tool, tree_for, leading, run)
        server.add_tool(function, name=tool.name, description=tool.description, annotations=read_only())


def new_server() -> Any:
    """An MCPServer named and introduced as OME Compat, with no tool yet."""
    from mcp.server.mcpserver import MCPServer

    return MCPServer("ome-compat", version=__version__, instructions=INSTRUCTIONS)


def tree_server(tree: Tree) -> Any:
    """An MCPServer whose tools answer about `tree`."""
    server = new_server()
    add_tools(server, lambda: tree)
    return server
