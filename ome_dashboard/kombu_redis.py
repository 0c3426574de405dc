"""A workaround for kombu's Redis transport: a channel of a closed connection raises a
connection error, not an AttributeError that kills the worker.

The fault (kombu 5.7.0, the newest release; reported as celery/kombu#582, "Error on restarting
Gossip", with the same traceback and closed without a fix of this path): closing a kombu
Connection sets its transport's `client` to None. A Redis channel of that transport that is
used again afterwards (a worker reconnecting after Redis restarts: a channel still in the
poller's cycle, or closed while its pool was already dropped) builds a new connection pool from
`self.connection.client`, and `_connparams` fails with `AttributeError: 'NoneType' object has
no attribute 'hostname'` (or, for a channel closed itself, `... no attribute 'client'`). Celery counts an AttributeError as unrecoverable and the worker
exits, where a connection error would have made it reconnect, as it does for every other
moment of a Redis outage. So `_connparams` raises redis' ConnectionError (one of the
transport's `connection_errors`) in that case, and does what it always did otherwise.
"""

from __future__ import annotations

import functools
from typing import Any

import redis
from kombu.transport import redis as kombu_redis


def _closed_connection_is_a_connection_error(connparams: Any) -> Any:
    @functools.wraps(connparams)
    def checked(self: kombu_redis.Channel, *args: Any, **kwargs: Any) -> Any:
        transport = self.connection  # None once the channel itself was closed
        if transport is None or transport.client is None:
            raise redis.exceptions.ConnectionError("the broker connection of this channel was closed; reconnecting")
        return connparams(self, *args, **kwargs)

    checked.ome_patched = True  # type: ignore[attr-defined]
    return checked


def patch_kombu_redis() -> None:
    """Install the workaround (idempotent); ome_dashboard.celery calls it on import."""
    original = getattr(kombu_redis.Channel, "_connparams")  # noqa: B009  # untyped in kombu's stubs
    if not getattr(original, "ome_patched", False):
        setattr(kombu_redis.Channel, "_connparams", _closed_connection_is_a_connection_error(original))  # noqa: B010
