"""The whole URL tree: the pages at /, the JSON API under /api/v1/ (its root lists every
endpoint here that takes no argument), its schema and docs, admin, sign-in.

Every path, name and namespace here is reversed by templates and tests: keep them.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.urls import URLPattern, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from web.api import access as access_api
from web.api import fleet as fleet_api
from web.api import inventory as inventory_api
from web.api import isvcs as isvcs_api
from web.api import lint as lint_api
from web.api import mcp as mcp_api
from web.api import patches as patches_api
from web.api import policies as policies_api
from web.api import whatif as whatif_api
from web.api import whatif_admission, whatif_check
from web.api.matrix import cells as matrix_cells_api
from web.api.matrix import export as matrix_export_api
from web.api.matrix.upgrade import UpgradeView
from web.api.root import router
from web.pages import (
    cell,
    fleet,
    freshness,
    history,
    home,
    inventory,
    isvcs,
    lint,
    matrix,
    model,
    patches,
    policies,
    runtime,
    upgrade,
    whatif,
)

router.register("clusters", inventory_api.ClusterViewSet, basename="cluster")
router.register("sync-states", inventory_api.SyncStateViewSet, basename="sync-state")
router.register("models", inventory_api.ModelViewSet, basename="model")
router.register("runtimes", inventory_api.RuntimeViewSet, basename="runtime")
router.register("inference-services", inventory_api.InferenceServiceViewSet, basename="inference-service")
router.register("tokens", access_api.ApiTokenViewSet, basename="api-token")
router.register("matrix/builds", matrix_cells_api.MatrixBuildViewSet, basename="matrix-build")
router.register("matrix/history", matrix_cells_api.CellChangeViewSet, basename="cell-change")
router.register("patches/audit", patches_api.PatchAttemptViewSet, basename="patch-audit")
router.register("patches", patches_api.PipelinePatchViewSet, basename="patch")

# The API's views that are not router resources.
api_views = [
    path("matrix/cells/", matrix_cells_api.MatrixCellList.as_view(), name="matrix-cells"),
    path("matrix/cells/export.csv", matrix_export_api.MatrixCellCsv.as_view(), name="matrix-cells-csv"),
    path("matrix/cells/export.json", matrix_export_api.MatrixCellJson.as_view(), name="matrix-cells-json"),
    path("matrix/cell/", matrix_cells_api.MatrixCellDetail.as_view(), name="matrix-cell"),
    path("matrix/selection/", matrix_cells_api.SelectionView.as_view(), name="matrix-selection"),
    path("matrix/upgrade/", UpgradeView.as_view(), name="matrix-upgrade"),
    path("matrix/whatif/", whatif_api.WhatIfView.as_view(), name="matrix-whatif"),
    path("matrix/near-misses/", whatif_api.NearMissView.as_view(), name="matrix-near-misses"),
    path("matrix/lint/", lint_api.LintView.as_view(), name="matrix-lint"),
    path(
        "matrix/lint/acknowledgements/",
        lint_api.LintAcknowledgementsView.as_view(),
        name="matrix-lint-acknowledgements",
    ),
    path("inference-services/verdicts/", isvcs_api.InferenceServiceVerdictsView.as_view(), name="isvc-verdicts"),
    path("whatif/check/", whatif_check.WhatIfCheckView.as_view(), name="whatif-check"),
    path("admission/<slug:cluster>/", whatif_admission.AdmissionView.as_view(), name="admission"),
    path("mcp/", mcp_api.McpView.as_view(), name="mcp"),
    path("fleet/", fleet_api.FleetView.as_view(), name="fleet"),
    path("fleet/runtimes/", fleet_api.FleetRuntimesView.as_view(), name="fleet-runtimes"),
    path("policies/check/", policies_api.PolicyCheckView.as_view(), name="policies-check"),
    path("policies/states/", policies_api.PolicyStatesView.as_view(), name="policies-states"),
]


def root_endpoints(patterns: list[URLPattern]) -> dict[str, str]:
    """The API root's list beside the router's resources: every view that takes no argument,
    keyed by its path without the trailing slash."""
    return {str(p.pattern).rstrip("/"): p.name for p in patterns if p.name and not p.pattern.converters}


router.APIRootView.extra_endpoints = root_endpoints(api_views)

matrix_pages = [
    path("matrix/", matrix.matrix, name="matrix"),
    path("matrix/counts/", matrix.matrix_counts, name="matrix-counts"),
    path("matrix/version/", matrix.matrix_version_poll, name="matrix-version"),
    path("freshness/", freshness.freshness, name="freshness"),
    # scope: the row's namespace, `_cluster` for cluster scope.
    path("cells/<int:model_id>/<int:runtime_id>/<slug:scope>/", cell.cell, name="cell"),
    path("cells/<int:model_id>/<int:runtime_id>/<slug:scope>/reason/", cell.cell_reason_line, name="cell-reason"),
    path("models/<int:pk>/", model.model, name="model"),
    path("runtimes/<int:pk>/", runtime.runtime, name="runtime"),
    path("inferenceservices/", isvcs.isvcs, name="isvcs"),
    path("matrix/upgrade/", upgrade.upgrade, name="upgrade"),
]
patches_pages = [
    path("models/<int:pk>/patch/", patches.patch, name="patch"),
    path("models/<int:pk>/model-index/", patches.model_index, name="model-index"),
    path("patches/<int:pk>/", patches.patch_result, name="patch-result"),
]
whatif_pages = [
    path("runtimes/<int:pk>/what-if/", whatif.runtime_whatif, name="runtime-whatif"),
    path("models/<int:pk>/near-misses/", whatif.near_misses, name="near-misses"),
]
lint_pages = [
    path("lint/", lint.lint, name="lint"),
    path("lint/acknowledge/", lint.acknowledge, name="acknowledge"),
]
inventory_pages = [
    path("sync/<slug:name>/resync/", inventory.resync, name="resync"),
    path("clusters/add/", inventory.cluster_add, name="cluster-add"),
    path("sync/<slug:name>/ome-version/", inventory.ome_version, name="ome-version"),
]

urlpatterns = [
    path("", home.home, name="home"),
    path("sync/", home.sync, name="sync"),
    path("search/", home.search, name="search"),
    path("history/", history.history, name="history"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(([*api_views, *router.urls], "api"), namespace="api")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its start-up script as a file: the Content-Security-Policy allows no inline script.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    # The pages of each area keep their namespace (templates reverse `matrix:cell`, `lint:lint`...).
    path("", include((matrix_pages, "matrix"))),
    path("", include((patches_pages, "patches"))),
    path("", include((whatif_pages, "whatif"))),
    path("", include((lint_pages, "lint"))),
    path("", include(([path("fleet/", fleet.fleet, name="fleet")], "fleet"))),
    path("", include(([path("policies/", policies.policies, name="policies")], "policies"))),
    path("", include((inventory_pages, "inventory"))),
    path("accounts/", include("django.contrib.auth.urls")),
]
if settings.OIDC_ENABLED:
    urlpatterns.append(path("oidc/", include("mozilla_django_oidc.urls")))
