from django.apps import AppConfig


class PatchesConfig(AppConfig):
    name = "patches"
    verbose_name = "Pipeline patches"
    default_auto_field = "django.db.models.BigAutoField"
