"""Who may see and change characters and what hangs off them (sheets, ledgers, bonds, items).

Built on `chronicle.access`: a character of another chronicle, or another player's character
seen by a player, answers 404 (its existence is not theirs to know); an action reserved for
storytellers answers 403 to a member who may see the object.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from chronicle.access import MAX_ID, is_staff, require_staff
from chronicle.models import Membership

from .models import Character, Diablerie, Status, XpEntry, XpPurchase


def characters_visible_to(membership: Membership) -> QuerySet[Character]:
    """Staff see every character of the chronicle; a player sees only their own."""
    characters = Character.objects.filter(chronicle=membership.chronicle)
    if is_staff(membership):
        return characters
    return characters.filter(player_id=membership.user_id)


def character_for(membership: Membership, character_id: int) -> Character:
    if not 0 < character_id <= MAX_ID:
        raise Http404(_("No such character."))
    try:
        return characters_visible_to(membership).select_related("player").get(pk=character_id)
    except Character.DoesNotExist:
        raise Http404(_("No such character.")) from None


def character_for_staff(membership: Membership, character_id: int) -> Character:
    """A character an ST acts on: 404 for what the member may not see, then 403 for players."""
    character = character_for(membership, character_id)
    require_staff(membership)
    return character


def teacher_choices(membership: Membership) -> QuerySet[Character]:
    """DIS-07 / SEW-01: the characters a member may name as someone's teacher. Staff may name
    any active character of the chronicle; a player none at all, since the other characters
    are not theirs to know: they name their teacher in words and an ST links it at sign-off.
    An id outside this set must answer exactly like an unknown one."""
    if not is_staff(membership):
        return Character.objects.none()
    return Character.objects.filter(chronicle=membership.chronicle, status=Status.ACTIVE)


def character_for_owner(membership: Membership, character_id: int) -> Character:
    """A character its player (or an ST on their behalf) may act on."""
    return character_for(membership, character_id)


def own_diablerie_for(membership: Membership, character_id: int, diablerie_id: int) -> Diablerie:
    """XP-05: a diablerie of the member's own character, whose generation step only its player
    declines here; anyone else gets 404, storytellers included (the step is the player's
    choice, and the ST records page has its own tools)."""
    if not (0 < character_id <= MAX_ID and 0 < diablerie_id <= MAX_ID):
        raise Http404(_("No such diablerie."))
    try:
        return Diablerie.objects.select_related("diablerist").get(
            pk=diablerie_id,
            diablerist_id=character_id,
            diablerist__chronicle=membership.chronicle,
            diablerist__player_id=membership.user_id,
        )
    except Diablerie.DoesNotExist:
        raise Http404(_("No such diablerie.")) from None


def ledger_visible_to(membership: Membership, player_id: int) -> QuerySet[XpEntry]:
    """XP-07: the ledger is per player; a player sees only their own, staff anyone's."""
    entries = XpEntry.objects.filter(chronicle=membership.chronicle, player_id=player_id)
    if is_staff(membership) or membership.user_id == player_id:
        return entries
    return entries.none()


def purchases_visible_to(membership: Membership) -> QuerySet[XpPurchase]:
    purchases = XpPurchase.objects.filter(character__chronicle=membership.chronicle)
    if is_staff(membership):
        return purchases
    return purchases.filter(Q(character__player=membership.user))


def purchase_for(membership: Membership, purchase_id: int) -> XpPurchase:
    if not 0 < purchase_id <= MAX_ID:
        raise Http404(_("No such purchase."))
    try:
        return purchases_visible_to(membership).select_related("character").get(pk=purchase_id)
    except XpPurchase.DoesNotExist:
        raise Http404(_("No such purchase.")) from None
