"""One freshness per cluster (matrix.freshness), said alike by every surface: the page banners,
the API answers, the sync states, /metrics and /readyz (tests.support.surfaces).

Each scenario is set up as its fault leaves the database (a worker that died saying
"connected", an API server that stopped answering, an update lost with beat stopped); the
processes that produce those rows are exercised in tests/inventory/live/.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest
from django.db.models.functions import Now
from django.test import Client
from django.utils import timezone

from inventory.live.watch import watch_lost
from inventory.models import Cluster, Kind, Resource, SyncState
from inventory.sync import event_apply, record_list
from matrix import pending
from matrix.freshness import (
    LAGGING,
    LIVE,
    MATRIX_BEHIND,
    STALE,
    UNKNOWN,
    UNREACHABLE,
    UPDATE_LOST_AFTER,
    WATCH_LOST,
    WORKER_DOWN,
    cluster_freshness,
)
from tests.support.surfaces import every_surface, one_hot

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _local_copy(settings: Any) -> None:
    settings.DEBUG = True  # /metrics without a token, details in /readyz


@pytest.fixture
def live(seed: Cluster) -> Cluster:
    """The seed snapshot with its matrix, standing in for a live cluster whose five kinds are
    listed and watched by a holder that renews its lease."""
    Cluster.objects.filter(pk=seed.pk).update(source=Cluster.Source.KUBECONFIG, kubeconfig="/etc/ome/kubeconfigs/seed")
    now = timezone.now()
    for kind in Kind.values:
        SyncState.objects.update_or_create(
            cluster=seed,
            kind=kind,
            defaults={
                "last_list_at": now,
                "resource_version": "10",
                "watch_connected": True,
                "watch_owner": "worker-1",
                "watch_lease_until": now + timedelta(seconds=60),
            },
        )
    return Cluster.objects.get(pk=seed.pk)


def test_a_watched_cluster_with_a_level_matrix_is_live_everywhere(client: Client, live: Cluster) -> None:
    said = every_surface(client)

    assert cluster_freshness(live).state == LIVE
    assert "seed: live" in said["page"]
    assert said["api"] == {"state": "live", "since": None, "reasons": [], "versions_behind": 0}
    assert set(said["connected"].values()) == {True}
    assert said["metric_state"] == one_hot(LIVE)
    assert said["metric_connected"] == 5
    assert (said["ready_status"], said["ready"]["status"], said["ready"]["clusters"]) == (200, "ok", {})


def test_a_watch_worker_that_died_saying_connected_is_stale_once_its_lease_runs_out(
    client: Client, live: Cluster, settings: Any
) -> None:
    settings.OME_READY_STALE_AFTER = 30
    died = timezone.now() - timedelta(seconds=45)
    SyncState.objects.filter(cluster=live).update(watch_lease_until=died)  # still says connected

    said = every_surface(client)

    assert "seed: stale" in said["page"]
    assert "worker down" in said["page"]
    assert said["api"]["state"] == STALE
    assert said["api"]["since"] == died.isoformat()
    assert all(WORKER_DOWN in reason for reason in said["api"]["reasons"])
    assert set(said["connected"].values()) == {False}
    assert said["metric_state"] == one_hot(STALE)
    assert said["metric_connected"] == 0
    assert said["ready_status"] == 503
    assert said["ready"]["stale"] == ["seed"]
    assert "worker down" in said["ready"]["reason"]


def test_leases_are_judged_by_the_database_clock_whatever_the_web_process_clock_says(
    client: Client, live: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real() + timedelta(seconds=120))  # two leases ahead

    said = every_surface(client)

    assert said["api"]["state"] == LIVE
    assert "seed: live" in said["page"]
    assert set(said["connected"].values()) == {True}
    assert said["metric_state"] == one_hot(LIVE)
    assert said["metric_connected"] == 5
    assert said["ready_status"] == 200


def test_a_watch_worker_stopped_with_sigterm_is_stale_at_once_with_its_watches_lost(
    client: Client, live: Cluster
) -> None:
    # What the hub of a SIGTERMed worker does as it stops (inventory.live.hub._give_back).
    watch_lost(SyncState.objects.filter(cluster=live), watch_owner="", watch_lease_until=None)

    said = every_surface(client)

    assert said["state"] == STALE
    assert said["api"]["reasons"] == [f"{WATCH_LOST} ({kind})" for kind in sorted(Kind.values)]
    assert set(said["connected"].values()) == {False}
    assert said["metric_connected"] == 0


def test_a_stale_cluster_is_ready_until_the_setting_passes(client: Client, live: Cluster, settings: Any) -> None:
    settings.OME_READY_STALE_AFTER = 120
    SyncState.objects.filter(cluster=live).update(watch_lease_until=timezone.now() - timedelta(seconds=45))

    said = every_surface(client)

    assert said["api"]["state"] == STALE
    assert (said["ready_status"], said["ready"]["status"]) == (200, "ok")
    assert said["ready"]["clusters"]["seed"]["state"] == STALE


def test_an_unreachable_cluster_is_stale_with_the_api_servers_error(
    client: Client, live: Cluster, settings: Any
) -> None:
    settings.OME_READY_STALE_AFTER = 30
    lost = timezone.now() - timedelta(seconds=61)
    SyncState.objects.filter(cluster=live).update(
        watch_connected=False,
        watch_lost_at=lost,
        last_error="cannot reach the API server",
        last_error_at=timezone.now(),
        last_error_from="watch",
    )

    said = every_surface(client)

    assert said["api"]["state"] == STALE
    assert said["api"]["since"] == lost.isoformat()
    assert said["api"]["reasons"][0] == f"{UNREACHABLE} (BaseModel: cannot reach the API server)"
    assert "cluster unreachable" in said["page"]
    assert said["metric_state"] == one_hot(STALE)
    assert said["ready_status"] == 503


def test_a_lost_matrix_update_lags_at_once_and_is_stale_after_the_setting(
    client: Client, live: Cluster, settings: Any
) -> None:
    settings.MATRIX_LAG_STALE_AFTER = 60
    settings.OME_READY_STALE_AFTER = 1
    model = Resource.objects.filter(cluster=live).first()
    assert model is not None
    Cluster.objects.filter(pk=live.pk).update(inventory_version=live.inventory_version + 28)
    Resource.objects.filter(pk=model.pk).update(version=live.inventory_version + 28, changed_at=timezone.now())

    lagging = every_surface(client)
    Resource.objects.filter(pk=model.pk).update(changed_at=timezone.now() - timedelta(seconds=61))
    stale = every_surface(client)

    assert (lagging["api"]["state"], lagging["api"]["versions_behind"]) == (LAGGING, 28)
    assert "28 inventory changes behind" in lagging["page"]
    assert lagging["metric_state"] == one_hot(LAGGING)
    assert lagging["ready_status"] == 200
    assert stale["api"]["state"] == STALE
    assert stale["api"]["reasons"] == [f"{MATRIX_BEHIND} (28 inventory changes)"]
    assert stale["metric_state"] == one_hot(STALE)
    assert stale["ready_status"] == 503


def test_a_lag_whose_update_is_neither_queued_nor_running_says_the_update_was_lost(
    client: Client, live: Cluster, settings: Any
) -> None:
    """Issue 36: the banner said "an update is on its way" when the update was lost."""
    settings.MATRIX_LAG_STALE_AFTER = 600
    model = Resource.objects.filter(cluster=live).first()
    assert model is not None
    Cluster.objects.filter(pk=live.pk).update(inventory_version=live.inventory_version + 3)
    since = timezone.now() - timedelta(seconds=UPDATE_LOST_AFTER + 5)
    Resource.objects.filter(pk=model.pk).update(version=live.inventory_version + 3, changed_at=since)

    pending.mark_pending(live.pk, [])
    queued = every_surface(client)
    pending.take_pending(live.pk)
    running = every_surface(client)
    pending.update_done(live.pk)
    lost = every_surface(client)

    assert queued["api"]["state"] == running["api"]["state"] == lost["api"]["state"] == LAGGING
    assert "an update is on its way" in queued["page"]
    assert "an update is on its way" in running["page"]
    assert "its update was lost: the periodic catch-up will level it" in lost["page"]
    assert "an update is on its way" not in lost["page"]


def test_an_unchanged_event_does_not_re_date_a_matrix_lag(live: Cluster, settings: Any) -> None:
    settings.MATRIX_LAG_STALE_AFTER = 60
    model = Resource.objects.filter(cluster=live).first()
    assert model is not None
    changed = timezone.now() - timedelta(seconds=61)
    Cluster.objects.filter(pk=live.pk).update(inventory_version=live.inventory_version + 1)
    Resource.objects.filter(pk=model.pk).update(
        version=live.inventory_version + 1, changed_at=changed, last_seen=changed
    )

    event_apply(Cluster.objects.get(pk=live.pk), "MODIFIED", model.obj)  # the same object again

    seen = Resource.objects.get(pk=model.pk)
    judged = cluster_freshness(Cluster.objects.get(pk=live.pk))
    assert seen.last_seen > changed  # the event was stored ...
    assert seen.changed_at == changed  # ... as no change
    assert (judged.state, judged.since) == (STALE, changed)
    assert judged.reasons == (f"{MATRIX_BEHIND} (1 inventory changes)",)


def test_a_lag_and_a_list_are_dated_by_the_database_clock_whatever_the_writing_worker_clock_says(
    live: Cluster, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.MATRIX_LAG_STALE_AFTER = 60
    model = Resource.objects.filter(cluster=live).first()
    assert model is not None
    changed = copy.deepcopy(model.obj)
    changed["metadata"].setdefault("labels", {})["edited"] = "yes"
    real = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real() - timedelta(seconds=120))  # two lag limits behind

    event_apply(Cluster.objects.get(pk=live.pk), "MODIFIED", changed)
    record_list(live, model.kind, resource_version="11")
    monkeypatch.undo()

    judged = cluster_freshness(Cluster.objects.get(pk=live.pk))
    assert (judged.state, judged.versions_behind) == (LAGGING, 1)  # not "stale for 2 minutes"
    assert judged.since is not None
    assert abs(judged.checked_at - judged.since) < timedelta(seconds=30)
    listed = SyncState.objects.annotate(database_now=Now()).get(cluster=live, kind=model.kind)
    assert listed.last_list_at is not None
    assert abs(listed.database_now - listed.last_list_at) < timedelta(seconds=30)


def test_a_live_cluster_never_listed_is_unknown(client: Client, live: Cluster) -> None:
    SyncState.objects.filter(cluster=live, kind=Kind.BASE_MODEL).update(last_list_at=None)

    said = every_surface(client)

    assert said["api"] == {"state": UNKNOWN, "since": None, "reasons": ["never listed"], "versions_behind": 0}
    assert "seed: unknown" in said["page"]
    assert said["metric_state"] == one_hot(UNKNOWN)


def test_the_banner_refreshes_itself_and_a_held_api_page_is_not_reused_once_the_cluster_went_stale(
    client: Client, live: Cluster
) -> None:
    first = client.get("/api/v1/matrix/cells/", {"cluster": "seed", "page_size": 1})
    SyncState.objects.filter(cluster=live).update(watch_lease_until=timezone.now() - timedelta(seconds=1))

    held = client.get("/api/v1/matrix/cells/", {"cluster": "seed", "page_size": 1}, HTTP_IF_NONE_MATCH=first["ETag"])
    banner = client.get("/freshness/", {"cluster": "seed"})

    assert held.status_code == 200
    assert held.json()["freshness"]["state"] == STALE
    assert banner.status_code == 200
    assert "seed: stale" in banner.content.decode()
    assert 'hx-trigger="every' in banner.content.decode()
