"""No secret is stored or shown: a kubeconfig whose user has an OIDC auth-provider without an
id-token (client-secret and refresh-token in it), registered through the API and synced, never
puts either secret into the database, a page, an API response or a log line; and the one
redaction function blanks every listed form."""

from __future__ import annotations

import json
import logging
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from pytest_django import Settings

from core.redact import redact, redact_value
from inventory.live.resync import cluster_resync
from inventory.models import Cluster
from ome_dashboard.ops.logs import JsonFormatter, RedactingFormatter
from tests.support.kubeconfigs import write_kubeconfig

from .conftest import signed_in

pytestmark = pytest.mark.django_db
CLIENT_SECRET = "cs-0a1b2c3d4e5f-SECRET"
REFRESH_TOKEN = "rt-9z8y7x6w5v-SECRET"
OIDC_USER = {
    "auth-provider": {
        "name": "oidc",
        "config": {
            "client-id": "ome-compat",
            "client-secret": CLIENT_SECRET,
            "refresh-token": REFRESH_TOKEN,
            "idp-issuer-url": "https://127.0.0.1:9/issuer",
        },
    }
}


def leaked(text: str) -> list[str]:
    return [secret for secret in (CLIENT_SECRET, REFRESH_TOKEN) if secret in text]


def test_an_oidc_kubeconfig_without_id_token_leaks_its_secrets_nowhere(
    tmp_path: Path, settings: Settings, django_user_model: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings.OME_KUBECONFIG_DIR = tmp_path
    write_kubeconfig(tmp_path / "oidc.yaml", server="https://127.0.0.1:9", context="prod", user=OIDC_USER)
    admin = django_user_model.objects.create_superuser("root")
    client = signed_in(admin)

    registered = client.post(
        "/api/v1/clusters/", {"name": "prod", "source": "kubeconfig:oidc.yaml#prod"}, "application/json"
    )
    result = cluster_resync(Cluster.objects.get(name="prod"))

    assert registered.status_code == 201, registered.content
    assert result.errors, "the sync must fail: the kubeconfig has no id-token"
    stored = Cluster.objects.get(name="prod").sync_states.first()
    assert stored is not None
    assert "credentials cannot be loaded (bad_config" in stored.last_error
    database = StringIO()
    call_command("dumpdata", stdout=database)
    shown = [
        client.get(path).content.decode()
        for path in ("/sync/", "/api/v1/clusters/", "/api/v1/clusters/prod/", "/api/v1/sync-states/", "/metrics")
    ]
    logged = [
        formatter.format(record) for record in caplog.records for formatter in (RedactingFormatter(), JsonFormatter())
    ]
    assert leaked(database.getvalue()) == []
    assert [leaked(page) for page in shown] == [[]] * len(shown)
    assert [line for line in logged if leaked(line)] == []


def test_a_kubeconfig_pasted_into_the_api_is_refused_and_not_echoed(django_user_model: Any) -> None:
    client = signed_in(django_user_model.objects.create_superuser("root"))
    pasted = json.dumps({"users": [{"user": OIDC_USER}]})

    bodies = [
        client.post("/api/v1/clusters/", {"name": "x", "source": pasted}, "application/json"),
        client.post(
            "/api/v1/clusters/",
            {"name": "x", "source": "kubeconfig:a.yaml", "token": CLIENT_SECRET},
            "application/json",
        ),
    ]

    assert [response.status_code for response in bodies] == [400, 400]
    assert [leaked(response.content.decode()) for response in bodies] == [[], []]
    assert not Cluster.objects.exists()


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("HF_TOKEN=hf_abcdef123 next", "hf_abcdef123"),
        ("export AWS_SECRET_ACCESS_KEY=wJalrXUtn", "wJalrXUtn"),
        ("API_KEY=k-123 and more", "k-123"),
        ("PGPASSWORD='p w'", "p w"),
        ("client-secret: s3cr3t-value", "s3cr3t-value"),
        ("{'client-secret': 'abc-def', 'refresh-token': 'ghi'}", "abc-def"),
        ('{"id-token": "eyJhbGciOi.x.y"}', "eyJhbGciOi"),
        ("Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.payload.sig", "eyJhbGciOiJSUzI1NiJ9"),
        ("authorization: basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
        ("sent Bearer abc.def.ghi", "abc.def.ghi"),
        ("redis://:p@ss/w@rd@cache:6379/0", "p@ss/w@rd"),
        ("postgres://ome:pa/ss@db.example:5432/ome", "pa/ss"),
        ("https://user:p%40ss@host/path", "p%40ss"),
    ],
)
def test_every_secret_form_is_blanked_and_the_rest_kept(text: str, secret: str) -> None:
    blanked = redact(text)

    assert secret not in blanked
    assert "[redacted]" in blanked


def test_structured_log_extras_are_redacted_by_name_and_content() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "event", (), None)
    record.token = "plain-value"  # type: ignore[attr-defined]
    record.request = {"headers": {"Authorization": "Bearer zzz-token"}, "password": "hunter2"}  # type: ignore[attr-defined]
    record.url = "redis://:pw@host:6379/0"  # type: ignore[attr-defined]

    entry = json.loads(JsonFormatter().format(record))

    assert entry["token"] == "[redacted]"
    assert entry["request"] == {"headers": {"Authorization": "Bearer [redacted]"}, "password": "[redacted]"}
    assert entry["url"] == "redis://:[redacted]@host:6379/0"
    assert redact_value({"model": "llama", "note": "key: BaseModel/x"}) == {
        "model": "llama",
        "note": "key: BaseModel/x",
    }


def test_stored_objects_keep_no_last_applied_configuration_or_secret_env_values(tmp_path: Path) -> None:
    from inventory.models import Resource
    from inventory.services import ClusterSpec, cluster_register, manifests_load

    runtime = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {
            "name": "rt",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"env": "HF_TOKEN=hf_secret"}'},
        },
        "spec": {
            "supportedModelFormats": [{"modelFormat": {"name": "safetensors"}}],
            "engineConfig": {
                "runner": {"env": [{"name": "HF_TOKEN", "value": "hf_secret"}, {"name": "MODE", "value": "x"}]}
            },
        },
    }
    (tmp_path / "rt.yaml").write_text(json.dumps(runtime))
    cluster = cluster_register(ClusterSpec("c", Cluster.Source.MANIFESTS, manifests=(str(tmp_path),)))
    manifests_load(cluster, cluster.manifests, prune=True)

    obj = Resource.objects.get(name="rt").obj
    assert "hf_secret" not in json.dumps(obj)
    assert obj["spec"]["engineConfig"]["runner"]["env"] == [
        {"name": "HF_TOKEN", "value": "[redacted]"},
        {"name": "MODE", "value": "x"},
    ]
