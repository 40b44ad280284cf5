"""chronicle/rules.py, by table: every worked example of GEN-03, TST-01 and DT-01."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal

import pytest

from chronicle.rules import (
    HOUSE_RULE_FIELDS,
    HouseRules,
    deadline_moment,
    downtime_deadline,
    house_rules_from,
    house_rules_overrides,
    ratio_class,
    supermajority_passes,
)


@pytest.mark.parametrize(
    ("game_date", "deadline"),
    [
        pytest.param(dt.date(2024, 3, 9), dt.date(2024, 3, 19), id="DT-01-saturday-game"),
        pytest.param(dt.date(2024, 3, 12), dt.date(2024, 3, 26), id="DT-01-tuesday-game-strict"),
        pytest.param(dt.date(2024, 3, 11), dt.date(2024, 3, 19), id="DT-01-monday-game"),
        pytest.param(dt.date(2024, 3, 13), dt.date(2024, 3, 26), id="DT-01-wednesday-game"),
        pytest.param(dt.date(2024, 12, 28), dt.date(2025, 1, 7), id="DT-01-across-new-year"),
        pytest.param(dt.date(2024, 2, 24), dt.date(2024, 3, 5), id="DT-01-across-leap-day"),
    ],
)
def test_downtime_deadline(game_date: dt.date, deadline: dt.date) -> None:
    assert downtime_deadline(game_date) == deadline
    assert downtime_deadline(game_date).weekday() == 1  # always a Tuesday


def test_downtime_deadline_weeks_setting() -> None:
    assert downtime_deadline(dt.date(2024, 3, 9), weeks_after=1) == dt.date(2024, 3, 12)


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(dt.datetime(2024, 3, 9, 20, 0), id="DT-01-datetime-refused"),
        pytest.param("2024-03-09", id="DT-01-string-refused"),
    ],
)
def test_downtime_deadline_refuses_non_dates(bad: object) -> None:
    with pytest.raises(ValueError, match="game_date must be a date"):
        downtime_deadline(bad)  # type: ignore[arg-type]


def test_deadline_moment_is_2359_local_across_dst() -> None:
    ny = zoneinfo.ZoneInfo("America/New_York")
    # 2024-03-10 is the US spring-forward day: before it UTC-5, after it UTC-4.
    before = deadline_moment(dt.date(2024, 3, 5), ny)
    after = deadline_moment(dt.date(2024, 3, 19), ny)
    assert before.astimezone(dt.UTC) == dt.datetime(2024, 3, 6, 4, 59, tzinfo=dt.UTC)
    assert after.astimezone(dt.UTC) == dt.datetime(2024, 3, 20, 3, 59, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("yes", "eligible", "passes"),
    [
        pytest.param(4, 5, True, id="GEN-03-five-sts-four-yes"),
        pytest.param(3, 5, False, id="GEN-03-five-sts-three-fails"),
        pytest.param(4, 6, True, id="GEN-03-six-sts-four-yes"),
        pytest.param(3, 6, False, id="GEN-03-six-sts-three-fails"),
        pytest.param(2, 3, True, id="GEN-03-three-sts-two-yes"),
        pytest.param(1, 3, False, id="GEN-03-three-sts-one-fails"),
        pytest.param(1, 1, True, id="GEN-03-single-st"),
        pytest.param(0, 1, False, id="GEN-03-single-st-no"),
        pytest.param(14, 21, True, id="GEN-04-players-exact-two-thirds"),
        pytest.param(13, 21, False, id="GEN-04-players-just-short"),
    ],
)
def test_supermajority(yes: int, eligible: int, passes: bool) -> None:
    assert supermajority_passes(yes, eligible) is passes


@pytest.mark.parametrize(
    ("yes", "eligible", "message"),
    [
        pytest.param(0, 0, "At least one", id="GEN-03-nobody-eligible"),
        pytest.param(4, 3, "between 0 and 3", id="GEN-03-more-yes-than-voters"),
        pytest.param(-1, 3, "between 0 and 3", id="GEN-03-negative-yes"),
        pytest.param(True, 3, "whole number", id="GEN-03-bool-refused"),
        pytest.param(2.0, 3, "whole number", id="GEN-03-float-refused"),
    ],
)
def test_supermajority_refuses_bad_counts(yes: object, eligible: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        supermajority_passes(yes, eligible)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("high", "low", "expected"),
    [
        pytest.param(100, 99, "wins_ties", id="TST-01-doc-reinforcement-100-vs-99"),
        pytest.param(99, 90, "wins_ties", id="TST-01-attack-99-vs-90-wins-ties"),
        pytest.param(400, 99, "automatic", id="TST-01-400-vs-99-automatic"),
        pytest.param(396, 99, "automatic", id="TST-01-exactly-4x"),
        pytest.param(395, 99, "wins_ties_retest", id="TST-01-just-under-4x"),
        pytest.param(198, 99, "wins_ties_retest", id="TST-01-exactly-2x"),
        pytest.param(197, 99, "wins_ties", id="TST-01-just-under-2x"),
        pytest.param(7, 7, "even", id="TST-01-equal"),
        pytest.param(0, 0, "even", id="TST-01-both-zero"),
        pytest.param(1, 0, "automatic", id="TST-01-positive-vs-zero"),
    ],
)
def test_ratio_class(high: int, low: int, expected: str) -> None:
    assert ratio_class(high, low) == expected


def test_ratio_class_zero_low_setting() -> None:
    assert ratio_class(5, 0, zero_low_is_automatic=False) == "wins_ties_retest"


@pytest.mark.parametrize(
    ("high", "low", "message"),
    [
        pytest.param(90, 99, "swap the bids", id="TST-01-high-below-low"),
        pytest.param(5, -1, "negative", id="TST-01-negative"),
        pytest.param(5.5, 2, "whole number", id="TST-01-float"),
    ],
)
def test_ratio_class_refuses(high: object, low: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ratio_class(high, low)  # type: ignore[arg-type]


# --- House-rule settings ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "default"),
    [
        pytest.param("ventrue_herd_mode", "double_cost", id="CLN-03-default"),
        pytest.param("generation_step_cost", 2, id="CRE-05-default"),
        pytest.param("willpower_cost", 3, id="CRE-06-SRC-06-default"),
        pytest.param("discipline_cost_intermediate", 6, id="DIS-03-default"),
        pytest.param("no_potence_attacker_adds", 4, id="HAV-26-default"),
        pytest.param("submitted_downtime_xp", Decimal("2.5"), id="DT-03-default"),
        pytest.param("deadline_weeks_after_game", 2, id="DT-01-default"),
        pytest.param("kine_blood_months", 3, id="BLD-03-default"),
        pytest.param("zero_low_bid_is_automatic", True, id="TST-01-default"),
    ],
)
def test_house_rule_defaults(name: str, default: object) -> None:
    assert getattr(HouseRules(), name) == default


def test_every_setting_cites_a_rule() -> None:
    for name, field in HOUSE_RULE_FIELDS.items():
        assert field.metadata["rule"], name
        assert field.metadata["label"], name


def test_house_rules_overrides_round_trip() -> None:
    rules = house_rules_from({"willpower_cost": "4", "submitted_downtime_xp": "3.5"})
    assert rules.willpower_cost == 4
    assert rules.submitted_downtime_xp == Decimal("3.5")
    assert house_rules_overrides(rules) == {"willpower_cost": 4, "submitted_downtime_xp": "3.5"}
    assert house_rules_overrides(HouseRules()) == {}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param({"no_such_rule": 1}, "Unknown house-rule", id="unknown-name"),
        pytest.param({"willpower_cost": "three"}, "whole number", id="not-a-number"),
        pytest.param({"willpower_cost": -1}, "at least 0", id="negative"),
        pytest.param({"deadline_weeks_after_game": 0}, "at least 1", id="DT-01-zero-weeks"),
        pytest.param({"retirement_spent_fraction": "50"}, "at most 1", id="XP-06-over-100pc"),
        pytest.param({"ventrue_herd_mode": "triple"}, "must be one of", id="bad-choice"),
        pytest.param({"no_potence_attacker_adds": 2}, "must be one of", id="HAV-26-bad-choice"),
        pytest.param({"zero_low_bid_is_automatic": "yes"}, "true or false", id="bool-as-text"),
        pytest.param({"no_downtime_xp": "NaN"}, "expected a number", id="decimal-nan"),
    ],
)
def test_house_rules_refuse_bad_values(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        house_rules_from(overrides)
