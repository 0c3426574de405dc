from django.apps import AppConfig


class MatrixConfig(AppConfig):
    name = "matrix"
    verbose_name = "Compatibility matrix"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (connects to inventory_changed)
