"""Loading manifest folders into a cluster's inventory: counts, idempotence, pruning, bad input."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from access.scope import SYSTEM
from inventory.models import Cluster, Resource, SyncState
from inventory.selectors import ClusterChoiceError, ClusterNotFound, cluster_choose
from inventory.services import ClusterSpec, cluster_register, manifests_load, parse_cluster_setting
from inventory.signals import inventory_changed
from tests.support.kubeconfigs import write_kubeconfig

pytestmark = pytest.mark.django_db

MODEL = """
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata: {name: %(name)s}
spec:
  modelFormat: {name: safetensors, version: "1.0.0"}
  modelArchitecture: LlamaForCausalLM
  storage: {storageUri: "%(uri)s"}
"""
RUNTIME = """
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata: {name: rt, namespace: team-a}
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def cluster() -> Cluster:
    return cluster_register(ClusterSpec("snap", Cluster.Source.MANIFESTS))


def load(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("load_manifests", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_load_reports_one_line_per_kind_and_skips_other_kinds(cluster: Cluster, tmp_path: Path) -> None:
    write(tmp_path, "models/a.yaml", MODEL % {"name": "a", "uri": "hf://x/a"})
    write(
        tmp_path,
        "runtimes.yaml",
        RUNTIME + "---\n" + "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n",
    )

    out, _ = load(str(tmp_path))

    assert "ClusterBaseModel: 1 added, 0 changed, 0 removed, 0 unchanged" in out
    assert "ServingRuntime: 1 added, 0 changed, 0 removed, 0 unchanged" in out
    assert "skipped 1 documents of other kinds (Kustomization: 1)" in out


def test_a_second_load_of_the_same_folder_changes_nothing(cluster: Cluster, tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", MODEL % {"name": "a", "uri": "hf://x/a"})
    load(str(tmp_path))

    out, _ = load(str(tmp_path))

    assert "ClusterBaseModel: 0 added, 0 changed, 0 removed, 1 unchanged" in out


def test_a_changed_manifest_is_counted_changed_and_announced_with_its_field(cluster: Cluster, tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", MODEL % {"name": "a", "uri": "hf://x/a"})
    load(str(tmp_path))
    path.write_text(path.read_text().replace("LlamaForCausalLM", "MistralForCausalLM"))
    received = []

    def receiver(sender: object, cluster_id: int, changes: list, **kwargs: object) -> None:
        received.extend(changes)

    inventory_changed.connect(receiver)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("django.db.transaction.on_commit", lambda callback, *a, **k: callback())
            out, _ = load(str(tmp_path))
    finally:
        inventory_changed.disconnect(receiver)

    assert "ClusterBaseModel: 0 added, 1 changed, 0 removed, 0 unchanged" in out
    assert [(c.name, c.action, c.fields) for c in received] == [("a", "changed", ("spec.modelArchitecture",))]
    assert Resource.objects.get(name="a").model_architecture == "MistralForCausalLM"


def test_prune_removes_objects_the_folder_no_longer_holds(cluster: Cluster, tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", MODEL % {"name": "a", "uri": "hf://x/a"})
    gone = write(tmp_path, "b.yaml", MODEL % {"name": "b", "uri": "hf://x/b"})
    load(str(tmp_path))
    gone.unlink()

    kept, _ = load(str(tmp_path))
    pruned, _ = load(str(tmp_path), "--prune")

    assert "ClusterBaseModel: 0 added, 0 changed, 0 removed, 1 unchanged" in kept
    assert "ClusterBaseModel: 0 added, 0 changed, 1 removed, 1 unchanged" in pruned
    assert list(Resource.objects.values_list("name", flat=True)) == ["a"]


def test_bad_documents_are_named_and_fail_the_command_while_good_ones_load(cluster: Cluster, tmp_path: Path) -> None:
    write(tmp_path, "good.yaml", MODEL % {"name": "good", "uri": "hf://x/good"})
    write(tmp_path, "broken.yaml", "kind: [unclosed\n")
    bad_version = (MODEL % {"name": "bad", "uri": "hf://x/bad"}).replace('version: "1.0.0"', "version: 1.0")
    write(tmp_path, "multi.yaml", MODEL % {"name": "first", "uri": "hf://x/f"} + "---\n" + bad_version)
    err = StringIO()

    with pytest.raises(CommandError):
        call_command("load_manifests", str(tmp_path), stdout=StringIO(), stderr=err)

    lines = err.getvalue().splitlines()
    assert any("broken.yaml: document 0: invalid YAML" in line for line in lines)
    assert any(
        "multi.yaml: document 1: ClusterBaseModel bad: spec.modelFormat.version: expected a string, got float" in line
        for line in lines
    )
    assert set(Resource.objects.values_list("name", flat=True)) == {"good", "first", "bad"}
    assert Resource.objects.get(name="bad").error.startswith("spec.modelFormat.version")


def test_list_documents_are_unpacked_and_json_files_read(cluster: Cluster, tmp_path: Path) -> None:
    items = [
        {"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel", "metadata": {"name": f"m{i}"}, "spec": {}}
        for i in range(3)
    ]
    write(tmp_path, "list.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))

    out, _ = load(str(tmp_path))

    assert "ClusterBaseModel: 3 added" in out


def test_manifests_get_the_crd_defaults_a_live_cluster_applies(cluster: Cluster, tmp_path: Path) -> None:
    write(tmp_path, "rt.yaml", RUNTIME)

    manifests_load(cluster, [tmp_path], prune=False)

    entry = Resource.objects.get(name="rt").obj["spec"]["supportedModelFormats"][0]
    assert entry["modelFormat"] == {"name": "safetensors", "version": "1.0.0", "operator": "Equal", "weight": 1}


def test_namespaced_objects_without_a_namespace_land_in_default(cluster: Cluster, tmp_path: Path) -> None:
    write(tmp_path, "rt.yaml", RUNTIME.replace(", namespace: team-a", ""))

    manifests_load(cluster, [tmp_path], prune=False)

    assert Resource.objects.get(name="rt").namespace == "default"


def test_filter_columns_are_filled_from_the_object(cluster: Cluster, tmp_path: Path) -> None:
    pipeline_model = (MODEL % {"name": "img", "uri": "pvc://ome:models/qwen"}).replace(
        "  modelArchitecture: LlamaForCausalLM", "  diffusionPipeline: {className: QwenImagePipeline}"
    )
    write(tmp_path, "m.yaml", pipeline_model)

    manifests_load(cluster, [tmp_path], prune=False)

    resource = Resource.objects.get(name="img")
    assert (resource.storage_scheme, resource.has_pipeline, resource.pipeline_class) == (
        "pvc://",
        True,
        "QwenImagePipeline",
    )
    assert resource.model_format == "safetensors"


def test_two_clusters_keep_objects_of_the_same_name_apart(cluster: Cluster, tmp_path: Path) -> None:
    other = cluster_register(ClusterSpec("other", Cluster.Source.MANIFESTS))
    write(tmp_path, "one/a.yaml", MODEL % {"name": "a", "uri": "hf://one"})
    write(tmp_path, "two/a.yaml", MODEL % {"name": "a", "uri": "hf://two"})

    manifests_load(cluster, [tmp_path / "one"], prune=True)
    manifests_load(other, [tmp_path / "two"], prune=True)
    manifests_load(cluster, [tmp_path / "one"], prune=True)

    uris = {r.cluster.name: r.obj["spec"]["storage"]["storageUri"] for r in Resource.objects.select_related("cluster")}
    assert uris == {"snap": "hf://one", "other": "hf://two"}


def test_a_load_records_the_sync_state_of_each_kind(cluster: Cluster, tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", MODEL % {"name": "a", "uri": "hf://x/a"})

    manifests_load(cluster, [tmp_path], prune=False)

    state = SyncState.objects.get(cluster=cluster, kind="ClusterBaseModel")
    assert state.count == 1
    assert state.last_list_at is not None
    assert state.last_error == ""


def test_the_only_cluster_is_the_default_and_several_need_a_name(cluster: Cluster) -> None:
    assert cluster_choose(None, default="only", scope=SYSTEM) == cluster

    cluster_register(ClusterSpec("second", Cluster.Source.IN_CLUSTER))

    with pytest.raises(ClusterChoiceError, match="several clusters"):
        cluster_choose(None, default="only", scope=SYSTEM)
    assert cluster_choose("second", default="only", scope=SYSTEM).source == "in-cluster"


def test_the_cluster_default_rule_is_the_callers_choice(cluster: Cluster) -> None:
    second = cluster_register(ClusterSpec("a-second", Cluster.Source.IN_CLUSTER))

    assert cluster_choose(None, default="first", scope=SYSTEM) == second
    assert cluster_choose(str(cluster.pk), default="none", scope=SYSTEM) == cluster
    with pytest.raises(ClusterChoiceError, match="name the cluster") as unnamed:
        cluster_choose(" ", default="none", scope=SYSTEM)
    with pytest.raises(ClusterNotFound) as missing:
        cluster_choose("nowhere", default="none", scope=SYSTEM)
    with pytest.raises(ClusterChoiceError) as unknown:
        cluster_choose("nowhere", default="only", scope=SYSTEM)

    assert (unnamed.value.http_status, missing.value.http_status, unknown.value.http_status) == (400, 404, 400)
    assert {unnamed.value.field, missing.value.field, unknown.value.field} == {"cluster"}


def test_add_cluster_registers_each_kind_of_source(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.OME_KUBECONFIG_DIR = tmp_path
    write_kubeconfig(tmp_path / "kubeconfig", context="prod")
    monkeypatch.chdir(tmp_path)
    call_command("add_cluster", "prod", "--kubeconfig", "kubeconfig", "--context", "prod", stdout=StringIO())
    call_command("add_cluster", "local", "--in-cluster", stdout=StringIO())
    call_command("add_cluster", "snap", "--manifests", "a", "b", stdout=StringIO())

    clusters = {c.name: c for c in Cluster.objects.all()}
    assert (clusters["prod"].kubeconfig, clusters["prod"].context) == (str(tmp_path / "kubeconfig"), "prod")
    assert clusters["local"].source == "in-cluster"
    assert clusters["snap"].manifests == ["a", "b"]


def test_the_cluster_setting_is_parsed_with_paths_relative_to_the_project(settings: object) -> None:
    specs = parse_cluster_setting(
        "demo=manifests:catalog/runtimes,/abs/demo; prod=kubeconfig:/k.yaml#ctx\nin=in-cluster"
    )

    assert [(s.name, s.source) for s in specs] == [("demo", "manifests"), ("prod", "kubeconfig"), ("in", "in-cluster")]
    assert specs[0].manifests[0].endswith("/catalog/runtimes")
    assert specs[0].manifests[1] == "/abs/demo"
    assert (specs[1].kubeconfig, specs[1].context) == ("/k.yaml", "ctx")


@pytest.mark.parametrize("text", ["nameonly", "x=manifests:", "x=ftp://y", "=in-cluster"])
def test_a_bad_cluster_setting_names_the_entry(text: str) -> None:
    with pytest.raises(ValueError, match="OME_CLUSTERS entry"):
        parse_cluster_setting(text)


def test_the_bundled_demo_loads_without_errors(tmp_path: Path) -> None:
    demo = cluster_register(parse_cluster_setting("demo=manifests:catalog/runtimes,demo")[0])

    result, snapshot = manifests_load(demo, demo.manifests, prune=True)

    assert snapshot.errors == []
    assert result.counts["ClusterBaseModel"].added > 200
    assert Resource.objects.filter(cluster=demo, name="qwen-image-pvc", has_pipeline=False).exists()
    assert Resource.objects.filter(cluster=demo, name="srt-qwen-image-pipeline").exists()


@pytest.mark.parametrize("behaviour", ["17b77eda", "078c923f"])
def test_the_command_line_and_load_manifests_give_the_same_scores(behaviour: str) -> None:
    import subprocess
    import sys

    from inventory.ome_release import ome_version_set_admin
    from inventory.parsed import load_inventory

    root = Path(__file__).resolve().parents[2]
    model_file = root / "demo/seed/clusterbasemodel-qwen-image-pvc.yaml"
    runtimes = [
        root / "demo/seed/clusterservingruntime-srt-qwen-image-pipeline.yaml",
        root / "catalog/runtimes/srt/Qwen",
    ]
    cluster = cluster_register(ClusterSpec("files", Cluster.Source.MANIFESTS, manifests=()))
    ome_version_set_admin(cluster, behaviour)
    call_command("load_manifests", str(model_file), *map(str, runtimes), "--cluster", "files", stdout=StringIO())

    command = [sys.executable, "-m", "matching", "explain", str(model_file), *map(str, runtimes), "--json"]
    printed = json.loads(
        subprocess.run(
            [*command, "--behaviour", behaviour], capture_output=True, text=True, cwd=root, check=True
        ).stdout
    )
    selection = load_inventory(cluster).grid.select(("ClusterBaseModel", "", "qwen-image-pvc"))

    assert printed["compatible"] == [match.to_dict() for match in selection.compatible]
    assert [match["score"] for match in printed["compatible"]] == [2]  # weights 1 + 1, as on a cluster (15 raw)
    assert printed == selection.to_dict()
