"""What a cluster source declares: where a cluster is registered (a kubeconfig context, an Argo
CD cluster Secret, a manifest folder, the pod's own service account), in one class per source.

A source says how a cluster of it is registered (the add-cluster page's field, the
`add_cluster` command's options, its OME_CLUSTERS syntax), described, and read: a live source
gives the kubeconfig that inventory.kube loads (blocking and asyncio clients alike) and is
watched; a snapshot source gives the manifest files that a sync loads. A module of
inventory.sources declares its source as `SOURCE = TheSource()`, and inventory.sources finds it;
nothing else branches on a cluster's source.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from django import forms

from ..kube_errors import KubeConfigError

if TYPE_CHECKING:
    from ..models import Cluster

Choice = tuple[str, str]
"""(value, label) of one option."""


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    source: str
    kubeconfig: str = ""
    context: str = ""
    manifests: tuple[str, ...] = ()
    argocd_secret: str = ""
    """NAMESPACE/NAME of the Argo CD cluster Secret (inventory.argocd registers these)."""
    ome_version: str = ""
    """The OME the cluster runs (a release tag or a profile name), if the registration says."""
    policy_reports: bool | None = None
    """Whether the cluster gets its findings as PolicyReports (docs/reports.md); None: as it was."""


@dataclass(frozen=True)
class ClientConfig:
    """What a live source gives inventory.kube to build a client from, in memory only:
    a kubeconfig dict and its context (None: the current one), or, when `kubeconfig` is None,
    the pod's service account. `base_path`: where relative file names of the kubeconfig start."""

    kubeconfig: dict[str, Any] | None = None
    context: str | None = None
    base_path: str = ""


IN_CLUSTER = ClientConfig()


@dataclass
class Offer:
    """What the add-cluster page offers of one source; `problems` says what could not be listed."""

    choices: list[Choice] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class ClusterSource(ABC):
    """One source of clusters. Subclasses set the class attributes and override what they do."""

    key: ClassVar[str]
    """The value stored in Cluster.source (never change it: rows hold it)."""
    member: ClassVar[str]
    """Its member's name in Cluster.Source (KUBECONFIG for Cluster.Source.KUBECONFIG)."""
    label: ClassVar[str]
    order: ClassVar[int]
    """Where the source comes in lists (the add-cluster page, the choices): ascending."""
    live: ClassVar[bool]
    """Read from an API server and watched; else a snapshot of manifest files, loaded on request."""
    page_label: ClassVar[str] = ""
    """The add-cluster page's name of the source; empty: not offered there."""
    field_label: ClassVar[str] = ""
    """The label of the page's field that chooses one of the offered choices."""
    none_offered: ClassVar[str] = ""
    """What the page says beside the field when nothing is offered (empty: nothing)."""
    command_noun: ClassVar[str] = ""
    """What the `add_cluster` command's help calls a cluster of it ("a kubeconfig context");
    empty: the command does not take it (then add_arguments adds nothing)."""
    setting_syntax: ClassVar[str] = ""
    """How OME_CLUSTERS writes it after `NAME=` (empty: OME_CLUSTERS cannot name it)."""
    api_registrable: ClassVar[bool] = False
    """The API and the admin may register it (they take the OME_CLUSTERS syntax)."""

    @abstractmethod
    def describe(self, cluster: Cluster) -> str:
        """Where the cluster is read from, in words; never a credential."""

    # Registration ---------------------------------------------------------------------------

    def offer(self) -> Offer:
        """What the add-cluster page offers to choose from."""
        return Offer()

    def form_field(self, offer: Offer) -> forms.Field:
        """The add-cluster page's field of this source (named by its key)."""
        return forms.ChoiceField(required=False, label=self.field_label, choices=[("", "—"), *offer.choices])

    def spec_from_page(self, name: str, value: str, offer: Offer) -> ClusterSpec:
        """The registration of `name` from the page's field; ValueError (or a DomainError with a
        message) saying why the value cannot be registered."""
        raise ValueError(f"{value!r} is not one of the offered {self.key} choices")

    def spec_from_setting(self, name: str, argument: str) -> ClusterSpec | None:
        """The registration of `NAME=KEY[:ARGUMENT]` of OME_CLUSTERS; None when malformed."""
        return None

    def add_arguments(self, sources: argparse._MutuallyExclusiveGroup, parser: argparse.ArgumentParser) -> None:
        """The `add_cluster` command's options of this source: one in `sources` (the command
        takes exactly one source), further ones on `parser`. None: the command cannot register it."""
        return None

    def spec_from_options(self, name: str, options: dict[str, Any]) -> ClusterSpec | None:
        """The registration from the `add_cluster` command's options; None when its option is not given."""
        return None

    def cluster_fields(self, spec: ClusterSpec) -> dict[str, Any]:
        """The Cluster fields of a registration, once checked (inventory.services.cluster_register)."""
        return {
            "kubeconfig": spec.kubeconfig,
            "context": spec.context,
            "manifests": list(spec.manifests),
            "argocd_secret": spec.argocd_secret,
        }

    # Reading ----------------------------------------------------------------------------------

    def client_config(self, cluster: Cluster) -> ClientConfig:
        """A live source's credentials of one cluster (blocking: the asyncio client calls it in a
        thread). KubeError or KubeconfigInvalid when they cannot be had."""
        raise KubeConfigError(f"cluster {cluster.name} is a manifest snapshot, not a live cluster")

    def snapshot_paths(self, cluster: Cluster) -> list[str]:
        """A snapshot source's manifest files and folders of one cluster."""
        raise TypeError(f"cluster {cluster.name} is live, not a manifest snapshot")
