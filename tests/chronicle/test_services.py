"""The chronicle app's services against the real database."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
import time_machine
from django.core.exceptions import ValidationError

from chronicle import services
from chronicle.models import Attendance, Cycle, CycleStatus, CycleTransition, Role
from chronicle.services import SignIn
from tests.conftest import World

NY = zoneinfo.ZoneInfo("America/New_York")
BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")
GAME_NIGHT = dt.datetime(2024, 3, 9, 21, 0, tzinfo=NY)
# Before any game has been played nothing is in force, so a setting changes at once (GEN-05;
# publishing for a later game is tested in test_rule_changes.py).
BEFORE_ANY_GAME = dt.datetime(2024, 2, 1, 12, 0, tzinfo=NY)


def test_game_create_opens_a_cycle_with_the_dt01_deadline(world: World) -> None:
    cycle = world.game.cycle
    assert world.game.number == 1
    assert cycle.status == CycleStatus.OPEN
    # DT-01: game Sat 2024-03-09 -> Tue 2024-03-19 23:59, in the chronicle's time zone.
    assert cycle.deadline_at == dt.datetime(2024, 3, 19, 23, 59, tzinfo=NY)
    assert cycle.deadline_local.tzinfo == NY


def test_deadline_follows_each_chronicles_time_zone(world: World) -> None:
    assert world.other_game.cycle.deadline_at == dt.datetime(2024, 3, 19, 23, 59, tzinfo=BERLIN)


@time_machine.travel(BEFORE_ANY_GAME, tick=False)
def test_deadline_uses_the_chronicles_weeks_setting(world: World) -> None:
    services.chronicle_house_rules_update(
        chronicle=world.chronicle, overrides={"deadline_weeks_after_game": 1}
    )
    world.chronicle.refresh_from_db()
    game = services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    assert game.cycle.deadline_at == dt.datetime(2024, 4, 9, 23, 59, tzinfo=NY)


@time_machine.travel(BEFORE_ANY_GAME, tick=False)
def test_changing_the_deadline_setting_moves_open_deadlines_only(world: World) -> None:
    closed = services.game_create(chronicle=world.chronicle, date=dt.date(2024, 2, 10))
    services.cycle_close(cycle=closed.cycle, by=None, now=GAME_NIGHT)
    services.chronicle_house_rules_update(
        chronicle=world.chronicle, overrides={"deadline_weeks_after_game": 3}
    )
    world.game.cycle.refresh_from_db()
    closed.cycle.refresh_from_db()
    assert world.game.cycle.deadline_at == dt.datetime(2024, 3, 26, 23, 59, tzinfo=NY)
    assert closed.cycle.deadline_at == dt.datetime(2024, 2, 20, 23, 59, tzinfo=NY)


def test_game_numbers_follow_on_and_refuse_duplicates(world: World) -> None:
    second = services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    assert second.number == 2
    with pytest.raises(ValidationError) as error:
        services.game_create(chronicle=world.chronicle, date=dt.date(2024, 5, 4), number=2)
    assert "already a game 2" in str(error.value.message_dict["number"])
    # Another chronicle numbers its own games.
    assert world.other_game.number == 1


def test_game_update_moves_an_open_cycles_deadline(world: World) -> None:
    services.game_update(game=world.game, date=dt.date(2024, 3, 12), place="Crypt")
    world.game.refresh_from_db()
    assert world.game.place == "Crypt"
    assert world.game.cycle.deadline_at == dt.datetime(2024, 3, 26, 23, 59, tzinfo=NY)


def test_game_date_is_fixed_once_its_downtime_closed(world: World) -> None:
    services.cycle_close(cycle=world.game.cycle, by=world.users["storyteller"], now=GAME_NIGHT)
    with pytest.raises(ValidationError) as error:
        services.game_update(game=world.game, date=dt.date(2024, 3, 16))
    assert "already closed" in str(error.value.message_dict["date"])
    # Other details may still be corrected.
    services.game_update(game=world.game, notes="typo fixed")
    world.game.refresh_from_db()
    assert world.game.notes == "typo fixed"
    assert world.game.date == dt.date(2024, 3, 9)


def _ids(world: World, *names: str) -> list[int]:
    return [world.users[name].pk for name in names]


def test_attendance_record_writes_the_sheet(world: World) -> None:
    alice, bob = _ids(world, "player_alice", "player_bob")
    services.attendance_record(
        game=world.game,
        lines=[SignIn(alice, True, True), SignIn(bob, True, False)],
        by=world.users["storyteller"],
        now=GAME_NIGHT,
    )
    sheet = {a.player_id: a for a in Attendance.objects.filter(game=world.game)}
    assert sheet[alice].waiver_signed is True
    assert sheet[bob].waiver_signed is False
    assert sheet[alice].recorded_by == world.users["storyteller"]
    assert sheet[alice].recorded_at == GAME_NIGHT

    # Later: Bob signs after all, Alice is removed (she was signed in by mistake).
    later = GAME_NIGHT + dt.timedelta(hours=1)
    services.attendance_record(
        game=world.game,
        lines=[SignIn(alice, False, False), SignIn(bob, True, True)],
        by=world.users["admin"],
        now=later,
    )
    sheet = {a.player_id: a for a in Attendance.objects.filter(game=world.game)}
    assert list(sheet) == [bob]
    assert sheet[bob].waiver_signed is True
    assert sheet[bob].recorded_by == world.users["admin"]
    assert sheet[bob].recorded_at == later


@pytest.mark.parametrize(
    ("persona", "line", "message"),
    [
        pytest.param("storyteller", (True, True), "Only players", id="GEN-01-staff-not-signed-in"),
        pytest.param("outsider", (True, True), "Only players", id="GEN-01-outsider-refused"),
        pytest.param("player_alice", (False, True), "only be recorded", id="GEN-01-waiver-absent"),
    ],
)
def test_attendance_refuses(
    world: World, persona: str, line: tuple[bool, bool], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        services.attendance_record(
            game=world.game,
            lines=[SignIn(world.users[persona].pk, *line)],
            by=world.users["storyteller"],
            now=GAME_NIGHT,
        )
    assert not Attendance.objects.exists()


def test_attendance_refused_before_game_day_and_after_resolution(world: World) -> None:
    alice = world.users["player_alice"].pk
    day_before = dt.datetime(2024, 3, 8, 23, 0, tzinfo=NY)
    with pytest.raises(ValidationError, match="from that day on"):
        services.attendance_record(
            game=world.game,
            lines=[SignIn(alice, True, True)],
            by=world.users["admin"],
            now=day_before,
        )
    Cycle.objects.filter(pk=world.game.cycle.pk).update(
        status=CycleStatus.RESOLVED, closed_at=GAME_NIGHT
    )
    with pytest.raises(ValidationError, match="already been resolved"):
        services.attendance_record(
            game=world.game,
            lines=[SignIn(alice, True, True)],
            by=world.users["admin"],
            now=GAME_NIGHT,
        )


def test_duplicate_lines_refused(world: World) -> None:
    alice = world.users["player_alice"].pk
    with pytest.raises(ValidationError, match="only once"):
        services.attendance_record(
            game=world.game,
            lines=[SignIn(alice, True, True), SignIn(alice, True, False)],
            by=world.users["admin"],
            now=GAME_NIGHT,
        )


def test_cycles_close_due_closes_only_past_deadlines_once(world: World) -> None:
    ny_cycle, berlin_cycle = world.game.cycle, world.other_game.cycle
    # Berlin's 23:59 comes six hours before New York's: each closes on its own clock.
    assert services.cycles_close_due(now=berlin_cycle.deadline_at - dt.timedelta(seconds=1)) == []
    assert services.cycles_close_due(now=berlin_cycle.deadline_at) == [berlin_cycle.pk]
    assert services.cycles_close_due(now=ny_cycle.deadline_at - dt.timedelta(seconds=1)) == []
    assert services.cycles_close_due(now=ny_cycle.deadline_at) == [ny_cycle.pk]
    # Run again: nothing left to close, no second transition.
    assert services.cycles_close_due(now=ny_cycle.deadline_at + dt.timedelta(minutes=1)) == []
    cycle = Cycle.objects.get(pk=ny_cycle.pk)
    assert cycle.status == CycleStatus.CLOSED
    assert cycle.closed_at == ny_cycle.deadline_at
    assert CycleTransition.objects.filter(status=CycleStatus.CLOSED).count() == 2


def test_st_closes_early_once(world: World) -> None:
    storyteller = world.users["storyteller"]
    assert services.cycle_close(cycle=world.game.cycle, by=storyteller, now=GAME_NIGHT) is True
    assert services.cycle_close(cycle=world.game.cycle, by=storyteller, now=GAME_NIGHT) is False
    transition = CycleTransition.objects.get(cycle=world.game.cycle)
    assert transition.by == storyteller
    assert services.cycles_close_due(now=world.game.cycle.deadline_at) == [
        world.other_game.cycle.pk
    ]


def test_membership_add_refuses_unknown_role(world: World) -> None:
    with pytest.raises(ValidationError):
        services.membership_add(
            chronicle=world.chronicle, user=world.users["outsider"], role="prince"
        )
    services.membership_add(
        chronicle=world.chronicle, user=world.users["outsider"], role=Role.PLAYER
    )
    assert world.users["outsider"].memberships.get().role == Role.PLAYER


@time_machine.travel(BEFORE_ANY_GAME, tick=False)
def test_house_rules_update_refuses_bad_values(world: World) -> None:
    with pytest.raises(ValidationError, match="whole number"):
        services.chronicle_house_rules_update(
            chronicle=world.chronicle, overrides={"willpower_cost": "lots"}
        )
    world.chronicle.refresh_from_db()
    assert world.chronicle.house_rule_overrides == {}


def test_current_downtime_is_the_open_cycle_of_the_latest_game_played(world: World) -> None:
    """DT-01: a game scheduled ahead already has its cycle, but players do not act in it
    before that game; a closed cycle is nobody's downtime, and once game 2 is played game 1's
    downtime never comes back, even when game 2's was closed first (issue 12)."""
    first = world.game  # 2024-03-09 in New York
    second = services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    new_york = zoneinfo.ZoneInfo("America/New_York")
    # 22:00 on the eve in New York is already game day in UTC: the chronicle's day counts.
    eve = dt.datetime(2024, 4, 5, 22, 0, tzinfo=new_york)
    assert services.current_downtime(world.chronicle, now=eve) == first.cycle
    game_day = dt.datetime(2024, 4, 6, 12, 0, tzinfo=new_york)
    assert services.current_downtime(world.chronicle.pk, now=game_day) == second.cycle
    services.cycle_close(cycle=second.cycle, by=world.users["storyteller"], now=game_day)
    assert services.current_downtime(world.chronicle, now=game_day) is None
    # The pages still show game 2's downtime, closed.
    shown = services.current_downtime(world.chronicle, now=game_day, open_only=False)
    assert shown == second.cycle and first.cycle.status == "open"
    assert services.current_downtime(world.chronicle, now=eve, open_only=False) == first.cycle
