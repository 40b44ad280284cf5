"""The characters app's invariants (issue 16, `chronicle.services.invariants`): the XP and
influence ledgers add up, no influence is overspent in a cycle, and no secret row (a sewer
location known) crosses chronicles.

XP has no stored balance: the balance *is* the sum of the entries (XP-07), so "the balance
equals the sum" means every entry that stands for something else agrees with it: a reversal
undoes exactly its entry, an approved purchase wrote exactly its cost, and the sum never went
below zero except through a penalty the rules impose (GEN-02), since every spend checks the
balance under the ledger lock.
"""

from __future__ import annotations

from typing import Any

from django.db.models import (
    Case,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from chronicle.models import Chronicle
from chronicle.services.invariants import Invariant

from . import rules
from .models import (
    InfluenceLoan,
    InfluenceSpend,
    KnownSewerLocation,
    PurchaseStatus,
    XpEntry,
    XpKind,
    XpPurchase,
)


def _ids(queryset: QuerySet[Any]) -> list[object]:
    return list(queryset.order_by("pk").values_list("pk", flat=True))


def xp_reversals(chronicle: Chronicle) -> list[object]:
    """A reversing entry takes back exactly its entry, on the same ledger (XP-07)."""
    return _ids(
        XpEntry.objects.filter(chronicle=chronicle, reverses__isnull=False).exclude(
            amount=-F("reverses__amount"),
            player=F("reverses__player"),
            chronicle=F("reverses__chronicle"),
        )
    )


def xp_entry_characters(chronicle: Chronicle) -> list[object]:
    """An entry names a character of its own chronicle."""
    return _ids(
        XpEntry.objects.filter(chronicle=chronicle, character__isnull=False).exclude(
            character__chronicle=chronicle
        )
    )


def xp_purchases(chronicle: Chronicle) -> list[object]:
    """An approved purchase that cost XP wrote one entry of minus its cost (XP-01)."""
    return _ids(
        XpPurchase.objects.filter(
            character__chronicle=chronicle, status=PurchaseStatus.APPROVED, cost__gt=0
        ).filter(
            Q(ledger_entry__isnull=True)
            | ~Q(ledger_entry__amount=-F("cost"))
            | ~Q(ledger_entry__chronicle=chronicle)
            | ~Q(ledger_entry__player=F("character__player"))
        )
    )


def xp_balances(chronicle: Chronicle) -> list[object]:
    """No player's balance below zero, unless a penalty took it there (GEN-02): ids of the
    players."""
    return list(
        XpEntry.objects.filter(chronicle=chronicle)
        .values("player")
        .annotate(
            total=Sum("amount"),
            penalties=Sum(Case(When(kind=XpKind.PENALTY, then=1), default=0)),
        )
        .filter(total__lt=0, penalties=0)
        .order_by("player")
        .values_list("player", flat=True)
    )


def influence_reversals(chronicle: Chronicle) -> list[object]:
    """A refund takes back exactly its spend: same character, cycle and type (INF-03)."""
    return _ids(
        InfluenceSpend.objects.filter(cycle__chronicle=chronicle, reverses__isnull=False).exclude(
            points=-F("reverses__points"),
            character=F("reverses__character"),
            cycle=F("reverses__cycle"),
            influence=F("reverses__influence"),
        )
    )


def _loans(side: str) -> Coalesce:
    """Confirmed points of the row's type lent to (`borrower`) or by (`lender`) the row's
    character in the row's cycle."""
    total = (
        InfluenceLoan.objects.filter(
            **{side: OuterRef("character")},
            cycle=OuterRef("cycle"),
            influence=OuterRef("influence"),
            confirmed_at__isnull=False,
            withdrawn_at__isnull=True,
        )
        .order_by()
        .values(side)
        .annotate(points=Sum("points"))
        .values("points")
    )
    return Coalesce(Subquery(total, output_field=IntegerField()), Value(0))


def influence_overspent(chronicle: Chronicle) -> list[object]:
    """INF-03: what a character spent of a type in a cycle (refunds subtracted) is at most its
    rating plus what it borrowed minus what it lent. Ids are "character/cycle/type". The rating
    is the character's current one: a rating lowered after a cycle shows that cycle here."""
    rating = Case(
        *(When(influence=name, then=F(f"character__{name}")) for name in rules.INFLUENCE_TYPES),
        default=Value(0),
        output_field=IntegerField(),
    )
    rows = (
        InfluenceSpend.objects.filter(cycle__chronicle=chronicle)
        .values("character", "cycle", "influence")
        .annotate(spent=Sum("points"))
        .annotate(
            allowed=rating + _loans("borrower") - _loans("lender"),
        )
        .filter(spent__gt=F("allowed"))
        .order_by("character", "cycle", "influence")
        .values_list("character", "cycle", "influence")
    )
    return [f"{character}/{cycle}/{influence}" for character, cycle, influence in rows]


def known_sewer_locations(chronicle: Chronicle) -> list[object]:
    """A character knows only its own chronicle's sewer locations (SEW)."""
    return _ids(
        KnownSewerLocation.objects.filter(character__chronicle=chronicle).exclude(
            location__chronicle=chronicle
        )
    )


CHECKS = [
    Invariant("xp_reversals", "XpEntry", xp_reversals),
    Invariant("xp_entry_characters", "XpEntry", xp_entry_characters),
    Invariant("xp_purchases", "XpPurchase", xp_purchases),
    Invariant("xp_balances", "player", xp_balances),
    Invariant("influence_reversals", "InfluenceSpend", influence_reversals),
    Invariant("influence_overspent", "character/cycle/type", influence_overspent),
    Invariant("known_sewer_locations", "KnownSewerLocation", known_sewer_locations),
]
