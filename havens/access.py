"""Who may see and change havens (HAV-04): a structure's current owners and the chronicle's
storytellers, nobody else.

A structure a member may not see answers exactly like one that does not exist (404, same
message, same queries), so neither its existence, its owners nor its attributes leak through a
status code. A planned structure (no owner yet) is visible to its designer's player too.
A searcher learns a structure's location only, through `finds_visible_to`.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from characters.models import Character
from chronicle.access import MAX_ID, is_staff, require_staff
from chronicle.models import Membership

from .models import (
    AlarmFiring,
    Find,
    HiddenObject,
    InfluenceAttack,
    Ownership,
    OwnershipChange,
    Search,
    Structure,
    StructureStatus,
)


def own_characters(membership: Membership) -> QuerySet[Character]:
    return Character.objects.filter(chronicle=membership.chronicle, player_id=membership.user_id)


def _owned_by_player(membership: Membership) -> Exists:
    return Exists(
        Ownership.objects.filter(
            structure=OuterRef("pk"),
            ended_at__isnull=True,
            character__player_id=membership.user_id,
            character__chronicle=membership.chronicle,
        )
    )


def structures_visible_to(membership: Membership) -> QuerySet[Structure]:
    """HAV-04: staff see every structure of the chronicle; a player sees those a character of
    theirs currently owns, and their own plans not yet built."""
    structures = Structure.objects.filter(chronicle=membership.chronicle)
    if is_staff(membership):
        return structures
    return structures.filter(
        _owned_by_player(membership)
        | Q(
            status=StructureStatus.PLANNED,
            designed_by__player_id=membership.user_id,
        )
    )


def structure_for(membership: Membership, structure_id: int) -> Structure:
    if not 0 < structure_id <= MAX_ID:
        raise Http404(_("No such haven."))
    try:
        return structures_visible_to(membership).get(pk=structure_id)
    except Structure.DoesNotExist:
        raise Http404(_("No such haven.")) from None


def structure_for_staff(membership: Membership, structure_id: int) -> Structure:
    structure = structure_for(membership, structure_id)
    require_staff(membership)
    return structure


def searches_visible_to(membership: Membership) -> QuerySet[Search]:
    """Staff see every search; a player sees the searches a character of theirs is in. The
    target's havens are never listed for them: only their finds (`finds_visible_to`)."""
    searches = Search.objects.filter(cycle__chronicle=membership.chronicle)
    if is_staff(membership):
        return searches
    return searches.filter(
        searchers__character__player_id=membership.user_id,
        searchers__character__chronicle=membership.chronicle,
    ).distinct()


def search_for(membership: Membership, search_id: int) -> Search:
    if not 0 < search_id <= MAX_ID:
        raise Http404(_("No such search."))
    try:
        return searches_visible_to(membership).get(pk=search_id)
    except Search.DoesNotExist:
        raise Http404(_("No such search.")) from None


def finds_visible_to(membership: Membership) -> QuerySet[Find]:
    """HAV-25b: the locations a player's characters have found and not lost; from a
    downtime search only once its results are released."""
    finds = Find.objects.filter(structure__chronicle=membership.chronicle)
    if is_staff(membership):
        return finds
    return finds.filter(
        character__player_id=membership.user_id,
        character__chronicle=membership.chronicle,
    ).filter(Q(result__isnull=True) | Q(result__search__released_at__isnull=False))


def influence_attacks_visible_to(membership: Membership) -> QuerySet[InfluenceAttack]:
    """Staff see all; a player sees the attacks their characters made (the outcome once
    released). The owners of the attacked haven learn of it from the haven's state."""
    attacks = InfluenceAttack.objects.filter(cycle__chronicle=membership.chronicle)
    if is_staff(membership):
        return attacks
    return attacks.filter(
        attacker__player_id=membership.user_id, attacker__chronicle=membership.chronicle
    )


def alarm_firings_visible_to(membership: Membership) -> QuerySet[AlarmFiring]:
    """HAV-04: an alarm's firings are the structure's attributes: owners and staff only."""
    return AlarmFiring.objects.filter(alarm__structure__in=structures_visible_to(membership))


def hidden_objects_visible_to(membership: Membership) -> QuerySet[HiddenObject]:
    """HID-01: the registry is the influence desk's: staff only."""
    require_staff(membership)
    return HiddenObject.objects.filter(chronicle=membership.chronicle)


# --- ownership ---------------------------------------------------------------------------------


def acting_characters(membership: Membership) -> QuerySet[Character]:
    """The characters a member may act for on havens: a player their own approved ones that
    are not dead or retired (those in torpor still own havens); storytellers any such
    character of the chronicle."""
    characters = Character.objects.filter(chronicle=membership.chronicle).exclude(
        status__in=["dead", "retired"]
    )
    if is_staff(membership):
        return characters
    return characters.filter(player_id=membership.user_id, approval="approved")


# --- ownership changes


def own_changes(membership: Membership, structure: Structure) -> QuerySet[OwnershipChange]:
    """The changes of a structure a member may act on: staff all, a player those asked for by
    a character of theirs. Anyone else's (an earlier owner's, a crypt vote) answers like a
    change that does not exist."""
    changes = OwnershipChange.objects.filter(structure=structure)
    if is_staff(membership):
        return changes
    return changes.filter(
        from_character__player_id=membership.user_id,
        from_character__chronicle=membership.chronicle,
    )
