"""Helpers of the HTML pages that every app's views share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any, TypeVar

import yaml
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

View = TypeVar("View", bound=Callable[..., HttpResponse])

# How a namespace travels in URLs and queries when it is the cluster scope (the empty namespace).
# Kubernetes namespaces are DNS labels, so this can never name a real one.
CLUSTER_TOKEN = "_cluster"
# ... and every namespace at once (the whole cluster), where a list can show them together.
ALL_NAMESPACES = "_all"


def poll_seconds() -> float:
    """How often pages poll the matrix version (htmx `every`), so that a sync or a patch shows
    up by itself: settings.MATRIX_POLL_SECONDS."""
    return float(settings.MATRIX_POLL_SECONDS)


def read_access(view: View) -> View:
    """Let anyone read while settings.API_ANONYMOUS_READ is on (as the API does); otherwise send
    anonymous users to the login page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.API_ANONYMOUS_READ and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapped  # type: ignore[return-value]


def namespace_token(namespace: str) -> str:
    """A namespace as it travels in URLs: `_cluster` for cluster scope (the empty namespace)."""
    return namespace or CLUSTER_TOKEN


def namespace_from_token(token: str | None) -> str:
    """The namespace a token names: "" (cluster scope) for `_cluster` or no token."""
    return "" if not token or token == CLUSTER_TOKEN else token


def is_partial(request: HttpRequest) -> bool:
    """An htmx request for a fragment (not a boosted page load)."""
    htmx = getattr(request, "htmx", None)
    return htmx is not None and bool(htmx) and not htmx.boosted


# PyYAML's wheels carry libyaml; a build without it falls back to the pure-Python dumper.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_yaml(obj: object) -> str:
    """An object as the pages show YAML: keys in their order, block style (libyaml's dumper:
    the same text as yaml.safe_dump, five times faster; pages dump hundreds of manifests)."""
    return yaml.dump(obj, Dumper=_DUMPER, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)


# Fields of a stored object that an edited copy should not carry back.
_SERVER_FIELDS = ("managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink")


def editable_manifest(obj: Mapping[str, Any]) -> str:
    """The object as YAML to edit: without status and the fields the API server sets."""
    copy = {key: value for key, value in obj.items() if key != "status"}
    metadata = copy.get("metadata")
    if isinstance(metadata, Mapping):
        copy["metadata"] = {key: value for key, value in metadata.items() if key not in _SERVER_FIELDS}
    return to_yaml(copy)
