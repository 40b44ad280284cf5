from django.apps import AppConfig


class DowntimesConfig(AppConfig):
    name = "downtimes"
