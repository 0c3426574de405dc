"""Log formatters that blank out secrets (core.redact, the one redaction function), as plain
lines or one JSON object per line.

LOGGING loads this module before the apps: it must not import models.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from core.redact import MARK, redact, redact_value

__all__ = ["JsonFormatter", "RedactingFormatter", "redact"]


class RedactingFormatter(logging.Formatter):
    """logging.Formatter whose output (message, arguments and traceback) has secrets blanked."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


# Attributes every LogRecord has; anything else was passed with `extra=` and goes into the JSON.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, the `extra=`
    fields, and the traceback as `exc_info`. Secrets are blanked as in RedactingFormatter."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
            "process": record.process,
            "thread": record.threadName,
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                # Extras are structured: a secret-named key is blanked whole, others redacted inside.
                entry[key] = redact_value({key: value})[key] if isinstance(value, str) else _extra(value)
        if record.exc_info:
            entry["exc_info"] = redact(self.formatException(record.exc_info))
        if record.stack_info:
            entry["stack_info"] = redact(self.formatStack(record.stack_info))
        return json.dumps(entry, ensure_ascii=False, default=str)


def _extra(value: Any) -> Any:
    redacted = redact_value(value)
    return redacted if isinstance(redacted, str | int | float | bool | list | dict | type(None)) else MARK
