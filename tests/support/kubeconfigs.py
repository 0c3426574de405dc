"""Kubeconfig files for registration tests (the fake API server writes its own: FakeKubeAPI.write_kubeconfig)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def kubeconfig(server: str = "https://127.0.0.1:6443", *, context: str = "ctx", user: Any = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": user if user is not None else {"token": "not-a-real-token"}}],
        "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
        "current-context": context,
    }


def write_kubeconfig(path: Path, **kwargs: Any) -> Path:
    path.write_text(yaml.safe_dump(kubeconfig(**kwargs)))
    return path
