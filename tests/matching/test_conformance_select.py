"""Conformance: ordering (4.3), selection and its errors (5.1-5.5), quirks Q1, Q3, Q4, Q11,
Q16, Q27-Q29, Q33, and `matching.grid`, through `matching.select` and `matching.validate`.
"""

from __future__ import annotations

import pytest

import matching

NS = "team"


def names(selection) -> list[str]:
    return [m.name for m in selection.compatible]


# --- 4.3 ordering -------------------------------------------------------------------------------


def test_the_higher_score_ranks_first(k):
    low = k.csr("a-low", k.llama_entry(priority=1))
    high = k.csr("z-high", k.llama_entry(priority=2))
    sel = matching.select(k.llama(), [low, high], namespace=NS)
    assert names(sel) == ["z-high", "a-low"]
    assert [m.score for m in sel.compatible] == [30, 15]
    assert sel.selected == "z-high"


def test_equal_scores_go_to_the_name_that_sorts_first(k):
    sel = matching.select(k.llama(), [k.csr("b-rt", k.llama_entry()), k.csr("a-rt", k.llama_entry())], namespace=NS)
    assert names(sel) == ["a-rt", "b-rt"]


def test_names_compare_byte_wise(k):
    sel = matching.select(k.llama(), [k.csr("rt-9", k.llama_entry()), k.csr("rt-10", k.llama_entry())], namespace=NS)
    assert names(sel) == ["rt-10", "rt-9"]


@pytest.mark.parametrize(
    ("narrow", "wide"),
    [
        pytest.param({"min": "7B", "max": "9B"}, {"min": "1B", "max": "70B"}, id="verified-7-9-beats-1-70"),
        pytest.param(None, {"min": "7B", "max": "9B"}, id="verified-no-range-beats-7-9"),
    ],
)
def test_with_equal_scores_the_lower_size_score_ranks_first(k, narrow, wide):
    model = k.llama(modelParameterSize="8B")
    first = k.csr("z-first", k.llama_entry(), **({"modelSizeRange": narrow} if narrow else {}))
    second = k.csr("a-second", k.llama_entry(), modelSizeRange=wide)
    assert names(matching.select(model, [second, first], namespace=NS)) == ["z-first", "a-second"]


def test_the_size_score_is_the_distance_to_both_bounds_not_the_width_alone(k):
    # A 9B model sits in both ranges: [7B, 9B] scores 2e9, [9B, 10B] scores 1e9.
    model = k.llama(modelParameterSize="9B")
    r1 = k.csr("a-7-9", k.llama_entry(), modelSizeRange={"min": "7B", "max": "9B"})
    r2 = k.csr("z-9-10", k.llama_entry(), modelSizeRange={"min": "9B", "max": "10B"})
    assert names(matching.select(model, [r1, r2], namespace=NS)) == ["z-9-10", "a-7-9"]


def test_the_score_beats_the_size_tie_break(k):
    model = k.llama(modelParameterSize="8B")
    narrow = k.csr("narrow", k.llama_entry(), modelSizeRange={"min": "7B", "max": "9B"})
    wide = k.csr("wide", k.llama_entry(priority=2), modelSizeRange={"min": "1B", "max": "70B"})
    assert names(matching.select(model, [narrow, wide], namespace=NS)) == ["wide", "narrow"]


def test_without_a_model_size_ranges_do_not_order_runtimes(k):
    narrow = k.csr("z-narrow", k.llama_entry(), modelSizeRange={"min": "7B", "max": "9B"})
    wide = k.csr("a-wide", k.llama_entry(), modelSizeRange={"min": "1B", "max": "70B"})
    assert names(matching.select(k.llama(), [narrow, wide], namespace=NS)) == ["a-wide", "z-narrow"]


def test_equal_width_suffixed_ranges_tie_exactly_and_the_name_decides(k):
    model = k.llama(modelParameterSize="8B")
    r1 = k.csr("b-rt", k.llama_entry(), modelSizeRange={"min": "7.11B", "max": "9B"})
    r2 = k.csr("a-rt", k.llama_entry(), modelSizeRange={"min": "7B", "max": "8.89B"})
    assert names(matching.select(model, [r1, r2], namespace=NS)) == ["a-rt", "b-rt"]


def test_q16_sub_one_differences_still_list_both_runtimes(k):
    model = k.llama(modelParameterSize="8")
    r1 = k.csr("a-rt", k.llama_entry(), modelSizeRange={"min": "7", "max": "9.5"})
    r2 = k.csr("b-rt", k.llama_entry(), modelSizeRange={"min": "7", "max": "9"})
    assert sorted(names(matching.select(model, [r1, r2], namespace=NS))) == ["a-rt", "b-rt"]


# --- Q1 namespace first ---------------------------------------------------------------------------


def test_q1_a_namespace_runtime_beats_a_higher_scoring_cluster_runtime(k):
    ns_rt = k.sr("ns-low", k.llama_entry())
    cl_rt = k.csr("cl-high", k.llama_entry(priority=9))
    sel = matching.select(k.llama(), [cl_rt, ns_rt], namespace=NS)
    assert names(sel) == ["ns-low", "cl-high"]
    assert [(m.score, m.is_cluster) for m in sel.compatible] == [(15, False), (135, True)]


def test_q1_within_the_namespace_group_the_score_still_orders(k):
    a = k.sr("a", k.llama_entry())
    b = k.sr("b", k.llama_entry(priority=2))
    c = k.csr("c", k.llama_entry(priority=9))
    assert names(matching.select(k.llama(), [a, b, c], namespace=NS)) == ["b", "a", "c"]


def test_serving_runtimes_of_other_namespaces_are_ignored(k):
    other = k.sr("other-ns", k.llama_entry(priority=9), namespace="elsewhere")
    sel = matching.select(k.llama(), [other], namespace=NS)
    assert sel.selected is None
    assert "other-ns" not in sel.excluded
    assert sel.error == "no runtime found to support model safetensors with format safetensors in namespace team"


def test_the_namespace_defaults_to_the_inference_services(k):
    rt = k.sr("ns-rt", k.llama_entry(), namespace="svc-ns")
    sel = matching.select(k.llama(), [rt], isvc=k.isvc(namespace="svc-ns"))
    assert sel.selected == "ns-rt"


def test_the_namespace_defaults_to_the_models_without_an_inference_service(k):
    rt = k.sr("ns-rt", k.llama_entry(), namespace="models")
    sel = matching.select(k.llama(namespace="models"), [rt])
    assert sel.selected == "ns-rt"


def test_the_inference_services_namespace_wins_over_the_models(k):
    in_model_ns = k.sr("model-ns-rt", k.llama_entry(), namespace="models")
    sel = matching.select(k.llama(namespace="models"), [in_model_ns], isvc=k.isvc(namespace="svc-ns"))
    assert sel.selected is None
    assert sel.error == "no runtime found to support model safetensors with format safetensors in namespace svc-ns"


def test_cluster_runtimes_count_in_every_namespace(k):
    sel = matching.select(k.llama(), [k.csr("cl", k.llama_entry())], namespace="anything")
    assert sel.selected == "cl"


def test_a_match_reports_its_scope(k):
    sel = matching.select(k.llama(), [k.sr("ns", k.llama_entry()), k.csr("cl", k.llama_entry())], namespace=NS)
    assert [(m.name, m.is_cluster) for m in sel.compatible] == [("ns", False), ("cl", True)]


# --- 5.3 what counts as a match; Q3, Q4, Q28 --------------------------------------------------------


def test_q3_a_runtime_whose_matching_entry_is_not_auto_select_is_selected_through_another_entry(k):
    rt = k.csr(
        "rt", k.llama_entry(autoSelect=False), k.llama_entry(modelArchitecture="MistralForCausalLM", autoSelect=True)
    )
    sel = matching.select(k.llama(), [rt], namespace=NS)
    assert sel.selected == "rt"
    assert sel.compatible[0].score == 15


@pytest.mark.parametrize("auto", [False, None], ids=["autoSelect-false", "q4-autoSelect-absent"])
def test_q28_a_compatible_runtime_without_auto_select_is_manual_only(k, auto):
    e = k.llama_entry(priority=5, autoSelect=k.DROP if auto is None else auto)
    sel = matching.select(k.llama(), [k.csr("rt", e)], namespace=NS)
    assert sel.selected is None
    assert "rt" in sel.manual_only
    assert "rt" not in sel.excluded


def test_a_compatible_runtime_scoring_0_is_manual_only(k):
    e = k.llama_entry(modelFormat=k.ref("safetensors", "1.0.0", weight=-5))
    sel = matching.select(k.llama(), [k.csr("rt", e)], namespace=NS)
    assert sel.selected is None
    assert "rt" in sel.manual_only
    assert "rt" not in sel.excluded


def test_q28_unselectable_runtimes_are_counted_but_not_listed(k):
    sel = matching.select(k.llama(), [k.csr("rt", k.llama_entry(autoSelect=False))], namespace=NS)
    assert sel.error == (
        "no runtime found to support model safetensors with format safetensors in namespace team. "
        "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped)"
    )


def test_excluded_lists_incompatible_runtimes_even_when_one_is_selected(k):
    bad = k.csr("bad", k.llama_entry(modelArchitecture="MistralForCausalLM"))
    sel = matching.select(k.llama(), [bad, k.csr("good", k.llama_entry())], namespace=NS)
    assert sel.selected == "good"
    assert sel.error is None
    assert sel.excluded == {
        "bad": (
            f"model format '{k.LLAMA_LABEL}' not in supported formats: architecture mismatch "
            "(model=LlamaForCausalLM, runtime=MistralForCausalLM)"
        )
    }


def test_a_disabled_runtime_is_excluded_with_its_reason(k):
    sel = matching.select(k.llama(), [k.csr("off", k.llama_entry(), disabled=True)], namespace=NS)
    assert sel.excluded == {"off": "runtime is disabled"}


# --- 5.2 model validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fmt",
    [
        pytest.param(None, id="absent"),
        pytest.param({"name": ""}, id="empty-name"),
        pytest.param({"version": "1.0.0"}, id="version-without-name"),
    ],
)
def test_a_model_without_a_format_name_is_an_invalid_specification(k, fmt):
    model = k.llama(modelFormat=k.DROP if fmt is None else fmt)
    sel = matching.select(model, [k.csr("rt", k.llama_entry())], namespace=NS)
    assert sel.selected is None
    assert sel.compatible == []
    assert sel.error == "invalid model specification: modelFormat.name: model format name is required"


def test_validate_rejects_a_model_without_a_format_name_before_looking_up_the_runtime(k):
    model = k.llama(modelFormat=k.DROP)
    err = matching.validate("nope", model, [], namespace=NS)
    assert err == "invalid model specification: modelFormat.name: model format name is required"


def test_the_models_disabled_flag_and_status_are_not_checked(k):
    model = k.llama(disabled=True)
    model["status"] = {"state": "Failed"}
    assert matching.select(model, [k.csr("rt", k.llama_entry())], namespace=NS).selected == "rt"


# --- 5.4 NoRuntimeFoundError ------------------------------------------------------------------------


def test_no_runtimes_at_all_gives_the_verified_short_text(k):
    sel = matching.select(k.llama(), [], namespace=NS)
    assert sel.selected is None
    assert sel.error == "no runtime found to support model safetensors with format safetensors in namespace team"


def five_runtimes(k, sr_arch="MistralForCausalLM"):
    return [
        k.sr("x-arch", k.llama_entry(modelArchitecture=sr_arch)),
        k.csr("x-arch", k.llama_entry(modelArchitecture="MistralForCausalLM")),
        k.csr("x-size", k.llama_entry(), modelSizeRange={"min": "60B", "max": "75B"}),
        k.csr("x-disabled", k.llama_entry(), disabled=True),
        k.csr("x-noauto", k.llama_entry(autoSelect=False)),
    ]


ARCH_REASON = (
    "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.51.0' not in supported formats: "
    "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)"
)


def test_the_verified_five_runtime_error_text(k):
    sel = matching.select(k.llama(modelParameterSize="8B"), five_runtimes(k), namespace=NS)
    assert sel.selected is None
    head, items = k.excluded_items(sel.error)
    assert head == (
        "no runtime found to support model safetensors with format safetensors in namespace team. "
        "Checked 5 runtimes (1 namespace-scoped, 4 cluster-scoped)"
    )
    assert items == {
        f"x-arch ({ARCH_REASON})",
        "x-size (model size 8B is outside supported range [60B, 75B])",
        "x-disabled (runtime is disabled)",
    }


def test_the_five_runtime_example_exclusion_map(k):
    sel = matching.select(k.llama(modelParameterSize="8B"), five_runtimes(k), namespace=NS)
    assert sel.excluded == {
        "x-arch": ARCH_REASON,
        "x-size": "model size 8B is outside supported range [60B, 75B]",
        "x-disabled": "runtime is disabled",
    }
    assert "x-noauto" in sel.manual_only


def test_q27_a_cluster_runtime_overwrites_the_same_named_namespace_runtimes_reason(k):
    sel = matching.select(k.llama(modelParameterSize="8B"), five_runtimes(k, sr_arch="GemmaForCausalLM"), namespace=NS)
    assert sel.excluded["x-arch"] == ARCH_REASON
    head, items = k.excluded_items(sel.error)
    assert head.endswith("Checked 5 runtimes (1 namespace-scoped, 4 cluster-scoped)")
    assert f"x-arch ({ARCH_REASON})" in items
    assert not any("GemmaForCausalLM" in item for item in items)


def test_q11_the_error_names_the_format_not_the_model(k):
    model = k.qwen(name="my-qwen")
    sel = matching.select(model, [], namespace="default")
    assert sel.error == "no runtime found to support model diffusers with format diffusers in namespace default"


def test_the_error_has_no_trailing_period(k):
    sel = matching.select(k.llama(), [k.csr("off", k.llama_entry(), disabled=True)], namespace=NS)
    assert sel.error == (
        "no runtime found to support model safetensors with format safetensors in namespace team. "
        "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: off (runtime is disabled)"
    )


def test_the_counts_exclude_other_namespaces(k):
    rts = [k.sr("mine", k.llama_entry(disabled=None), disabled=True), k.sr("theirs", k.llama_entry(), namespace="x")]
    sel = matching.select(k.llama(), rts, namespace=NS)
    assert sel.error == (
        "no runtime found to support model safetensors with format safetensors in namespace team. "
        "Checked 1 runtimes (1 namespace-scoped, 0 cluster-scoped). Excluded runtimes: mine (runtime is disabled)"
    )


def test_the_error_uses_the_inference_services_namespace(k):
    sel = matching.select(k.llama(), [], isvc=k.isvc(namespace="llama-demo"))
    assert sel.error == "no runtime found to support model safetensors with format safetensors in namespace llama-demo"


def test_q33_an_empty_runtime_name_on_the_inference_service_means_auto_select(k):
    svc = k.isvc(runtime={"name": ""})
    sel = matching.select(k.llama(), [k.csr("rt", k.llama_entry())], isvc=svc)
    assert sel.selected == "rt"


def test_selection_converts_to_a_dict(k):
    out = matching.select(k.llama(), [k.csr("rt", k.llama_entry())], namespace=NS).to_dict()
    assert out["selected"] == "rt"
    assert out["error"] is None


# --- 5.5 ValidateRuntime ----------------------------------------------------------------------------


def test_validate_accepts_a_compatible_runtime(k):
    assert matching.validate("rt", k.llama(), [k.csr("rt", k.llama_entry())], namespace=NS) is None


def test_validate_verified_size_text(k):
    err = matching.validate("x-size", k.llama(modelParameterSize="8B"), five_runtimes(k), namespace=NS)
    assert (
        err == "runtime x-size does not support model safetensors: model size 8B is outside supported range [60B, 75B]"
    )


def test_validate_verified_cluster_disabled_text(k):
    err = matching.validate("x-disabled", k.llama(modelParameterSize="8B"), five_runtimes(k), namespace=NS)
    assert err == "cluster-scoped runtime x-disabled is disabled"


def test_validate_namespace_disabled_text(k):
    err = matching.validate("off", k.llama(), [k.sr("off", k.llama_entry(), disabled=True)], namespace=NS)
    assert err == "namespace-scoped runtime off is disabled"


def test_validate_verified_not_found_text(k):
    err = matching.validate("nope", k.llama(), five_runtimes(k), namespace=NS)
    assert err == "runtime nope not found in namespace team or at cluster scope"


def test_validate_does_not_see_serving_runtimes_of_other_namespaces(k):
    err = matching.validate("rt", k.llama(), [k.sr("rt", k.llama_entry(), namespace="other")], namespace=NS)
    assert err == "runtime rt not found in namespace team or at cluster scope"


def test_validate_uses_the_inference_services_namespace(k):
    svc = k.isvc(namespace="svc-ns")
    assert matching.validate("rt", k.llama(), [k.sr("rt", k.llama_entry(), namespace="svc-ns")], isvc=svc) is None
    assert (
        matching.validate("nope", k.llama(), [], isvc=svc)
        == "runtime nope not found in namespace svc-ns or at cluster scope"
    )


def test_validate_looks_up_the_namespace_runtime_before_the_cluster_one(k):
    rts = [k.sr("dup", k.llama_entry(), disabled=True), k.csr("dup", k.llama_entry())]
    assert matching.validate("dup", k.llama(), rts, namespace=NS) == "namespace-scoped runtime dup is disabled"


def test_validate_falls_back_to_the_cluster_runtime(k):
    rts = [k.sr("dup", k.llama_entry(), namespace="other", disabled=True), k.csr("dup", k.llama_entry())]
    assert matching.validate("dup", k.llama(), rts, namespace=NS) is None


def test_validate_format_mismatch_text_names_the_format(k):
    rt = k.csr("srt-x", k.llama_entry(modelArchitecture="MistralForCausalLM"))
    err = matching.validate("srt-x", k.llama(), [rt], namespace=NS)
    assert err == f"runtime srt-x does not support model safetensors: {ARCH_REASON}"


def test_validate_accelerator_text_has_an_empty_model_name(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": "H100"})
    rt = k.csr("srt-x", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["A100"]})
    err = matching.validate("srt-x", k.llama(), [rt], isvc=svc)
    assert err == "runtime srt-x does not support model : runtime does not support the required accelerator class"


def test_validate_reports_disabled_before_accelerator(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": "H100"})
    rt = k.csr("srt-x", k.llama_entry(), disabled=True)
    assert matching.validate("srt-x", k.llama(), [rt], isvc=svc) == "cluster-scoped runtime srt-x is disabled"


@pytest.mark.parametrize(
    "entry_change",
    [
        pytest.param({"autoSelect": False}, id="autoSelect-false"),
        pytest.param({"autoSelect": None}, id="autoSelect-absent"),
        pytest.param(
            {
                "modelFormat": {"name": "safetensors", "version": "1.0.0", "weight": -10},
                "modelFramework": {"name": "transformers", "version": "4.51.0", "weight": -10},
            },
            id="score-0",
        ),
        pytest.param({"priority": 0}, id="priority-0"),
    ],
)
def test_q29_a_named_runtime_needs_neither_auto_select_nor_a_score(k, entry_change):
    change = dict(entry_change)
    e = k.llama_entry(**{key: (k.DROP if value is None else value) for key, value in change.items()})
    assert matching.validate("rt", k.llama(), [k.csr("rt", e)], namespace=NS) is None


# --- grid --------------------------------------------------------------------------------------------


def test_the_grid_agrees_with_the_pairwise_functions(k):
    models = [k.llama(), k.llama("llama-ns", namespace=NS, modelParameterSize="8B"), k.qwen()]
    runtimes = [*five_runtimes(k), k.qwen_plain_runtime(), k.qwen_pipeline_runtime(), k.sr("good", k.llama_entry())]
    g = matching.grid(models, runtimes)
    for m in models:
        mkey = (m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"])
        for rt in runtimes:
            rkey = (rt["kind"], rt["metadata"].get("namespace", ""), rt["metadata"]["name"])
            assert g.check(mkey, rkey).to_dict() == matching.check(m, rt).to_dict(), (mkey, rkey)
        for ns in (NS, "other"):
            got = g.select(mkey, ns)
            want = matching.select(m, runtimes, namespace=ns)
            assert got.selected == want.selected
            assert [x.to_dict() for x in got.compatible] == [x.to_dict() for x in want.compatible]
            assert got.excluded == want.excluded
            assert got.manual_only == want.manual_only
            if want.error is None:
                assert got.error is None
            else:
                assert k.excluded_items(got.error) == k.excluded_items(want.error)


def test_no_model_at_all_is_the_nil_specification_error(k):
    sel = matching.select(None, [k.csr("rt", k.llama_entry())], namespace=NS)
    assert sel.selected is None
    assert sel.error == "invalid model specification: model: model specification is nil"


def test_validate_without_a_model_is_the_nil_specification_error(k):
    assert matching.validate("rt", None, [k.csr("rt", k.llama_entry())], namespace=NS) == (
        "invalid model specification: model: model specification is nil"
    )


def test_a_model_with_a_null_spec_has_no_format_name(k):
    model = k.llama()
    model["spec"] = None
    assert matching.select(model, [], namespace=NS).error == (
        "invalid model specification: modelFormat.name: model format name is required"
    )


def test_q5_the_excluded_item_order_is_deterministic(k):
    runtimes = five_runtimes(k) + [k.csr(f"x-{i}", k.llama_entry(modelArchitecture=f"A{i}")) for i in range(6)]
    first = matching.select(k.llama(modelParameterSize="8B"), runtimes, namespace=NS).error
    for _ in range(3):
        assert matching.select(k.llama(modelParameterSize="8B"), runtimes, namespace=NS).error == first
