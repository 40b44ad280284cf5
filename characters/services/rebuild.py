"""Rebuilding a character (XP-07, CRE-04): a retired character that returns, or a ghoul or kine
that is embraced, reopens as a draft of the creation wizard with its player's current XP, and a
storyteller approves it like a new character (CRE-09). The creation wizard and the records
services call in here; what a rebuild keeps and clears is decided once, below."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.models import MailKind
from chronicle.rules import settings_for
from chronicle.services import chronicle_today
from chronicle.stored_text import stored_sentences

from .. import rules
from ..models import (
    Approval,
    Captivity,
    Character,
    Creature,
    Disadvantage,
    DisciplineLevel,
    PurchaseStatus,
    Status,
    XpKind,
    XpPurchase,
)
from . import ledger
from .bonds import bonds_refresh
from .common import in_reader_language, refusal
from .creation import DisadvantagePick, Draft, _write_draft
from .ledger import xp_balance
from .notify import notify
from .records import PC_IN_PLAY, _locked, _not_future, _spent_on

# Stored in English and shown in each reader's language (chronicle.stored_text).
EMBRACE_REASON = gettext_noop(
    "%(character)s was embraced: the %(spent)s XP spent on it come back for its rebuild (CRE-04)"
)
stored_sentences(EMBRACE_REASON)


# The sheet a rebuild starts again: what the package, the freebies and XP bought. What the
# character is and lived through (name, clan, background, titles, diableries, bonds, items,
# rituals learned in play, history records) stays.
_BOUGHT_COLUMNS = ("physical", "social", "mental", "willpower", "sewer_lore", "freebies_spent")


def rebuild_draft(character: Character, *, creature: str, clan: str) -> Draft:
    """XP-07 / CRE-04: the draft a rebuilt character starts from. It keeps what identifies the
    character (name, creature, clan and its choices, sect, the clan's flags, background,
    disadvantages) and nothing bought: no package allocation, no freebies, no levels, the
    chronicle's starting generation. A new clan (an embrace) starts its choices empty."""
    same = creature == character.creature and clan == character.clan
    return Draft(
        name=character.name,
        creature=creature,
        clan=clan,
        chosen_disciplines=tuple(character.chosen_disciplines or ()) if same else (),
        clan_bonus=character.clan_bonus if same else "",
        generation=character.chronicle.house_rules.starting_generation,
        background_questionnaire=character.background_questionnaire,
        background_story=character.background_story,
        disadvantages=tuple(
            DisadvantagePick(d.name, d.major, d.physical, d.hideously_ugly)
            for d in Disadvantage.objects.filter(character=character).order_by("pk")
        ),
        sect=character.sect,
        protean_form=character.protean_form if same else "",
        feeding_demographic=character.feeding_demographic if same else "",
        embrace_earth=character.embrace_earth if same else False,
    )


def rebuild_open(*, character: Character, creature: str, clan: str) -> Character:
    """XP-07 / CRE-04: reopen a locked character as a draft of the creation wizard, to be
    submitted and approved by a storyteller like a new character (CRE-09). The bought sheet is
    cleared (levels, traits, abilities, influences) and approval writes the new one; the XP
    ledger is the caller's (`records`), untouched here: creation spends freebies, not XP. The
    caller holds the character's row lock and has checked the rule that allows the rebuild."""
    _write_draft(character, rebuild_draft(character, creature=creature, clan=clan))
    for column in _BOUGHT_COLUMNS:
        setattr(character, column, 0)
    character.abilities = {}
    for influence in rules.INFLUENCE_TYPES:
        setattr(character, influence, 0)
    character.status = Status.ACTIVE
    character.approval = Approval.DRAFT
    character.approval_note = ""
    character.submitted_at = None
    character.approved_by = None
    character.approved_at = None
    character.rebuilds += 1
    character.save()
    DisciplineLevel.objects.filter(character=character).delete()
    return character


@dataclass(frozen=True)
class Rebuild:
    """What the wizard and the sheet say about a character being rebuilt: the player's XP
    balance (kept in the ledger, spent from the sheet once a storyteller approves, XP-07) and
    the embrace date when the rebuild is an embrace (CRE-04)."""

    balance: Decimal | None
    embraced_on: dt.date | None


def rebuild_for(character: Character | None) -> Rebuild | None:
    """The rebuild a draft is in, or None (a new character, or one approved)."""
    if character is None or not character.rebuilds or character.approval == Approval.APPROVED:
        return None
    balance = (
        xp_balance(chronicle=character.chronicle, player=character.player_id)
        if character.player_id is not None
        else None
    )
    return Rebuild(balance=balance, embraced_on=character.embraced_on)


def _one_pc_in_play(character: Character) -> None:
    """XP-07: one PC in play per player. A PC in torpor or staked is still in play: it may
    recover (TOR-01) and would then be a second active PC, which the database refuses and the
    torpor sweep would trip on."""
    other = (
        Character.objects.filter(
            chronicle=character.chronicle,
            player_id=character.player_id,
            status__in=PC_IN_PLAY,
            approval="approved",
        )
        .exclude(pk=character.pk)
        .first()
    )
    if other is not None:
        raise ValidationError(
            _(
                "The player already has %(other)s in play (%(status)s); a player has one "
                "character in play at a time, counting one in torpor or staked (XP-07). "
                "Retire %(other)s first."
            )
            % {"other": other.name, "status": other.get_status_display().lower()}
        )


def _withdraw_requests(character: Character, *, by: User, now: dt.datetime) -> None:
    """Purchases of the old sheet still waiting for a sign-off have nothing left to apply to."""
    XpPurchase.objects.filter(character=character, status=PurchaseStatus.REQUESTED).update(
        status=PurchaseStatus.WITHDRAWN, decided_by=by, decided_at=now
    )


def _tell_rebuild(character: Character, *, subject: str, body: str, now: dt.datetime) -> None:
    """XP-07 / CRE-04: the player is told once per rebuild; their dashboard and the sheet link
    to the wizard."""
    notify(
        character=character,
        key=f"character-rebuild:{character.pk}:{character.rebuilds}",
        subject=subject,
        body=body,
        now=now,
        kind=MailKind.CHARACTER,
    )


@transaction.atomic
def character_return(
    *, character: Character, by: User, now: dt.datetime | None = None
) -> Character:
    """XP-07: a retired character still under its player's control (not killed, staked or
    trapped) comes back, and "the player must rebuild the character with the player's current
    XP total". It reopens as a draft of the creation wizard, keeping its name, clan and history
    but not its bought sheet; a storyteller approves it like a new character (CRE-09). The XP
    stays in the player's ledger, where XP-06 already credited the retirement: nothing is
    added or taken here, and a later retirement counts only what the new build spends
    (XP-07a). One PC in play per player, checked again at approval."""
    now = now or timezone.now()
    character = _locked(character)
    if character.status != Status.RETIRED:
        raise ValidationError(
            _("Only a retired character can return; %(character)s is %(status)s (XP-07).")
            % {"character": character.name, "status": character.get_status_display().lower()}
        )
    if Captivity.objects.filter(captive=character, resolved_at__isnull=True).exists():
        raise ValidationError(
            _(
                "%(character)s is held captive; only a character still under its player's "
                "control can return (XP-07)."
            )
            % {"character": character.name}
        )
    if character.player_id is not None:
        ledger.lock_ledger(chronicle=character.chronicle, player_id=character.player_id)
        _one_pc_in_play(character)
    character.xp_spent_before_rebuild = _spent_on(character)
    character.retired_on = None
    _withdraw_requests(character, by=by, now=now)
    rebuild_open(character=character, creature=character.creature, clan=character.clan)
    if character.player_id is not None:
        balance = ledger.xp_balance(chronicle=character.chronicle, player=character.player_id)
        with in_reader_language(character.player):
            subject = _("Rebuild %(character)s") % {"character": character.name}
            body = _(
                "%(character)s returns from retirement. Rebuild your character in the creation "
                "wizard and submit it to the storytellers; you keep your current XP, "
                "%(balance)s, to spend from the sheet once they approve it (XP-07)."
            ) % {"character": character.name, "balance": balance}
        _tell_rebuild(character, subject=subject, body=body, now=now)
    return character


@transaction.atomic
def character_embrace(
    *,
    character: Character,
    embraced_on: dt.date,
    clan: str = "",
    by: User,
    now: dt.datetime | None = None,
) -> Character:
    """CRE-04: "If a ghoul or kine is embraced during game play, that character must be
    recreated from scratch as a kindred with the same XP", and the embrace breaks all its blood
    bonds. The embrace date is recorded (bonds end through `bonds_refresh`, as before); a PC
    reopens as a kindred draft of the creation wizard, like a return (XP-07), with `clan` (the
    sire's, if the ST knows it) or none for the player to choose. The XP spent on the old sheet
    comes back to the player's ledger (`embrace_refunds_spent_xp`), so the kindred is rebuilt
    with the same XP. An NPC is only recorded as embraced; the STs keep its sheet."""
    now = now or timezone.now()
    _not_future(embraced_on, chronicle_today(character.chronicle, now), "embraced_on")
    character = _locked(character)
    try:
        rules.check_embrace(character.creature)
    except ValueError as exc:
        raise refusal(exc, "creature") from exc
    if clan and clan not in rules.CLANS:
        raise ValidationError({"clan": _("Choose a clan from the list (CLN-01).")})
    if character.status not in (Status.ACTIVE, Status.NPC) or (
        character.player_id is not None and character.approval != Approval.APPROVED
    ):
        state = (
            character.get_approval_display()
            if character.approval != Approval.APPROVED
            else character.get_status_display()
        )
        raise ValidationError(
            _("Only a ghoul or kine in play can be embraced; %(character)s is %(state)s (CRE-04).")
            % {"character": character.name, "state": state.lower()}
        )
    character.embraced_on = embraced_on
    if character.player_id is None or character.status == Status.NPC:
        character.creature = Creature.KINDRED
        character.clan = clan
        character.chosen_disciplines, character.clan_bonus = [], ""
        character.save()
    else:
        chronicle = character.chronicle
        ledger.lock_ledger(chronicle=chronicle, player_id=character.player_id)
        spent_total = _spent_on(character)
        try:
            refund = rules.embrace_xp_refund(
                spent=rules.spent_since_rebuild(
                    spent=spent_total, spent_before_rebuild=character.xp_spent_before_rebuild
                ),
                **settings_for(rules.embrace_xp_refund, chronicle.house_rules),
            )
        except ValueError as exc:
            raise refusal(exc) from exc
        if refund > 0:
            ledger.xp_entry_add(
                chronicle=chronicle,
                player_id=character.player_id,
                amount=refund,
                kind=XpKind.CORRECTION,
                reason=EMBRACE_REASON % {"character": character.name, "spent": refund},
                key=f"embrace:{character.pk}",
                character=character,
                actor=by,
                now=now,
            )
        character.xp_spent_before_rebuild = spent_total
        _withdraw_requests(character, by=by, now=now)
        rebuild_open(character=character, creature=Creature.KINDRED, clan=clan)
        balance = ledger.xp_balance(chronicle=chronicle, player=character.player_id)
        with in_reader_language(character.player):
            subject = _("%(character)s is embraced: rebuild as kindred") % {
                "character": character.name
            }
            body = _(
                "%(character)s was embraced on %(day)s and its blood bonds are broken. Rebuild "
                "your character as kindred in the creation wizard and submit it to the "
                "storytellers; you keep the same XP, %(balance)s, to spend from the sheet once "
                "they approve it (CRE-04)."
            ) % {"character": character.name, "day": embraced_on, "balance": balance}
        _tell_rebuild(character, subject=subject, body=body, now=now)
    bonds_refresh(thrall_ids=[character.pk], on=chronicle_today(character.chronicle, now), now=now)
    return character
