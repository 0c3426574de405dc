"""A fake Kubernetes API server for the five OME kinds (``ome.io/v1beta1``), and the Policy Report
kinds (``wgpolicyk8s.io/v1alpha2``, written objects checked against their CRDs' schemas under
``crds/`` with jsonschema, imported lazily).

Standard library only (PyYAML is imported lazily, only to read YAML manifests and to write a YAML
kubeconfig). It is meant to be driven by the REAL ``kubernetes`` client (37.x ``CustomObjectsApi``
and ``kubernetes.watch.Watch``), so that sync code is tested against real client behaviour::

    from kubernetes import client, config, watch
    with FakeKubeAPI() as fake:
        fake.create({"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel",
                     "metadata": {"name": "m1"}, "spec": {"modelFormat": {"name": "safetensors"}}})
        api = client.CustomObjectsApi(config.new_client_from_config_dict(fake.kubeconfig()))
        api.list_cluster_custom_object("ome.io", "v1beta1", "clusterbasemodels")

HTTP surface (all JSON; errors are ``Status`` objects like a real apiserver):

* ``/apis/ome.io/v1beta1/{plural}``: list / watch across all namespaces (every kind), create and
  delete-collection for cluster-scoped kinds.
* ``/apis/ome.io/v1beta1/namespaces/{ns}/{plural}``: list / watch / create / delete-collection.
* ``.../{plural}/{name}``: GET, PUT (needs the current ``metadata.resourceVersion``), PATCH
  (merge-patch, json-patch, apply-patch approximated as a merge; strategic merge → 415), DELETE
  (``DeleteOptions.preconditions`` honoured; objects with finalizers get a ``deletionTimestamp``).
* ``.../{plural}/{name}/status``: GET, PUT, PATCH of the status subresource. As for the real OME
  CRDs (status subresource enabled), writes to the main resource through HTTP ignore ``status``
  and writes to ``/status`` change only ``status``. The test-side helpers ignore this rule.
* Discovery: ``/version``, ``/api``, ``/api/v1``, ``/apis``, ``/apis/ome.io``,
  ``/apis/ome.io/v1beta1``, and ``/healthz`` (enough for ``kubectl get`` against it).
* RBAC, a rule table (:meth:`FakeKubeAPI.allow`): ``POST /apis/authorization.k8s.io/v1/
  subjectaccessreviews`` is answered from it, and a request carrying ``Impersonate-User`` (and
  ``Impersonate-Group`` headers) is refused with 403 unless a rule lets that user or one of
  those groups do it. Requests without impersonation act as the dashboard's own account.
* Read-only objects served by ``serve_object`` (GET only), e.g. OME's controller Deployment
  (``serve_deployment``) and the OME CRDs (``serve_crd``), or a refusal of them (403/404), for
  the detection of each cluster's OME version.

Run by hand: ``python -m tests.fakes.kube_api --manifests DIR [--port N] [--kubeconfig-out PATH]``.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import collections
import contextlib
import copy
import datetime as _dt
import itertools
import json
import os
import random
import re
import select
import signal
import socket
import socketserver
import string
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple, Self
from urllib.parse import parse_qsl, unquote, urlsplit

from tests.support.patience import Deadline

GROUP = "ome.io"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"


class KindInfo(NamedTuple):
    kind: str
    plural: str
    namespaced: bool
    group: str = GROUP
    version: str = VERSION
    #: the CRD file (under crds/) whose schema every write must satisfy; None: not checked
    crd: str | None = None

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


KINDS: dict[str, KindInfo] = {
    k.plural: k
    for k in (
        KindInfo("BaseModel", "basemodels", True),
        KindInfo("ClusterBaseModel", "clusterbasemodels", False),
        KindInfo("ServingRuntime", "servingruntimes", True),
        KindInfo("ClusterServingRuntime", "clusterservingruntimes", False),
        KindInfo("InferenceService", "inferenceservices", True),
    )
}
# The Policy Report kinds OME Compat writes its verdicts as (reports/), checked against their CRDs.
REPORT_KINDS: dict[str, KindInfo] = {
    k.plural: k
    for k in (
        KindInfo(
            "PolicyReport", "policyreports", True, "wgpolicyk8s.io", "v1alpha2", "wgpolicyk8s.io_policyreports.yaml"
        ),
        KindInfo(
            "ClusterPolicyReport",
            "clusterpolicyreports",
            False,
            "wgpolicyk8s.io",
            "v1alpha2",
            "wgpolicyk8s.io_clusterpolicyreports.yaml",
        ),
    )
}
# Every kind served; discovery and manifest loading stay with OME's five (KINDS).
SERVED_KINDS: dict[str, KindInfo] = {**KINDS, **REPORT_KINDS}
_KIND_BY_NAME = {k.kind: k for k in SERVED_KINDS.values()}
_GROUP_VERSIONS = {(k.group, k.version) for k in SERVED_KINDS.values()}
_CRDS = Path(__file__).resolve().parent / "crds"

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
NOT_FOUND_PATH = "the server could not find the requested resource"
_UNSUPPORTED_PATCH = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)
_VERBS = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------


class KubeError(Exception):
    """An API error; turned into a ``Status`` response. Also raised by the test-side helpers."""

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: dict | None = None,
        headers: Mapping[str, str] | None = None,
    ):
        super().__init__(f"{code} {reason or _REASONS.get(code, '')}: {message}")
        self.code = code
        self.message = message
        self.reason = reason or _REASONS.get(code, "")
        self.details = details
        self.headers = dict(headers or {})

    def status(self) -> dict:
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "details": self.details or {},
            "code": self.code,
        }
        return body


def _details(info: KindInfo, name: str | None, uid: str | None = None) -> dict:
    d: dict[str, Any] = {"group": info.group, "kind": info.plural}
    if name:
        d["name"] = name
    if uid:
        d["uid"] = uid
    return d


def _not_found(info: KindInfo, name: str) -> KubeError:
    return KubeError(404, f'{info.plural}.{info.group} "{name}" not found', "NotFound", _details(info, name))


def _conflict(info: KindInfo, name: str, why: str | None = None) -> KubeError:
    why = why or "the object has been modified; please apply your changes to the latest version and try again"
    return KubeError(
        409,
        f'Operation cannot be fulfilled on {info.plural}.{info.group} "{name}": {why}',
        "Conflict",
        _details(info, name),
    )


def _invalid(info: KindInfo, name: str, field: str, value: Any, why: str) -> KubeError:
    msg = f'{info.kind}.{info.group} "{name}" is invalid: {field}: Invalid value: {json.dumps(value)}: {why}'
    details = _details(info, name)
    details["kind"] = info.kind
    details["causes"] = [
        {"reason": "FieldValueInvalid", "message": f"Invalid value: {json.dumps(value)}: {why}", "field": field}
    ]
    return KubeError(422, msg, "Invalid", details)


def _closed(schema: Any) -> Any:
    """The schema with every object that declares properties closed to others: an API server
    with strict field validation (kubectl's default) refuses an undeclared field."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    closed = {key: _closed(value) for key, value in schema.items()}
    declared = "properties" in schema and "additionalProperties" not in schema
    if declared and not schema.get("x-kubernetes-preserve-unknown-fields"):
        closed["additionalProperties"] = False
    return closed


_SCHEMAS: dict[tuple[str, str], dict] = {}


def _crd_schema(info: KindInfo) -> dict:
    """The openAPIV3Schema of the CRD's version the kind is served at (read once)."""
    key = (info.plural, info.version)
    if key not in _SCHEMAS:
        import yaml

        crd = yaml.safe_load((_CRDS / str(info.crd)).read_text())
        (version,) = [v for v in crd["spec"]["versions"] if v["name"] == info.version]
        schema = _closed(version["schema"]["openAPIV3Schema"])
        schema["properties"]["metadata"] = {"type": "object"}
        _SCHEMAS[key] = schema
    return _SCHEMAS[key]


def crd_check(info: KindInfo, obj: dict) -> None:
    """Refuse (422, as an API server does) an object its CRD's schema does not admit."""
    if info.crd is None:
        return
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(_crd_schema(info)).iter_errors(obj))
    if error is not None:
        field = ".".join(str(part) for part in error.absolute_path) or "<root>"
        raise _invalid(info, (obj.get("metadata") or {}).get("name") or "", field, error.instance, error.message)


def parse_bool(value: str | None) -> bool:
    """Query-parameter booleans: Go ``strconv.ParseBool`` true values (1 t T true TRUE True) are
    true, its false values are false; like the apiserver, any other non-empty value counts as
    true and an absent parameter is false."""
    if value is None:
        return False
    return not (value in ("0", "f", "F") or value.lower() == "false")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _spec_part(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch. Returns a new value; the inputs are not modified."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def json_patch(doc: Any, ops: Any) -> Any:
    """RFC 6902 JSON patch (add, remove, replace, move, copy, test). Raises ValueError."""
    if not isinstance(ops, list):
        raise ValueError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(doc)

    def parent(d: Any, parts: list[str]) -> tuple[Any, str]:
        if not parts:
            raise ValueError("the root cannot be the target of this operation")
        cur = d
        for p in parts[:-1]:
            if isinstance(cur, dict):
                if p not in cur:
                    raise ValueError(f"missing path element {p!r}")
                cur = cur[p]
            elif isinstance(cur, list):
                cur = cur[int(p)]
            else:
                raise ValueError(f"cannot descend into {p!r}")
        return cur, parts[-1]

    def get(d: Any, parts: list[str]) -> Any:
        cur = d
        for p in parts:
            if isinstance(cur, dict):
                if p not in cur:
                    raise ValueError(f"missing path element {p!r}")
                cur = cur[p]
            elif isinstance(cur, list):
                cur = cur[int(p)]
            else:
                raise ValueError(f"cannot descend into {p!r}")
        return cur

    def remove(d: Any, parts: list[str]) -> Any:
        par, last = parent(d, parts)
        if isinstance(par, dict):
            if last not in par:
                raise ValueError(f"cannot remove missing key {last!r}")
            return par.pop(last)
        return par.pop(int(last))

    def add(d: Any, parts: list[str], value: Any) -> Any:
        if not parts:
            return value
        par, last = parent(d, parts)
        if isinstance(par, dict):
            par[last] = value
        elif isinstance(par, list):
            if last == "-":
                par.append(value)
            else:
                idx = int(last)
                if idx > len(par):
                    raise ValueError("array index out of range")
                par.insert(idx, value)
        else:
            raise ValueError("cannot add to a scalar")
        return d

    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise ValueError(f"invalid operation {op!r}")
        kind, parts = op["op"], _pointer(op["path"])
        try:
            if kind == "add":
                doc = add(doc, parts, copy.deepcopy(op["value"]))
            elif kind == "remove":
                remove(doc, parts)
            elif kind == "replace":
                if not parts:
                    doc = copy.deepcopy(op["value"])
                else:
                    get(doc, parts)  # must exist
                    par, last = parent(doc, parts)
                    if isinstance(par, list):
                        par[int(last)] = copy.deepcopy(op["value"])
                    else:
                        par[last] = copy.deepcopy(op["value"])
            elif kind == "move":
                value = remove(doc, _pointer(op["from"]))
                doc = add(doc, parts, value)
            elif kind == "copy":
                doc = add(doc, parts, copy.deepcopy(get(doc, _pointer(op["from"]))))
            elif kind == "test":
                if get(doc, parts) != op.get("value"):
                    raise ValueError(f"testing value {op['path']} failed")
            else:
                raise ValueError(f"unexpected operation {kind!r}")
        except (IndexError, KeyError, TypeError) as exc:
            raise ValueError(f"{kind} {op['path']}: {exc}") from None
    return doc


# ---- selectors -------------------------------------------------------------------------------

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_SET_RE = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\((.*)\)\s*$")
_EQ_RE = re.compile(rf"^\s*({_KEY})\s*(==|!=|=|<|>)\s*([-A-Za-z0-9_.]*)\s*$")
_EXISTS_RE = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


def _split_top(s: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in (x.strip() for x in parts) if p]


def parse_label_selector(selector: str | None) -> Callable[[dict], bool]:
    """Label selector (``a=b``, ``a==b``, ``a!=b``, ``a``, ``!a``, ``a in (x,y)``,
    ``a notin (x)``, ``a>1``, ``a<1``) → predicate on a labels dict. Raises KubeError 400."""
    reqs: list[Callable[[dict], bool]] = []
    for part in _split_top(selector or ""):
        m = _SET_RE.match(part)
        if m:
            key, op = m.group(1), m.group(3)
            values = {v.strip() for v in m.group(4).split(",") if v.strip()}
            if not values:
                raise KubeError(400, f"unable to parse requirement: {part}", "BadRequest")
            if op == "in":
                reqs.append(lambda labels, k=key, vs=values: k in labels and labels[k] in vs)
            else:
                reqs.append(lambda labels, k=key, vs=values: k not in labels or labels[k] not in vs)
            continue
        m = _EQ_RE.match(part)
        if m:
            key, op, val = m.group(1), m.group(3), m.group(4)
            if op in ("=", "=="):
                reqs.append(lambda labels, k=key, v=val: labels.get(k) == v)
            elif op == "!=":
                reqs.append(lambda labels, k=key, v=val: labels.get(k) != v)
            else:
                try:
                    num = int(val)
                except ValueError:
                    raise KubeError(400, f"unable to parse requirement: {part}", "BadRequest") from None

                def cmp(labels, k=key, n=num, gt=(op == ">")):
                    try:
                        x = int(labels[k])
                    except (KeyError, ValueError):
                        return False
                    return x > n if gt else x < n

                reqs.append(cmp)
            continue
        m = _EXISTS_RE.match(part)
        if m:
            neg, key = m.group(1) == "!", m.group(2)
            reqs.append(lambda labels, k=key, n=neg: (k in labels) != n)
            continue
        raise KubeError(400, f"unable to parse requirement: {part}", "BadRequest")
    return lambda labels: all(r(labels) for r in reqs)


def parse_field_selector(selector: str | None) -> Callable[[dict], bool]:
    """Field selector on ``metadata.name`` / ``metadata.namespace`` (=, ==, !=)."""
    reqs: list[Callable[[dict], bool]] = []
    for part in _split_top(selector or ""):
        m = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|!=|=)\s*(.*?)\s*$", part)
        if not m:
            raise KubeError(400, f"invalid selector: '{selector}'; can't understand '{part}'", "BadRequest")
        field, op, val = m.groups()
        if field not in ("metadata.name", "metadata.namespace"):
            raise KubeError(400, f"field label not supported: {field}", "BadRequest")
        attr = field.split(".", 1)[1]
        if op == "!=":
            reqs.append(lambda o, a=attr, v=val: (o.get("metadata", {}).get(a) or "") != v)
        else:
            reqs.append(lambda o, a=attr, v=val: (o.get("metadata", {}).get(a) or "") == v)
    return lambda obj: all(r(obj) for r in reqs)


# ---- recorded requests -----------------------------------------------------------------------


class Headers(Mapping):
    """Case-insensitive, read-only header mapping (keys are stored lower-case)."""

    def __init__(self, items: Iterable[tuple[str, str]] = ()):
        self._d: dict[str, str] = {}
        for k, v in items:
            self._d[k.lower()] = v

    def __getitem__(self, key: str) -> str:
        return self._d[key.lower()]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._d

    def __iter__(self):
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __repr__(self) -> str:
        return f"Headers({self._d!r})"


class RecordedRequest(tuple):
    """One request as ``(method, path, query, headers)``, a 4-tuple, plus attributes:
    ``header_items`` (the headers as sent: [(name, value)]), ``body`` (parsed JSON, or None),
    ``raw_body`` (bytes), ``verb`` (get, list, watch, create,
    update, patch, delete, deletecollection, discovery, or None), ``plural``, ``namespace``,
    ``name``, ``subresource``, ``status`` (response code; set once the response started)."""

    def __new__(cls, method: str, path: str, query: dict, headers: Headers, **extra: Any):
        self = tuple.__new__(cls, (method, path, query, headers))
        self.__dict__.update(extra)
        return self

    method = property(lambda self: self[0])
    path = property(lambda self: self[1])
    query = property(lambda self: self[2])
    headers = property(lambda self: self[3])

    def __repr__(self) -> str:
        return (
            f"RecordedRequest({self.method} {self.path} {self.query!r} "
            f"verb={self.__dict__.get('verb')} status={self.__dict__.get('status')})"
        )


# --------------------------------------------------------------------------------------------
# internal records
# --------------------------------------------------------------------------------------------


class _Event(NamedTuple):
    rv: int
    type: str
    obj: dict
    prev: dict | None


class _Route:
    def __init__(self) -> None:
        self.verb: str | None = None
        self.info: KindInfo | None = None
        self.ns: str | None = None
        self.name: str | None = None
        self.sub: str | None = None
        self.error: KubeError | None = None
        self.discovery: str | None = None
        self.served: str | None = None

    @property
    def plural(self) -> str | None:
        return self.info.plural if self.info else None


class _Watch:
    def __init__(self, plural: str, ns: str | None, query: dict):
        self.plural = plural
        self.ns = ns
        self.query = query
        self.closing = False
        self.drop_after: int | None = None
        self.sock: socket.socket | None = None


class _ClientGone(Exception):
    pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, addr: tuple[str, int], fake: _Serving):
        self.fake = fake
        super().__init__(addr, _Handler)

    def server_bind(self) -> None:  # skip HTTPServer's socket.getfqdn() (a DNS lookup)
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = host, port

    def finish_request(self, request, client_address) -> None:
        with self.fake._conn_lock:
            self.fake._conns.add(request)
        try:
            super().finish_request(request, client_address)
        finally:
            with self.fake._conn_lock:
                self.fake._conns.discard(request)

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
            return
        self.fake._record_error(traceback.format_exc())


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeKubeAPI/1.0"
    sys_version = ""
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms delayed-ACK stalls
    server: _Server

    def do_GET(self) -> None:
        self.server.fake._handle(self, "GET")

    def do_POST(self) -> None:
        self.server.fake._handle(self, "POST")

    def do_PUT(self) -> None:
        self.server.fake._handle(self, "PUT")

    def do_PATCH(self) -> None:
        self.server.fake._handle(self, "PATCH")

    def do_DELETE(self) -> None:
        self.server.fake._handle(self, "DELETE")

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def version_string(self) -> str:
        return self.server_version


def _peer_gone(sock: socket.socket) -> bool:
    """True if the client closed the connection (a watch client never sends anything)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


# --------------------------------------------------------------------------------------------
# the fake
# --------------------------------------------------------------------------------------------


class _Serving:
    """The life of the HTTP server behind a fake cluster or a fleet of them: its thread, its
    open connections, and a stop that first ends the open watches of every fake it serves."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._conn_lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def _fakes(self) -> Iterable[FakeKubeAPI]:
        raise NotImplementedError

    def _handle(self, h: _Handler, method: str) -> None:
        raise NotImplementedError

    def _record_error(self, text: str) -> None:
        raise NotImplementedError

    def _serve(self) -> None:
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{type(self).__name__}:{self.port}",
            daemon=True,
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving. Open watch streams end at once (cleanly, with the terminating chunk), idle
        keep-alive connections are closed. Clients that re-watch afterwards get connection errors."""
        server = self._server
        if server is None:
            return
        fakes = list(self._fakes())
        for fake in fakes:
            with fake._cond:
                fake._stopping = True
                fake._cond.notify_all()
            fake._stop_event.set()
        server.shutdown()
        for fake in fakes:
            with fake._cond:
                fake._cond.wait_for(lambda fake=fake: not fake._watches, timeout)
        with self._conn_lock:
            conns = list(self._conns)
        for sock in conns:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout)
        self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> Self:
        raise NotImplementedError


class FakeKubeAPI(_Serving):
    """In-memory Kubernetes API server for the OME kinds. See the module docstring.

    Thread-safe; every public method may be called while clients are connected.
    ``kind`` arguments accept the plural (``clusterbasemodels``), the Kind (``ClusterBaseModel``)
    or its lower-case form.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        manifests: Iterable[str | os.PathLike] | str | os.PathLike | None = None,
        first_resource_version: int = 1000,
        log_requests: bool = False,
    ):
        super().__init__(host, port)
        #: if not None, every request must carry ``authorization: Bearer <required_token>`` (else 401)
        self.required_token: str | None = token
        self._bookmark_interval: float | None = None
        #: print one line per request to stderr
        self.log_requests = log_requests
        #: tracebacks of exceptions raised inside request handlers (the server keeps running)
        self.errors: list[str] = []

        self._cond = threading.Condition(threading.RLock())
        self._rv = int(first_resource_version)
        self._store: dict[str, dict[tuple[str, str], dict]] = {p: {} for p in SERVED_KINDS}
        self._log: dict[str, list[_Event]] = {p: [] for p in SERVED_KINDS}
        self._log_rvs: dict[str, list[int]] = {p: [] for p in SERVED_KINDS}
        self._compacted = 0
        self._removed: set[str] = set()
        self._faults: list[dict] = []
        self._rbac: list[dict] = []
        self._delays: list[dict] = []
        self._drops: list[dict] = []
        self._watches: set[_Watch] = set()
        self._bookmark_seq: dict[str, int] = dict.fromkeys(SERVED_KINDS, 0)
        self._requests: list[RecordedRequest] = []
        self._served: dict[str, tuple[int, dict]] = {}
        self._snapshots: collections.OrderedDict[int, tuple[int, list[dict]]] = collections.OrderedDict()
        self._snapshot_ids = itertools.count(1)
        self._stopping = False
        self._stop_event = threading.Event()
        #: set by FakeKubeFleet: this fake is served under a path of the fleet's server
        self.base_url: str | None = None
        if manifests is not None:
            self.load_manifests(manifests)

    # ---- read-only objects of other API groups -------------------------------------------------

    def serve_object(self, path: str, obj: dict | None, *, status: int = 200) -> None:
        """Serve `obj` at `path` (GET only). With `obj` None, answer `status` (403 or 404) with
        a Status, as an API server does for a forbidden or missing object."""
        if obj is None:
            reason = {403: "Forbidden", 404: "NotFound"}.get(status, "Failure")
            obj = KubeError(status, f"{reason.lower()}: {path}", reason).status()
        with self._cond:
            self._served["/" + path.strip("/")] = (status, copy.deepcopy(obj))

    def serve_deployment(
        self, namespace: str, name: str, image: str | None, *, container: str = "manager", status: int = 200
    ) -> None:
        """OME's controller Deployment with one container running `image`; None refuses it."""
        path = f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
        if image is None:
            return self.serve_object(path, None, status=status)
        containers = [{"name": container, "image": image}]
        self.serve_object(
            path,
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {
                    "selector": {"matchLabels": {"control-plane": name}},
                    "template": {"metadata": {"labels": {"control-plane": name}}, "spec": {"containers": containers}},
                },
            },
        )

    def serve_crd(self, crd: dict | None, *, name: str | None = None, status: int = 200) -> None:
        """A CustomResourceDefinition (as OME installs it) at its path; None refuses `name`."""
        crd_name = name or (crd or {}).get("metadata", {}).get("name")
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}"
        self.serve_object(path, crd, status=status)

    def serve_secrets(self, namespace: str, secrets: dict[str, dict[str, str]], labels: dict[str, str]) -> None:
        """Serve Secrets of `namespace` (name -> data, values as text, base64-encoded here, each
        with `labels`): the list (label selectors are not applied) and each Secret; a Secret
        served before and absent now answers 404."""
        path = f"/api/v1/namespaces/{namespace}/secrets"
        items = [
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
                "type": "Opaque",
                "data": {key: base64.b64encode(value.encode()).decode() for key, value in data.items()},
            }
            for name, data in secrets.items()
        ]
        with self._cond:
            for served in [key for key in self._served if key.startswith(path + "/")]:
                self.serve_object(served, None, status=404)
        for item in items:
            self.serve_object(f"{path}/{item['metadata']['name']}", item)
        self.serve_object(path, {"apiVersion": "v1", "kind": "SecretList", "metadata": {}, "items": items})

    # ---- lifecycle ----------------------------------------------------------------------------

    def start(self) -> FakeKubeAPI:
        if self._server is not None or self._stopping:
            raise RuntimeError("FakeKubeAPI can only be started once")
        self._serve()
        return self

    def _fakes(self) -> Iterable[FakeKubeAPI]:
        return (self,)

    @property
    def url(self) -> str:
        if self.base_url is not None:
            return self.base_url
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def kubeconfig(self, token: str | None = None, namespace: str | None = None) -> dict:
        """A kubeconfig dict (for ``kubernetes.config.new_client_from_config_dict``): cluster
        ``fake`` at :attr:`url` (plain http), user ``fake`` with ``token`` (default: the required
        token if one is set, else ``"test-token"``), context ``fake`` = current-context."""
        if token is None:
            token = self.required_token if self.required_token is not None else "test-token"
        context: dict[str, str] = {"cluster": "fake", "user": "fake"}
        if namespace:
            context["namespace"] = namespace
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": token}}],
            "contexts": [{"name": "fake", "context": context}],
            "current-context": "fake",
            "preferences": {},
        }

    def write_kubeconfig(self, path: str | os.PathLike, token: str | None = None, namespace: str | None = None) -> Path:
        """Write :meth:`kubeconfig` to ``path`` (YAML if PyYAML is importable, else JSON, which
        is valid YAML too) for ``--kubeconfig PATH`` / ``KUBECONFIG``. Returns the path."""
        path = Path(path)
        cfg = self.kubeconfig(token=token, namespace=namespace)
        try:
            import yaml

            text = yaml.safe_dump(cfg, sort_keys=False)
        except ImportError:  # pragma: no cover - PyYAML is a project dependency
            text = json.dumps(cfg, indent=2) + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        with contextlib.suppress(OSError):
            os.chmod(path, 0o600)
        return path

    def api_client(self, token: str | None = None):
        """A ``kubernetes.client.ApiClient`` for this server (imports ``kubernetes`` lazily)."""
        from kubernetes import config

        return config.new_client_from_config_dict(self.kubeconfig(token=token))

    # ---- test-side store API ----------------------------------------------------------------

    @property
    def bookmark_interval(self) -> float | None:
        """If set (seconds), open watches with ``allowWatchBookmarks=true`` get a BOOKMARK this
        often (besides the ones sent by :meth:`bookmark`). None (default) = only on request."""
        return self._bookmark_interval

    @bookmark_interval.setter
    def bookmark_interval(self, seconds: float | None) -> None:
        with self._cond:
            self._bookmark_interval = seconds if seconds and seconds > 0 else None
            self._cond.notify_all()

    @property
    def resource_version(self) -> str:
        """The current (latest) global resourceVersion."""
        with self._cond:
            return str(self._rv)

    def create(self, obj: dict) -> dict:
        """Store a new object (``kind`` must be one of the five; ``apiVersion`` is filled in;
        namespaced kinds default to namespace ``default``; ``status`` is kept). Emits ADDED.
        Raises KubeError 409 if it exists. Returns the stored object (a copy)."""
        info = self._info_of_obj(obj)
        ns = self._ns_of_obj(info, obj)
        with self._cond:
            return copy.deepcopy(self._do_create(info, ns, obj, from_api=False))

    def update(self, obj: dict) -> dict:
        """Replace an existing object (no resourceVersion check; ``status`` is taken from ``obj``).
        Emits MODIFIED unless nothing changed. Raises KubeError 404 if it does not exist."""
        info = self._info_of_obj(obj)
        ns = self._ns_of_obj(info, obj)
        name = (obj.get("metadata") or {}).get("name")
        with self._cond:
            return copy.deepcopy(self._do_update(info, ns, name, obj, from_api=False))

    def apply(self, obj: dict) -> dict:
        """Create or replace (upsert)."""
        info = self._info_of_obj(obj)
        ns = self._ns_of_obj(info, obj)
        name = (obj.get("metadata") or {}).get("name")
        with self._cond:
            if (ns or "", name) in self._store[info.plural]:
                return copy.deepcopy(self._do_update(info, ns, name, obj, from_api=False))
            return copy.deepcopy(self._do_create(info, ns, obj, from_api=False))

    def patch(self, kind: str, name: str, patch: dict, namespace: str | None = None) -> dict:
        """Merge-patch (RFC 7386) an object, status included. Emits MODIFIED if something changed."""
        info = self._info(kind)
        ns = self._ns_arg(info, namespace)
        with self._cond:
            cur = self._store[info.plural].get((ns or "", name))
            if cur is None:
                raise _not_found(info, name)
            new = merge_patch(cur, patch)
            new.setdefault("metadata", {})["resourceVersion"] = cur["metadata"]["resourceVersion"]
            return copy.deepcopy(self._do_update(info, ns, name, new, from_api=False))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> dict:
        """Remove an object now (finalizers are ignored). Emits DELETED. Raises KubeError 404."""
        info = self._info(kind)
        ns = self._ns_arg(info, namespace)
        with self._cond:
            cur = self._store[info.plural].get((ns or "", name))
            if cur is None:
                raise _not_found(info, name)
            return copy.deepcopy(self._remove(info, cur))

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """The stored object (a copy), or None."""
        info = self._info(kind)
        ns = self._ns_arg(info, namespace)
        with self._cond:
            obj = self._store[info.plural].get((ns or "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def objects(self, kind: str, namespace: str | None = None) -> list[dict]:
        """All stored objects of a kind (copies), sorted by namespace then name."""
        info = self._info(kind)
        with self._cond:
            return [
                copy.deepcopy(o)
                for (ns, _), o in sorted(self._store[info.plural].items())
                if namespace is None or ns == namespace
            ]

    def events(self, kind: str) -> list[dict]:
        """The event log of a kind: ``[{"type", "object", "resourceVersion"}]`` (copies)."""
        info = self._info(kind)
        with self._cond:
            return [
                {"type": e.type, "object": copy.deepcopy(e.obj), "resourceVersion": str(e.rv)}
                for e in self._log[info.plural]
            ]

    def clear(self) -> None:
        """Delete every object (emits DELETED events)."""
        with self._cond:
            for plural, objs in self._store.items():
                for obj in list(objs.values()):
                    self._remove(KINDS[plural], obj)

    def load_manifests(self, paths: Iterable[str | os.PathLike] | str | os.PathLike) -> list[dict]:
        """Load YAML/JSON manifests (files, or folders searched recursively for *.yaml, *.yml,
        *.json; several documents per file; ``kind: List`` items are expanded). Objects of other
        kinds/apiVersions are skipped. Existing objects are replaced (upsert). Returns the stored
        objects in load order."""
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        files: list[Path] = []
        for p in map(Path, paths):
            if p.is_dir():
                files.extend(
                    sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in (".yaml", ".yml", ".json"))
                )
            elif p.is_file():
                files.append(p)
            else:
                raise FileNotFoundError(str(p))
        loaded: list[dict] = []

        def handle(doc: Any) -> None:
            if isinstance(doc, list):
                for d in doc:
                    handle(d)
                return
            if not isinstance(doc, dict):
                return
            if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
                for d in doc["items"]:
                    handle(d)
                return
            if doc.get("apiVersion") != API_VERSION or doc.get("kind") not in _KIND_BY_NAME:
                return
            loaded.append(self.apply(doc))

        for f in files:
            text = f.read_text()
            if f.suffix.lower() == ".json":
                handle(json.loads(text))
                continue
            import yaml

            for doc in yaml.safe_load_all(text):
                handle(doc)
        return loaded

    # ---- fault injection / control --------------------------------------------------------

    def compact(self, resource_version: str | int | None = None) -> str:
        """Compact history at ``resource_version`` (default: the current one). Watches that start
        from an older resourceVersion get a single ERROR event (Status 410 Expired), and list
        ``continue`` tokens from before it get 410. Returns the compaction point."""
        with self._cond:
            rv = self._rv if resource_version is None else int(resource_version)
            self._compacted = max(self._compacted, rv)
            return str(self._compacted)

    def fail_next(
        self,
        n: int = 1,
        status: int = 500,
        kinds: Iterable[str] | str | None = None,
        verbs: Iterable[str] | str | None = None,
        message: str | None = None,
        reason: str | None = None,
        retry_after: int | None = None,
    ) -> None:
        """Answer the next ``n`` matching resource requests with an error ``status`` and a proper
        ``Status`` body. ``kinds``/``verbs`` (get, list, watch, create, update, patch, delete,
        deletecollection) restrict which requests match (None = any). ``retry_after`` adds a
        ``Retry-After`` header — note urllib3 then retries 429/503 by itself (see tests)."""
        verb_set = self._verb_set(verbs)
        with self._cond:
            self._faults.append(
                {
                    "n": int(n),
                    "status": int(status),
                    "kinds": self._kind_set(kinds),
                    "verbs": verb_set,
                    "message": message,
                    "reason": reason,
                    "retry_after": retry_after,
                }
            )

    def clear_faults(self) -> None:
        """Forget pending fail_next / delay / drop_watch_after rules."""
        with self._cond:
            self._faults.clear()
            self._delays.clear()
            self._drops.clear()

    def delay(
        self, seconds: float | None, kinds: Iterable[str] | str | None = None, verbs: Iterable[str] | str | None = None
    ) -> None:
        """Delay every matching response by ``seconds`` from now on (until ``delay(0)``, which
        clears all delays). Stopping the server cuts delays short."""
        with self._cond:
            if not seconds or seconds <= 0:
                self._delays.clear()
                return
            self._delays.append(
                {"seconds": float(seconds), "kinds": self._kind_set(kinds), "verbs": self._verb_set(verbs)}
            )

    def drop_watch_after(self, n_events: int, kinds: Iterable[str] | str | None = None, count: int = 1) -> None:
        """The next ``count`` watch streams (of ``kinds``) are cut after ``n_events`` events
        (synthetic ADDED included, BOOKMARKs not): the socket is closed without the terminating
        chunk. With the real client this surfaces as ``urllib3.exceptions.ProtocolError``."""
        with self._cond:
            self._drops.append({"n_events": int(n_events), "kinds": self._kind_set(kinds), "count": int(count)})

    def close_watches(self, kinds: Iterable[str] | str | None = None) -> int:
        """End the currently open watch streams cleanly (like an apiserver watch timeout).
        Returns how many were closed."""
        ks = self._kind_set(kinds)
        with self._cond:
            hit = [w for w in self._watches if ks is None or w.plural in ks]
            for w in hit:
                w.closing = True
            self._cond.notify_all()
            return len(hit)

    def bookmark(self, kinds: Iterable[str] | str | None = None) -> None:
        """Send a BOOKMARK (object with only kind, apiVersion and metadata.resourceVersion = the
        current resourceVersion) on every open watch of ``kinds`` that asked for bookmarks."""
        ks = self._kind_set(kinds)
        with self._cond:
            for p in KINDS:
                if ks is None or p in ks:
                    self._bookmark_seq[p] += 1
            self._cond.notify_all()

    def remove_kind(self, kind: str) -> None:
        """Act as if the CRD were not installed: every request for the kind gets 404 "the server
        could not find the requested resource"; stored objects of the kind are dropped (no
        events) and its open watches end."""
        info = self._info(kind)
        with self._cond:
            self._removed.add(info.plural)
            self._store[info.plural].clear()
            for w in self._watches:
                if w.plural == info.plural:
                    w.closing = True
            self._cond.notify_all()

    def restore_kind(self, kind: str) -> None:
        """Install a kind removed by :meth:`remove_kind` again (empty)."""
        info = self._info(kind)
        with self._cond:
            self._removed.discard(info.plural)
            self._cond.notify_all()

    # ---- RBAC: SubjectAccessReviews and impersonation ------------------------------------------

    def allow(
        self,
        *,
        users: Iterable[str] | None = None,
        groups: Iterable[str] | None = None,
        verbs: Iterable[str] = ("patch",),
        kinds: Iterable[str] | None = None,
        namespaces: Iterable[str] | None = None,
    ) -> None:
        """Add a rule: the ``users`` or members of ``groups`` (None: nobody by that criterion;
        give at least one) may ``verbs`` on ``kinds`` (None: every OME kind) in ``namespaces``
        (None: every namespace and cluster scope; "" is cluster scope)."""
        rule = {
            "users": set(users or ()),
            "groups": set(groups or ()),
            "verbs": set(verbs),
            "kinds": None if kinds is None else {self._info(kind).plural for kind in kinds},
            "namespaces": None if namespaces is None else set(namespaces),
        }
        with self._cond:
            self._rbac.append(rule)

    def rbac_allows(self, user: str, groups: Iterable[str], verb: str, plural: str, namespace: str) -> bool:
        groups = set(groups)
        with self._cond:
            rules = list(self._rbac)
        return any(
            (user in rule["users"] or groups & rule["groups"])
            and verb in rule["verbs"]
            and (rule["kinds"] is None or plural in rule["kinds"])
            and (rule["namespaces"] is None or namespace in rule["namespaces"])
            for rule in rules
        )

    def _review(self, body: Any) -> dict:
        spec = body.get("spec") if isinstance(body, dict) else None
        attributes = spec.get("resourceAttributes") if isinstance(spec, dict) else None
        if not isinstance(attributes, dict) or not isinstance(spec.get("user"), str):
            raise KubeError(
                400, "SubjectAccessReview: spec.user and spec.resourceAttributes are required", "BadRequest"
            )
        allowed = attributes.get("group") == GROUP and self.rbac_allows(
            spec["user"],
            spec.get("groups") or (),
            str(attributes.get("verb") or ""),
            str(attributes.get("resource") or ""),
            str(attributes.get("namespace") or ""),
        )
        return {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
            "status": {"allowed": allowed, "reason": "allowed by a FakeKubeAPI rule" if allowed else ""},
        }

    def _check_impersonation(self, rec: RecordedRequest, r: _Route) -> None:
        user = rec.headers.get("impersonate-user")
        if user is None:
            return
        groups = [value for name, value in rec.header_items if name.lower() == "impersonate-group"]
        plural = r.info.plural if r.info is not None else ""
        if r.verb in (None, "discovery") or not self.rbac_allows(user, groups, r.verb, plural, r.ns or ""):
            where = f'in the namespace "{r.ns}"' if r.ns else "at the cluster scope"
            raise KubeError(
                403,
                f'{plural}.{GROUP} "{r.name or ""}" is forbidden: User "{user}" cannot {r.verb} resource '
                f'"{plural}" in API group "{GROUP}" {where}',
                "Forbidden",
            )

    # ---- observation ---------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests received so far (a copy of the log), each ``(method, path, query, headers)``
        with extra attributes (see RecordedRequest). ``headers`` is case-insensitive."""
        with self._cond:
            return list(self._requests)

    def clear_requests(self) -> None:
        with self._cond:
            self._requests.clear()

    def active_watches(self, kind: str | None = None) -> int:
        """Number of watch streams currently open (for ``kind``, or all)."""
        plural = self._info(kind).plural if kind else None
        return sum(1 for w in self._open_watches() if plural is None or w.plural == plural)

    def watch_peers(self) -> list[tuple[str, int]]:
        """(plural, client port) of every watch stream currently open: which client watches what."""
        return [(w.plural, w.sock.getpeername()[1] if w.sock is not None else 0) for w in self._open_watches()]

    def _open_watches(self) -> list[_Watch]:
        with self._cond:
            open_ = []
            for w in self._watches:
                if w.closing:
                    continue
                if w.sock is not None and _peer_gone(w.sock):  # client hung up; not noticed yet
                    w.closing = True
                    self._cond.notify_all()
                    continue
                open_.append(w)
            return open_

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Block until ``predicate()`` is true. It is re-checked only when the fake's own state
        changes (a request arrives, a watch opens/closes, the store changes), so use it for
        server-side conditions, not for state of the client thread. Returns False on timeout."""
        deadline = Deadline(timeout)
        with self._cond:
            while not predicate():
                remaining = deadline.remaining()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, 1.0))  # the load, hence the deadline, moves
            return True

    def wait_for_watch(self, kind: str | None = None, count: int = 1, timeout: float = 5.0) -> bool:
        """Block until at least ``count`` watches (of ``kind``) are open and past their initial
        snapshot, i.e. every later change will be delivered. Returns False on timeout."""
        return self.wait_for(lambda: self.active_watches(kind) >= count, timeout)

    # ---- internals: kinds, validation -----------------------------------------------------

    @staticmethod
    def _info(kind: str | KindInfo) -> KindInfo:
        if isinstance(kind, KindInfo):
            return kind
        if kind in SERVED_KINDS:
            return SERVED_KINDS[kind]
        if kind in _KIND_BY_NAME:
            return _KIND_BY_NAME[kind]
        low = kind.lower()
        for info in SERVED_KINDS.values():
            if low in (info.plural, info.singular):
                return info
        raise KeyError(f"unknown OME kind {kind!r}; known: {sorted(KINDS)}")

    def _kind_set(self, kinds: Iterable[str] | str | None) -> set[str] | None:
        if kinds is None:
            return None
        if isinstance(kinds, str):
            kinds = [kinds]
        return {self._info(k).plural for k in kinds}

    @staticmethod
    def _verb_set(verbs: Iterable[str] | str | None) -> set[str] | None:
        if verbs is None:
            return None
        if isinstance(verbs, str):
            verbs = [verbs]
        out = {v.lower() for v in verbs}
        bad = out - _VERBS
        if bad:
            raise ValueError(f"unknown verbs {sorted(bad)}; known: {sorted(_VERBS)}")
        return out

    def _info_of_obj(self, obj: dict) -> KindInfo:
        if not isinstance(obj, dict) or "kind" not in obj:
            raise ValueError("object needs a 'kind'")
        if obj["kind"] not in _KIND_BY_NAME:
            raise ValueError(f"unknown OME kind {obj['kind']!r}")
        info = _KIND_BY_NAME[obj["kind"]]
        av = obj.get("apiVersion", info.api_version)
        if av != info.api_version:
            raise ValueError(f"apiVersion must be {info.api_version}, got {av!r}")
        return info

    @staticmethod
    def _ns_of_obj(info: KindInfo, obj: dict) -> str | None:
        if not info.namespaced:
            return None
        return (obj.get("metadata") or {}).get("namespace") or "default"

    @staticmethod
    def _ns_arg(info: KindInfo, namespace: str | None) -> str | None:
        if not info.namespaced:
            return None
        return namespace or "default"

    def _check_body(self, info: KindInfo, ns: str | None, obj: Any, *, url_name: str | None, from_api: bool) -> dict:
        if not isinstance(obj, dict):
            raise KubeError(
                400, f"the body of the request must be a JSON object, got {type(obj).__name__}", "BadRequest"
            )
        if from_api:
            if "kind" not in obj or not obj.get("kind"):
                raise KubeError(400, f"Object 'Kind' is missing in '{json.dumps(obj)}'", "BadRequest")
            if obj.get("apiVersion") != info.api_version:
                raise KubeError(
                    400,
                    f"the API version in the data ({obj.get('apiVersion')}) does not match "
                    f"the expected API version ({info.api_version})",
                    "BadRequest",
                )
            if obj["kind"] != info.kind:
                raise KubeError(
                    400,
                    f"the kind in the data ({obj['kind']}) does not match the expected kind ({info.kind})",
                    "BadRequest",
                )
        meta = obj.get("metadata")
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise KubeError(400, "metadata must be an object", "BadRequest")
        body_ns = meta.get("namespace")
        if info.namespaced and body_ns and body_ns != ns:
            raise KubeError(
                400,
                "the namespace of the provided object does not match the namespace sent on the request",
                "BadRequest",
            )
        if url_name is not None and meta.get("name") and meta.get("name") != url_name:
            raise KubeError(
                400,
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({url_name})",
                "BadRequest",
            )
        for field in ("labels", "annotations"):
            val = meta.get(field)
            if val is not None and (not isinstance(val, dict) or not all(isinstance(v, str) for v in val.values())):
                raise _invalid(
                    info, meta.get("name") or "", f"metadata.{field}", val, "must be a map of string to string"
                )
        return obj

    # ---- internals: store writes (call with self._cond held) ----------------------------------

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _emit(self, plural: str, type_: str, obj: dict, prev: dict | None) -> None:
        rv = int(obj["metadata"]["resourceVersion"])
        self._log[plural].append(_Event(rv, type_, obj, prev))
        self._log_rvs[plural].append(rv)
        self._cond.notify_all()

    def _do_create(self, info: KindInfo, ns: str | None, body: Any, *, from_api: bool, dry_run: bool = False) -> dict:
        if info.plural in self._removed:
            raise KubeError(404, NOT_FOUND_PATH, "NotFound")
        body = self._check_body(info, ns, body, url_name=None, from_api=from_api)
        obj = copy.deepcopy(body)
        obj["apiVersion"] = info.api_version
        obj["kind"] = info.kind
        crd_check(info, obj)
        meta = obj.get("metadata") or {}
        obj["metadata"] = meta
        name = meta.get("name")
        if not name:
            gen = meta.get("generateName")
            if not gen:
                raise _invalid(info, "", "metadata.name", "", "name or generateName is required")
            name = gen + "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
        if not _NAME_RE.match(name) or len(name) > 253:
            raise _invalid(
                info,
                name,
                "metadata.name",
                name,
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
            )
        key = (ns or "", name)
        if key in self._store[info.plural]:
            raise KubeError(
                409, f'{info.plural}.{info.group} "{name}" already exists', "AlreadyExists", _details(info, name)
            )
        if from_api:
            obj.pop("status", None)  # status subresource: status is not set on create
        for k in (
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "selfLink",
        ):
            meta.pop(k, None)
        meta["name"] = name
        if ns is not None:
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = _now()
        meta["generation"] = 1
        if dry_run:
            meta["resourceVersion"] = str(self._rv)
            return obj
        meta["resourceVersion"] = str(self._next_rv())
        self._store[info.plural][key] = obj
        self._emit(info.plural, "ADDED", obj, None)
        return obj

    def _do_update(
        self,
        info: KindInfo,
        ns: str | None,
        name: str | None,
        body: Any,
        *,
        from_api: bool,
        sub: str | None = None,
        dry_run: bool = False,
    ) -> dict:
        """PUT semantics. From the API, ``metadata.resourceVersion`` is required and must match."""
        if info.plural in self._removed:
            raise KubeError(404, NOT_FOUND_PATH, "NotFound")
        if not name:
            raise _invalid(info, "", "metadata.name", "", "name is required")
        body = self._check_body(info, ns, body, url_name=name, from_api=from_api)
        cur = self._store[info.plural].get((ns or "", name))
        if cur is None:
            raise _not_found(info, name)
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if from_api:
            if not rv:
                raise _invalid(info, name, "metadata.resourceVersion", 0, "must be specified for an update")
            if str(rv) != cur["metadata"]["resourceVersion"]:
                raise _conflict(info, name)
        new = copy.deepcopy(body)
        if sub == "status":
            result = copy.deepcopy(cur)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
        else:
            result = new
            if from_api:  # status subresource: the main resource ignores status changes
                if "status" in cur:
                    result["status"] = copy.deepcopy(cur["status"])
                else:
                    result.pop("status", None)
        return self._commit_update(info, cur, result, dry_run=dry_run)

    def _commit_update(self, info: KindInfo, cur: dict, result: dict, *, dry_run: bool = False) -> dict:
        cur_meta = cur["metadata"]
        result["apiVersion"] = info.api_version
        result["kind"] = info.kind
        crd_check(info, result)
        meta = result.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        result["metadata"] = meta
        for k in (
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if k in cur_meta:
                meta[k] = cur_meta[k]
            else:
                meta.pop(k, None)
        meta["resourceVersion"] = cur_meta["resourceVersion"]
        for field in ("labels", "annotations"):
            val = meta.get(field)
            if val is not None and (not isinstance(val, dict) or not all(isinstance(v, str) for v in val.values())):
                raise _invalid(info, cur_meta["name"], f"metadata.{field}", val, "must be a map of string to string")
        if _spec_part(result) != _spec_part(cur):
            meta["generation"] = int(cur_meta.get("generation", 1)) + 1
        if result == cur:
            return cur  # no-op: no new resourceVersion, no event (like the apiserver)
        if dry_run:
            return result
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            return self._remove(info, result, prev=cur)
        meta["resourceVersion"] = str(self._next_rv())
        self._store[info.plural][(meta.get("namespace") or "", meta["name"])] = result
        self._emit(info.plural, "MODIFIED", result, cur)
        return result

    def _remove(self, info: KindInfo, obj: dict, prev: dict | None = None) -> dict:
        meta = obj["metadata"]
        self._store[info.plural].pop((meta.get("namespace") or "", meta["name"]), None)
        gone = copy.deepcopy(obj)
        gone["metadata"]["resourceVersion"] = str(self._next_rv())
        self._emit(info.plural, "DELETED", gone, prev)
        return gone

    # ---- internals: HTTP --------------------------------------------------------------------

    def _record_error(self, text: str) -> None:
        with self._cond:
            self.errors.append(text)
        if self.log_requests:
            print(text, file=sys.stderr)

    def _route(self, method: str, path: str, query: dict) -> _Route:
        r = _Route()
        segs = [unquote(s) for s in path.split("/") if s]
        if method == "GET" and (
            not segs
            or segs[0] in ("version", "healthz", "readyz", "livez")
            or segs in (["api"], ["api", "v1"], ["apis"], ["apis", GROUP], ["apis", GROUP, VERSION])
        ):
            r.verb = "discovery"
            r.discovery = "/" + "/".join(segs)
            return r
        if method == "POST" and segs == ["apis", "authorization.k8s.io", "v1", "subjectaccessreviews"]:
            r.verb = "review"
            return r
        if "/" + "/".join(segs) in self._served:
            r.served = "/" + "/".join(segs)
            r.verb = "get" if method == "GET" else None
            if r.verb is None:
                r.error = KubeError(
                    405, "the server does not allow this method on the requested resource", "MethodNotAllowed"
                )
            return r
        if len(segs) < 4 or segs[0] != "apis" or (segs[1], segs[2]) not in _GROUP_VERSIONS:
            r.error = KubeError(404, NOT_FOUND_PATH, "NotFound")
            return r
        rest = segs[3:]
        ns_url = False
        if rest[0] == "namespaces" and len(rest) >= 3:
            ns_url, r.ns, rest = True, rest[1], rest[2:]
        plural = rest[0]
        info = SERVED_KINDS.get(plural)
        if (
            info is None
            or (info.group, info.version) != (segs[1], segs[2])
            or len(rest) > 3
            or (ns_url and not info.namespaced)
            or (len(rest) > 1 and not ns_url and info.namespaced)
            or (len(rest) == 3 and rest[2] != "status")
        ):
            r.error = KubeError(404, NOT_FOUND_PATH, "NotFound")
            return r
        r.info = info
        r.name = rest[1] if len(rest) > 1 else None
        r.sub = rest[2] if len(rest) > 2 else None
        if r.name is None:
            r.verb = {
                "GET": "watch" if parse_bool(query.get("watch")) else "list",
                "POST": "create",
                "DELETE": "deletecollection",
            }.get(method)
        else:
            r.verb = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": None if r.sub else "delete"}.get(
                method
            )
        if r.verb is None or (r.verb == "create" and info.namespaced and not ns_url):
            r.error = KubeError(
                405, "the server does not allow this method on the requested resource", "MethodNotAllowed"
            )
        elif info.plural in self._removed:
            r.error = KubeError(404, NOT_FOUND_PATH, "NotFound")
        return r

    def _match_rule(self, rule: dict, r: _Route) -> bool:
        if r.info is None:
            return False
        return (rule["kinds"] is None or r.info.plural in rule["kinds"]) and (
            rule["verbs"] is None or r.verb in rule["verbs"]
        )

    def _fault_error(self, rule: dict, r: _Route) -> KubeError:
        code = rule["status"]
        msg = rule["message"]
        if msg is None:
            assert r.info is not None
            where = f'in the namespace "{r.ns}"' if r.ns else "at the cluster scope"
            msg = {
                401: "Unauthorized",
                403: f'{r.info.plural}.{r.info.group} is forbidden: User "system:serviceaccount:default:fake" '
                f'cannot {r.verb} resource "{r.info.plural}" in API group "{r.info.group}" {where}',
                404: NOT_FOUND_PATH,
                409: f'Operation cannot be fulfilled on {r.info.plural}.{r.info.group} "{r.name or ""}": the '
                f"object has been modified; please apply your changes to the latest version and try again",
                410: "too old resource version",
                429: "Too many requests, please try again later.",
                500: "Internal error occurred: injected by FakeKubeAPI.fail_next",
                503: "the server is currently unable to handle the request",
                504: "Timeout: request did not complete within requested timeout - context deadline exceeded",
            }.get(code, f"injected failure ({code})")
        headers = {}
        if rule["retry_after"] is not None:
            headers["Retry-After"] = str(rule["retry_after"])
        details = _details(r.info, r.name) if r.info and code in (403, 409) else None
        return KubeError(code, msg, rule["reason"], details, headers)

    def _handle(self, h: _Handler, method: str) -> None:
        h._fake_headers_sent = False  # type: ignore[attr-defined]
        rec: RecordedRequest | None = None
        try:
            url = urlsplit(h.path)
            query: dict[str, str] = {}
            for k, v in parse_qsl(url.query, keep_blank_values=True):
                query.setdefault(k, v)
            length = int(h.headers.get("Content-Length") or 0)
            raw = h.rfile.read(length) if length > 0 else b""
            headers = Headers(h.headers.items())
            r = self._route(method, url.path, query)
            body: Any = None
            body_error = None
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError as exc:
                    body_error = exc
            rec = RecordedRequest(
                method,
                url.path,
                query,
                headers,
                header_items=list(h.headers.items()),
                body=body,
                raw_body=raw,
                verb=r.verb,
                plural=r.plural,
                namespace=r.ns,
                name=r.name,
                subresource=r.sub,
                status=None,
            )
            with self._cond:
                self._requests.append(rec)
                self._cond.notify_all()
            if self.log_requests:
                print(f"{method} {h.path}", file=sys.stderr, flush=True)

            if (
                self.required_token is not None
                and r.discovery not in ("/healthz", "/readyz", "/livez")
                and headers.get("authorization") != f"Bearer {self.required_token}"
            ):
                raise KubeError(401, "Unauthorized", "Unauthorized")
            with self._cond:
                wait = max((d["seconds"] for d in self._delays if self._match_rule(d, r)), default=0.0)
                fault = None
                for rule in self._faults:
                    if rule["n"] > 0 and self._match_rule(rule, r):
                        rule["n"] -= 1
                        fault = self._fault_error(rule, r)
                        break
                self._faults = [f for f in self._faults if f["n"] > 0]
            if wait > 0:
                self._stop_event.wait(wait)
            if fault is not None:
                raise fault
            if r.error is not None:
                raise r.error
            if r.discovery is not None:
                return self._send(h, rec, 200, self._discovery(r.discovery))
            if r.verb == "review":
                return self._send(h, rec, 201, self._review(body))
            if r.served is not None:
                with self._cond:
                    code, served = self._served[r.served]
                return self._send(h, rec, code, served)
            self._check_impersonation(rec, r)
            if body_error is not None and r.verb in ("create", "update", "patch"):
                raise KubeError(400, f"error decoding body: {body_error}", "BadRequest")
            if r.verb == "watch":
                return self._serve_watch(h, rec, r, query)
            code, obj = self._dispatch(r, query, headers, body, raw)
            self._send(h, rec, code, obj)
        except KubeError as exc:
            if not getattr(h, "_fake_headers_sent", False):
                self._send(h, rec, exc.code, exc.status(), exc.headers)
            else:
                h.close_connection = True
        except (_ClientGone, ConnectionError, BrokenPipeError, TimeoutError):
            h.close_connection = True
        except Exception:
            self._record_error(traceback.format_exc())
            h.close_connection = True
            if not getattr(h, "_fake_headers_sent", False):
                err = KubeError(
                    500,
                    "Internal error occurred: FakeKubeAPI handler crashed (see FakeKubeAPI.errors)",
                    "InternalError",
                )
                with contextlib.suppress(OSError):
                    self._send(h, rec, 500, err.status())

    def _send(
        self, h: _Handler, rec: RecordedRequest | None, code: int, obj: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(obj, separators=(",", ":")).encode()
        if rec is not None:
            rec.__dict__["status"] = code
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        if self._stopping:
            h.send_header("Connection", "close")
            h.close_connection = True
        h.end_headers()
        h._fake_headers_sent = True  # type: ignore[attr-defined]
        h.wfile.write(data)

    def _discovery(self, path: str) -> Any:
        resources = []
        for info in KINDS.values():
            if info.plural in self._removed:
                continue
            verbs = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
            resources.append(
                {
                    "name": info.plural,
                    "singularName": info.singular,
                    "namespaced": info.namespaced,
                    "kind": info.kind,
                    "verbs": verbs,
                    "storageVersionHash": "",
                }
            )
            resources.append(
                {
                    "name": f"{info.plural}/status",
                    "singularName": "",
                    "namespaced": info.namespaced,
                    "kind": info.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        gv = {"groupVersion": API_VERSION, "version": VERSION}
        group = {"name": GROUP, "versions": [gv], "preferredVersion": gv}
        if path in ("/healthz", "/readyz", "/livez"):
            return "ok"
        if path in ("/", "/version"):
            return {
                "major": "1",
                "minor": "32",
                "gitVersion": "v1.32.0-fake",
                "gitCommit": "fake",
                "gitTreeState": "clean",
                "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.23",
                "compiler": "gc",
                "platform": "linux/amd64",
            }
        if path == "/api":
            return {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{self.host}:{self.port}"}
                ],
            }
        if path == "/api/v1":
            return {"kind": "APIResourceList", "groupVersion": "v1", "resources": []}
        if path == "/apis":
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [group]}
        if path == f"/apis/{GROUP}":
            return {"kind": "APIGroup", "apiVersion": "v1", **group}
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": API_VERSION, "resources": resources}

    def _matcher(self, ns: str | None, query: Mapping[str, str]) -> Callable[[dict], bool]:
        labels_ok = parse_label_selector(query.get("labelSelector"))
        fields_ok = parse_field_selector(query.get("fieldSelector"))

        def match(obj: dict) -> bool:
            meta = obj.get("metadata") or {}
            if ns is not None and meta.get("namespace") != ns:
                return False
            return labels_ok(meta.get("labels") or {}) and fields_ok(obj)

        return match

    def _dispatch(self, r: _Route, query: dict, headers: Headers, body: Any, raw: bytes) -> tuple[int, Any]:
        info = r.info
        assert info is not None
        dry_run = "dryRun" in query and query["dryRun"] != ""
        with self._cond:
            if r.verb == "list":
                return 200, self._list(info, r.ns, query)
            if r.verb == "get":
                obj = self._store[info.plural].get((r.ns or "", r.name))
                if obj is None:
                    raise _not_found(info, r.name or "")
                return 200, obj
            if r.verb == "create":
                return 201, self._do_create(info, r.ns, body, from_api=True, dry_run=dry_run)
            if r.verb == "update":
                return 200, self._do_update(info, r.ns, r.name, body, from_api=True, sub=r.sub, dry_run=dry_run)
            if r.verb == "patch":
                return 200, self._patch(info, r, headers, body, raw, query, dry_run)
            if r.verb == "delete":
                return self._delete(info, r.ns, r.name or "", body, dry_run)
            if r.verb == "deletecollection":
                match = self._matcher(r.ns, query)
                gone = []
                for _, obj in sorted(self._store[info.plural].items()):
                    if match(obj):
                        _, res = self._delete(
                            info, obj["metadata"].get("namespace"), obj["metadata"]["name"], body, dry_run
                        )
                        gone.append(obj if res.get("kind") == "Status" else res)
                return 200, {
                    "apiVersion": info.api_version,
                    "kind": f"{info.kind}List",
                    "metadata": {"resourceVersion": str(self._rv)},
                    "items": gone,
                }
        raise KubeError(405, "the server does not allow this method on the requested resource", "MethodNotAllowed")

    def _list(self, info: KindInfo, ns: str | None, query: dict) -> dict:
        match = self._matcher(ns, query)
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise KubeError(400, f"invalid limit {query.get('limit')!r}", "BadRequest") from None
        token = query.get("continue") or ""
        if token:
            try:
                padded = token + "=" * (-len(token) % 4)
                data = json.loads(base64.urlsafe_b64decode(padded.encode()))
                sid, rv = int(data["id"]), int(data["rv"])
            except (ValueError, KeyError, TypeError):
                raise KubeError(400, f"continue key is not valid: {token}", "BadRequest") from None
            snap = self._snapshots.get(sid)
            if rv < self._compacted or snap is None:
                raise KubeError(
                    410,
                    "The provided continue parameter is too old to display a consistent "
                    "list result. You can start a new list without the continue "
                    "parameter.",
                    "Expired",
                )
            list_rv, items = snap
        else:
            list_rv = self._rv
            items = [o for _, o in sorted(self._store[info.plural].items()) if match(o)]
        meta: dict[str, Any] = {"continue": "", "resourceVersion": str(list_rv)}
        if limit > 0 and len(items) > limit:
            page, rest = items[:limit], items[limit:]
            sid = next(self._snapshot_ids)
            self._snapshots[sid] = (list_rv, rest)
            while len(self._snapshots) > 1000:
                self._snapshots.popitem(last=False)
            last = page[-1]["metadata"]
            start = f"{last.get('namespace') or ''}/{last['name']}\x00"
            meta["continue"] = (
                base64.urlsafe_b64encode(
                    json.dumps({"v": "meta.k8s.io/v1", "rv": list_rv, "start": start, "id": sid}).encode()
                )
                .decode()
                .rstrip("=")
            )
            if not query.get("labelSelector") and not query.get("fieldSelector"):
                meta["remainingItemCount"] = len(rest)
            items = page
        return {"apiVersion": info.api_version, "kind": f"{info.kind}List", "metadata": meta, "items": items}

    def _patch(
        self, info: KindInfo, r: _Route, headers: Headers, body: Any, raw: bytes, query: dict, dry_run: bool
    ) -> dict:
        ctype = (headers.get("content-type") or "").split(";")[0].strip().lower()
        name = r.name or ""
        if ctype == "application/apply-patch+yaml" and body is None and raw:
            import yaml

            try:
                body = yaml.safe_load(raw)
            except yaml.YAMLError as exc:
                raise KubeError(400, f"error decoding YAML: {exc}", "BadRequest") from None
        if ctype not in ("application/merge-patch+json", "application/json-patch+json", "application/apply-patch+yaml"):
            raise KubeError(415, _UNSUPPORTED_PATCH, "UnsupportedMediaType")
        cur = self._store[info.plural].get((r.ns or "", name))
        if ctype == "application/apply-patch+yaml":
            # Server-side apply, approximated: create if missing, else merge (no field ownership).
            if cur is None:
                if r.sub:
                    raise _not_found(info, name)
                return self._do_create(info, r.ns, body, from_api=True, dry_run=dry_run)
            if not isinstance(body, dict):
                raise KubeError(400, "apply patch must be an object", "BadRequest")
            self._check_body(info, r.ns, body, url_name=name, from_api=True)
            body = dict(body)
            ctype = "application/merge-patch+json"
        if cur is None:
            raise _not_found(info, name)
        cur_rv = cur["metadata"]["resourceVersion"]
        if ctype == "application/merge-patch+json":
            if not isinstance(body, dict):
                raise KubeError(400, "a merge patch must be a JSON object", "BadRequest")
            meta_patch = body.get("metadata")
            want = meta_patch.get("resourceVersion") if isinstance(meta_patch, dict) else None
            if want is not None and str(want) != cur_rv:
                raise _conflict(info, name)
            new = merge_patch(cur, body)
        else:
            try:
                new = json_patch(cur, body)
            except ValueError as exc:
                raise KubeError(
                    422,
                    f"the server rejected our request due to an error in our request: {exc}",
                    "Invalid",
                    _details(info, name),
                ) from None
            want = (new.get("metadata") or {}).get("resourceVersion") if isinstance(new, dict) else None
            if want is not None and str(want) != cur_rv:
                raise _conflict(info, name)
        if not isinstance(new, dict):
            raise KubeError(422, "the patch result is not an object", "Invalid")
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            new["metadata"] = meta = {}
        if meta.get("name", name) != name or (info.namespaced and meta.get("namespace", r.ns) != r.ns):
            raise KubeError(400, "metadata.name and metadata.namespace cannot be changed by a patch", "BadRequest")
        meta["resourceVersion"] = cur_rv
        if r.sub == "status":
            result = copy.deepcopy(cur)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
        else:
            result = new
            if "status" in cur:
                result["status"] = copy.deepcopy(cur["status"])
            else:
                result.pop("status", None)
        return self._commit_update(info, cur, result, dry_run=dry_run)

    def _delete(self, info: KindInfo, ns: str | None, name: str, body: Any, dry_run: bool) -> tuple[int, dict]:
        cur = self._store[info.plural].get((ns or "", name))
        if cur is None:
            raise _not_found(info, name)
        pre = body.get("preconditions") if isinstance(body, dict) else None
        if isinstance(pre, dict):
            if pre.get("uid") and pre["uid"] != cur["metadata"]["uid"]:
                raise _conflict(
                    info,
                    name,
                    f"Precondition failed: UID in precondition: {pre['uid']}, "
                    f"UID in object meta: {cur['metadata']['uid']}",
                )
            if pre.get("resourceVersion") and str(pre["resourceVersion"]) != cur["metadata"]["resourceVersion"]:
                raise _conflict(
                    info,
                    name,
                    "Precondition failed: ResourceVersion in precondition: "
                    f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                    f"{cur['metadata']['resourceVersion']}",
                )
        if cur["metadata"].get("finalizers"):
            if cur["metadata"].get("deletionTimestamp") or dry_run:
                return 200, cur
            new = copy.deepcopy(cur)
            new["metadata"]["deletionTimestamp"] = _now()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            new["metadata"]["resourceVersion"] = str(self._next_rv())
            self._store[info.plural][(ns or "", name)] = new
            self._emit(info.plural, "MODIFIED", new, cur)
            return 200, new
        uid = cur["metadata"]["uid"]
        if not dry_run:
            self._remove(info, cur)
        return 200, {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": _details(info, name, uid),
        }

    # ---- internals: watch ---------------------------------------------------------------------

    def _serve_watch(self, h: _Handler, rec: RecordedRequest, r: _Route, query: dict) -> None:
        info = r.info
        assert info is not None
        plural = info.plural
        allow_bookmarks = parse_bool(query.get("allowWatchBookmarks"))
        timeout = None
        if query.get("timeoutSeconds"):
            try:
                timeout = float(int(query["timeoutSeconds"]))
            except ValueError:
                raise KubeError(400, f"invalid timeoutSeconds {query['timeoutSeconds']!r}", "BadRequest") from None
        match = self._matcher(r.ns, query)
        rv_param = query.get("resourceVersion") or ""
        expired: KubeError | None = None
        initial: list[dict] = []
        w = _Watch(plural, r.ns, query)
        w.sock = h.connection
        with self._cond:
            if rv_param in ("", "0"):
                last_rv = self._rv
                initial = [o for _, o in sorted(self._store[plural].items()) if match(o)]
            else:
                try:
                    last_rv = int(rv_param)
                except ValueError:
                    raise KubeError(400, f'invalid resource version "{rv_param}"', "BadRequest") from None
                if last_rv < self._compacted:
                    expired = KubeError(410, f"too old resource version: {last_rv} ({self._compacted})", "Expired")
            if expired is None:
                for rule in self._drops:
                    if rule["count"] > 0 and (rule["kinds"] is None or plural in rule["kinds"]):
                        rule["count"] -= 1
                        w.drop_after = rule["n_events"]
                        break
                self._drops = [d for d in self._drops if d["count"] > 0]
                self._watches.add(w)
                self._cond.notify_all()
            bm_seq = self._bookmark_seq[plural]

        sock = h.connection
        rec.__dict__["status"] = 200
        sent = 0

        def write(event_type: str, obj: dict) -> None:
            line = json.dumps({"type": event_type, "object": obj}, separators=(",", ":")).encode() + b"\n"
            h.wfile.write(b"%X\r\n%s\r\n" % (len(line), line))

        try:
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Transfer-Encoding", "chunked")
            h.send_header("Cache-Control", "no-cache, private")
            h.end_headers()
            h._fake_headers_sent = True  # type: ignore[attr-defined]
            if expired is not None:
                write("ERROR", expired.status())
                h.wfile.write(b"0\r\n\r\n")
                return

            def count_and_maybe_drop() -> None:
                nonlocal sent
                sent += 1
                if w.drop_after is not None and sent >= w.drop_after:
                    raise _ClientGone("dropped by drop_watch_after")

            if w.drop_after == 0:
                raise _ClientGone("dropped by drop_watch_after")
            for obj in initial:
                write("ADDED", obj)
                count_and_maybe_drop()

            deadline = time.monotonic() + timeout if timeout else None
            next_bookmark: float | None = None
            while True:
                pending: list[_Event] = []
                bookmark_rv: int | None = None
                finished = False
                with self._cond:
                    while True:
                        if self._stopping or w.closing:
                            finished = True
                            break
                        rvs = self._log_rvs[plural]
                        i = bisect.bisect_right(rvs, last_rv)
                        if i < len(rvs):
                            pending = self._log[plural][i:]
                            last_rv = rvs[-1]
                            break
                        now = time.monotonic()
                        if deadline is not None and now >= deadline:
                            finished = True
                            break
                        interval = self.bookmark_interval if allow_bookmarks else None
                        if interval and next_bookmark is None:
                            next_bookmark = now + interval
                        elif not interval:
                            next_bookmark = None
                        if allow_bookmarks and (
                            self._bookmark_seq[plural] != bm_seq or (next_bookmark is not None and now >= next_bookmark)
                        ):
                            bm_seq = self._bookmark_seq[plural]
                            next_bookmark = None
                            bookmark_rv = self._rv
                            break
                        wake = [1.0]
                        if deadline is not None:
                            wake.append(deadline - now)
                        if next_bookmark is not None:
                            wake.append(next_bookmark - now)
                        if not self._cond.wait(max(0.0, min(wake))) and _peer_gone(sock):
                            raise _ClientGone("watch client went away")
                if finished:
                    break
                for ev in pending:
                    out = self._translate(ev, match)
                    if out is not None:
                        write(*out)
                        count_and_maybe_drop()
                if bookmark_rv is not None:
                    write(
                        "BOOKMARK",
                        {
                            "kind": info.kind,
                            "apiVersion": info.api_version,
                            "metadata": {"resourceVersion": str(bookmark_rv)},
                        },
                    )
            h.wfile.write(b"0\r\n\r\n")
            if self._stopping:
                h.close_connection = True
        except _ClientGone:
            h.close_connection = True
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        except (ConnectionError, BrokenPipeError, TimeoutError, OSError):
            h.close_connection = True
        finally:
            with self._cond:
                self._watches.discard(w)
                self._cond.notify_all()

    @staticmethod
    def _translate(ev: _Event, match: Callable[[dict], bool]) -> tuple[str, dict] | None:
        now_in = match(ev.obj)
        if ev.type in ("ADDED", "DELETED"):
            return (ev.type, ev.obj) if now_in else None
        was_in = ev.prev is not None and match(ev.prev)
        if now_in and was_in:
            return "MODIFIED", ev.obj
        if now_in:
            return "ADDED", ev.obj
        if was_in:
            return "DELETED", ev.obj
        return None


# --------------------------------------------------------------------------------------------
# many clusters behind one server
# --------------------------------------------------------------------------------------------


class FakeKubeFleet(_Serving):
    """Many fake clusters served by one HTTP server: cluster ``NAME`` answers under
    ``/clusters/NAME`` (like a multi-cluster proxy), so its kubeconfig's server is
    ``http://127.0.0.1:PORT/clusters/NAME``. Each member is a :class:`FakeKubeAPI` with its own
    store, resourceVersions, faults and watches (``fleet[name]``); only the socket is shared.
    Requests outside ``/clusters/NAME`` get 404. Thread-safe like FakeKubeAPI."""

    PREFIX = "/clusters/"
    WATCHES_PATH = "/fleet/watches"  # GET: the watch_peers() of every member, as JSON

    def __init__(self, names: Iterable[str], host: str = "127.0.0.1", port: int = 0, **options: Any):
        super().__init__(host, port)
        self.members = {name: FakeKubeAPI(host, **options) for name in names}
        self.errors: list[str] = []

    def __getitem__(self, name: str) -> FakeKubeAPI:
        return self.members[name]

    def start(self) -> FakeKubeFleet:
        self._serve()
        for name, member in self.members.items():
            member.base_url = f"http://{self.host}:{self.port}{self.PREFIX}{name}"
        return self

    def _fakes(self) -> Iterable[FakeKubeAPI]:
        return self.members.values()

    def active_watches(self) -> int:
        return sum(member.active_watches() for member in self.members.values())

    def wait_for_no_watches(self, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while self.active_watches():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)  # the members' conditions are separate; poll them all
        return True

    def all_errors(self) -> list[str]:
        return self.errors + [error for member in self.members.values() for error in member.errors]

    def _record_error(self, text: str) -> None:
        self.errors.append(text)

    def watch_peers(self) -> list[tuple[str, str, int]]:
        """(cluster, plural, client port) of every watch stream currently open."""
        return [(name, *peer) for name, member in self.members.items() for peer in member.watch_peers()]

    def _handle(self, h: _Handler, method: str) -> None:
        name, _, rest = h.path[len(self.PREFIX) :].partition("/") if h.path.startswith(self.PREFIX) else ("", "", "")
        member = self.members.get(unquote(name))
        anyone = next(iter(self.members.values()))
        if h.path == self.WATCHES_PATH and method == "GET":  # for a fleet served in another process
            anyone._send(h, None, 200, {"watches": self.watch_peers()})
            return
        if member is None:
            anyone._send(h, None, 404, KubeError(404, NOT_FOUND_PATH, "NotFound").status())
            return
        h.path = "/" + rest
        member._handle(h, method)


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.kube_api",
        description="Serve a fake Kubernetes API for the OME kinds (ome.io/v1beta1) until Ctrl-C.",
    )
    parser.add_argument(
        "--manifests", action="append", default=[], metavar="PATH", help="YAML/JSON file or folder to load (repeatable)"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = pick a free port (default)")
    parser.add_argument(
        "--kubeconfig-out", metavar="PATH", help="where to write the kubeconfig (default: a file in the temp folder)"
    )
    parser.add_argument("--token", default="test-token", help="bearer token written to the kubeconfig")
    parser.add_argument("--require-token", action="store_true", help="answer 401 without that token")
    parser.add_argument("--bookmark-interval", type=float, default=None, metavar="SECONDS")
    parser.add_argument("-v", "--verbose", action="store_true", help="log requests to stderr")
    parser.add_argument(
        "--clusters",
        type=int,
        default=0,
        metavar="N",
        help="serve N clusters c000.. (a FakeKubeFleet), each with the manifests; --kubeconfig-out is then a folder",
    )
    args = parser.parse_args(argv)
    if args.clusters:
        return _serve_fleet(args)

    fake = FakeKubeAPI(
        args.host, args.port, token=args.token if args.require_token else None, log_requests=args.verbose
    )
    fake.bookmark_interval = args.bookmark_interval
    loaded = fake.load_manifests(args.manifests) if args.manifests else []
    fake.start()
    out = args.kubeconfig_out or os.path.join(tempfile.gettempdir(), f"fake-kubeconfig-{fake.port}.yaml")
    fake.write_kubeconfig(out, token=args.token)

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    # Before the URL is printed: a caller may signal as soon as it reads it.
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)  # also when started in the background (SIGINT ignored)
    try:
        print(fake.url, flush=True)
        print(f"kubeconfig: {out}", flush=True)
        print(f"loaded {len(loaded)} objects; try: kubectl --kubeconfig {out} get clusterbasemodels", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
    return 0


def _serve_fleet(args: argparse.Namespace) -> int:
    fleet = FakeKubeFleet([f"c{index:03}" for index in range(args.clusters)], args.host, args.port)
    loaded = [len(member.load_manifests(args.manifests)) if args.manifests else 0 for member in fleet.members.values()]
    fleet.start()
    folder = Path(args.kubeconfig_out or tempfile.mkdtemp(prefix="fake-kubeconfigs-"))
    for name, member in fleet.members.items():
        member.write_kubeconfig(folder / f"{name}.yaml", token=args.token)

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    try:
        print(f"http://{args.host}:{fleet.port}/clusters/", flush=True)
        print(f"kubeconfigs: {folder}", flush=True)
        print(f"loaded {sum(loaded)} objects into {len(loaded)} clusters", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        fleet.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
