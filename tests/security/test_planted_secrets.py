"""No secret shown: credentials planted in every place a manifest can hold one (the issue's 19
and more) are stored and shown redacted, pages and the API say a value was redacted, and the
redaction changes no verdict (the demo with secrets planted in every object judges as before).
"""

from __future__ import annotations

import copy
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command

import matching
from core.redact import MARK, redact, redact_manifest
from inventory.manifests import read_manifests
from inventory.models import Cluster, Resource
from inventory.records import stored
from inventory.services import ClusterSpec, cluster_register, manifests_load
from matrix.services import matrix_rebuild
from tests.inventory.live.objects import model, runtime

from .conftest import signed_in

GITHUB = "ghp_" + "PLANTED01".ljust(36, "x")
GITHUB_FINE_GRAINED = "github_pat_" + "PLANTED06".ljust(82, "x")
AWS = "AKIA" + "PLANTED02".ljust(16, "X")
HUGGING_FACE = "hf_" + "PLANTED03".ljust(34, "x")
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJQTEFOVEVEMDQifQ.PLANTED04signature"
DOCKER_AUTH = "cGxhbnRlZDpQTEFOVEVELWRvY2tlcg=="  # base64 of "planted:PLANTED-docker"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEPLANTED05\n-----END RSA PRIVATE KEY-----"

# (where, the secret, how it is planted): each secret is distinct, so a leak names its case.
PLANTED: list[tuple[str, str]] = [
    ("URL password in an env value", "PLANTED-env-url"),
    ("URL password in an arg", "PLANTED-arg-url"),
    ("URL password in storageUri", "PLANTED-storage-uri"),
    ("--api-key=X arg", "PLANTED-api-key"),
    ("--hf-token X args", "PLANTED-hf-token-flag"),
    ("--hf-token X inside a shell command", "PLANTED-shell-flag"),
    ("annotation keyed .../token", "PLANTED-annotation-token"),
    ("annotation holding password=", "PLANTED-annotation-password"),
    ("storage.parameters.secretKey", "PLANTED-secret-key"),
    ("storage.parameters endpoint URL password", "PLANTED-parameter-url"),
    ("AccountKey= in a connection string", "PLANTED-account-key"),
    ("env DB_PASS", "PLANTED-db-pass"),
    ("env HF_TOKEN", "PLANTED-hf-token-env"),
    ("env PGPASSWORD", "PLANTED-pgpassword"),
    ("Authorization: Bearer in an env value", "PLANTED-bearer"),
    ("password field of an arbitrary object", "PLANTED-password-field"),
    ("kubectl's last-applied-configuration", "PLANTED-last-applied"),
    ("GitHub token by content", GITHUB),
    ("AWS access key by content", AWS),
    ("Hugging Face token by content, under a harmless name", HUGGING_FACE),
    ("JWT by content", JWT),
    ("private key by content", "MIIEPLANTED05"),
    ("api_key: in a YAML blob annotation", "PLANTED-yaml-blob"),
    ('"pass": in a JSON annotation', "PLANTED-json-pass"),
    ("DB_PASS= in a shell command", "PLANTED-shell-pass"),
    ("GitHub fine-grained token by content", GITHUB_FINE_GRAINED),
    ("signature of a signed URL (Azure SAS sig=)", "PLANTED-sas-sig"),
    ("signature of a signed URL (S3 X-Amz-Signature=)", "PLANTED-amz-signature"),
    # The six forms the issue-32 audit still saw shown:
    ("env NGC_AUTH", "PLANTED-ngc-auth"),
    ("env SIGNING", "PLANTED-signing"),
    ("env HF_HUB_ACCESS", "PLANTED-hf-hub-access"),
    ("--auth VALUE args", "PLANTED-auth-flag"),
    ("base64 docker config auth", DOCKER_AUTH),
    ("token in a URL path", "PLANTED-url-path-token"),
]


def planted_model() -> dict[str, Any]:
    obj = model("planted-model")
    obj["metadata"]["annotations"] = {
        "example.com/token": "PLANTED-annotation-token",
        "example.com/config": "user=ome password=PLANTED-annotation-password",
        "example.com/serving-config": "endpoint: x\napi_key: PLANTED-yaml-blob\n",
        "example.com/ci": GITHUB,
        "kubectl.kubernetes.io/last-applied-configuration": '{"token": "PLANTED-last-applied"}',
        "example.com/database": '{"db": {"user": "ome", "pass": "PLANTED-json-pass"}}',
        "example.com/registry": json.dumps({"auths": {"registry.example": {"auth": DOCKER_AUTH}}}),
    }
    obj["spec"]["storage"] = {
        "storageUri": "s3://ome:PLANTED-storage-uri@models/planted-model",
        "parameters": {
            "secretKey": "PLANTED-secret-key",
            "endpoint": "https://minio:PLANTED-parameter-url@minio.example:9000",
            "region": "eu-west-1",
        },
    }
    return obj


def planted_runtime() -> dict[str, Any]:
    obj = runtime("planted-runtime")
    obj["metadata"]["annotations"] = {"example.com/deploy-key": PRIVATE_KEY, "example.com/aws": AWS}
    obj["spec"]["engineConfig"] = {
        "runner": {
            "command": ["sh", "-c", "DB_PASS=PLANTED-shell-pass serve --hf-token PLANTED-shell-flag --port 8080"],
            "args": [
                "--download=https://u:PLANTED-arg-url@mirror.example/x",
                "--api-key=PLANTED-api-key",
                "--hf-token",
                "PLANTED-hf-token-flag",
                "--tensor-parallel-size",
                "4",
                "--auth",
                "PLANTED-auth-flag",
            ],
            "env": [
                {"name": "NGC_AUTH", "value": "PLANTED-ngc-auth"},
                {"name": "SIGNING", "value": "PLANTED-signing"},
                {"name": "HF_HUB_ACCESS", "value": "PLANTED-hf-hub-access"},
                {"name": "CALLBACK", "value": "https://hooks.example.com/api/token/PLANTED-url-path-token/notify"},
                {"name": "MIRROR", "value": "https://u:PLANTED-env-url@mirror.example"},
                {
                    "name": "STORAGE",
                    "value": "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=PLANTED-account-key",
                },
                {"name": "DB_PASS", "value": "PLANTED-db-pass"},
                {"name": "HF_TOKEN", "value": "PLANTED-hf-token-env"},
                {"name": "PGPASSWORD", "value": "PLANTED-pgpassword"},
                {"name": "EXTRA_HEADERS", "value": "Authorization: Bearer PLANTED-bearer"},
                {"name": "MODEL_ACCESS", "value": HUGGING_FACE},
                {"name": "SESSION", "value": JWT},
                {"name": "MODE", "value": "serve"},
                {"name": "REPORTER", "value": GITHUB_FINE_GRAINED},
                {"name": "WEIGHTS", "value": "https://a.blob.core.windows.net/m/w?sv=2022-11-02&sig=PLANTED-sas-sig"},
                {"name": "INDEX", "value": "https://b.s3.amazonaws.com/i?X-Amz-Signature=PLANTED-amz-signature&x=1"},
            ],
            "resources": {"limits": {"nvidia.com/gpu": 4}},
        },
        "auth": {"user": "ome", "password": "PLANTED-password-field"},
    }
    return obj


@pytest.fixture
def planted(db: None, tmp_path: Path) -> Cluster:
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all([planted_model(), planted_runtime()]))
    cluster = cluster_register(ClusterSpec("planted", Cluster.Source.MANIFESTS, manifests=(str(tmp_path),)))
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    return cluster


def leaks(text: str) -> list[str]:
    return [where for where, secret in PLANTED if secret in text]


def test_every_planted_secret_is_in_the_manifests_and_none_is_stored(planted: Cluster) -> None:
    written = json.dumps([planted_model(), planted_runtime()])
    database = json.dumps([resource.obj for resource in Resource.objects.filter(cluster=planted)])

    assert len(PLANTED) >= 19
    assert leaks(written) == [where for where, _ in PLANTED]
    assert leaks(database) == []


def test_nothing_planted_is_shown_and_pages_and_the_api_say_a_value_was_redacted(
    planted: Cluster, django_user_model: Any
) -> None:
    client = signed_in(django_user_model.objects.create_superuser("root"))
    model_row = Resource.objects.get(cluster=planted, name="planted-model")
    runtime_row = Resource.objects.get(cluster=planted, name="planted-runtime")
    dump = StringIO()
    call_command("dumpdata", stdout=dump)

    pages = {
        url: client.get(url)
        for url in (
            f"/runtimes/{runtime_row.pk}/",
            f"/models/{model_row.pk}/",
            f"/api/v1/runtimes/{runtime_row.pk}/",
            f"/api/v1/models/{model_row.pk}/",
            f"/admin/inventory/resource/{runtime_row.pk}/change/",
        )
    }

    assert {url: response.status_code for url, response in pages.items()} == dict.fromkeys(pages, 200)
    assert {url: leaks(response.content.decode()) for url, response in pages.items()} == {key: [] for key in pages}
    assert leaks(dump.getvalue()) == []
    assert (
        "Values shown as <code>[redacted]</code> are credentials"
        in pages[f"/runtimes/{runtime_row.pk}/"].content.decode()
    )
    assert pages[f"/api/v1/runtimes/{runtime_row.pk}/"].json()["redacted"] is True
    assert Resource.objects.get(cluster=planted, name="planted-runtime").obj["spec"]["engineConfig"]["runner"][
        "args"
    ] == [
        f"--download=https://u:{MARK}@mirror.example/x",
        f"--api-key={MARK}",
        "--hf-token",
        MARK,
        "--tensor-parallel-size",
        "4",
        "--auth",
        MARK,
    ]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("NGC_AUTH=PLANTED-ngc-auth", f"NGC_AUTH={MARK}"),
        ("SIGNING: PLANTED-signing", f"SIGNING: {MARK}"),
        ("HF_HUB_ACCESS=PLANTED-hf-hub-access", f"HF_HUB_ACCESS={MARK}"),
        ("serve --auth PLANTED-auth-flag --port 8080", f"serve --auth {MARK} --port 8080"),
        (
            f'{{"auths": {{"r.example": {{"auth": "{DOCKER_AUTH}"}}}}}}',
            f'{{"auths": {{"r.example": {{"auth": "{MARK}"}}}}}}',
        ),
        ("https://h.example/api/token/PLANTED-path/x?y=1", f"https://h.example/api/token/{MARK}/x?y=1"),
    ],
)
def test_the_credential_detector_knows_each_of_the_six_forms_in_text(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize(
    ("obj", "shown"),
    [
        ({"name": "NGC_AUTH", "value": "PLANTED-ngc-auth"}, {"name": "NGC_AUTH", "value": MARK}),
        ({"name": "SIGNING", "value": "PLANTED-signing"}, {"name": "SIGNING", "value": MARK}),
        ({"name": "HF_HUB_ACCESS", "value": "PLANTED-x"}, {"name": "HF_HUB_ACCESS", "value": MARK}),
        ({"args": ["--auth", "PLANTED-auth-flag"]}, {"args": ["--auth", MARK]}),
        ({"auths": {"r.example": {"auth": DOCKER_AUTH}}}, {"auths": {"r.example": {"auth": MARK}}}),
        ({"url": "https://h.example/v1/keys/PLANTED-key"}, {"url": f"https://h.example/v1/keys/{MARK}"}),
    ],
)
def test_the_credential_detector_knows_each_of_the_six_forms_in_manifests(obj: Any, shown: Any) -> None:
    assert redact_manifest(obj) == shown


def test_names_references_and_ordinary_values_are_kept() -> None:
    kept = {
        "spec": {
            "env": [{"name": "TOKENIZER", "value": "llama"}, {"name": "MAX_TOKENS", "value": "4096"}],
            "secretName": "hf-credentials",
            "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}},
            "args": ["--tokenizer-mode=auto", '--speculative-config={"num_speculative_tokens":1}', "--port", "8080"],
            "storage": {"storageUri": "hf://meta-llama/Llama-3.1-8B", "parameters": {"region": "eu"}},
        }
    }

    assert stored(copy.deepcopy(kept)) == kept


# ---- redaction changes no verdict ---------------------------------------------------------


def with_secrets(obj: dict[str, Any]) -> dict[str, Any]:
    """The object with a credential in each place redaction blanks and OME's selection skips."""
    obj = copy.deepcopy(obj)
    obj["metadata"].setdefault("annotations", {}).update(
        {"example.com/token": "PLANTED-a", "example.com/config": f"password=PLANTED-b {GITHUB}"}
    )
    spec = obj["spec"]
    if obj["kind"] in ("BaseModel", "ClusterBaseModel"):
        storage = spec.setdefault("storage", {})
        storage.setdefault("parameters", {}).update({"secretKey": "PLANTED-c", "endpoint": "https://u:PLANTED-d@m"})
    else:
        runner = spec.setdefault("engineConfig", {}).setdefault("runner", {})
        runner.setdefault("env", []).extend([{"name": "HF_TOKEN", "value": "PLANTED-e"}, {"name": "X", "value": AWS}])
        runner["args"] = [*runner.get("args", []), "--hf-token", "PLANTED-f", "--api-key=PLANTED-g"]
    return obj


def verdicts(objects: list[dict[str, Any]]) -> dict[Any, Any]:
    """Every (model, runtime) verdict and reason, every model's selection, every
    InferenceService's outcome."""
    models = [obj for obj in objects if obj["kind"] in ("BaseModel", "ClusterBaseModel")]
    runtimes = [obj for obj in objects if obj["kind"] in ("ServingRuntime", "ClusterServingRuntime")]
    isvcs = [matching.parse_isvc(obj) for obj in objects if obj["kind"] == "InferenceService"]
    judged = matching.grid(models, runtimes, isvcs)
    model_keys = [matching.parse_model(obj).key for obj in models]
    runtime_keys = [matching.parse_runtime(obj).key for obj in runtimes]
    return (
        {
            (model_key, runtime_key): (judged.verdict(model_key, runtime_key), judged.reason(model_key, runtime_key))
            for model_key in model_keys
            for runtime_key in runtime_keys
        }
        | {model_key: judged.select(model_key).to_dict() for model_key in model_keys}
        | {isvc.key: matching.evaluate_isvc(judged, isvc) for isvc in isvcs}
    )


def test_the_demo_with_secrets_planted_in_every_object_judges_exactly_as_before_once_redacted() -> None:
    snapshot = read_manifests(Path(settings.BASE_DIR) / folder for folder in ("catalog/runtimes", "demo"))
    demo = [
        obj
        for kind in ("ClusterBaseModel", "BaseModel", "ClusterServingRuntime", "ServingRuntime", "InferenceService")
        for obj in snapshot.objects[kind].values()
    ]
    planted = [with_secrets(obj) for obj in demo]

    redacted = [stored(obj) for obj in planted]

    assert "PLANTED" not in json.dumps(redacted)
    assert redact(GITHUB) == MARK
    judged = verdicts(redacted)

    assert judged == verdicts(planted) == verdicts(demo)
    assert sum(1 for key in judged if len(key) == 3 and key[0] == "InferenceService") >= 10
