"""What queueing a Celery task, or setting a marker in Redis beside it, raises when the broker is
away. Callers that can leave the work to a catch-up catch these and say so."""

from __future__ import annotations

from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

BROKER_ERRORS = (OperationalError, RedisError, ConnectionError, TimeoutError)
