from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "reports"
    verbose_name = "PolicyReports in the clusters"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (connects the matrix_updated receiver)
