"""`ome-compat upgrade TREE --to NAME`: what another OME (a release, or an upstream proposal such
as pr603) would decide differently for one manifest tree than the OME that judges it now
(`--behaviour`, default the newest), each difference with the behaviour that causes it
(`matching.behaviour_diff`, the dashboard's upgrade page offline). Exit 0 when nothing differs,
1 when something does, 2 for bad input."""

from __future__ import annotations

import argparse
import json
import sys

from .keys import key_text
from .reporting import EXIT_BAD_INPUT, add_behaviour_option, add_lenient_option, profile_name
from .tree import TreeError, read_tree
from .upgrade import Difference, behaviour_diff


def add_upgrade_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    command = commands.add_parser(
        "upgrade", help="what another OME, a release or a proposal, would decide differently", description=__doc__
    )
    command.add_argument("tree", metavar="TREE", nargs="+", help="manifest files or folders")
    command.add_argument(
        "--to", metavar="NAME", type=profile_name, required=True, help="the other OME: a profile or a release"
    )
    add_behaviour_option(command)
    add_lenient_option(command)
    command.add_argument("--json", action="store_true", help="print the differences as JSON")
    command.set_defaults(run=run_upgrade)


def _line(item: Difference) -> str:
    subject = item.isvc or item.model
    where = "" if subject is None else key_text(subject)
    if item.runtime is not None:
        where += f" x {key_text(item.runtime)}"
    if item.namespace is not None:
        where += f" in {item.namespace or '(cluster scope)'}"
    return f"{item.subject} {where}: {item.field} {item.before} -> {item.after} ({item.explanation})"


def run_upgrade(args: argparse.Namespace) -> int:
    try:
        objects = read_tree(args.tree, behaviour=args.behaviour, lenient=args.lenient)
    except TreeError as error:
        print(str(error), file=sys.stderr)
        return EXIT_BAD_INPUT
    found = behaviour_diff(objects.grid, args.to, objects.invalid)
    if args.json:
        body = {"from": args.behaviour, "to": args.to, "differences": [item.to_dict() for item in found]}
        print(json.dumps(body, indent=2))
    else:
        print(f"Judged as OME {args.behaviour}, compared with OME {args.to}: {len(found)} difference(s).")
        print("\n".join(_line(item) for item in found))
    return 1 if found else 0
