"""What a change of OME's pick does to people (matching/effects.py): a gain, a loss, a rename
(the new runtime is dedicated to another model) or a move, and the harm, worst first.

The runtimes are OME's catalog srt-phi-2 (it passes `--served-model-name microsoft/phi-2`) and
the generic runtime of ome-docs (test_dedicated.GENERIC)."""

from __future__ import annotations

import matching
from tests.matching.test_dedicated import GENERIC, PHI, _load

PHI_RUNTIME = matching.parse_runtime(_load(PHI))
GENERIC_RUNTIME = matching.parse_runtime(GENERIC)
PHI_MODEL = matching.parse_model(_load("demo/models/microsoft/phi-2.yaml"))
GEMMA = matching.parse_model(_load("demo/models/google/gemma-2b.yaml"))


def test_each_kind_of_effect() -> None:
    assert matching.pick_effect(GEMMA, None, GENERIC_RUNTIME) == matching.GAINS
    assert matching.pick_effect(GEMMA, GENERIC_RUNTIME, None) == matching.LOSSES
    assert matching.pick_effect(GEMMA, GENERIC_RUNTIME, PHI_RUNTIME) == matching.RENAMES
    assert matching.pick_effect(GEMMA, None, PHI_RUNTIME) == matching.RENAMES  # no gain under phi-2's name
    assert matching.pick_effect(PHI_MODEL, GENERIC_RUNTIME, PHI_RUNTIME) == matching.MOVES
    assert matching.pick_effect(PHI_MODEL, None, PHI_RUNTIME) == matching.GAINS


def test_leaving_the_runtime_dedicated_to_the_model() -> None:
    assert matching.is_own(PHI_RUNTIME, PHI_MODEL)
    assert not matching.is_own(PHI_RUNTIME, GEMMA)
    assert not matching.is_own(GENERIC_RUNTIME, PHI_MODEL)  # generic: nobody's own
    assert matching.leaves_own(PHI_MODEL, PHI_RUNTIME, GENERIC_RUNTIME)
    assert matching.leaves_own(PHI_MODEL, PHI_RUNTIME, None)
    assert not matching.leaves_own(PHI_MODEL, PHI_RUNTIME, PHI_RUNTIME)
    assert not matching.leaves_own(GEMMA, PHI_RUNTIME, GENERIC_RUNTIME)


def test_harm_counts_losses_then_renames_then_moves_and_no_gain() -> None:
    effects = [matching.GAINS, matching.MOVES, matching.RENAMES, matching.MOVES, matching.GAINS]
    assert matching.harm(effects) == (0, 1, 2)
    assert (
        matching.harm([matching.LOSSES]) > matching.harm([matching.RENAMES] * 5) > matching.harm([matching.MOVES] * 9)
    )
    assert matching.harm([matching.GAINS] * 3) == (0, 0, 0)


def test_a_model_on_a_pvc_is_the_own_model_of_the_runtime_serving_its_folders_repository() -> None:
    """The demo's qwen-image-pvc (pvc://research:qwen-image-models/Qwen-Image) and the catalog's
    srt-qwen-image, which serves Qwen/Qwen-Image."""
    model = matching.parse_model(_load("demo/seed/clusterbasemodel-qwen-image-pvc.yaml"))
    runtime = matching.parse_runtime(_load("catalog/runtimes/srt/Qwen/Qwen-Image-rt.yaml"))
    assert runtime.dedication is not None
    assert matching.is_own(runtime, model)
    moved = {**_load("demo/seed/clusterbasemodel-qwen-image-pvc.yaml")}
    moved["spec"] = {**moved["spec"], "storage": {"storageUri": "pvc://research:models/Other-Model"}}
    assert not matching.is_own(runtime, matching.parse_model(moved))
