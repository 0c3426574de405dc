"""What inventory.kube raises: one DomainError per way a Kubernetes call fails, each with a
stable `code` and the HTTP status to answer with (no Kubernetes import here)."""

from __future__ import annotations

from core.errors import DomainError


class KubeError(DomainError):
    """A Kubernetes API call failed. `code` is stable for programs, `http_status` is the HTTP
    status to answer with, `message` is for people."""

    code = "kube_error"
    http_status = 502

    def __init__(self, message: str, *, http_status: int | None = None, cluster_wide: bool = False) -> None:
        super().__init__(message)
        if http_status is not None:
            self.http_status = http_status
        # True when every request to this API server would fail the same way (unreachable,
        # credentials refused), so there is no point asking about the other kinds.
        self.cluster_wide = cluster_wide


class KubeUnavailable(KubeError):
    """The API server cannot be reached, or answered 5xx/429: worth retrying later."""

    code = "unavailable"
    http_status = 503


class KubeUnauthorized(KubeError):
    """The API server refused the credentials (401) or the permission (403)."""

    code = "unauthorized"
    http_status = 401


class KubeNotFound(KubeError):
    """The object does not exist, or (on a list or watch) the CRD is not installed."""

    code = "not_found"
    http_status = 404


class KubeConflict(KubeError):
    """The object changed since the resourceVersion the caller sent (409)."""

    code = "conflict"
    http_status = 409


class KubeGone(KubeError):
    """The resourceVersion is too old (410): list again and watch from the new one."""

    code = "gone"
    http_status = 410


class KubeConfigError(KubeError):
    """The kubeconfig (or in-cluster service account) cannot be used to build a client."""

    code = "bad_config"
    http_status = 500
