"""A member cluster of an Argo CD hub (settings.OME_ARGOCD_HUB), by its cluster Secret, whose
credentials are read from the hub at each use (inventory.kube.argocd). inventory.argocd
registers and removes these as the Secrets come and go; the page registers one by hand."""

from __future__ import annotations

from django.conf import settings

from ..kube import KubeError
from ..kube.argocd import cluster_secrets, member_kubeconfig
from ..models import Cluster
from .base import ClientConfig, ClusterSource, ClusterSpec, Offer


class ArgoCDSource(ClusterSource):
    key = "argocd"
    member = "ARGOCD"
    label = "Argo CD"
    order = 20
    live = True
    page_label = "An Argo CD cluster Secret"
    field_label = "Argo CD cluster Secret"
    none_offered = "no Argo CD hub (OME_ARGOCD_HUB) or no cluster Secret on it"

    def describe(self, cluster: Cluster) -> str:
        return f"Argo CD cluster Secret {cluster.argocd_secret}"

    def offer(self) -> Offer:
        """The hub's cluster Secrets, by name and server (none without a hub)."""
        if not settings.OME_ARGOCD_HUB:
            return Offer()
        try:
            members = cluster_secrets(settings.OME_ARGOCD_NAMESPACE)
        except KubeError as error:
            return Offer(problems=[f"Argo CD hub: {error.message}"])
        return Offer(choices=[(m.secret, f"{m.name} ({m.server}), Secret {m.secret}") for m in members])

    def spec_from_page(self, name: str, value: str, offer: Offer) -> ClusterSpec:
        if value not in dict(offer.choices):
            return super().spec_from_page(name, value, offer)
        # One cluster per Secret: discovery keeps the Secret's cluster named as Argo CD names it.
        registered = Cluster.objects.filter(argocd_secret=value).first()
        if registered is not None:
            raise ValueError(f"The Secret {value} is registered already, as cluster {registered.name}.")
        return ClusterSpec(name, self.key, argocd_secret=value)

    def client_config(self, cluster: Cluster) -> ClientConfig:
        return ClientConfig(member_kubeconfig(cluster))


SOURCE = ArgoCDSource()
