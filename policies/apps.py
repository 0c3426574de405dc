from django.apps import AppConfig


class PoliciesConfig(AppConfig):
    name = "policies"
    verbose_name = "Policies and alerts"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (connects the matrix_updated receiver)
