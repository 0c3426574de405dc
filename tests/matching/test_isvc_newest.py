"""The newer OME profiles (v1.3, and the strict-kind proposal 078c923f) at the InferenceService level: the seven results of issue
26, each with the upstream code or Go test its expectation comes from (cited at each test).
The 17b77eda profile is unchanged by them, as its conformance tests show."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import matching

from .strategies import runtimes

OLD, NEW = "17b77eda", matching.NEWEST_BEHAVIOUR
# Items 5 and 6 are the strict-kind proposal's (485b7933, profile 078c923f); v1.3 looks the model
# up namespace-first whatever the kind (spec 10.7; its own rules: tests/matching/test_isvc_v13.py).
STRICT = "078c923f"
CHILD = ("ClusterServingRuntime", "", "rt-child")


def outcome(*objects: dict[str, Any], behaviour: str = NEW) -> matching.IsvcOutcome:
    grid = matching.grid(
        [o for o in objects if "BaseModel" in o["kind"]],
        [o for o in objects if "ServingRuntime" in o["kind"]],
        [o for o in objects if o["kind"] == "InferenceService"],
        behaviour=behaviour,
    )
    (service,) = grid.isvcs.values()
    return matching.evaluate_isvc(grid, service)


def safetensors(k, name: str = "m") -> dict[str, Any]:
    return k.model(name, modelFormat=k.ref("safetensors"))


# --- 1. ValidateRuntime applies spec.runtime.kind only to the service's own runtime ----------------
# sgl-project/ome pkg/runtimeselector/selector.go at 078c923f467715e273d6b3adfee5220e53d38ecf,
# ValidateRuntime: `kind := ""; if isvc.Spec.Runtime != nil && isvc.Spec.Runtime.Name ==
# runtimeName { kind = RefKind(isvc.Spec.Runtime) }`; GetRuntime with kind "" looks in the
# namespace first, then at cluster scope (fetcher.go at the same commit).


def test_the_kind_of_another_runtime_does_not_send_validation_to_the_cluster_runtime(k) -> None:
    runtimes = [
        k.sr("rt-c", {"modelFormat": k.ref("safetensors")}, namespace="team-a"),
        k.csr("rt-c", {"modelFormat": k.ref("tensorrt")}),
    ]
    other = k.isvc("svc", namespace="team-a", runtime={"name": "another", "kind": "ClusterServingRuntime"})
    own = k.isvc("svc", namespace="team-a", runtime={"name": "rt-c", "kind": "ClusterServingRuntime"})

    assert matching.validate("rt-c", safetensors(k), runtimes, other) is None
    assert "format name mismatch" in (matching.validate("rt-c", safetensors(k), runtimes, own) or "")


def test_the_serving_runtime_kind_of_another_runtime_does_not_hide_a_cluster_runtime(k) -> None:
    runtimes = [k.csr("rt-x", {"modelFormat": k.ref("safetensors")})]
    other = k.isvc("svc", namespace="team-a", runtime={"name": "another", "kind": "ServingRuntime"})
    own = k.isvc("svc", namespace="team-a", runtime={"name": "rt-x", "kind": "ServingRuntime"})

    assert matching.validate("rt-x", safetensors(k), runtimes, other) is None
    assert (
        matching.validate("rt-x", safetensors(k), runtimes, own) == "ServingRuntime rt-x not found in namespace team-a"
    )


# --- 2. and 3. A broken inheritance chain is not "not found" --------------------------------------
# The chain's error comes back from GetRuntime as it is (sgl-project/ome fetcher.go at 078c923f,
# resolveScope; ome-projects/ome pkg/runtimeselector/fetcher.go at
# a543351b5b64a2b3675a25e5f1517f2f46c3b34f), and is not a *RuntimeNotFoundError, which
# IsRuntimeNotFoundError tests by exact type (sgl-project/ome pkg/runtimeselector/errors.go at
# 078c923f). The controller (ome-projects/ome pkg/controller/v1beta1/inferenceservice/controller.go
# at 0df64b7268e8c92fc1e5ec1188cc1e25656f51a5) then takes the `default:` branch after
# ValidateRuntime (a RuntimeValidationError event, error returned: backoff), or, without
# spec.model, the GetRuntime error branch (a RuntimeFetchError event with the bare error).

CHAIN_ERROR = 'inherit-from parent "ghost" not found (chain so far: [rt-child])'


def rt_child(k) -> dict[str, Any]:
    runtime = k.csr("rt-child", {"modelFormat": k.ref("safetensors")})
    runtime["metadata"]["annotations"] = {"ome.io/inherit-from": "ghost"}
    return runtime


def test_a_named_runtime_whose_parent_is_missing_fails_validation_not_lookup(k) -> None:
    service = k.isvc("svc", model={"name": "llama"}, runtime={"name": "rt-child"})

    result = outcome(safetensors(k, "llama"), rt_child(k), service)

    assert (result.verdict, result.failure, result.error) == (matching.BLOCKED, "runtime-chain", CHAIN_ERROR)
    assert result.event == ("RuntimeValidationError", f"Runtime rt-child does not support model llama: {CHAIN_ERROR}")
    assert result.fix == "fix the ome.io/inherit-from chain of runtime rt-child"


def test_a_named_runtime_whose_parent_is_missing_fails_the_fetch_of_a_service_without_a_model(k) -> None:
    service = k.isvc("svc", model=None, runtime={"name": "rt-child"})

    result = outcome(rt_child(k), service)

    assert (result.verdict, result.failure, result.error) == (matching.BLOCKED, "runtime-chain", CHAIN_ERROR)
    assert result.event == ("RuntimeFetchError", CHAIN_ERROR)


def test_17b77eda_reads_the_child_alone_and_knows_no_chain(k) -> None:
    service = k.isvc("svc", model={"name": "llama"}, runtime={"name": "rt-child"})

    result = outcome(safetensors(k, "llama"), rt_child(k), service, behaviour=OLD)

    assert (result.verdict, result.runtime) == (matching.NAMED, CHILD)


# --- 4. A Sharded model that is not ready yet: waiting, not blocked ------------------------------
# ome-projects/ome controller.go at 0df64b72: after the model is resolved and before any runtime
# lookup, `if baseModel != nil && IsShardedBaseModel(baseModel)`, ShardedBaseModelReady; if not
# ready, a Normal event ModelNotReady (an empty message becomes "sharded BaseModel is not
# ready") and RequeueAfter 5 s. ShardedBaseModelReady in
# ome-projects/ome pkg/controller/v1beta1/inferenceservice/utils/reconciliation.go at
# 485b79330645e549899bf5bbe65599e8092db0e9: no Ready condition -> "model Ready condition is not
# available"; not True -> the condition's message; observedGeneration != generation -> "model
# Ready condition has not observed the latest generation"; else ready.


def sharded(k, *conditions: dict[str, Any], generation: int = 3) -> dict[str, Any]:
    model = k.model("llama", modelFormat=k.ref("safetensors"), distribution="Sharded")
    model["metadata"]["generation"] = generation
    model["status"] = {"conditions": list(conditions)}
    return model


def rt_cache(k) -> dict[str, Any]:
    return k.csr("rt-cache", {"modelFormat": k.ref("safetensors"), "modelCacheProviders": ["model_cache"]})


def naming_rt_cache(k) -> dict[str, Any]:
    return k.isvc("svc", model={"name": "llama"}, runtime={"name": "rt-cache"})


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        pytest.param((), "model Ready condition is not available", id="no-conditions"),
        pytest.param(
            ({"type": "Available", "status": "True", "observedGeneration": 3},),
            "model Ready condition is not available",
            id="other-conditions-only",
        ),
        pytest.param(
            ({"type": "Ready", "status": "False", "message": "loading shards 3/8"},), "loading shards 3/8", id="false"
        ),
        pytest.param(({"type": "Ready", "status": "Unknown"},), "sharded BaseModel is not ready", id="no-message"),
        pytest.param(
            ({"type": "Ready", "status": "True", "observedGeneration": 2},),
            "model Ready condition has not observed the latest generation",
            id="stale",
        ),
    ],
)
def test_a_service_waits_for_a_sharded_model_that_is_not_ready(k, conditions, message) -> None:
    result = outcome(sharded(k, *conditions), rt_cache(k), naming_rt_cache(k))

    assert (result.verdict, result.label, result.failure) == (matching.WAITING, "waiting for the model", None)
    assert (result.error, result.event) == (message, ("ModelNotReady", message))
    assert result.runtime is None  # no runtime is looked up before the model is ready
    assert not result.ok


def test_a_ready_sharded_model_goes_on_to_validation(k) -> None:
    ready = {"type": "Ready", "status": "True", "observedGeneration": 3}

    result = outcome(sharded(k, ready), rt_cache(k), naming_rt_cache(k))

    # No model cache provider can be configured (spec U3), so ValidateRuntime then blocks it.
    assert (result.verdict, result.failure) == (matching.BLOCKED, "sharded")


def test_17b77eda_does_not_wait_for_a_sharded_model(k) -> None:
    result = outcome(sharded(k), rt_cache(k), naming_rt_cache(k), behaviour=OLD)

    assert result.verdict != matching.WAITING


# --- 5. The API group is checked before the kind ---------------------------------------------------
# ModelReferenceKind, ome-projects/ome utils/reconciliation.go at 485b7933: the APIGroup test
# comes first and returns `unsupported Model API group %q`.


def test_a_foreign_api_group_is_refused_before_an_unknown_kind(k) -> None:
    service = k.isvc("svc", model={"name": "m", "kind": "OtherKind", "apiGroup": "other.io"})

    result = outcome(safetensors(k), service, behaviour=STRICT)

    assert (result.verdict, result.failure) == (matching.BLOCKED, "unsupported-group")
    assert result.event == ("ModelReconcileError", 'unsupported Model API group "other.io"')
    assert outcome(safetensors(k), service, behaviour=OLD).failure != "unsupported-group"


@pytest.mark.parametrize(
    ("reference", "fix"),
    [
        pytest.param(
            {"kind": "ClusterBaseModel", "apiGroup": "other.io"},
            "set spec.model.apiGroup to ome.io or leave it out",
            id="group",
        ),
        pytest.param(
            {"kind": "OtherKind"}, "set spec.model.kind to BaseModel or ClusterBaseModel or leave it out", id="kind"
        ),
    ],
)
def test_a_refused_model_reference_is_fixed_in_the_refused_field_not_by_scope(k, reference, fix) -> None:
    # The model exists; no kind reaches it while ModelReferenceKind refuses the reference.
    service = k.isvc("svc", model={"name": "m", **reference})

    result = outcome(safetensors(k), service, behaviour=STRICT)

    assert (result.fix, result.notes) == (fix, ())


# --- 6. kind: BaseModel with only a ClusterBaseModel of that name ----------------------------------
# getModelReferenceWithStatus, ome-projects/ome utils/reconciliation.go at 485b7933: for kind
# BaseModel a failed Get of the BaseModel is returned as it is (`kind == "BaseModel" ||
# !errors.IsNotFound(err)`), i.e. the API server's NotFound, with no ClusterBaseModel fallback;
# TestPrimaryModelExplicitKindDoesNotFallBack (utils/model_reference_test.go, same commit).


def test_kind_base_model_without_the_base_model_is_the_api_servers_not_found(k) -> None:
    service = k.isvc("svc", model={"name": "model", "kind": "BaseModel"})

    result = outcome(k.model("model", modelFormat=k.ref("safetensors")), service, behaviour=STRICT)

    assert (result.verdict, result.failure, result.model) == (matching.BLOCKED, "model-not-found", None)
    assert result.event == ("ModelReconcileError", 'basemodels.ome.io "model" not found')


def test_kind_cluster_base_model_without_it_keeps_the_old_text(k) -> None:
    # Same function: kind ClusterBaseModel skips the BaseModel; the ClusterBaseModel's NotFound
    # falls through to goerrors.New("No BaseModel or ClusterBaseModel with the name: " + name).
    service = k.isvc("svc", namespace="team", model={"name": "model", "kind": "ClusterBaseModel"})

    result = outcome(k.model("model", namespace="team", modelFormat=k.ref("safetensors")), service, behaviour=STRICT)

    assert result.error == "No BaseModel or ClusterBaseModel with the name: model"


# --- The upgrade diff names each behaviour --------------------------------------------------------


def _upgrade(*objects: dict[str, Any], to: str = NEW) -> list[matching.Difference]:
    grid = matching.grid(
        [o for o in objects if "BaseModel" in o["kind"]],
        [o for o in objects if "ServingRuntime" in o["kind"]],
        [o for o in objects if o["kind"] == "InferenceService"],
        behaviour=OLD,
    )
    return [item for item in matching.behaviour_diff(grid, to) if item.subject == "isvc" and item.field == "verdict"]


def test_the_upgrade_diff_says_why_a_service_now_waits_for_its_model(k) -> None:
    auto = {"modelFormat": k.ref("safetensors"), "autoSelect": True}
    service = k.isvc("svc", model={"name": "llama"})

    (item,) = _upgrade(sharded(k), k.csr("rt", auto), service)

    assert (item.before, item.after, item.causes) == (matching.SELECTED, matching.WAITING, ("U3w",))
    assert matching.CHANGES["U3w"] in item.explanation


def test_the_upgrade_diff_blames_inheritance_for_a_broken_chain(k) -> None:
    service = k.isvc("svc", model={"name": "llama"}, runtime={"name": "rt-child"})

    (item,) = _upgrade(safetensors(k, "llama"), rt_child(k), service)

    assert (item.before, item.after, item.causes) == (matching.NAMED, matching.BLOCKED, ("U9",))
    assert "not 'runtime not found'" in item.explanation


@pytest.mark.parametrize(
    ("reference", "words"),
    [
        pytest.param({"kind": "OtherKind", "apiGroup": "other.io"}, "an apiGroup other than ome.io", id="group"),
        pytest.param({"kind": "BaseModel"}, "the API server's NotFound", id="base-model"),
    ],
)
def test_the_upgrade_diff_blames_the_model_reference_for_items_5_and_6(k, reference, words) -> None:
    auto = {"modelFormat": k.ref("safetensors"), "autoSelect": True}
    service = k.isvc("svc", namespace="team", model={"name": "m", **reference})

    (item,) = _upgrade(safetensors(k), k.csr("rt", auto), service, to=STRICT)

    assert (item.before, item.after, item.causes) == (matching.SELECTED, matching.BLOCKED, ("U7",))
    assert words in item.explanation


# --- Readiness is read leniently: OME writes it, and 17b77eda never reads it -------------------------


@pytest.mark.parametrize(
    "status",
    [
        {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": "3"}]},
        {"conditions": "Ready"},
        "ready",
    ],
)
def test_a_malformed_status_reads_as_no_ready_condition_and_leaves_the_model_valid(k, status) -> None:
    # A live cluster cannot hold such a status (metav1.Condition's schema), so only a manifest can:
    # newer OME then waits as for a model without a Ready condition (reconciliation.go @485b7933,
    # ShardedBaseModelReady), and 17b77eda, which never reads status, judges the model as before.
    model = sharded(k, {"type": "Ready", "status": "True", "observedGeneration": 3})
    model["status"] = status
    parsed = matching.parse_model(model)
    assert parsed.ready is None
    model["metadata"]["generation"] = "three"
    assert matching.parse_model(model).generation == 0


# --- "no runtime found" handed over as data (spec 5.4 for the text) ---------------------------------


def test_the_no_runtime_error_is_its_head_and_its_excluded_runtimes(k) -> None:
    runtimes = [k.csr("x-onnx", {"modelFormat": k.ref("onnx")}), k.csr("x-off", {"modelFormat": k.ref("x")})]
    runtimes[1]["spec"]["disabled"] = True

    selection = matching.select(k.model("m", modelFormat=k.ref("x")), runtimes, namespace="team")

    items = "; ".join(f"{name} ({reason})" for name, reason in selection.excluded.items())
    assert selection.error_head == (
        "no runtime found to support model x with format x in namespace team. "
        "Checked 2 runtimes (0 namespace-scoped, 2 cluster-scoped)"
    )
    assert selection.error == f"{selection.error_head}. Excluded runtimes: {items}"
    assert selection.excluded["x-off"] == "runtime is disabled"


# --- Whatever the runtimes, OME waits before it looks for one (controller.go at 0df64b72) ----------

CONDITIONS = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["Ready", "Available"])},
        optional={
            "status": st.sampled_from(["True", "False", "Unknown"]),
            "message": st.text(max_size=8),
            "observedGeneration": st.integers(0, 3),
        },
    ),
    max_size=3,
)


# The `k` fixture only holds factories, so sharing it between examples is safe.
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(conditions=CONDITIONS, generation=st.integers(0, 3), runtime_list=st.lists(runtimes(), max_size=3))
def test_a_not_ready_sharded_model_waits_before_any_runtime_is_looked_up(
    k, conditions: list[dict[str, Any]], generation: int, runtime_list: list[dict[str, Any]]
) -> None:
    model = sharded(k, *conditions, generation=generation)
    service = k.isvc("svc", namespace="team-a", model={"name": "llama"}, runtime={"name": "rt"})
    ready = next((c for c in conditions if c["type"] == "Ready"), None)
    is_ready = ready is not None and ready.get("status") == "True" and ready.get("observedGeneration", 0) == generation

    newer = outcome(model, *runtime_list, service)
    older = outcome(model, *runtime_list, service, behaviour=OLD)

    assert (newer.verdict == matching.WAITING) is not is_ready
    if not is_ready:
        assert (newer.runtime, newer.failure, newer.event) == (None, None, ("ModelNotReady", newer.error))
    assert older.verdict != matching.WAITING
