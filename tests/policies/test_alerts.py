"""The alerting kit: the PrometheusRule passes `promtool check rules` and its unit tests (each
alert firing and not), ships as a kustomize component a user includes or leaves out, has a
runbook per alert; the Grafana dashboard is well-formed; and every series the rules and panels
query is one /metrics exports, with bounded labels."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from access.scope import SYSTEM
from inventory.models import Cluster
from isvcs.models import InferenceServiceVerdict
from ome_dashboard.ops.metrics import registry_for
from policies.evaluation import policies_evaluate
from policies.services import policies_load_files

ROOT = Path(settings.BASE_DIR)
ALERTS = ROOT / "deploy/alerts"
RULE = yaml.safe_load((ALERTS / "prometheusrule.yaml").read_text())
DASHBOARD = json.loads((ALERTS / "grafana-dashboard.json").read_text())
RUNBOOKS = (ROOT / "docs/policies.md").read_text()
ALERT_NAMES = [rule["alert"] for group in RULE["spec"]["groups"] for rule in group["rules"]]


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("promtool")
    assert binary, "promtool is missing: apt-get install prometheus (.ci/test-deps installs it)"
    return subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_rule_file_promtool_reads_is_the_prometheusrule_s_spec() -> None:
    # promtool reads plain rule files, not custom resources: rules.yaml is the generated copy.
    assert yaml.safe_load((ALERTS / "rules.yaml").read_text()) == RULE["spec"], "run `make alert-rules`"


def test_promtool_accepts_the_rules() -> None:
    result = promtool("check", "rules", "deploy/alerts/rules.yaml", cwd=ROOT)

    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(ALERT_NAMES)} rules found" in result.stdout


def test_the_rule_unit_tests_pass_run_from_the_repository_as_the_docs_say() -> None:
    command = "promtool test rules deploy/alerts/rules.test.yaml"
    assert f"`{command}`" in RUNBOOKS

    result = promtool(*command.split()[1:], cwd=ROOT)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_the_plain_prometheus_scrape_configuration_of_the_docs_is_valid(tmp_path: Path) -> None:
    block = RUNBOOKS.split("```yaml\n# prometheus.yml\n", 1)[1].split("```", 1)[0]
    config = yaml.safe_load(block)
    job = config["scrape_configs"][0]
    assert job["authorization"] == {
        "type": "Bearer",
        "credentials_file": "/etc/prometheus/secrets/ome-compat/METRICS_TOKEN",
    }
    # promtool checks that the files named exist: the token and the rules, here in tmp_path.
    (tmp_path / "METRICS_TOKEN").write_text("scrape-me")
    shutil.copy(ALERTS / "rules.yaml", tmp_path / "ome-compat.yaml")
    job["authorization"]["credentials_file"] = str(tmp_path / "METRICS_TOKEN")
    config["rule_files"] = [str(tmp_path / "ome-compat.yaml")]
    # Debian's promtool is built without Kubernetes discovery (it rejects the field): that part,
    # the relabelling's meta labels included, is checked only by the real Prometheus.
    assert job.pop("kubernetes_sd_configs") == [{"role": "endpoints", "namespaces": {"names": ["ome-compat"]}}]
    job["static_configs"] = [{"targets": ["ome-compat-web.ome-compat:80"]}]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))

    result = promtool("check", "config", "prometheus.yml", cwd=tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(ALERT_NAMES)} rules found" in result.stdout


def test_every_alert_has_a_unit_test_that_fires_it() -> None:
    tests = yaml.safe_load((ALERTS / "rules.test.yaml").read_text())["tests"]
    fired = {case["alertname"] for test in tests for case in test["alert_rule_test"] if case["exp_alerts"]}

    assert fired == set(ALERT_NAMES)


@pytest.mark.parametrize("name", ALERT_NAMES)
def test_every_alert_has_a_runbook_section_naming_the_page_to_open(name: str) -> None:
    rule = next(rule for group in RULE["spec"]["groups"] for rule in group["rules"] if rule["alert"] == name)

    assert rule["annotations"]["runbook_url"] == f"docs/policies.md#{name.lower()}"
    section = RUNBOOKS.split(f"\n### {name}\n", 1)[1].split("\n### ", 1)[0]
    assert all(part in section for part in ("**What it means.**", "**What to look at.**", "**Open.**"))


def kustomize(folder: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is missing"
    result = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def test_the_alerts_are_a_component_an_overlay_includes_or_leaves_out(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "deploy", tmp_path / "deploy")
    for name, text in (("with", "components: [../deploy/alerts]\n"), ("without", "")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kustomization.yaml").write_text("resources: [../deploy]\n" + text)

    with_alerts = {(doc["kind"], doc["metadata"]["name"]) for doc in kustomize(tmp_path / "with")}
    without = {(doc["kind"], doc["metadata"]["name"]) for doc in kustomize(tmp_path / "without")}

    assert with_alerts - without == {
        ("PrometheusRule", "ome-compat"),
        ("ServiceMonitor", "ome-compat-web"),
        ("ConfigMap", "ome-compat-grafana-dashboard"),
    }


def test_the_grafana_dashboard_is_well_formed() -> None:
    panels = DASHBOARD["panels"]
    variables = {variable["name"] for variable in DASHBOARD["templating"]["list"]}

    assert (DASHBOARD["uid"], DASHBOARD["schemaVersion"]) == ("ome-compat-policies", 39)
    assert len({panel["id"] for panel in panels}) == len(panels)
    assert variables == {"datasource", "cluster"}
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        box = panel["gridPos"]
        assert box["x"] + box["w"] <= 24, panel["title"]
        area = {(x, y) for x in range(box["x"], box["x"] + box["w"]) for y in range(box["y"], box["y"] + box["h"])}
        assert not cells & area, f"{panel['title']} overlaps another panel"
        cells |= area
        assert panel["type"] in {"stat", "timeseries", "table"}
        assert panel["targets"], panel["title"]
        assert all(target["datasource"]["uid"] == "${datasource}" for target in panel["targets"])


def queried_series() -> set[str]:
    exprs = [rule["expr"] for group in RULE["spec"]["groups"] for rule in group["rules"]]
    exprs += [target["expr"] for panel in DASHBOARD["panels"] for target in panel["targets"]]
    exprs += [DASHBOARD["templating"]["list"][1]["definition"]]
    return {name for expr in exprs for name in re.findall(r"\bome_[a-z_]+\b", expr)}


@pytest.fixture
def exported(demo: Cluster) -> dict[str, list[dict[str, str]]]:
    """Family name -> label sets of one scrape, after the demo's policies were evaluated."""
    policies_load_files([ROOT / "demo/policies"])
    policies_evaluate(demo)
    text = generate_latest(registry_for(SYSTEM)).decode()
    found: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(text):
        found.setdefault(family.name, [])
        for sample in family.samples:
            found.setdefault(sample.name.removesuffix("_total"), []).append(dict(sample.labels))
    return found


@pytest.mark.django_db
def test_every_series_the_rules_and_the_dashboard_query_is_exported(exported: dict[str, Any]) -> None:
    assert queried_series() - set(exported) == set()


@pytest.mark.django_db
def test_the_policy_metrics_count_failing_assertions_without_naming_models(exported: dict[str, Any]) -> None:
    text = generate_latest(registry_for(SYSTEM)).decode()

    assert 'ome_policy_assertions_failing{cluster="demo",policy="research-diffusion",severity="error"} 1.0' in text
    assert 'ome_policy_assertions{cluster="demo",policy="team-a-serving",severity="error"} 7.0' in text
    assert 'ome_inferenceservices{cluster="demo",state="blocked"}' in text
    bounded = {"cluster", "policy", "severity", "state", "status", "receiver", "kind", "outcome", "source", "result"}
    for name in ("ome_policy_assertions", "ome_policy_assertions_failing", "ome_inferenceservices",
                 "ome_cluster_freshness", "ome_policy_evaluation_timestamp_seconds"):  # fmt: skip
        assert {label for labels in exported[name] for label in labels} <= bounded


@pytest.mark.django_db
def test_a_silent_service_has_its_own_state_not_deployable(exported: dict[str, Any], demo: Cluster) -> None:
    # v1.3's verdict silent: OME admitted the service and does nothing (matching.SILENT).
    before = generate_latest(registry_for(SYSTEM)).decode()
    row = InferenceServiceVerdict.objects.filter(cluster=demo, current_verdict="selected").first()
    assert row is not None
    InferenceServiceVerdict.objects.filter(pk=row.pk).update(current_verdict="silent")

    after = generate_latest(registry_for(SYSTEM)).decode()

    assert 'ome_inferenceservices{cluster="demo",state="silent"} 0.0' in before
    assert 'ome_inferenceservices{cluster="demo",state="silent"} 1.0' in after
