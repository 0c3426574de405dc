"""Webhook egress (issue 32, Low): a receiver's URL may not reach loopback, private, link-local,
shared or metadata addresses unless an administrator allows the network
(WEBHOOK_ALLOWED_NETWORKS), and a redirect is never followed. The refusals are recorded as the
delivery's error, and the server behind the address receives nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from policies.egress import address_allowed
from policies.models import Delivery, Receiver
from policies.notify import Event, deliveries_create
from policies.webhooks import webhook_deliver
from tests.support.webhook_receiver import WebhookReceiver, running_receiver

EVENT = Event(
    "assertion", "c1", ("team-a",), {"type": "assertion.failing", "cluster": "c1", "causes": [], "failures": []}
)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "127.1.2.3", "::1", "0.0.0.0", "::",
        "10.0.0.5", "172.16.0.1", "192.168.1.1", "fc00::1",
        "169.254.169.254",  # AWS, GCP, Azure metadata
        "fd00:ec2::254",  # AWS metadata over IPv6
        "100.100.100.200",  # Alibaba metadata (shared address space)
        "::ffff:127.0.0.1", "::ffff:169.254.169.254",  # IPv4-mapped
        "fe80::1", "224.0.0.1", "240.0.0.1",
    ],
)  # fmt: skip
def test_non_public_addresses_are_refused(address: str, settings: Any) -> None:
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    assert not address_allowed(address)


def test_public_addresses_pass_and_an_administrator_may_allow_a_network(settings: Any) -> None:
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    assert address_allowed("93.184.215.14")
    assert address_allowed("2606:4700::6810:84e5")
    assert not address_allowed("10.1.2.3")
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    assert address_allowed("10.1.2.3")
    assert not address_allowed("169.254.169.254")


@pytest.fixture
def receiver_server() -> Iterator[WebhookReceiver]:
    with running_receiver() as server:
        yield server


def deliver_to(url: str) -> Delivery:
    Receiver.objects.create(name="hook", url=url)
    (delivery_id,) = deliveries_create([EVENT])
    webhook_deliver(delivery_id)
    return Delivery.objects.get(pk=delivery_id)


def test_a_receiver_on_loopback_is_refused_by_default(
    db: None, settings: Any, receiver_server: WebhookReceiver
) -> None:
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    url = receiver_server.url.replace("127.0.0.1", "localhost")

    delivery = deliver_to(url)

    assert receiver_server.requests == []
    assert delivery.status == Delivery.Status.PENDING
    assert delivery.last_status_code is None
    assert "webhooks may not reach loopback, private, link-local or metadata addresses" in delivery.last_error
    assert "WEBHOOK_ALLOWED_NETWORKS" in delivery.last_error


@pytest.fixture
def redirecting(receiver_server: WebhookReceiver) -> Iterator[str]:
    """A server that answers every POST with a 307 to the receiver (which must get nothing)."""
    with running_receiver(redirect_to=receiver_server.url) as server:
        yield server.url


def test_a_redirect_is_not_followed(db: None, redirecting: str, receiver_server: WebhookReceiver) -> None:
    delivery = deliver_to(redirecting)  # loopback allowed here (tests/settings.py)

    assert receiver_server.requests == []
    assert (delivery.last_status_code, delivery.last_error) == (307, "HTTP 307")
    assert delivery.status == Delivery.Status.PENDING
