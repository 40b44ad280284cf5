"""Issue 14, by table: XP at the game only before play starts (XP-01), a Tremere's other
Thaumaturgy paths at the game (CLN-01 against DIS-08, setting `tremere_paths_any_time`), and a
repair always cheaper than the item (ITM-01, ITM-02, setting `item_repair_free_at_cost_one`).

Expected values are the issue's and SPEC's numbers, written out, never recomputed with the code
under test."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal
from typing import Any

import pytest

from characters.rules import (
    PurchaseMomentError,
    check_before_play,
    check_item_cost,
    check_purchase_timing,
    item_repair_cost,
)
from chronicle.rules import HOUSE_RULE_FIELDS, HouseRules, house_rules_from, settings_for

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
UTC = dt.UTC


def at(hour: int, minute: int, tz: dt.tzinfo = NEW_YORK, day: int = 9) -> dt.datetime:
    return dt.datetime(2024, 3, day, hour, minute, tzinfo=tz)


# --- XP-01: at the game, before play starts -----------------------------------------------------


@pytest.mark.parametrize(
    ("asked_at", "play_starts", "problem"),
    [
        # The reproduction: a game starting at 19:00, a purchase at 23:30.
        pytest.param(at(23, 30), at(19, 0), "Play started at 19:00", id="XP-01-2330-refused"),
        pytest.param(at(18, 59), at(19, 0), None, id="XP-01-1859-accepted"),
        pytest.param(at(19, 0), at(19, 0), "Play started at 19:00", id="XP-01-at-start-refused"),
        pytest.param(at(19, 1), at(19, 0), "(XP-01)", id="XP-01-1901-refused"),
        # Moments compare as moments, not as clock faces: 23:30 UTC is 18:30 in New York.
        pytest.param(at(23, 30, UTC), at(19, 0), None, id="XP-01-2330-utc-is-1830-local"),
        pytest.param(at(0, 5, UTC, day=10), at(19, 0), "19:00", id="XP-01-0005-utc-is-1905"),
        # The refusal names the start in the zone of `play_starts` (the chronicle's).
        pytest.param(at(23, 30), at(19, 30), "Play started at 19:30", id="XP-01-names-1930"),
        # A game with no start time: the whole day counts (the day is the caller's check).
        pytest.param(at(23, 30), None, None, id="XP-01-no-start-time-whole-day"),
    ],
)
def test_at_game_purchase_before_play(
    asked_at: dt.datetime, play_starts: dt.datetime | None, problem: str | None
) -> None:
    if problem is None:
        check_before_play(asked_at, play_starts=play_starts)
        return
    with pytest.raises(PurchaseMomentError, match=problem) as caught:
        check_before_play(asked_at, play_starts=play_starts)
    text = str(caught.value)
    assert "XP-01" in text and "downtime" in text


@pytest.mark.parametrize(
    ("asked_at", "play_starts"),
    [
        pytest.param(dt.datetime(2024, 3, 9, 18, 0), at(19, 0), id="XP-01-naive-asked"),
        pytest.param(at(18, 0), dt.datetime(2024, 3, 9, 19, 0), id="XP-01-naive-start"),
        pytest.param(dt.date(2024, 3, 9), at(19, 0), id="XP-01-a-day-is-not-a-moment"),
    ],
)
def test_before_play_needs_aware_moments(asked_at: Any, play_starts: Any) -> None:
    with pytest.raises(ValueError, match="aware moment"):
        check_before_play(asked_at, play_starts=play_starts)


# --- CLN-01 (Tremere) against DIS-08: the other Thaumaturgy paths at the game ---------------------


@pytest.mark.parametrize(
    ("purchase", "problem"),
    [
        pytest.param(
            dict(levels=["1a"], when="game", in_clan=False, tremere_path=True),
            None,
            id="CLN-01-tremere-path-at-game-default-on",
        ),
        pytest.param(
            dict(
                levels=["1a"],
                when="game",
                in_clan=False,
                tremere_path=True,
                tremere_paths_any_time=False,
            ),
            "only be bought in downtime",
            id="CLN-01-tremere-path-at-game-setting-off-DIS-08",
        ),
        pytest.param(
            dict(levels=["1a"], when="downtime", in_clan=False, tremere_path=True),
            None,
            id="CLN-01-tremere-path-in-downtime",
        ),
        pytest.param(
            dict(
                levels=["1a"],
                when="downtime",
                in_clan=False,
                tremere_path=True,
                tremere_paths_any_time=False,
            ),
            None,
            id="CLN-01-tremere-path-in-downtime-setting-off",
        ),
        # Only a Tremere's paths: any other out-of-clan level stays downtime-only (DIS-08).
        pytest.param(
            dict(levels=["1a"], when="game", in_clan=False),
            "only be bought in downtime",
            id="CLN-01-not-tremere-path-still-DIS-08",
        ),
        # "Any time" is about when, not how many: still one level a month (DIS-08).
        pytest.param(
            dict(
                levels=["1b"],
                when="game",
                in_clan=False,
                tremere_path=True,
                levels_bought_this_cycle=1,
            ),
            "per month",
            id="CLN-01-tremere-path-at-game-monthly-limit",
        ),
    ],
)
def test_tremere_paths_any_time(purchase: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        check_purchase_timing(**purchase)
    else:
        with pytest.raises(ValueError, match=problem):
            check_purchase_timing(**purchase)


def test_moment_refusal_and_limit_refusal_are_told_apart() -> None:
    """The service puts a "when" refusal beside the When field, the monthly limit beside the
    level: the first is a PurchaseMomentError, the second a plain ValueError."""
    with pytest.raises(PurchaseMomentError, match="DIS-08"):
        check_purchase_timing(["1a"], when="game", in_clan=False)
    with pytest.raises(ValueError, match="per month") as caught:
        check_purchase_timing(["1a"], when="game", in_clan=True, levels_bought_this_cycle=1)
    assert not isinstance(caught.value, PurchaseMomentError)


# --- ITM-01 / ITM-02: an item costs at least 1, repair strictly less ----------------------------


@pytest.mark.parametrize(
    ("item", "repair"),
    [
        # ITM-02's "½ rounded up" where it is strictly less.
        pytest.param(dict(purchase_cost=2), 1, id="ITM-02-cost-2-repairs-1"),
        pytest.param(dict(purchase_cost=3), 2, id="ITM-02-cost-3-repairs-2"),
        pytest.param(dict(purchase_cost=4), 2, id="ITM-02-cost-4-repairs-2"),
        pytest.param(dict(purchase_cost=5), 3, id="ITM-02-cost-5-repairs-3"),
        pytest.param(dict(purchase_cost=9), 5, id="ITM-02-cost-9-repairs-5"),
        # The issue: cost 1 used to repair for 1; the setting decides, free by default.
        pytest.param(dict(purchase_cost=1), 0, id="ITM-02-cost-1-free-by-default"),
        pytest.param(
            dict(purchase_cost=1, item_repair_free_at_cost_one=True), 0, id="ITM-02-cost-1-free"
        ),
        pytest.param(
            dict(purchase_cost=1, item_repair_free_at_cost_one=False), 1, id="ITM-02-cost-1-paid"
        ),
        # The setting only concerns cost 1.
        pytest.param(
            dict(purchase_cost=2, item_repair_free_at_cost_one=False), 1, id="ITM-02-cost-2-paid"
        ),
        # No fraction can reach the cost: 0.9 of 2 rounds up to 2, kept at 1 below.
        pytest.param(
            dict(purchase_cost=2, item_repair_fraction=Decimal("0.9")), 1, id="ITM-02-0.9-of-2"
        ),
        pytest.param(
            dict(purchase_cost=10, item_repair_fraction=Decimal("0.95")),
            9,
            id="ITM-02-0.95-of-10",
        ),
        pytest.param(
            dict(purchase_cost=10, item_repair_fraction=Decimal("0.25")),
            3,
            id="ITM-02-0.25-of-10",
        ),
        pytest.param(
            dict(purchase_cost=3, item_repair_fraction=Decimal("0.01")),
            1,
            id="ITM-02-tiny-fraction-min-1",
        ),
    ],
)
def test_repair_is_cheaper_than_the_item(item: dict[str, Any], repair: int) -> None:
    assert item_repair_cost(**item) == repair


@pytest.mark.parametrize(
    "fraction",
    [Decimal("0.01"), Decimal("0.25"), Decimal("0.5"), Decimal("0.75"), Decimal("0.99")],
    ids=lambda f: f"ITM-02-fraction-{f}",
)
def test_no_fraction_makes_a_repair_cost_the_item(fraction: Decimal) -> None:
    for cost in range(2, 301):
        repair = item_repair_cost(cost, item_repair_fraction=fraction)
        assert 1 <= repair < cost, (cost, repair)


@pytest.mark.parametrize(
    "cost",
    [pytest.param(0, id="ITM-01-cost-0-refused"), pytest.param(-3, id="ITM-01-negative-refused")],
)
def test_an_item_costs_at_least_1(cost: int) -> None:
    with pytest.raises(ValueError, match=r"at least 1 \(ITM-01\)"):
        check_item_cost(cost)
    with pytest.raises(ValueError, match=r"at least 1 \(ITM-01\)"):
        item_repair_cost(cost)


@pytest.mark.parametrize(
    "cost",
    [pytest.param(True, id="ITM-01-bool"), pytest.param(Decimal("2"), id="ITM-01-decimal")],
)
def test_item_cost_must_be_a_whole_number(cost: Any) -> None:
    with pytest.raises(ValueError, match="whole number"):
        check_item_cost(cost)


# --- The two settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule", "default"),
    [
        pytest.param("tremere_paths_any_time", "CLN-01", True, id="CLN-01-setting-default-on"),
        pytest.param("item_repair_free_at_cost_one", "ITM-02", True, id="ITM-02-setting-free"),
    ],
)
def test_settings_and_their_defaults(name: str, rule: str, default: bool) -> None:
    assert getattr(HouseRules(), name) is default
    assert HOUSE_RULE_FIELDS[name].metadata["rule"] == rule
    assert getattr(house_rules_from({name: not default}), name) is (not default)
    with pytest.raises(ValueError, match="true or false"):
        house_rules_from({name: "yes"})


def test_settings_reach_the_rules() -> None:
    house = HouseRules(tremere_paths_any_time=False, item_repair_free_at_cost_one=False)
    assert settings_for(check_purchase_timing, house)["tremere_paths_any_time"] is False
    assert settings_for(item_repair_cost, house)["item_repair_free_at_cost_one"] is False
    assert item_repair_cost(1, **settings_for(item_repair_cost, house)) == 1
    assert item_repair_cost(1, **settings_for(item_repair_cost, HouseRules())) == 0
