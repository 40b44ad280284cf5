"""Sewer lore (SEW-02..04): the chronicle's sewer locations, what each character knows of them,
and searching for them; each refusal names its rule and writes nothing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from chronicle.models import Chronicle
from chronicle.services import chronicle_today

from .. import rules
from ..models import (
    Character,
    KnownSewerLocation,
    SewerLocation,
)
from .common import refusal

# --- Sewer lore (SEW-02..04) ---------------------------------------------------------------------


@transaction.atomic
def sewer_location_add(
    *,
    chronicle: Chronicle,
    number: int,
    level: int,
    description: str,
    defenders: Sequence[Character],
    by: User,
) -> SewerLocation:
    """SEW-03: a location is a number with a sewer level (1..8)."""
    if not 1 <= level <= rules.MAX_SEWER_LORE:
        raise ValidationError(
            {
                "level": _("A sewer level runs from 1 to %(most)s (SEW-01).")
                % {"most": rules.MAX_SEWER_LORE}
            }
        )
    if number < 1:
        raise ValidationError({"number": _("Locations are numbered from 1 (SEW-03).")})
    if any(d.chronicle_id != chronicle.pk for d in defenders):
        raise ValidationError({"defenders": _("Choose characters of this chronicle.")})
    try:
        with transaction.atomic():
            location = SewerLocation.objects.create(
                chronicle=chronicle, number=number, level=level, description=description[:200]
            )
    except IntegrityError:
        raise ValidationError(
            {"number": _("Location %(number)s already exists (SEW-03).") % {"number": number}}
        ) from None
    location.defenders.set(defenders)
    return location


def _free_slots(character: Character) -> int:
    try:
        slots = rules.sewer_location_slots(
            character.sewer_lore, nosferatu=character.clan == "nosferatu"
        )
    except ValueError as exc:
        raise refusal(exc) from exc
    known = KnownSewerLocation.objects.filter(character=character, forgotten_on__isnull=True)
    return slots - known.count()


@transaction.atomic
def sewer_location_learn(
    *, character: Character, location: SewerLocation, on: dt.date, by: User
) -> KnownSewerLocation:
    """SEW-03: learned at once with a free slot (SEW-02) and lore at least the location's level."""
    if location.chronicle_id != character.chronicle_id:
        raise ValidationError({"location": _("Choose a location of this chronicle.")})
    Character.objects.select_for_update().filter(pk=character.pk).first()
    if KnownSewerLocation.objects.filter(
        character=character, location=location, forgotten_on__isnull=True
    ).exists():
        raise ValidationError(
            {
                "location": _("%(character)s already knows this location.")
                % {"character": character.name}
            }
        )
    if character.sewer_lore < location.level:
        raise ValidationError(
            {
                "location": _(
                    "Location %(number)s is on level %(level)s; %(character)s's Sewer Lore is "
                    "%(lore)s (SEW-03)."
                )
                % {
                    "number": location.number,
                    "level": location.level,
                    "character": character.name,
                    "lore": character.sewer_lore,
                }
            }
        )
    if _free_slots(character) < 1:
        raise ValidationError(
            {
                "location": _(
                    "%(character)s has no free location slot; forget one in downtime first "
                    "(SEW-02)."
                )
                % {"character": character.name}
            }
        )
    return KnownSewerLocation.objects.create(character=character, location=location, learned_on=on)


@transaction.atomic
def sewer_location_forget(
    *,
    known: KnownSewerLocation,
    in_downtime: bool,
    by: User,
    now: dt.datetime | None = None,
) -> KnownSewerLocation:
    """SEW-03: a location can be forgotten only in downtime."""
    now = now or timezone.now()
    if not in_downtime:
        raise ValidationError(
            {"in_downtime": _("A location can be forgotten only in downtime (SEW-03).")}
        )
    if known.forgotten_on is not None:
        raise ValidationError(_("This location is already forgotten (SEW-03)."))
    known.forgotten_on = chronicle_today(known.character.chronicle, now)
    known.save(update_fields=["forgotten_on"])
    return known


@transaction.atomic
def sewer_search(
    *,
    searchers: Sequence[Character],
    location: SewerLocation,
    by: User,
    now: dt.datetime | None = None,
) -> list[Character]:
    """SEW-04: a group search finds the location when the searchers' lore adds up to at least
    3x the defenders'; then every searcher with a free slot learns it, whatever their lore.
    Returns who learned it (none when the search failed)."""
    now = now or timezone.now()
    searchers = list(searchers)
    if any(s.chronicle_id != location.chronicle_id for s in searchers):
        raise ValidationError({"searchers": _("Choose characters of this chronicle.")})
    defenders = list(location.defenders.values_list("sewer_lore", flat=True))
    try:
        found = rules.sewer_search_succeeds([s.sewer_lore for s in searchers], defenders)
    except ValueError as exc:
        raise refusal(exc, "searchers") from exc
    if not found:
        return []
    today = chronicle_today(location.chronicle, now)
    learned = []
    for searcher in searchers:
        already = KnownSewerLocation.objects.filter(
            character=searcher, location=location, forgotten_on__isnull=True
        ).exists()
        if not already and _free_slots(searcher) > 0:
            KnownSewerLocation.objects.create(
                character=searcher, location=location, learned_on=today
            )
            learned.append(searcher)
    return learned
