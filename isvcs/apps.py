from django.apps import AppConfig


class IsvcsConfig(AppConfig):
    name = "isvcs"
    verbose_name = "InferenceService verdicts"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (connects the matrix_updated receiver)
