from django.apps import AppConfig


class WhatifConfig(AppConfig):
    name = "whatif"
    verbose_name = "What-if"
