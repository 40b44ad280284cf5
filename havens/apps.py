from django.apps import AppConfig


class HavensConfig(AppConfig):
    name = "havens"

    def ready(self) -> None:
        # The sentences havens rows keep in English, registered for `chronicle.stored_text`
        # wherever they are shown (a page, the API, a worker's mail).
        from . import words  # noqa: F401
