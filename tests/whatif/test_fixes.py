"""Near misses and their fixes on the model and cell pages and in the API, each fix with its
matrix impact; and the `kubectl patch` commands shown, run with real kubectl against the fake
Kubernetes API."""

from __future__ import annotations

import copy
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

import matching
from access.scope import SYSTEM
from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Resource
from inventory.parsed import load_inventory
from inventory.sync import event_apply
from matrix.models import MatrixRow
from matrix.selectors import current_build
from matrix.services import matrix_rebuild
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.manifests import llama_model
from whatif.diff import Rows, diff_row
from whatif.fixes import MAX_IMPACTS, model_near_misses, patched_documents
from whatif.overlay import replaced_inventory
from whatif.parse import parse_documents
from whatif.services import whatif_inventory

AFM = ("ClusterBaseModel", "", "afm-4-5b-base")  # its namesake runtime has no autoSelect entry


def resource(cluster: Cluster, key: tuple[str, str, str]) -> Resource:
    return Resource.objects.get(cluster=cluster, kind=key[0], namespace=key[1], name=key[2])


def version_off_runtime(name: str = "sglang-llama") -> dict[str, Any]:
    """A runtime for llama_model's format, one framework patch release off, with autoSelect."""
    entry = {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.51.1"},
        "modelArchitecture": "LlamaForCausalLM",
        "autoSelect": True,
    }
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {"supportedModelFormats": [entry], "containers": [{"name": "engine", "image": "sglang:1"}]},
    }


@pytest.mark.django_db
def test_a_model_without_runtime_lists_its_near_misses_one_check_away_first(demo: Cluster) -> None:
    misses = model_near_misses(resource(demo, AFM), "", scope=SYSTEM).misses

    distances = [item.miss.distance for item in misses]
    assert distances == sorted(distances)
    first = misses[0]
    assert (first.miss.runtime[2], first.miss.checks) == ("srt-afm-4-5b-base", ("autoSelect",))
    (proposal,) = first.proposals
    assert proposal.fix.side == "runtime"
    assert proposal.impact is not None
    assert proposal.impact.harm == (0, 0, 0)
    assert [(change.model, change.change, change.namespaces) for change in proposal.impact.changes] == [
        (AFM, "gets a runtime", ("", "research", "team-a", "team-b"))  # one line, four namespaces
    ]
    assert proposal.commands == [
        "kubectl patch clusterservingruntimes.ome.io srt-afm-4-5b-base --type json -p "
        """'[{"op":"add","path":"/spec/supportedModelFormats/0/autoSelect","value":true}]'"""
    ]


@pytest.mark.django_db
def test_fixes_that_harm_no_other_model_come_first(demo: Cluster) -> None:
    """Harm first: another model losing its runtime, then one served under another model's
    name, then one changing runtime; a gain is no harm."""
    found = model_near_misses(resource(demo, AFM), "", scope=SYSTEM)
    measured = [proposal for item in found.misses for proposal in item.proposals if proposal.impact is not None]
    assert 0 < len(measured) <= MAX_IMPACTS  # the panel's what-ifs are bounded
    harms = [(p.impact is None, p.impact.harm if p.impact else (0, 0, 0)) for p in found.ranked]
    assert harms == sorted(harms)
    for proposal in measured:
        assert proposal.impact is not None
        others = proposal.impact.others
        lost = [c for c in others if c.old_selected is not None and c.new_selected is None]
        gained = [c for c in others if c.old_selected is None and c.new_selected is not None]
        assert proposal.impact.losses == lost
        assert set(map(id, proposal.impact.gains)) <= set(map(id, gained))


@pytest.mark.django_db
def test_the_model_page_loads_the_near_misses_of_a_model_without_runtime(client: Client, demo: Cluster) -> None:
    model = resource(demo, AFM)
    page = client.get(f"/models/{model.pk}/").content.decode()
    fragment = client.get(f"/models/{model.pk}/near-misses/", {"namespace": "_cluster"}, HTTP_HX_REQUEST="true")

    assert f'hx-get="/models/{model.pk}/near-misses/?namespace=_cluster" hx-trigger="load" hx-target="this"' in page
    html = fragment.content.decode()
    assert fragment.status_code == 200
    assert "<html" not in html
    assert html.index("one check away") < html.index("checks away")
    assert "Changes no other model." in html
    assert "kubectl patch clusterservingruntimes.ome.io srt-afm-4-5b-base --type json -p" in html
    assert 'name="fix"' in html  # opens the what-if, filled in


@pytest.mark.django_db
def test_the_cell_page_asks_for_the_fixes_of_its_runtime_only(client: Client, demo: Cluster) -> None:
    model, runtime = resource(demo, AFM), resource(demo, ("ClusterServingRuntime", "", "srt-afm-4-5b-base"))
    page = client.get(f"/cells/{model.pk}/{runtime.pk}/_cluster/").content.decode()
    html = client.get(
        f"/models/{model.pk}/near-misses/", {"namespace": "_cluster", "runtime": runtime.pk}
    ).content.decode()

    assert f"/models/{model.pk}/near-misses/?namespace=_cluster&amp;runtime={runtime.pk}" in page
    assert html.count('class="near-miss"') == 1
    assert "srt-afm-4-5b-base" in html


@pytest.mark.django_db
def test_a_fix_opens_the_runtime_whatif_filled_in_and_evaluated(client: Client, demo: Cluster) -> None:
    model = resource(demo, AFM)
    runtime = resource(demo, ("ClusterServingRuntime", "", "srt-afm-4-5b-base"))
    (proposal,) = model_near_misses(model, "", scope=SYSTEM).misses[0].proposals

    response = client.post(f"/runtimes/{runtime.pk}/what-if/", {"fix": proposal.patches_json})

    html = response.content.decode()
    assert response.status_code == 200
    assert "autoSelect: true" in html  # the manifest box holds the patched runtime
    assert "data-scroll-into-view" in html
    assert "afm-4-5b-base</a>" in html
    assert "same in every namespace (4 rows)" in html  # the change once: cluster scope and 3 namespaces
    assert "srt-afm-4-5b-base: manual-only → selected" in html  # why the row changes
    assert "OME&#x27;s pick: none → srt-afm-4-5b-base" in html
    assert f"/cells/{model.pk}/{runtime.pk}/_cluster/" in html  # each changed row links to its cell


@pytest.mark.django_db
def test_the_api_ranks_near_misses_with_fixes_commands_and_impact(client: Client, demo: Cluster) -> None:
    model = resource(demo, AFM)

    body = client.get("/api/v1/matrix/near-misses/", {"model": model.pk, "namespace": "_cluster"}).json()

    assert body["model"] == {
        "kind": "ClusterBaseModel",
        "namespace": "_cluster",
        "name": "afm-4-5b-base",
        "id": model.pk,
    }
    first = body["near_misses"][0]
    assert first["distance"] == 1
    assert first["failed"][0]["check"] == "autoSelect"
    fix = first["fixes"][0]
    assert fix["side"] == "runtime"
    assert fix["patches"][0]["operations"] == [
        {"op": "add", "path": "/spec/supportedModelFormats/0/autoSelect", "value": True}
    ]
    assert fix["kubectl"][0].startswith("kubectl patch clusterservingruntimes.ome.io srt-afm-4-5b-base")
    assert (fix["impact"]["losses"], fix["impact"]["renames"], fix["impact"]["moves"]) == ([], [], [])
    assert fix["impact"]["gains"] == []  # afm-4-5b-base itself gets the runtime: no other model
    assert fix["impact"]["changes"][0]["namespaces"] == ["_cluster", "research", "team-a", "team-b"]


@pytest.mark.django_db
def test_the_api_refuses_a_runtime_of_another_cluster(client: Client, demo: Cluster) -> None:
    other = Cluster.objects.create(name="other", source=Cluster.Source.MANIFESTS)
    foreign = Resource.objects.create(
        cluster=other,
        kind="ClusterServingRuntime",
        name="x",
        obj={},
        first_seen=timezone.now(),
        last_seen=timezone.now(),
    )

    response = client.get("/api/v1/matrix/near-misses/", {"model": resource(demo, AFM).pk, "runtime": foreign.pk})

    assert response.status_code == 400
    assert response.json()["field"] == "runtime"


@pytest.mark.django_db
def test_every_kubectl_command_shown_for_a_version_mismatch_works_against_the_api_server(
    tmp_path: Path, settings: Any
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    model, runtime = llama_model("llama-8b"), version_off_runtime()
    with FakeKubeAPI() as fake:
        fake.apply(copy.deepcopy(model))
        fake.apply(copy.deepcopy(runtime))
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        cluster = Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig=str(kubeconfig))
        cluster_resync(cluster)
        matrix_rebuild(cluster)
        stored = resource(cluster, ("ClusterBaseModel", "", "llama-8b"))
        (miss,) = model_near_misses(stored, "", scope=SYSTEM).misses
        assert miss.miss.checks == ("framework",)
        # The model's recorded framework version is a fact: only the runtime changes, by a
        # version, an operator or a new entry appended with "-".
        assert {proposal.fix.side for proposal in miss.proposals} == {"runtime"}
        assert any("/supportedModelFormats/-" in command for p in miss.proposals for command in p.commands)

        for proposal in miss.proposals:
            fake.apply(copy.deepcopy(model))
            fake.apply(copy.deepcopy(runtime))
            for command in proposal.commands:
                done = subprocess.run(
                    [*shlex.split(command), "--kubeconfig", str(kubeconfig)], capture_output=True, text=True, timeout=60
                )
                assert done.returncode == 0, done.stderr
            live_model = fake.get("ClusterBaseModel", "llama-8b")
            live_runtime = fake.get("ClusterServingRuntime", "sglang-llama")
            selection = matching.select(live_model, [live_runtime], namespace="")
            assert [match.name for match in selection.compatible] == ["sglang-llama"], proposal.fix.changes

        cluster_resync(cluster)  # the last fix, read back through the real client
        matrix_rebuild(cluster)
        row = MatrixRow.objects.get(build=current_build(cluster), model=stored, namespace="")
        assert row.selected is not None
        assert row.selected.name == "sglang-llama"


@pytest.mark.django_db
def test_the_impact_of_each_fix_equals_comparing_every_row_of_the_matrix(demo: Cluster) -> None:
    """Row by row, each computed alone: the what-ifs share rows between models of one signature
    and (as a panel's do) the unchanged inventory's rows across what-ifs."""
    inventory = load_inventory(demo)
    old_rows: Rows = {}
    checked = 0
    names = ("baichuan2-13b-chat", "qwen2-5-14b", "gpt-oss-20b", "llama-4-scout-17b-16e-instruct")
    for model_key in (AFM, *(("ClusterBaseModel", "", name) for name in names)):
        for item in model_near_misses(resource(demo, model_key), "", scope=SYSTEM).misses[:4]:
            objects = {key: resource(demo, key).obj for key in (model_key, item.miss.runtime)}
            for proposal in item.proposals:
                documents = patched_documents(objects, proposal.fix)
                changes = {value.key: value for _obj, value in parse_documents(documents)}
                new = replaced_inventory(inventory, changes, [])
                runtimes = [key for key in changes if key[0].endswith("ServingRuntime")]
                expected = {}
                for key in inventory.model_keys:
                    for namespace in set(inventory.namespaces_for(key)) | set(new.namespaces_for(key)):
                        scoped = [rt for rt in runtimes if rt[0] == "ClusterServingRuntime" or rt[1] == namespace]
                        diff = diff_row(inventory, new, key, namespace, scoped, with_errors=False)
                        if diff is not None:
                            expected[key, namespace] = diff
                result = whatif_inventory(inventory, documents, explain=False, old_rows=old_rows)
                assert {(row.model, row.namespace): row for row in result.rows} == expected, proposal.fix.changes
                checked += 1
    assert checked >= 6


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fix", "message"),
    [
        ("{not json", "the fix is not valid JSON"),
        ('{"kind": "ClusterServingRuntime"}', "must be a list of object patches"),
        ('[{"kind": ["x"], "name": "y"}]', "names its kind, namespace and name as text"),
        ('[{"kind": "ClusterServingRuntime", "name": "nope", "operations": []}]', "is not in the cluster"),
        (
            '[{"kind": "ClusterServingRuntime", "name": "srt-afm-4-5b-base", "operations": "add"}]',
            "a JSON patch must be a list of operations",
        ),
        (
            '[{"kind": "ClusterServingRuntime", "name": "srt-afm-4-5b-base", "operations": [1]}]',
            "an operation must be an object",
        ),
        (
            '[{"kind": "ClusterServingRuntime", "name": "srt-afm-4-5b-base", '
            '"operations": [{"op": "remove", "path": "/spec/nothing"}]}]',
            "the fix does not apply",
        ),
    ],
)
def test_a_bad_fix_is_a_clear_error_in_place(client: Client, demo: Cluster, fix: str, message: str) -> None:
    runtime = resource(demo, ("ClusterServingRuntime", "", "srt-afm-4-5b-base"))

    response = client.post(f"/runtimes/{runtime.pk}/what-if/", {"fix": fix}, HTTP_HX_REQUEST="true")

    assert response.status_code == 400
    assert message in response.content.decode()


GEMMA = ("ClusterBaseModel", "", "gemma-2b")
FACT_PATHS = ("/spec/modelArchitecture", "/spec/modelFormat", "/spec/modelFramework", "/spec/quantization")


@pytest.mark.django_db
def test_gemma_2b_gets_no_change_to_its_facts_and_a_new_runtime_that_picks_it(client: Client, demo: Cluster) -> None:
    found = model_near_misses(resource(demo, GEMMA), "", scope=SYSTEM)

    assert found.unserved == "GemmaForCausalLM"
    model_operations = [
        op for p in found.ranked for patch in p.fix.patches if patch.target == GEMMA for op in patch.operations
    ]
    assert not [op for op in model_operations if op["path"].startswith(FACT_PATHS)]
    (derived,) = [proposal for proposal in found.ranked if proposal.fix.created]
    assert derived.impact is not None
    assert derived.impact.pick_of_target() == derived.fix.runtime  # the what-if: OME would pick it
    assert derived.commands[0].startswith("kubectl apply -f - <<'EOF'\n")
    assert "GemmaForCausalLM" in derived.commands[0]

    html = client.get(f"/models/{resource(demo, GEMMA).pk}/near-misses/", {"namespace": "_cluster"}).content.decode()
    assert "No runtime serves GemmaForCausalLM in this cluster" in html
    assert "set spec.modelArchitecture" not in html
    assert "spec.modelFramework.version to" not in html


@pytest.mark.django_db
def test_gpt_oss_20b_is_offered_its_own_runtime_and_never_the_one_of_gpt_oss_120b(demo: Cluster) -> None:
    """srt-gpt-oss-120b-grpc passes --served-model-name openai/gpt-oss-120b: no fix makes it
    serve gpt-oss-20b; srt-gpt-oss-20b (openai/gpt-oss-20b, range 10B-15B) is one size bound away."""
    found = model_near_misses(resource(demo, ("ClusterBaseModel", "", "gpt-oss-20b")), "", scope=SYSTEM)

    first = found.ranked[0]
    assert first.fix.runtime[2] == "srt-gpt-oss-20b"
    assert first.fix.changes == ("runtime: set modelSizeRange.max to 20B",)
    assert first.impact is not None
    assert not first.impact.others
    assert not [p for p in found.ranked if p.fix.runtime[2] == "srt-gpt-oss-120b-grpc"]
    (big,) = [item for item in found.misses if item.miss.runtime[2] == "srt-gpt-oss-120b-grpc"]
    assert "openai/gpt-oss-120b" in big.dedicated


@pytest.mark.django_db
def test_the_wording_names_only_real_changes_and_the_runtime_ome_would_pick(client: Client, demo: Cluster) -> None:
    model = resource(demo, ("ClusterBaseModel", "", "qwen2-5-14b"))
    found = model_near_misses(model, "", scope=SYSTEM)
    html = client.get(f"/models/{model.pk}/near-misses/", {"namespace": "_cluster"}).content.decode()

    for proposal in found.ranked:
        for change in [] if proposal.impact is None else proposal.impact.changes:
            if change.old_selected == change.new_selected:
                kept = "none" if change.old_selected is None else change.old_selected[2]
                assert change.summary.startswith(f"keeps {kept}")
                assert f"{kept} → {kept}" not in change.summary
    assert "srt-deepseek-r1-distill-qwen-14b → srt-deepseek-r1-distill-qwen-14b" not in html
    instead = [p for p in found.ranked if p.picked_instead is not None]
    assert instead  # srt-qwen2-5-14b matches but srt-deepseek-r1-distill-qwen-14b still ranks higher
    assert f"but OME would pick {instead[0].picked_instead[2]}, which ranks higher" in html  # type: ignore[index]


@pytest.mark.django_db
def test_near_misses_are_made_once_per_inventory_version(demo: Cluster) -> None:
    model = resource(demo, AFM)
    first = model_near_misses(model, "", scope=SYSTEM)
    assert model_near_misses(model, "", scope=SYSTEM) is first  # the model page asks on every load
    assert first.misses[0].miss.checks == ("autoSelect",)

    runtime = resource(demo, ("ClusterServingRuntime", "", first.misses[0].miss.runtime[2]))
    obj = copy.deepcopy(runtime.obj)
    for entry in obj["spec"]["supportedModelFormats"]:
        entry["autoSelect"] = True
    event_apply(demo, "MODIFIED", obj)

    after = model_near_misses(model, "", scope=SYSTEM)
    assert runtime.key not in [item.miss.runtime for item in after.misses]  # it serves the model now
