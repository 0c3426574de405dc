"""`ome-compat explain MODEL_FILE RUNTIME_PATH...`: which runtime OME would pick, and why
not every other one.

The files are read as a cluster would hold them once applied (`matching.as_applied`: the CRDs'
defaults, namespace `default`), as the dashboard's `manage.py load_manifests` reads them, so
the same files give the same verdicts and scores in both places; `--raw` reads them as
written. `--behaviour` picks the OME whose rules judge them.

`ome-compat diff BASE_PATH HEAD_PATH`: see `cli_diff`. `python -m matching` is the same command.

`ome-compat check --policy FILE... TREE...`: see `cli_policy`.

`ome-compat upgrade TREE... --to NAME`: see `cli_upgrade`.
`ome-compat mcp --tree DIR...`: see `cli_mcp`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ._version import __version__
from .behaviour import BEHAVIOURS
from .cli_diff import add_diff_command
from .cli_mcp import add_mcp_command
from .cli_policy import add_check_command
from .cli_upgrade import add_upgrade_command
from .crd import as_applied
from .errors import ManifestError
from .files import read_documents
from .parse import parse_object
from .reporting import add_behaviour_option
from .results import Selection
from .select import select, validate
from .types import InferenceService, Model, Runtime


class InputError(Exception):
    """A bad input file; printed as one line, exit status 2."""


def _load(paths: Sequence[str], *, raw: bool) -> list[Model | Runtime | InferenceService]:
    found: list[Model | Runtime | InferenceService] = []
    problems = []
    for document in read_documents(paths):
        if document.error is not None or document.obj is None:
            problems.append(f"{document.where}: {document.error}")
            continue
        if document.obj.get("apiVersion", "").split("/")[0] != "ome.io":
            continue
        try:
            found.append(parse_object(document.obj if raw else as_applied(document.obj)))
        except ManifestError as error:
            problems.append(f"{document.where}: {error}")
    if problems:
        raise InputError("\n".join(problems))
    return found


_KIND_LABELS = {
    Model: "BaseModel or ClusterBaseModel",
    Runtime: "ServingRuntime or ClusterServingRuntime",
    InferenceService: "InferenceService",
}


def _only(items: list[Model | Runtime | InferenceService], kind: type, path: str) -> list:  # type: ignore[type-arg]
    chosen = [item for item in items if isinstance(item, kind)]
    if not chosen:
        raise InputError(f"{path}: no {_KIND_LABELS[kind]} found")
    return chosen


def _rows(selection: Selection, runtimes: list[Runtime]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    scope = {rt.name: "Cluster" if rt.is_cluster else "Namespaced" for rt in runtimes}
    for rank, match in enumerate(selection.compatible, start=1):
        status = "selected" if rank == 1 else "compatible"
        rows.append((str(rank), match.name, scope[match.name], status, str(match.score), "-"))
    for status, reasons in (("manual-only", selection.manual_only), ("excluded", selection.excluded)):
        for name, reason in reasons.items():
            rows.append(("-", name, scope.get(name, "?"), status, "-", reason))
    return rows


def _table(rows: list[tuple[str, ...]]) -> str:
    header = ("RANK", "RUNTIME", "SCOPE", "STATUS", "SCORE", "REASON")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]))
    return "\n".join(lines)


def explain(args: argparse.Namespace) -> int:
    model = _only(_load([args.model], raw=args.raw), Model, args.model)[0]
    runtimes = _only(_load(args.runtimes, raw=args.raw), Runtime, " ".join(args.runtimes))
    isvc = _only(_load([args.isvc], raw=args.raw), InferenceService, args.isvc)[0] if args.isvc else None
    selection = select(model, runtimes, isvc=isvc, namespace=args.namespace, behaviour=args.behaviour)
    result = selection.to_dict()
    named = isvc.runtime_name if isvc is not None and isvc.names_runtime else None
    if named:
        error = validate(named, model, runtimes, isvc, args.namespace, behaviour=args.behaviour)
        result["namedRuntime"] = {"name": named, "error": error}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    defaults = "files as written (--raw)" if args.raw else "CRD defaults applied, as on a cluster"
    profile = BEHAVIOURS[args.behaviour]
    origin = f"proposal {profile.commit}" if profile.proposal else f"commit {profile.commit[:8]}"
    print(f"OME: profile {profile.name} ({origin}); {defaults}")
    print(f"Model: {model.kind} {model.name} (namespace: {selection.namespace or '-'})")
    if named:
        error = result["namedRuntime"]["error"]  # type: ignore[index]
        print(f"Named runtime: {named}: {error or 'valid'}")
    print(f"Selected: {selection.selected}" if selection.selected else f"No runtime: {selection.error}")
    print()
    print(_table(_rows(selection, runtimes)))
    return 0


def main(argv: Sequence[str] | None = None, *, prog: str = "ome-compat") -> int:
    """The `ome-compat` command (`python -m matching` passes its own `prog`)."""
    parser = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    command = commands.add_parser(
        "explain",
        help="explain OME's runtime selection for one model",
        description="Which runtime OME would pick for one model, with its score, and why every other runtime "
        "is not picked (manual-only, or excluded with OME's reason).",
    )
    command.add_argument(
        "model",
        metavar="MODEL_FILE",
        help="a YAML or JSON file holding the BaseModel or ClusterBaseModel (the first one)",
    )
    command.add_argument(
        "runtimes",
        metavar="RUNTIME_PATH",
        nargs="+",
        help="files or folders of ServingRuntimes and ClusterServingRuntimes (folders are read recursively; "
        "other kinds are skipped)",
    )
    command.add_argument(
        "--isvc",
        metavar="FILE",
        help="an InferenceService: its namespace, accelerator classes and deployment modes take part, and the "
        "runtime it names in spec.runtime is validated",
    )
    command.add_argument(
        "--namespace",
        metavar="NS",
        help="the namespace to select in (default: the InferenceService's, else the model's)",
    )
    command.add_argument("--json", action="store_true", help="print select(...).to_dict() as JSON instead of a table")
    command.add_argument(
        "--raw",
        action="store_true",
        help="read the files as written, without the CRD defaults an API server fills in (weight 1, operator "
        "Equal, the InferenceService's reference kinds) and without namespace default; scores then differ from "
        "the dashboard's (section 1.2 of the spec)",
    )
    add_behaviour_option(command)
    command.set_defaults(run=explain)
    add_diff_command(commands)
    add_check_command(commands)
    add_upgrade_command(commands)
    add_mcp_command(commands)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except InputError as error:
        print(str(error), file=sys.stderr)
        return 2
