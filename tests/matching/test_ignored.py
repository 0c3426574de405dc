"""`matching.ome_ignores`: InferenceServices OME admits (or admitted) but will not (re)render, and
the `notIgnored` policy assertion. Each expectation comes from the ome-docs page or Go file cited:

- wrong kind, shadowing BaseModel: ome-docs `src/lib/content/concepts/models/base-models.md` and
  `guides/troubleshoot/troubleshoot-an-inferenceservice.md` ("OME admits the InferenceService but
  doesn't create or update its serving workload ... the controller's logs show `Failed to get
  referenced ClusterBaseModel`").
- cross-namespace PVC: ome-projects/ome `pkg/webhook/admission/isvc/inference_service_validation.go`
  at 58a57f25, `validateClusterBaseModelPVCNamespace`.
- broken chain, disabled runtime: `guides/deploy-models/reference-a-runtime-explicitly.md` and
  `concepts/runtimes/runtime-inheritance.md`; disabled model: `concepts/models/base-models.md`.
- a named runtime without classes: `reference/matching/runtime-accelerator-class-matching.md`,
  "A named runtime without classes drops the class": "A component gets a class only when its
  runtime lists at least one. If the runtime that you name lists none, OME ignores the class names
  and policies that the InferenceService sets, and records no event. If it lists some, the
  component gets the class that the InferenceService names, even one the runtime doesn't list."
  The same page: "The `ome.io/accelerator-class` annotation counts only for matching: it gives no
  component a class"; "A runtime that you name is checked with what it inherits".
"""

from __future__ import annotations

from typing import Any

import pytest

import matching
from matching.policy import Assertion, Subjects, Verdicts, evaluate

AUTO = {"autoSelect": True}
H100 = "nvidia-h100"


def judged(*objects: dict[str, Any], behaviour: str = "v1.3") -> tuple[matching.IsvcOutcome, matching.Ignored | None]:
    found = matching.objects_of([(obj, matching.parse_object(obj)) for obj in objects], behaviour=behaviour)
    (service,) = found.isvcs.values()
    outcome = matching.evaluate_isvc(found.grid, service)
    return outcome, matching.ome_ignores(outcome, service, found.grid)


def runtime(k, name: str = "rt", **spec: Any) -> dict[str, Any]:
    return k.csr(name, {"modelFormat": k.ref("safetensors"), **AUTO}, **spec)


def model(k, namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    spec.setdefault("modelFormat", k.ref("safetensors"))
    return k.model("m", namespace=namespace, **spec)


def test_a_deployed_service_is_not_ignored(k) -> None:
    outcome, ignored = judged(model(k), runtime(k), k.isvc())

    assert outcome.verdict == matching.SELECTED
    assert ignored is None


def test_the_wrong_kind_is_ignored_with_the_controllers_log_line_and_the_fix(k) -> None:
    _outcome, ignored = judged(model(k, "team"), runtime(k), k.isvc(model={"name": "m"}))

    assert ignored is not None
    assert ignored.reason == "wrong-kind"
    assert ignored.text.endswith(": Failed to get referenced ClusterBaseModel")
    assert "records no event" in ignored.text
    assert ignored.fix == "set spec.model.kind: BaseModel"


def test_a_shadowing_base_model_is_ignored(k) -> None:
    service = k.isvc(model={"name": "m", "kind": "ClusterBaseModel"})

    _outcome, ignored = judged(model(k, "team"), model(k), runtime(k), service)

    assert ignored is not None
    assert ignored.reason == "shadowed"


def test_a_pvc_cluster_base_model_of_another_namespace_is_ignored_with_the_webhooks_text(k) -> None:
    pvc = model(k, storage={"storageUri": "pvc://models:weights/m"})

    outcome, ignored = judged(pvc, runtime(k), k.isvc(model={"name": "m", "kind": "ClusterBaseModel"}))

    assert (outcome.verdict, outcome.failure, outcome.event) == (matching.BLOCKED, "pvc-namespace", None)
    assert ignored is not None
    assert ignored.reason == "pvc-namespace"
    assert ignored.text.endswith(
        'Either move the InferenceService to namespace "models" or replicate the PVC into namespace "team".'
    )


def test_a_disabled_model_is_ignored(k) -> None:
    _outcome, ignored = judged(
        model(k, disabled=True), runtime(k), k.isvc(model={"name": "m", "kind": "ClusterBaseModel"})
    )

    assert ignored is not None
    assert ignored.reason == "model-disabled"
    assert ignored.fix == "enable model m"


def test_a_disabled_named_runtime_is_ignored(k) -> None:
    service = k.isvc(model={"name": "m", "kind": "ClusterBaseModel"}, runtime={"name": "rt"})

    _outcome, ignored = judged(model(k), runtime(k, disabled=True), service)

    assert ignored is not None
    assert ignored.reason == "runtime-disabled"
    assert ignored.fix == "enable runtime rt or name another runtime"


def test_a_broken_inheritance_chain_is_ignored(k) -> None:
    child = runtime(k, "child")
    child["metadata"]["annotations"] = {"ome.io/inherit-from": "ghost"}
    service = k.isvc(model={"name": "m", "kind": "ClusterBaseModel"}, runtime={"name": "child"})

    _outcome, ignored = judged(model(k), child, service)

    assert ignored is not None
    assert ignored.reason == "runtime-chain"
    assert "ghost" in ignored.text


@pytest.mark.parametrize(
    ("field", "spec"),
    [
        ("spec.acceleratorSelector.acceleratorClass: nvidia-h100", {"acceleratorSelector": {"acceleratorClass": H100}}),
        ("spec.acceleratorSelector.policy: BestFit", {"acceleratorSelector": {"policy": "BestFit"}}),
        (
            "spec.engine.acceleratorOverride.acceleratorClass: nvidia-h100",
            {"engine": {"minReplicas": 1, "acceleratorOverride": {"acceleratorClass": H100}}},
        ),
    ],
    ids=["selector class", "selector policy", "engine override"],
)
def test_a_named_runtime_without_classes_drops_the_services_class(k, field: str, spec: dict[str, Any]) -> None:
    service = k.isvc(model={"name": "m", "kind": "ClusterBaseModel"}, runtime={"name": "rt"}, **spec)

    outcome, ignored = judged(model(k), runtime(k), service)

    assert outcome.verdict in (matching.NAMED, matching.ADVISORY)  # OME uses the runtime it is named
    assert ignored is not None
    assert ignored.reason == "accelerator-dropped"
    assert (
        ignored.text
        == f"ClusterServingRuntime rt lists no accelerator classes, so OME ignores {field} and records no event"
    )


def test_the_drop_fix_names_the_class_and_the_runtime(k) -> None:
    service = k.isvc(
        model={"name": "m", "kind": "ClusterBaseModel"},
        runtime={"name": "rt"},
        acceleratorSelector={"acceleratorClass": H100},
    )

    _outcome, ignored = judged(model(k), runtime(k), service)

    assert ignored is not None
    assert (
        ignored.fix == "add nvidia-h100 to spec.acceleratorRequirements.acceleratorClasses of ClusterServingRuntime rt"
    )


def test_a_named_runtime_that_lists_some_class_keeps_the_services_class(k) -> None:
    # "If it lists some, the component gets the class that the InferenceService names, even one
    # the runtime doesn't list."
    listed = runtime(k, acceleratorRequirements={"acceleratorClasses": ["nvidia-a100"]})
    service = k.isvc(model={"name": "m", "kind": "ClusterBaseModel"}, runtime={"name": "rt"},
                     acceleratorSelector={"acceleratorClass": H100})  # fmt: skip

    _outcome, ignored = judged(model(k), listed, service)

    assert ignored is None


def test_the_classes_a_named_runtime_inherits_count(k) -> None:
    parent = runtime(k, "parent", acceleratorRequirements={"acceleratorClasses": [H100]})
    child = runtime(k, "child")
    child["metadata"]["annotations"] = {"ome.io/inherit-from": "parent"}
    service = k.isvc(model={"name": "m", "kind": "ClusterBaseModel"}, runtime={"name": "child"},
                     acceleratorSelector={"acceleratorClass": H100})  # fmt: skip

    _outcome, ignored = judged(model(k), parent, child, service)

    assert ignored is None


def test_the_annotation_gives_no_component_a_class_so_nothing_is_dropped(k) -> None:
    service = k.isvc(
        model={"name": "m", "kind": "ClusterBaseModel"},
        runtime={"name": "rt"},
        annotations={"ome.io/accelerator-class": H100},
    )

    _outcome, ignored = judged(model(k), runtime(k), service)

    assert ignored is None


def test_an_auto_selected_runtime_is_never_one_that_drops_the_class(k) -> None:
    # Auto-selection rejects a runtime without the class (the page's rule table), so the service
    # is blocked (no runtime), not silently given no class.
    service = k.isvc(model={"name": "m", "kind": "ClusterBaseModel"}, acceleratorSelector={"acceleratorClass": H100})

    outcome, ignored = judged(model(k), runtime(k), service)

    assert (outcome.verdict, outcome.failure, ignored) == (matching.BLOCKED, "no-runtime", None)


def test_every_reason_is_listed() -> None:
    assert matching.IGNORED_REASONS == (
        "wrong-kind",
        "shadowed",
        "pvc-namespace",
        "runtime-chain",
        "model-disabled",
        "runtime-disabled",
        "accelerator-dropped",
    )


def test_the_not_ignored_assertion_fails_on_each_ignored_service_with_its_fix(k) -> None:
    assertion = Assertion("team", "nothing-ignored", "notIgnored", "error", Subjects(namespaces=("team",)))
    found = [
        model(k, "team"),
        runtime(k),
        k.isvc("wrong-kind", model={"name": "m"}),
        k.isvc("right-kind", model={"name": "m", "kind": "BaseModel"}),
    ]
    verdicts = Verdicts(matching.objects_of([(obj, matching.parse_object(obj)) for obj in found]))

    (outcome,) = evaluate([assertion], verdicts)

    assert (outcome.checked, outcome.passed) == (2, False)
    (failure,) = outcome.failures
    assert failure.subject == "InferenceService team/wrong-kind"
    assert failure.message == (
        "InferenceService team/wrong-kind: OME silently ignores it (wrong-kind); fix: set spec.model.kind: BaseModel"
    )
    assert failure.reason is not None
    assert failure.reason.endswith("Failed to get referenced ClusterBaseModel")
