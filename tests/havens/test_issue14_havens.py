"""Issue 14's haven rules: forsaking counts the character's games, not its player's (HAV-06); a
mobile haven hides as if hidden by default (HAV-25), and still cannot buy Hiding (HAV-23); an
empty attacking party bids nothing (HAV-26a)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from chronicle import services as chronicle_services
from chronicle.models import Attendance
from chronicle.rules import HouseRules
from havens import rules
from havens.models import Ownership, SearchResult, Structure, StructureStatus
from havens.services import ownership
from havens.services import searches as search_services

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 20, 20, 0, tzinfo=dt.UTC)
BEFORE_THE_FIRST_GAME = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)


def _games(world: Any, count: int) -> list[Any]:
    games = [world.game]
    for i in range(1, count):
        games.append(
            chronicle_services.game_create(
                chronicle=world.chronicle, date=world.game.date + dt.timedelta(days=28 * i)
            )
        )
    return games


def _sign_in(world: Any, game: Any, character: Any | None) -> None:
    """Alice at `game`, as `character` (None: the sheet's default)."""
    chronicle_services.attendance_record(
        game=game,
        lines=[
            chronicle_services.SignIn(
                world.users["player_alice"].pk,
                True,
                True,
                character_id=character.pk if character else None,
            )
        ],
        by=world.users["storyteller"],
        now=dt.datetime.combine(game.date, dt.time(23), tzinfo=dt.UTC),
    )


@pytest.fixture
def manor(world: Any, make_character: Any, make_haven: Any) -> dict[str, Any]:
    lucien = make_character("Lucien", player="player_alice")
    haven = make_haven(lucien, name="Manor")
    Ownership.objects.update(started_at=BEFORE_THE_FIRST_GAME)
    return {"lucien": lucien, "haven": haven}


def _standing(haven: Structure) -> bool:
    haven.refresh_from_db()
    return haven.status != StructureStatus.DESTROYED


# --- HAV-06: the character's games count -------------------------------------------------------


def _out_of_play(character: Any, status: str = "torpor") -> None:
    character.status = status
    character.save(update_fields=["status"])


def test_six_games_with_another_character_forsake_the_first_ones_haven(
    world: Any, make_character: Any, manor: dict[str, Any]
) -> None:
    """The issue's reproduction, through the sign-in sheet: Lucien lies in torpor, Alice comes
    to six games in a row as Odile (the sheet's default, her only active character): Lucien
    was not in play, so his haven is forsaken, although Alice attended every game."""
    games = _games(world, 6)
    _out_of_play(manor["lucien"])
    odile = make_character("Odile", player="player_alice")
    for game in games:
        _sign_in(world, game, None)
    assert set(Attendance.objects.values_list("character_id", flat=True)) == {odile.pk}
    summary = ownership.forsaking_resolve(cycle=games[-1].cycle, now=NOW)
    assert summary == {"forsaken": 1, "destroyed": 1}
    assert not _standing(manor["haven"])


def _attend(world: Any, game: Any, character: Any | None) -> None:
    """A sign-in line as stored (None: an older line that names no character)."""
    Attendance.objects.create(
        game=game,
        player=world.users["player_alice"],
        character=character,
        recorded_by=world.users["storyteller"],
        recorded_at=NOW,
    )


LU, OD = "lucien", "odile"


@pytest.mark.parametrize(
    ("played", "forsaken"),
    [
        pytest.param([OD] * 6, True, id="HAV-06-six-games-as-another-character-forsakes"),
        pytest.param([LU] * 6, False, id="HAV-06-six-games-as-the-owner-keeps"),
        pytest.param([], True, id="HAV-06-six-games-away-forsakes"),
        # HAV-06's TV: in play at game 4 resets the count.
        pytest.param([OD, OD, OD, LU, OD, OD], False, id="HAV-06-in-play-at-game-4-resets"),
        pytest.param([LU, OD, OD, OD, OD, OD], False, id="HAV-06-five-games-away-not-yet"),
    ],
)
def test_forsaking_counts_the_character(
    world: Any, make_character: Any, manor: dict[str, Any], played: list[str], forsaken: bool
) -> None:
    games = _games(world, 6)
    who = {
        LU: manor["lucien"],
        OD: make_character("Odile", player="player_alice", status="retired"),
    }
    for game, name in zip(games, played, strict=False):
        _attend(world, game, who[name])
    summary = ownership.forsaking_resolve(cycle=games[-1].cycle, now=NOW)
    assert summary["forsaken"] == int(forsaken)
    assert _standing(manor["haven"]) is not forsaken


@pytest.mark.parametrize(
    ("lucien", "odile", "forsaken"),
    [
        # Older lines (no character) count for the player's only active character: Odile.
        pytest.param("torpor", "active", True, id="HAV-06-unnamed-lines-count-for-the-only-pc"),
        pytest.param("active", "retired", False, id="HAV-06-unnamed-lines-count-for-the-owner"),
        # No active character: nobody can tell, so the older reading holds for each of hers.
        pytest.param("torpor", "retired", False, id="HAV-06-unnamed-lines-no-active-pc-count"),
    ],
)
def test_lines_without_a_character(
    world: Any,
    make_character: Any,
    manor: dict[str, Any],
    lucien: str,
    odile: str,
    forsaken: bool,
) -> None:
    games = _games(world, 6)
    _out_of_play(manor["lucien"], lucien)
    make_character("Odile", player="player_alice", status=odile)
    for game in games:
        _attend(world, game, None)
    assert ownership.forsaking_resolve(cycle=games[-1].cycle, now=NOW)["forsaken"] == int(forsaken)


# --- HAV-25: a mobile haven is easier to hide -------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "spent", "found", "points"),
    [
        # (mental 7 + influences 3) x 2 = 20, doubled as if hidden: 40.
        pytest.param({}, 21, False, 40, id="HAV-25-mobile-doubled-by-default-21-not-found"),
        pytest.param({}, 41, True, 40, id="HAV-25-mobile-doubled-41-found"),
        pytest.param(
            {"mobile_havens_hiding_doubled": False},
            21,
            True,
            20,
            id="HAV-25-setting-off-older-reading-21-found",
        ),
    ],
)
def test_search_of_a_mobile_haven(
    world: Any,
    make_character: Any,
    make_npc: Any,
    make_haven: Any,
    overrides: dict[str, Any],
    spent: int,
    found: bool,
    points: int,
) -> None:
    world.chronicle.house_rule_overrides = overrides
    world.chronicle.save(update_fields=["house_rule_overrides"])
    kane = make_npc("Victor Kane", mental=7)
    make_haven(kane, name="Kane's van", attributes={"mobility": 1})
    alice = make_character("Lucien", player="player_alice", business=50)
    search = search_services.search_submit(
        character=alice,
        target_name="Victor Kane",
        influence="business",
        points=spent,
        by=world.users["player_alice"],
        key="issue14",
    )
    search_services.searches_resolve(cycle=world.game.cycle)
    result = SearchResult.objects.get(search=search)
    assert (result.found, result.hiding_points) == (found, points)


def test_default_setting_is_doubled() -> None:
    """HAV-25 (issue 14): the house rule's default is the doubled reading."""
    assert HouseRules().mobile_havens_hiding_doubled is True


@pytest.mark.parametrize(
    ("attributes", "buying"),
    [
        pytest.param({"mobility": 1}, "hiding", id="HAV-23-mobile-haven-cannot-buy-hiding"),
        pytest.param({"hiding": 1}, "mobility", id="HAV-23-hidden-haven-cannot-buy-mobility"),
    ],
)
def test_a_mobile_haven_cannot_also_be_hidden(attributes: dict[str, int], buying: str) -> None:
    with pytest.raises(rules.RuleViolation, match="HAV-14, HAV-19"):
        rules.check_attribute_purchase(
            structure="outer", existing=attributes, kind=buying, quantity=1, buyer_is_owner=True
        )


# --- HAV-26a: an empty attacking party bids nothing ------------------------------------------


@pytest.mark.parametrize(
    ("levels", "bid"),
    [
        pytest.param([], 0, id="HAV-26a-empty-party-bids-0"),
        pytest.param([5, 3, 3], 99, id="HAV-26a-3a-2a-2a-still-99"),
    ],
)
def test_reinforcement_bid(levels: list[int], bid: int) -> None:
    assert rules.reinforcement_attack_bid(levels) == bid


@pytest.mark.parametrize(
    "levels",
    [
        pytest.param([6], id="HAV-26a-level-6-still-refused"),
        pytest.param([-1], id="HAV-26a-level-minus-1-still-refused"),
    ],
)
def test_reinforcement_bid_levels_outside_0_to_5_are_refused(levels: list[int]) -> None:
    with pytest.raises(ValueError, match="at (most 5|least 0)"):
        rules.reinforcement_attack_bid(levels)
