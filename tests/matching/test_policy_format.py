"""The RuntimePolicy format: schema.json is a valid JSON Schema that the standard-library
interpreter reads as `jsonschema` does, and every problem names file, line and field path."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from matching.policy import ASSERTIONS, PolicyError, load_policies, policies_from_text, policy_schema, problems
from matching.policy.evaluate import _CHECKS
from matching.policy.schema import KEYWORDS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "demo/policies").glob("*.yaml"))
VALID: dict[str, Any] = {
    "apiVersion": "compat.ome.io/v1alpha1",
    "kind": "RuntimePolicy",
    "metadata": {"name": "p"},
    "spec": {"assertions": [{"name": "a", "assert": "servedBy", "runtime": "r"}]},
}


def _keywords(schema: object, *, in_properties: bool = False) -> Iterator[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if not in_properties:
                yield key
            yield from _keywords(value, in_properties=key in ("properties", "$defs") and not in_properties)
    elif isinstance(schema, list):
        for item in schema:
            yield from _keywords(item)


def test_the_schema_is_a_valid_json_schema_using_only_keywords_the_interpreter_reads() -> None:
    jsonschema.Draft202012Validator.check_schema(policy_schema())

    assert set(_keywords(policy_schema())) <= KEYWORDS


def test_every_assertion_kind_is_in_the_schema_and_has_a_check() -> None:
    kinds = policy_schema()["$defs"]["assertion"]["properties"]["assert"]["enum"]

    assert set(kinds) == set(ASSERTIONS) == set(_CHECKS)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_the_shipped_examples_are_valid(path: Path) -> None:
    for document in yaml.safe_load_all(path.read_text()):
        jsonschema.validate(document, policy_schema())
        assert problems(document) == []


def _with(path: tuple[str | int, ...], value: object) -> dict[str, Any]:
    document = copy.deepcopy(VALID)
    target: Any = document
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return document


BAD = {
    "unknown top-level key": _with(("extra",), 1),
    "unknown assertion key": _with(("spec", "assertions", 0, "scop"), {}),
    "unknown assertion kind": _with(("spec", "assertions", 0, "assert"), "servedByy"),
    "servedBy without runtime": _with(("spec", "assertions", 0), {"name": "a", "assert": "servedBy"}),
    "pickCount without bounds": _with(("spec", "assertions", 0), {"name": "a", "assert": "pickCount", "runtime": "r"}),
    "minScore without score": _with(("spec", "assertions", 0), {"name": "a", "assert": "minScore"}),
    "negative score": _with(("spec", "assertions", 0), {"name": "a", "assert": "minScore", "score": -1}),
    "bad severity": _with(("spec", "severity"), "fatal"),
    "namespaces not a list": _with(("spec", "scope"), {"namespaces": "team-a"}),
    "empty glob list": _with(("spec", "scope"), {"names": []}),
    "bad label key": _with(("spec", "scope"), {"labels": {"matchLabels": {"-bad": "x"}}}),
    "bad label value": _with(("spec", "scope"), {"labels": {"matchLabels": {"team": "a b"}}}),
    "bad operator": _with(("spec", "scope"), {"labels": {"matchExpressions": [{"key": "t", "operator": "Equals"}]}}),
    "In without values": _with(("spec", "scope"), {"labels": {"matchExpressions": [{"key": "t", "operator": "In"}]}}),
    "Exists with values": _with(
        ("spec", "scope"), {"labels": {"matchExpressions": [{"key": "t", "operator": "Exists", "values": ["x"]}]}}
    ),
    "no assertions": _with(("spec", "assertions"), []),
    "boolean as integer": _with(("spec", "assertions", 0), {"name": "a", "assert": "minScore", "score": True}),
    "wrong apiVersion": _with(("apiVersion",), "compat.ome.io/v2"),
    "bad policy name": _with(("metadata", "name"), "Team A"),
}


@pytest.mark.parametrize("document", BAD.values(), ids=BAD.keys())
def test_the_interpreter_refuses_what_jsonschema_refuses(document: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, policy_schema())

    assert problems(document)


def test_the_interpreter_accepts_what_jsonschema_accepts() -> None:
    document = _with(
        ("spec", "scope"),
        {
            "clusters": ["prod-*"],
            "labels": {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]},
        },
    )
    jsonschema.validate(document, policy_schema())

    assert problems(document) == []


POLICY = """\
apiVersion: compat.ome.io/v1alpha1
kind: RuntimePolicy
metadata:
  name: team-a
spec:
  assertions:
    - name: first
      assert: hasRuntime
    - name: second
      assert: notBlocked
      scop:
        namespaces: [team-a]
"""


def test_an_unknown_key_names_file_line_and_path() -> None:
    with pytest.raises(PolicyError) as raised:
        policies_from_text(POLICY, source="policies/team-a.yaml")

    assert raised.value.problems == [
        "policies/team-a.yaml:11: spec.assertions[1].scop: unknown field 'scop'; known: name, assert, severity, "
        "owner, description, scope, runtime, atLeast, atMost, score"
    ]


def test_a_malformed_selector_names_file_line_and_path() -> None:
    text = POLICY.replace("      scop:\n        namespaces: [team-a]\n", "") + (
        "      scope:\n        labels:\n          matchExpressions:\n            - key: tier\n              operator: Equals\n"
    )

    with pytest.raises(PolicyError) as raised:
        policies_from_text(text, source="p.yaml")

    assert raised.value.problems == [
        "p.yaml:15: spec.assertions[1].scope.labels.matchExpressions[0].operator: "
        "'Equals' is not one of In, NotIn, Exists, DoesNotExist"
    ]


def test_every_bad_document_of_every_file_is_listed(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(POLICY + "---\n" + POLICY.replace("name: team-a", "name: other"))
    (tmp_path / "b.yaml").write_text("spec: [\n")

    with pytest.raises(PolicyError) as raised:
        load_policies([tmp_path])

    lines = raised.value.problems
    assert [line.split(":")[:2] for line in lines] == [
        [str(tmp_path / "a.yaml"), "11"],
        [str(tmp_path / "a.yaml"), "24"],
        [str(tmp_path / "b.yaml"), " invalid YAML"],
    ]


def test_two_assertions_of_one_name_and_inverted_bounds_are_refused() -> None:
    text = POLICY.replace("name: second", "name: first").replace(
        "      scop:\n        namespaces: [team-a]\n",
        "    - {name: c, assert: pickCount, runtime: r, atLeast: 3, atMost: 1}\n",
    )

    with pytest.raises(PolicyError) as raised:
        policies_from_text(text, source="p.yaml")

    assert raised.value.problems == [
        "p.yaml:9: spec.assertions[1].name: a second assertion named 'first' in this policy",
        "p.yaml:11: spec.assertions[2].atMost: 1 is below atLeast 3",
    ]


def test_two_policies_of_one_name_are_refused(tmp_path: Path) -> None:
    good = POLICY.replace("      scop:\n        namespaces: [team-a]\n", "")
    (tmp_path / "a.yaml").write_text(good)
    (tmp_path / "b.yaml").write_text(good)

    with pytest.raises(PolicyError, match="policy 'team-a' is also defined at"):
        load_policies([tmp_path])


def test_an_assertion_inherits_the_policy_defaults_and_overrides_them_per_field() -> None:
    text = """\
apiVersion: compat.ome.io/v1alpha1
kind: RuntimePolicy
metadata: {name: p}
spec:
  owner: platform
  severity: warning
  scope: {clusters: [prod-*], namespaces: [team-a]}
  assertions:
    - {name: a, assert: hasRuntime}
    - {name: b, assert: hasRuntime, severity: error, owner: me, scope: {namespaces: [team-b]}}
"""
    first, second = policies_from_text(text, source="p.yaml")[0].assertions

    assert (first.severity, first.owner, first.subjects.clusters, first.subjects.namespaces) == (
        "warning", "platform", ("prod-*",), ("team-a",),
    )  # fmt: skip
    assert (second.severity, second.owner, second.subjects.clusters, second.subjects.namespaces) == (
        "error", "me", ("prod-*",), ("team-b",),
    )  # fmt: skip
    assert (first.ident, first.where) == ("p/a", "p.yaml:9")
