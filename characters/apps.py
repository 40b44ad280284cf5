from django.apps import AppConfig


class CharactersConfig(AppConfig):
    name = "characters"

    def ready(self) -> None:
        # A member who leaves a chronicle takes their characters out of play (chronicle names
        # no app above it, so it announces the end and each app does its part).
        from chronicle.signals import membership_ended

        from .services.records import on_membership_ended

        membership_ended.connect(on_membership_ended, dispatch_uid="characters-leave-play")

        # The sentences this app stores in English (ledger reasons, where blood is kept …) are
        # registered where they are written; load those modules now, so every process (a page,
        # a worker) can read any stored text back in its reader's language (chronicle.stored_text).
        from .importers import grapevine_values  # noqa: F401
        from .services import (  # noqa: F401
            bonds,
            conduct,
            creation,
            imports,
            influence,
            ledger,
            purchases,
            records,
        )
