"""Players' conduct and the STs' case-by-case grants (GEN-02, GEN-06)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max, Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.models import Chronicle
from chronicle.rules import settings_for
from chronicle.stored_text import stored_sentences

from .. import rules
from ..models import Character, CheatingOffense, RespendGrant, XpEntry, XpKind
from . import ledger

# Stored in English and shown in each reader's language (chronicle.stored_text).
CHEATING_REASON = gettext_noop("Second cheating offense: half of the earned XP (GEN-02). %(note)s")
stored_sentences(CHEATING_REASON)


@transaction.atomic
def cheating_offense_record(
    *, chronicle: Chronicle, player: User, note: str, by: User, now: dt.datetime | None = None
) -> CheatingOffense:
    """GEN-02: the 1st offense is a warning, the 2nd debits half of the lifetime earned XP (a
    penalty may take the balance below zero: the rule halves what was earned, spent or not),
    the 3rd is a ban (recorded here; removing the player is a GEN-03/04 vote)."""
    now = now or timezone.now()
    if not note.strip():
        raise ValidationError({"note": _("Describe the offense: the player will be told why.")})
    ledger.lock_ledger(chronicle=chronicle, player_id=player.pk)
    number = (
        CheatingOffense.objects.filter(chronicle=chronicle, player=player).aggregate(
            n=Max("number")
        )["n"]
        or 0
    ) + 1
    earned = XpEntry.objects.filter(
        chronicle=chronicle, player=player, kind=XpKind.AWARD, amount__gt=0
    ).aggregate(total=Sum("amount"))["total"] or Decimal(0)
    penalty = rules.cheating_penalty(
        offense=number,
        lifetime_earned_xp=earned,
        **settings_for(rules.cheating_penalty, chronicle.house_rules),
    )
    offense = CheatingOffense.objects.create(
        chronicle=chronicle,
        player=player,
        number=number,
        action=penalty.action,
        xp_change=penalty.xp_change,
        note=note.strip(),
        recorded_by=by,
        recorded_at=now,
    )
    if penalty.xp_change:
        ledger.xp_entry_add(
            chronicle=chronicle,
            player_id=player.pk,
            amount=penalty.xp_change,
            kind=XpKind.PENALTY,
            reason=CHEATING_REASON % {"note": note.strip()},
            key=f"cheating:{number}",
            actor=by,
            allow_negative_balance=True,
            now=now,
        )
    return offense


@transaction.atomic
def respend_grant(
    *, character: Character, subject: str, reason: str, by: User, now: dt.datetime | None = None
) -> RespendGrant:
    """GEN-06: store an ST's grant to respend one discipline's or ability's points."""
    problems = {}
    if not subject.strip():
        problems["subject"] = _("Name the discipline or ability whose points may be respent.")
    if not reason.strip():
        problems["reason"] = _("Say which rules change this grant answers (GEN-06).")
    if problems:
        raise ValidationError(problems)
    return RespendGrant.objects.create(
        character=character,
        subject=subject.strip()[:60],
        reason=reason.strip(),
        granted_by=by,
        granted_at=now or timezone.now(),
    )
