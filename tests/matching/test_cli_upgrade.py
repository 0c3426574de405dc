"""`ome-compat upgrade TREE --to NAME`: one tree judged by two OMEs, offline, as the upgrade page
does for a cluster. The cases' expectations: tests/matching/test_isvc_v13.py and
test_proposals.py, which cite ome-docs and the pull request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from matching.cli import main


def tree(folder: Path, *objects: dict[str, Any]) -> str:
    folder.mkdir()
    (folder / "objects.yaml").write_text(yaml.safe_dump_all(objects))
    return str(folder)


def test_a_release_to_v13_names_the_silent_and_the_pvc_behaviours(k, tmp_path: Path, capsys: Any) -> None:
    path = tree(
        tmp_path / "t",
        k.model("m", namespace="team", modelFormat=k.ref("safetensors")),
        k.model("pvc", modelFormat=k.ref("safetensors"), storage={"storageUri": "pvc://models:weights/m"}),
        k.csr("rt", {"modelFormat": k.ref("safetensors"), "autoSelect": True}),
        k.isvc("wrong-kind", model={"name": "m"}),
        k.isvc("on-pvc", model={"name": "pvc"}),
    )

    code = main(["upgrade", path, "--behaviour", "v1.2.2", "--to", "v1.3", "--json"])

    body = json.loads(capsys.readouterr().out)
    assert code == 1
    assert (body["from"], body["to"]) == ("17b77eda", "v1.3")
    verdicts = {
        item["isvc"]["name"]: (item["after"], item["causes"])
        for item in body["differences"]
        if item["field"] == "verdict"
    }
    assert verdicts == {"wrong-kind": ("silent", ["U7c"]), "on-pvc": ("blocked", ["PVC"])}


def test_what_flips_if_upstream_merges_603(k, tmp_path: Path, capsys: Any) -> None:
    weights = {"modelFramework": k.ref("transformers", "4.51.0", weight=1)}
    path = tree(
        tmp_path / "t",
        k.llama(),
        k.csr("weighted", k.llama_entry(modelFormat=k.ref("safetensors", "1.0.0", weight=5), **weights)),
        k.csr("prioritised", k.llama_entry(modelFormat=k.ref("safetensors", "1.0.0", weight=1), priority=2, **weights)),
    )

    code = main(["upgrade", path, "--to", "pr603"])

    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("Judged as OME v1.3, compared with OME pr603: ")
    assert "pick ('ClusterServingRuntime', '', 'weighted') -> ('ClusterServingRuntime', '', 'prioritised')" in out
    assert "P603 (newer OME): proposal ome#603" in out


def test_the_same_ome_finds_nothing_and_an_unknown_one_is_bad_input(k, tmp_path: Path, capsys: Any) -> None:
    path = tree(tmp_path / "t", k.llama(), k.csr("rt", k.llama_entry()))

    assert main(["upgrade", path, "--to", "v1.3"]) == 0
    with pytest.raises(SystemExit) as exited:
        main(["upgrade", path, "--to", "v9"])
    assert exited.value.code == 2
    assert "unknown profile 'v9'" in capsys.readouterr().err
