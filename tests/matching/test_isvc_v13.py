"""The v1.3 profile at the InferenceService level: the rules ome-docs states for the OME users are
about to run (spec 10.7), each test citing the page or the Go file its expectation comes from.

- ome-docs `src/lib/content/concepts/models/base-models.md` (pinned along OME's main):
  "`spec.model.kind`, which defaults to `ClusterBaseModel` ... With the wrong kind, OME admits the
  InferenceService but doesn't create or update its serving workload"; "When both kinds share a
  name, InferenceServices in the BaseModel's namespace get the BaseModel, even when they ask for
  the ClusterBaseModel"; pvc: "Whatever the kind, only InferenceServices in the claim's namespace
  can use it".
- ome-docs `src/lib/content/guides/troubleshoot/troubleshoot-an-inferenceservice.md`, "An
  InferenceService that serves a BaseModel gets no pods": "The webhook admits it, but OME leaves
  the serving workload as it is and records no event or condition ... the controller's logs show
  `Failed to get referenced ClusterBaseModel`. The reverse, `kind: BaseModel` for a
  ClusterBaseModel, logs `Failed to get referenced BaseModel`"; "The command [explain] finds the
  model whatever `spec.model.kind` says".
- ome-projects/ome `pkg/webhook/admission/isvc/inference_service_validation.go` at 58a57f25:
  `validateModelExists` (GetBaseModel, namespace first) then `validateClusterBaseModelPVCNamespace`.
"""

from __future__ import annotations

from typing import Any

import pytest

import matching

from .test_isvc_newest import outcome

V13, OLD = "v1.3", "17b77eda"
AUTO = {"autoSelect": True}
BASE = ("BaseModel", "team", "m")
CLUSTER = ("ClusterBaseModel", "", "m")
PVC_TEXT = (
    'ClusterBaseModel "m" references PVC in namespace "models", but InferenceService is in namespace "team"; '
    "Kubernetes does not allow pods to mount PVCs from another namespace. "
    'Either move the InferenceService to namespace "models" or replicate the PVC into namespace "team".'
)


def runtime(k) -> dict[str, Any]:
    return k.csr("rt", {"modelFormat": k.ref("safetensors"), **AUTO})


def model(k, namespace: str | None = None, uri: str = "hf://org/m") -> dict[str, Any]:
    return k.model("m", namespace=namespace, modelFormat=k.ref("safetensors"), storage={"storageUri": uri})


# --- the wrong kind: admitted, a runtime chosen, then nothing -------------------------------------


@pytest.mark.parametrize("reference", [{}, {"kind": "ClusterBaseModel"}], ids=["kind left out", "ClusterBaseModel"])
def test_a_base_model_referenced_as_a_cluster_base_model_is_silent(k, reference) -> None:
    service = k.isvc(model={"name": "m", **reference})

    result = outcome(model(k, "team"), runtime(k), service)

    assert (result.verdict, result.failure, result.event) == (matching.SILENT, "wrong-kind", None)
    assert result.error == "Failed to get referenced ClusterBaseModel"
    assert (result.runtime, result.webhook_model, result.model) == (("ClusterServingRuntime", "", "rt"), BASE, BASE)
    assert result.fix == "set spec.model.kind: BaseModel"
    assert not result.ok
    assert result.label == "admitted, silently not deployed"


def test_kind_base_model_for_a_cluster_base_model_logs_the_base_model(k) -> None:
    service = k.isvc(model={"name": "m", "kind": "BaseModel"})

    result = outcome(model(k), runtime(k), service)

    assert (result.verdict, result.failure, result.error) == (
        matching.SILENT,
        "wrong-kind",
        "Failed to get referenced BaseModel",
    )
    assert (result.webhook_model, result.fix) == (CLUSTER, "set spec.model.kind: ClusterBaseModel")


def test_any_other_kind_is_looked_up_as_a_cluster_base_model(k) -> None:
    # ome-projects/ome `pkg/controller/v1beta1/inferenceservice/reconcilers/modelconfig/
    # modelconfig_reconciler.go`, getBaseModelSpec: `if modelKind == "BaseModel" {...} else {`
    # Get the ClusterBaseModel, logging "Failed to get referenced ClusterBaseModel" `}`; the CRD's
    # kind has a default and no enum, and admission ignores the kind.
    service = k.isvc(model={"name": "m", "kind": "basemodel"})

    result = outcome(model(k, "team"), runtime(k), service)

    assert (result.verdict, result.failure, result.error) == (
        matching.SILENT,
        "wrong-kind",
        "Failed to get referenced ClusterBaseModel",
    )
    assert result.fix == "set spec.model.kind: BaseModel"


def test_a_named_runtime_is_accepted_then_nothing_happens_either(k) -> None:
    service = k.isvc(model={"name": "m"}, runtime={"name": "rt"})

    result = outcome(model(k, "team"), runtime(k), service)

    assert (result.verdict, result.runtime, result.runtime_named, result.event) == (
        matching.SILENT,
        ("ClusterServingRuntime", "", "rt"),
        True,
        None,
    )


@pytest.mark.parametrize(("namespace", "kind"), [("team", "BaseModel"), (None, "ClusterBaseModel")])
def test_the_right_kind_deploys(k, namespace, kind) -> None:
    result = outcome(model(k, namespace), runtime(k), k.isvc(model={"name": "m", "kind": kind}))

    assert (result.verdict, result.failure, result.ok) == (matching.SELECTED, None, True)


def test_a_blocked_service_stays_blocked_whatever_its_kind(k) -> None:
    # Nothing to select from: the controller records RuntimeNotFound before model-config runs.
    result = outcome(model(k, "team"), k.isvc(model={"name": "m"}))

    assert (result.verdict, result.failure) == (matching.BLOCKED, "no-runtime")


def test_17b77eda_ignores_the_kind(k) -> None:
    result = outcome(model(k, "team"), runtime(k), k.isvc(model={"name": "m"}), behaviour=OLD)

    assert (result.verdict, result.model) == (matching.SELECTED, BASE)


# --- a BaseModel shadows the ClusterBaseModel of its name ------------------------------------------


def test_a_base_model_shadows_the_cluster_base_model_asked_for(k) -> None:
    service = k.isvc(model={"name": "m", "kind": "ClusterBaseModel"})

    result = outcome(model(k, "team"), model(k), runtime(k), service)

    assert (result.verdict, result.failure, result.event) == (matching.SILENT, "shadowed", None)
    assert (result.model, result.webhook_model) == (BASE, BASE)  # the service gets the BaseModel
    assert "give the two kinds different names" in (result.fix or "")


def test_in_another_namespace_the_cluster_base_model_is_not_shadowed(k) -> None:
    service = k.isvc(namespace="other", model={"name": "m", "kind": "ClusterBaseModel"})

    result = outcome(model(k, "team"), model(k), runtime(k), service)

    assert (result.verdict, result.model) == (matching.SELECTED, CLUSTER)


# --- a pvc:// ClusterBaseModel is for its claim's namespace only -----------------------------------


def test_the_webhook_refuses_a_cluster_base_model_on_another_namespaces_claim(k) -> None:
    result = outcome(model(k, uri="pvc://models:weights/m"), runtime(k), k.isvc(model={"name": "m"}))

    assert (result.verdict, result.failure, result.event, result.error) == (
        matching.BLOCKED,
        "pvc-namespace",
        None,
        PVC_TEXT,
    )
    assert result.fix == "move the InferenceService to namespace models or replicate the PVC into namespace team"


@pytest.mark.parametrize(
    "uri",
    [
        "pvc://team:weights/m",  # the service's own namespace
        "pvc://weights/m",  # no namespace in the URI
        "pvc://models:weights",  # ParsePVCStorageURI refuses it (no sub-path): the webhook lets it pass
        "pvc://Models:weights/m",  # not a namespace (isValidNamespace): refused by the parser, passed
        "pvc://models:weights:v2/m",  # "multiple colons not allowed in namespace:pvc-name": refused, passed
        "hf://models:weights/m",
    ],
)
def test_other_storage_passes_the_pvc_rule(k, uri) -> None:
    result = outcome(model(k, uri=uri), runtime(k), k.isvc(model={"name": "m", "kind": "ClusterBaseModel"}))

    assert result.failure != "pvc-namespace"


def test_a_base_model_on_a_claim_is_never_refused(k) -> None:
    # "namespaced BaseModel => same-namespace by construction; skip".
    result = outcome(model(k, "team", uri="pvc://models:weights/m"), runtime(k), k.isvc(model={"name": "m"}))

    assert result.failure != "pvc-namespace"


def test_the_pvc_rule_applies_whatever_the_kind(k) -> None:
    # The webhook's GetBaseModel ignores spec.model.kind: kind BaseModel reaches the ClusterBaseModel too.
    service = k.isvc(model={"name": "m", "kind": "BaseModel"})

    result = outcome(model(k, uri="pvc://models:weights/m"), runtime(k), service)

    assert (result.verdict, result.failure) == (matching.BLOCKED, "pvc-namespace")


def test_pvc_namespace_denial_says_per_namespace_where_a_model_is_unusable(k) -> None:
    parsed = matching.parse_model(model(k, uri="pvc://models:weights/m"))

    assert matching.pvc_namespace_denial(parsed, "team") == PVC_TEXT
    assert matching.pvc_namespace_denial(parsed, "models") is None
    assert matching.pvc_namespace_denial(parsed, "team", behaviour=OLD) is None


# --- the upgrade diff names the behaviour --------------------------------------------------------


def test_the_upgrade_diff_names_each_behaviour_that_changes_a_verdict(k) -> None:
    objects = [
        model(k, "team"),
        k.model("shared", namespace="team", modelFormat=k.ref("safetensors")),
        k.model("shared", modelFormat=k.ref("safetensors")),
        k.model("pvc", modelFormat=k.ref("safetensors"), storage={"storageUri": "pvc://models:weights/m"}),
        runtime(k),
        k.isvc("wrong-kind", model={"name": "m"}),
        k.isvc("shadowed", model={"name": "shared", "kind": "ClusterBaseModel"}),
        k.isvc("on-pvc", model={"name": "pvc"}),
    ]
    for release in ("17b77eda", "v1.2.2"):
        grid = matching.grid(
            [o for o in objects if "BaseModel" in o["kind"]],
            [o for o in objects if "ServingRuntime" in o["kind"]],
            [o for o in objects if o["kind"] == "InferenceService"],
            behaviour=release,
        )

        found = {
            item.isvc[2]: (item.before, item.after, item.causes)
            for item in matching.behaviour_diff(grid, V13)
            if item.subject == "isvc" and item.field == "verdict" and item.isvc is not None
        }

        assert found == {
            "wrong-kind": ("selected", "silent", ("U7c",)),
            "shadowed": ("selected", "silent", ("U7c",)),
            "on-pvc": ("selected", "blocked", ("PVC",)),
        }
