"""`ome-compat mcp --tree DIR...`: a Model Context Protocol server over stdio answering questions
about a manifest tree (docs/mcp.md), for an assistant such as Claude Desktop, VS Code or Cursor.
The answers are matching.assistant's, read-only. It needs the official MCP SDK (`pip install
mcp`); the rest of the command line does not, so it is imported only when this command runs.
The dashboard serves the same tools over streamable HTTP for its stored clusters."""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._version import __version__
from .assistant import AssistantError, Tree, explain_cell, unserved_isvcs, what_if, why_no_runtime
from .behaviour import BEHAVIOURS, DEFAULT_BEHAVIOUR
from .tree import TreeError

INSTRUCTIONS = (
    "OME Compat answers which runtime OME (the Kubernetes operator serving LLMs) auto-selects for each model "
    "of a manifest tree (or of a cluster of the dashboard), why a model has none and the smallest verified fixes, what a pasted manifest would "
    "change, and which InferenceServices OME will not serve. Read-only."
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
        "inference_services_not_served",
        "The InferenceServices OME will not serve as written (blocked, or waiting on their model), with OME's error.",
        unserved_isvcs,
    ),
)


def read_only() -> Any:
    """Every tool's annotations: it reads, and reads only the objects it is given."""
    from mcp.types import ToolAnnotations

    return ToolAnnotations(read_only_hint=True, open_world_hint=False)


def tool_function(tool: AssistantTool, tree_for: Callable[..., Tree], leading: Sequence[inspect.Parameter]) -> Any:
    """The function the SDK serves for `tool`: its parameters are `leading` (handed to
    `tree_for`, which gives the Tree to answer about) and then the answering function's own.
    The SDK reads the parameters and their types from the signature to build the input schema.
    A bad question (an object the tree lacks, an unreadable manifest) answers as a tool error
    naming it; anything else stays an unexpected error."""
    from mcp.server.mcpserver.exceptions import ToolError

    signature = inspect.signature(tool.answers, eval_str=True)
    asked = list(signature.parameters.values())[1:]
    names = [parameter.name for parameter in leading]

    def function(**arguments: Any) -> Any:
        try:
            tree = tree_for(*(arguments.pop(name) for name in names))
            return tool.answers(tree, **arguments)
        except AssistantError as error:
            raise ToolError(str(error)) from None

    parameters = [*leading, *asked]
    function.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    function.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": signature.return_annotation}
    function.__name__ = function.__qualname__ = tool.name
    return function


def add_tools(server: Any, tree_for: Callable[..., Tree], leading: Sequence[inspect.Parameter] = ()) -> None:
    """Every tool of TOOLS on the MCPServer, read-only, answering about `tree_for(*leading)`."""
    for tool in TOOLS:
        function = tool_function(tool, tree_for, leading)
        server.add_tool(function, name=tool.name, description=tool.description, annotations=read_only())


def tree_server(tree: Tree) -> Any:
    """An MCPServer whose tools answer about `tree`."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("ome-compat", version=__version__, instructions=INSTRUCTIONS)
    add_tools(server, lambda: tree)
    return server


def run_mcp(args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401
    except ImportError:
        print("ome-compat mcp needs the MCP SDK: pip install mcp", file=sys.stderr)
        return 2
    try:
        tree = Tree.read(args.tree, behaviour=args.behaviour)
    except TreeError as error:
        print(str(error), file=sys.stderr)
        return 2
    tree_server(tree).run("stdio")
    return 0


def add_mcp_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    command = commands.add_parser(
        "mcp", help="serve questions about a manifest tree to an AI assistant (MCP over stdio)", description=__doc__
    )
    command.add_argument("--tree", metavar="DIR", nargs="+", required=True, help="manifest files or folders")
    command.add_argument("--behaviour", metavar="NAME", default=DEFAULT_BEHAVIOUR, choices=sorted(BEHAVIOURS))
    command.set_defaults(run=run_mcp)
