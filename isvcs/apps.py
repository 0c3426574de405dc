from django.apps import AppConfig


class IsvcsConfig(AppConfig):
    name = "isvcs"
    verbose_name = "InferenceService verdicts"
