"""The API's contract: every 2xx answer of every operation is typed in the OpenAPI schema, and
every real answer speaks one casing (snake_case) with one token for cluster scope (`_cluster`).

The casing test calls every operation of the schema on the demo cluster, so an operation added
without an entry in OPERATIONS fails it."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from access.models import ApiToken
from access.scope import SYSTEM
from core.api import KUBERNETES_FIELDS
from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from lint.selectors import lint_group_states
from matrix.models import CellChange, MatrixBuild
from matrix.services import matrix_apply_changes
from patches.models import PatchAttempt
from patches.services import version_of
from policies.evaluation import policies_evaluate
from policies.services import policies_load_files
from tests.support.kubeconfigs import write_kubeconfig

pytestmark = pytest.mark.django_db

SEED_MODEL = "qwen-image-pvc"
PIPELINE = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}
WHATIF = f"""
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata: {{name: {SEED_MODEL}}}
spec:
  modelFormat: {{name: diffusers, version: "0.34.0.dev0"}}
  modelArchitecture: QwenImagePipeline
  diffusionPipeline: {{className: QwenImagePipeline, transformer: {{library: diffusers}}}}
  storage: {{storageUri: "pvc://research:qwen-image-models/Qwen-Image"}}
"""
# Fails on the demo before and after WHATIF, so every field of a failure has a value to check.
UNSERVED_POLICY = f"""
apiVersion: compat.ome.io/v1alpha1
kind: RuntimePolicy
metadata: {{name: unserved}}
spec:
  assertions:
    - name: seed-model-on-a-missing-runtime
      assert: servedBy
      runtime: no-such-runtime
      scope: {{names: [{SEED_MODEL}]}}
"""


def schema_operations(api: APIClient) -> Iterator[tuple[str, str, dict[str, Any]]]:
    schema = api.get("/api/schema/", {"format": "json"}).json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            yield method, path, operation


def untyped(schema: dict[str, Any], components: dict[str, Any]) -> bool:
    """A schema that says nothing about its fields: `{}` or an object without properties."""
    if "$ref" in schema:
        return untyped(components[schema["$ref"].rsplit("/", 1)[-1]], components)
    if schema.get("type") == "array":
        return untyped(schema.get("items", {}), components)
    return not schema or (schema.get("type") == "object" and not schema.get("properties"))


def test_no_operation_answers_an_untyped_2xx(api: APIClient) -> None:
    components = api.get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]

    found = [
        f"{method.upper()} {path} {status} {media}"
        for method, path, operation in schema_operations(api)
        for status, response in operation["responses"].items()
        if status.startswith("2")
        for media, content in response.get("content", {}).items()
        if "json" in media and untyped(content.get("schema", {}), components)
    ]

    assert found == []


def _one(model: type[Any], **filters: Any) -> int:
    return int(model.objects.filter(**filters).values_list("pk", flat=True).first())


def operations(demo: Cluster) -> dict[tuple[str, str], tuple[str, dict[str, Any]]]:
    """One real request per operation of the schema: (method, path) -> (URL, query or body)."""
    model = _one(Resource, cluster=demo, name=SEED_MODEL)
    runtime = _one(Resource, cluster=demo, name="srt-qwen-image-pipeline")
    isvc = _one(Resource, cluster=demo, kind="InferenceService")
    group = next(iter(lint_group_states(demo, scope=SYSTEM))).group.key
    v1 = "/api/v1"
    seed = {"cluster": demo.name, "model": model}
    return {
        ("get", f"{v1}/clusters/"): (f"{v1}/clusters/", {}),
        ("post", f"{v1}/clusters/"): (f"{v1}/clusters/", {"name": "more", "source": "kubeconfig:more.yaml#more"}),
        ("get", f"{v1}/clusters/{{name}}/"): (f"{v1}/clusters/{demo.name}/", {}),
        ("get", f"{v1}/fleet/"): (f"{v1}/fleet/", {}),
        ("get", f"{v1}/fleet/runtimes/"): (f"{v1}/fleet/runtimes/", {}),
        ("get", f"{v1}/inference-services/"): (f"{v1}/inference-services/", {}),
        ("get", f"{v1}/inference-services/{{id}}/"): (f"{v1}/inference-services/{isvc}/", {}),
        ("get", f"{v1}/inference-services/verdicts/"): (f"{v1}/inference-services/verdicts/", {}),
        ("get", f"{v1}/matrix/builds/"): (f"{v1}/matrix/builds/", {}),
        ("get", f"{v1}/matrix/builds/{{id}}/"): (f"{v1}/matrix/builds/{_one(MatrixBuild, cluster=demo)}/", {}),
        ("get", f"{v1}/matrix/cell/"): (f"{v1}/matrix/cell/", {"model": model, "runtime": runtime}),
        ("get", f"{v1}/matrix/cells/"): (f"{v1}/matrix/cells/", {"reasons": "true"}),
        ("get", f"{v1}/matrix/cells/export.csv"): (f"{v1}/matrix/cells/export.csv", {}),
        ("get", f"{v1}/matrix/cells/export.json"): (f"{v1}/matrix/cells/export.json", {"reasons": "true"}),
        ("get", f"{v1}/matrix/history/"): (f"{v1}/matrix/history/", {}),
        ("get", f"{v1}/matrix/history/{{id}}/"): (f"{v1}/matrix/history/{{history}}/", {}),
        ("get", f"{v1}/matrix/lint/"): (f"{v1}/matrix/lint/", {}),
        ("get", f"{v1}/matrix/lint/acknowledgements/"): (f"{v1}/matrix/lint/acknowledgements/", {}),
        ("post", f"{v1}/matrix/lint/acknowledgements/"): (
            f"{v1}/matrix/lint/acknowledgements/",
            {"cluster": demo.name, "key": group, "reason": "known"},
        ),
        ("delete", f"{v1}/matrix/lint/acknowledgements/"): (
            f"{v1}/matrix/lint/acknowledgements/?cluster={demo.name}&key={group}",
            {},
        ),
        ("get", f"{v1}/matrix/near-misses/"): (f"{v1}/matrix/near-misses/", {"model": model}),
        ("get", f"{v1}/matrix/selection/"): (f"{v1}/matrix/selection/", {"model": model}),
        ("get", f"{v1}/matrix/upgrade/"): (f"{v1}/matrix/upgrade/", {"to": "17b77eda"}),
        ("post", f"{v1}/matrix/whatif/"): (f"{v1}/matrix/whatif/", {"manifests": WHATIF}),
        ("get", f"{v1}/models/"): (f"{v1}/models/", {}),
        ("get", f"{v1}/models/{{id}}/"): (f"{v1}/models/{model}/", {}),
        ("post", f"{v1}/patches/preview/"): (f"{v1}/patches/preview/", {**seed, "diffusion_pipeline": PIPELINE}),
        ("post", f"{v1}/patches/apply/"): (
            f"{v1}/patches/apply/",
            {
                **seed,
                "patch": {"spec": {"diffusionPipeline": {**PIPELINE, "vae": {"library": "diffusers"}}}},
                "resource_version": version_of(demo, Resource.objects.get(pk=model)),
            },
        ),
        ("get", f"{v1}/patches/audit/"): (f"{v1}/patches/audit/", {}),
        ("get", f"{v1}/patches/audit/{{id}}/"): (f"{v1}/patches/audit/{{audit}}/", {}),
        ("post", f"{v1}/policies/check/"): (
            f"{v1}/policies/check/",
            {"cluster": demo.name, "manifests": WHATIF, "format": "markdown"},
        ),
        ("get", f"{v1}/policies/states/"): (f"{v1}/policies/states/", {"cluster": demo.name}),
        ("post", f"{v1}/patches/pipeline-from-model-index/"): (
            f"{v1}/patches/pipeline-from-model-index/",
            {"model_index": '{"_class_name": "QwenImagePipeline", "transformer": ["diffusers", "X"]}'},
        ),
        ("get", f"{v1}/runtimes/"): (f"{v1}/runtimes/", {}),
        ("get", f"{v1}/runtimes/{{id}}/"): (f"{v1}/runtimes/{runtime}/", {}),
        ("get", f"{v1}/tokens/"): (f"{v1}/tokens/", {}),
        ("post", f"{v1}/tokens/"): (f"{v1}/tokens/", {"name": "ci"}),
        ("delete", f"{v1}/tokens/{{id}}/"): (f"{v1}/tokens/{{token}}/", {}),
        ("get", f"{v1}/sync-states/"): (f"{v1}/sync-states/", {}),
        ("get", f"{v1}/sync-states/{{id}}/"): (f"{v1}/sync-states/{demo.sync_states.first().pk}/", {}),
        ("post", f"{v1}/whatif/check/"): (f"{v1}/whatif/check/", {"cluster": demo.name, "manifests": WHATIF}),
    }


def record_a_cell_change(demo: Cluster) -> dict[str, Any]:
    """The seed model given another runtime by a watch event, so the history has an entry."""
    obj = copy.deepcopy(Resource.objects.get(cluster=demo, name=SEED_MODEL).obj)
    obj["spec"]["diffusionPipeline"] = PIPELINE
    change = event_apply(demo, "MODIFIED", obj)
    assert change is not None
    matrix_apply_changes(demo, [change.to_dict()])
    return change.to_dict()


def record_policy_states(demo: Cluster, folder: Path) -> None:
    """The demo's policies and UNSERVED_POLICY evaluated before and after the cell change, so
    the states have failures and a change that fixed one."""
    (folder / "unserved.yaml").write_text(UNSERVED_POLICY)
    policies_load_files([Path(django_settings.BASE_DIR) / "demo/policies", folder / "unserved.yaml"])
    policies_evaluate(demo)
    policies_evaluate(demo, causes=[record_a_cell_change(demo)])


def casing_problems(data: Any, path: str = "") -> Iterator[str]:
    """Keys that are not snake_case and cluster scope given as "", outside Kubernetes objects."""
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}.{key}"
            if key in KUBERNETES_FIELDS or key == "manifest":
                continue
            if key != key.lower():
                yield f"{where}: not snake_case"
            if key == "namespace" and value == "":
                yield f'{where}: cluster scope as "" (the token is _cluster)'
            yield from casing_problems(value, where)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from casing_problems(value, f"{path}[{index}]")


def call(api: APIClient, method: str, url: str, data: dict[str, Any]) -> Any:
    send: Callable[..., Any] = getattr(api, method)
    response = send(url, data) if method == "get" else send(url, data, format="json")
    assert response.status_code < 300, (method, url, response.status_code, getattr(response, "data", None))
    if response.status_code == 204 or "json" not in response["Content-Type"]:
        return None
    return json.loads(b"".join(response.streaming_content)) if response.streaming else response.json()


def test_every_operation_answers_in_snake_case_with_cluster_scope_as_its_token(
    demo: Cluster, api: APIClient, django_user_model: Any, settings: Any, tmp_path: Path
) -> None:
    settings.OME_KUBECONFIG_DIR = tmp_path
    write_kubeconfig(tmp_path / "more.yaml", context="more")
    record_policy_states(demo, tmp_path)
    api.force_authenticate(django_user_model.objects.create_superuser("root"))
    requests = operations(demo)
    in_schema = {(method, path) for method, path, _ in schema_operations(api) if method in {"get", "post", "delete"}}
    assert in_schema == set(requests)
    # A patch's audit record and history exist once it is applied; an acknowledgement is withdrawn
    # and a second cluster registered last (the others default to the only cluster).
    last = {("delete", "/api/v1/matrix/lint/acknowledgements/"), ("post", "/api/v1/clusters/")}
    order = sorted(requests, key=lambda op: (op in last, "{" in requests[op][0]))

    problems = []
    for operation in order:
        url, data = requests[operation]
        if "{" in url:
            url = url.format(audit=_one(PatchAttempt), history=_one(CellChange), token=_one(ApiToken))
        problems += [
            f"{operation[0].upper()} {operation[1]}{problem}"
            for problem in casing_problems(call(api, operation[0], url, data))
        ]

    found = sorted({re.sub(r"\[\d+\]", "[]", problem) for problem in problems})
    assert found == [], "\n".join(found)
