"""Tests of tests.fakes.kube_api.FakeKubeAPI, driven by the REAL kubernetes client (37.0.1).

They double as executable documentation of what the client does against an apiserver: which
exception classes it raises, what a dropped watch looks like, what urllib3 retries on its own.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import urllib3
from kubernetes import client, config, watch
from kubernetes.client import exceptions as kexc

from tests.fakes.kube_api import API_VERSION, KINDS, FakeKubeAPI, KubeError

G, V = "ome.io", "v1beta1"
REPO_ROOT = Path(__file__).resolve().parents[2]


def make(kind: str, name: str, namespace: str | None = None, labels: dict | None = None, **spec) -> dict:
    meta: dict = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": meta, "spec": spec}


def cbm(name: str, **kw) -> dict:
    return make("ClusterBaseModel", name, **kw)


@pytest.fixture
def fake():
    with FakeKubeAPI() as f:
        yield f
        assert f.active_watches() == 0, "a test left a watch open"
    assert not f.errors, "\n".join(f.errors)


@pytest.fixture
def api(fake):
    api_client = config.new_client_from_config_dict(fake.kubeconfig())
    yield client.CustomObjectsApi(api_client)
    api_client.close()


def body_of(exc: kexc.ApiException) -> dict:
    return json.loads(exc.body)


def collect(api_call, *args, stop_after: int, **kwargs) -> tuple[list[dict], watch.Watch]:
    """Watch until ``stop_after`` events arrived (then Watch.stop()), bounded by timeout_seconds."""
    w = watch.Watch()
    events: list[dict] = []
    kwargs.setdefault("timeout_seconds", 5)
    for ev in w.stream(api_call, *args, **kwargs):
        events.append(ev)
        if len(events) >= stop_after:
            w.stop()
    return events, w


# ---- list / get -----------------------------------------------------------------------------


@pytest.mark.parametrize("plural", sorted(KINDS))
def test_list_every_kind_cluster_wide_and_namespaced(fake, api, plural):
    info = KINDS[plural]
    if info.namespaced:
        fake.create(make(info.kind, "x", "team-a"))
        fake.create(make(info.kind, "y", "team-b"))
        fake.create(make(info.kind, "z"))  # -> namespace "default"
        everything = api.list_cluster_custom_object(G, V, plural)
        assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in everything["items"]] == [
            ("default", "z"),
            ("team-a", "x"),
            ("team-b", "y"),
        ]
        one_ns = api.list_namespaced_custom_object(G, V, "team-a", plural)
        assert [o["metadata"]["name"] for o in one_ns["items"]] == ["x"]
        assert api.list_namespaced_custom_object(G, V, "nobody", plural)["items"] == []
        with pytest.raises(kexc.NotFoundException):  # namespaced kind has no cluster-level item URL
            api.get_cluster_custom_object(G, V, plural, "x")
    else:
        fake.create(make(info.kind, "b"))
        fake.create(make(info.kind, "a"))
        everything = api.list_cluster_custom_object(G, V, plural)
        assert [o["metadata"]["name"] for o in everything["items"]] == ["a", "b"]
        assert "namespace" not in everything["items"][0]["metadata"]
        with pytest.raises(kexc.NotFoundException):  # cluster kind under /namespaces/ does not exist
            api.list_namespaced_custom_object(G, V, "default", plural)
    assert everything["apiVersion"] == "ome.io/v1beta1"
    assert everything["kind"] == f"{info.kind}List"
    assert everything["metadata"]["resourceVersion"] == fake.resource_version
    assert everything["metadata"]["continue"] == ""


def test_get_fills_server_fields_and_missing_object_is_not_found(fake, api):
    stored = fake.create(cbm("m1", modelFormat={"name": "safetensors"}))
    got = api.get_cluster_custom_object(G, V, "clusterbasemodels", "m1")
    assert got == stored
    meta = got["metadata"]
    assert meta["generation"] == 1
    assert isinstance(meta["resourceVersion"], str)
    assert int(meta["resourceVersion"]) > 0
    assert len(meta["uid"]) == 36
    assert meta["creationTimestamp"].endswith("Z")

    with pytest.raises(kexc.NotFoundException) as ei:
        api.get_cluster_custom_object(G, V, "clusterbasemodels", "nope")
    status = body_of(ei.value)
    assert ei.value.status == 404
    assert status["kind"] == "Status"
    assert status["reason"] == "NotFound"
    assert status["code"] == 404
    assert status["message"] == 'clusterbasemodels.ome.io "nope" not found'
    assert status["details"] == {"group": "ome.io", "kind": "clusterbasemodels", "name": "nope"}


def test_create_through_api_conflicts_and_delete(fake, api):
    body = make("BaseModel", "bm", "ns1")
    body["status"] = {"state": "Ready"}
    created = api.create_namespaced_custom_object(G, V, "ns1", "basemodels", body)
    assert created["metadata"]["namespace"] == "ns1"
    assert "status" not in created  # status subresource: status is not set by create
    with pytest.raises(kexc.ConflictException) as ei:
        api.create_namespaced_custom_object(G, V, "ns1", "basemodels", body)
    assert body_of(ei.value)["reason"] == "AlreadyExists"
    with pytest.raises(kexc.BadRequestException):  # kind must match the URL
        api.create_namespaced_custom_object(G, V, "ns1", "basemodels", make("ServingRuntime", "x"))
    with pytest.raises(kexc.UnprocessableEntityException):  # invalid name
        api.create_namespaced_custom_object(G, V, "ns1", "basemodels", make("BaseModel", "Bad_Name"))

    result = api.delete_namespaced_custom_object(G, V, "ns1", "basemodels", "bm")
    assert result["status"] == "Success"
    assert result["details"]["name"] == "bm"
    with pytest.raises(kexc.NotFoundException):
        api.get_namespaced_custom_object(G, V, "ns1", "basemodels", "bm")
    assert [e["type"] for e in fake.events("basemodels")] == ["ADDED", "DELETED"]


# ---- writes ------------------------------------------------------------------------------


def test_merge_patch_and_conflict_on_stale_resource_version(fake, api):
    v1 = fake.create(cbm("m1", modelFormat={"name": "safetensors", "version": "1"}, quantization="fp8"))
    patched = api.patch_cluster_custom_object(
        G, V, "clusterbasemodels", "m1", {"spec": {"modelFormat": {"version": "2"}, "quantization": None}}
    )
    req = fake.requests[-1]
    assert (req.method, req.verb, req.headers["Content-Type"]) == ("PATCH", "patch", "application/merge-patch+json")
    assert patched["spec"] == {"modelFormat": {"name": "safetensors", "version": "2"}}  # null removes a key
    assert int(patched["metadata"]["resourceVersion"]) > int(v1["metadata"]["resourceVersion"])
    assert patched["metadata"]["generation"] == 2

    # metadata-only change: new resourceVersion, same generation
    labelled = api.patch_cluster_custom_object(G, V, "clusterbasemodels", "m1", {"metadata": {"labels": {"a": "b"}}})
    assert labelled["metadata"]["generation"] == 2
    assert labelled["metadata"]["resourceVersion"] != patched["metadata"]["resourceVersion"]

    # optimistic concurrency: a stale metadata.resourceVersion in the patch -> 409 Conflict
    stale = {"metadata": {"resourceVersion": v1["metadata"]["resourceVersion"]}, "spec": {"x": 1}}
    with pytest.raises(kexc.ConflictException) as ei:
        api.patch_cluster_custom_object(G, V, "clusterbasemodels", "m1", stale)
    assert ei.value.status == 409
    assert body_of(ei.value)["reason"] == "Conflict"
    fresh = {"metadata": {"resourceVersion": labelled["metadata"]["resourceVersion"]}, "spec": {"x": 1}}
    assert api.patch_cluster_custom_object(G, V, "clusterbasemodels", "m1", fresh)["spec"]["x"] == 1

    # a patch that changes nothing is a no-op: same resourceVersion, no watch event
    before = fake.resource_version
    same = api.patch_cluster_custom_object(G, V, "clusterbasemodels", "m1", {"spec": {"x": 1}})
    assert same["metadata"]["resourceVersion"] == before == fake.resource_version

    # status: ignored on the main resource, written through /status
    api.patch_cluster_custom_object(G, V, "clusterbasemodels", "m1", {"status": {"state": "Ready"}})
    assert "status" not in fake.get("clusterbasemodels", "m1")
    api.patch_cluster_custom_object_status(G, V, "clusterbasemodels", "m1", {"status": {"state": "Ready"}})
    assert fake.get("clusterbasemodels", "m1")["status"] == {"state": "Ready"}
    assert fake.requests[-1].path.endswith("/m1/status")


def test_json_patch_and_strategic_merge_is_unsupported(fake, api):
    fake.create(cbm("m1", modelFormat={"name": "a"}))
    out = api.patch_cluster_custom_object(
        G,
        V,
        "clusterbasemodels",
        "m1",
        [{"op": "replace", "path": "/spec/modelFormat/name", "value": "b"}],
        _content_type="application/json-patch+json",
    )
    assert out["spec"]["modelFormat"]["name"] == "b"
    # Client quirk: a dict body with _content_type json-patch is rewritten to strategic merge -> 415.
    with pytest.raises(kexc.ApiException) as ei:
        api.patch_cluster_custom_object(
            G, V, "clusterbasemodels", "m1", {"spec": {}}, _content_type="application/json-patch+json"
        )
    assert ei.value.status == 415
    assert fake.requests[-1].headers["content-type"] == "application/strategic-merge-patch+json"
    # Client quirk: a list body WITHOUT _content_type is sent as merge-patch (no auto-detection).
    with pytest.raises(kexc.BadRequestException):
        api.patch_cluster_custom_object(G, V, "clusterbasemodels", "m1", [{"op": "remove", "path": "/spec"}])
    assert fake.requests[-1].headers["content-type"] == "application/merge-patch+json"
    with pytest.raises(kexc.UnprocessableEntityException):  # failed "test" op
        api.patch_cluster_custom_object(
            G,
            V,
            "clusterbasemodels",
            "m1",
            [{"op": "test", "path": "/spec/modelFormat/name", "value": "zzz"}],
            _content_type="application/json-patch+json",
        )


def test_replace_needs_the_current_resource_version(fake, api):
    cur = fake.create(cbm("m1", a=1))
    body = json.loads(json.dumps(cur))
    body["spec"] = {"a": 2}
    body["metadata"]["resourceVersion"] = "1"
    with pytest.raises(kexc.ConflictException):
        api.replace_cluster_custom_object(G, V, "clusterbasemodels", "m1", body)
    del body["metadata"]["resourceVersion"]
    with pytest.raises(kexc.UnprocessableEntityException):  # CRs do not allow unconditional updates
        api.replace_cluster_custom_object(G, V, "clusterbasemodels", "m1", body)
    body["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
    out = api.replace_cluster_custom_object(G, V, "clusterbasemodels", "m1", body)
    assert out["spec"] == {"a": 2}
    assert out["metadata"]["generation"] == 2
    assert out["metadata"]["uid"] == cur["metadata"]["uid"]


def test_delete_with_finalizer_waits_for_the_finalizer(fake, api):
    obj = cbm("m1")
    obj["metadata"]["finalizers"] = ["ome.io/cleanup"]
    fake.create(obj)
    out = api.delete_cluster_custom_object(G, V, "clusterbasemodels", "m1")
    assert out["metadata"]["deletionTimestamp"]
    assert fake.get("clusterbasemodels", "m1") is not None
    api.patch_cluster_custom_object(G, V, "clusterbasemodels", "m1", {"metadata": {"finalizers": None}})
    assert fake.get("clusterbasemodels", "m1") is None
    assert [e["type"] for e in fake.events("clusterbasemodels")] == ["ADDED", "MODIFIED", "DELETED"]


# ---- watch -------------------------------------------------------------------------------


def test_watch_added_modified_deleted_in_order(fake, api):
    start_rv = api.list_cluster_custom_object(G, V, "clusterbasemodels")["metadata"]["resourceVersion"]
    fake.create(cbm("m1", a=1))
    fake.patch("clusterbasemodels", "m1", {"spec": {"a": 2}})
    fake.delete("clusterbasemodels", "m1")

    events, w = collect(
        api.list_cluster_custom_object, G, V, "clusterbasemodels", resource_version=start_rv, stop_after=3
    )
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    rvs = [e["object"]["metadata"]["resourceVersion"] for e in events]
    assert rvs == [e["resourceVersion"] for e in fake.events("clusterbasemodels")]
    assert [int(r) for r in rvs] == sorted(int(r) for r in rvs)
    assert len(set(rvs)) == 3
    assert isinstance(events[0]["object"], dict)
    assert events[0]["raw_object"] == events[0]["object"]
    assert events[1]["object"]["spec"] == {"a": 2}
    assert w.resource_version == rvs[-1]
    q = fake.requests[-1].query
    assert (q["watch"], q["resourceVersion"], q["timeoutSeconds"]) == ("true", start_rv, "5")


def test_watch_without_resource_version_starts_with_synthetic_added_then_live_events(fake, api):
    fake.create(make("InferenceService", "svc", "team-a"))
    fake.create(make("InferenceService", "other", "team-b"))

    def writer():
        assert fake.wait_for_watch("inferenceservices")  # the watch is past its snapshot
        fake.patch("inferenceservices", "svc", {"spec": {"x": 1}}, namespace="team-a")
        fake.patch("inferenceservices", "other", {"spec": {"x": 1}}, namespace="team-b")  # other namespace
        fake.delete("inferenceservices", "svc", namespace="team-a")

    t = threading.Thread(target=writer)
    t.start()
    events, _ = collect(api.list_namespaced_custom_object, G, V, "team-a", "inferenceservices", stop_after=3)
    t.join()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "svc"),
        ("MODIFIED", "svc"),
        ("DELETED", "svc"),
    ]


def test_watch_label_selector_turns_leaving_the_selection_into_deleted(fake, api):
    fake.create(cbm("m1", labels={"tier": "gold"}))
    rv = fake.resource_version
    fake.patch("clusterbasemodels", "m1", {"metadata": {"labels": {"tier": "silver"}}})
    fake.patch("clusterbasemodels", "m1", {"metadata": {"labels": {"tier": "gold"}}})
    events, _ = collect(
        api.list_cluster_custom_object,
        G,
        V,
        "clusterbasemodels",
        label_selector="tier=gold",
        resource_version=rv,
        stop_after=2,
    )
    assert [e["type"] for e in events] == ["DELETED", "ADDED"]
    listed = api.list_cluster_custom_object(G, V, "clusterbasemodels", label_selector="tier in (gold,x),!nope")
    assert [o["metadata"]["name"] for o in listed["items"]] == ["m1"]
    assert api.list_cluster_custom_object(G, V, "clusterbasemodels", label_selector="tier!=gold")["items"] == []
    by_name = api.list_cluster_custom_object(G, V, "clusterbasemodels", field_selector="metadata.name=m1")
    assert len(by_name["items"]) == 1


def test_watch_resumed_after_dropped_stream_loses_and_doubles_nothing(fake, api):
    start_rv = fake.resource_version
    fake.create(cbm("m1"))
    fake.create(cbm("m2"))
    fake.patch("clusterbasemodels", "m1", {"spec": {"v": 1}})
    fake.delete("clusterbasemodels", "m2")
    fake.patch("clusterbasemodels", "m1", {"spec": {"v": 2}})
    expected = [(e["type"], e["resourceVersion"]) for e in fake.events("clusterbasemodels")]
    assert len(expected) == 5

    fake.drop_watch_after(2)
    seen: list[tuple[str, str]] = []
    w = watch.Watch()

    def consume(**kwargs):
        for ev in w.stream(api.list_cluster_custom_object, G, V, "clusterbasemodels", **kwargs):
            seen.append((ev["type"], ev["object"]["metadata"]["resourceVersion"]))

    # A stream cut without the terminating chunk is NOT retried by the client, even without
    # timeout_seconds: urllib3 raises ProtocolError("Response ended prematurely").
    with pytest.raises(urllib3.exceptions.ProtocolError):
        consume(resource_version=start_rv)
    assert len(seen) == 2
    assert w.resource_version == seen[-1][1]  # the client kept the last resourceVersion it saw

    events, _ = collect(
        api.list_cluster_custom_object, G, V, "clusterbasemodels", resource_version=w.resource_version, stop_after=3
    )
    seen += [(e["type"], e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert seen == expected
    assert [r.query.get("resourceVersion") for r in fake.requests if r.verb == "watch"] == [start_rv, seen[1][1]]


def test_clean_end_of_stream_is_rewatched_by_the_client_from_the_last_resource_version(fake, api):
    start_rv = fake.resource_version
    fake.create(cbm("m1"))

    def server_side():
        assert fake.close_watches() == 1  # ends the stream cleanly, like the apiserver's watch timeout
        assert fake.wait_for(lambda: sum(r.verb == "watch" for r in fake.requests) == 2)
        assert fake.wait_for_watch()
        fake.patch("clusterbasemodels", "m1", {"spec": {"a": 1}})

    seen = []
    w = watch.Watch()
    t = threading.Thread(target=server_side)
    # no timeout_seconds: when the server ends the stream, the client re-issues the watch itself
    for ev in w.stream(api.list_cluster_custom_object, G, V, "clusterbasemodels", resource_version=start_rv):
        seen.append(ev["type"])
        if len(seen) == 1:
            t.start()
        else:
            w.stop()
    t.join()
    assert seen == ["ADDED", "MODIFIED"]
    watches = [r for r in fake.requests if r.verb == "watch"]
    assert watches[1].query["resourceVersion"] == fake.events("clusterbasemodels")[0]["resourceVersion"]


def test_watch_from_compacted_resource_version_gets_410(fake, api):
    old_rv = fake.resource_version
    fake.create(cbm("m1"))
    fake.compact()
    with pytest.raises(kexc.ApiException) as ei:
        list(
            watch.Watch().stream(
                api.list_cluster_custom_object, G, V, "clusterbasemodels", resource_version=old_rv, timeout_seconds=5
            )
        )
    assert ei.value.status == 410
    assert "Expired" in ei.value.reason
    assert "too old resource version" in ei.value.reason
    assert sum(r.verb == "watch" for r in fake.requests) == 1

    # without timeout_seconds the client retries once with the same resourceVersion, then raises
    with pytest.raises(kexc.ApiException) as ei:
        list(watch.Watch().stream(api.list_cluster_custom_object, G, V, "clusterbasemodels", resource_version=old_rv))
    assert ei.value.status == 410
    assert sum(r.verb == "watch" for r in fake.requests) == 3

    # re-list and watch from the list's resourceVersion: fine
    rv = api.list_cluster_custom_object(G, V, "clusterbasemodels")["metadata"]["resourceVersion"]
    fake.patch("clusterbasemodels", "m1", {"spec": {"a": 1}})
    events, _ = collect(api.list_cluster_custom_object, G, V, "clusterbasemodels", resource_version=rv, stop_after=1)
    assert events[0]["type"] == "MODIFIED"


def test_bookmarks(fake, api):
    fake.create(cbm("m1"))
    got: list[tuple[str, str | None]] = []
    first = threading.Event()
    w = watch.Watch()

    def run():
        for ev in w.stream(
            api.list_cluster_custom_object,
            G,
            V,
            "clusterbasemodels",
            allow_watch_bookmarks=True,
            resource_version=fake.resource_version,
            timeout_seconds=5,
        ):
            got.append((ev["type"], ev["raw_object"]["metadata"]["resourceVersion"]))
            first.set()
            if len(got) == 2:
                w.stop()

    t = threading.Thread(target=run)
    t.start()
    assert fake.wait_for_watch()
    fake.create(make("BaseModel", "elsewhere", "ns"))  # another kind moves the global resourceVersion
    fake.bookmark()
    assert first.wait(5)
    fake.bookmark_interval = 0.02  # periodic bookmarks too
    t.join()
    assert got == [("BOOKMARK", fake.resource_version)] * 2
    assert w.resource_version == fake.resource_version  # the client tracks bookmark resourceVersions
    assert fake.requests[-1].query["allowWatchBookmarks"] == "true"


def test_timeout_seconds_ends_the_stream_cleanly(fake, api):
    t0 = time.monotonic()
    events = list(
        watch.Watch().stream(
            api.list_cluster_custom_object,
            G,
            V,
            "clusterbasemodels",
            resource_version=fake.resource_version,
            timeout_seconds=1,
        )
    )
    assert events == []
    assert 0.9 <= time.monotonic() - t0 < 3


def test_stop_ends_open_watch_streams_promptly():
    fake = FakeKubeAPI().start()
    api = client.CustomObjectsApi(config.new_client_from_config_dict(fake.kubeconfig()))
    outcome = []

    def run():
        events = list(
            watch.Watch().stream(
                api.list_cluster_custom_object,
                G,
                V,
                "clusterbasemodels",
                resource_version=fake.resource_version,
                timeout_seconds=30,
            )
        )
        outcome.append(events)

    t = threading.Thread(target=run)
    t.start()
    assert fake.wait_for_watch()
    t0 = time.monotonic()
    fake.stop()
    t.join(5)
    assert not t.is_alive()
    assert outcome == [[]]
    assert time.monotonic() - t0 < 2
    assert not fake.errors


# ---- errors and faults ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "exc_class", "reason"),
    [
        (401, kexc.UnauthorizedException, "Unauthorized"),
        (403, kexc.ForbiddenException, "Forbidden"),
        (404, kexc.NotFoundException, "NotFound"),
        (500, kexc.ServiceException, "InternalError"),
        (503, kexc.ServiceException, "ServiceUnavailable"),
        (429, kexc.ApiException, "TooManyRequests"),
    ],
)
def test_fail_next_answers_with_a_status_body(fake, api, code, exc_class, reason):
    fake.fail_next(1, code, kinds="clusterbasemodels", verbs="list")
    api.list_cluster_custom_object(G, V, "servingruntimes")  # other kind: not affected
    with pytest.raises(exc_class) as ei:
        api.list_cluster_custom_object(G, V, "clusterbasemodels")
    status = body_of(ei.value)
    assert ei.value.status == code
    assert (status["kind"], status["status"], status["reason"], status["code"]) == ("Status", "Failure", reason, code)
    assert api.list_cluster_custom_object(G, V, "clusterbasemodels")["items"] == []  # only once


def test_fail_next_on_watch_raises_before_any_event(fake, api):
    fake.fail_next(1, 500, verbs="watch")
    with pytest.raises(kexc.ServiceException):
        list(watch.Watch().stream(api.list_cluster_custom_object, G, V, "clusterbasemodels", timeout_seconds=5))


def test_urllib3_retries_get_on_503_with_retry_after_by_itself(fake, api):
    fake.create(cbm("m1"))
    fake.fail_next(1, 503, retry_after=0)
    assert api.get_cluster_custom_object(G, V, "clusterbasemodels", "m1")  # succeeded, transparently
    assert [r.status for r in fake.requests[-2:]] == [503, 200]
    fake.fail_next(10, 503, retry_after=0)
    with pytest.raises(kexc.ServiceException):  # Retry(total=3): 4 attempts, then the 503 surfaces
        api.get_cluster_custom_object(G, V, "clusterbasemodels", "m1")
    assert [r.status for r in fake.requests[-4:]] == [503] * 4
    fake.clear_faults()
    fake.fail_next(1, 503, retry_after=0)
    with pytest.raises(kexc.ServiceException):  # PATCH is not retried
        api.patch_cluster_custom_object(G, V, "clusterbasemodels", "m1", {"spec": {"a": 1}})


def test_token_is_sent_and_can_be_required(fake):
    fake.required_token = "s3cret"
    wrong = client.CustomObjectsApi(config.new_client_from_config_dict(fake.kubeconfig(token="nope")))
    with pytest.raises(kexc.UnauthorizedException) as ei:
        wrong.list_cluster_custom_object(G, V, "clusterbasemodels")
    assert body_of(ei.value)["message"] == "Unauthorized"
    right = client.CustomObjectsApi(config.new_client_from_config_dict(fake.kubeconfig()))
    right.list_cluster_custom_object(G, V, "clusterbasemodels")
    method, path, query, headers = fake.requests[-1]
    assert (method, path, query) == ("GET", "/apis/ome.io/v1beta1/clusterbasemodels", {})
    assert headers["Authorization"] == headers["authorization"] == "Bearer s3cret"
    assert headers["accept"] == "application/json"
    assert ("authorization", "Bearer s3cret") in fake.requests[-1].header_items  # lower-case on the wire


def test_missing_kind_is_404(fake, api):
    fake.create(make("ClusterServingRuntime", "rt"))
    fake.remove_kind("clusterservingruntimes")
    with pytest.raises(kexc.NotFoundException) as ei:
        api.list_cluster_custom_object(G, V, "clusterservingruntimes")
    assert body_of(ei.value)["message"] == "the server could not find the requested resource"
    with pytest.raises(kexc.NotFoundException):
        list(watch.Watch().stream(api.list_cluster_custom_object, G, V, "clusterservingruntimes", timeout_seconds=5))
    with pytest.raises(kexc.NotFoundException):
        api.list_cluster_custom_object(G, V, "nosuchkinds")
    resources = api.get_api_resources(G, V)
    assert "clusterservingruntimes" not in [r.name for r in resources.resources]
    assert "clusterbasemodels" in [r.name for r in resources.resources]
    fake.restore_kind("clusterservingruntimes")
    assert api.list_cluster_custom_object(G, V, "clusterservingruntimes")["items"] == []


def test_delay_slows_responses_and_client_timeouts_apply(fake, api):
    fake.delay(0.3, verbs="get")
    fake.create(cbm("m1"))
    t0 = time.monotonic()
    api.list_cluster_custom_object(G, V, "clusterbasemodels")  # not delayed
    assert time.monotonic() - t0 < 0.25
    # a read timeout on GET is retried by urllib3 (3 times) before MaxRetryError surfaces
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        api.get_cluster_custom_object(G, V, "clusterbasemodels", "m1", _request_timeout=0.05)
    fake.delay(0)
    assert api.get_cluster_custom_object(G, V, "clusterbasemodels", "m1", _request_timeout=2)


def test_handler_exception_does_not_kill_the_server(fake, api, monkeypatch):
    def boom(*a, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr(fake, "_list", boom)
    with pytest.raises(kexc.ServiceException) as ei:
        api.list_cluster_custom_object(G, V, "clusterbasemodels")
    assert body_of(ei.value)["reason"] == "InternalError"
    assert len(fake.errors) == 1
    assert "RuntimeError: boom" in fake.errors[0]
    monkeypatch.undo()
    assert api.list_cluster_custom_object(G, V, "clusterbasemodels")["items"] == []
    fake.errors.clear()


# ---- list paging, booleans --------------------------------------------------------------


def test_pagination_with_limit_and_continue_is_a_consistent_snapshot(fake, api):
    for i in range(5):
        fake.create(cbm(f"m{i}"))
    page1 = api.list_cluster_custom_object(G, V, "clusterbasemodels", limit=2)
    assert [o["metadata"]["name"] for o in page1["items"]] == ["m0", "m1"]
    assert page1["metadata"]["continue"]
    assert page1["metadata"]["remainingItemCount"] == 3
    fake.delete("clusterbasemodels", "m3")  # changes after the first page do not show up
    fake.create(cbm("m9"))
    page2 = api.list_cluster_custom_object(G, V, "clusterbasemodels", limit=2, _continue=page1["metadata"]["continue"])
    page3 = api.list_cluster_custom_object(G, V, "clusterbasemodels", limit=2, _continue=page2["metadata"]["continue"])
    assert [o["metadata"]["name"] for o in page2["items"] + page3["items"]] == ["m2", "m3", "m4"]
    assert page3["metadata"]["continue"] == ""
    assert "remainingItemCount" not in page3["metadata"]
    assert (
        page1["metadata"]["resourceVersion"]
        == page2["metadata"]["resourceVersion"]
        == page3["metadata"]["resourceVersion"]
    )
    assert fake.requests[-1].query["continue"] == page2["metadata"]["continue"]

    fake.compact()
    with pytest.raises(kexc.ApiException) as ei:
        api.list_cluster_custom_object(G, V, "clusterbasemodels", limit=2, _continue=page1["metadata"]["continue"])
    assert ei.value.status == 410
    assert body_of(ei.value)["reason"] == "Expired"
    with pytest.raises(kexc.BadRequestException):
        api.list_cluster_custom_object(G, V, "clusterbasemodels", _continue="garbage")


@pytest.mark.parametrize(
    ("value", "is_watch"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("1", True),
        ("t", True),
        ("T", True),
        ("false", False),
        ("0", False),
        ("F", False),
    ],
)
def test_watch_parameter_is_parsed_like_go(fake, value, is_watch):
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    conn.request(
        "GET",
        f"/apis/ome.io/v1beta1/clusterbasemodels?watch={value}&timeoutSeconds=1"
        f"&resourceVersion={fake.resource_version}",
    )
    if is_watch:
        fake.create(cbm("m1"))  # a watch answers with the event; a list would have answered already
    resp = conn.getresponse()
    assert resp.status == 200
    if is_watch:
        assert resp.getheader("Transfer-Encoding") == "chunked"
        line = json.loads(resp.readline())
        assert (line["type"], line["object"]["metadata"]["name"]) == ("ADDED", "m1")
    else:
        assert int(resp.getheader("Content-Length")) > 0
        assert json.loads(resp.read())["kind"] == "ClusterBaseModelList"
    conn.close()
    assert fake.wait_for(lambda: fake.active_watches() == 0, 3)


# ---- test-side API, manifests, kubeconfig, command line -----------------------------------


def test_test_side_helpers(fake):
    a = fake.create(make("ServingRuntime", "rt", "ns", supportedModelFormats=[{"name": "x"}]))
    with pytest.raises(KubeError) as ei:
        fake.create(make("ServingRuntime", "rt", "ns"))
    assert ei.value.code == 409
    a["status"] = {"ready": True}
    b = fake.update(a)
    assert b["status"] == {"ready": True}
    assert b["metadata"]["generation"] == 1
    c = fake.apply(make("ServingRuntime", "rt", "ns", supportedModelFormats=[{"name": "y"}]))
    assert c["metadata"]["generation"] == 2
    assert c["metadata"]["uid"] == a["metadata"]["uid"]
    assert fake.get("servingruntimes", "rt", "ns")["spec"]["supportedModelFormats"] == [{"name": "y"}]
    assert fake.get("ServingRuntime", "missing", "ns") is None
    assert [o["metadata"]["name"] for o in fake.objects("servingruntime")] == ["rt"]
    fake.delete("servingruntimes", "rt", namespace="ns")
    with pytest.raises(KubeError) as ei:
        fake.delete("servingruntimes", "rt", namespace="ns")
    assert ei.value.code == 404
    assert [e["type"] for e in fake.events("servingruntimes")] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
    with pytest.raises(KeyError):
        fake.objects("pods")


def test_load_manifests_and_kubeconfig_file(fake, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "models.yaml").write_text(
        "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: llama}\n"
        "spec: {modelFormat: {name: safetensors}}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\n"
        "---\n"
        "---\napiVersion: ome.io/v1beta1\nkind: BaseModel\nmetadata: {name: qwen, namespace: team}\nspec: {}\n"
    )
    (tmp_path / "sub" / "list.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: ome.io/v1beta1, kind: ClusterServingRuntime, metadata: {name: srt}, spec: {}}\n"
    )
    (tmp_path / "README.md").write_text("not a manifest")
    loaded = fake.load_manifests([tmp_path])
    assert [(o["kind"], o["metadata"]["name"]) for o in loaded] == [
        ("ClusterBaseModel", "llama"),
        ("BaseModel", "qwen"),
        ("ClusterServingRuntime", "srt"),
    ]

    path = fake.write_kubeconfig(tmp_path / "kubeconfig.yaml")
    api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(path)))
    names = [o["metadata"]["name"] for o in api.list_cluster_custom_object(G, V, "basemodels")["items"]]
    assert names == ["qwen"]
    cfg = fake.kubeconfig()
    assert cfg["current-context"] == "fake"
    assert [c["name"] for c in cfg["contexts"]] == ["fake"]
    assert cfg["clusters"][0]["cluster"]["server"] == fake.url


def test_command_line_serves_manifests(tmp_path):
    (tmp_path / "m.yaml").write_text("apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: demo}\n")
    kubeconfig = tmp_path / "kc.yaml"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.kube_api",
            "--manifests",
            str(tmp_path),
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()  # printed once serving
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.poll() is not None else url
        api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(kubeconfig)))
        items = api.list_cluster_custom_object(G, V, "clusterbasemodels")["items"]
        assert [o["metadata"]["name"] for o in items] == ["demo"]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        proc.stdout.close()
        proc.stderr.close()
