"""Policies and receivers stay inside a reader's namespaces (issue 32, finding "policies leak
other teams' data", and "a receiver scoped to team-a is sent team-b's failures").

A cluster with two teams: `team-b-rt`, a ServingRuntime of team-b, is OME's pick for the shared
ClusterBaseModel in team-b (a namespaced runtime serves its namespace's rows, and ranks above a
cluster one: ome-docs "ServingRuntime" / upstream pkg/runtimeselector); each team has a model no
runtime serves. Three policies: one scoped to team-b; one without a namespace scope asserting
every model has a runtime; a `pickCount` over every namespace, which fails at cluster scope and
whose message names team-b's runtime. Nothing a team-a reader or receiver gets may say "team-b".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.models import Cluster
from inventory.services import ClusterSpec, cluster_register, manifests_load
from matching.policy import Assertion, Failure, Outcome, Subjects
from matrix.services import matrix_rebuild
from policies.evaluation import policies_evaluate
from policies.models import AssertionState, Delivery, Receiver
from policies.notify import Event, assertion_event, payload_for
from policies.services import policies_load_files
from policies.visibility import WITHHELD
from tests.inventory.live.objects import model, runtime
from tests.support.access import grant

pytestmark = pytest.mark.django_db

POLICIES = """\
apiVersion: compat.ome.io/v1alpha1
kind: RuntimePolicy
metadata: {name: team-b-only}
spec:
  owner: team-b owners
  scope: {namespaces: [team-b]}
  assertions:
    - {name: team-b-models-served, assert: hasRuntime}
---
apiVersion: compat.ome.io/v1alpha1
kind: RuntimePolicy
metadata: {name: everywhere}
spec:
  assertions:
    - {name: models-served, assert: hasRuntime}
    - {name: few-on-the-runtime, assert: pickCount, runtime: team-b-rt, atMost: 0}
"""
STATES = "/api/v1/policies/states/"


@pytest.fixture
def cluster(tmp_path: Path, settings: Any) -> Cluster:
    settings.API_ANONYMOUS_READ = False
    settings.MATRIX_UPDATE_ON_CHANGE = False
    objects = [
        model("shared-llama"),
        runtime("team-b-rt", "team-b"),
        model("team-a-orphan", "team-a", architecture="MistralForCausalLM"),
        model("team-b-orphan", "team-b", architecture="MistralForCausalLM"),
    ]
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all(objects))
    (tmp_path / "policies.yaml").write_text(POLICIES)
    found = cluster_register(ClusterSpec("teams", Cluster.Source.MANIFESTS, manifests=(str(tmp_path),)))
    manifests_load(found, [tmp_path / "objects.yaml"], prune=True)
    matrix_rebuild(found)
    policies_load_files([tmp_path / "policies.yaml"])
    return found


def reader(django_user_model: Any, name: str, namespace: str = "") -> APIClient:
    user = django_user_model.objects.create_user(name)
    grant(user, "viewer", cluster="teams", namespace=namespace)
    client = APIClient()
    client.force_login(user)
    return client


def by_id(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in body["results"]}


def test_the_evaluation_fails_the_count_naming_team_bs_runtime(cluster: Cluster) -> None:
    """The premise: the count fails at cluster scope and its message names team-b's runtime."""
    policies_evaluate(cluster)

    count = cluster.assertion_states.get(assertion="few-on-the-runtime")
    assert (count.passing, count.namespaces, [item["namespace"] for item in count.failures]) == (False, [], [""])
    assert "team-b-rt is the pick for 1 model(s)" in count.failures[0]["message"]


def test_a_reader_of_team_a_sees_no_policy_of_team_b_and_no_count_over_it(
    cluster: Cluster, django_user_model: Any
) -> None:
    policies_evaluate(cluster)
    client = reader(django_user_model, "team-a-reader", "team-a")

    answer = client.get(STATES, {"cluster": "teams"})

    states = by_id(answer.json())
    assert sorted(states) == ["everywhere/few-on-the-runtime", "everywhere/models-served"]
    served, count = states["everywhere/models-served"], states["everywhere/few-on-the-runtime"]
    assert ([item["subject"] for item in served["failures"]], served["failures_hidden"]) == (
        ["BaseModel team-a/team-a-orphan in team-a", "ClusterBaseModel shared-llama in cluster scope"],
        1,
    )
    assert (count["failures"], count["failures_hidden"], count["failures_withheld"]) == ([], 0, 1)
    assert "team-b" not in answer.content.decode()


def test_the_policies_page_withholds_the_count_and_says_so(cluster: Cluster, django_user_model: Any) -> None:
    policies_evaluate(cluster)
    client = reader(django_user_model, "team-a-reader", "team-a")

    page = client.get("/policies/", {"cluster": "teams"}).content.decode()

    assert "team-b" not in page
    assert f"1 failure {WITHHELD}" in page


def test_a_reader_of_the_whole_cluster_sees_every_state_and_failure(cluster: Cluster, django_user_model: Any) -> None:
    policies_evaluate(cluster)
    client = reader(django_user_model, "cluster-reader")

    states = by_id(client.get(STATES, {"cluster": "teams"}).json())

    assert len(states) == 3
    count = states["everywhere/few-on-the-runtime"]
    assert (len(count["failures"]), count["failures_withheld"]) == (1, 0)
    assert count["failures"][0]["message"].startswith("team-b-rt is the pick for 1 model(s)")


def test_a_reader_of_each_namespace_a_count_covers_sees_it(cluster: Cluster, django_user_model: Any) -> None:
    """A count scoped to namespaces named without a glob, all of them read, is shown."""
    policies_evaluate(cluster)
    cluster.assertion_states.filter(assertion="few-on-the-runtime").update(namespaces=["team-b"])
    client = reader(django_user_model, "team-b-reader", "team-b")

    count = by_id(client.get(STATES, {"cluster": "teams"}).json())["everywhere/few-on-the-runtime"]

    assert (len(count["failures"]), count["failures_withheld"]) == (1, 0)


def test_a_state_recorded_before_its_namespaces_were_shows_to_whole_cluster_readers_only(
    cluster: Cluster, django_user_model: Any
) -> None:
    policies_evaluate(cluster)
    cluster.assertion_states.update(namespaces=None)

    partial = by_id(reader(django_user_model, "team-a-reader", "team-a").get(STATES, {"cluster": "teams"}).json())
    whole = by_id(reader(django_user_model, "cluster-reader").get(STATES, {"cluster": "teams"}).json())

    assert (len(partial), len(whole)) == (0, 3)


def test_the_check_api_leaves_out_the_stored_policies_of_other_teams(cluster: Cluster, django_user_model: Any) -> None:
    client = reader(django_user_model, "team-a-reader", "team-a")

    answer = client.post("/api/v1/policies/check/", {"cluster": "teams", "objects": []}, format="json")

    assert answer.status_code == 200, answer.content
    ids = [item["id"] for section in answer.json()["sections"] for item in section["assertions"]]
    assert ids == ["everywhere/models-served", "everywhere/few-on-the-runtime"]
    assert "team-b-only" not in answer.content.decode()


@pytest.fixture
def receivers(cluster: Cluster) -> dict[str, Receiver]:
    made = {}
    for name, namespaces in (("team-a-hook", "team-a"), ("team-star-hook", "team-*"), ("whole-hook", "")):
        made[name] = Receiver.objects.create(name=name, url="http://127.0.0.1:9/", cluster=cluster,
                                             namespaces=namespaces)  # fmt: skip
    return made


def sent(receiver: Receiver) -> str:
    return json.dumps([delivery.payload for delivery in Delivery.objects.filter(receiver=receiver)])


def test_a_receiver_of_team_a_is_sent_nothing_of_team_b(
    cluster: Cluster, receivers: dict[str, Receiver], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        policies_evaluate(cluster)

    team_a = {
        d.payload["assertion"]["id"]: d.payload for d in Delivery.objects.filter(receiver=receivers["team-a-hook"])
    }
    assert sorted(team_a) == ["everywhere/models-served"]
    assert (
        team_a["everywhere/models-served"]["failuresTotal"],
        len(team_a["everywhere/models-served"]["failures"]),
    ) == (2, 2)
    assert "team-b" not in sent(receivers["team-a-hook"])
    assert "team-b" in sent(receivers["team-star-hook"])
    whole = {d.payload["assertion"]["id"]: d.payload for d in Delivery.objects.filter(receiver=receivers["whole-hook"])}
    assert whole["everywhere/few-on-the-runtime"]["failures"][0]["message"].startswith("team-b-rt is the pick")


def test_a_receiver_of_globbed_namespaces_is_told_a_count_is_withheld(
    cluster: Cluster, receivers: dict[str, Receiver], django_capture_on_commit_callbacks: Any
) -> None:
    """A count over `team-*`: a glob may cover tomorrow's namespaces too, so even a receiver of
    every namespace it covers today is not sent it."""
    receivers["team-star-hook"].namespaces = "team-a,team-b"
    event = Event("assertion", "teams", ("",), {"type": "assertion.failing", "causes": [], "failures": [
        {"namespace": "", "message": "team-b-rt is the pick for 1 model(s), not at most 0"}]},
        "pickCount", ("team-*",))  # fmt: skip

    payload = payload_for(receivers["team-star-hook"], event)

    assert (payload["failures"], payload["failuresTotal"], payload["failuresWithheld"]) == ([], 0, 1)


def test_a_staff_user_without_a_role_on_the_cluster_cannot_subscribe(cluster: Cluster, django_user_model: Any) -> None:
    staff = django_user_model.objects.create_user("hooks", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="_receiver"))
    client = Client()
    client.force_login(staff)
    form = {"name": "spy", "url": "https://hooks.example/x", "format": "json", "cluster": cluster.pk,
            "namespaces": "", "on_assertion_change": "on", "enabled": "on"}  # fmt: skip

    refused = client.post("/admin/policies/receiver/add/", form)
    refused_everywhere = client.post("/admin/policies/receiver/add/", {**form, "cluster": ""})
    grant(staff, "viewer", cluster="teams", namespace="team-a")
    refused_glob = client.post("/admin/policies/receiver/add/", {**form, "namespaces": "team-*"})
    allowed = client.post("/admin/policies/receiver/add/", {**form, "namespaces": "team-a"})

    assert refused.status_code == refused_everywhere.status_code == refused_glob.status_code == 200
    # Without a role the cluster is not among the choices; a receiver of every cluster is refused by name.
    assert "Select a valid choice" in refused.content.decode()
    assert "a receiver of every cluster needs a role on every cluster" in refused_everywhere.content.decode()
    assert "receiver spy: you need a role on cluster teams, or on each namespace listed (named without a glob)" in (
        refused_glob.content.decode()
    )
    assert allowed.status_code == 302
    assert list(Receiver.objects.values_list("name", "namespaces")) == [("spy", "team-a")]


def test_a_namespace_reader_cannot_subscribe_to_the_whole_cluster(cluster: Cluster, django_user_model: Any) -> None:
    staff = django_user_model.objects.create_user("hooks", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="_receiver"))
    grant(staff, "viewer", cluster="teams", namespace="team-a")
    client = Client()
    client.force_login(staff)
    form = {"name": "spy", "url": "https://hooks.example/x", "format": "json", "cluster": cluster.pk,
            "namespaces": "", "on_assertion_change": "on", "enabled": "on"}  # fmt: skip

    refused = client.post("/admin/policies/receiver/add/", form)

    assert "receiver spy: a receiver of every namespace of cluster teams needs a role on the whole cluster" in (
        refused.content.decode()
    )
    assert not Receiver.objects.exists()


def test_the_admin_lists_only_the_receivers_its_user_could_have_saved(
    cluster: Cluster, receivers: dict[str, Receiver], django_user_model: Any
) -> None:
    staff = django_user_model.objects.create_user("hooks", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="_receiver"))
    grant(staff, "viewer", cluster="teams", namespace="team-a")
    client = Client()
    client.force_login(staff)

    page = client.get("/admin/policies/receiver/").content.decode()
    staff.user_permissions.add(*Permission.objects.filter(codename="view_delivery"))
    for name, receiver in receivers.items():
        Delivery.objects.create(receiver=receiver, event_id=f"event-of-{name}", event="assertion.failing",
                                cluster_name="teams", payload={}, next_attempt_at=timezone.now())  # fmt: skip
    log = client.get("/admin/policies/delivery/").content.decode()

    assert "team-a-hook" in page
    assert "team-star-hook" not in page
    assert "whole-hook" not in page
    assert ("team-a-hook" in log, "team-star-hook" in log, "whole-hook" in log) == (True, False, False)


def test_a_receiver_is_not_sent_a_cluster_scope_failure_that_names_another_teams_objects(
    cluster: Cluster, receivers: dict[str, Receiver]
) -> None:
    """notShadowed records a ClusterServingRuntime's failure at cluster scope ("") with the rows
    it ranks in, of every namespace (matching.policy.evaluate): the Policies page hides it from a
    team-a reader (its objects are not all readable); its receiver is not sent it either."""
    shadowed = Assertion("everywhere", "never-shadowed", "notShadowed", "warning", Subjects())
    failures = [
        Failure("ServingRuntime team-a/a-rt", "ServingRuntime team-a/a-rt matches 1 row(s) but OME never picks it",
                None, (("ServingRuntime", "team-a", "a-rt"), ("ClusterBaseModel", "", "shared-llama")), "team-a"),
        Failure("ClusterServingRuntime wide-rt", "ClusterServingRuntime wide-rt matches 2 row(s) but OME never picks it",
                "ServingRuntime team-b/team-b-rt (score 9) ranks first for BaseModel team-b/secret in team-b",
                (("ClusterServingRuntime", "", "wide-rt"), ("BaseModel", "team-b", "secret")), ""),
    ]  # fmt: skip
    state = AssertionState(since=timezone.now(), inventory_version=1, causes=[])
    event = assertion_event(cluster, state, Outcome(shadowed, 3, failures))

    payload = payload_for(receivers["team-a-hook"], event)

    assert [item["subject"] for item in payload["failures"]] == ["ServingRuntime team-a/a-rt"]
    assert payload["failuresTotal"] == 1
    assert "team-b" not in json.dumps(payload)
    whole = payload_for(receivers["whole-hook"], event)
    assert [item["subject"] for item in whole["failures"]] == [failure.subject for failure in failures]
    assert "keys" not in json.dumps(whole)
