"""Behaviour profiles: which OME the verdicts follow.

OME changed its runtime selection after commit 17b77eda (spec section 10, U1-U9). A profile is
one frozen set of those behaviours; every public function takes `behaviour=` (a profile or its
name) and passes the one `Behaviour` object down. `BEHAVIOURS` maps names to profiles.

Two kinds of profile (docs/guide.md, "OME versions"): released OME, which a cluster can run and
the dashboard detects (`17b77eda`, `v1.3`), and upstream proposals (`proposal=True`: a branch or
pull request not documented as merged), which only the upgrade diff compares against.
`DEFAULT_BEHAVIOUR` and `NEWEST_BEHAVIOUR` name `v1.3`, the OME users are about to run: the
ome-docs pages describe it (spec 10.7); a proposal is never a default and never detected.
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
    "U7c": "only the model-config step honours spec.model.kind (default ClusterBaseModel): selection, admission "
    "and explain find the model namespace-first; with no model of the requested kind OME admits the service, "
    "chooses a runtime, then creates no workload and records no event (only its log says so)",
    "PVC": "the admission webhook refuses a pvc://{namespace}:{claim} ClusterBaseModel to services outside "
    "the claim's namespace (validateClusterBaseModelPVCNamespace)",
    "P603": "proposal ome#603: a runtime's score is its matching entry's priority (weights no longer count); "
    "order: scope, priority, size distance, name",
    "P594": "proposal ome#594: the runtime webhook refuses an auto-select runtime that overlaps another of "
    "equal priority",
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
    by the dashboard with `packaging`, outside this pure library). `proposal`: an upstream
    branch or pull request, not a release: never a default, never chosen for a release tag.
    `releases`: the release names that resolve to this profile (`RELEASES`).
    """

    name: str
    commit: str
    date: str
    summary: str
    changes: frozenset[str]
    deployment_modes: frozenset[str]
    up_to_release: str | None
    proposal: bool = False
    releases: tuple[str, ...] = ()

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
            "proposal": self.proposal,
            "releases": list(self.releases),
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
    up_to_release="1.2.2",
    releases=("v0.1.5", "v1.2.2"),
)

# A1 and A2: the runtime webhook of the newer sigs.k8s.io/ome module (validateProfileMarker, the
# chain check, ValidatePriority outside the loop), which ome-docs' runtime-inheritance.md describes.
_NEWER = frozenset({"U1", "U2", "U3", "U3s", "U3w", "U4", "U5", "U6", "U8", "U9", "modes", "A1", "A2"})
# pkg/constants/constants.go (sgl-project/ome), DeploymentModeType.IsValid.
_NEWER_MODES = frozenset({"RawDeployment", "MultiNode", "VirtualDeployment", "OMENative"})

OME_V13 = Behaviour(
    name="v1.3",
    commit="a543351b5b64a2b3675a25e5f1517f2f46c3b34f",
    date="2026",
    summary=(
        "OME v1.3 as documented (ome-projects/ome-docs, generated against a pin that only moves forward along "
        "OME's main; its pages describe the a543351b line, spec 10.7): one-bound size ranges (U1), "
        "deployment-mode check (U2), Sharded models need a model cache provider, also in the scorer (U3), "
        "a Ready condition before selection (U3w), named runtimes by spec.runtime.kind (U4), advisory for "
        "incompatible named runtimes (U5), RuntimeReady (U6), lean InferenceServices (U8), runtime inheritance "
        "(U9); models looked up namespace-first whatever their kind, which only the model-config step honours "
        "(U7c: a wrong kind fails silently), and pvc:// ClusterBaseModels usable only in the claim's namespace (PVC)"
    ),
    changes=_NEWER | {"U7c", "PVC"},
    deployment_modes=_NEWER_MODES,
    up_to_release=None,
    releases=("v1.3",),
)

OME_078C923F = Behaviour(
    name="078c923f",
    commit="078c923f467715e273d6b3adfee5220e53d38ecf",
    date="2026",
    summary=(
        'Proposal "strict model kind" (485b7933, a side branch not documented as merged; read at sgl-project/ome '
        "078c923f): v1.3's selection rules, but spec.model.kind decides where the controller looks for the model, "
        "without falling back to the other scope, and an apiGroup other than ome.io is refused (U7)"
    ),
    changes=_NEWER | {"U7"},
    deployment_modes=_NEWER_MODES,
    up_to_release=None,
    proposal=True,
)


def _proposal_on_v13(name: str, pull: str, date: str, change: str, summary: str) -> Behaviour:
    """An open pull request against OME's main: v1.3 with one behaviour of `CHANGES` added."""
    return Behaviour(
        name=name,
        commit=f"ome-projects/ome#{pull}",
        date=date,
        summary=f"Proposal ome#{pull} (open pull request): v1.3, but {summary}",
        changes=OME_V13.changes | {change},
        deployment_modes=_NEWER_MODES,
        up_to_release=None,
        proposal=True,
    )


OME_PR603 = _proposal_on_v13(
    "pr603",
    "603",
    "2026-05-08",
    "P603",
    "\"Scope-first runtime tie-breaking; deprecate Weight\": a runtime's score is its best matching entry's "
    "priority, and runtimes rank by scope, priority, size distance, name",
)
OME_PR594 = _proposal_on_v13(
    "pr594",
    "594",
    "2026",
    "P594",
    "the runtime admission webhook refuses an auto-select runtime that overlaps another of equal priority",
)

BEHAVIOURS: dict[str, Behaviour] = {
    profile.name: profile for profile in (OME_17B77EDA, OME_V13, OME_078C923F, OME_PR603, OME_PR594)
}
DEFAULT_BEHAVIOUR = OME_V13.name
NEWEST_BEHAVIOUR = OME_V13.name
RELEASED: tuple[str, ...] = tuple(name for name, profile in BEHAVIOURS.items() if not profile.proposal)
"""The profiles of released OME, oldest first: those a cluster can run and detection may choose."""

RELEASES: dict[str, str] = {release: profile.name for profile in BEHAVIOURS.values() for release in profile.releases}
"""OME's release names, each to the profile that follows its rules (docs/guide.md, "OME versions",
gives the evidence). v0.1.5: 17b77eda is OME at a commit of 2026-05-06 that the spec dates after
it. v1.2.2: "the latest release" (ome-docs `getting-started/install.md`, whose controller image is
`ome-manager:v1.2.2`); the pages mark one-bound size ranges (U1), spec.runtime.kind (U4),
RuntimeNotFound (U6), lean services (U8), inheritance (U9) and the OMENative mode as "since
v1.3", which only 17b77eda lacks. v1.3: "in main but not yet in a release" (the same page): the
documented mainline."""

BehaviourInput = Behaviour | str


def behaviour_names() -> str:
    """Every name `as_behaviour` accepts, in words for error messages and help."""
    return f"{', '.join(BEHAVIOURS)} or a release: {', '.join(RELEASES)}"


def as_behaviour(value: BehaviourInput) -> Behaviour:
    """The profile itself, the one of that name, or the one a release name (`RELEASES`)
    resolves to; an unknown name raises ValueError listing them."""
    if isinstance(value, Behaviour):
        return value
    found = BEHAVIOURS.get(value) or BEHAVIOURS.get(RELEASES.get(value, ""))
    if found is None:
        raise ValueError(f"unknown OME behaviour {value!r}: expected one of {behaviour_names()}")
    return found


def changes_between(old: BehaviourInput, new: BehaviourInput) -> list[str]:
    """The U-numbers one profile has and the other lacks, in `CHANGES` order."""
    first, second = as_behaviour(old), as_behaviour(new)
    return [code for code in CHANGES if first.has(code) != second.has(code)]
