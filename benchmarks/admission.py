"""Latency of the admission-warnings webhook for one object (docs/admission.md): AdmissionReview
v1 requests posted to /api/v1/admission/<cluster>/ in this process (Django's test client, so
the figure is the server's own time: authentication, the what-if, admit_runtime and the JSON
answer, without the network), after one unmeasured request that loads the cluster's inventory.

On the bundled demo, then on a synthetic cluster: an update of each runtime in turn (a priority
raised), a delete of each runtime, an update of each model (a label added). Prints the median
and p95 in milliseconds per kind of request; asserts nothing about time (the target is a p95
under 200 ms; the chart's webhook timeout is 5 s, the API server's default 10 s).

Run: `python -m benchmarks.admission [--models N --runtimes N --requests N]`.
"""

from __future__ import annotations

import copy
import statistics
import time
import uuid
from typing import Any

from benchmarks.django_setup import setup_django


def review(operation: str, obj: dict[str, Any]) -> dict[str, Any]:
    request: dict[str, Any] = {"uid": str(uuid.uuid4()), "operation": operation, "kind": {"kind": obj["kind"]}}
    request["oldObject" if operation == "DELETE" else "object"] = obj
    if obj["metadata"].get("namespace"):
        request["namespace"] = obj["metadata"]["namespace"]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def requests_of(cluster, limit: int) -> dict[str, list[dict[str, Any]]]:  # type: ignore[no-untyped-def]
    from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Resource

    runtimes = list(Resource.objects.filter(cluster=cluster, kind__in=RUNTIME_KINDS).order_by("pk")[:limit])
    models = list(Resource.objects.filter(cluster=cluster, kind__in=MODEL_KINDS).order_by("pk")[:limit])
    raised = []
    for resource in runtimes:
        obj = copy.deepcopy(resource.obj)
        for entry in obj.get("spec", {}).get("supportedModelFormats") or []:
            entry["priority"] = int(entry.get("priority") or 1) + 1
        raised.append(review("UPDATE", obj))
    labelled = []
    for resource in models:
        obj = copy.deepcopy(resource.obj)
        obj["metadata"].setdefault("labels", {})["bench"] = "1"
        labelled.append(review("UPDATE", obj))
    return {
        "runtime update (priority +1)": raised,
        "runtime delete": [review("DELETE", copy.deepcopy(resource.obj)) for resource in runtimes],
        "model update (a label)": labelled,
    }


def measure(cluster, token: str, limit: int) -> None:  # type: ignore[no-untyped-def]
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_HOST="localhost")
    url = f"/api/v1/admission/{cluster.name}/"
    for name, bodies in requests_of(cluster, limit).items():
        client.post(url, bodies[0], content_type="application/json")  # loads the inventory
        times, warned = [], 0
        for body in bodies:
            started = time.perf_counter()
            response = client.post(url, body, content_type="application/json")
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.content
            warned += bool(response.json()["response"].get("warnings"))
        p95 = statistics.quantiles(times, n=20, method="inclusive")[-1] if len(times) > 1 else times[0]
        print(
            f"{cluster.name}: {name}: {len(times)} requests ({warned} with warnings): "
            f"median {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, max {max(times):.1f} ms"
        )


def main() -> None:
    from benchmarks.matrix import demo_and_synthetic, size_parser

    parser = size_parser(__doc__, models=2_000, runtimes=200)
    parser.add_argument("--requests", type=int, default=40, help="requests per kind")
    args = parser.parse_args()
    print(f"database: {setup_django()}")

    from django.contrib.auth.models import User

    from access.models import EVERY_CLUSTER, Grant, Role
    from access.tokens import api_token_create

    user = User.objects.create_user("kube-apiserver")
    Grant.objects.create(user=user, role=Role.VIEWER, cluster=EVERY_CLUSTER, namespace="")
    token = api_token_create(user, name="webhook")[1]
    for cluster in demo_and_synthetic(args.models, args.runtimes):
        measure(cluster, token, args.requests)


if __name__ == "__main__":
    main()
