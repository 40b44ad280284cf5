from django.apps import AppConfig


class CharactersConfig(AppConfig):
    name = "characters"

    def ready(self) -> None:
        # A member who leaves a chronicle takes their characters out of play (chronicle names
        # no app above it, so it announces the end and each app does its part).
        from chronicle.signals import membership_ended

        from .services.records import on_membership_ended

        membership_ended.connect(on_membership_ended, dispatch_uid="characters-leave-play")
