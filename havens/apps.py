from django.apps import AppConfig


class HavensConfig(AppConfig):
    name = "havens"
