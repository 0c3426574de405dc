"""What every surface says about one cluster's freshness (matrix.freshness), read as their users
read them: every page that shows its verdicts (the banner), every API answer that does
(`freshness`), the sync states, /metrics and /readyz (with the metrics token). `every_surface`
fails unless they all say the same state, so a scenario asserts what the dashboard says with one
call and one state."""

from __future__ import annotations

import re
from typing import Any

from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from matrix.freshness import STATES

PAGES = ("/matrix/", "/lint/", "/inferenceservices/", "/matrix/upgrade/")
ANSWERS = ("/api/v1/matrix/lint/", "/api/v1/inference-services/verdicts/", "/api/v1/matrix/upgrade/")
BANNER = re.compile(r'<div class="freshness freshness-(\w+)"')
TOKEN = "every-surface-token"


def metrics_of(client: Client, **headers: Any) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """name -> {sorted labels: value} of every sample /metrics returns."""
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def one_hot(state: str) -> dict[str, float]:
    return {candidate: 1.0 if candidate == state else 0.0 for candidate in STATES}


def every_surface(client: Client, cluster: str = "seed") -> dict[str, Any]:
    """What each surface says about `cluster`, once each has been checked to say the state the
    cells' envelope says: `state`, `api` (the envelope's freshness), `page` (the matrix page),
    `connected` (watch_connected by kind), `metric_state`, `metric_connected`, `ready_status` and
    `ready` (its freshness check)."""
    query = {"cluster": cluster}
    envelope = client.get("/api/v1/matrix/cells/", {**query, "page_size": 1}).json()["freshness"]
    pages = {path: client.get(path, query).content.decode() for path in PAGES}
    answers = {path: client.get(path, query).json()["freshness"] for path in ANSWERS}
    states = client.get("/api/v1/sync-states/", query).json()["results"]
    with override_settings(METRICS_TOKEN=TOKEN):
        samples = metrics_of(client, headers={"Authorization": f"Bearer {TOKEN}"})
        ready = client.get("/readyz", headers={"Authorization": f"Bearer {TOKEN}"})
    metric_state = {
        dict(labels)["state"]: value
        for labels, value in samples["ome_cluster_freshness"].items()
        if dict(labels)["cluster"] == cluster
    }
    banners = {path: BANNER.findall(page) for path, page in pages.items()}
    assert banners == {path: [envelope["state"]] for path in PAGES}, banners
    assert answers == dict.fromkeys(ANSWERS, envelope), answers
    assert metric_state == one_hot(envelope["state"]), metric_state
    return {
        "state": envelope["state"],
        "api": envelope,
        "page": pages["/matrix/"],
        "connected": {state["kind"]: state["watch_connected"] for state in states},
        "metric_state": metric_state,
        "metric_connected": sum(
            value for labels, value in samples["ome_watch_connected"].items() if dict(labels)["cluster"] == cluster
        ),
        "ready_status": ready.status_code,
        "ready": ready.json()["checks"]["freshness"],
    }
