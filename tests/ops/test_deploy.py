"""The kustomize manifests in deploy/: least-privilege RBAC, six Deployments running the compose
file's commands as an unprivileged user with probes and resource requests, a Service, config from
a ConfigMap and a Secret, kubeconfigs mounted from a Secret."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest
import yaml
from django.conf import settings

from inventory.models import OME_GROUP, PLURALS
from tests.ops import files

DEPLOYMENTS = {"web", "worker", "control-worker", "matrix-worker", "watch-worker", "beat"}
READ = ["get", "list", "watch"]


@pytest.fixture(scope="module")
def documents() -> list[dict[str, Any]]:
    return files.deploy_documents()


@pytest.fixture(scope="module")
def deployments(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name.removeprefix("ome-compat-"): doc for name, doc in files.objects_of(documents, "Deployment").items()}


def pod(deployment: dict[str, Any]) -> dict[str, Any]:
    return dict(deployment["spec"]["template"]["spec"])


def expand(argv: list[str], config: dict[str, str]) -> list[str]:
    """Kubernetes' $(VAR) expansion in command and args (the values of deploy/config.env; the
    compose file's defaults are the same, so the expanded commands must be equal)."""
    return [re.sub(r"\$\((\w+)\)", lambda m: config[m[1]], arg) for arg in argv]


def compose_commands() -> dict[str, list[str]]:
    services = files.interpolate(files.compose(), {"SECRET_KEY": "x", "POSTGRES_PASSWORD": "x"})["services"]
    return {name: service["command"] for name, service in services.items() if "command" in service}


def rules_of(role: dict[str, Any]) -> list[tuple[str, str, str]]:
    return sorted(
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    )


LEAST_PRIVILEGE = sorted(
    [(OME_GROUP, plural, verb) for plural in PLURALS.values() for verb in READ]
    + [(OME_GROUP, "basemodels", "patch"), (OME_GROUP, "clusterbasemodels", "patch")]
    + [("apiextensions.k8s.io", "customresourcedefinitions", "get")]
    # The findings of clusters that opted in, as Policy Reports (reports/, docs/reports.md).
    + [
        ("wgpolicyk8s.io", plural, verb)
        for plural in ("policyreports", "clusterpolicyreports")
        for verb in ("list", "create", "update", "delete")
    ]
)


@pytest.mark.parametrize("folder", ["deploy", "deploy/remote-cluster"])
def test_the_cluster_role_reads_the_five_ome_kinds_patches_models_and_writes_policy_reports_only(folder: str) -> None:
    roles = files.objects_of(files.deploy_documents(folder), "ClusterRole")

    assert list(roles) == ["ome-compat"]
    assert rules_of(roles["ome-compat"]) == LEAST_PRIVILEGE
    assert "*" not in str(roles["ome-compat"]["rules"])
    [crd_rule] = [rule for rule in roles["ome-compat"]["rules"] if rule["apiGroups"] == ["apiextensions.k8s.io"]]
    assert crd_rule["resourceNames"] == ["clusterbasemodels.ome.io"]


def test_reading_omes_controller_deployment_is_granted_in_omes_namespace_only() -> None:
    documents = files.deploy_documents("deploy/ome-namespace")
    [role] = files.objects_of(documents, "Role").values()
    [binding] = files.objects_of(documents, "RoleBinding").values()

    assert role["rules"] == [
        {
            "apiGroups": ["apps"],
            "resources": ["deployments"],
            "resourceNames": ["ome-controller-manager"],
            "verbs": ["get"],
        }
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    assert {(s["namespace"], s["name"]) for s in binding["subjects"]} == {
        ("ome-compat", "ome-compat"),
        ("ome-compat-reader", "ome-compat"),
    }
    kustomization = yaml.safe_load((settings.BASE_DIR / "deploy/ome-namespace/kustomization.yaml").read_text())
    assert kustomization["namespace"] == "ome"  # OME's namespace, settings.OME_NAMESPACE


def test_the_service_account_is_bound_to_the_role_and_used_by_every_pod(
    documents: list[dict[str, Any]], deployments: dict[str, dict[str, Any]]
) -> None:
    [binding] = files.objects_of(documents, "ClusterRoleBinding").values()

    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ome-compat"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "ome-compat", "namespace": "ome-compat"}]
    assert list(files.objects_of(documents, "ServiceAccount")) == ["ome-compat"]
    assert set(deployments) == DEPLOYMENTS
    assert {pod(d)["serviceAccountName"] for d in deployments.values()} == {"ome-compat"}
    assert not files.objects_of(documents, "Role")
    assert not files.objects_of(documents, "RoleBinding")


def test_every_container_runs_the_image_unprivileged_with_requests_and_the_config(
    deployments: dict[str, dict[str, Any]],
) -> None:
    for name, deployment in deployments.items():
        spec = pod(deployment)
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] == 10001, name
        for container in spec.get("initContainers", []) + spec["containers"]:
            where = f"{name}/{container['name']}"
            assert container["image"] == "ome-compat", where
            assert container["securityContext"] == {
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]},
            }, where
            assert {"cpu", "memory"} <= set(container["resources"]["requests"]), where
            assert "memory" in container["resources"]["limits"], where
            assert container["envFrom"] == [
                {"configMapRef": {"name": "ome-compat-config"}},
                {"secretRef": {"name": "ome-compat-secrets"}},
            ], where
            assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"], where
        assert {"name": "tmp", "emptyDir": {}} in spec["volumes"], name


def test_the_containers_run_the_compose_files_commands(deployments: dict[str, dict[str, Any]]) -> None:
    config = files.config_env()
    compose = compose_commands()

    for name, deployment in deployments.items():
        [container] = pod(deployment)["containers"]
        command = expand(container["command"], config)
        expected = compose[name]
        if name == "beat":  # the schedule lives on the pod's /tmp (emptyDir) instead of a volume
            expected = [arg if not arg.startswith("/data/") else "/tmp/celerybeat-schedule" for arg in expected]
        assert command == expected, name


def test_beat_is_one_pod_that_migrates_before_anything_else_starts(deployments: dict[str, dict[str, Any]]) -> None:
    beat = deployments["beat"]
    [migrate] = pod(beat)["initContainers"]

    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "Recreate"}
    assert migrate["command"] == compose_commands()["migrate"]
    for name in DEPLOYMENTS - {"beat"}:
        [wait] = pod(deployments[name])["initContainers"]
        assert "manage.py migrate --check" in wait["command"][-1], name


def test_the_web_pods_probe_healthz_for_liveness_and_readyz_for_readiness(
    documents: list[dict[str, Any]], deployments: dict[str, dict[str, Any]]
) -> None:
    [web] = pod(deployments["web"])["containers"]
    [service] = files.objects_of(documents, "Service").values()

    assert web["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert web["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert web["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert web["ports"] == [{"name": "http", "containerPort": 8000}]
    assert service["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": "http"}]
    assert service["spec"]["selector"] == deployments["web"]["spec"]["selector"]["matchLabels"]
    annotations = deployments["web"]["spec"]["template"]["metadata"]["annotations"]
    assert (annotations["prometheus.io/path"], annotations["prometheus.io/port"]) == ("/metrics", "8000")


def test_kubeconfigs_of_other_clusters_are_mounted_read_only_from_a_secret(
    deployments: dict[str, dict[str, Any]],
) -> None:
    for name, deployment in deployments.items():
        volumes = {volume["name"]: volume for volume in pod(deployment)["volumes"]}
        assert volumes["kubeconfigs"]["secret"]["secretName"] == "ome-compat-kubeconfigs", name
        assert volumes["kubeconfigs"]["secret"]["optional"] is True, name
        [container] = pod(deployment)["containers"]
        assert {"name": "kubeconfigs", "mountPath": "/etc/ome/kubeconfigs", "readOnly": True} in container[
            "volumeMounts"
        ], name


def test_the_config_map_sets_only_known_settings_and_holds_no_secret() -> None:
    config = files.config_env()
    read_by_manifests = {"WEB_CONCURRENCY", "WORKER_CONCURRENCY", "MATRIX_CONCURRENCY", "WATCH_CONCURRENCY"}

    assert set(config) - files.settings_variables() - read_by_manifests == set()
    assert not {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "METRICS_TOKEN"} & set(config)
    assert config["DEBUG"] == "false"


def test_no_secret_is_generated_or_committed() -> None:
    kustomization = yaml.safe_load((settings.BASE_DIR / "deploy" / "kustomization.yaml").read_text())

    assert "secretGenerator" not in kustomization
    assert not files.objects_of(files.deploy_documents(), "Secret")
    assert kustomization["images"][0]["newTag"] != "latest"


@pytest.mark.parametrize("folder", ["deploy", "deploy/remote-cluster", "deploy/ome-namespace"])
def test_kustomize_renders_the_manifests(folder: str) -> None:
    result = subprocess.run(
        ["kubectl", "kustomize", str(settings.BASE_DIR / folder)], capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    rendered = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    namespaced = [doc for doc in rendered if doc["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding")]
    assert len({doc["metadata"]["namespace"] for doc in namespaced}) == 1
    if folder == "deploy":
        config_maps = [doc["metadata"]["name"] for doc in rendered if doc["kind"] == "ConfigMap"]
        assert len(config_maps) == 1
        assert config_maps[0].startswith("ome-compat-config-")
        assert result.stdout.count(f"name: {config_maps[0]}") > len(DEPLOYMENTS)
        images = {c["image"] for doc in rendered if doc["kind"] == "Deployment" for c in pod(doc)["containers"]}
        assert images == {"registry.example.com/ome-compat:0.1.0"}
