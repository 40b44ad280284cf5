"""The characters app's card on the dashboard (chronicle.dashboard finds `cards`): XP
purchases waiting for a storyteller's sign-off (XP-01). A player sees their own, line by line;
a storyteller how many wait for them, and since when. One query either way."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Min

from chronicle.dashboard import Card, Situation

from . import access
from .models import Approval, Character, PurchaseStatus, XpPurchase
from .services.purchases import describe


def _waiting(situation: Situation) -> Card:
    membership = situation.membership
    # A player's own, as `access.purchases_visible_to` gives them, but by the user's id: that
    # function reads `membership.user`, one more query for a row the request already has.
    purchases = (
        XpPurchase.objects.filter(
            character__chronicle_id=membership.chronicle_id,
            character__player_id=membership.user_id,
            status=PurchaseStatus.REQUESTED,
        )
        .select_related("character")
        .order_by("requested_at", "pk")
    )
    lines: list[dict[str, Any]] = [
        {"purchase": p, "text": describe(p), "character": p.character} for p in purchases
    ]
    return Card(
        "characters/cards/player_purchases.html",
        order=20,
        context={"lines": lines, "total": sum(p["purchase"].cost for p in lines)},
    )


def _to_sign_off(situation: Situation) -> Card:
    counts = (
        access.purchases_visible_to(situation.membership)
        .filter(status=PurchaseStatus.REQUESTED)
        .aggregate(n=Count("pk"), oldest=Min("requested_at"))
    )
    return Card(
        "characters/cards/staff_purchases.html",
        order=30,
        context={"count": counts["n"], "oldest": counts["oldest"]},
    )


def _rebuilds(situation: Situation) -> list[Card]:
    """XP-07 / CRE-04: the player's characters reopened to be rebuilt (a return from
    retirement, an embrace) and not yet approved: "rebuild your character". One query."""
    membership = situation.membership
    drafts = list(
        Character.objects.filter(
            chronicle_id=membership.chronicle_id,
            player_id=membership.user_id,
            rebuilds__gt=0,
        )
        .exclude(approval=Approval.APPROVED)
        .order_by("name", "pk")
    )
    if not drafts:
        return []
    return [Card("characters/cards/player_rebuild.html", order=5, context={"drafts": drafts})]


def cards(situation: Situation) -> list[Card]:
    if situation.is_staff:
        return [_to_sign_off(situation)]
    return [*_rebuilds(situation), _waiting(situation)]
