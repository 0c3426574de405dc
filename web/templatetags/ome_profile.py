"""`{% ome_profile cluster %}`: which OME behaviour profile judges the cluster, and why; every
page that shows one cluster's data carries it under its header (templates/base.html)."""

from __future__ import annotations

from typing import Any

from django import template

from inventory.models import Cluster
from inventory.ome_release import judge

register = template.Library()


@register.inclusion_tag("inventory/ome_profile.html")
def ome_profile(cluster: object) -> dict[str, Any]:
    if not isinstance(cluster, Cluster) or cluster.pk is None:
        return {"judgement": None}
    return {"cluster": cluster, "judgement": judge(cluster)}
