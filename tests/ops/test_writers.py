"""The writers of one cluster under a burst: a watch storing batches of events (models added,
changed and deleted), a list of another kind, and matrix updates, all at once in their own
threads and connections. They share one lock order (inventory.locks), so PostgreSQL detects no
deadlock; SQLite's "locked" is retried (core.db), so it reaches none of them; the matrix ends
level.

Run on PostgreSQL by the second pass of `make test` (or
`python -m tests.ops.pg -- pytest tests/ops/test_writers.py`), on SQLite by the first.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import OperationalError, connection, transaction

from inventory.live import resync
from inventory.live.events import watch_events_apply
from inventory.live.resync import kind_list_store
from inventory.locks import cluster_write_lock
from inventory.models import Cluster, Kind, Resource
from inventory.parsed import load_inventory
from inventory.signals import inventory_changed
from inventory.sync import ApplyResult, Change, returned_store
from matrix.selectors import current_build
from matrix.services import matrix_is_level, matrix_level, matrix_rebuild
from tests.inventory.live.objects import model, runtime
from tests.support.processes import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

BATCHES = 40
BATCH = 50


def _in_thread(work: Callable[[], None], failures: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            work()
        except BaseException as error:  # handed to the test, which fails on it
            failures.append(error)
        finally:
            connection.close()

    return threading.Thread(target=run)


def _versioned(obj: dict[str, Any], version: int) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(version)}}


def _watch(cluster: Cluster, done: threading.Event) -> None:
    """Batches that change every model, add new ones and delete the ones added two batches before."""
    version = 1000
    try:
        for batch in range(BATCHES):
            events = []
            for index in range(BATCH):
                version += 1
                obj = model(f"burst-{batch}-{index}", architecture="MistralForCausalLM" if index % 2 else "X")
                events.append(("ADDED", _versioned(obj, version)))
            if batch >= 2:
                for index in range(0, BATCH, 3):
                    version += 1
                    events.append(("DELETED", _versioned(model(f"burst-{batch - 2}-{index}"), version)))
            watch_events_apply(cluster, Kind.CLUSTER_BASE_MODEL, events)
    finally:
        done.set()


def _list(cluster: Cluster, done: threading.Event) -> None:
    step = 0
    while not done.is_set():
        step += 1
        runtimes = [runtime(f"rt-{n}", architecture="MistralForCausalLM") for n in range(step % 5 + 1)]
        kind_list_store(cluster, Kind.CLUSTER_SERVING_RUNTIME, runtimes, str(step), last=True)


def _matrix(cluster: Cluster, done: threading.Event) -> None:
    while not done.is_set():
        build = current_build(cluster)
        assert build is not None
        matrix_level(cluster, build)


def test_a_burst_of_watch_list_and_matrix_writers_meets_no_deadlock_and_no_lock(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster = Cluster.objects.create(name="burst", source=Cluster.Source.KUBECONFIG, kubeconfig="/nowhere")
    kind_list_store(cluster, Kind.CLUSTER_SERVING_RUNTIME, [runtime("rt-0")], "1", last=True)
    matrix_rebuild(cluster)
    done, failures = threading.Event(), []
    threads = [
        _in_thread(lambda: _watch(cluster, done), failures),
        _in_thread(lambda: _list(cluster, done), failures),
        _in_thread(lambda: _matrix(cluster, done), failures),
        _in_thread(lambda: _matrix(cluster, done), failures),
    ]

    with caplog.at_level(logging.INFO):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
    build = current_build(cluster)
    assert build is not None
    matrix_level(cluster, build)

    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    # PostgreSQL: the lock order leaves nothing to retry. SQLite (the suite's shared in-memory
    # database locks whole tables, without a busy timeout): retried, never raised.
    assert "deadlock" not in caplog.text.lower()
    assert Resource.objects.filter(cluster=cluster, name__startswith="burst-").count() == BATCHES * BATCH - (
        (BATCHES - 2) * len(range(0, BATCH, 3))
    )
    assert matrix_is_level(cluster)


def _load(cluster: Cluster, done: threading.Event) -> None:
    while not done.is_set():
        inventory = load_inventory(cluster)
        assert all(rid in inventory.keys for rid in inventory.ids.values())


def test_writers_and_readers_with_caches_of_one_entry_never_miss_a_parse(settings: Any) -> None:
    """Issue 36: a bounded cache evicted a parse between the heads' read and its use, and the
    reader failed ("no cached parse and no body"). With every cache at one entry, each load
    under the writers meets that eviction, and must read the body instead."""
    settings.CACHE_ENTRIES = {**settings.CACHE_ENTRIES, "parsed_objects": 1, "inventories": 1}
    cluster = Cluster.objects.create(name="small", source=Cluster.Source.KUBECONFIG, kubeconfig="/nowhere")
    kind_list_store(cluster, Kind.CLUSTER_SERVING_RUNTIME, [runtime("rt-0")], "1", last=True)
    matrix_rebuild(cluster)
    done, failures = threading.Event(), []
    work = [_watch, _list, _matrix, _load, _load]
    threads = [_in_thread(lambda work=work: work(cluster, done), failures) for work in work]

    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)

    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    inventory = load_inventory(cluster)
    assert (
        sum(key[2].startswith("burst-") for key in inventory.models)
        == Resource.objects.filter(cluster=cluster, name__startswith="burst-").count()
    )


def _a_lock_is_awaited() -> bool:
    with connection.cursor() as cursor:  # pg_locks is read afresh by each statement
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return bool(cursor.fetchone()[0])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row lock order: SQLite writes one transaction at a time")
def test_a_patch_storing_the_object_the_server_returned_queues_on_the_cluster_lock_before_the_models_row() -> None:
    cluster = Cluster.objects.create(name="patched", source=Cluster.Source.KUBECONFIG, kubeconfig="/nowhere")
    watch_events_apply(cluster, Kind.CLUSTER_BASE_MODEL, [("ADDED", _versioned(model("patched"), 5))])
    stored = Resource.objects.get(cluster=cluster, name="patched")
    returned = _versioned(model("patched", architecture="MistralForCausalLM"), 6)
    failures: list[BaseException] = []
    patch = _in_thread(lambda: returned_store(cluster, returned), failures)

    with transaction.atomic():  # a watch batch: the cluster's lock first, then the model's row
        cluster_write_lock(cluster.pk)
        patch.start()
        assert wait_until(_a_lock_is_awaited, timeout=60), "the patch never waited for a lock"
        # A patch that locked the model's row first and now waits for the cluster would
        # deadlock with this batch; NOWAIT says so at once.
        Resource.objects.select_for_update(nowait=True).filter(pk=stored.pk).get()
    patch.join(timeout=60)

    assert not patch.is_alive()
    assert failures == []
    assert Resource.objects.get(pk=stored.pk).resource_version == "6"


class _DeadlockDetected(Exception):
    sqlstate = "40P01"  # as psycopg says it


def test_a_list_stored_again_after_a_deadlock_counts_and_announces_its_changes_once(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = Cluster.objects.create(name="retried", source=Cluster.Source.KUBECONFIG, kubeconfig="/nowhere")
    announced: list[Change] = []

    def heard(changes: list[Change], **_: Any) -> None:
        announced.extend(changes)

    refused: list[str] = []

    def record_list_refused_once(*args: Any, **kwargs: Any) -> None:
        if not refused:  # the end of the first transaction: PostgreSQL ends it for a deadlock
            refused.append("deadlock")
            error = OperationalError("deadlock detected")
            error.__cause__ = _DeadlockDetected()
            raise error
        record_list(*args, **kwargs)

    record_list = resync.record_list
    monkeypatch.setattr(resync, "record_list", record_list_refused_once)
    inventory_changed.connect(heard, weak=False)
    result = ApplyResult()
    try:
        stored = kind_list_store(
            cluster, Kind.CLUSTER_SERVING_RUNTIME, [runtime("rt-a"), runtime("rt-b")], "7", last=True, result=result
        )
    finally:
        inventory_changed.disconnect(heard)

    assert stored
    assert refused == ["deadlock"]
    assert result.counts[Kind.CLUSTER_SERVING_RUNTIME].added == 2
    assert sorted(change.name for change in result.changes) == ["rt-a", "rt-b"]
    assert sorted(change.name for change in announced) == ["rt-a", "rt-b"]
    assert Resource.objects.filter(cluster=cluster).count() == 2
