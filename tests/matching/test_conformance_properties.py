"""Conformance: properties that the spec states for every input (sections 2.2-2.3, 4.2, 4.3,
5.3-5.5), checked on random small models and runtimes with hypothesis.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import matching

NS = "team"
NO_AUTO = "runtime does not have auto-select enabled for any supported format"
NO_SIZE = "model does not specify size, but runtime has size constraints"
FORMAT_PREFIX = "model format '"


def maybe(strategy):
    return st.one_of(st.none(), strategy)


names = st.sampled_from(["safetensors", "pytorch", "diffusers"])
versions = st.sampled_from(["1.0.0", "1.0", "1", "2.0.0", "v1.0.0", "0.34.0.dev0", "", "latest"])
operators = st.sampled_from(["Equal", "GreaterThan", "GreaterThanOrEqual", "Foo"])
archs = st.sampled_from(["LlamaForCausalLM", "MistralForCausalLM", ""])
quants = st.sampled_from(["fp8", "int4"])
sizes = st.sampled_from(["7B", "8B", "70B", "500M", "7b", "0"])
components = st.fixed_dictionaries(
    {}, optional={"library": st.sampled_from(["diffusers", "transformers", ""]), "type": st.sampled_from(["T", "U"])}
)
pipelines = st.fixed_dictionaries(
    {},
    optional={
        "className": st.sampled_from(["QwenImagePipeline", "FluxPipeline"]),
        "transformer": components,
        "vae": components,
        "additionalComponents": st.dictionaries(
            st.sampled_from(["safety_checker", "processor"]), components, max_size=2
        ),
    },
)


def ref(with_operator: bool, with_weight: bool):
    optional = {"version": versions}
    if with_operator:
        optional["operator"] = operators
    if with_weight:
        optional["weight"] = st.integers(-3, 3)
    return st.fixed_dictionaries({"name": names}, optional=optional)


models = st.fixed_dictionaries(
    {"modelFormat": ref(False, False)},
    optional={
        "modelFramework": st.fixed_dictionaries(
            {"name": st.sampled_from(["transformers", "diffusers"])}, optional={"version": versions}
        ),
        "modelArchitecture": archs,
        "quantization": quants,
        "modelParameterSize": sizes,
        "diffusionPipeline": pipelines,
    },
)

entries = st.fixed_dictionaries(
    {},
    optional={
        "modelFormat": ref(True, True),
        "modelFramework": st.fixed_dictionaries(
            {"name": st.sampled_from(["transformers", "diffusers"])},
            optional={"version": versions, "operator": operators, "weight": st.integers(-3, 3)},
        ),
        "modelArchitecture": archs,
        "quantization": quants,
        "diffusionPipeline": pipelines,
        "autoSelect": st.booleans(),
        "priority": st.integers(0, 3),
    },
)

runtime_specs = st.fixed_dictionaries(
    {"supportedModelFormats": st.lists(entries, max_size=3)},
    optional={
        "disabled": st.booleans(),
        "modelSizeRange": st.fixed_dictionaries({}, optional={"min": sizes, "max": sizes}),
    },
)


def build_runtimes(specs, scopes):
    out = []
    for i, (spec, scope) in enumerate(zip(specs, scopes, strict=False)):
        name = f"rt-{i}"
        if scope == "cluster":
            out.append(
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "ClusterServingRuntime",
                    "metadata": {"name": name},
                    "spec": spec,
                }
            )
        else:
            ns = NS if scope == "ns" else "elsewhere"
            out.append(
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "ServingRuntime",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": spec,
                }
            )
    return out


def build_model(spec):
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": "m"},
        "spec": {**spec, "storage": {"storageUri": "hf://x/y"}},
    }


scenario = st.integers(1, 5).flatmap(
    lambda n: st.tuples(
        models,
        st.lists(runtime_specs, min_size=n, max_size=n),
        st.lists(st.sampled_from(["cluster", "ns", "other"]), min_size=n, max_size=n),
    )
)

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(models, runtime_specs)
def test_a_report_has_at_most_one_reason_and_is_compatible_exactly_without_one(model_spec, rt_spec):
    report = matching.check(build_model(model_spec), build_runtimes([rt_spec], ["cluster"])[0])
    assert len(report.reasons) <= 1
    assert report.compatible is (report.reasons == ())
    if not report.compatible:
        assert NO_AUTO not in report.warnings
        assert NO_SIZE not in report.warnings


@SETTINGS
@given(models, runtime_specs)
def test_the_format_reason_joins_every_entry_mismatch_in_order(model_spec, rt_spec):
    report = matching.check(build_model(model_spec), build_runtimes([rt_spec], ["cluster"])[0])
    if report.reasons and report.reasons[0].startswith(FORMAT_PREFIX) and rt_spec["supportedModelFormats"]:
        assert all(not e.passed for e in report.entries)
        tail = report.reasons[0].split("' not in supported formats: ", 1)[1]
        assert tail == "; ".join(e.mismatch for e in report.entries)
        assert all(e.mismatch for e in report.entries)


@SETTINGS
@given(models, runtime_specs)
def test_the_compatible_verdict_needs_a_passing_entry(model_spec, rt_spec):
    report = matching.check(build_model(model_spec), build_runtimes([rt_spec], ["cluster"])[0])
    if report.compatible:
        assert any(e.passed for e in report.entries)
        assert rt_spec.get("disabled") is not True
        expected = []
        if not any(e.get("autoSelect") is True for e in rt_spec["supportedModelFormats"]):
            expected.append(NO_AUTO)
        if "modelParameterSize" not in model_spec and "modelSizeRange" in rt_spec:
            expected.append(NO_SIZE)
        assert report.warnings[: len(expected)] == tuple(expected)
        assert NO_AUTO not in report.warnings[len(expected) :]
        assert NO_SIZE not in report.warnings[len(expected) :]


@SETTINGS
@given(models, runtime_specs)
def test_the_score_is_never_negative(model_spec, rt_spec):
    assert matching.score(build_model(model_spec), build_runtimes([rt_spec], ["cluster"])[0]) >= 0


@SETTINGS
@given(scenario)
def test_selection_agrees_with_the_pairwise_verdicts(args):
    model_spec, specs, scopes = args
    model = build_model(model_spec)
    runtimes = build_runtimes(specs, scopes)
    sel = matching.select(model, runtimes, namespace=NS)
    if not model_spec["modelFormat"].get("name"):
        return
    in_scope = [(rt, scope) for rt, scope in zip(runtimes, scopes, strict=False) if scope != "other"]
    expected_matches = []
    expected_excluded = {}
    for rt, scope in in_scope:
        name = rt["metadata"]["name"]
        report = matching.check(model, rt)
        if not report.compatible:
            expected_excluded[name] = report.reasons[0]
            continue
        has_auto = any(e.get("autoSelect") is True for e in rt["spec"]["supportedModelFormats"])
        s = matching.score(model, rt)
        if has_auto and s > 0:
            expected_matches.append((scope == "cluster", name, s))
        else:
            assert name in sel.manual_only
    assert sel.excluded == expected_excluded
    assert sorted((m.is_cluster, m.name, m.score) for m in sel.compatible) == sorted(expected_matches)
    # Namespace-scoped first (Q1), then higher score first within each scope.
    flags = [m.is_cluster for m in sel.compatible]
    assert flags == sorted(flags)
    for a, b in zip(sel.compatible, sel.compatible[1:], strict=False):
        if a.is_cluster == b.is_cluster:
            assert a.score >= b.score
    assert sel.selected == (sel.compatible[0].name if sel.compatible else None)
    if sel.compatible:
        assert sel.error is None
    else:
        n_ns = sum(1 for _, scope in in_scope if scope == "ns")
        n_cl = sum(1 for _, scope in in_scope if scope == "cluster")
        head = f"no runtime found to support model {model_spec['modelFormat']['name']} with format {model_spec['modelFormat']['name']} in namespace {NS}"
        if in_scope:
            head += f". Checked {n_ns + n_cl} runtimes ({n_ns} namespace-scoped, {n_cl} cluster-scoped)"
        if expected_excluded:
            items = sorted(f"{name} ({reason})" for name, reason in expected_excluded.items())
            body = sel.error[len(head) :]
            assert sel.error.startswith(head + ". Excluded runtimes: ")
            assert sorted(body[len(". Excluded runtimes: ") :].split("; ")) == sorted("; ".join(items).split("; "))
        else:
            assert sel.error == head


@SETTINGS
@given(scenario)
def test_validate_agrees_with_the_pairwise_verdict(args):
    model_spec, specs, scopes = args
    model = build_model(model_spec)
    runtimes = build_runtimes(specs, scopes)
    for rt, scope in zip(runtimes, scopes, strict=False):
        name = rt["metadata"]["name"]
        err = matching.validate(name, model, runtimes, namespace=NS)
        if not model_spec["modelFormat"].get("name"):
            assert err == "invalid model specification: modelFormat.name: model format name is required"
        elif scope == "other":
            assert err == f"runtime {name} not found in namespace {NS} or at cluster scope"
        elif rt["spec"].get("disabled") is True:
            kind = "cluster-scoped" if scope == "cluster" else "namespace-scoped"
            assert err == f"{kind} runtime {name} is disabled"
        else:
            report = matching.check(model, rt)
            if report.compatible:
                assert err is None
            else:
                fmt = model_spec["modelFormat"]["name"]
                assert err == f"runtime {name} does not support model {fmt}: {report.reasons[0]}"


@SETTINGS
@given(scenario)
def test_the_grid_agrees_with_the_pairwise_functions_on_random_input(args):
    model_spec, specs, scopes = args
    model = build_model(model_spec)
    runtimes = build_runtimes(specs, scopes)
    g = matching.grid([model], runtimes)
    mkey = ("ClusterBaseModel", "", "m")
    for rt in runtimes:
        rkey = (rt["kind"], rt["metadata"].get("namespace", ""), rt["metadata"]["name"])
        assert g.check(mkey, rkey).to_dict() == matching.check(model, rt).to_dict()
    got = g.select(mkey, NS)
    want = matching.select(model, runtimes, namespace=NS)
    assert [m.to_dict() for m in got.compatible] == [m.to_dict() for m in want.compatible]
    assert got.excluded == want.excluded
    assert got.manual_only == want.manual_only
    assert (got.error is None) == (want.error is None)
