"""A frozen process holding a cluster's lock (issue 36: after a SIGSTOP its sessions sat `idle in
transaction`, one holding a cluster's row lock, and the other worker's claim rounds waited on it
and claimed nothing after it). Claims skip a locked cluster at once (SKIP LOCKED), and every process's
connections end a transaction left idle for OME_DB_IDLE_TRANSACTION_TIMEOUT, its locks with it.

PostgreSQL only: SQLite has no row locks nor idle-transaction bound (inventory.locks, core.db).
The whole worker frozen by SIGSTOP is benchmarks.scale_out --freeze (docs/operations.md)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from core.db import bound_idle_transactions
from inventory.live.leases import watches_claim_idle
from inventory.locks import cluster_write_lock
from inventory.models import Cluster, Kind
from tests.support.processes import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and idle-transaction bounds: PostgreSQL"),
]


class FrozenHolder(threading.Thread):
    """A writer of `cluster` that takes its lock in a transaction, then stops (frozen) until
    `thaw`; then tries one more statement, and keeps what it met."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(daemon=True)
        self.cluster = cluster
        self.locked, self.thaw = threading.Event(), threading.Event()
        self.after_thaw: BaseException | None = None

    def run(self) -> None:
        try:
            with transaction.atomic():
                cluster_write_lock(self.cluster.pk)
                self.locked.set()
                self.thaw.wait(120)
                Cluster.objects.filter(pk=self.cluster.pk).update(name=self.cluster.name)
        except DatabaseError as error:
            self.after_thaw = error
        finally:
            connection.close()


@pytest.fixture
def clusters(tmp_path: Path) -> list[Cluster]:
    return [
        Cluster.objects.create(name=f"c{index}", source=Cluster.Source.KUBECONFIG, kubeconfig=str(tmp_path / "none"))
        for index in range(3)
    ]


@pytest.fixture
def frozen(clusters: list[Cluster]) -> Iterator[FrozenHolder]:
    holder = FrozenHolder(clusters[0])
    holder.start()
    assert holder.locked.wait(30)
    yield holder
    holder.thaw.set()
    holder.join(30)


def test_a_claim_round_skips_a_cluster_a_frozen_holder_locked_and_claims_the_others(
    clusters: list[Cluster], frozen: FrozenHolder
) -> None:
    claims = watches_claim_idle(hub="survivor", alive={"survivor"})

    assert {claim.cluster_id for claim in claims} == {cluster.pk for cluster in clusters[1:]}
    assert len(claims) == 2 * len(Kind.values)


@pytest.fixture
def bounded() -> Iterator[None]:
    bound_idle_transactions(1)
    yield
    bound_idle_transactions(settings.OME_DB_IDLE_TRANSACTION_TIMEOUT)


def test_every_connection_of_any_process_carries_the_bound() -> None:
    # This process is neither a web server nor a worker: the bound comes with Django's setup.
    with connection.cursor() as cursor:
        cursor.execute("SELECT setting, unit FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'")
        shown = cursor.fetchone()

    assert shown == (str(round(settings.OME_DB_IDLE_TRANSACTION_TIMEOUT * 1000)), "ms")


def test_a_frozen_holders_transaction_ends_after_the_bound_and_its_cluster_is_claimed(
    bounded: None, clusters: list[Cluster]
) -> None:
    holder = FrozenHolder(clusters[0])  # its connection is new: bounded to 1 s idle in a transaction
    holder.start()
    assert holder.locked.wait(30)
    claimed: set[int] = set()

    def first_claimed() -> bool:
        claimed.update(claim.cluster_id for claim in watches_claim_idle(hub="survivor", alive={"survivor"}))
        return clusters[0].pk in claimed

    took = wait_until(first_claimed, timeout=30, interval=0.2)
    holder.thaw.set()
    holder.join(30)

    assert took, "the frozen holder's lock outlived its idle-transaction bound"
    assert claimed == {cluster.pk for cluster in clusters}
    assert holder.after_thaw is not None  # its transaction was ended: nothing it does commits
