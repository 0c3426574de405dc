"""`python -m matching check --policy FILE... TREE...`: the policies' assertions over OME's
verdicts for a manifest tree; and `--policy` for `python -m matching diff`, which evaluates them
on BASE and HEAD and says which failures the change brings. Formats as `matching.reporting`;
exit 1 when an error-severity assertion fails, 2 for bad input (a bad policy file names its
file, line and field)."""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path

from .admit import refused_apply
from .diff import changed_objects
from .keys import key_text
from .policy import Labels, PolicyError, PolicySection, Verdicts, evaluate, exit_code, labels_of, load_policies, render
from .policy.types import Assertion
from .report import Section, verdict
from .reporting import EXIT_BAD_INPUT, add_behaviour_option, add_format_options, add_lenient_option, fail_on_of
from .reporting import render as render_diff
from .tree import Objects, TreeError, read_checked, tree_of
from .types import ObjectKey


def add_policy_option(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument(
        "--policy",
        metavar="FILE",
        action="extend",
        nargs="+",
        required=required,
        default=[],
        help="RuntimePolicy files or folders (docs/policies.md); exit 1 when an error-severity assertion fails",
    )
    parser.add_argument(
        "--cluster",
        metavar="NAME",
        help="the cluster the tree is for: assertions scoped to other clusters are left out (default: all count)",
    )


def add_check_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    command = commands.add_parser("check", help="check policies against a manifest tree", description=__doc__)
    command.add_argument(
        "tree",
        metavar="TREE",
        nargs="*",
        help="manifest files or folders; when none follows the --policy list, its last path is the tree "
        "(`check --policy P1.yaml P2.yaml TREE`)",
    )
    add_policy_option(command, required=True)
    add_behaviour_option(command)
    add_lenient_option(command)
    add_format_options(command)
    command.set_defaults(run=run_check)


def read_labeled_tree(paths: Sequence[str], *, behaviour: str, lenient: bool = False) -> tuple[Objects, Labels]:
    """`matching.read_tree`'s objects, checked as it checks them, with the labels of each (for
    label selectors)."""
    found, warnings = read_checked(paths, lenient=lenient)
    return tree_of(found, warnings, behaviour=behaviour), labels_of((obj, value) for _origin, obj, value in found)


def refuse_inadmissible(objects: Objects, keys: Iterable[ObjectKey]) -> None:
    """TreeError for the runtimes of `keys` OME's runtime webhook would refuse when the tree is
    applied, one line each naming the document, the object and the field, with the API
    server's words (matching.admit_runtime)."""
    refused = refused_apply(objects.runtimes, keys, behaviour=objects.behaviour)
    lines = []
    for runtime, admission in refused:
        origin = objects.origins.get(runtime.key)
        where = f"{origin.where}: " if origin is not None else ""
        lines.append(f"{where}{key_text(runtime.key)}: {admission.refusals[0].field}: {admission.denial}")
    if lines:
        raise TreeError(lines)


def _assertions(paths: Sequence[str]) -> list[Assertion]:
    return [assertion for policy in load_policies(paths) for assertion in policy.assertions]


def _split_tree(args: argparse.Namespace) -> None:
    """`--policy FILE... TREE`: argparse gives every path to --policy; the last is the tree."""
    if not args.tree:
        if len(args.policy) < 2:
            raise PolicyError(["matching check: give the manifest TREE after the --policy files"])
        args.tree = [args.policy.pop()]


def run_check(args: argparse.Namespace) -> int:
    try:
        _split_tree(args)
        assertions = _assertions(args.policy)
        objects, labels = read_labeled_tree(args.tree, behaviour=args.behaviour, lenient=args.lenient)
        refuse_inadmissible(objects, objects.runtimes)
        for warning in objects.warnings:
            print(warning, file=sys.stderr)
        outcomes = evaluate(assertions, Verdicts(objects), cluster=args.cluster, labels=labels)
        sections = [PolicySection(" ".join(args.tree), outcomes, behaviour=objects.behaviour.name)]
        _write(render(sections, args.format), render(sections, "junit"), args)
        return exit_code(sections)
    except (PolicyError, TreeError) as error:
        print(str(error), file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        print(f"--junit {args.junit}: cannot write: {error.strerror or error}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _write(text: str, junit: str, args: argparse.Namespace) -> None:
    sys.stdout.write(text)
    if args.junit:
        Path(args.junit).write_text(junit, encoding="utf-8")


def policy_section(args: argparse.Namespace, title: str, trees: Sequence[tuple[Objects, Labels]]) -> PolicySection:
    """The policies of `--policy` on HEAD (the last tree), compared with BASE (the first)."""
    (base, base_labels), (head, head_labels) = trees
    assertions = _assertions(args.policy)
    base_verdicts = Verdicts(base)
    before = evaluate(assertions, base_verdicts, cluster=args.cluster, labels=base_labels)
    after = evaluate(
        assertions, Verdicts(head), cluster=args.cluster, labels=head_labels, baseline=base_verdicts.baseline()
    )
    changed = frozenset(key for key, _action in changed_objects(base, head))
    return PolicySection(title, after, before, changed, behaviour=head.behaviour.name)


def emit_with_policies(sections: Sequence[Section], policies: PolicySection, args: argparse.Namespace) -> int:
    """The diff's report followed by the policies' (one JSON object, one JUnit file); exit 1
    when a --fail-on condition occurs or an error-severity assertion fails."""
    result = verdict(sections, fail_on_of(args))
    if args.format == "json":
        report = json.loads(render_diff(sections, result, "json"))
        text = json.dumps({**report, "policies": json.loads(render([policies], "json"))}, indent=2) + "\n"
    else:
        text = render_diff(sections, result, args.format) + "\n" + render([policies], args.format)
    junit = ""
    if args.junit:
        root = ET.fromstring(render_diff(sections, result, "junit"))
        root.extend(ET.fromstring(render([policies], "junit")))
        ET.indent(root)
        junit = ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
    _write(text, junit, args)
    return max(result.exit_code, exit_code([policies]))
