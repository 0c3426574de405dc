"""HTML pages of the matrix, its cells, models, runtimes, InferenceServices, lint and patches."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "compat"

urlpatterns = [
    path("matrix/", views.matrix, name="matrix"),
    path("matrix/counts/", views.matrix_counts, name="matrix-counts"),
    path("matrix/version/", views.matrix_version_poll, name="matrix-version"),
    # scope: the row's namespace, `_cluster` for cluster scope.
    path("cells/<int:model_id>/<int:runtime_id>/<slug:scope>/", views.cell, name="cell"),
    path("cells/<int:model_id>/<int:runtime_id>/<slug:scope>/reason/", views.cell_reason_line, name="cell-reason"),
    path("models/<int:pk>/", views.model, name="model"),
    path("models/<int:pk>/patch/", views.patch, name="patch"),
    path("models/<int:pk>/model-index/", views.model_index, name="model-index"),
    path("patches/<int:pk>/", views.patch_result, name="patch-result"),
    path("runtimes/<int:pk>/", views.runtime, name="runtime"),
    path("runtimes/<int:pk>/what-if/", views.runtime_whatif, name="runtime-whatif"),
    path("inferenceservices/", views.isvcs, name="isvcs"),
    path("lint/", views.lint, name="lint"),
]
