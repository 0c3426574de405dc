"""Reading policy files: YAML (or JSON), several `RuntimePolicy` documents per file, checked
against `schema.json`. Every problem names the file, the line and the field path, as the
errors of manifests do; one bad document does not hide the problems of the others."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ..files import TextLimits, load_text, manifest_files
from ..positions import NOWHERE, Positions
from ..positions import Path as FieldPath
from .models import ModelSelector
from .schema import problems
from .types import Assertion, Policy, Requirement, Subjects


class PolicyError(ValueError):
    """Policy files that cannot be used: one line per problem, `FILE:LINE: PATH: problem`."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def field_path(path: FieldPath) -> str:
    """("spec", "assertions", 0, "scope") -> "spec.assertions[0].scope".

    >>> field_path(("spec", "assertions", 2, "runtime"))
    'spec.assertions[2].runtime'
    """
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else part
    return text or "(document)"


# One policy text (a file, the check API's field, the admin's form): a policy is a few hundred
# bytes, a file of them rarely more than a few dozen.
POLICY_TEXT_LIMITS = TextLimits(max_bytes=1024 * 1024, max_documents=500, max_nodes=100_000)


def load_policies(paths: Iterable[str | Path]) -> list[Policy]:
    """The policies of files and folders (`.yaml`, `.yml`, `.json`, read recursively). Raises
    PolicyError listing every problem of every file, or a path that does not exist, or two
    policies of one name."""
    paths = list(paths)
    missing = [f"{path}: no such file or folder" for path in paths if not Path(path).exists()]
    if missing:
        raise PolicyError(missing)
    found: list[Policy] = []
    errors: list[str] = []
    for path in manifest_files(paths):
        try:
            found += policies_from_text(_read(path), source=str(path), json_text=path.suffix == ".json")
        except PolicyError as error:
            errors += error.problems
    errors += _duplicates(found)
    if errors:
        raise PolicyError(errors)
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PolicyError([f"{path}: cannot read: {getattr(error, 'strerror', None) or error}"]) from None


def policies_from_text(text: str, *, source: str, json_text: bool = False) -> list[Policy]:
    """The policies of one file's text, read by the bounded reader within POLICY_TEXT_LIMITS;
    `source` names it in errors. Raises PolicyError."""
    try:
        documents = load_text(text, json_text=json_text, limits=POLICY_TEXT_LIMITS)
    except ValueError as error:
        raise PolicyError([f"{source}: {' '.join(str(error).split())}"]) from None
    found: list[Policy] = []
    errors: list[str] = []
    for index, (document, positions) in enumerate(documents):
        if document is None:
            continue
        bad = problems(document)
        if not bad:
            bad = _semantic_problems(document)
        if bad:
            errors += [_where(source, index, positions, path) + f": {field_path(path)}: {text}" for path, text in bad]
        else:
            found.append(_policy(document, partial(_where, source, index, positions), source))
    errors += _duplicates(found)
    if errors:
        raise PolicyError(errors)
    return found


def _where(source: str, index: int, positions: Positions, path: FieldPath) -> str:
    line = positions.line_of(path)
    return f"{source}:{line}" if line is not None and positions is not NOWHERE else f"{source}: document {index}"


def _semantic_problems(document: Mapping[str, Any]) -> list[tuple[FieldPath, str]]:
    """What the schema cannot say: unique assertion names, atLeast <= atMost."""
    found: list[tuple[FieldPath, str]] = []
    seen: set[str] = set()
    for index, item in enumerate(document["spec"]["assertions"]):
        at: FieldPath = ("spec", "assertions", index)
        if item["name"] in seen:
            found.append(((*at, "name"), f"a second assertion named {item['name']!r} in this policy"))
        seen.add(item["name"])
        if item.get("atLeast", 0) > item.get("atMost", item.get("atLeast", 0)):
            found.append(((*at, "atMost"), f"{item['atMost']} is below atLeast {item['atLeast']}"))
    return found


def _duplicates(policies: Iterable[Policy]) -> list[str]:
    seen: dict[str, str] = {}
    found = []
    for policy in policies:
        if policy.name in seen:
            found.append(
                f"{policy.where}: metadata.name: policy {policy.name!r} is also defined at {seen[policy.name]}"
            )
        seen.setdefault(policy.name, policy.where)
    return found


def _subjects(raw: Mapping[str, Any], inherited: Subjects) -> Subjects:
    """An assertion's subjects, from its `scope`: each field it sets replaces the policy's."""
    labels, models = raw.get("labels"), raw.get("models")
    return Subjects(
        clusters=tuple(raw.get("clusters", inherited.clusters)),
        namespaces=tuple(raw.get("namespaces", inherited.namespaces)),
        names=tuple(raw.get("names", inherited.names)),
        match_labels=inherited.match_labels if labels is None else tuple(sorted(labels.get("matchLabels", {}).items())),
        match_expressions=inherited.match_expressions
        if labels is None
        else tuple(
            Requirement(item["key"], item["operator"], tuple(item.get("values", ())))
            for item in labels.get("matchExpressions", ())
        ),
        models=inherited.models if models is None else ModelSelector.from_raw(models),
    )


def _policy(document: Mapping[str, Any], where: Callable[[FieldPath], str], source: str) -> Policy:
    name = document["metadata"]["name"]
    spec = document["spec"]
    subjects = _subjects(spec.get("scope", {}), Subjects())
    assertions = tuple(
        Assertion(
            policy=name,
            name=item["name"],
            kind=item["assert"],
            severity=item.get("severity", spec.get("severity", "error")),
            subjects=_subjects(item.get("scope", {}), subjects),
            owner=item.get("owner", spec.get("owner", "")),
            description=item.get("description", spec.get("description", "")),
            runtime=item.get("runtime"),
            at_least=item.get("atLeast"),
            at_most=item.get("atMost"),
            score=item.get("score"),
            where=where(("spec", "assertions", index)),
        )
        for index, item in enumerate(spec["assertions"])
    )
    return Policy(name, assertions, where(()), source, document)
