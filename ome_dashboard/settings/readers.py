"""The typed readers that ome_dashboard.settings.knobs reads every environment variable through.

Each reader takes the variable's name and its default and returns a plain typed value (django-environ
parses the text: `true`/`on`/`1` for flags, commas for lists, URLs for the database and the cache).
Values missing from the environment are read from ENV_FILE first (`Environment.load`). What each
variable means is documented once, in docs/configuration.md; a test checks that every name read
there is documented.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured


class Environment:
    """The environment, read one typed variable at a time."""

    def __init__(self) -> None:
        self._env = environ.Env()

    def load(self, env_file: str) -> None:
        """Read `env_file`'s NAME=value lines for the variables the environment does not set."""
        if env_file and Path(env_file).is_file():
            environ.Env.read_env(env_file)

    def text(self, name: str, default: str) -> str:
        return str(self._env.str(name, default=default))

    def flag(self, name: str, default: bool) -> bool:
        return bool(self._env.bool(name, default=default))

    def whole(self, name: str, default: int) -> int:
        return int(self._env.int(name, default=default))

    def number(self, name: str, default: float) -> float:
        return float(self._env.float(name, default=default))

    def items(self, name: str, default: Sequence[str] = ()) -> list[str]:
        """A comma-separated list."""
        return [str(item) for item in self._env.list(name, default=list(default))]

    def path(self, name: str, default: Path) -> Path:
        return Path(self.text(name, str(default)))

    def choice(self, name: str, default: str, choices: Sequence[str]) -> str:
        value = self.text(name, default).lower()
        if value not in choices:
            raise ImproperlyConfigured(f"{name} must be {' or '.join(choices)}, not {value!r}")
        return value

    def required(self, name: str, *, when: str) -> str:
        """A text that must be set and not empty (django-environ only complains when it is absent)."""
        value = self.text(name, "")
        if not value:
            raise ImproperlyConfigured(f"Set the {name} environment variable (required when {when}).")
        return value

    def database(self, name: str, default: str) -> dict[str, Any]:
        """Django's DATABASES entry for a database URL."""
        return dict(self._env.db(name, default=default))

    def cache(self, name: str, default: str) -> dict[str, Any]:
        """Django's CACHES entry for a cache URL."""
        return dict(self._env.cache(name, default=default))

    def proxy_ssl_header(self, name: str) -> tuple[str, str] | None:
        """`HEADER,VALUE` (e.g. X-Forwarded-Proto,https) as Django's SECURE_PROXY_SSL_HEADER, or None."""
        given = self.items(name)
        if not given:
            return None
        if len(given) != 2:
            raise ImproperlyConfigured(f"{name} must be HEADER,VALUE, e.g. X-Forwarded-Proto,https")
        header = given[0].strip().upper().replace("-", "_")
        return (header if header.startswith("HTTP_") else f"HTTP_{header}", given[1].strip())

    def bounds(self, name: str, defaults: dict[str, int]) -> dict[str, int]:
        """`defaults` with some values replaced by the variable's `NAME=N,...` (N at least 1)."""
        bounds = dict(defaults)
        for item in filter(None, (part.strip() for part in self.text(name, "").split(","))):
            key, _, value = item.partition("=")
            if key not in bounds or not value.isdigit() or int(value) < 1:
                raise ImproperlyConfigured(
                    f"{name}: {item!r} must be NAME=N, N at least 1, NAME one of {', '.join(bounds)}"
                )
            bounds[key] = int(value)
        return bounds
