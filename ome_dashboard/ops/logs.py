"""Log formatters that blank out secrets, as plain lines or one JSON object per line.

LOGGING loads this module before the apps: it must not import models.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

# What a secret looks like in a log line, and the part of it that stays. Tokens come from
# kubeconfigs and service accounts, passwords from DATABASE_URL / REDIS_URL.
_SECRET_PATTERNS = [
    (re.compile(r"(?i)(\bbearer\s+)[^\s'\",;]+"), r"\1[redacted]"),
    (
        re.compile(
            r"(?i)(\b(?:token|password|passwd|secret|api[_-]?key|client-key-data|client-certificate-data)[\"']?\s*[:=]\s*[\"']?)[^\s'\",;}]+"
        ),
        r"\1[redacted]",
    ),
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@/\s]+@"), r"\1[redacted]@"),
]


def redact(text: str) -> str:
    """`text` with bearer tokens, `token: ...`/`password=...` values and URL passwords blanked."""
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


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
                entry[key] = value if isinstance(value, str | int | float | bool | type(None)) else redact(repr(value))
        if record.exc_info:
            entry["exc_info"] = redact(self.formatException(record.exc_info))
        if record.stack_info:
            entry["stack_info"] = redact(self.formatStack(record.stack_info))
        return json.dumps(entry, ensure_ascii=False, default=str)
