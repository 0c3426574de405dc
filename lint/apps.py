from django.apps import AppConfig


class LintConfig(AppConfig):
    name = "lint"
    verbose_name = "Runtime lint"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (connects the matrix_updated receiver)
