"""`ome-compat mcp --tree DIR...`: a Model Context Protocol server over stdio answering questions
about a manifest tree (docs/mcp.md), for an assistant such as Claude Desktop, VS Code or Cursor.
The tools are matching.mcp_tools', read-only. It needs the official MCP SDK (`pip install
mcp`); the rest of the command line does not, so it is imported only when this command runs.
The dashboard serves the same tools over streamable HTTP for its stored clusters."""

from __future__ import annotations

import argparse
import sys

from .assistant import Tree
from .behaviour import BEHAVIOURS, DEFAULT_BEHAVIOUR
from .mcp_tools import tree_server
from .tree import TreeError


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
