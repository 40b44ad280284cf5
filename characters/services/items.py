"""Items (ITM-01..03): an ST adds one (costing at least 1), repairs it (for less than it cost),
or downgrades its concealment; each refusal names its rule and writes nothing."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from chronicle.models import Chronicle
from chronicle.rules import settings_for
from chronicle.services import chronicle_today

from .. import rules
from ..models import (
    Character,
    Concealability,
    Item,
)
from .common import refusal

# --- Items (ITM-01..03) --------------------------------------------------------------------------


def _lifetime_end(chronicle: Chronicle, now: dt.datetime) -> dt.date:
    """ITM-02: the item lifetime is a house-rule setting."""
    months = chronicle.house_rules.item_lifetime_months
    return rules.add_months(chronicle_today(chronicle, now), months)


@transaction.atomic
def item_add(
    *,
    character: Character,
    name: str,
    concealability: str,
    armor: int,
    purchase_cost: int,
    potence_reinforced: bool,
    by: User,
    now: dt.datetime | None = None,
) -> Item:
    """ITM-01: an item with its expiry; armor 4-5 is obvious, so red (INTERPRETATION)."""
    now = now or timezone.now()
    name = name.strip()
    if not name:
        raise ValidationError({"name": _("Name the item (ITM-01).")})
    if concealability not in Concealability.values:
        raise ValidationError({"concealability": _("Choose blue, yellow or red (ITM-01).")})
    if not 0 <= armor <= 5:
        raise ValidationError({"armor": _("Armor runs from 1 to 5, or 0 for none (ITM-01).")})
    if armor >= 4 and concealability != Concealability.RED:
        raise ValidationError(
            {"concealability": _("Armor 4 or 5 is obvious, so it is red (ITM-01).")}
        )
    try:
        rules.check_item_cost(purchase_cost)  # ITM-01: at least 1 (issue 14)
    except ValueError as exc:
        raise refusal(exc, "purchase_cost") from None
    return Item.objects.create(
        character=character,
        name=name[:120],
        concealability=concealability,
        armor=armor,
        purchase_cost=purchase_cost,
        potence_reinforced=potence_reinforced,
        expires_on=_lifetime_end(character.chronicle, now),
    )


@transaction.atomic
def item_repair(*, item: Item, by: User, now: dt.datetime | None = None) -> int:
    """ITM-02: a repair refreshes the expiry date; returns its cost, always less than a new
    item's except for an item of cost 1 (the `item_repair_free_at_cost_one` setting)."""
    now = now or timezone.now()
    item = Item.objects.select_for_update().select_related("character__chronicle").get(pk=item.pk)
    chronicle = item.character.chronicle
    if item.purchase_cost < rules.MIN_ITEM_COST:
        # Recorded before items had to cost at least 1: no repair can be cheaper than it.
        raise ValidationError(
            _(
                "This item was recorded as free, and a repair must cost less than the item "
                "(ITM-02). Add it again with its real cost (at least 1, ITM-01)."
            )
        )
    try:
        cost = rules.item_repair_cost(
            item.purchase_cost, **settings_for(rules.item_repair_cost, chronicle.house_rules)
        )
    except ValueError as exc:
        raise refusal(exc) from exc
    item.expires_on = _lifetime_end(chronicle, now)
    item.repaired_at = now
    item.save(update_fields=["expires_on", "repaired_at"])
    return cost


@transaction.atomic
def item_downgrade(*, item: Item, by: User, now: dt.datetime | None = None) -> int:
    """ITM-03: once per item, one step more concealable, for 3x the purchase cost (returned)."""
    locked = Item.objects.select_for_update().get(pk=item.pk)
    try:
        new = rules.downgraded_concealability(
            locked.concealability, already_downgraded=locked.downgraded
        )
    except ValueError as exc:
        raise refusal(exc) from exc
    if locked.armor >= 4 and new != Concealability.RED:
        raise ValidationError(_("Armor 4 or 5 is obvious and stays red (ITM-01)."))
    cost = rules.concealment_downgrade_cost(locked.purchase_cost)
    locked.concealability, locked.downgraded = new, True
    locked.save(update_fields=["concealability", "downgraded"])
    item.concealability, item.downgraded = new, True
    return cost
