"""Influence loans between characters (INF-03), asked and confirmed from the players'
downtimes: the borrower names the lender in words, and the points count once the lender's
player confirms from their own downtime, under the lender's row lock."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext

from characters import rules as character_rules
from characters.models import Character, InfluenceLoan
from characters.services.common import refusal
from characters.services.influence import influence_loans, influence_spent
from chronicle.models import Cycle

from ..models import Submission
from .submissions import (
    NAME_MAX,
    NO_CHARACTER,
    _choose_influence,
    _now,
    _require_open,
    _text,
    _touch,
    _writable,
    active_character_named,
)


@transaction.atomic
def loan_request(
    *,
    submission: Submission,
    by: User,
    lender_name: str,
    influence: str,
    points: int,
    now: dt.datetime | None = None,
) -> InfluenceLoan:
    """INF-03: ask another character, named in words, to lend points of one type for this
    cycle. The points count only once the lender confirms from their own downtime.
    INTERPRETATION: an unknown name is refused (a loan needs a lender), which tells the player
    only whether a character of that name is active; names are known from play."""
    now = _now(now)
    locked = _writable(submission, by, now)
    if influence not in character_rules.INFLUENCE_TYPES:
        raise ValidationError({"influence": _choose_influence()})
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise ValidationError({"points": gettext("Borrow at least 1 point of influence (INF-03).")})
    name = _text(lender_name, "lender_name", NAME_MAX, "INF-03")
    lender = active_character_named(locked.character.chronicle_id, name) if name else None
    if lender is None:
        raise ValidationError({"lender_name": gettext(NO_CHARACTER) % {"rule": "INF-03"}})
    if lender.pk == locked.character_id:
        raise ValidationError(
            {"lender_name": gettext("A character cannot lend to itself (INF-03).")}
        )
    existing = InfluenceLoan.objects.filter(
        cycle=locked.cycle,
        lender=lender,
        borrower=locked.character,
        influence=influence,
        points=points,
        withdrawn_at__isnull=True,
    ).first()
    if existing is not None:
        return existing
    loan = InfluenceLoan.objects.create(
        cycle=locked.cycle,
        lender=lender,
        borrower=locked.character,
        influence=influence,
        points=points,
        asked_at=now,
    )
    _touch(locked, now)
    return loan


def loans_to_confirm(
    *, character: Character, cycle: Cycle, loans: Iterable[InfluenceLoan] | None = None
) -> list[InfluenceLoan]:
    """The loans others asked of this character that it has not confirmed yet; from `loans`
    (the cycle's loans it borrows or lends, their borrowers joined) when a page read them."""
    if loans is not None:
        return [
            loan
            for loan in loans
            if loan.cycle_id == cycle.pk
            and loan.lender_id == character.pk
            and loan.confirmed_at is None
            and loan.withdrawn_at is None
        ]
    return list(
        InfluenceLoan.objects.filter(
            cycle=cycle, lender=character, confirmed_at__isnull=True, withdrawn_at__isnull=True
        ).select_related("borrower")
    )


@transaction.atomic
def loan_confirm(*, loan: InfluenceLoan, by: User, now: dt.datetime | None = None) -> InfluenceLoan:
    """INF-03: the lender's player confirms from their own downtime; refused when the lender
    has not that many points of the type left this cycle. Confirming twice is once."""
    now = _now(now)
    loan = InfluenceLoan.objects.select_related("cycle", "cycle__chronicle").get(pk=loan.pk)
    lender = Character.objects.select_for_update().get(pk=loan.lender_id)
    if lender.player_id != by.pk:
        raise PermissionDenied(gettext("Only the lender's player may confirm this loan."))
    _require_open(loan.cycle, now)
    loan = InfluenceLoan.objects.select_for_update().get(pk=loan.pk)
    if loan.withdrawn_at is not None:
        raise ValidationError(gettext("This loan was withdrawn by the borrower (INF-03)."))
    if loan.confirmed_at is not None:
        return loan
    spent = influence_spent(character=lender, cycle=loan.cycle_id)[loan.influence]
    borrowed, lent = influence_loans(character=lender, cycle=loan.cycle_id)
    try:
        # Lending is spending for the lender: the same INF-03 arithmetic.
        character_rules.check_influence_spend(
            loan.influence,
            loan.points,
            rating=lender.influences[loan.influence],
            spent=spent,
            borrowed=borrowed[loan.influence],
            lent=lent[loan.influence],
        )
    except ValueError as exc:
        raise refusal(exc, "points") from None
    loan.confirmed_at = now
    loan.save(update_fields=["confirmed_at"])
    return loan
