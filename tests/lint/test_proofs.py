"""Lint fixes proven before they are shown: every suggested fix is run through the what-if,
and its text states what the what-if found. A property over two realistic clusters (the
bundled demo, and the OME catalog's runtimes with its models): no fix's text disagrees with
an independent what-if of the fix (`whatif.services.whatif_inventory`)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from inventory.manifests import read_manifests
from lint.rules import lint_inventory
from lint.rules.fixes import Fix
from lint.rules.proofs import Proof, proofs_json, prove, proven_groups, with_proofs
from matching import ObjectKey
from tests.support.demo import DEMO_FOLDERS
from tests.support.inventory import inventory_from_objects
from whatif.services import whatif_inventory

CLUSTERS = {"demo": DEMO_FOLDERS, "ome-catalog": ("catalog/runtimes", "catalog/models")}
# Words of a prediction: a fix's own text says only what it changes; what follows is the proof's.
PREDICTIONS = re.compile(r"\b(wins?|should|then|no pick)\b")


def objects_of(folders: tuple[str, ...]) -> dict[ObjectKey, dict[str, Any]]:
    snapshot = read_manifests([Path(settings.BASE_DIR) / folder for folder in folders])
    return {key: obj for objects in snapshot.objects.values() for key, obj in objects.items()}


@pytest.fixture(scope="module", params=sorted(CLUSTERS))
def proven(request: pytest.FixtureRequest) -> tuple[Any, dict[ObjectKey, dict[str, Any]], list[Any]]:
    raw = objects_of(CLUSTERS[request.param])
    inventory = inventory_from_objects(raw.values())
    groups = proven_groups(lint_inventory(inventory).groups, inventory, raw)
    return inventory, raw, groups


def whatif_moves(inventory: Any, raw: dict[ObjectKey, dict[str, Any]], fixes: list[Fix]) -> Counter[tuple[Any, ...]]:
    """(model, old pick, new pick) -> rows, by the what-if of the dashboard (not the lint's)."""
    documents = {key: raw[key] for fix in fixes for key in fix.changed}
    for fix in fixes:
        for key in fix.changed:
            documents[key] = fix.apply_to(key, documents[key])
    result = whatif_inventory(inventory, list(documents.values()), explain=False)
    return Counter((row.model, row.old_selected, row.new_selected) for row in result.rows if row.pick_changed)


def text_moves(proof: Proof) -> set[tuple[str, str]]:
    return set(re.findall(r"move from (\S+) to (\S+?)(?:;|$)", proof.text))


def test_every_fix_is_proven_and_its_text_agrees_with_the_whatif(proven: Any) -> None:
    inventory, raw, groups = proven
    checked = 0
    for group in groups:
        if group.fix is None:
            continue
        assert not PREDICTIONS.search(group.fix.summary), group.fix.summary
        assert group.proof is not None, group.key
        expected = whatif_moves(inventory, raw, [group.fix])
        assert Counter({(m.model, m.old, m.new): m.rows for m in group.proof.moves}) == expected, group.key
        named = {
            ("no runtime" if old is None else old[2], "no runtime" if new is None else new[2])
            for _m, old, new in expected
        }
        assert text_moves(group.proof) == named, group.proof.text
        assert ("no model's pick changes" in group.proof.text) == (not expected)
        if group.pair is not None:
            assert group.partner is not None
            together = whatif_moves(inventory, raw, [group.fix, group.partner])
            assert Counter({(m.model, m.old, m.new): m.rows for m in group.pair.moves}) == together, group.key
        if group.alternative is not None:
            assert not PREDICTIONS.search(group.alternative.summary), group.alternative.summary
            assert group.alternative_proof is not None
            instead = whatif_moves(inventory, raw, [group.alternative])
            moves = group.alternative_proof.moves
            assert Counter({(m.model, m.old, m.new): m.rows for m in moves}) == instead, group.key
        checked += 1
    assert checked >= 10


def test_fixes_that_move_models_onto_another_flagged_runtime_are_shown_together(proven: Any) -> None:
    _inventory, _raw, groups = proven
    by_key = {group.key: group for group in groups}
    subjects = {group.runtimes[0]: group for group in groups if group.fix is not None}
    for group in groups:
        if group.proof is None:
            continue
        partners = [subjects[key] for key in group.proof.destinations if key in subjects and subjects[key] is not group]
        # The relation goes both ways: the runtime the models move onto shows the pair too.
        partners += [
            other
            for other in groups
            if other is not group and other.proof is not None and group.runtimes[0] in other.proof.destinations
        ]
        assert (group.pair is not None) == bool(partners), group.key
        if group.pair is not None:
            (partner_key,) = group.pair.together
            assert by_key[partner_key].fix == group.partner


def test_the_demos_range_fix_says_its_models_move_to_a_runtime_without_a_range_and_shows_the_pair() -> None:
    raw = objects_of(DEMO_FOLDERS)
    inventory = inventory_from_objects(raw.values())
    groups = proven_groups(lint_inventory(inventory).groups, inventory, raw)

    top = next(
        group for group in groups if group.key == "no-size-range:ClusterServingRuntime srt-deepseek-r1-distill-qwen-14b"
    )

    assert top.proof is not None
    assert "move from srt-deepseek-r1-distill-qwen-14b to srt-deepseek-r1-distill-qwen-32b" in top.proof.text
    assert "srt-deepseek-r1-distill-qwen-32b has no modelSizeRange either" in top.proof.text
    # Both runtimes pass --served-model-name deepseek-ai/DeepSeek-R1-Distill-Qwen-14B (-32B)
    # (catalog/runtimes/srt/deepseek-ai): each keeps its own model, with that model's size.
    assert top.fix is not None
    assert top.fix.patch == {"spec": {"modelSizeRange": {"min": "14B", "max": "14B"}}}
    assert top.partner is not None
    assert top.partner.target[2] == "srt-deepseek-r1-distill-qwen-32b"
    assert top.partner.patch == {"spec": {"modelSizeRange": {"min": "32B", "max": "32B"}}}
    assert top.pair is not None
    moved = {move.model[2]: move.new for move in top.pair.moves}
    assert moved["deepseek-r1-distill-qwen-32b"] == ("ClusterServingRuntime", "", "srt-deepseek-r1-distill-qwen-32b")
    assert "deepseek-r1-distill-qwen-14b" not in moved  # stays on the runtime dedicated to it
    stored = json.loads(json.dumps(proofs_json(groups)))
    again = {group.key: group for group in with_proofs(lint_inventory(inventory).groups, stored)}
    assert again[top.key].pair == top.pair  # the pair round-trips through what the task stores


def test_a_runtime_that_loses_only_on_score_is_offered_a_priority_too(proven: Any) -> None:
    """Not only "disable it": where a shadowed runtime loses on score alone, the priority that
    makes it outscore its winners, proven: the models it matches move onto it; unless that
    takes a model off a runtime dedicated to it (then it is not offered)."""
    inventory, raw, groups = proven
    candidates = {group.key: group.alternative for group in lint_inventory(inventory).groups if group.alternative}

    assert candidates
    for group in groups:
        if group.key not in candidates:
            assert group.alternative is None
            continue
        assert group.cause == "shadowed"
        proof = prove(inventory, raw, [candidates[group.key]])
        assert proof is not None
        if group.alternative is None:
            assert proof.off_own, proof.text
            continue
        assert group.alternative_proof is not None
        assert not group.alternative_proof.off_own
        assert group.runtimes[0] in {move.new for move in group.alternative_proof.moves}, group.alternative_proof.text


def test_no_offered_fix_moves_a_model_off_a_runtime_dedicated_to_it(proven: Any) -> None:
    """Issue 33: a fix, a pair or an alternative that takes a model off the runtime whose
    container serves it by name is never offered (matching.Dedication)."""
    inventory, _raw, groups = proven
    for group in groups:
        for proof in (group.proof if group.fix else None, group.pair, group.alternative_proof):
            for move in () if proof is None else proof.moves:
                old = None if move.old is None else inventory.runtimes[move.old]
                mine = (
                    old is not None
                    and old.dedication is not None
                    and not old.serves_as_other(inventory.models[move.model])
                )
                assert not mine, (group.key, move)


def test_stored_proofs_give_back_the_groups_as_proven(proven: Any) -> None:
    """What the proving task stores (JSON, lint.models.LintProofs) is what the page shows: the
    same proofs, texts, pairs and partner fixes as proving in the request did."""
    inventory, _raw, groups = proven
    stored = json.loads(json.dumps(proofs_json(groups)))

    again = with_proofs(lint_inventory(inventory).groups, stored)

    assert again == groups  # the demo's pair round-trips too: test_the_demos_range_fix_...
    for old, new in zip(groups, again, strict=True):
        for before, after in (
            (old.proof, new.proof),
            (old.pair, new.pair),
            (old.alternative_proof, new.alternative_proof),
        ):
            assert (before and (before.text, before.destinations)) == (after and (after.text, after.destinations))


def test_a_fix_the_whatif_cannot_prove_is_not_offered_nor_stored_as_offered(proven: Any) -> None:
    """A fix whose proof fails (here an object it changes is missing, as when the fixed object
    no longer parses) is left out with a reason, in the proving and in what the page reads back:
    no fix, pair or alternative is ever shown without its proof."""
    inventory, raw, groups = proven
    target = next(group for group in groups if group.fix is not None)
    missing = dict(raw)
    for key in target.fix.changed:
        missing.pop(key)
    fresh = lint_inventory(inventory).groups

    for made in (
        proven_groups(fresh, inventory, missing),
        with_proofs(fresh, json.loads(json.dumps(proofs_json(proven_groups(fresh, inventory, missing))))),
    ):
        by_key = {group.key: group for group in made}
        assert by_key[target.key].fix is None
        assert "could not prove" in by_key[target.key].no_fix
        for group in made:
            assert group.fix is None or group.proof is not None, group.key
            assert group.alternative is None or group.alternative_proof is not None, group.key
            assert group.pair is None or group.partner is not None, group.key
