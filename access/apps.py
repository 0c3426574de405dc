from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "access"
    verbose_name = "Access: roles per cluster and namespace"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import identity  # noqa: F401  (registers the prefix check)
