"""GEN-05, by table: "rules will be published and publicly discussed at least one game before
any changes take place": `effective_game > published_game` (SPEC.md GEN-05)."""

from __future__ import annotations

import pytest

from chronicle.rules import rule_change_effective_ok


@pytest.mark.parametrize(
    ("published_game", "effective_game", "ok"),
    [
        # The example: published with game 4 next, a change may start at game 5.
        pytest.param(4, 5, True, id="GEN-05-game-after-the-next"),
        pytest.param(4, 9, True, id="GEN-05-a-later-game"),
        pytest.param(4, 4, False, id="GEN-05-the-next-game-itself-refused"),
        pytest.param(4, 3, False, id="GEN-05-an-earlier-game-refused"),
        pytest.param(1, 2, True, id="GEN-05-from-the-first-game"),
        pytest.param(1, 1, False, id="GEN-05-first-game-refused"),
    ],
)
def test_a_change_takes_effect_after_the_game_it_is_published_at(
    published_game: int, effective_game: int, ok: bool
) -> None:
    assert rule_change_effective_ok(published_game, effective_game) is ok


@pytest.mark.parametrize(
    ("published_game", "effective_game"),
    [
        pytest.param(0, 2, id="GEN-05-no-game-zero"),
        pytest.param(3, -1, id="GEN-05-negative-game"),
        pytest.param("3", 5, id="GEN-05-text-refused"),
        pytest.param(True, 5, id="GEN-05-bool-refused"),
    ],
)
def test_game_numbers_are_whole_numbers_from_one(
    published_game: object, effective_game: object
) -> None:
    with pytest.raises(ValueError):
        rule_change_effective_ok(published_game, effective_game)  # type: ignore[arg-type]
