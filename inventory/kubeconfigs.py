"""Kubeconfig files: only from settings.OME_KUBECONFIG_DIR, one file per cluster, read by us.

A kubeconfig names the credentials sent to an API server, so where it may come from is narrow:
a path relative to the directory (or absolute inside it) whose resolved path (symlinks followed)
stays inside; no `~`, no `:`-joined lists (the kubernetes client would merge them, sending one
file's credentials to another file's server); at most OME_KUBECONFIG_MAX_BYTES; a YAML mapping
shaped like a kubeconfig; and only a context the file defines. Every error names the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

from core.errors import DomainError

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class KubeconfigInvalid(DomainError, ValueError):
    """The kubeconfig reference or file cannot be used (400 on field `source`)."""

    code = "bad_kubeconfig"

    def __init__(self, message: str) -> None:
        super().__init__(message, field="source")


def kubeconfig_dir() -> Path:
    return Path(settings.OME_KUBECONFIG_DIR).resolve()


def kubeconfig_path(text: str) -> Path:
    """The file `text` names inside the kubeconfig directory; KubeconfigInvalid otherwise."""
    text = text.strip()
    if not text:
        raise KubeconfigInvalid("name the kubeconfig file")
    if text.startswith("~"):
        raise KubeconfigInvalid(f"kubeconfig {text!r}: `~` is not expanded; name a file in {kubeconfig_dir()}")
    if ":" in text or "\0" in text:
        raise KubeconfigInvalid(f"kubeconfig {text!r}: one file only (no `:`-joined lists)")
    folder = kubeconfig_dir()
    path = (folder / text).resolve()
    if not path.is_relative_to(folder) or path == folder:
        raise KubeconfigInvalid(
            f"kubeconfig {text!r} is outside the kubeconfig directory {folder} (OME_KUBECONFIG_DIR)"
        )
    return path


def kubeconfig_read(text: str, context: str = "") -> tuple[Path, dict[str, Any]]:
    """The kubeconfig `text` names, read and checked, and its path: a file in the directory, at
    most OME_KUBECONFIG_MAX_BYTES, a kubeconfig defining `context` (or a current-context)."""
    path = kubeconfig_path(text)
    limit = int(settings.OME_KUBECONFIG_MAX_BYTES)
    try:
        with path.open("rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as error:
        raise KubeconfigInvalid(
            f"kubeconfig {path}: cannot read it ({error.strerror or type(error).__name__})"
        ) from None
    if len(raw) > limit:
        raise KubeconfigInvalid(f"kubeconfig {path} is larger than {limit} bytes (OME_KUBECONFIG_MAX_BYTES)")
    try:
        data = yaml.load(raw, Loader=Loader)
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
        raise KubeconfigInvalid(f"kubeconfig {path} is not valid YAML") from None
    return path, _checked(path, data, context)


def _checked(path: Path, data: Any, context: str) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("kind", "Config") != "Config":
        raise KubeconfigInvalid(f"{path} is not a kubeconfig (expected a mapping with kind: Config)")
    for section in ("clusters", "contexts", "users"):
        entries = data.get(section)
        if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
            raise KubeconfigInvalid(f"{path} is not a kubeconfig: `{section}` must be a list of entries")
    names = [str(entry.get("name")) for entry in data["contexts"]]
    wanted = context or str(data.get("current-context") or "")
    if not wanted:
        raise KubeconfigInvalid(f"kubeconfig {path} has no current-context; name one of its contexts")
    if wanted not in names:
        # Context names are not secret; the file's other content is never quoted.
        raise KubeconfigInvalid(f"kubeconfig {path} defines no context {wanted!r} (it defines: {', '.join(names)})")
    return data
