"""`matching.admit_runtime`: what OME's runtime admission webhook says, text for text.

Sources, cited at each test:
- DOCS_INHERIT: ome-projects/ome-docs @7f641a34, `src/lib/content/concepts/runtimes/runtime-inheritance.md`,
  "What admission checks" (the table of reasons) and "Chain limits".
- DOCS_ACCEL: the same, `src/lib/content/reference/matching/runtime-accelerator-class-matching.md`.
- DOCS_SCORING: the same, `src/lib/content/reference/matching/runtime-selection-scoring.md`.
- GO_OLD: ome-projects/ome `pkg/webhook/admission/servingruntime/servingruntime_webhook.go` at the
  v0.1.5 snapshot cfa05c69 (spec 7.3, 17b77eda): disabled shortcut, accelerator classes, then a
  loop over the scope's runtimes holding the priority checks.
- GO_NEW: the same file of the newer sigs.k8s.io/ome module (`validateProfileMarker` and the
  chain check before the disabled shortcut; `validation.ValidateModelFormatPrioritySame` "outside
  the loop so they still apply when the namespace has no other runtimes").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import matching
from matching.cli import main

OLD, NEW = "17b77eda", matching.NEWEST_BEHAVIOUR


def runtime(
    name: str,
    *,
    namespace: str | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = annotations
    kind = "ClusterServingRuntime" if namespace is None else "ServingRuntime"
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": spec}


def entry(priority: int | None = None, *, versions: bool = False, **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "modelFormat": {"name": "safetensors"},
        "modelFramework": {"name": "transformers"},
        "autoSelect": True,
        **extra,
    }
    if versions:
        found["modelFormat"]["version"] = "1.0.0"
        found["modelFramework"]["version"] = "4.45.0.dev0"
    if priority is not None:
        found["priority"] = priority
    return found


PROFILE = {"ome.io/runtime-profile": "true"}


def inherit(parent: str) -> dict[str, str]:
    return {"ome.io/inherit-from": parent}


def test_profile_must_be_disabled_only_in_the_newer_webhook() -> None:
    """DOCS_INHERIT: 'A profile doesn't set disabled: true' -> this exact reason; GO_NEW
    validateProfileMarker (absent or false disabled is refused). GO_OLD has no such check."""
    text = 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'
    for spec in ({}, {"disabled": False}):
        profile = runtime("sglang-profile", annotations=PROFILE, **spec)
        assert matching.admit_runtime(profile, []).errors == (text,)
        assert matching.admit_runtime(profile, [], behaviour=OLD).errors == ()
    assert matching.admit_runtime(runtime("sglang-profile", annotations=PROFILE, disabled=True), []).allowed


def test_missing_parent_is_refused_with_the_chain_so_far() -> None:
    """DOCS_INHERIT: applying runtime.yaml before profile.yaml gives exactly this reason."""
    child = runtime("sglang-llama-3-2-3b", namespace="llama-demo", annotations=inherit("sglang-profile"))
    assert matching.admit_runtime(child, []).errors == (
        'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])',
    )
    parent = runtime("sglang-profile", annotations=PROFILE, disabled=True)
    assert matching.admit_runtime(child, [parent]).allowed
    assert matching.admit_runtime(child, [], behaviour=OLD).allowed


def test_cycles_count_names_alone() -> None:
    """DOCS_INHERIT: a runtime that names itself, or a ServingRuntime that names a
    ClusterServingRuntime of its own name, is a cycle: `inheritance cycle detected: [a a]`."""
    expected = ("inheritance cycle detected: [sglang-llama-3-2-3b sglang-llama-3-2-3b]",)
    itself = runtime("sglang-llama-3-2-3b", namespace="llama-demo", annotations=inherit("sglang-llama-3-2-3b"))
    assert matching.admit_runtime(itself, []).errors == expected
    same_named_cluster = runtime("sglang-llama-3-2-3b")
    assert matching.admit_runtime(itself, [same_named_cluster]).errors == expected


def test_chains_hold_at_most_five_runtimes() -> None:
    """DOCS_INHERIT 'Chain limits': five runtimes, the runtime and four ancestors; more is refused
    with a reason that begins `inheritance chain exceeds max depth 5`. A disabled runtime is checked
    too: GO_NEW runs the chain check before the disabled shortcut."""
    parents = [runtime(f"p{i}", annotations=inherit(f"p{i + 1}") if i < 5 else None) for i in range(1, 6)]
    four = runtime("child", annotations=inherit("p2"))
    assert matching.admit_runtime(four, parents).allowed
    five = runtime("child", annotations=inherit("p1"), disabled=True)
    (error,) = matching.admit_runtime(five, parents).errors
    assert error.startswith("inheritance chain exceeds max depth 5")


def test_unknown_accelerator_classes_are_listed_go_style() -> None:
    """DOCS_ACCEL: a missing listed class is refused with
    `unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h100 nvidia-h200]`;
    GO_OLD and GO_NEW collect the missing ones in the runtime's order. A disabled runtime is let
    through first (GO_OLD, GO_NEW)."""
    hopper = runtime(
        "llama-3-3-70b-hopper", acceleratorRequirements={"acceleratorClasses": ["nvidia-h100", "nvidia-h200"]}
    )
    for behaviour in (OLD, NEW):
        assert matching.admit_runtime(hopper, [], [], behaviour=behaviour).errors == (
            "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h100 nvidia-h200]",
        )
        assert matching.admit_runtime(hopper, [], ["nvidia-h100"], behaviour=behaviour).errors == (
            "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h200]",
        )
    assert matching.admit_runtime(hopper, [], ["nvidia-h100", "nvidia-h200"]).allowed
    unknown = matching.admit_runtime(hopper, [])
    assert unknown.allowed
    assert "accelerator classes not checked" in unknown.warnings[0]
    disabled = runtime("off", disabled=True, acceleratorRequirements={"acceleratorClasses": ["nvidia-a100"]})
    assert matching.admit_runtime(disabled, [], []).allowed


def test_different_priorities_within_one_runtime() -> None:
    """DOCS_SCORING: autoSelect entries that share an entry name (or leave it empty) can't set
    different priorities; GO_OLD checks it only inside the loop over the scope's runtimes (so not
    when the runtime is alone), GO_NEW always. The text ends `under the clusterservingruntime {name}`
    (`under the servingruntime {name}` for a ServingRuntime)."""
    two = runtime("vllm", protocolVersions=["openAI"], supportedModelFormats=[entry(1), entry(2)])
    text = "different priorities assigned for the model format  under the clusterservingruntime vllm"
    assert matching.admit_runtime(two, []).errors == (text,)
    assert matching.admit_runtime(two, [], behaviour=OLD).errors == ()
    other = runtime("other", protocolVersions=["grpc-v2"])
    assert matching.admit_runtime(two, [other], behaviour=OLD).errors == (text,)
    named = runtime("team", namespace="ns", supportedModelFormats=[entry(1, name="x"), entry(2, name="y")])
    assert matching.admit_runtime(named, []).allowed
    clash = runtime("team", namespace="ns", supportedModelFormats=[entry(1, name="x"), entry(2, name="x")])
    assert matching.admit_runtime(clash, []).errors == (
        "different priorities assigned for the model format x under the servingruntime team",
    )
    unset = runtime("team", namespace="ns", supportedModelFormats=[entry(None, name="x"), entry(2, name="x")])
    assert matching.admit_runtime(unset, []).allowed


def test_same_priority_as_another_runtime_of_the_scope() -> None:
    """GO_OLD and GO_NEW validateServingRuntimePriority: an enabled runtime of the same scope with a
    shared protocol version, an equal modelSizeRange and an equal autoSelect entry at the same
    explicit priority. Entry equality compares the modelFormat and modelFramework structs, whose
    version pointers compare by identity, so set versions never clash (spec Q20)."""
    a = runtime("srt-a", protocolVersions=["openAI"], supportedModelFormats=[entry(2)])
    b = runtime("srt-b", protocolVersions=["openAI", "grpc-v2"], supportedModelFormats=[entry(2)])
    for behaviour in (OLD, NEW):
        assert matching.admit_runtime(b, [a, b], behaviour=behaviour).errors == (
            "same priority assigned for the model format  in the clusterservingruntimes srt-a and srt-b",
        )
    assert matching.admit_runtime(
        b, [runtime("srt-a", protocolVersions=["grpc-v1"], supportedModelFormats=[entry(2)])]
    ).allowed
    assert matching.admit_runtime(
        b, [runtime("srt-a", disabled=True, protocolVersions=["openAI"], supportedModelFormats=[entry(2)])]
    ).allowed
    assert matching.admit_runtime(
        b, [runtime("srt-a", protocolVersions=["openAI"], supportedModelFormats=[entry(3)])]
    ).allowed
    ranged = runtime(
        "srt-a", protocolVersions=["openAI"], modelSizeRange={"min": "1B"}, supportedModelFormats=[entry(2)]
    )
    assert matching.admit_runtime(b, [ranged]).allowed
    versioned = [entry(2, versions=True)]
    va = runtime("srt-a", protocolVersions=["openAI"], supportedModelFormats=versioned)
    vb = runtime("srt-b", protocolVersions=["openAI"], supportedModelFormats=versioned)
    assert matching.admit_runtime(vb, [va]).allowed
    sa = runtime("team-a", namespace="ns", protocolVersions=["openAI"], supportedModelFormats=[entry(2)])
    sb = runtime("team-b", namespace="ns", protocolVersions=["openAI"], supportedModelFormats=[entry(2)])
    elsewhere = runtime("team-a", namespace="other", protocolVersions=["openAI"], supportedModelFormats=[entry(2)])
    assert matching.admit_runtime(sb, [sa]).errors == (
        "same priority assigned for the model format  in the servingruntimes team-a and team-b in namespace ns",
    )
    assert matching.admit_runtime(sb, [elsewhere, a]).allowed


def test_errors_come_in_the_webhooks_check_order() -> None:
    """GO_NEW: profile marker, chain, (disabled shortcut), accelerator classes, own priorities,
    then each runtime of the scope in name order; OME denies with the first."""
    broken = runtime(
        "z",
        annotations={**PROFILE, **inherit("gone")},
        protocolVersions=["openAI"],
        acceleratorRequirements={"acceleratorClasses": ["h100"]},
        supportedModelFormats=[entry(1), entry(2)],
    )
    first = runtime("b", protocolVersions=["openAI"], supportedModelFormats=[entry(1)])
    second = runtime("a", protocolVersions=["openAI"], supportedModelFormats=[entry(1)])
    assert matching.admit_runtime(broken, [first, second], []).errors == (
        'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true',
        'inherit-from parent "gone" not found (chain so far: [z])',
        "unknown accelerator classes referenced in AcceleratorRequirements: [h100]",
        "different priorities assigned for the model format  under the clusterservingruntime z",
        "same priority assigned for the model format  in the clusterservingruntimes a and z",
        "same priority assigned for the model format  in the clusterservingruntimes b and z",
    )


def test_an_update_does_not_clash_with_its_stored_self() -> None:
    """GO_OLD/GO_NEW skip the listed runtime with the new runtime's name (an update)."""
    stored = runtime("srt-a", protocolVersions=["openAI"], supportedModelFormats=[entry(2)])
    assert matching.admit_runtime(stored, [stored]).allowed


def test_malformed_runtime_names_the_field() -> None:
    bad = runtime("x", protocolVersions="openAI")
    with pytest.raises(matching.ManifestError, match=r"spec\.protocolVersions"):
        matching.admit_runtime(bad, [])


# ------------------------------------------------------------------------------------------
# `ome-compat check` and `ome-compat diff` refuse a tree OME's webhook would refuse, as the API
# server would: `admission webhook "<kind>.ome-webhook-server.validator" denied the request: `
# and the reason (DOCS_INHERIT, "What admission checks").


def write(folder: Path, *objects: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for obj in objects:
        (folder / f"{obj['metadata']['name']}.yaml").write_text(yaml.safe_dump(obj))
    return folder


MODEL = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ClusterBaseModel",
    "metadata": {"name": "llama"},
    "spec": {"modelFormat": {"name": "safetensors"}, "modelFramework": {"name": "transformers"}},
}
CHILD = runtime("sglang-llama", annotations=inherit("sglang-profile"), supportedModelFormats=[entry(1)])
DENIAL = (
    "sglang-llama.yaml: document 0: ClusterServingRuntime sglang-llama: metadata.annotations.ome.io/inherit-from: "
    'admission webhook "clusterservingruntime.ome-webhook-server.validator" denied the request: '
    'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama])'
)


def test_check_refuses_a_tree_with_a_broken_chain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "compat.ome.io/v1alpha1",
                "kind": "RuntimePolicy",
                "metadata": {"name": "p"},
                "spec": {"assertions": [{"name": "served", "assert": "hasRuntime", "scope": {"names": ["llama"]}}]},
            }
        )
    )
    tree = write(tmp_path / "tree", MODEL, CHILD)

    code = main(["check", "--policy", str(policy), str(tree)])

    assert code == 2
    assert DENIAL in capsys.readouterr().err.replace(f"{tree}/", "")


def test_diff_refuses_a_head_that_adds_a_broken_chain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write(tmp_path / "base", MODEL)
    head = write(tmp_path / "head", MODEL, CHILD)

    assert main(["diff", str(base), str(head)]) == 2
    assert f"HEAD_PATH {DENIAL}" in capsys.readouterr().err.replace(f"{head}/", "")
    assert main(["diff", str(head), str(head), "--behaviour", OLD]) == 0


def test_proposal_594_refuses_overlapping_auto_select_runtimes_of_equal_priority() -> None:
    """ome-projects/ome#594 (open), acceptance criteria: the ServingRuntime and ClusterServingRuntime
    webhooks refuse runtimes, even across scopes, that have autoSelect: true and overlap on
    SupportedModelFormat and ModelSizeRange unless their priorities differ; omitted priorities
    are handled by the default. v1.3 has no such check."""
    small = runtime("srt-small", modelSizeRange={"min": "1B", "max": "8B"}, supportedModelFormats=[entry(2)])
    large = runtime("srt-large", modelSizeRange={"min": "7B", "max": "70B"}, supportedModelFormats=[entry(2)])
    (refusal,) = matching.admit_runtime(large, [small], behaviour="pr594").errors
    assert "ome#594" in refusal
    assert "ClusterServingRuntime srt-small and ClusterServingRuntime srt-large" in refusal
    assert matching.admit_runtime(large, [small], behaviour="v1.3").allowed
    apart = runtime("srt-huge", modelSizeRange={"min": "71B"}, supportedModelFormats=[entry(2)])
    assert (
        matching.admit_runtime(apart, [small, large], behaviour="pr594").errors
        == (matching.admit_runtime(apart, [large], behaviour="pr594").errors)
        == ()
    )  # 71B and up shares no size with 7B-70B or 1B-8B
    assert matching.admit_runtime(
        runtime("srt-large", modelSizeRange={"min": "7B"}, supportedModelFormats=[entry(3)]), [small], behaviour="pr594"
    ).allowed
    namespaced = runtime("team", namespace="ns", supportedModelFormats=[entry()])
    unset = runtime("srt-default", supportedModelFormats=[entry(1)])
    assert len(matching.admit_runtime(namespaced, [unset], behaviour="pr594").errors) == 1  # across scopes, default 1
    other_arch = runtime("srt-arch", supportedModelFormats=[entry(2, modelArchitecture="GemmaForCausalLM")])
    assert matching.admit_runtime(other_arch, [small], behaviour="pr594").allowed
    manual = runtime("srt-manual", supportedModelFormats=[{**entry(2), "autoSelect": False}])
    assert matching.admit_runtime(manual, [small], behaviour="pr594").allowed
    off = runtime("srt-off", disabled=True, supportedModelFormats=[entry(2)])
    assert matching.admit_runtime(large, [off], behaviour="pr594").allowed
