"""matching.behaviour_diff: what another OME decides differently, and which behaviour causes it."""

from __future__ import annotations

from typing import Any

import matching

OLD, NEW = "17b77eda", matching.NEWEST_BEHAVIOUR
LLAMA = ("ClusterBaseModel", "", "llama-8b")
RT = ("ClusterServingRuntime", "", "rt")


def diff(objects: list[dict[str, Any]], base: str = OLD, other: str = NEW) -> list[matching.Difference]:
    grid = matching.grid(
        [o for o in objects if "BaseModel" in o["kind"]],
        [o for o in objects if "ServingRuntime" in o["kind"]],
        [o for o in objects if o["kind"] == "InferenceService"],
        behaviour=base,
    )
    return matching.behaviour_diff(grid, other)


def by_field(found: list[matching.Difference]) -> dict[tuple[str, str], matching.Difference]:
    return {(item.subject, item.field): item for item in found}


def test_the_same_profile_changes_nothing(k) -> None:
    assert (
        diff([k.llama(modelParameterSize="8B"), k.csr("rt", k.llama_entry(), modelSizeRange={"min": "1B"})], OLD, OLD)
        == []
    )


def test_a_half_open_range_stops_crashing_after_the_upgrade(k) -> None:
    found = by_field(
        diff([k.llama(modelParameterSize="8B"), k.csr("rt", k.llama_entry(), modelSizeRange={"min": "1B"})])
    )

    cell = found[("cell", "verdict")]
    assert (cell.model, cell.runtime, cell.before, cell.after, cell.causes) == (LLAMA, RT, False, True, ("U1",))
    assert found[("cell", "error")].before.startswith("OME 17b77eda crashes")  # type: ignore[union-attr]
    assert found[("cell", "error")].after is None
    pick = found[("selection", "pick")]
    assert (pick.before, pick.after, pick.causes, pick.together) == (None, RT, ("U1",), False)
    assert "U1 (newer OME): a modelSizeRange with only one bound works" in pick.explanation
    assert pick.to_dict()["after"] == {"kind": "ClusterServingRuntime", "namespace": "", "name": "rt"}


def test_a_downgrade_names_the_behaviour_it_loses(k) -> None:
    found = by_field(
        diff([k.llama(modelParameterSize="8B"), k.csr("rt", k.llama_entry(), modelSizeRange={"max": "70B"})], NEW, OLD)
    )

    assert found[("selection", "pick")].explanation.startswith("U1 (older OME)")


def test_a_sharded_model_loses_its_runtime_and_score(k) -> None:
    sharded = k.llama(distribution="Sharded")

    found = by_field(diff([sharded, k.csr("rt", k.llama_entry())]))

    verdict, score = found[("cell", "verdict")], found[("cell", "score")]
    assert (verdict.before, verdict.after, verdict.causes) == (True, False, ("U3",))
    assert (score.before, score.after) == (15, None)
    assert "U3" in score.causes
    assert found[("selection", "error")].after.endswith(  # type: ignore[union-attr]
        "no model cache provider is configured for sharded model loading)"
    )


def test_an_inference_service_that_names_a_base_model_without_its_kind(k) -> None:
    # ome-docs src/lib/content/guides/troubleshoot/troubleshoot-an-inferenceservice.md, "An
    # InferenceService that serves a BaseModel gets no pods": the kind defaults to
    # ClusterBaseModel, the webhook admits the service, OME records no event and logs
    # `Failed to get referenced ClusterBaseModel`.
    model_obj = k.llama("llama", namespace="team")
    service = matching.with_crd_defaults(k.isvc(model={"name": "llama"}))  # kind defaults to ClusterBaseModel

    found = by_field(diff([model_obj, k.sr("rt", k.llama_entry()), service]))

    verdict = found[("isvc", "verdict")]
    assert (verdict.isvc, verdict.before, verdict.after, verdict.causes) == (
        ("InferenceService", "team", "svc"),
        "selected",
        "silent",
        ("U7c",),
    )
    assert "only the model-config step honours spec.model.kind" in verdict.explanation
    assert found[("isvc", "error")].after == "Failed to get referenced ClusterBaseModel"


def test_under_the_strict_kind_proposal_the_same_service_is_blocked(k) -> None:
    # ome-projects/ome utils/reconciliation.go at 485b7933 (spec U7): kind ClusterBaseModel looks
    # only for the ClusterBaseModel and fails with the old text and a ModelReconcileError.
    model_obj = k.llama("llama", namespace="team")
    service = matching.with_crd_defaults(k.isvc(model={"name": "llama"}))

    found = by_field(diff([model_obj, k.sr("rt", k.llama_entry()), service], other="078c923f"))

    verdict = found[("isvc", "verdict")]
    assert (verdict.before, verdict.after, verdict.causes) == ("selected", "blocked", ("U7",))
    assert "spec.model.kind decides where the model is looked up" in verdict.explanation
    assert found[("isvc", "error")].after == "No BaseModel or ClusterBaseModel with the name: llama"


def test_nothing_differs_for_objects_no_newer_behaviour_touches(k) -> None:
    assert (
        diff(
            [k.llama(modelParameterSize="8B"), k.csr("rt", k.llama_entry(), modelSizeRange={"min": "1B", "max": "9B"})]
        )
        == []
    )
