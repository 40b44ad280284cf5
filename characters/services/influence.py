"""Influence spending (INF-03): per character, cycle and type, an append-only ledger.

Havens (construction, searches, attacks) and downtimes (influence use) spend through
`influence_spend`, which locks the character row before reading what is left, so two spends
racing on the same points never both pass. Confirmed loans (`InfluenceLoan`) add to what the
borrower may spend and take from the lender's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.models import Cycle, CycleStatus
from chronicle.stored_text import stored_sentences

from .. import rules
from ..models import Character, InfluenceLoan, InfluenceSpend, SpendMoment
from .common import refusal

# Reasons are stored in English and shown in each reader's language (chronicle.stored_text).
SPENT_REASON = gettext_noop("Influence spent")
REFUND_REASON = gettext_noop("Refund: %(reason)s")
stored_sentences(SPENT_REASON, REFUND_REASON)


def influence_spent(*, character: Character | int, cycle: Cycle | int) -> dict[str, int]:
    """Points of each type the character has spent in the cycle (refunds subtracted)."""
    rows = (
        InfluenceSpend.objects.filter(character=character, cycle=cycle)
        .values("influence")
        .annotate(total=Sum("points"))
    )
    spent = dict.fromkeys(rules.INFLUENCE_TYPES, 0)
    spent.update({row["influence"]: int(row["total"]) for row in rows})
    return spent


def influence_loans(
    *,
    character: Character | int,
    cycle: Cycle | int,
    loans: Iterable[InfluenceLoan] | None = None,
) -> tuple[dict[str, int], dict[str, int]]:
    """INF-03: (borrowed, lent) points of each type in the cycle, confirmed loans only.

    `loans`: the cycle's loans the character borrows or lends, when a page has read them
    already (for its own lists); the same ones are counted."""
    borrowed = dict.fromkeys(rules.INFLUENCE_TYPES, 0)
    lent = dict.fromkeys(rules.INFLUENCE_TYPES, 0)
    character_id = character if isinstance(character, int) else character.pk
    rows: Iterable[tuple[int, str, int]]
    if loans is None:
        rows = InfluenceLoan.objects.filter(
            Q(borrower=character) | Q(lender=character),
            cycle=cycle,
            confirmed_at__isnull=False,
            withdrawn_at__isnull=True,
        ).values_list("borrower_id", "influence", "points")
    else:
        cycle_id = cycle if isinstance(cycle, int) else cycle.pk
        rows = [
            (loan.borrower_id, loan.influence, loan.points)
            for loan in loans
            if loan.cycle_id == cycle_id
            and character_id in (loan.borrower_id, loan.lender_id)
            and loan.confirmed_at is not None
            and loan.withdrawn_at is None
        ]
    for borrower_id, influence, points in rows:
        (borrowed if borrower_id == character_id else lent)[influence] += points
    return borrowed, lent


def influence_left(
    *,
    character: Character,
    cycle: Cycle | int,
    loans: Iterable[InfluenceLoan] | None = None,
) -> dict[str, int]:
    """INF-03: what the character may still spend of each type this cycle, counting what it
    borrowed and lent (`loans` as `influence_loans` takes them)."""
    spent = influence_spent(character=character, cycle=cycle)
    borrowed, lent = influence_loans(character=character, cycle=cycle, loans=loans)
    return {
        name: rules.influence_available(
            rating=rating, spent=spent[name], borrowed=borrowed[name], lent=lent[name]
        )
        for name, rating in character.influences.items()
    }


def _lock_character(character: Character) -> Character:
    return Character.objects.select_for_update().get(pk=character.pk)


@transaction.atomic
def influence_spend(
    *,
    character: Character,
    cycle: Cycle,
    influence: str,
    points: int,
    reason: str,
    key: str,
    actor: User | None = None,
    moment: str = SpendMoment.DOWNTIME,
    field: str | None = "points",
    now: dt.datetime | None = None,
) -> tuple[InfluenceSpend, bool]:
    """Spend `points` of `influence` in `cycle`, once per `key`; returns (spend, created).

    Refused (INF-03) beyond the character's rating for the cycle, counting what it already
    spent at the game; refused once the cycle is no longer open. The refusal names `field`.
    """
    if influence not in rules.INFLUENCE_TYPES:
        raise ValidationError(
            {
                "influence": _("Choose one of %(influences)s.")
                % {"influences": ", ".join(rules.INFLUENCE_TYPES)}
            }
        )
    locked = _lock_character(character)
    existing = InfluenceSpend.objects.filter(character=locked, key=key).first()
    if existing is not None:
        return existing, False
    if cycle.status != CycleStatus.OPEN:
        raise ValidationError(
            _("This cycle's downtime is closed; influence can no longer be spent in it (DT-01).")
        )
    spent = influence_spent(character=locked, cycle=cycle)[influence]
    borrowed, lent = influence_loans(character=locked, cycle=cycle)
    try:
        rules.check_influence_spend(
            influence,
            points,
            rating=locked.influences[influence],
            spent=spent,
            borrowed=borrowed[influence],
            lent=lent[influence],
        )
    except ValueError as exc:
        raise refusal(exc, field) from None
    reason = reason.strip() or SPENT_REASON
    spend = InfluenceSpend.objects.create(
        character=locked,
        cycle=cycle,
        influence=influence,
        points=points,
        moment=moment,
        reason=reason[:300],
        key=key,
        actor=actor,
        created_at=now or timezone.now(),
    )
    return spend, True


@transaction.atomic
def influence_refund(
    *, spend: InfluenceSpend, reason: str, actor: User | None = None, now: dt.datetime | None = None
) -> InfluenceSpend:
    """Give back a spend (a withdrawn search, a cancelled contribution) as a reversing entry;
    refunding twice returns the first refund."""
    _lock_character(spend.character)
    existing = InfluenceSpend.objects.filter(reverses=spend).first()
    if existing is not None:
        return existing
    if spend.reverses_id is not None or spend.points < 0:
        raise ValidationError(_("A refund cannot itself be refunded."))
    return InfluenceSpend.objects.create(
        character_id=spend.character_id,
        cycle_id=spend.cycle_id,
        influence=spend.influence,
        points=-spend.points,
        moment=spend.moment,
        reason=(REFUND_REASON % {"reason": reason.strip() or spend.reason})[:300],
        key=f"refund:{spend.pk}",
        reverses=spend,
        actor=actor,
        created_at=now or timezone.now(),
    )
