"""GEN-05: rule changes take effect a game later (issue 14).

The world's game 1 is Saturday 9 March 2024 (New York); its downtime is open until Tuesday 19
March 23:59. On 15 March game 1 has been played and game 2 (6 April) is the next game, so a
change published then takes effect from game 3 (4 May) at the earliest.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chronicle import services
from chronicle.models import Chronicle, Game, HouseRuleChange
from chronicle.services.settings import (
    chronicle_house_rule_reset,
    house_rule_correct_now,
    house_rules_publish,
    publication_for,
)
from downtimes.models import Outcome
from downtimes.services import pipeline
from tests.conftest import World
from tests.pipeline.conftest import AFTER_DEADLINE, Month, month  # noqa: F401

NY = zoneinfo.ZoneInfo("America/New_York")
DURING = dt.datetime(2024, 3, 15, 12, 0, tzinfo=NY)  # game 1 played, game 2 next
BEFORE_ANY_GAME = dt.datetime(2024, 3, 1, 12, 0, tzinfo=NY)
URL = "/c/nightfall/settings/"
RESET = "/c/nightfall/settings/reset/"


def deadline(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(23, 59), tzinfo=NY)


def schedule_games(world: World, *dates: dt.date) -> list[Game]:
    return [services.game_create(chronicle=world.chronicle, date=d) for d in dates]


def fresh(world: World) -> Chronicle:
    return Chronicle.objects.get(pk=world.chronicle.pk)


@pytest.fixture
def ahead(world: World) -> list[Game]:
    """Games 2 (6 April) and 3 (4 May), scheduled ahead."""
    return schedule_games(world, dt.date(2024, 4, 6), dt.date(2024, 5, 4))


# --- The reproduction --------------------------------------------------------------------


def test_gen05_deadline_change_leaves_the_open_cycle_and_moves_game_gs(
    world: World, ahead: list[Game]
) -> None:
    """GEN-05 reproduction: changing deadline_weeks_after_game no longer moves the open
    cycle's deadline; it is published for game 3, whose cycle (already created) moves."""
    game2, game3 = ahead
    house_rules_publish(
        chronicle=world.chronicle,
        changes={"deadline_weeks_after_game": 3},
        effective_game=3,
        by=world.users["admin"],
        now=DURING,
    )
    open_cycle, cycle2, cycle3 = (g.cycle for g in (world.game, game2, game3))
    for cycle in (open_cycle, cycle2, cycle3):
        cycle.refresh_from_db()
    # Game 1 (9 March, open): still the second Tuesday after it.
    assert open_cycle.deadline_at == deadline(dt.date(2024, 3, 19))
    # Game 2 (6 April): the next game keeps the rules it was announced with.
    assert cycle2.deadline_at == deadline(dt.date(2024, 4, 16))
    # Game 3 (Saturday 4 May): the third Tuesday after it, 21 May.
    assert cycle3.deadline_at == deadline(dt.date(2024, 5, 21))
    # A game created later takes the new setting too.
    game4 = services.game_create(chronicle=world.chronicle, date=dt.date(2024, 6, 1))
    assert game4.cycle.deadline_at == deadline(dt.date(2024, 6, 18))
    chronicle = fresh(world)
    assert chronicle.house_rule_overrides == {}
    assert chronicle.house_rule_schedule == [
        {
            "name": "deadline_weeks_after_game",
            "value": 3,
            "default": False,
            "effective_game": 3,
            "effective_on": "2024-05-04",
        }
    ]
    record = HouseRuleChange.objects.get(chronicle=world.chronicle)
    assert (record.published_game, record.effective_game, record.by) == (
        2,
        3,
        world.users["admin"],
    )


@pytest.mark.parametrize(
    ("effective_game", "accepted", "message"),
    [
        pytest.param(None, False, "Choose the game", id="GEN-05-no-game-refused"),
        pytest.param(1, False, "from game 3 at the earliest", id="GEN-05-played-game-refused"),
        pytest.param(2, False, "from game 3 at the earliest", id="GEN-05-next-game-refused"),
        pytest.param(3, True, "", id="GEN-05-game-after-the-next-accepted"),
        pytest.param(7, False, "Game 7 is not scheduled yet", id="GEN-05-unscheduled-refused"),
    ],
)
def test_gen05_effective_game_must_come_after_the_next_game(
    world: World, ahead: list[Game], effective_game: int | None, accepted: bool, message: str
) -> None:
    def publish() -> Any:
        return house_rules_publish(
            chronicle=world.chronicle,
            changes={"willpower_cost": 4},
            effective_game=effective_game,
            now=DURING,
        )

    if accepted:
        assert len(publish()) == 1
        assert fresh(world).house_rules_for(effective_game).willpower_cost == 4
        return
    with pytest.raises(ValidationError) as refused:
        publish()
    text = " ".join(refused.value.message_dict["effective_game"])
    assert message in text and "(GEN-05)" in text
    assert fresh(world).house_rule_schedule == []
    assert not HouseRuleChange.objects.exists()


def test_the_settings_in_force_depend_on_the_game(world: World, ahead: list[Game]) -> None:
    house_rules_publish(
        chronicle=world.chronicle,
        changes={"willpower_cost": 4, "herd_yield": 2},
        effective_game=3,
        now=DURING,
    )
    chronicle = fresh(world)
    assert chronicle.house_rules_for(world.game).willpower_cost == 3
    assert chronicle.house_rules_for(ahead[0].cycle).willpower_cost == 3
    assert chronicle.house_rules_for(ahead[1]).willpower_cost == 4
    assert chronicle.house_rules_for(4).herd_yield == 2
    # Today (real clock or travelled) decides `house_rules`: after game 3's day it is in force.
    with time_machine.travel(DURING, tick=False):
        assert chronicle.house_rules.willpower_cost == 3
    with time_machine.travel(dt.datetime(2024, 5, 4, 20, 0, tzinfo=NY), tick=False):
        assert chronicle.house_rules.willpower_cost == 4


def test_a_setting_already_so_for_that_game_is_not_published(
    world: World, ahead: list[Game]
) -> None:
    assert (
        house_rules_publish(
            chronicle=world.chronicle, changes={"willpower_cost": 3}, effective_game=3, now=DURING
        )
        == []
    )
    with pytest.raises(ValidationError) as refused:
        house_rules_publish(
            chronicle=world.chronicle, changes={"willpower_cost": -1}, effective_game=3, now=DURING
        )
    assert "willpower_cost" in refused.value.message_dict


def test_moving_game_g_moves_the_day_its_change_takes_effect(
    world: World, ahead: list[Game]
) -> None:
    house_rules_publish(
        chronicle=world.chronicle,
        changes={"deadline_weeks_after_game": 1},
        effective_game=3,
        now=DURING,
    )
    game3 = services.game_update(game=ahead[1], date=dt.date(2024, 5, 11))
    assert fresh(world).house_rule_schedule[0]["effective_on"] == "2024-05-11"
    assert game3.cycle.deadline_at == deadline(dt.date(2024, 5, 14))


def test_before_the_first_game_a_change_applies_at_once(world: World) -> None:
    records = house_rules_publish(
        chronicle=world.chronicle,
        changes={"deadline_weeks_after_game": 3},
        effective_game=None,
        now=BEFORE_ANY_GAME,
    )
    assert [(r.published_game, r.effective_game) for r in records] == [(None, None)]
    chronicle = fresh(world)
    assert chronicle.house_rule_overrides == {"deadline_weeks_after_game": 3}
    assert chronicle.house_rule_schedule == []
    world.game.cycle.refresh_from_db()
    assert world.game.cycle.deadline_at == deadline(dt.date(2024, 3, 26))
    assert not publication_for(chronicle, now=BEFORE_ANY_GAME).played


# --- Reset and correction ------------------------------------------------------------------------


def test_reset_to_default_is_published_like_a_change(world: World, ahead: list[Game]) -> None:
    Chronicle.objects.filter(pk=world.chronicle.pk).update(
        house_rule_overrides={"willpower_cost": 4}
    )
    world.chronicle.refresh_from_db()
    with pytest.raises(ValidationError, match="GEN-05"):
        chronicle_house_rule_reset(
            chronicle=world.chronicle, name="willpower_cost", effective_game=2, now=DURING
        )
    assert chronicle_house_rule_reset(
        chronicle=world.chronicle, name="willpower_cost", effective_game=3, now=DURING
    )
    chronicle = fresh(world)
    assert chronicle.house_rules_for(2).willpower_cost == 4
    assert chronicle.house_rules_for(3).willpower_cost == 3
    assert HouseRuleChange.objects.get().to_default
    # Already the default from game 3: nothing more to publish.
    assert not chronicle_house_rule_reset(
        chronicle=world.chronicle, name="willpower_cost", effective_game=3, now=DURING
    )


def test_gen03_correction_now_applies_at_once_and_is_recorded(
    world: World, ahead: list[Game]
) -> None:
    with pytest.raises(ValidationError) as refused:
        house_rule_correct_now(
            chronicle=world.chronicle,
            overrides={"deadline_weeks_after_game": 3},
            by=world.users["admin"],
            reason="  ",
            now=DURING,
        )
    assert "reason" in refused.value.message_dict
    house_rule_correct_now(
        chronicle=world.chronicle,
        overrides={"deadline_weeks_after_game": 3},
        by=world.users["admin"],
        reason="GEN-03 decision 12",
        now=DURING,
    )
    record = HouseRuleChange.objects.get()
    assert (record.reason, record.published_game, record.effective_game) == (
        "GEN-03 decision 12",
        None,
        1,
    )
    # The open cycle of game 1 takes it at once: the third Tuesday after 9 March.
    world.game.cycle.refresh_from_db()
    assert world.game.cycle.deadline_at == deadline(dt.date(2024, 3, 26))
    with time_machine.travel(DURING, tick=False):
        assert fresh(world).house_rules.deadline_weeks_after_game == 3


# --- The pipeline reads the settings of its cycle's game ----------------------------------------


def test_pipeline_of_a_cycle_before_g_uses_the_old_value(month: Month) -> None:  # noqa: F811
    world = month.world
    schedule_games(world, dt.date(2024, 4, 6), dt.date(2024, 5, 4))
    house_rules_publish(
        chronicle=world.chronicle,
        changes={"no_downtime_xp": Decimal("1"), "submitted_downtime_xp": Decimal("1")},
        effective_game=3,
        now=DURING,
    )
    st = world.users["storyteller"]
    services.cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    alice, bob = (world.users[n] for n in ("player_alice", "player_bob"))
    rows = {(o.step, o.subject): o for o in Outcome.objects.filter(cycle=month.cycle)}
    assert rows["awards", f"base:{alice.pk}"].xp == Decimal("2.5")
    assert rows["no_downtime", f"base:{bob.pk}"].xp == Decimal("2.5")
    # A correction "now" (GEN-03) reaches the cycle being resolved.
    house_rule_correct_now(
        chronicle=world.chronicle,
        overrides={"no_downtime_xp": Decimal("1.5")},
        by=world.users["admin"],
        reason="GEN-03 decision 4",
        now=AFTER_DEADLINE,
    )
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    base = Outcome.objects.get(cycle=month.cycle, step="no_downtime", subject=f"base:{bob.pk}")
    assert base.xp == Decimal("1.5")


# --- What members see ----------------------------------------------------------------------------


def _publish_willpower(world: World) -> None:
    house_rules_publish(
        chronicle=world.chronicle,
        changes={"willpower_cost": 4},
        effective_game=3,
        by=world.users["admin"],
        now=DURING,
    )


@pytest.mark.parametrize("persona", ["player_alice", "storyteller", "admin"])
def test_members_see_upcoming_changes_on_the_settings_page_and_dashboard(
    world: World, ahead: list[Game], persona: str
) -> None:
    _publish_willpower(world)
    client = world.client(persona)
    with time_machine.travel(DURING, tick=False):
        settings_page = client.get(URL)
        dashboard = client.get("/c/nightfall/")
    assert settings_page.status_code == 200 and dashboard.status_code == 200
    for html in (settings_page.content.decode(), dashboard.content.decode()):
        assert "Upcoming rule changes" in html
        row = html.split('data-setting="willpower_cost"')[1].split("</tr>")[0]
        assert "Cost of one willpower" in row and "game 3" in row
        assert "<td>3</td>" in row and "<strong>4</strong>" in row


def test_the_dashboard_reads_the_schedule_without_a_query(world: World, ahead: list[Game]) -> None:
    client = world.client("player_alice")
    with time_machine.travel(DURING, tick=False):
        client.get("/c/nightfall/")  # warm the session and caches
        with CaptureQueriesContext(connection) as before:
            assert "Upcoming rule changes" not in client.get("/c/nightfall/").content.decode()
        _publish_willpower(world)
        with CaptureQueriesContext(connection) as after:
            assert "Upcoming rule changes" in client.get("/c/nightfall/").content.decode()
    assert len(after) == len(before)


def test_the_page_asks_for_a_game_after_the_next(world: World, ahead: list[Game]) -> None:
    client = world.client("admin")
    with time_machine.travel(DURING, tick=False):
        page = client.get(URL)
        form = page.context["form"]
        assert [c[0] for c in form.fields["effective_game"].choices] == [3]
        data = {k: v for k, v in form.initial.items() if v is not False and v is not None}
        data.update(
            {
                n: f.initial
                for n, f in form.fields.items()
                if f.initial is not False and f.initial is not None
            }
        )
        data |= {"willpower_cost": "5", "effective_game": "2"}
        refused = client.post(URL, data)
        assert refused.status_code == 400
        assert "Select a valid choice" in refused.content.decode()
        data["effective_game"] = "3"
        published = client.post(URL, data, follow=True)
        assert "take effect from game 3" in published.content.decode()
        reset = client.post(
            RESET, {"setting": "willpower_cost", "effective_game": "3"}, follow=True
        )
    assert "goes back to its default from game 3" in reset.content.decode()
    chronicle = fresh(world)
    assert chronicle.house_rules_for(2).willpower_cost == 3
    assert chronicle.house_rules_for(3).willpower_cost == 3
    assert [c["value"] for c in chronicle.house_rule_schedule] == [5, None]


def test_without_a_game_after_the_next_the_page_says_schedule_it_first(world: World) -> None:
    services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    with time_machine.travel(DURING, tick=False):
        html = world.client("admin").get(URL).content.decode()
    assert 'id="schedule-first"' in html and "schedule game 3 first" in html
    assert "Publish the changes" not in html


def test_before_the_first_game_the_page_says_changes_apply_at_once(world: World) -> None:
    with time_machine.travel(BEFORE_ANY_GAME, tick=False):
        html = world.client("admin").get(URL).content.decode()
    assert "a change applies at once" in html and "Save house rules" in html
    assert 'name="effective_game"' not in html
