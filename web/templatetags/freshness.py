"""`{% freshness cluster %}`: the banner saying how current the cluster's data is
(matrix.freshness); every page that shows one cluster's verdicts carries it under its header
(templates/base.html), and it refreshes itself, so a page left open never claims to be current
after its cluster went stale."""

from __future__ import annotations

from typing import Any

from django import template

from core.web import poll_seconds
from inventory.models import Cluster
from matrix.freshness import Freshness, cluster_freshness

register = template.Library()


@register.inclusion_tag("matrix/freshness.html")
def freshness(cluster: object, judged: Freshness | None = None) -> dict[str, Any]:
    """The banner of `cluster`; `judged` when the caller has judged it already."""
    if not isinstance(cluster, Cluster) or cluster.pk is None:
        return {"freshness": None}
    return {
        "cluster": cluster,
        "freshness": judged or cluster_freshness(cluster),
        "poll_seconds": poll_seconds(),
    }
