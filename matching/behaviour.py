"""Behaviour profiles: which OME the verdicts follow.

OME changed its runtime selection after commit 17b77eda (spec section 10, U1-U9). A profile is
one frozen set of those behaviours; every public function takes `behaviour=` (a profile or its
name) and passes the one `Behaviour` object down. `BEHAVIOURS` maps names to profiles,
`DEFAULT_BEHAVIOUR` names the default (the newest OME read).
"""

from __future__ import annotations

from dataclasses import dataclass

# The newer behaviours, by the spec's U-number, in words a platform engineer reads in an
# upgrade report. "U3s" is the scorer's half of U3, "U3w" the controller's wait for a Sharded model.
CHANGES: dict[str, str] = {
    "U1": "a modelSizeRange with only one bound works (the missing bound is an open end); older OME crashes on it",
    "U2": "the InferenceService's deployment mode must match the runtime's (a check after the accelerator check)",
    "U3": "a Sharded model needs a model cache provider on the entry, and none can be configured",
    "U3s": "the scorer skips formats that fail the model-cache-provider test for Sharded models, so they score 0",
    "U3w": "OME waits for a Sharded model whose Ready condition is not True for its current generation "
    "(a ModelNotReady event, checked again every 5 s) before it looks for any runtime",
    "U4": "a named runtime is looked up by spec.runtime.kind (ClusterServingRuntime first by default), "
    "and a missing ServingRuntime is reported with its kind; ValidateRuntime applies the kind only to the "
    "service's own runtime",
    "U5": "an incompatible named runtime is used anyway, with a RuntimeCompatibilityAdvisory event",
    "U6": "a missing runtime sets RuntimeReady=False with a RuntimeNotFound event instead of retrying",
    "U7": "spec.model.kind decides where the model is looked up, without falling back to the other scope "
    "(a missing kind: BaseModel is the API server's NotFound); an apiGroup other than ome.io is refused "
    "before the kind is read",
    "U8": "an InferenceService may omit spec.model when it names a runtime",
    "U9": "a named runtime resolves to its inheritance-merged spec (ome.io/inherit-from); a broken chain is "
    "not 'runtime not found' but an error OME retries (RuntimeValidationError, or RuntimeFetchError for a "
    "service without spec.model)",
    "modes": "the valid deployment modes changed",
    "A1": 'the runtime admission webhook refuses a runtime marked ome.io/runtime-profile: "true" without '
    "disabled: true, and one whose ome.io/inherit-from chain does not resolve, before it lets disabled "
    "runtimes through",
    "A2": "the runtime admission webhook refuses different priorities for one model format within a runtime "
    "even when no other runtime of its scope exists",
}

INHERIT_FROM_ANNOTATION = "ome.io/inherit-from"
RUNTIME_PROFILE_ANNOTATION = "ome.io/runtime-profile"
INHERIT_MAX_DEPTH = 5


@dataclass(frozen=True, slots=True)
class Behaviour:
    """One OME's selection behaviour.

    `changes`: the U-numbers of `CHANGES` this OME has. `deployment_modes`: the modes its
    deployment-mode check counts (any other value counts as no mode). `up_to_release`: the
    newest release tag this profile stands for, or None for "every later release" (compared
    by the dashboard with `packaging`, outside this pure library).
    """

    name: str
    commit: str
    date: str
    summary: str
    changes: frozenset[str]
    deployment_modes: frozenset[str]
    up_to_release: str | None

    def has(self, change: str) -> bool:
        return change in self.changes

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "commit": self.commit,
            "date": self.date,
            "summary": self.summary,
            "changes": sorted(self.changes),
            "deploymentModes": sorted(self.deployment_modes),
            "upToRelease": self.up_to_release,
        }


OME_17B77EDA = Behaviour(
    name="17b77eda",
    commit="17b77edad23bae262e0c9adb7f12039397a5d33d",
    date="2026-05-06",
    summary=(
        "OME at commit 17b77eda (release v0.1.5 and earlier): no one-bound size ranges (a half-open "
        "modelSizeRange crashes it), no deployment-mode check, no Sharded models, named runtimes and "
        "models looked up in the namespace first whatever their kind, every incompatible named runtime blocks"
    ),
    changes=frozenset(),
    # pkg/constants/constants.go at 17b77eda, DeploymentModeType.IsValid; no selection check reads them.
    deployment_modes=frozenset({"Serverless", "RawDeployment", "MultiNodeRayVLLM", "MultiNode", "VirtualDeployment"}),
    up_to_release="0.1.5",
)

OME_078C923F = Behaviour(
    name="078c923f",
    commit="078c923f467715e273d6b3adfee5220e53d38ecf",
    date="2026",
    summary=(
        "Newer OME (sgl-project/ome 078c923f, what the docs call v1.3): one-bound size ranges (U1), "
        "deployment-mode check (U2), Sharded models need a model cache provider, also in the scorer (U3), "
        "and a Ready condition before selection (U3w), "
        "named runtimes by spec.runtime.kind (U4), advisory for incompatible named runtimes (U5), "
        "RuntimeReady (U6), spec.model.kind (U7), lean InferenceServices (U8), runtime inheritance (U9)"
    ),
    changes=frozenset({"U1", "U2", "U3", "U3s", "U3w", "U4", "U5", "U6", "U7", "U8", "U9", "modes", "A1", "A2"}),
    # pkg/constants/constants.go (sgl-project/ome), DeploymentModeType.IsValid.
    deployment_modes=frozenset({"RawDeployment", "MultiNode", "VirtualDeployment", "OMENative"}),
    up_to_release=None,
)

BEHAVIOURS: dict[str, Behaviour] = {profile.name: profile for profile in (OME_17B77EDA, OME_078C923F)}
DEFAULT_BEHAVIOUR = OME_078C923F.name
NEWEST_BEHAVIOUR = OME_078C923F.name

BehaviourInput = Behaviour | str


def as_behaviour(value: BehaviourInput) -> Behaviour:
    """The profile itself, or the one of that name; an unknown name raises ValueError listing them."""
    if isinstance(value, Behaviour):
        return value
    found = BEHAVIOURS.get(value)
    if found is None:
        raise ValueError(f"unknown OME behaviour {value!r}: expected one of {', '.join(BEHAVIOURS)}")
    return found


def changes_between(old: BehaviourInput, new: BehaviourInput) -> list[str]:
    """The U-numbers one profile has and the other lacks, in `CHANGES` order."""
    first, second = as_behaviour(old), as_behaviour(new)
    return [code for code in CHANGES if first.has(code) != second.has(code)]
