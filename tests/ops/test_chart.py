"""The Helm chart (deploy/chart/) with a real helm: `helm lint` and `helm template` with the
default values and three other sets (deploy/chart/ci/), each rendering exactly the objects of the
kustomize trees it stands for, and every rendered output, chart and kustomize, valid against
Kubernetes' schemas for the version docs/operations.md names.

One source of truth, checked: the kustomize tree is the reference and the chart must render the
same objects, field for field, except (1) the ConfigMap's name, which kustomize suffixes with a
hash of its content where the chart rolls the pods with a `checksum/config` annotation, and
(2) the Namespace of the release, which `helm install --create-namespace` creates, and (3) the
namespace of a component's objects (deploy/alerts/), which the including overlay chooses and the
chart sets to the release's."""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

import matching

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy/chart"
NAMESPACE = "ome-compat"
KUBERNETES_VERSION = "1.32.0"
VALUE_SETS = {
    "default": ([], ["deploy"]),
    "rbac": (["ci/rbac-values.yaml"], ["deploy", "deploy/delegation", "deploy/ome-namespace", "deploy/argocd-hub"]),
    "remote": (["ci/remote-values.yaml"], ["deploy/remote-cluster", "deploy/ome-namespace"]),
    "alerts": (["ci/alerts-values.yaml"], ["deploy", "deploy/alerts"]),
}
COMPONENTS = {"deploy/alerts"}
KUSTOMIZE_FOLDERS = [
    "deploy",
    "deploy/delegation",
    "deploy/ome-namespace",
    "deploy/remote-cluster",
    "deploy/argocd-hub",
    "deploy/alerts",
]
# Kinds of the Prometheus Operator's CRDs, which Kubernetes' own schemas do not describe: the
# PrometheusRule's rules are checked by promtool instead (tests/policies/test_alerts.py), and the
# chart's is the component's object (test_the_chart_renders_the_objects_of_its_kustomize_trees).
CUSTOM_KINDS = {"PrometheusRule", "ServiceMonitor"}

pytestmark = pytest.mark.slow


@cache
def tool(name: str) -> str:
    found = subprocess.run([ROOT / "scripts/kube_tools.sh", name], capture_output=True, text=True, check=False)
    assert found.returncode == 0, found.stderr
    return found.stdout.strip()


def run(*argv: str | Path) -> str:
    result = subprocess.run([str(arg) for arg in argv], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def helm_template(values: list[str], *sets: str) -> list[dict[str, Any]]:
    options = [arg for path in values for arg in ("--values", CHART / path)]
    options += [arg for value in sets for arg in ("--set", value)]
    return documents(run(tool("helm"), "template", "ome-compat", CHART, "--namespace", NAMESPACE, *options))


@cache
def kustomize(folder: str) -> tuple[dict[str, Any], ...]:
    return tuple(documents(run(tool("kubectl"), "kustomize", ROOT / folder)))


def in_release_namespace(folder: str) -> list[dict[str, Any]]:
    docs = [yaml.safe_load(yaml.safe_dump(doc)) for doc in kustomize(folder)]
    if folder in COMPONENTS:
        for doc in docs:
            assert "namespace" not in doc["metadata"], f"{folder} chooses its namespace"
            doc["metadata"]["namespace"] = NAMESPACE
    return docs


def identity(doc: dict[str, Any]) -> tuple[str, str, str]:
    return (doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"])


def by_identity(docs: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for doc in docs:
        assert identity(doc) not in found, f"{identity(doc)} twice"
        found[identity(doc)] = doc
    return found


def without_hash_names(doc: dict[str, Any]) -> dict[str, Any]:
    return yaml.safe_load(re.sub(r"ome-compat-config-[a-z0-9]{10}\b", "ome-compat-config", yaml.safe_dump(doc)))


def without_checksums(doc: dict[str, Any]) -> dict[str, Any]:
    metadata = doc.get("spec", {}).get("template", {}).get("metadata", {})
    metadata.get("annotations", {}).pop("checksum/config", None)
    if metadata.get("annotations") == {}:
        del metadata["annotations"]
    return doc


@pytest.mark.parametrize("name", VALUE_SETS)
def test_helm_lint_passes(name: str) -> None:
    values, _folders = VALUE_SETS[name]

    out = run(tool("helm"), "lint", "--strict", CHART, *[arg for path in values for arg in ("--values", CHART / path)])

    assert "1 chart(s) linted, 0 chart(s) failed" in out


@pytest.mark.parametrize("name", VALUE_SETS)
def test_the_chart_renders_the_objects_of_its_kustomize_trees(name: str) -> None:
    values, folders = VALUE_SETS[name]
    expected = [without_hash_names(doc) for folder in folders for doc in in_release_namespace(folder)]
    expected = [doc for doc in expected if identity(doc) != ("Namespace", "", NAMESPACE)]

    rendered = [without_checksums(doc) for doc in helm_template(values)]

    assert by_identity(rendered) == by_identity(expected)


def test_the_chart_packages_for_an_oci_registry(tmp_path: Path) -> None:
    out = run(tool("helm"), "package", CHART, "--destination", tmp_path)

    assert (tmp_path / "ome-compat-0.1.0.tgz").is_file(), out


def test_values_change_image_replicas_settings_and_secrets() -> None:
    docs = helm_template(
        [],
        "image.repository=registry.internal/ome-compat",
        "image.tag=0.2.0",
        "worker.replicas=4",
        "existingSecret=prod-secrets",
        "config.OIDC_RP_CLIENT_ID=ome-compat",
        "config.OME_KUBECONFIG_DIR=/var/kubeconfigs",
    )
    found = by_identity(docs)
    worker = found[("Deployment", NAMESPACE, "ome-compat-worker")]
    container = worker["spec"]["template"]["spec"]["containers"][0]

    assert worker["spec"]["replicas"] == 4
    assert container["image"] == "registry.internal/ome-compat:0.2.0"
    assert {"secretRef": {"name": "prod-secrets"}} in container["envFrom"]
    assert {"name": "kubeconfigs", "mountPath": "/var/kubeconfigs", "readOnly": True} in container["volumeMounts"]
    assert found[("ConfigMap", NAMESPACE, "ome-compat-config")]["data"]["OIDC_RP_CLIENT_ID"] == "ome-compat"
    default = by_identity(helm_template([]))[("Deployment", NAMESPACE, "ome-compat-worker")]
    annotation = "checksum/config"
    assert (
        worker["spec"]["template"]["metadata"]["annotations"][annotation]
        != (default["spec"]["template"]["metadata"]["annotations"][annotation])
    )


def rendered_outputs() -> list[tuple[str, list[dict[str, Any]]]]:
    charts = [(f"chart ({name} values)", helm_template(values)) for name, (values, _folders) in VALUE_SETS.items()]
    return charts + [(f"kustomize {folder}", list(kustomize(folder))) for folder in KUSTOMIZE_FOLDERS]


def test_every_rendered_output_is_valid_for_the_kubernetes_version_the_docs_name() -> None:
    assert f"Kubernetes {KUBERNETES_VERSION.rsplit('.', 1)[0]} or newer" in (ROOT / "docs/operations.md").read_text()
    problems = []
    for source, docs in rendered_outputs():
        assert docs, source
        for doc in docs:
            if doc["kind"] in CUSTOM_KINDS:
                continue
            try:
                kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
            except kubernetes_validate.ValidationError as error:
                problems.append(f"{source}: {identity(doc)}: {error.message}")
    assert problems == []


def test_the_chart_impersonates_only_the_names_it_is_given() -> None:
    # RBAC's resourceNames are exact names; without them an impersonate rule covers everyone.
    def impersonation(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            rule
            for doc in docs
            if doc["kind"] == "ClusterRole"
            for rule in doc.get("rules") or []
            if "impersonate" in rule["verbs"]
        ]

    for values, _folders in VALUE_SETS.values():
        assert all(rule.get("resourceNames") for rule in impersonation(helm_template(values)))

    named = helm_template(
        [], "rbac.delegation=true", "rbac.impersonate.users={oidc:ada}", "rbac.impersonate.groups={oidc:sre,oidc:ml}"
    )

    assert impersonation(named) == [
        {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["oidc:ada"]},
        {
            "apiGroups": [""],
            "resources": ["groups"],
            "verbs": ["impersonate"],
            "resourceNames": ["oidc:sre", "oidc:ml"],
        },
    ]


def test_the_chart_s_app_version_is_the_package_s_version() -> None:
    """The version's one home is matching/_version.py; Chart.yaml's appVersion (the default
    image tag) is the copy helm needs, kept equal here."""
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())

    assert chart["appVersion"] == matching.__version__


def test_the_alerts_and_the_grafana_dashboard_are_off_by_default_and_each_on_its_own() -> None:
    def kinds(*sets: str) -> set[tuple[str, str]]:
        return {(doc["kind"], doc["metadata"]["name"]) for doc in helm_template([], *sets)}

    default = kinds()
    rule = ("PrometheusRule", "ome-compat")
    dashboard = ("ConfigMap", "ome-compat-grafana-dashboard")
    monitor = ("ServiceMonitor", "ome-compat-web")

    assert rule not in default
    assert dashboard not in default
    assert kinds("alerts.enabled=true") - default == {rule, monitor}
    assert kinds("alerts.enabled=true", "alerts.serviceMonitor=false") - default == {rule}
    assert kinds("grafana.dashboard.enabled=true") - default == {dashboard}


def test_the_grafana_dashboard_s_sidecar_label_is_a_value() -> None:
    docs = by_identity(helm_template([], "grafana.dashboard.enabled=true", "grafana.dashboard.labels.dashboards=ome"))
    config_map = docs[("ConfigMap", NAMESPACE, "ome-compat-grafana-dashboard")]

    assert config_map["metadata"]["labels"] == {"grafana_dashboard": "1", "dashboards": "ome"}
    dashboard = json.loads(config_map["data"]["ome-compat.json"])
    assert dashboard["uid"] == json.loads((ROOT / "deploy/alerts/grafana-dashboard.json").read_text())["uid"]


def monitoring_on(*sets: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    return by_identity(helm_template(["ci/alerts-values.yaml"], *sets))


def test_the_service_monitor_selects_the_web_service_s_metrics_port_with_the_pods_token() -> None:
    found = monitoring_on("existingSecret=prod-secrets")
    monitor = found[("ServiceMonitor", NAMESPACE, "ome-compat-web")]
    service = found[("Service", NAMESPACE, "ome-compat-web")]
    web = found[("Deployment", NAMESPACE, "ome-compat-web")]["spec"]["template"]
    (endpoint,) = monitor["spec"]["endpoints"]

    # The selector picks exactly the web Service, in the ServiceMonitor's namespace.
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    selected = [
        doc
        for doc in found.values()
        if doc["kind"] == "Service"
        and monitor["spec"]["selector"]["matchLabels"].items() <= doc["metadata"].get("labels", {}).items()
    ]
    assert selected == [service]
    # The named port is the Service's, which targets the container port gunicorn serves.
    (port,) = [port for port in service["spec"]["ports"] if port["name"] == endpoint["port"]]
    (container,) = web["spec"]["containers"]
    assert {"name": port["targetPort"], "containerPort": 8000} in container["ports"]
    assert "0.0.0.0:8000" in container["command"]
    assert endpoint["path"] == "/metrics"
    # The bearer is the METRICS_TOKEN key of the Secret the web pods read their settings from.
    assert endpoint["authorization"] == {
        "type": "Bearer",
        "credentials": {"name": "prod-secrets", "key": "METRICS_TOKEN"},
    }
    assert {"secretRef": {"name": "prod-secrets"}} in container["envFrom"]
    assert monitor["metadata"]["namespace"] == service["metadata"]["namespace"]


@pytest.mark.django_db
def test_the_service_monitor_s_scrape_is_answered_and_without_the_token_refused(client: Any, settings: Any) -> None:
    # The web pod reads METRICS_TOKEN from the Secret's key; Prometheus sends that key's value.
    secret = {"METRICS_TOKEN": "scrape-me"}
    settings.DEBUG, settings.METRICS_TOKEN = False, secret["METRICS_TOKEN"]
    (endpoint,) = monitoring_on()[("ServiceMonitor", NAMESPACE, "ome-compat-web")]["spec"]["endpoints"]
    credentials = endpoint["authorization"]["credentials"]
    bearer = f"{endpoint['authorization']['type']} {secret[credentials['key']]}"

    assert client.get(endpoint["path"], HTTP_AUTHORIZATION=bearer).status_code == 200
    assert client.get(endpoint["path"]).status_code == 401


def test_the_rule_and_the_service_monitor_carry_the_labels_prometheus_selects_by() -> None:
    found = monitoring_on("alerts.labels.release=kube-prometheus-stack")

    for kind, name in (("PrometheusRule", "ome-compat"), ("ServiceMonitor", "ome-compat-web")):
        assert found[(kind, NAMESPACE, name)]["metadata"]["labels"] == {"release": "kube-prometheus-stack"}


def beat_init(docs: dict[tuple[str, str, str], dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    pod = docs[("Deployment", NAMESPACE, "ome-compat-beat")]["spec"]["template"]["spec"]
    return pod["initContainers"][0], pod["volumes"]


def test_the_chart_ships_policy_files_from_values_or_a_config_map() -> None:
    policy = "apiVersion: ome-compat.io/v1alpha1\nkind: RuntimePolicy\n"
    found = by_identity(helm_template([], f"policies.files.team-a\\.yaml={policy}"))
    init, volumes = beat_init(found)
    mount = {"name": "policies", "mountPath": "/etc/ome/policies", "readOnly": True}

    assert found[("ConfigMap", NAMESPACE, "ome-compat-policies")]["data"] == {"team-a.yaml": policy}
    assert "load_policies" in init["command"][-1]
    assert {"name": "POLICY_FILES", "value": "/etc/ome/policies"} in init["env"]
    assert mount in init["volumeMounts"]
    assert {"name": "policies", "configMap": {"name": "ome-compat-policies"}} in volumes
    own = by_identity(helm_template([], "policies.configMap=my-policies"))
    assert ("ConfigMap", NAMESPACE, "ome-compat-policies") not in own
    assert {"name": "policies", "configMap": {"name": "my-policies"}} in beat_init(own)[1]
    assert "env" not in beat_init(by_identity(helm_template([])))[0]


def images(docs: list[dict[str, Any]]) -> set[str]:
    pods = [
        doc["spec"]["template"]["spec"]
        for doc in docs
        if doc["kind"] in {"Deployment", "StatefulSet", "DaemonSet", "Job"}
    ]
    return {
        container["image"]
        for pod in pods
        for part in ("initContainers", "containers")
        for container in pod.get(part, [])
    }


def test_the_image_list_for_mirroring_is_every_image_the_chart_runs() -> None:
    listed = set((CHART / "images.txt").read_text().split())
    rendered = set().union(*(images(helm_template(values)) for values, _folders in VALUE_SETS.values()))

    assert listed == rendered == {f"registry.example.com/ome-compat:{matching.__version__}"}


@pytest.mark.parametrize(
    ("repository", "expected"),
    [
        ("registry.example.com/ome-compat", "mirror.internal:5000/ome-compat"),
        ("localhost/team/ome-compat", "mirror.internal:5000/team/ome-compat"),
        ("team/ome-compat", "mirror.internal:5000/team/ome-compat"),
    ],
)
def test_global_image_registry_replaces_the_registry_of_every_image(repository: str, expected: str) -> None:
    docs = helm_template([], "global.imageRegistry=mirror.internal:5000/", f"image.repository={repository}")

    assert images(docs) == {f"{expected}:{matching.__version__}"}
