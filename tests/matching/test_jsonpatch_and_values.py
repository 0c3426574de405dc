"""JSON patches as fixes write them, and values OME accepts but cannot match, by path."""

from __future__ import annotations

import pytest

import matching
from matching.jsonpatch import merge_operations, pointer


def test_a_json_patch_adds_replaces_and_removes_without_touching_the_input() -> None:
    document = {"spec": {"entries": [{"a": 1}], "b": 2}}

    patched = matching.json_patch(
        document,
        [
            {"op": "add", "path": "/spec/entries/0/c", "value": {"x": 1}},
            {"op": "replace", "path": "/spec/b", "value": 3},
            {"op": "remove", "path": "/spec/entries/0/a"},
        ],
    )

    assert patched == {"spec": {"entries": [{"c": {"x": 1}}], "b": 3}}
    assert document == {"spec": {"entries": [{"a": 1}], "b": 2}}


@pytest.mark.parametrize(
    ("operation", "message"),
    [
        ({"op": "remove", "path": "/spec/missing"}, "nothing to remove"),
        ({"op": "add", "path": "/spec/nope/x", "value": 1}, "'nope' is not there"),
        ({"op": "add", "path": "/spec/entries/1", "value": 1}, "change list items by index, or append with -"),
        ({"op": "move", "path": "/spec/b", "from": "/spec/a"}, "is not add, remove or replace"),
        ({"op": "add", "path": "spec", "value": 1}, "is not a JSON pointer"),
    ],
)
def test_a_json_patch_that_does_not_apply_says_why(operation: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        matching.json_patch({"spec": {"entries": [{}], "b": 2}}, [operation])


def test_pointers_escape_slashes_and_tildes() -> None:
    assert pointer("spec", "additionalComponents", "a/b~c", 0) == "/spec/additionalComponents/a~1b~0c/0"
    assert matching.json_patch({"a/b~c": 1}, [{"op": "remove", "path": "/a~1b~0c"}]) == {}


def test_merge_operations_add_only_the_missing_branches() -> None:
    target = {"className": "P", "vae": {"library": "diffusers"}}

    operations = merge_operations(target, {"vae": {"type": "V"}, "transformer": {"library": "d"}}, "spec", "p")

    assert operations == [
        {"op": "add", "path": "/spec/p/vae/type", "value": "V"},
        {"op": "add", "path": "/spec/p/transformer", "value": {"library": "d"}},
    ]


def test_values_ome_cannot_match_are_named_by_path() -> None:
    runtime = {
        "kind": "ServingRuntime",
        "spec": {
            "modelSizeRange": {"min": "huge", "max": "70B"},
            "supportedModelFormats": [
                {"modelFormat": {"name": "safetensors", "version": "latest", "operator": "Equalish"}},
                {"modelFramework": {"name": "transformers", "version": "4.51.0", "operator": "GreaterThan"}},
            ],
        },
    }
    model = {"kind": "BaseModel", "spec": {"modelParameterSize": "7b", "modelFormat": {"name": "x", "version": "1.0"}}}

    found = dict(matching.unmatchable_values(runtime))

    assert list(found) == [
        "spec.modelSizeRange.min",
        "spec.supportedModelFormats[0].modelFormat.version",
        "spec.supportedModelFormats[0].modelFormat.operator",
    ]
    assert "does not parse" in found["spec.supportedModelFormats[0].modelFormat.version"]
    assert [path for path, _problem in matching.unmatchable_values(model)] == ["spec.modelParameterSize"]
