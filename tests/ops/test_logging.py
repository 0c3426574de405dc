"""Structured logs: JSON lines with LOG_FORMAT=json, in every process, and secrets blanked in
either format."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest
from django.conf import settings

from ome_dashboard.celery import app as celery_app
from ome_dashboard.ops.logs import JsonFormatter, RedactingFormatter, redact

TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.c2VjcmV0LXRva2VuLXZhbHVl.sig"


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    entry = logging.LogRecord("inventory.live", logging.WARNING, __file__, 1, message, args, None)
    for key, value in extra.items():
        setattr(entry, key, value)
    return entry


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"headers: {{'Authorization': 'Bearer {TOKEN}'}}", "headers: {'Authorization': 'Bearer [redacted]'}"),
        (f"authorization: bearer {TOKEN}", "authorization: bearer [redacted]"),
        (f"user: {{token: {TOKEN}}}", "user: {token: [redacted]}"),
        (f'"token": "{TOKEN}"', '"token": "[redacted]"'),
        ("postgres://ome:hunter2@db:5432/ome", "postgres://ome:[redacted]@db:5432/ome"),
        ("redis://:s3cr3t@redis:6379/0", "redis://:[redacted]@redis:6379/0"),
        ("password=hunter2 user=ome", "password=[redacted] user=ome"),
        ("client-key-data: LS0tLS1CRUdJTi", "client-key-data: [redacted]"),
        (
            "cluster prod ClusterBaseModel: listed 12 objects at 1042",
            "cluster prod ClusterBaseModel: listed 12 objects at 1042",
        ),
    ],
    ids=[
        "bearer-header",
        "bearer-lower",
        "kubeconfig-token",
        "json-token",
        "postgres-url",
        "redis-url",
        "password",
        "client-key",
        "plain",
    ],
)
def test_secrets_are_blanked_and_the_rest_is_kept(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_json_line_has_time_level_logger_message_and_the_extra_fields() -> None:
    line = JsonFormatter().format(
        record("cluster %s %s: %d objects", "prod", "BaseModel", 3, cluster="prod", took_ms=12.5)
    )

    entry = json.loads(line)
    assert "\n" not in line
    assert entry["level"] == "WARNING"
    assert entry["logger"] == "inventory.live"
    assert entry["message"] == "cluster prod BaseModel: 3 objects"
    assert entry["time"].endswith("+00:00")
    assert (entry["cluster"], entry["took_ms"]) == ("prod", 12.5)
    assert {"process", "thread"} <= set(entry)


def test_a_json_line_carries_the_traceback_with_secrets_blanked() -> None:
    try:
        raise RuntimeError(f"request failed: Authorization: Bearer {TOKEN}")
    except RuntimeError:
        entry = record("watch crashed")
        entry.exc_info = sys.exc_info()

    line = JsonFormatter().format(entry)

    parsed = json.loads(line)
    assert "RuntimeError: request failed" in parsed["exc_info"]
    assert TOKEN not in line


def test_the_plain_format_blanks_secrets_in_arguments_too() -> None:
    formatter = RedactingFormatter("%(levelname)s %(name)s: %(message)s")

    line = formatter.format(record("connecting with %s", f"Bearer {TOKEN}"))

    assert line == "WARNING inventory.live: connecting with Bearer [redacted]"


SHOW_LOG = """
import django, logging
django.setup()
logging.getLogger("inventory.live").warning("cluster %s: token %s", "prod", "token=abc123")
"""


def log_line(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SHOW_LOG],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "ome_dashboard.settings", "DEBUG": "true", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_log_format_json_makes_every_line_a_json_object() -> None:
    result = log_line(LOG_FORMAT="json")

    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout.strip().splitlines()[-1])
    assert entry["message"] == "cluster prod: token token=[redacted]"
    assert entry["logger"] == "inventory.live"


def test_the_default_log_format_is_plain_lines() -> None:
    result = log_line()

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("WARNING inventory.live: cluster prod: token token=[redacted]")


def test_an_unknown_log_format_refuses_to_start() -> None:
    result = log_line(LOG_FORMAT="xml")

    assert result.returncode != 0
    assert "LOG_FORMAT must be plain or json" in result.stderr


def test_celery_workers_log_through_djangos_logging() -> None:
    # Celery would otherwise replace the root handler with its own format: no JSON from workers.
    assert settings.CELERY_WORKER_HIJACK_ROOT_LOGGER is False
    assert celery_app.conf.worker_hijack_root_logger is False
