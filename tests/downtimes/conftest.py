"""Downtimes test helpers: the world's first game was on Saturday 9 March 2024 in New York; its
downtime is due by Tuesday 19 March 2024, 23:59 EDT (03:59 UTC on the 20th)."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import time_machine

from characters.models import Character
from downtimes.models import Submission
from downtimes.services import submissions as services
from havens.models import (
    Find,
    Ownership,
    OwnershipHow,
    Project,
    ProjectKind,
    Structure,
    StructureKind,
    StructureStatus,
)

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
DURING = dt.datetime(2024, 3, 15, 12, 0, tzinfo=NEW_YORK)
JUST_BEFORE = dt.datetime(2024, 3, 19, 23, 58, 59, tzinfo=NEW_YORK)
AT_DEADLINE = dt.datetime(2024, 3, 19, 23, 59, tzinfo=NEW_YORK)


@pytest.fixture
def during() -> Iterator[None]:
    """Frozen in the middle of the downtime (the havens services read the clock)."""
    with time_machine.travel(DURING, tick=False):
        yield


@pytest.fixture
def lucien(make_character: Callable[..., Character]) -> Character:
    return make_character("Lucien", player="player_alice", clan="toreador", business=2)


@pytest.fixture
def marguerite(make_character: Callable[..., Character]) -> Character:
    return make_character("Marguerite", player="player_bob", clan="ventrue", business=3)


@pytest.fixture
def draft(world: Any, lucien: Character, during: None) -> Submission:
    return services.submission_for_edit(
        character=lucien, cycle=world.game.cycle, by=world.users["player_alice"]
    )


@pytest.fixture
def bob_draft(world: Any, marguerite: Character, during: None) -> Submission:
    return services.submission_for_edit(
        character=marguerite, cycle=world.game.cycle, by=world.users["player_bob"]
    )


@pytest.fixture
def make_haven(world: Any) -> Callable[..., Structure]:
    """make_haven(owner, project=True, found_by=lucien) -> a standing haven built by `owner`,
    with an open building project if asked, known to `found_by` (a released find)."""

    def make(
        owner: Character,
        *,
        name: str = "The Loft",
        project: bool = False,
        found_by: Character | None = None,
    ) -> Structure:
        now = DURING
        structure = Structure.objects.create(
            chronicle=owner.chronicle,
            kind=StructureKind.OUTER,
            name=name,
            location="Under the old bridge",
            status=StructureStatus.STANDING,
            designed_by=owner,
            created_at=now,
        )
        Ownership.objects.create(
            structure=structure, character=owner, how=OwnershipHow.BUILT, started_at=now
        )
        if project:
            Project.objects.create(
                structure=structure,
                kind=ProjectKind.ATTRIBUTE,
                attribute_kind="influence_resistance",
                cost=5,
                requested_by=owner,
                created_at=now,
            )
        if found_by is not None:
            Find.objects.create(
                structure=structure, character=found_by, cycle=world.game.cycle, found_at=now
            )
        return structure

    return make
