"""Where a model can run across the fleet, for an assistant (the MCP endpoint's
`where_can_this_model_run`, docs/mcp.md): the fleet page's rows of that model."""

from __future__ import annotations

from typing import Any

from access.scope import Scope
from matching import key_dict

from .services import cell_dict, fleet_get


def model_reach(model: str, *, scope: Scope) -> dict[str, Any] | None:
    """For the model named `model` (`name` or `namespace/name`), in every cluster the reader
    reads whole (as the fleet page) and each namespace: OME's pick, or none; why clusters
    disagree. None when no such cluster holds a model of that name."""
    namespace, _, name = model.rpartition("/")
    fleet = fleet_get(scope=scope)
    rows = [row for row in fleet.rows if row.model[2] == name and (not namespace or row.model[1] == namespace)]
    if not rows:
        return None
    return {
        "clusters": [item.name for item in fleet.clusters],
        "rows": [
            {
                "model": key_dict(row.model),
                "namespace": row.namespace,
                "everyNamespace": row.everywhere,
                "byCluster": {cluster: cell_dict(cell) for cluster, cell in sorted(row.cells.items())},
                "whyClustersDisagree": fleet.reasons(row) if row.disagree else [],
            }
            for row in rows
        ],
    }
