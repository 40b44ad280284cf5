"""Characters for the characters tests: approved sheets built straight from the package numbers
(the creation wizard has its own tests), so every other test starts from a playable PC."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from characters.models import Acquired, Approval, Character, DisciplineLevel
from characters.rules import LEVEL_NUMBERS


@pytest.fixture
def make_character(world: Any) -> Callable[..., Character]:
    """make_character("Lucien", player="player_alice", clan="toreador",
    disciplines={"auspex": "1b", "celerity": "1a"}) -> an approved, active character."""

    def make(
        name: str,
        *,
        player: str | None = "player_alice",
        chronicle: Any = None,
        clan: str = "toreador",
        creature: str = "kindred",
        disciplines: dict[str, str] | None = None,
        background_approved: bool = True,
        **fields: Any,
    ) -> Character:
        defaults: dict[str, Any] = {
            "physical": 7,
            "social": 5,
            "mental": 3,
            "willpower": 2,
            "abilities": {"investigation": 2, "brawl": 2, "etiquette": 1},
            "herd": 1,
            "business": 1,
            "occult": 1,
        }
        defaults.update(fields)
        character = Character.objects.create(
            chronicle=chronicle or world.chronicle,
            player=world.users[player] if player else None,
            name=name,
            creature=creature,
            clan=clan if creature == "kindred" else "",
            approval=Approval.APPROVED,
            background_questionnaire="Who sired you? A stranger in the rain.",
            background_approved_at=timezone.now() if background_approved else None,
            **defaults,
        )
        for discipline, top in (disciplines or {}).items():
            DisciplineLevel.objects.bulk_create(
                DisciplineLevel(
                    character=character,
                    discipline=discipline,
                    level=number,
                    acquired=Acquired.CREATION,
                    free=True,
                )
                for number in range(1, LEVEL_NUMBERS[top] + 1)
            )
        return character

    return make
