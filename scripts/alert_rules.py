#!/usr/bin/env python3
"""Write deploy/alerts/rules.yaml, the plain Prometheus rule file of the PrometheusRule in
deploy/alerts/prometheusrule.yaml (its `spec`), so that promtool, which reads rule files and not
custom resources, runs from the repository as docs/policies.md says:

    promtool test rules deploy/alerts/rules.test.yaml

prometheusrule.yaml is the one source: edit it, then run this (`make alert-rules`);
tests/policies/test_alerts.py fails while rules.yaml differs from it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ALERTS = Path(__file__).resolve().parents[1] / "deploy/alerts"
HEADER = "# Generated from prometheusrule.yaml's spec by scripts/alert_rules.py (`make alert-rules`): do not edit.\n"


def rules_text() -> str:
    """The rule file's text: the PrometheusRule's spec under a header naming its source."""
    rule = yaml.safe_load((ALERTS / "prometheusrule.yaml").read_text())
    return HEADER + yaml.safe_dump(rule["spec"], sort_keys=False, width=200)


if __name__ == "__main__":
    (ALERTS / "rules.yaml").write_text(rules_text())
