"""Storytellers' rulings on havens: theft control, destruction, owners set by hand."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from characters.models import Character
from chronicle.models import Cycle, Game
from chronicle.services import current_downtime

from ...models import (
    ChangeKind,
    ChangeStatus,
    DestroyedBy,
    Find,
    Ownership,
    OwnershipChange,
    OwnershipHow,
    Structure,
    StructureKind,
    StructureStatus,
    TheftControl,
)
from ...words import DESTROYED_RULING, HAVEN_DESTROYED, OUTER_DESTROYED_RULING, RULING_ENDED
from .common import (
    _lock_structure,
    _now,
    _owner_ids,
    _require_staff,
    _require_standing,
)

# --- Storytellers' rulings ---------------------------------------------------------------------


@transaction.atomic
def theft_control_record(
    *,
    structure: Structure,
    game: Game,
    thieves: Sequence[Character],
    by: User,
    now: dt.datetime | None = None,
) -> TheftControl:
    """HAV-07: at `game`, these thieves controlled the structure. Recording the same game again
    replaces its list of thieves."""
    now = _now(now)
    _require_staff(by, structure.chronicle_id)
    structure = _lock_structure(structure)
    _require_standing(structure)
    if game.chronicle_id != structure.chronicle_id:
        raise ValidationError({"game": [_("Choose a game of this chronicle (HAV-07).")]})
    if not thieves:
        raise ValidationError({"thieves": [_("Name at least one thief (HAV-07).")]})
    if any(t.chronicle_id != structure.chronicle_id for t in thieves):
        raise ValidationError(
            {"thieves": [_("Thieves must be characters of this chronicle (HAV-07).")]}
        )
    if structure.kind == StructureKind.CRYPT and len({t.pk for t in thieves}) != 1:
        # Thieves who keep it would own it (HAV-07), and a crypt has one owner.
        raise ValidationError(
            {"thieves": [_("A crypt has exactly one owner (HAV-01): name one thief.")]}
        )
    control, _created = TheftControl.objects.get_or_create(
        structure=structure, game=game, defaults={"recorded_by": by, "recorded_at": now}
    )
    control.thieves.set(thieves)
    return control


def _destroy(
    structure_ids: Iterable[int],
    *,
    how: str,
    note: str,
    cycle: Cycle | None,
    now: dt.datetime,
) -> int:
    ids = list(structure_ids)
    done = (
        Structure.objects.filter(pk__in=ids)
        .exclude(status=StructureStatus.DESTROYED)
        .update(
            status=StructureStatus.DESTROYED,
            destroyed_at=now,
            destroyed_cycle=cycle,
            destroyed_by=how,
            destroyed_note=note,
        )
    )
    Ownership.objects.filter(structure_id__in=ids, ended_at__isnull=True).update(
        ended_at=now, ended_cycle=cycle, ended_why=HAVEN_DESTROYED
    )
    _forget(ids, now)
    return done


def _forget(structure_ids: Sequence[int], now: dt.datetime) -> None:
    """A destroyed haven is nowhere to be found: its finders' finds end with it, so their
    list of havens never shows a place that is gone (HAV-25b)."""
    Find.objects.filter(structure_id__in=structure_ids, cleared_at__isnull=True).update(
        cleared_at=now
    )


@transaction.atomic
def structure_destroy(
    *, structure: Structure, by: User, note: str, now: dt.datetime | None = None
) -> Structure:
    """A storyteller's ruling: the structure (and any crypt inside) is destroyed now."""
    now = _now(now)
    _require_staff(by, structure.chronicle_id)
    structure = _lock_structure(structure)
    if structure.status == StructureStatus.DESTROYED:
        return structure
    if not note.strip():
        raise ValidationError({"note": [_("Say why, for the record (HAV-05).")]})
    cycle = current_downtime(structure.chronicle_id)
    crypts = list(
        Structure.objects.filter(outer=structure)
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", flat=True)
    )
    _destroy([structure.pk], how=DestroyedBy.STORYTELLER, note=note.strip(), cycle=cycle, now=now)
    _destroy(
        crypts,
        how=DestroyedBy.STORYTELLER,
        note=OUTER_DESTROYED_RULING,
        cycle=cycle,
        now=now,
    )
    OwnershipChange.objects.filter(
        structure_id__in=[structure.pk, *crypts], status=ChangeStatus.PENDING
    ).exclude(kind=ChangeKind.WILL).update(
        status=ChangeStatus.VOID, outcome=DESTROYED_RULING, applied_at=now
    )
    structure.refresh_from_db()
    return structure


@transaction.atomic
def structure_owner_set(
    *,
    structure: Structure,
    characters: Sequence[Character],
    by: User,
    note: str,
    now: dt.datetime | None = None,
) -> list[Ownership]:
    """A storyteller's ruling: these characters own the structure from now."""
    now = _now(now)
    _require_staff(by, structure.chronicle_id)
    structure = _lock_structure(structure)
    _require_standing(structure)
    if structure.kind == StructureKind.CRYPT and len(characters) != 1:
        raise ValidationError({"characters": [_("A crypt has exactly one owner (HAV-01).")]})
    if not characters:
        raise ValidationError({"characters": [_("Name at least one owner (HAV-01).")]})
    wanted = {c.pk for c in characters}
    current = _owner_ids(structure)
    cycle = current_downtime(structure.chronicle_id)
    Ownership.objects.filter(
        structure=structure, ended_at__isnull=True, character_id__in=current - wanted
    ).update(ended_at=now, ended_cycle=cycle, ended_why=(RULING_ENDED % {"note": note})[:200])
    return Ownership.objects.bulk_create(
        Ownership(
            structure=structure,
            character_id=pk,
            how=OwnershipHow.STORYTELLER,
            started_at=now,
            started_cycle=cycle,
        )
        for pk in sorted(wanted - current)
    )
