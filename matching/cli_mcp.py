"""`ome-compat mcp --tree DIR...`: a Model Context Protocol server over stdio answering questions
about a manifest tree (docs/mcp.md), for an assistant such as Claude Desktop, VS Code or Cursor.
The answers are matching.assistant's, read-only. It needs the official MCP SDK (`pip install
mcp`); the rest of the command line does not, so it is imported only when this command runs.
The dashboard serves the same tools over streamable HTTP for its stored clusters."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from ._version import __version__
from .assistant import AssistantError, Tree, explain_cell, unserved_isvcs, what_if, why_no_runtime
from .behaviour import BEHAVIOURS, DEFAULT_BEHAVIOUR
from .tree import TreeError

T = TypeVar("T")

INSTRUCTIONS = (
    "OME Compat answers which runtime OME (the Kubernetes operator serving LLMs) auto-selects for each model "
    "of a manifest tree, why a model has none and the smallest verified fixes, what a pasted manifest would "
    "change, and which InferenceServices OME will not serve. Read-only."
)


def answer(function: Callable[..., T], *args: Any) -> T:
    """The function's answer; a bad question (an object the tree lacks, an unreadable manifest)
    answers as a tool error naming it, anything else stays an unexpected error."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return function(*args)
    except AssistantError as error:
        raise ToolError(str(error)) from None


def tree_server(tree: Tree) -> Any:
    """An MCPServer whose tools answer about `tree`."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("ome-compat", version=__version__, instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=read_only)
    def why_no_runtime_for(model: str, namespace: str | None = None) -> dict[str, Any]:
        """Which runtime OME auto-selects for a model (`name` or `namespace/name`), why each other
        runtime is not picked, and when none is, the nearest verified fixes."""
        return answer(why_no_runtime, tree, model, namespace)

    @server.tool(annotations=read_only)
    def explain_one_cell(model: str, runtime: str, namespace: str | None = None) -> dict[str, Any]:
        """One cell of the matrix: whether OME picks `runtime` for `model`, or OME's reason why not."""
        return answer(explain_cell, tree, model, runtime, namespace)

    @server.tool(annotations=read_only)
    def what_if_applied(manifest: str) -> dict[str, Any]:
        """What OME would decide differently (models' runtimes, InferenceServices) once the pasted
        YAML manifest (runtimes, models, services) is applied over the tree. Nothing is applied."""
        return answer(what_if, tree, manifest)

    @server.tool(annotations=read_only)
    def inference_services_not_served() -> list[dict[str, Any]]:
        """The InferenceServices OME will not serve as written (blocked, or waiting on their model), with OME's error."""
        return unserved_isvcs(tree)

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
