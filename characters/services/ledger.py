"""The XP ledger (XP-07): per player and chronicle, append-only, a balance is its sum.

Every write goes through `xp_entry_add`, which takes a `key` unique per chronicle and player, so
a second click, a redelivered task or a re-run writes nothing the second time. A spend locks the
player's membership row (the ledger's lock) before it reads the balance, so two spends never
both pass on the same XP (DESIGN: 40 racing spends from 10 gave 40 successes without it).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.models import Chronicle, Cycle, Membership
from chronicle.stored_text import stored_sentences

from ..models import Character, XpEntry, XpKind

HALF = Decimal("0.5")
MAX_ENTRY = Decimal("999999.5")

# Reasons are stored in English and shown in each reader's language (chronicle.stored_text).
REVERSAL_REASON = gettext_noop("Reversal: %(reason)s")
stored_sentences(REVERSAL_REASON)


def xp_balance(*, chronicle: Chronicle, player: User | int) -> Decimal:
    player_id = player if isinstance(player, int) else player.pk
    total = XpEntry.objects.filter(chronicle=chronicle, player_id=player_id).aggregate(
        total=Sum("amount")
    )["total"]
    return Decimal(total or 0)


def xp_balances(*, chronicle: Chronicle, player_ids: list[int]) -> dict[int, Decimal]:
    """Balances of several players in one query (character lists)."""
    rows = (
        XpEntry.objects.filter(chronicle=chronicle, player_id__in=player_ids)
        .values("player_id")
        .annotate(total=Sum("amount"))
    )
    balances = {player_id: Decimal(0) for player_id in player_ids}
    balances.update({row["player_id"]: Decimal(row["total"]) for row in rows})
    return balances


def lock_ledger(*, chronicle: Chronicle, player_id: int) -> None:
    """Take the player's ledger lock (their membership row) until the transaction ends."""
    locked = (
        Membership.objects.select_for_update()
        .filter(chronicle=chronicle, user_id=player_id)
        .values_list("pk", flat=True)
    )
    if not list(locked):
        raise ValidationError(_("This player is not a member of the chronicle."))


def _check_amount(amount: Decimal) -> Decimal:
    if not isinstance(amount, Decimal | int) or isinstance(amount, bool):
        raise ValidationError({"amount": _("XP is a number in steps of 0.5, such as 2.5.")})
    amount = Decimal(amount)
    if not amount.is_finite() or amount % HALF != 0:
        raise ValidationError({"amount": _("XP comes in steps of 0.5, such as 2.5 or -3.")})
    if amount == 0:
        raise ValidationError({"amount": _("An XP entry of 0 would change nothing.")})
    if abs(amount) > MAX_ENTRY:
        raise ValidationError({"amount": _("That is more XP than any entry can hold.")})
    return amount


@transaction.atomic
def xp_entry_add(
    *,
    chronicle: Chronicle,
    player_id: int,
    amount: Decimal,
    kind: str,
    reason: str,
    key: str,
    character: Character | None = None,
    cycle: Cycle | None = None,
    actor: User | None = None,
    reverses: XpEntry | None = None,
    allow_negative_balance: bool = False,
    now: dt.datetime | None = None,
) -> tuple[XpEntry, bool]:
    """Append one entry, once per `key`; returns (entry, created).

    A debit is refused when it would take the balance below zero (unless it is a penalty the
    rules impose, `allow_negative_balance`), under the ledger lock.
    """
    amount = _check_amount(amount)
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": _("Say why: every ledger entry needs a reason.")})
    lock_ledger(chronicle=chronicle, player_id=player_id)
    existing = XpEntry.objects.filter(chronicle=chronicle, player_id=player_id, key=key).first()
    if existing is not None:
        return existing, False
    if amount < 0 and not allow_negative_balance:
        balance = xp_balance(chronicle=chronicle, player=player_id)
        if balance + amount < 0:
            raise ValidationError(
                _("Not enough XP: this needs %(needed)s and the balance is %(balance)s (XP-02).")
                % {"needed": -amount, "balance": balance}
            )
    entry = XpEntry.objects.create(
        chronicle=chronicle,
        player_id=player_id,
        character=character,
        amount=amount,
        kind=kind,
        reason=reason[:300],
        key=key,
        cycle=cycle,
        actor=actor,
        reverses=reverses,
        created_at=now or timezone.now(),
    )
    return entry, True


@transaction.atomic
def xp_entry_reverse(
    *, entry: XpEntry, by: User, reason: str, now: dt.datetime | None = None
) -> XpEntry:
    """A correction: the reversing entry of `entry`, never an edit (DESIGN). Reversing twice is
    refused; reversing a credit the player already spent is refused rather than leaving a
    negative balance."""
    if entry.kind == XpKind.REVERSAL:
        raise ValidationError(_("A reversal cannot itself be reversed; add a correction instead."))
    if XpEntry.objects.filter(reverses=entry).exists():
        raise ValidationError(_("This entry has already been reversed."))
    reversal, _created = xp_entry_add(
        chronicle=entry.chronicle,
        player_id=entry.player_id,
        amount=-entry.amount,
        kind=XpKind.REVERSAL,
        reason=REVERSAL_REASON % {"reason": reason},
        key=f"reversal:{entry.pk}",
        character=entry.character,
        cycle=entry.cycle,
        actor=by,
        reverses=entry,
        now=now,
    )
    return reversal


@transaction.atomic
def xp_correction_add(
    *,
    chronicle: Chronicle,
    player_id: int,
    amount: Decimal,
    reason: str,
    by: User,
    character: Character | None = None,
    token: str | None = None,
    now: dt.datetime | None = None,
) -> XpEntry:
    """An ST's correction with a reason, as its own entry. `token` (drawn with the form, or
    sent by an API client) makes a double submit write once; without one every call adds."""
    now = now or timezone.now()
    entry, _created = xp_entry_add(
        chronicle=chronicle,
        player_id=player_id,
        amount=amount,
        kind=XpKind.CORRECTION,
        reason=reason,
        key=f"correction:{token}" if token else f"correction:{by.pk}:{now.isoformat()}",
        character=character,
        actor=by,
        now=now,
    )
    return entry
