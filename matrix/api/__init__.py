"""The matrix's JSON API: cells (paged, exported), one cell's trace, a model's selection,
history and builds.

Every response here says which OME behaviour profile judged the cluster, and why: the
`X-OME-Behaviour` header (profile, commit, how it was chosen) and, for a published build,
`X-OME-Build`; JSON envelopes also carry `ome` (inventory.ome_release.ome_description) and
`build`.
"""

from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from .cells import CellChangeViewSet, MatrixBuildViewSet, MatrixCellDetail, MatrixCellList, SelectionView
from .export import MatrixCellCsv, MatrixCellJson
from .upgrade import UpgradeView

router = SimpleRouter()
router.register("matrix/builds", MatrixBuildViewSet, basename="matrix-build")
router.register("matrix/history", CellChangeViewSet, basename="cell-change")

urlpatterns = [
    path("matrix/cells/", MatrixCellList.as_view(), name="matrix-cells"),
    path("matrix/cells/export.csv", MatrixCellCsv.as_view(), name="matrix-cells-csv"),
    path("matrix/cells/export.json", MatrixCellJson.as_view(), name="matrix-cells-json"),
    path("matrix/cell/", MatrixCellDetail.as_view(), name="matrix-cell"),
    path("matrix/selection/", SelectionView.as_view(), name="matrix-selection"),
    path("matrix/upgrade/", UpgradeView.as_view(), name="matrix-upgrade"),
]

# For the API root: key -> url name.
ROOT_ENDPOINTS = {
    "matrix/cells": "matrix-cells",
    "matrix/cells/export.csv": "matrix-cells-csv",
    "matrix/cells/export.json": "matrix-cells-json",
    "matrix/cell": "matrix-cell",
    "matrix/selection": "matrix-selection",
    "matrix/upgrade": "matrix-upgrade",
}
