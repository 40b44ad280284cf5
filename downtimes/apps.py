from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_save


class DowntimesConfig(AppConfig):
    name = "downtimes"

    def ready(self) -> None:
        # The purchase queue (characters) decides XP purchases; their desk items live here, a
        # floor up, so the desk follows each saved purchase rather than characters reaching up.
        from characters.models import XpPurchase

        post_save.connect(_purchase_saved, sender=XpPurchase, dispatch_uid="desk_follow_purchase")
        # The reasons this app writes into the characters' ledgers, in each reader's language.
        from . import ledger_words

        ledger_words.register()


def _purchase_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    from .services.desk import desk_follow_purchase

    if not created:
        desk_follow_purchase(purchase=instance)
