"""Behaviour profiles for named runtimes and InferenceServices: U4 (lookup by kind), U5 (the
advisory), U7 (spec.model.kind) and U9 (inheritance), with cases from upstream's own tests."""

from __future__ import annotations

from typing import Any

import pytest

import matching

OLD, NEW = "17b77eda", matching.NEWEST_BEHAVIOUR
SVC = ("InferenceService", "default", "test-isvc")


def outcome(*objects: dict[str, Any], behaviour: str = NEW) -> matching.IsvcOutcome:
    grid = matching.grid(
        [o for o in objects if "BaseModel" in o["kind"]],
        [o for o in objects if "ServingRuntime" in o["kind"]],
        [o for o in objects if o["kind"] == "InferenceService"],
        behaviour=behaviour,
    )
    (service,) = grid.isvcs.values()
    return matching.evaluate_isvc(grid, service)


def service(k, *, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return k.isvc("test-isvc", namespace=namespace, **spec)


# --- U4 --------------------------------------------------------------------------------------------
# TestValidateRuntimeErrorPaths, sgl-project/ome pkg/runtimeselector/validate_runtime_paths_test.go
# at 9df64e3ec8fb2af352378aba47c3e7785c68d87c.


def _collision(k) -> list[dict[str, Any]]:
    return [
        k.sr("rt-collide", {"modelFormat": k.ref("safetensors")}, namespace="default"),
        k.csr("rt-collide", {"modelFormat": k.ref("tensorrt")}),
    ]


def test_u4_a_declared_cluster_kind_validates_the_cluster_runtime_on_a_name_collision(k) -> None:
    model_obj = k.model("m", modelFormat=k.ref("safetensors"))
    declaring = service(k, runtime={"name": "rt-collide", "kind": "ClusterServingRuntime"})
    bare = service(k, runtime={"name": "rt-collide"})

    error = matching.validate("rt-collide", model_obj, _collision(k), declaring)

    assert error is not None
    assert "not in supported formats" in error
    assert matching.validate("rt-collide", model_obj, _collision(k), bare) is None
    assert matching.validate("rt-collide", model_obj, _collision(k), declaring, behaviour=OLD) is None


def test_u4_a_missing_serving_runtime_is_reported_with_its_kind(k) -> None:
    model_obj = k.model("m", modelFormat=k.ref("safetensors"))
    declaring = service(k, namespace="team-a", runtime={"name": "rt-x", "kind": "ServingRuntime"})
    runtimes = [k.csr("rt-x", {"modelFormat": k.ref("safetensors")})]

    newer = matching.validate("rt-x", model_obj, runtimes, declaring)
    older = matching.validate("rt-x", model_obj, runtimes, declaring, behaviour=OLD)

    assert newer == "ServingRuntime rt-x not found in namespace team-a"
    assert older is None  # 17b77eda ignores the kind and finds the cluster runtime
    assert matching.validate("rt-x", model_obj, [], declaring, behaviour=OLD) == (
        "runtime rt-x not found in namespace team-a or at cluster scope"
    )


# --- U5 --------------------------------------------------------------------------------------------
# TestResolveModelAndRuntime_ExplicitRuntimeCompatIsAdvisory, sgl-project/ome
# pkg/webhook/admission/isvc/inference_service_validation_test.go at 14fd903c928bba75daa4e9c1b1deec449236d919.


def _llama_model(k) -> dict[str, Any]:
    return k.model(
        "llama-model", modelArchitecture="llama", modelParameterSize="7B", modelFormat=k.ref("llama", "1.0.0")
    )


def _generic_runtime(k) -> dict[str, Any]:
    entry = {"modelFormat": k.ref("gpt", "1.0.0"), "modelArchitecture": "gpt", "autoSelect": True}
    return k.csr("generic-runtime", entry)


def test_u5_an_incompatible_named_runtime_is_used_anyway_by_newer_ome_only(k) -> None:
    named = service(k, model={"name": "llama-model"}, runtime={"name": "generic-runtime"})

    newer = outcome(_llama_model(k), _generic_runtime(k), named)
    older = outcome(_llama_model(k), _generic_runtime(k), named, behaviour=OLD)

    assert (newer.verdict, newer.behaviour) == (matching.ADVISORY, NEW)
    assert newer.event is not None
    assert newer.event[0] == "RuntimeCompatibilityAdvisory"
    assert "does not declare support for model" in newer.event[1]
    assert "proceeding because the runtime was named explicitly" in newer.event[1]
    assert (older.verdict, older.failure, older.behaviour) == (matching.BLOCKED, "incompatible", OLD)
    assert older.event is not None
    assert older.event[0] == "RuntimeValidationError"


def test_u5_a_missing_named_runtime_blocks_under_both(k) -> None:
    named = service(k, model={"name": "llama-model"}, runtime={"name": "does-not-exist"})
    for behaviour in (OLD, NEW):
        result = outcome(_llama_model(k), named, behaviour=behaviour)
        assert (result.verdict, result.failure) == (matching.BLOCKED, "runtime-not-found")
        assert "not found" in (result.error or "")


def test_u5_auto_selection_with_no_matching_runtime_blocks_under_both(k) -> None:
    auto = service(k, model={"name": "llama-model"})
    for behaviour in (OLD, NEW):
        result = outcome(_llama_model(k), _generic_runtime(k), auto, behaviour=behaviour)
        assert (result.verdict, result.failure) == (matching.BLOCKED, "no-runtime")
    assert outcome(_llama_model(k), _generic_runtime(k), auto).event[0] == "RuntimeNotFound"  # type: ignore[index]
    assert outcome(_llama_model(k), _generic_runtime(k), auto, behaviour=OLD).event[0] == "RuntimeSelectionError"  # type: ignore[index]


# --- U7 --------------------------------------------------------------------------------------------
# TestPrimaryModelReferenceUsesExplicitScope and TestPrimaryModelExplicitKindDoesNotFallBack,
# ome-projects/ome pkg/controller/v1beta1/inferenceservice/utils/model_reference_test.go at
# 485b79330645e549899bf5bbe65599e8092db0e9.

# U7 is the strict-kind proposal's rule (485b7933, profile 078c923f), not v1.3's (spec 10.7).
STRICT = "078c923f"
NAMESPACED = ("BaseModel", "models", "same-name")
CLUSTER = ("ClusterBaseModel", "", "same-name")


@pytest.mark.parametrize(
    ("reference", "wanted", "error"),
    [
        ({"kind": "BaseModel"}, NAMESPACED, None),
        ({"kind": "ClusterBaseModel"}, CLUSTER, None),
        ({"kind": "ClusterBaseModel", "apiGroup": "ome.io"}, CLUSTER, None),
        ({}, NAMESPACED, None),
        ({"kind": "", "apiGroup": ""}, NAMESPACED, None),
        ({"kind": "OtherKind"}, None, 'unsupported Model kind "OtherKind"'),
        ({"kind": "BaseModel", "apiGroup": "other.io"}, None, 'unsupported Model API group "other.io"'),
    ],
)
def test_u7_the_model_reference_uses_its_explicit_scope(k, reference, wanted, error) -> None:
    both = [
        k.model("same-name", namespace="models", modelFormat=k.ref("x")),
        k.model("same-name", modelFormat=k.ref("y")),
    ]
    svc = service(k, namespace="models", model={"name": "same-name", **reference})

    newer = outcome(*both, svc, behaviour=STRICT)
    older = outcome(*both, svc, behaviour=OLD)

    assert (newer.model, newer.error if wanted is None else None) == (wanted, error)
    assert older.model == NAMESPACED  # 17b77eda ignores kind and group: the namespace first


@pytest.mark.parametrize("kind", ["BaseModel", "ClusterBaseModel", ""])
@pytest.mark.parametrize("local", [False, True])
def test_u7_an_explicit_kind_does_not_fall_back(k, kind, local) -> None:
    only = k.model("model", namespace="models" if local else None, modelFormat=k.ref("x"))
    svc = service(k, namespace="models", model={"name": "model", "kind": kind})

    result = outcome(only, svc, behaviour=STRICT)

    missing = (kind == "BaseModel" and not local) or (kind == "ClusterBaseModel" and local)
    assert (result.failure == "model-not-found") is missing
    assert outcome(only, svc, behaviour=OLD).failure != "model-not-found"


# --- U9 --------------------------------------------------------------------------------------------
# sgl-project/ome pkg/runtimeinheritance/merge_test.go and resolve.go at
# 865bebfdb0e81f9e2d30be100ecd6bee75e631c4 (the child wins on what it sets, the parent fills
# the gaps, plain lists are replaced whole), fetcher.go at 078c923f (named runtimes only).


def _child(k, parent: str, **spec: Any) -> dict[str, Any]:
    runtime = k.csr("child", **spec)
    runtime["metadata"]["annotations"] = {"ome.io/inherit-from": parent}
    return runtime


def _named_child(k) -> dict[str, Any]:
    return service(k, model={"name": "m"}, runtime={"name": "child"})


def test_u9_a_named_child_inherits_what_it_does_not_set(k) -> None:
    # TestMerge_ScalarChildUnsetTakesParent: the parent's disabled: true reaches a child that sets nothing.
    parent = k.csr("profile", {"modelFormat": k.ref("x")}, disabled=True)
    model_obj = k.model("m", modelFormat=k.ref("x"))

    newer = outcome(model_obj, parent, _child(k, "profile"), _named_child(k))
    older = outcome(model_obj, parent, _child(k, "profile"), _named_child(k), behaviour=OLD)

    assert (newer.verdict, newer.failure, newer.error) == (
        matching.BLOCKED,
        "runtime-disabled",
        "cluster-scoped runtime child is disabled",
    )
    # 17b77eda reads the child alone: no formats, so it blocks on the format instead.
    assert (older.verdict, older.failure) == (matching.BLOCKED, "incompatible")


def test_u9_the_child_wins_on_what_it_sets(k) -> None:
    # TestMerge_ScalarChildWins and TestMerge_PlainListChildReplaces.
    parent = k.csr("profile", {"modelFormat": k.ref("other")}, disabled=True, modelSizeRange={"min": "1B"})
    child = _child(k, "profile", disabled=False, supportedModelFormats=[{"modelFormat": k.ref("x")}])
    model_obj = k.model("m", modelFormat=k.ref("x"), modelParameterSize="7B")

    result = outcome(model_obj, parent, child, _named_child(k))

    assert (result.verdict, result.runtime) == (matching.NAMED, ("ClusterServingRuntime", "", "child"))
    small = k.model("m", modelFormat=k.ref("x"), modelParameterSize="500M")
    too_small = outcome(small, parent, child, _named_child(k))
    assert "outside supported range [1B, inf)" in (too_small.error or "")  # the parent's bound fills the gap


@pytest.mark.parametrize(
    ("runtimes", "error"),
    [
        pytest.param(
            lambda k: [_child(k, "gone")], 'inherit-from parent "gone" not found (chain so far: [child])', id="missing"
        ),
        pytest.param(
            lambda k: [
                _child(k, "loop"),
                {**k.csr("loop"), "metadata": {"name": "loop", "annotations": {"ome.io/inherit-from": "child"}}},
            ],
            "inheritance cycle detected: [child loop child]",
            id="cycle",
        ),
    ],
)
def test_u9_a_broken_chain_blocks_the_named_runtime(k, runtimes, error) -> None:
    result = outcome(k.model("m", modelFormat=k.ref("x")), *runtimes(k), _named_child(k))

    assert (result.verdict, result.error) == (matching.BLOCKED, error)


def test_u9_a_chain_longer_than_5_blocks(k) -> None:
    chain = [_child(k, "p1")]
    for index in range(1, 6):
        parent = k.csr(f"p{index}", {"modelFormat": k.ref("x")})
        parent["metadata"]["annotations"] = {"ome.io/inherit-from": f"p{index + 1}"}
        chain.append(parent)

    result = outcome(k.model("m", modelFormat=k.ref("x")), *chain, _named_child(k))

    assert result.error == "inheritance chain exceeds max depth 5 (chain: [child p1 p2 p3 p4])"


def test_u9_auto_selection_reads_each_runtime_alone(k) -> None:
    parent = k.csr("profile", {"modelFormat": k.ref("x"), "autoSelect": True}, disabled=True)
    child = _child(k, "profile", supportedModelFormats=[{"modelFormat": k.ref("x"), "autoSelect": True}])

    result = outcome(k.model("m", modelFormat=k.ref("x")), parent, child, service(k, model={"name": "m"}))

    assert (result.verdict, result.runtime) == (matching.SELECTED, ("ClusterServingRuntime", "", "child"))


# --- ValidateRuntime checks the model before it looks the runtime up -----------------------------
# ValidateRuntime calls validateModel before fetcher.GetRuntime: sgl-project/ome
# pkg/runtimeselector/selector.go at 17b77eda (HEAD of the fetched snapshot) and at
# 078c923f467715e273d6b3adfee5220e53d38ecf. The controller reports any ValidateRuntime error
# other than a RuntimeNotFoundError as a RuntimeValidationError, "Runtime %s does not support
# model %s: %v" (sgl-project/ome pkg/controller/v1beta1/inferenceservice/controller.go at
# 17b77eda; ome-projects/ome controller.go at 0df64b7268e8c92fc1e5ec1188cc1e25656f51a5, the
# `default:` branch), so a model without a format is the error, whatever the runtime.

FORMAT_REQUIRED = "invalid model specification: modelFormat.name: model format name is required"


@pytest.mark.parametrize("behaviour", [OLD, NEW])
def test_a_model_without_a_format_is_the_error_even_when_the_named_runtime_is_missing(k, behaviour) -> None:
    named = service(k, model={"name": "m"}, runtime={"name": "does-not-exist"})

    result = outcome(k.model("m"), named, behaviour=behaviour)

    assert (result.verdict, result.failure, result.error) == (matching.BLOCKED, "model-invalid", FORMAT_REQUIRED)
    assert result.event == (
        "RuntimeValidationError",
        f"Runtime does-not-exist does not support model m: {FORMAT_REQUIRED}",
    )


def test_a_model_without_a_format_is_the_error_before_a_broken_chain(k) -> None:
    result = outcome(k.model("m"), _child(k, "gone"), _named_child(k))

    assert (result.failure, result.error) == ("model-invalid", FORMAT_REQUIRED)
    assert result.event == ("RuntimeValidationError", f"Runtime child does not support model m: {FORMAT_REQUIRED}")
