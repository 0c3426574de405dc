"""`ome-compat diff BASE_PATH HEAD_PATH`: what OME would decide differently with the
manifests of HEAD than with those of BASE (two folders, for example two git worktrees, or
two files); see `matching.reporting` for formats and exit codes."""

from __future__ import annotations

import argparse
import sys

from .cli_policy import add_policy_option, emit_with_policies, policy_section, read_labeled_tree, refuse_inadmissible
from .diff import diff
from .policy import PolicyError
from .reporting import EXIT_BAD_INPUT, add_behaviour_option, add_lenient_option, add_report_options, emit, fail_on_of
from .tree import TreeError


def add_diff_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    command = commands.add_parser(
        "diff", help="compare OME's decisions between two manifest trees", description=__doc__
    )
    command.add_argument("base", metavar="BASE_PATH")
    command.add_argument("head", metavar="HEAD_PATH")
    add_behaviour_option(command)
    add_lenient_option(command)
    add_report_options(command)
    add_policy_option(command)
    command.set_defaults(run=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    try:
        fail_on_of(args)
        trees = []
        for label, path in (("BASE_PATH", args.base), ("HEAD_PATH", args.head)):
            try:
                trees.append(read_labeled_tree([path], behaviour=args.behaviour, lenient=args.lenient))
            except TreeError as error:
                raise TreeError([f"{label} {line}" for line in error.problems]) from None
        for warning in (warning for tree, _labels in trees for warning in tree.warnings):
            print(warning, file=sys.stderr)
        if not any(tree.model_keys or tree.runtimes or tree.isvc_keys for tree, _labels in trees):
            raise TreeError(
                [f"neither {args.base} nor {args.head} holds an OME object (BaseModel, ServingRuntime, ...)"]
            )
        base, head = trees[0][0], trees[1][0]
        try:
            refuse_inadmissible(
                head, [key for key, runtime in head.runtimes.items() if base.runtimes.get(key) != runtime]
            )
        except TreeError as error:
            raise TreeError([f"HEAD_PATH {line}" for line in error.problems]) from None
        title = f"{args.base} -> {args.head}"
        sections = [(title, diff(trees[0][0], trees[1][0]))]
        if args.policy:
            return emit_with_policies(sections, policy_section(args, title, trees), args)
        return emit(sections, args, sys.stdout)
    except (TreeError, PolicyError, ValueError) as error:
        print(str(error), file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        print(str(error), file=sys.stderr)
        return EXIT_BAD_INPUT
