"""Havens test helpers: structures built straight with the ORM (the ownership services have
their own tests), so search and attack tests start from a standing haven."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.utils import timezone

from characters.models import Character
from havens.models import Attribute, Ownership, OwnershipHow, Structure, StructureStatus


@pytest.fixture
def make_haven(world: Any) -> Callable[..., Structure]:
    """make_haven(owner, name="Loft", attributes={"influence_resistance": 18},
    alarms=[("attack", "audible")], outer=None, co_owners=[...]) -> a standing structure."""

    def make(
        owner: Character,
        *,
        name: str = "The Loft",
        location: str = "Under the old bridge",
        outer: Structure | None = None,
        attributes: dict[str, int] | None = None,
        alarms: Sequence[tuple[str, str]] = (),
        co_owners: Sequence[Character] = (),
        chronicle: Any = None,
    ) -> Structure:
        now = timezone.now()
        structure = Structure.objects.create(
            chronicle=chronicle or owner.chronicle,
            kind="crypt" if outer else "outer",
            outer=outer,
            name=name,
            location=location,
            status=StructureStatus.STANDING,
            designed_by=owner,
            created_at=now,
        )
        for character in [owner, *co_owners]:
            Ownership.objects.create(
                structure=structure, character=character, how=OwnershipHow.BUILT, started_at=now
            )
        for kind, quantity in (attributes or {}).items():
            Attribute.objects.create(
                structure=structure, kind=kind, quantity=quantity, cost=1, created_at=now
            )
        for trigger, effect in alarms:
            Attribute.objects.create(
                structure=structure,
                kind="alarm",
                trigger=trigger,
                effect=effect,
                cost=5,
                created_at=now,
                note="alarm",
            )
        return structure

    return make


@pytest.fixture
def make_npc(make_character: Callable[..., Character]) -> Callable[..., Character]:
    """An NPC (no player): as many as a test needs, unlike one active PC per player."""

    def make(name: str, **fields: Any) -> Character:
        return make_character(name, player=None, **fields)

    return make
