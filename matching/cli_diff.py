"""`ome-compat diff BASE_PATH HEAD_PATH`: what OME would decide differently with the
manifests of HEAD than with those of BASE (two folders, for example two git worktrees, or
two files); see `matching.reporting` for formats and exit codes."""

from __future__ import annotations

import argparse
import sys

from .behaviour import BEHAVIOURS, DEFAULT_BEHAVIOUR
from .diff import diff
from .reporting import EXIT_BAD_INPUT, add_report_options, emit, fail_on_of
from .tree import TreeError, read_tree


def add_diff_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    command = commands.add_parser(
        "diff", help="compare OME's decisions between two manifest trees", description=__doc__
    )
    command.add_argument("base", metavar="BASE_PATH")
    command.add_argument("head", metavar="HEAD_PATH")
    command.add_argument(
        "--behaviour",
        metavar="NAME",
        default=DEFAULT_BEHAVIOUR,
        help=f"the OME behaviour profile that judges both trees (default {DEFAULT_BEHAVIOUR}): "
        + "; ".join(f"{name}: {profile.summary}" for name, profile in BEHAVIOURS.items()),
    )
    add_lenient_option(command)
    add_report_options(command)
    command.set_defaults(run=run_diff)


def add_lenient_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--lenient",
        action="store_true",
        help="report fields OME's CRD schemas do not declare, wrong types and values outside an enum as "
        "warnings, not errors (for trees that carry fields of another OME version)",
    )


def run_diff(args: argparse.Namespace) -> int:
    try:
        fail_on_of(args)
        if args.behaviour not in BEHAVIOURS:
            raise ValueError(f"--behaviour: unknown profile {args.behaviour!r}; known: {', '.join(BEHAVIOURS)}")
        trees = []
        for label, path in (("BASE_PATH", args.base), ("HEAD_PATH", args.head)):
            try:
                trees.append(read_tree([path], behaviour=args.behaviour, lenient=args.lenient))
            except TreeError as error:
                raise TreeError([f"{label} {line}" for line in error.problems]) from None
        for warning in (warning for tree in trees for warning in tree.warnings):
            print(warning, file=sys.stderr)
        if not any(tree.model_keys or tree.runtimes or tree.isvc_keys for tree in trees):
            raise TreeError(
                [f"neither {args.base} nor {args.head} holds an OME object (BaseModel, ServingRuntime, ...)"]
            )
        sections = [(f"{args.base} -> {args.head}", diff(trees[0], trees[1]))]
        return emit(sections, args, sys.stdout)
    except (TreeError, ValueError) as error:
        print(str(error), file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        print(str(error), file=sys.stderr)
        return EXIT_BAD_INPUT
