"""HTML pages of the matrix: the grid and its counts, a cell, a model, a runtime, the InferenceServices."""

from __future__ import annotations

from django.urls import path

from .views import cell, freshness, isvcs, matrix, model, runtime, upgrade

app_name = "matrix"

urlpatterns = [
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
