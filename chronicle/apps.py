from django.apps import AppConfig


class ChronicleConfig(AppConfig):
    name = "chronicle"
    verbose_name = "Chronicle"

    def ready(self) -> None:
        # Load the Celery app whenever Django is, so tasks enqueued from the web process use
        # the configured broker. Not in the package's __init__: importing chronicle.rules must
        # stay free of Django and Celery (SPEC RAPI).
        from django.utils import translation

        from . import (
            celery,  # noqa: F401
            rules,
        )

        rules.install_translations(translation.gettext, translation.ngettext)
