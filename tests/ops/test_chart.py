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
import os
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
# chart's is the component's object (test_the_chart_renders_the_objects_of_its_kustomize_trees);
# cert-manager's Issuer and Certificate (the admission webhook's TLS) are compared the same way.
CUSTOM_KINDS = {"PrometheusRule", "ServiceMonitor", "Issuer", "Certificate"}

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


NETWORK_POLICY_VALUES = """
networkPolicy:
  enabled: true
  apiServers: {to: [{ipBlock: {cidr: 10.96.0.1/32}}, {ipBlock: {cidr: 172.18.0.2/32}}]}
  database: {to: [{podSelector: {matchLabels: {app: postgres}}}]}
  redis: {to: [{podSelector: {matchLabels: {app: redis}}}]}
  receivers: {to: [{ipBlock: {cidr: 203.0.113.10/32}}], ports: [443, 8443]}
"""


def test_a_network_policy_limits_egress_to_dns_the_api_servers_database_redis_and_receivers(tmp_path: Path) -> None:
    values = tmp_path / "network-policy.yaml"
    values.write_text(NETWORK_POLICY_VALUES)

    docs = helm_template([str(values)])
    default = helm_template([])

    assert not [doc for doc in default if doc["kind"] == "NetworkPolicy"]  # off unless given its peers
    (policy,) = [doc for doc in docs if doc["kind"] == "NetworkPolicy"]
    kubernetes_validate.validate(policy, KUBERNETES_VERSION, strict=True)
    spec = policy["spec"]
    assert spec["policyTypes"] == ["Egress"]
    pods = [doc for doc in docs if doc["kind"] == "Deployment"]
    assert pods
    for deployment in pods:  # every process of the dashboard is selected
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert spec["podSelector"]["matchLabels"].items() <= labels.items()
    rules = [
        (rule["to"], sorted((port["protocol"], port["port"]) for port in rule["ports"])) for rule in spec["egress"]
    ]
    assert rules == [
        (
            [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
            [("TCP", 53), ("UDP", 53)],
        ),
        (
            [{"ipBlock": {"cidr": "10.96.0.1/32"}}, {"ipBlock": {"cidr": "172.18.0.2/32"}}],
            [("TCP", 443), ("TCP", 6443)],
        ),
        ([{"podSelector": {"matchLabels": {"app": "postgres"}}}], [("TCP", 5432)]),
        ([{"podSelector": {"matchLabels": {"app": "redis"}}}], [("TCP", 6379)]),
        ([{"ipBlock": {"cidr": "203.0.113.10/32"}}], [("TCP", 443), ("TCP", 8443)]),
    ]


# ------------------------------------------------------------------------------------------
# The admission webhook (docs/admission.md): off by default; with cert-manager it renders the
# objects of deploy/ plus the component deploy/admission/ as an overlay outside deploy/ includes it.

ADMISSION_VALUES = ["ci/admission-values.yaml"]


def admission_overlay(tmp_path: Path) -> list[dict[str, Any]]:
    deploy = Path(os.path.relpath(ROOT / "deploy", tmp_path))
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "namespace": NAMESPACE,
                "resources": [str(deploy)],
                "components": [str(deploy / "admission")],
                "images": [{"name": "ome-compat", "newName": "registry.example.com/ome-compat", "newTag": "0.1.0"}],
            }
        )
    )
    return documents(run(tool("kubectl"), "kustomize", tmp_path))


def test_the_admission_webhook_is_off_by_default() -> None:
    assert not [doc for doc in helm_template([]) if "admission" in doc["metadata"]["name"]]


def test_the_chart_renders_the_admission_component_s_objects(tmp_path: Path) -> None:
    expected = [without_hash_names(doc) for doc in admission_overlay(tmp_path)]
    expected = [doc for doc in expected if identity(doc) != ("Namespace", "", NAMESPACE)]

    rendered = [without_checksums(doc) for doc in helm_template(ADMISSION_VALUES)]

    assert by_identity(rendered) == by_identity(expected)
    assert "1 chart(s) linted, 0 chart(s) failed" in run(
        tool("helm"), "lint", "--strict", CHART, "--values", CHART / ADMISSION_VALUES[0]
    )


def test_the_admission_webhook_never_blocks_and_reaches_its_endpoint() -> None:
    found = by_identity(helm_template(ADMISSION_VALUES, "admission.cluster=prod", "admission.timeoutSeconds=3"))
    (webhook,) = found[("ValidatingWebhookConfiguration", "", "ome-compat-admission")]["webhooks"]
    service = found[("Service", NAMESPACE, "ome-compat-admission")]
    container = found[("Deployment", NAMESPACE, "ome-compat-admission")]["spec"]["template"]["spec"]["containers"][0]

    assert (webhook["failurePolicy"], webhook["sideEffects"], webhook["timeoutSeconds"]) == ("Ignore", "None", 3)
    assert webhook["clientConfig"]["service"] == {
        "name": "ome-compat-admission",
        "namespace": NAMESPACE,
        "path": "/api/v1/admission/prod/",
        "port": 443,
    }
    assert webhook["rules"][0]["resources"] == [
        "servingruntimes",
        "clusterservingruntimes",
        "basemodels",
        "clusterbasemodels",
    ]
    assert service["spec"]["ports"] == [{"name": "https", "port": 443, "targetPort": "https"}]
    assert container["ports"] == [{"name": "https", "containerPort": 8443}]
    assert {"name": "ALLOWED_HOSTS", "value": f"ome-compat-admission.{NAMESPACE}.svc"} in container["env"]
    assert container["command"][container["command"].index("--timeout") + 1] == "3"
    for doc in found.values():
        if doc["kind"] not in CUSTOM_KINDS:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_admission_tls_from_a_provided_secret_needs_its_ca() -> None:
    sets = ("admission.enabled=true", "admission.tls.certManager=false", "admission.tls.secretName=my-tls")
    failed = subprocess.run(
        [tool("helm"), "template", "x", CHART, *[arg for value in sets for arg in ("--set", value)]],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode != 0
    assert "admission.tls.caBundle" in failed.stderr

    found = by_identity(helm_template([], *sets, "admission.tls.caBundle=Q0E="))
    (webhook,) = found[("ValidatingWebhookConfiguration", "", "ome-compat-admission")]["webhooks"]
    volumes = found[("Deployment", NAMESPACE, "ome-compat-admission")]["spec"]["template"]["spec"]["volumes"]

    assert webhook["clientConfig"]["caBundle"] == "Q0E="
    assert {"name": "tls", "secret": {"secretName": "my-tls", "defaultMode": 0o440}} in volumes
    assert not [doc for doc in found.values() if doc["kind"] in ("Issuer", "Certificate")]
    assert "annotations" not in found[("ValidatingWebhookConfiguration", "", "ome-compat-admission")]["metadata"]
