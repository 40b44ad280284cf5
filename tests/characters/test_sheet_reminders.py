"""The rules a player plays live at the game, printed on the sheet they carry (CTL-03, SEW-05):
nothing is stored or computed for them (SPEC), so the sheet is where the app applies them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from characters.models import Character

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

LOSSES = "−1 per blood scene, −1 for combat, −1 per aggravated wound"
TOREADOR = "−1 per lost social test you started"
SEWERS = "you are lost for 30 minutes out of play"


@pytest.mark.parametrize(
    ("clan", "toreador_line"),
    [
        pytest.param("brujah", False, id="CTL-03-in-play-losses-on-the-sheet"),
        pytest.param("toreador", True, id="CTL-03-toreador-social-test-loss"),
    ],
)
def test_the_sheet_lists_control_lost_in_play(
    world: Any, make_character: Callable[..., Character], clan: str, toreador_line: bool
) -> None:
    character = make_character("Vesper", clan=clan)
    page = (
        world.client("player_alice")
        .get(f"/c/{world.chronicle.slug}/characters/{character.pk}/")
        .content.decode()
    )
    assert LOSSES in page
    assert "at most 3 a scene, 4 with Beast Within (CTL-03)" in page
    assert (TOREADOR in page) is toreador_line


def test_the_sheet_warns_of_getting_lost_in_the_sewers(
    world: Any, make_character: Callable[..., Character]
) -> None:
    """SEW-05: above your lore, off a searched route, you are lost for 30 minutes."""
    character = make_character("Mole", clan="nosferatu")
    page = (
        world.client("player_alice")
        .get(f"/c/{world.chronicle.slug}/characters/{character.pk}/")
        .content.decode()
    )
    assert SEWERS in page
    assert "electronic devices do not work in the sewers (SEW-05)" in page
