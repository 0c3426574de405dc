"""HTML pages of the matrix: the grid and its counts, a cell, a model, a runtime, the InferenceServices."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "matrix"

urlpatterns = [
    path("matrix/", views.matrix, name="matrix"),
    path("matrix/counts/", views.matrix_counts, name="matrix-counts"),
    path("matrix/version/", views.matrix_version_poll, name="matrix-version"),
    # scope: the row's namespace, `_cluster` for cluster scope.
    path("cells/<int:model_id>/<int:runtime_id>/<slug:scope>/", views.cell, name="cell"),
    path("cells/<int:model_id>/<int:runtime_id>/<slug:scope>/reason/", views.cell_reason_line, name="cell-reason"),
    path("models/<int:pk>/", views.model, name="model"),
    path("runtimes/<int:pk>/", views.runtime, name="runtime"),
    path("inferenceservices/", views.isvcs, name="isvcs"),
]
