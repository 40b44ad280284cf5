"""The NPC volunteer list (MSC-03): players who offer to play an NPC, in the order they joined."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from chronicle.models import Chronicle, Membership

from ..models import (
    NpcVolunteer,
)

# --- NPC volunteers (MSC-03) ---------------------------------------------------------------------


def _lock_volunteer_list(chronicle: Chronicle) -> None:
    # The chronicle row serialises the list: two joins at once would otherwise read the same
    # last position and share it.
    Chronicle.objects.select_for_update().filter(pk=chronicle.pk).values_list("pk").get()


def _next_position(chronicle: Chronicle) -> int:
    last = NpcVolunteer.objects.filter(chronicle=chronicle).aggregate(last=Max("position"))
    return (last["last"] or 0) + 1


@transaction.atomic
def npc_volunteer_join(*, chronicle: Chronicle, player: User) -> NpcVolunteer:
    """MSC-03: a member joins the end of the first-come list. Joining again keeps the place
    already held (a double click does not lose it)."""
    if not Membership.objects.filter(chronicle=chronicle, user=player).exists():
        raise ValidationError(
            _("Only members of the chronicle may volunteer to play NPCs (MSC-03).")
        )
    _lock_volunteer_list(chronicle)
    existing = NpcVolunteer.objects.filter(chronicle=chronicle, player=player).first()
    if existing is not None:
        return existing
    return NpcVolunteer.objects.create(
        chronicle=chronicle, player=player, position=_next_position(chronicle)
    )


@transaction.atomic
def npc_volunteer_decline(*, chronicle: Chronicle, player: User) -> NpcVolunteer:
    """MSC-03: a volunteer who declines an NPC moves to the end of the list. One already last
    stays where it is, so a repeated decline changes nothing."""
    _lock_volunteer_list(chronicle)
    volunteer = NpcVolunteer.objects.filter(chronicle=chronicle, player=player).first()
    if volunteer is None:
        raise ValidationError(_("Only someone on the NPC volunteer list can decline (MSC-03)."))
    position = _next_position(chronicle)
    if volunteer.position != position - 1:
        volunteer.position = position
        volunteer.save(update_fields=["position"])
    return volunteer


@transaction.atomic
def npc_volunteer_leave(*, chronicle: Chronicle, player: User) -> bool:
    """MSC-03: a volunteer leaves the list; False if they were not on it."""
    deleted, _by_model = NpcVolunteer.objects.filter(chronicle=chronicle, player=player).delete()
    return bool(deleted)
