"""Which OME each cluster runs, and so which behaviour profile of `matching` judges it.

Learned, in this order of trust:

1. set by an administrator (`manage.py ome_version CLUSTER VERSION`, or `NAME@VERSION=` in
   OME_CLUSTERS; for a manifest snapshot this is its registration): always wins;
2. the image tag of OME's controller Deployment (`ome-controller-manager` in OME's namespace,
   settings.OME_NAMESPACE), which needs `get` on deployments there (deploy/rbac.yaml);
3. else the CRDs' schemas: newer OME adds fields (BaseModel `spec.distribution`, U3), so the
   ClusterBaseModel CRD tells 17b77eda-era OME from newer (needs `get` on that CRD);
4. else the newest profile, saying that the version is unknown.

A release name of `matching.RELEASES` (v0.1.5, v1.2.2, v1.3) maps to its profile; any other
release tag to the oldest released profile whose `up_to_release` it does not exceed, compared
with `packaging` (tags like `v1.3.1`); later releases get the newest profile. A proposal
(`Behaviour.proposal`, an upstream pull request) is never detected: only an administrator who
names it sets it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from packaging.version import InvalidVersion, Version

import matching
from core.api import api_keys

from . import kube
from .models import Cluster
from .signals import inventory_changed
from .sync import Change

MODELS_CRD = "clusterbasemodels.ome.io"
# OME's controller, as its Helm chart and kustomize config install it (charts/ome-resources,
# config/manager at 17b77eda): Deployment ome-controller-manager, container "manager".
CONTROLLER_DEPLOYMENT = "ome-controller-manager"
CONTROLLER_CONTAINER = "manager"
# BaseModelSpec fields that OME added after 17b77eda (spec 10, U3).
NEWER_MODEL_FIELDS = ("distribution",)


@dataclass(frozen=True)
class Judgement:
    """The profile that judges a cluster, and why, in words for page headers and API bodies."""

    behaviour: matching.Behaviour
    source: str
    """admin | registration | image | crd | unknown"""
    version: str
    why: str

    @property
    def known(self) -> bool:
        """Whether the cluster's OME version is known (else it is judged by the newest profile)."""
        return bool(self.version)

    def to_dict(self) -> dict[str, object]:
        return {
            "profile": self.behaviour.name,
            "source": self.source,
            "version": self.version,
            "why": self.why,
            "summary": self.behaviour.summary,
            "version_known": self.known,
        }


def release_version(text: str) -> Version:
    """A release tag as `packaging` reads it (`v0.1.5` -> 0.1.5); ValueError if it is none."""
    try:
        return Version(text.strip().removeprefix("v"))
    except InvalidVersion:
        raise ValueError(
            f"{text!r} is neither a behaviour profile ({', '.join(matching.BEHAVIOURS)}) nor a release tag"
        ) from None


def profile_for(text: str) -> matching.Behaviour:
    """The profile of that name or release name, or the one that describes that release."""
    if text in matching.BEHAVIOURS or text in matching.RELEASES:
        return matching.as_behaviour(text)
    version = release_version(text)
    released = [matching.BEHAVIOURS[name] for name in matching.RELEASED]
    bounded = [profile for profile in released if profile.up_to_release is not None]
    for profile in sorted(bounded, key=lambda item: Version(item.up_to_release or "0")):
        if version <= Version(profile.up_to_release or "0"):
            return profile
    return matching.BEHAVIOURS[matching.NEWEST_BEHAVIOUR]


def _newest(source: str, why: str) -> Judgement:
    newest = matching.BEHAVIOURS[matching.NEWEST_BEHAVIOUR]
    return Judgement(newest, source, "", f"{why}: judged by the newest profile, {newest.name}")


def judge(cluster: Cluster) -> Judgement:
    """Which profile judges the cluster, and why."""
    admin = cluster.ome_version_admin
    if admin:
        source = "admin" if cluster.is_live else "registration"
        said = "set by an administrator" if cluster.is_live else "given at registration"
        try:
            profile = profile_for(admin)
        except ValueError as error:
            return _newest(source, f"the OME version {said} is unusable ({error})")
        return Judgement(profile, source, admin, f"OME {admin} {said}: profile {profile.name}")
    if cluster.ome_version:
        label = Cluster.OmeSource(cluster.ome_version_source).label if cluster.ome_version_source else "detection"
        try:
            profile = profile_for(cluster.ome_version)
        except ValueError as error:
            return _newest("unknown", f"the detected OME version is unusable ({error})")
        why = (
            f"OME {cluster.ome_version} detected from {label} ({cluster.ome_version_evidence}): profile {profile.name}"
        )
        return Judgement(profile, cluster.ome_version_source, cluster.ome_version, why)
    if not cluster.is_live:
        return _newest("registration", "a manifest snapshot registered without an OME version")
    return _newest("unknown", f"OME version not detected ({cluster.ome_version_evidence or _no_evidence(cluster)})")


def _no_evidence(cluster: Cluster) -> str:
    """Why detection left no evidence: it has not run yet, or it found nothing to say."""
    if not cluster.sync_states.filter(last_list_at__isnull=False).exists():
        return "not synced yet"
    return "synced, but OME's version has not been read since: the next full resync reads it"


@dataclass(frozen=True)
class Detection:
    version: str
    source: str
    evidence: str


def image_tag(image: str) -> str | None:
    """The tag of an image reference (`registry:5000/ome-manager:v0.1.5@sha256:...` -> v0.1.5)."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return name.split(":", 1)[1] if ":" in name else None


def controller_image(deployment: dict[str, Any]) -> str | None:
    """The image of the controller's `manager` container, else of its first one."""
    template = (deployment.get("spec") or {}).get("template") or {}
    containers = [c for c in (template.get("spec") or {}).get("containers") or [] if isinstance(c, dict)]
    chosen = next(
        (c for c in containers if c.get("name") == CONTROLLER_CONTAINER), containers[0] if containers else None
    )
    image = None if chosen is None else chosen.get("image")
    return image if isinstance(image, str) else None


def _from_image(api: Any, namespace: str, problems: list[str]) -> Detection | None:
    where = f"Deployment {namespace}/{CONTROLLER_DEPLOYMENT}"
    try:
        image = controller_image(kube.read_object(api, "deployments", namespace, CONTROLLER_DEPLOYMENT))
    except kube.KubeError as error:
        problems.append(f"{where}: {error.message}")
        return None
    tag = image_tag(image or "")
    try:
        release_version(tag or "")
    except ValueError:
        problems.append(f"{where} runs {image or 'no image'}, which has no release tag")
        return None
    return Detection(str(tag), Cluster.OmeSource.IMAGE, f"image {image} of {where}")


def _model_fields(crd: dict[str, object]) -> set[str]:
    """The `spec` fields of the CRD's served versions' schemas."""
    found: set[str] = set()
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    for version in versions if isinstance(versions, list) else []:
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
        model_spec = (schema.get("properties") or {}).get("spec") or {}
        found |= set((model_spec.get("properties") or {}).keys())
    return found


def _from_crds(api: Any, problems: list[str]) -> Detection | None:
    try:
        crd = kube.read_object(api, "customresourcedefinitions", "", MODELS_CRD)
    except kube.KubeError as error:
        problems.append(f"CRD {MODELS_CRD}: {error.message}")
        return None
    newer = [field for field in NEWER_MODEL_FIELDS if field in _model_fields(crd)]
    if newer:
        evidence = f"CRD {MODELS_CRD} has spec.{newer[0]}, which OME added after 17b77eda"
        return Detection(matching.NEWEST_BEHAVIOUR, Cluster.OmeSource.CRD, evidence)
    evidence = f"CRD {MODELS_CRD} has no spec.{NEWER_MODEL_FIELDS[0]}: OME 17b77eda or older"
    return Detection("17b77eda", Cluster.OmeSource.CRD, evidence)


def detect(api: Any, namespace: str) -> tuple[Detection | None, list[str]]:
    """What the cluster shows of its OME: the image tag, else the CRDs; and what could not be read."""
    problems: list[str] = []
    found = _from_image(api, namespace, problems) or _from_crds(api, problems)
    return found, problems


def ome_release_refresh(cluster: Cluster, api: Any) -> Judgement:
    """Detect the cluster's OME and record it. When that changes the profile, the matrix and
    everything computed from the inventory are recomputed (an `inventory_changed` for all)."""
    before = judge(cluster).behaviour.name
    found, problems = detect(api, settings.OME_NAMESPACE)
    if found is not None:
        cluster.ome_version, cluster.ome_version_source, cluster.ome_version_evidence = (
            found.version,
            found.source,
            "; ".join([found.evidence, *(f"before that: {problem}" for problem in problems)])[:512],
        )
    else:
        cluster.ome_version, cluster.ome_version_source = "", ""
        cluster.ome_version_evidence = "; ".join(problems)[:512]
    cluster.save(update_fields=["ome_version", "ome_version_source", "ome_version_evidence"])
    return _announce_change(cluster, before)


def ome_version_set_admin(cluster: Cluster, version: str) -> Judgement:
    """Set (or, with "", clear) the administrator's OME version; ValueError if it names no
    profile and no release."""
    if version:
        profile_for(version)
    before = judge(cluster).behaviour.name
    cluster.ome_version_admin = version
    cluster.save(update_fields=["ome_version_admin"])
    return _announce_change(cluster, before)


def _announce_change(cluster: Cluster, before: str) -> Judgement:
    after = judge(cluster)
    if after.behaviour.name != before:
        changes = [Change("*", "", "", "changed", ("omeBehaviour",))]
        transaction.on_commit(lambda: inventory_changed.send(sender=Cluster, cluster_id=cluster.pk, changes=changes))
    return after


def ome_description(cluster: Cluster) -> dict[str, object]:
    """What API responses say about the OME that judged the cluster: the profile, and why."""
    judgement = judge(cluster)
    return {**api_keys(judgement.behaviour.to_dict()), **judgement.to_dict()}


def ome_header(cluster: Cluster) -> str:
    """The X-OME-Behaviour header: the profile, its commit, and how it was chosen."""
    judgement = judge(cluster)
    return f"profile={judgement.behaviour.name}; commit={judgement.behaviour.commit}; source={judgement.source}"
