"""Lines of manifest fields: every finding and error can point at the line that caused it."""

from pathlib import Path

import pytest

import matching
from matching.positions import Positions

TREE = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: rt
spec:
  supportedModelFormats:
  - name: safetensors
    modelFormat: {name: safetensors}
    autoSelect: true
---
apiVersion: v1
kind: List
items:
- apiVersion: ome.io/v1beta1
  kind: ClusterBaseModel
  metadata:
    name: m
  spec:
    modelFormat:
      name: safetensors
"""


def test_every_key_and_item_has_its_line_and_a_missing_field_points_at_its_parent() -> None:
    [(first, positions), _second] = matching.load_text(TREE)
    assert first["kind"] == "ClusterServingRuntime"
    assert positions.line_of(()) == 1
    assert positions.line_of(("metadata", "name")) == 4
    assert positions.line_of(("spec", "supportedModelFormats", 0)) == 7
    assert positions.line_of(("spec", "supportedModelFormats", 0, "autoSelect")) == 9
    assert positions.line_of(("spec", "supportedModelFormats", 0, "modelSizeRange", "max")) == 7


def test_list_items_and_tree_objects_carry_their_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "all.yaml").write_text(TREE)
    [runtime, model] = list(matching.read_documents([tmp_path]))
    assert (runtime.line, model.line, model.item) == (1, 14, 0)
    assert model.positions.line_of(("spec", "modelFormat", "name")) == 20
    tree = matching.read_tree([tmp_path])
    origin = tree.origins[("ClusterBaseModel", "", "m")]
    assert (origin.file, origin.document, origin.item, origin.line) == (str(tmp_path / "all.yaml"), 1, 0, 14)
    assert origin.where == f"{tmp_path / 'all.yaml'}: document 1, item 0"


def test_json_documents_and_objects_built_in_code_have_no_lines() -> None:
    [(obj, positions)] = matching.load_text('{"kind": "X"}', json_text=True)
    assert obj == {"kind": "X"}
    assert positions.line_of(("kind",)) is None
    assert Positions().line_of(("a", 0)) is None


def test_deep_documents_get_lines_and_one_too_deep_for_the_parser_is_a_plain_error() -> None:
    def nested(depth: int) -> str:
        return "".join(f"{'  ' * level}k:\n" for level in range(depth)) + f"{'  ' * depth}v: 1\n"

    [(_obj, positions)] = matching.load_text(nested(900))
    assert positions.line_of(("k",) * 900 + ("v",)) == 901
    too_deep = nested(5000)  # 25 MB: over the reader's default size, so given room here
    with pytest.raises(ValueError, match="invalid YAML"):
        matching.load_text(too_deep, limits=matching.TextLimits(max_bytes=len(too_deep)))
