"""Issue 33, "Done when": on the demo, no near-miss fix or created runtime would serve a model
under another model's name, or change an entry that a dedicated runtime's own model needs.

A runtime of OME's catalog passes its model's Hugging Face id as `--served-model-name`
(catalog/runtimes, copied from ome-projects/ome config/runtimes); OME renders the runner as
written (ome-docs concepts/runtimes/serving-runtimes.md: a runtime "can target one model, or
any model its engine loads"). The expectation here is that id, read from the manifests."""

from __future__ import annotations

from typing import Any

import pytest

import matching
from access.scope import SYSTEM
from inventory.models import Cluster, Resource
from matrix.models import MatrixRow
from matrix.selectors import current_build
from whatif.fixes import NearFixes, Proposal, model_near_misses


def _words(node: Any) -> list[str]:
    """Every command and args word under a part of the manifest, read directly."""
    if isinstance(node, list):
        return [word for item in node for word in _words(item)]
    if not isinstance(node, dict):
        return []
    own = [word for key in ("command", "args") for word in node.get(key) or [] if isinstance(word, str)]
    return own + [word for key, value in node.items() if key not in ("command", "args") for word in _words(value)]


def _served_names(manifest: dict[str, Any]) -> set[str]:
    """The values of `--served-model-name` in the manifest's engine and decoder."""
    words = _words([manifest["spec"].get("engineConfig"), manifest["spec"].get("decoderConfig")])
    found = {words[i + 1] for i, word in enumerate(words[:-1]) if word == "--served-model-name"}
    return found | {word.split("=", 1)[1] for word in words if word.startswith("--served-model-name=")}


def _without_runtime(demo: Cluster) -> list[Resource]:
    rows = MatrixRow.objects.filter(build=current_build(demo), namespace="", outcome=MatrixRow.Outcome.NO_RUNTIME)
    return [row.model for row in rows.select_related("model").order_by("model__name")]


def _names_model(names: set[str], model: Resource, hf_id: str) -> bool:
    """Whether the served names name the model: its Hugging Face id, or a repository of its
    name (the catalog's srt-glm-4-9b-chat serves ZhipuAI/glm-4-9b-chat, the model's weights
    moved to zai-org/glm-4-9b-chat-hf)."""
    return any(name.lower() == hf_id.lower() or name.lower().split("/")[-1] == model.name for name in names)


def _check(model: Resource, proposal: Proposal, objects: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    hf_id = model.obj["spec"]["storage"]["storageUri"].removeprefix("hf://")
    for patch in proposal.fix.patches:
        if patch.target[0].endswith("ServingRuntime"):
            names = {name for name in _served_names(objects[patch.target]) if "/" in name}  # a model id, not an alias
            assert not names or _names_model(names, model, hf_id), (model.name, patch.target, names)
    for created in proposal.fix.created:
        assert _served_names(created) <= {hf_id}, (model.name, created["metadata"]["name"])
        assert not [item for item in proposal.fix.review if "--served-model-name" in item]
    if proposal.impact is not None:
        assert not proposal.impact.renames, (model.name, proposal.fix.changes)


@pytest.mark.django_db
def test_no_fix_of_a_model_without_runtime_serves_it_or_another_under_another_models_name(demo: Cluster) -> None:
    models = _without_runtime(demo)
    checked = created = 0
    assert len(models) >= 10
    for model in models:
        found: NearFixes = model_near_misses(model, "", scope=SYSTEM)
        keys = {patch.target for proposal in found.ranked for patch in proposal.fix.patches}
        objects = {
            key: Resource.objects.get(cluster=demo, kind=key[0], namespace=key[1], name=key[2]).obj for key in keys
        }
        for proposal in found.ranked:
            _check(model, proposal, objects)
            checked += 1
            created += bool(proposal.fix.created)
    assert checked >= len(models) // 2
    assert created >= 3


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "hf_id"), [("gemma-2b", "google/gemma-2b"), ("gemma-7b", "google/gemma-7b")])
def test_a_gemma_model_first_gets_its_own_runtime_served_under_its_own_name(
    demo: Cluster, name: str, hf_id: str
) -> None:
    """No runtime serves GemmaForCausalLM: the first fix creates one from the closest runtime,
    with the served name rewritten, a size range of the model's own size, and no other model
    picking it (gemma-7b does not land on srt-gemma-2b)."""
    model = Resource.objects.get(cluster=demo, kind="ClusterBaseModel", name=name)
    first = model_near_misses(model, "", scope=SYSTEM).ranked[0]

    (manifest,) = first.fix.created
    assert manifest["metadata"]["name"] == f"srt-{name}"
    assert _served_names(manifest) == {hf_id}
    assert first.fix.review == ()
    assert any(old != new and new == hf_id for _at, old, new in first.fix.arguments)
    size = model.obj["spec"]["modelParameterSize"]
    assert manifest["spec"]["modelSizeRange"] == {"min": size, "max": size}
    assert first.impact is not None
    assert first.impact.pick_of_target() == ("ClusterServingRuntime", "", f"srt-{name}")
    assert first.impact.harm == (0, 0, 0)
    assert not first.impact.others
    assert matching.parse_runtime(manifest).dedication is not None
