"""CTL-02: a character whose permanent control (CTL-01) falls below 1 becomes an NPC run by the
storytellers. Every service that changes what control is made of (discipline levels and
generation bought with XP, a recorded diablerie) calls `control_check` after its change, in its
own transaction, so the change and its consequence are written together or not at all.

The player stays linked to the character, as for any PC the storytellers keep as an NPC
(`records.characters_leave_play`): the sheet, the ledger and the history stay theirs to read,
and the one-active-PC rule (XP-07) no longer counts it, so they may build another character.
"""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.models import MailKind
from chronicle.stored_text import in_english, stored_sentences, stored_text

from .. import rules
from ..models import Character, Creature, Diablerie, DisciplineLevel, Status, XpPurchase
from .notify import notify

# Stored in English on the character and shown in each reader's language (chronicle.stored_text).
NPC_REASON = gettext_noop(
    "Control fell to %(control)s after %(cause)s; below 1 the character becomes an NPC (CTL-02)."
)
CAUSE_PURCHASE = gettext_noop("the approved XP purchase %(purchase)s")
CAUSE_DIABLERIE = gettext_noop("the diablerie of %(victim)s")
CAUSE_OTHER = gettext_noop("a storyteller's change to the sheet")
stored_sentences(NPC_REASON, CAUSE_PURCHASE, CAUSE_DIABLERIE, CAUSE_OTHER)

# A PC whose control can fall: one in play (XP-07 counts torpor and staked as in play).
IN_PLAY = (Status.ACTIVE, Status.TORPOR, Status.STAKED)


def control_rating(character: Character) -> int | None:
    """CTL-01 permanent control of a kindred with a clan the rules know; None for ghouls, kine
    and animals, who have no control rating. Raises the rules' ValueError on an impossible sheet."""
    if character.creature != Creature.KINDRED or character.clan not in rules.CLANS:
        return None
    levels = list(
        DisciplineLevel.objects.filter(character=character).values_list("discipline", "level")
    )
    return rules.control_traits(
        clan=character.clan,
        generation=character.generation,
        discipline_levels=len(levels),
        childer=character.childer,
        diableries=Diablerie.objects.filter(diablerist=character).count(),
        extra_control=character.extra_control,
        willpower=character.willpower,
        animalism_1b=("animalism", rules.LEVEL_NUMBERS["1b"]) in levels,
    )


def _cause(purchase: XpPurchase | None, diablerie: Diablerie | None) -> str:
    """What changed, in English, for the stored reason."""
    if purchase is not None:
        # Imported here: purchases calls this module after its sign-off.
        from .purchases import describe

        return CAUSE_PURCHASE % {"purchase": describe(purchase)}
    if diablerie is not None:
        return CAUSE_DIABLERIE % {"victim": diablerie.victim_name}
    return CAUSE_OTHER


@transaction.atomic
def control_check(
    character: Character,
    *,
    by: User | None,
    now: dt.datetime,
    purchase: XpPurchase | None = None,
    diablerie: Diablerie | None = None,
) -> bool:
    """CTL-02: after a change to what control is made of, make the character an NPC if its
    control is now below 1 (`rules.becomes_npc`). True when it just became one: its status,
    `npc_since` and `npc_reason` are written and its player is told, once. `purchase` or
    `diablerie` is what changed, named in the reason.

    `by` is the storyteller whose sign-off or record caused the change (None for the rules
    alone); the status change is the rules' consequence of it, so it is not refused for lack of
    rights here, and the storytellers read who signed in the purchase or the diablerie record."""
    locked = (
        Character.objects.select_for_update(of=("self",))
        .select_related("player")
        .get(pk=character.pk)
    )
    if locked.status not in IN_PLAY or locked.player_id is None:
        return False
    control = control_rating(locked)
    if control is None or not rules.becomes_npc(control):
        return False
    with in_english():
        reason = NPC_REASON % {"control": control, "cause": _cause(purchase, diablerie)}
    locked.status = Status.NPC
    locked.npc_since = now
    locked.npc_reason = reason[:300]
    locked.save(update_fields=["status", "npc_since", "npc_reason", "updated_at"])
    character.status, character.npc_since, character.npc_reason = (
        locked.status,
        locked.npc_since,
        locked.npc_reason,
    )
    name = locked.name

    def subject() -> str:
        return _("%(character)s is now a storyteller-run NPC") % {"character": name}

    def body() -> str:
        return _(
            "%(reason)s The storytellers now play %(character)s. The sheet stays yours to read, "
            "and you may build a new character."
        ) % {"reason": stored_text(reason), "character": name}

    notify(
        character=locked,
        key=f"npc-control:{locked.pk}:{int(now.timestamp())}",
        subject=subject,
        body=body,
        now=now,
        kind=MailKind.CHARACTER,
    )
    return True
