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
from lint.rules.proofs import Proof, proofs_json, prove, proven_groups, ranked, with_proofs
from lint.rules.report import SEVERITIES
from matching import MOVES, RENAMES, ObjectKey
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
    """Unless together they are unsound (then neither shows the pair)."""
    inventory, raw, groups = proven
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
        assert group.pair is None or partners, group.key
        if partners and group.pair is None and group.fix is not None:
            # withheld: together they move a model off its own runtime or onto another model's
            together = prove(inventory, raw, [group.fix, lint_fix(partners[0].key, inventory)])
            assert together is not None
            assert together.off_own or together.of(RENAMES), group.key
        if group.pair is not None:
            (partner_key,) = group.pair.together
            assert by_key[partner_key].fix == group.partner


def test_the_demos_range_fixes_are_withheld_they_would_serve_qwen_models_under_deepseeks_name() -> None:
    """Issue 33: srt-deepseek-r1-distill-qwen-14b (no modelSizeRange) is picked for Qwen models
    too. Its range fix, alone or with srt-deepseek-r1-distill-qwen-32b's (the combined fix),
    hands the qwen2-5-32b models to srt-deepseek-r1-distill-qwen-32b, whose container serves
    deepseek-ai/DeepSeek-R1-Distill-Qwen-32B (catalog/runtimes/srt/deepseek-ai): a rename. No
    such fix is offered; the proof says why, the harm first, and round-trips through the store."""
    raw = objects_of(DEMO_FOLDERS)
    inventory = inventory_from_objects(raw.values())
    groups = proven_groups(lint_inventory(inventory).groups, inventory, raw)
    by_key = {group.key: group for group in groups}

    top = by_key["no-size-range:ClusterServingRuntime srt-deepseek-r1-distill-qwen-14b"]
    partner = by_key["shadowed:ClusterServingRuntime srt-deepseek-r1-distill-qwen-32b"]

    assert top.fix is None
    assert top.pair is None
    assert top.partner is None
    assert top.proof is not None
    renamed = {move.model[2] for move in top.proof.of(RENAMES)}
    assert {"qwen2-5-32b", "qwen2-5-32b-instruct", "qwen2-5-coder-32b-instruct"} <= renamed
    assert "deepseek-r1-distill-qwen-32b" not in renamed  # it reaches the runtime dedicated to it
    assert top.proof.harm == (0, len(renamed), 1)
    assert top.proof.text.startswith(f"the what-if: {len(renamed)} model(s) (")
    assert "would be served under another model's name: move from" in top.proof.text
    assert "qwen2-5-32b" in top.no_fix
    assert "onto srt-deepseek-r1-distill-qwen-32b, dedicated to another model" in top.no_fix
    assert partner.fix is not None  # alone it moves no model: offered
    assert partner.pair is None
    assert partner.proof is not None
    assert not partner.proof.moves
    # The combined fix, proven as the lint proves it, renames the same models.
    combined = prove(inventory, raw, [lint_fix(top.key, inventory), lint_fix(partner.key, inventory)])
    assert combined is not None
    assert {"qwen2-5-32b", "qwen2-5-32b-instruct"} <= {move.model[2] for move in combined.of(RENAMES)}
    stored = json.loads(json.dumps(proofs_json(groups)))
    again = {group.key: group for group in with_proofs(lint_inventory(inventory).groups, stored)}
    assert again[top.key] == top


def lint_fix(key: str, inventory: Any) -> Fix:
    fix = next(group.fix for group in lint_inventory(inventory).groups if group.key == key)
    assert fix is not None
    return fix


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


def test_no_offered_fix_moves_a_model_off_its_runtime_or_onto_another_models(proven: Any) -> None:
    """Issue 33, over every fix, combined fix (pair) and alternative the lint offers: no model
    leaves a runtime dedicated to it for one that is not, and no model that moves lands on a
    runtime dedicated to another model (it would be served under that model's name)."""
    inventory, _raw, groups = proven
    offered = 0
    for group in groups:
        for proof in (group.proof if group.fix else None, group.pair, group.alternative_proof):
            offered += proof is not None
            for move in () if proof is None else proof.moves:
                model = inventory.models[move.model]
                old, new = (None if key is None else inventory.runtimes[key] for key in (move.old, move.new))
                own = [
                    item is not None and item.dedication is not None and not item.serves_as_other(model)
                    for item in (old, new)
                ]
                assert not (own[0] and not own[1]), (group.key, move)
                assert new is None or not new.serves_as_other(model), (group.key, move)
    assert offered >= 10


def test_the_groups_of_each_severity_are_ranked_by_the_harm_of_their_fix(proven: Any) -> None:
    """Losses, then renames, then moves: a group whose offered fix harms fewer people comes
    first; the stored proofs read back in the same order."""
    _inventory, _raw, groups = proven
    keys = [
        (SEVERITIES.index(group.severity), group.proof.harm if group.fix and group.proof else (0, 0, 0))
        for group in groups
    ]
    assert keys == sorted(keys)
    by_key = {group.key: index for index, group in enumerate(groups)}
    shuffled = sorted(groups, key=lambda group: group.key)
    assert [group.key for group in ranked(shuffled)] != [group.key for group in shuffled]
    assert sorted(by_key[group.key] for group in ranked(shuffled)) == list(range(len(groups)))


def test_the_demos_pipeline_fix_moves_a_model_between_runtimes_of_its_own_and_ranks_after_harmless_ones() -> None:
    """The demo's qwen-image-pvc (stored in pvc://.../Qwen-Image) moves from srt-qwen-image to
    srt-qwen-image-pipeline, both serving Qwen/Qwen-Image: a move, not a rename, so the fix is
    offered, after the warnings whose fix moves no model."""
    raw = objects_of(DEMO_FOLDERS)
    inventory = inventory_from_objects(raw.values())
    groups = proven_groups(lint_inventory(inventory).groups, inventory, raw)
    position = next(index for index, group in enumerate(groups) if group.cause == "pipeline-missing-on-model")
    pipeline = groups[position]

    assert pipeline.fix is not None
    assert pipeline.proof is not None
    assert [(move.model[2], move.effect) for move in pipeline.proof.moves] == [("qwen-image-pvc", MOVES)]
    assert pipeline.proof.harm == (0, 0, 1)
    harmless = [
        group for group in groups[position + 1 :] if group.severity == pipeline.severity and group.fix is not None
    ]
    assert not harmless or all(group.proof is not None and group.proof.harm >= (0, 0, 1) for group in harmless)
    assert any(
        group.fix is not None and group.proof is not None and not group.proof.moves for group in groups[:position]
    )


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
