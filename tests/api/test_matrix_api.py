"""/api/v1/matrix/: paged cells, one cell's trace, a model's selection, history, exports."""

from __future__ import annotations

import copy
import csv
import io
import json
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

import matching
from core.api import api_keys
from core.web import namespace_token
from inventory.models import RUNTIME_KINDS, Cluster, Resource
from inventory.sync import event_apply
from matrix.models import MatrixRow
from matrix.paging import CELL_LISTS, CellList
from matrix.selectors import current_build
from matrix.services import matrix_apply_changes
from tests.support.matrix import matrix_cells

pytestmark = pytest.mark.django_db

SEED_REASON = "diffusion pipeline required by runtime but not specified in model"
PIPELINE_PATCH = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}


def resource(cluster: Cluster, name: str, kind: str | None = None) -> Resource:
    found = Resource.objects.filter(cluster=cluster, name=name)
    return found.get(kind=kind) if kind else found.get()


def cells(api: APIClient, **params: Any) -> dict[str, Any]:
    response = api.get("/api/v1/matrix/cells/", params)
    assert response.status_code == 200, response.content
    return dict(response.json())


def identity(cell: Any) -> tuple[int, int, str]:
    if isinstance(cell, dict):
        return (cell["model"]["id"], cell["runtime"]["id"], cell["namespace"])
    return (cell.model.pk, cell.runtime.pk, namespace_token(cell.namespace))


def test_a_cells_page_names_the_ome_behaviour_and_the_build(api: APIClient, demo: Cluster) -> None:
    build = current_build(demo)
    assert build is not None

    response = api.get("/api/v1/matrix/cells/", {"page_size": 3})

    body = response.json()
    assert body["ome"] == {
        **api_keys(matching.OME_BEHAVIOUR),
        "profile": matching.NEWEST_BEHAVIOUR,
        "source": "registration",
        "version": "",
        "why": "a manifest snapshot registered without an OME version: judged by the newest profile, v1.3",
        "version_known": False,
    }
    assert body["build"]["id"] == build.pk
    assert body["build"]["finished_at"]
    assert response["X-OME-Behaviour"] == (
        f"profile={matching.NEWEST_BEHAVIOUR}; commit={matching.OME_BEHAVIOUR['commit']}; source=registration"
    )
    assert response["X-OME-Build"] == str(build.pk)
    assert len(body["results"]) == 3


def test_the_count_and_any_page_agree_with_every_cell_of_the_build(api: APIClient, demo: Cluster) -> None:
    build = current_build(demo)
    assert build is not None
    every = list(matrix_cells(build))

    first = cells(api, page_size=7, reasons="false")
    middle = cells(api, page_size=500, page=171, reasons="false")
    last = cells(api, page_size=500, page="last", reasons="false")

    assert first["count"] == len(every)
    assert [identity(c) for c in first["results"]] == [identity(c) for c in every[:7]]
    assert [identity(c) for c in middle["results"]] == [identity(c) for c in every[85000:85500]]
    assert [identity(c) for c in last["results"]] == [identity(c) for c in every[(len(every) - 1) // 500 * 500 :]]


def test_a_status_filtered_page_agrees_with_the_filtered_cells(api: APIClient, demo: Cluster) -> None:
    build = current_build(demo)
    assert build is not None
    wanted = [
        c for c in matrix_cells(build, namespace="team-b") if c.status in ("compatible", "manual-only", "disabled")
    ]

    pages = [
        cells(api, namespace="team-b", status=["compatible", "manual-only", "disabled"], page_size=20, page=n)
        for n in (1, 2)
    ]

    assert pages[0]["count"] == len(wanted) > 20
    found = [identity(c) for page in pages for c in page["results"]]
    assert found == [identity(c) for c in wanted[:40]]


def test_the_pages_of_an_outcome_filtered_list_measure_its_rows_once(
    api: APIClient, demo: Cluster, measured_cell_lists: list[CellList]
) -> None:
    # outcome=no-match filters on `manual = []`: a JSON parameter (psycopg's Jsonb on PostgreSQL).
    bounds = {**settings.CACHE_ENTRIES, "cell_lists": len(CELL_LISTS) + 10}

    with override_settings(CACHE_ENTRIES=bounds):
        held = len(CELL_LISTS)
        pages = [cells(api, outcome="no-match", page_size=1, page=n, reasons="false") for n in (1, 2)]

    assert pages[0]["count"] == pages[1]["count"] > 1
    assert pages[0]["results"] != pages[1]["results"]
    assert len(measured_cell_lists) == 1
    assert len(CELL_LISTS) == held + 1


def test_selected_cells_are_one_per_row_that_has_a_runtime(api: APIClient, demo: Cluster) -> None:
    build = current_build(demo)

    body = cells(api, status="selected", page_size=1000)

    assert body["count"] == MatrixRow.objects.filter(build=build, outcome="selected").count()
    assert {(c["status"], c["rank"]) for c in body["results"]} == {("selected", 0)}
    assert all(c["score"] > 0 and "reason" in c and c["reason"] is None for c in body["results"])


def test_cells_filter_by_model_runtime_and_namespace(api: APIClient, demo: Cluster) -> None:
    model = resource(demo, "qwen-image-pvc")
    runtime = resource(demo, "srt-qwen-image-pipeline")

    by_model = cells(api, model=model.pk, page_size=1000)
    one = cells(api, model=model.pk, runtime=runtime.pk, namespace="_cluster")
    by_name = cells(api, model_name="qwen-image-pvc", runtime_name="srt-qwen-image-pipeline")
    in_team_a = cells(api, namespace="team-a", runtime_kind="ServingRuntime")

    assert {c["model"]["name"] for c in by_model["results"]} == {"qwen-image-pvc"}
    assert {c["namespace"] for c in by_model["results"]} == {"_cluster", "research", "team-a", "team-b"}
    [cell] = one["results"]
    assert cell["status"] == "excluded"
    assert cell["reason"].endswith(SEED_REASON)
    assert cell["model"] == {
        "id": model.pk,
        "kind": "ClusterBaseModel",
        "namespace": "_cluster",
        "name": "qwen-image-pvc",
    }
    assert by_name["count"] == 4  # one per namespace
    assert {(c["runtime"]["kind"], c["runtime"]["namespace"]) for c in in_team_a["results"]} == {
        ("ServingRuntime", "team-a")
    }


def test_reasons_can_be_left_out(api: APIClient, demo: Cluster) -> None:
    body = cells(api, model_name="qwen-image-pvc", reasons="false", page_size=5)

    assert all("reason" not in c for c in body["results"])


def test_a_manual_only_cell_says_why_it_is_not_picked(api: APIClient, demo: Cluster) -> None:
    body = cells(api, status="manual-only", page_size=5)

    assert body["count"] > 0
    assert all(c["reason"] for c in body["results"])


def test_one_cell_carries_the_check_trace_and_the_seed_reason(api: APIClient, demo: Cluster) -> None:
    model = resource(demo, "qwen-image-pvc")
    runtime = resource(demo, "srt-qwen-image-pipeline")

    response = api.get("/api/v1/matrix/cell/", {"model": model.pk, "runtime": runtime.pk})

    body = response.json()
    assert response.status_code == 200, body
    assert response["X-OME-Behaviour"]
    assert body["ome"]["profile"] == matching.NEWEST_BEHAVIOUR
    assert (body["status"], body["namespace"]) == ("excluded", "_cluster")
    assert body["reason"].endswith(SEED_REASON)
    assert body["check"] == api_keys(matching.check(model.obj, runtime.obj).to_dict())
    assert {"is_cluster", "matched_entry"} <= set(body["check"])
    assert all("auto_select" in entry for entry in body["check"]["entries"])
    assert any(SEED_REASON in (entry["mismatch"] or "") for entry in body["check"]["entries"])
    assert [b["entry"] for b in body["score_breakdown"]] == list(range(len(body["check"]["entries"])))
    assert all(b["text"] for b in body["score_breakdown"])


def test_the_selected_cell_shows_its_score_arithmetic(api: APIClient, demo: Cluster) -> None:
    model = resource(demo, "qwen-image-pvc")
    runtime = resource(demo, "srt-qwen-image")

    body = api.get("/api/v1/matrix/cell/", {"model": model.pk, "runtime": runtime.pk}).json()

    assert (body["status"], body["rank"], body["reason"]) == ("selected", 0, None)
    matched = body["score_breakdown"][body["entry"]]
    assert matched["result"] == body["score"]
    assert matched["weights"]
    assert sum(matched["weights"].values()) * matched["priority"] == matched["result"]
    assert matched["text"].endswith(f"x {matched['priority']} = {matched['result']}")


def test_the_selection_is_exactly_matching_select_over_the_stored_objects(api: APIClient, demo: Cluster) -> None:
    model = resource(demo, "qwen-image-pvc")
    runtimes = [r.obj for r in Resource.objects.filter(cluster=demo, kind__in=RUNTIME_KINDS, error="")]

    for namespace, param in (("", None), ("team-b", "team-b"), ("", "_cluster")):
        response = api.get("/api/v1/matrix/selection/", {"model": model.pk, **({"namespace": param} if param else {})})

        assert response.status_code == 200
        body = response.json()
        expected = matching.select(model.obj, runtimes, namespace=namespace)
        assert body["model"] == {"kind": "ClusterBaseModel", "namespace": "_cluster", "name": "qwen-image-pvc"}
        assert body["namespace"] == (namespace or "_cluster")
        assert [(m["runtime"]["name"], m["score"]) for m in body["compatible"]] == [
            (m.name, m.score) for m in expected.compatible
        ]
        assert body["selected"] == (body["compatible"][0]["runtime"] if expected.selected else None)
        assert {m["runtime"]["name"]: m["reason"] for m in body["manual_only"]} == expected.manual_only
        assert {m["runtime"]["name"]: m["reason"] for m in body["excluded"]} == expected.excluded
        assert all(set(m["runtime"]) == {"kind", "namespace", "name"} for m in body["excluded"])
        assert body["error"] == expected.error
        assert response["X-OME-Behaviour"]


def test_history_records_an_incremental_change_with_its_cause(api: APIClient, demo: Cluster) -> None:
    model = resource(demo, "qwen-image-pvc")
    obj = copy.deepcopy(model.obj)
    obj["spec"]["diffusionPipeline"] = PIPELINE_PATCH
    change = event_apply(demo, "MODIFIED", obj)
    assert change is not None
    matrix_apply_changes(demo, [change.to_dict()])

    response = api.get(
        "/api/v1/matrix/history/",
        {"model": model.pk, "runtime_name": "srt-qwen-image-pipeline", "namespace": "_cluster"},
    )

    [entry] = response.json()["results"]
    assert entry["model"] == {"kind": "ClusterBaseModel", "namespace": "_cluster", "name": "qwen-image-pvc"}
    assert (entry["old_status"], entry["new_status"]) == ("excluded", "selected")
    assert entry["cause"][0]["fields"] == ["spec.diffusionPipeline"]
    assert response["X-OME-Behaviour"]
    assert (
        api.get("/api/v1/matrix/history/", {"status": "selected", "model_name": "qwen-image-pvc"}).json()["count"] == 4
    )
    assert api.get("/api/v1/matrix/history/", {"model_name": "qwen-image"}).json()["count"] == 0


def test_builds_list_the_current_build(api: APIClient, demo: Cluster) -> None:
    build = current_build(demo)
    assert build is not None

    [listed] = api.get("/api/v1/matrix/builds/", {"cluster": "demo", "status": "succeeded"}).json()["results"]

    assert listed["id"] == build.pk
    assert listed["rows_count"] == 835
    assert listed["ome_behaviour"] == build.ome_behaviour


def test_csv_export_streams_every_filtered_cell(api: APIClient, demo: Cluster) -> None:
    page = cells(api, model_name="qwen-image-pvc", page_size=1000, reasons="false")

    response = api.get("/api/v1/matrix/cells/export.csv", {"model_name": "qwen-image-pvc", "reasons": "true"})

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="ome-matrix-demo-build')
    assert response["X-OME-Behaviour"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == page["count"]
    assert [(int(r["model_id"]), int(r["runtime_id"]), r["namespace"]) for r in rows] == [
        identity(c) for c in page["results"]
    ]
    seed = next(r for r in rows if r["runtime_name"] == "srt-qwen-image-pipeline" and r["namespace"] == "_cluster")
    assert seed["status"] == "excluded"
    assert seed["reason"].endswith(SEED_REASON)
    selected = next(r for r in rows if r["status"] == "selected")
    assert (selected["rank"], selected["reason"]) == ("0", "")


def test_json_export_holds_the_same_cells_as_the_pages(api: APIClient, demo: Cluster) -> None:
    page = cells(api, namespace="team-a", status="selected", page_size=1000, reasons="false")

    response = api.get("/api/v1/matrix/cells/export.json", {"namespace": "team-a", "status": "selected"})

    body = json.loads(b"".join(response.streaming_content))
    assert response["Content-Type"] == "application/json"
    assert body["ome"]["profile"] == matching.NEWEST_BEHAVIOUR
    assert body["build"]["id"] == page["build"]["id"]
    assert body["cluster"] == "demo"
    assert body["cells"] == page["results"]


def test_an_export_asked_for_as_csv_still_explains_errors_in_json(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/matrix/cells/export.csv", {"status": "nope"}, HTTP_ACCEPT="text/csv")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json()["field"] == "status"


HOSTILE = ["<script>alert(1)</script>", '=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1:A2)"]


def hostile_model(cluster: Cluster, name: str) -> None:
    obj = copy.deepcopy(resource(cluster, "qwen-image-pvc").obj)
    obj["metadata"] = {"name": name}
    change = event_apply(cluster, "ADDED", obj)
    assert change is not None
    matrix_apply_changes(cluster, [change.to_dict()])


def test_hostile_names_come_back_as_json_data(api: APIClient, demo: Cluster) -> None:
    for name in HOSTILE:
        hostile_model(demo, name)

    listed = api.get("/api/v1/models/", {"search": "<script>"})
    page = api.get("/api/v1/matrix/cells/", {"model_name": HOSTILE[0], "page_size": 1})
    browsable = api.get("/api/v1/models/", {"search": "<script>"}, HTTP_ACCEPT="text/html")

    assert listed["Content-Type"] == "application/json"
    assert listed["X-Content-Type-Options"] == "nosniff"
    assert [m["name"] for m in listed.json()["results"]] == [HOSTILE[0]]
    assert page.json()["results"][0]["model"]["name"] == HOSTILE[0]
    assert b"<script>alert(1)</script>" not in browsable.content
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in browsable.content


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(api: APIClient, demo: Cluster) -> None:
    for name in HOSTILE:
        hostile_model(demo, name)

    response = api.get("/api/v1/matrix/cells/export.csv", {"namespace": "_cluster", "runtime_name": "srt-qwen-image"})

    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    names = {row["model_name"] for row in rows}
    assert {"'" + name for name in HOSTILE[1:]} <= names
    assert HOSTILE[0] in names
    assert not any(value.startswith(("=", "+", "-", "@")) for row in rows for value in row.values())


def test_an_unknown_cluster_is_a_400_naming_cluster(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/matrix/cells/", {"cluster": "nope"})

    assert response.status_code == 400
    body = response.json()
    assert body["field"] == "cluster"
    assert body["code"] == "invalid_choice"
    assert "nope" not in body["detail"] or "cluster" in body["detail"]


@pytest.mark.parametrize(
    ("url", "params", "field"),
    [
        ("/api/v1/matrix/cells/", {"status": "bogus"}, "status"),
        ("/api/v1/matrix/cells/", {"model": "abc"}, "model"),
        ("/api/v1/matrix/cells/", {"runtime": "99999999"}, "runtime"),
        ("/api/v1/matrix/cells/", {"reasons": "maybe"}, "reasons"),
        ("/api/v1/matrix/cells/", {"model_kind": "ServingRuntime"}, "model_kind"),
        ("/api/v1/matrix/cell/", {"runtime": "1"}, "model"),
        ("/api/v1/matrix/cell/", {"model": "x", "runtime": "1"}, "model"),
        ("/api/v1/matrix/selection/", {"model": "99999999"}, "model"),
        ("/api/v1/matrix/selection/", {}, "model"),
        ("/api/v1/matrix/history/", {"since": "yesterday"}, "since"),
        ("/api/v1/models/", {"cluster": "nope"}, "cluster"),
        ("/api/v1/models/", {"kind": "ServingRuntime"}, "kind"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    api: APIClient, demo: Cluster, url: str, params: dict[str, str], field: str
) -> None:
    response = api.get(url, params)

    assert response.status_code == 400, response.content
    body = response.json()
    assert body["field"] == field
    assert set(body) >= {"detail", "code", "field"}
    assert field in body["detail"]


def test_a_cell_outside_the_runtimes_scope_is_a_404(api: APIClient, demo: Cluster) -> None:
    model = resource(demo, "qwen-image-pvc")
    team_b_runtime = Resource.objects.filter(cluster=demo, kind="ServingRuntime", namespace="team-b").first()
    assert team_b_runtime is not None

    response = api.get("/api/v1/matrix/cell/", {"model": model.pk, "runtime": team_b_runtime.pk, "namespace": "team-a"})

    assert response.status_code == 404
    assert (response.json()["code"], response.json()["field"]) == ("no_cell", "namespace")


def test_an_unknown_path_under_the_api_is_a_json_404(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/nothing-here/")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_a_non_numeric_id_is_a_json_404(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/models/abc/")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_with_two_clusters_the_matrix_needs_a_cluster_name(api: APIClient, demo: Cluster) -> None:
    Cluster.objects.create(name="other", source="manifests")

    unnamed = api.get("/api/v1/matrix/cells/")
    named = api.get("/api/v1/matrix/cells/", {"cluster": "demo", "page_size": 1})
    unbuilt = api.get("/api/v1/matrix/cells/", {"cluster": "other"})

    assert unnamed.status_code == 400
    assert (unnamed.json()["code"], unnamed.json()["field"]) == ("cluster", "cluster")
    assert named.status_code == 200
    assert unbuilt.status_code == 404
    assert (unbuilt.json()["code"], unbuilt.json()["field"]) == ("no_matrix", "cluster")
