from django.apps import AppConfig


class MatrixConfig(AppConfig):
    name = "matrix"
    verbose_name = "Compatibility matrix"

    def ready(self) -> None:
        from inventory.freshness import freshness_judge_plug

        from . import receivers  # noqa: F401  (connects to inventory_changed)
        from .freshness import cluster_freshness_data

        freshness_judge_plug(cluster_freshness_data)
