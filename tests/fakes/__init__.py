"""Test doubles.

``tests.fakes.kube_api.FakeKubeAPI`` is a small in-process Kubernetes API server for the five OME
kinds (``ome.io/v1beta1``), driven in tests by the real ``kubernetes`` client.

The names are re-exported lazily so that ``python -m tests.fakes.kube_api`` does not import the
module twice (which would print a ``RuntimeWarning``).
"""

__all__ = ["API_VERSION", "GROUP", "KINDS", "VERSION", "FakeKubeAPI", "KubeError"]


def __getattr__(name):
    if name in __all__:
        from . import kube_api

        return getattr(kube_api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
