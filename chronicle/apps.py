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
            api_schema,  # noqa: F401  (registers the token scheme with drf-spectacular)
            celery,  # noqa: F401
            rules,
        )

        rules.install_translations(translation.gettext, translation.ngettext)

        # A JSON body's string and boolean fields take only strings and booleans (issue 16).
        from . import api_json_types

        api_json_types.install()

        # A password changed any way (account page, reset, admin) or an account deactivated
        # revokes every API token of the person (issue 16).
        from django.contrib.auth.models import User
        from django.db.models.signals import post_save

        from .services import api_tokens

        post_save.connect(api_tokens.user_saved, sender=User, dispatch_uid="api_tokens_revoke")
