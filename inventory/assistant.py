"""The objects an assistant's question about a cluster reads (the MCP endpoint, docs/mcp.md): a
reader's part of the cluster as a matching.AssistantTree, through the reader's scope."""

from __future__ import annotations

import matching
from access.scope import Scope

from .parsed import inventory_for
from .selectors import clusters_visible, resources_visible


def assistant_tree(cluster_name: str, *, scope: Scope) -> matching.AssistantTree:
    """The objects of the cluster named `cluster_name` that `scope` reads, with their parsed
    values (inventory_for). A cluster the reader may not read answers as one that does not exist."""
    cluster = clusters_visible(scope).filter(name=cluster_name).first()
    if cluster is None:
        raise matching.AssistantError(f"cluster {cluster_name!r}: no cluster of that name you may read")
    inventory = inventory_for(cluster, scope=scope)
    bodies = dict(resources_visible(scope).filter(cluster=cluster).values_list("id", "obj"))
    values: dict[matching.ObjectKey, matching.Model | matching.Runtime | matching.InferenceService] = {
        **inventory.models,
        **inventory.runtimes,
        **inventory.isvcs,
    }
    items = [(bodies[inventory.ids[key]], value) for key, value in values.items() if inventory.ids[key] in bodies]
    return matching.AssistantTree.of(items, behaviour=inventory.behaviour, invalid=inventory.invalid)
