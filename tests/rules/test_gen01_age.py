"""GEN-01, "Minors (under 18) are not permitted to participate": chronicle.rules' age on a day,
`adult_on` and the date-of-birth check, by table.

Expected ages are written out from the calendar, never recomputed with the code under test.
A 29 February birthday is reached on 1 March in a year without one.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest

from chronicle import rules
from chronicle.rules import HouseRules, adult_on, age_on, birth_date_checked, house_rules_from

AGES = [
    pytest.param(date(2006, 3, 9), date(2024, 3, 9), 18, id="GEN-01-18th-birthday-on-game-day"),
    pytest.param(date(2006, 3, 10), date(2024, 3, 9), 17, id="GEN-01-day-before-18th-birthday"),
    pytest.param(date(2006, 3, 8), date(2024, 3, 9), 18, id="GEN-01-day-after-18th-birthday"),
    pytest.param(date(2000, 1, 1), date(2024, 3, 9), 24, id="GEN-01-adult"),
    pytest.param(date(2024, 3, 9), date(2024, 3, 9), 0, id="GEN-01-born-that-day"),
    pytest.param(date(2004, 2, 29), date(2022, 2, 28), 17, id="GEN-01-29feb-not-yet-on-28feb"),
    pytest.param(date(2004, 2, 29), date(2022, 3, 1), 18, id="GEN-01-29feb-of-age-on-1mar"),
    pytest.param(date(2004, 2, 29), date(2024, 2, 29), 20, id="GEN-01-29feb-in-a-leap-year"),
    pytest.param(date(2004, 2, 29), date(2024, 2, 28), 19, id="GEN-01-29feb-leap-year-28feb"),
    pytest.param(date(2005, 3, 1), date(2023, 2, 28), 17, id="GEN-01-1mar-birthday-28feb"),
    pytest.param(date(2005, 12, 31), date(2023, 12, 31), 18, id="GEN-01-new-years-eve"),
]


@pytest.mark.parametrize(("born", "day", "age"), AGES)
def test_age_on(born: date, day: date, age: int) -> None:
    assert age_on(born, day) == age


ADULTS = [
    # The example: 18 on the game's date plays; a day short of it does not.
    pytest.param(date(2006, 3, 9), date(2024, 3, 9), 18, True, id="GEN-01-18-on-game-day"),
    pytest.param(date(2006, 3, 10), date(2024, 3, 9), 18, False, id="GEN-01-17-on-game-day"),
    pytest.param(date(2004, 2, 29), date(2022, 2, 28), 18, False, id="GEN-01-29feb-28feb-minor"),
    pytest.param(date(2004, 2, 29), date(2022, 3, 1), 18, True, id="GEN-01-29feb-1mar-adult"),
    pytest.param(date(2008, 2, 29), date(2026, 2, 28), 18, False, id="GEN-01-29feb-2026"),
    pytest.param(date(2008, 2, 29), date(2026, 3, 1), 18, True, id="GEN-01-29feb-2026-1mar"),
    # A troupe that plays at 21 (the setting), or lets anyone in (0).
    pytest.param(date(2004, 6, 1), date(2024, 3, 9), 21, False, id="GEN-01-setting-21-minor"),
    pytest.param(date(2003, 3, 9), date(2024, 3, 9), 21, True, id="GEN-01-setting-21-adult"),
    pytest.param(date(2020, 1, 1), date(2024, 3, 9), 0, True, id="GEN-01-setting-0"),
    # No date given: signed in as today (asked once; the sheet says "age not given").
    pytest.param(None, date(2024, 3, 9), 18, True, id="GEN-01-no-date-given"),
    # Born after the game: certainly not of age then.
    pytest.param(date(2025, 1, 1), date(2024, 3, 9), 0, False, id="GEN-01-born-after-game"),
]


@pytest.mark.parametrize(("born", "day", "minimum", "adult"), ADULTS)
def test_adult_on(born: date | None, day: date, minimum: int, adult: bool) -> None:
    assert adult_on(born, day, minimum_player_age=minimum) is adult


def test_adult_on_defaults_to_the_texts_18() -> None:
    assert HouseRules().minimum_player_age == 18
    assert rules.settings_for(adult_on, HouseRules()) == {"minimum_player_age": 18}
    assert adult_on(date(2006, 3, 9), date(2024, 3, 9)) is True
    assert adult_on(date(2006, 3, 10), date(2024, 3, 9)) is False


def test_minimum_age_setting_bounds() -> None:
    assert house_rules_from({"minimum_player_age": 21}).minimum_player_age == 21
    with pytest.raises(ValueError, match="at most 99"):
        house_rules_from({"minimum_player_age": 100})
    with pytest.raises(ValueError, match="at least 0"):
        house_rules_from({"minimum_player_age": -1})
    field = rules.HOUSE_RULE_FIELDS["minimum_player_age"]
    assert field.metadata["rule"] == "GEN-01"


BIRTH_DATES = [
    pytest.param(date(1990, 5, 17), True, id="GEN-01-birth-date-ordinary"),
    pytest.param(date(1900, 1, 1), True, id="GEN-01-birth-date-1900"),
    pytest.param(date(2024, 3, 9), True, id="GEN-01-birth-date-today"),
    pytest.param(date(1899, 12, 31), False, id="GEN-01-birth-date-before-1900"),
    pytest.param(date(2024, 3, 10), False, id="GEN-01-birth-date-tomorrow"),
]


@pytest.mark.parametrize(("born", "ok"), BIRTH_DATES)
def test_birth_date_checked(born: date, ok: bool) -> None:
    today = date(2024, 3, 9)
    if ok:
        assert birth_date_checked(born, today=today) == born
    else:
        with pytest.raises(ValueError, match="date of birth"):
            birth_date_checked(born, today=today)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda: age_on(date(2024, 3, 10), date(2024, 3, 9)), id="GEN-01-day-first"),
        pytest.param(
            lambda: age_on("2006-03-09", date(2024, 3, 9)),  # type: ignore[arg-type]
            id="GEN-01-text-date",
        ),
        pytest.param(lambda: age_on(datetime(2006, 3, 9), date(2024, 3, 9)), id="GEN-01-datetime"),
        pytest.param(
            lambda: adult_on(date(2006, 3, 9), date(2024, 3, 9), minimum_player_age=-1),
            id="GEN-01-negative-minimum",
        ),
        pytest.param(
            lambda: adult_on(date(2006, 3, 9), date(2024, 3, 9), minimum_player_age=True),
            id="GEN-01-bool-minimum",
        ),
    ],
)
def test_illegal_input_is_refused(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]
