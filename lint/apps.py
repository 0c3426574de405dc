from django.apps import AppConfig


class LintConfig(AppConfig):
    name = "lint"
    verbose_name = "Runtime lint"
