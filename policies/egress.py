"""Where a webhook may be sent. A receiver's URL is typed by a staff user, so the dashboard must
not become a way to reach what only it can reach: every address the host resolves to must be a
public one (not loopback, private, link-local, shared, reserved or multicast; a cloud metadata
address is link-local, fd00:ec2::254 unique-local, 100.100.100.200 shared), unless it lies in a
network an administrator allows (settings.WEBHOOK_ALLOWED_NETWORKS, CIDRs). The connection is
made to the address that was checked (no second lookup a DNS answer could change), through no
proxy, and a redirect is never followed: it is the delivery's failure, with its status.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import urllib.request
from typing import Any

from django.conf import settings


class EgressRefused(OSError):
    """A receiver's host resolves to an address webhooks may not reach (the message says which)."""


def address_allowed(text: str) -> bool:
    address = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in ipaddress.ip_network(network) for network in settings.WEBHOOK_ALLOWED_NETWORKS):
        return True
    return address.is_global and not address.is_multicast


def connect_checked(address: tuple[str, int], timeout: Any, source_address: Any = None) -> socket.socket:
    """socket.create_connection, refusing a host any of whose addresses is not allowed, and
    connecting to the checked address itself."""
    host, port = address
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    refused = sorted({str(sockaddr[0]) for *_, sockaddr in found if not address_allowed(str(sockaddr[0]))})
    if refused:
        raise EgressRefused(
            f"{host} resolves to {', '.join(refused)}: webhooks may not reach loopback, private, link-local "
            "or metadata addresses (an administrator may allow a network: WEBHOOK_ALLOWED_NETWORKS)"
        )
    *_, sockaddr = found[0]
    return socket.create_connection((str(sockaddr[0]), port), timeout, source_address)


class _HTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = connect_checked  # http.client sets socket.create_connection here


class _HTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = connect_checked


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_HTTPConnection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        # The host name is still the one TLS verifies (server_hostname), not the address.
        return self.do_open(_HTTPSConnection, req, context=ssl.create_default_context())


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx becomes an HTTPError: the delivery failed, with that status


def opener() -> urllib.request.OpenerDirector:
    """What a webhook is POSTed with: checked addresses, no proxy, no redirect."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), _HTTPHandler, _HTTPSHandler, _NoRedirects)
