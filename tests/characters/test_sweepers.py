"""The periodic sweepers (BLD-03, TOR-01, TOR-02, XP-04) on the real database.

Each sweeper: due rows handled, rows not yet due untouched, a second run changes nothing and
sends no second e-mail, "today" is the chronicle's own date (Nightfall is in New York, Other
City in Berlin), and a sweep costs the same queries for 1 or 50 due rows apart from the
notification inserts.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from characters.models import (
    Bond,
    CaptiveOutcome,
    Captivity,
    Character,
    Diablerie,
    DonorType,
    Notification,
    Status,
    StoredBlood,
    TorporHold,
    XpEntry,
    XpKind,
)
from characters.services import bonds, ledger, records, sweepers
from chronicle import services as chronicle_services
from tests.conftest import World

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

UTC = dt.UTC
Sweep = Callable[..., int]


@pytest.fixture
def run(django_capture_on_commit_callbacks: Any) -> Callable[[Sweep, dt.datetime], int]:
    """Run a sweeper with the clock frozen at `at` (the sweeper reads the clock itself) and the
    on-commit e-mails delivered, as they would be after the sweep's transaction commits."""

    def call(sweep: Sweep, at: dt.datetime) -> int:
        with (
            time_machine.travel(at, tick=False),
            django_capture_on_commit_callbacks(execute=True),
        ):
            return sweep()

    return call


# The per-row notification work: the keyed Notification, and the mail service's inbox message,
# the player's choice for the kind, and the mail log row that the mail task claims and marks.
NOTIFICATION_TABLES = (
    "characters_notification",
    "chronicle_message",
    "chronicle_mailpreference",
    "chronicle_maillog",
)


def sweep_sql(sql: str) -> bool:
    """The sweep's own SQL: not the per-row notification work, nor the savepoints."""
    return "SAVEPOINT" not in sql and not any(table in sql for table in NOTIFICATION_TABLES)


@contextmanager
def counted() -> Iterator[list[str]]:
    """The SQL of a sweep, without the per-row notification work (its savepoints, the keyed
    insert, the mail service's rows) and the transaction's own savepoints."""
    sql: list[str] = []
    with CaptureQueriesContext(connection) as queries:
        yield sql
    sql.extend(q["sql"] for q in queries.captured_queries if sweep_sql(q["sql"]))


def _bulk_characters(world: World, count: int, prefix: str) -> list[Character]:
    return Character.objects.bulk_create(
        Character(
            chronicle=world.chronicle,
            player=world.users["player_bob"],
            name=f"{prefix} {i}",
            status=Status.TORPOR,
        )
        for i in range(count)
    )


# --- BLD-03: stored kine blood -----------------------------------------------------------------


def _blood(holder: Character, unusable_from: dt.date | None, **extra: Any) -> StoredBlood:
    fields: dict[str, Any] = {
        "holder": holder,
        "location": "the haven's fridge",
        "points": 3,
        "donor_type": DonorType.KINE if unusable_from else DonorType.KINDRED,
        "collected_on": dt.date(2024, 1, 15),
        "unusable_from": unusable_from,
    }
    return StoredBlood.objects.create(**(fields | extra))


# BLD-03's worked example: collected 2024-01-15 → unusable from 2024-04-15. In New York (EDT,
# UTC−4) that day starts at 04:00 UTC.
NY_APRIL_14_LATE = dt.datetime(2024, 4, 15, 3, 30, tzinfo=UTC)  # 23:30 on the 14th in New York
NY_APRIL_15_EARLY = dt.datetime(2024, 4, 15, 4, 30, tzinfo=UTC)  # 00:30 on the 15th


def test_blood_expires_on_its_day_in_the_chronicles_time_zone(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    lucien = make_character("Lucien")
    due = _blood(lucien, dt.date(2024, 4, 15))
    tomorrow = _blood(lucien, dt.date(2024, 4, 16))
    kindred = _blood(lucien, None)  # single-kindred blood never expires (BLD-03)

    assert run(sweepers.stored_blood_expire_sweep, NY_APRIL_14_LATE) == 0
    assert StoredBlood.objects.filter(expired_at__isnull=False).count() == 0

    assert run(sweepers.stored_blood_expire_sweep, NY_APRIL_15_EARLY) == 1
    due.refresh_from_db()
    tomorrow.refresh_from_db()
    kindred.refresh_from_db()
    assert due.expired_at == NY_APRIL_15_EARLY
    assert tomorrow.expired_at is None
    assert kindred.expired_at is None
    [message] = mail.outbox
    assert message.to == ["player_alice@example.com"]
    assert "BLD-03" in message.body and "Lucien" in message.subject


def test_blood_sweep_twice_expires_once_and_mails_once(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    due = _blood(make_character("Lucien"), dt.date(2024, 4, 15))
    assert run(sweepers.stored_blood_expire_sweep, NY_APRIL_15_EARLY) == 1
    later = NY_APRIL_15_EARLY + dt.timedelta(hours=1)
    assert run(sweepers.stored_blood_expire_sweep, later) == 0
    due.refresh_from_db()
    assert due.expired_at == NY_APRIL_15_EARLY  # the second run did not move it
    assert len(mail.outbox) == 1
    assert Notification.objects.filter(key=f"blood-expired:{due.pk}").count() == 1


def test_blood_sweep_uses_each_chronicles_own_date(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    berlin = make_character("Greta", player=None, chronicle=world.other)
    new_york = make_character("Lucien")
    in_berlin = _blood(berlin, dt.date(2024, 4, 15))
    in_new_york = _blood(new_york, dt.date(2024, 4, 15))
    # 22:30 UTC on the 14th: already the 15th in Berlin (CEST, UTC+2), still the 14th in NY.
    berlin_15th_early = dt.datetime(2024, 4, 14, 22, 30, tzinfo=UTC)
    assert run(sweepers.stored_blood_expire_sweep, berlin_15th_early) == 1
    in_berlin.refresh_from_db()
    in_new_york.refresh_from_db()
    assert in_berlin.expired_at is not None
    assert in_new_york.expired_at is None
    assert mail.outbox == []  # an NPC has no player to tell


@pytest.mark.parametrize("rows", [1, 50])
def test_blood_sweep_is_set_based(
    world: World, make_character: Callable[..., Character], run: Any, rows: int
) -> None:
    lucien = make_character("Lucien")
    for _ in range(rows):
        _blood(lucien, dt.date(2024, 4, 15))
    with counted() as sql:
        assert run(sweepers.stored_blood_expire_sweep, NY_APRIL_15_EARLY) == rows
    # 1. the chronicles' time zones, 2. the due records locked (holder and player joined),
    # 3. the conditional UPDATE
    assert len(sql) == 3, sql
    assert len(mail.outbox) == rows


# --- TOR-01: torpor holds ----------------------------------------------------------------------


def _hold(world: World, holder: Character, captive: Character, cycle: Any = None) -> TorporHold:
    return TorporHold.objects.create(
        holder=holder,
        captive=captive,
        cycle=cycle or world.game.cycle,
        recorded_by=world.users["storyteller"],
        recorded_at=dt.datetime(2024, 3, 10, tzinfo=UTC),
    )


def test_hold_ends_after_its_downtime_and_the_captive_recovers(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    holder = make_character("Vlad")
    captive = make_character("Mina", player="player_bob", status=Status.TORPOR)
    hold = _hold(world, holder, captive)
    deadline = world.game.cycle.deadline_at

    assert run(sweepers.torpor_holds_sweep, deadline - dt.timedelta(minutes=1)) == 0
    hold.refresh_from_db()
    assert hold.ended_at is None

    after = deadline + dt.timedelta(minutes=1)
    assert run(sweepers.torpor_holds_sweep, after) == 1
    assert run(sweepers.torpor_holds_sweep, after + dt.timedelta(hours=1)) == 0
    hold.refresh_from_db()
    captive.refresh_from_db()
    assert hold.ended_at == after
    assert captive.status == Status.ACTIVE
    [message] = mail.outbox
    assert message.to == ["player_bob@example.com"]
    assert "TOR-01" in message.body and "recovers overnight" in message.body


def test_hold_ends_when_the_cycle_closes_before_its_deadline(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    captive = make_character("Mina", player="player_bob", status=Status.TORPOR)
    hold = _hold(world, make_character("Vlad"), captive)
    before_deadline = world.game.cycle.deadline_at - dt.timedelta(days=2)
    chronicle_services.cycle_close(cycle=world.game.cycle, by=None, now=before_deadline)
    assert run(sweepers.torpor_holds_sweep, before_deadline + dt.timedelta(hours=1)) == 1
    hold.refresh_from_db()
    assert hold.ended_at is not None


def test_captive_kept_by_another_hold_or_a_captivity_stays_in_torpor(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    holder = make_character("Vlad")
    held_twice = make_character("Mina", player="player_bob", status=Status.TORPOR)
    captive = make_character("Lucy", player=None, status=Status.TORPOR)
    next_game = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 3, 23))
    _hold(world, holder, held_twice)
    _hold(world, holder, held_twice, cycle=next_game.cycle)  # still open after the first
    _hold(world, holder, captive)
    Captivity.objects.create(
        captive=captive,
        captor=holder,
        since=dt.date(2024, 3, 9),
        deadline_game=next_game,
        recorded_by=world.users["storyteller"],
    )
    after = world.game.cycle.deadline_at + dt.timedelta(hours=1)
    assert run(sweepers.torpor_holds_sweep, after) == 2
    held_twice.refresh_from_db()
    captive.refresh_from_db()
    assert held_twice.status == Status.TORPOR
    assert captive.status == Status.TORPOR
    [message] = mail.outbox  # Lucy is an NPC: only Mina's player hears of it
    assert "stays in torpor" in message.body


@pytest.mark.parametrize("rows", [1, 50])
def test_torpor_sweep_is_set_based(
    world: World, make_character: Callable[..., Character], run: Any, rows: int
) -> None:
    holder = make_character("Vlad")
    for captive in _bulk_characters(world, rows, "Captive"):
        _hold(world, holder, captive)
    with counted() as sql:
        ended = run(sweepers.torpor_holds_sweep, world.game.cycle.deadline_at + dt.timedelta(1))
    assert ended == rows
    # 1. the due holds locked, 2. the holds' UPDATE, 3. the captives free to wake, each with
    # whether their player already has another active PC (XP-07), 4. the recovered captives'
    # UPDATE, 5. the ended holds with captive, player and holder, for the e-mails
    assert len(sql) == 5, sql
    recovered = Character.objects.filter(status=Status.ACTIVE, name__startswith="Captive")
    assert recovered.count() == rows
    assert len(mail.outbox) == rows


def test_a_recorded_hold_ends_with_the_captive_recovering(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    """In normal use: the hold service puts the captive in torpor, the sweep wakes them."""
    captive = make_character("Mina", player="player_bob")
    records.torpor_hold_record(
        holder=make_character("Vlad", player=None),
        captive=captive,
        cycle=world.game.cycle,
        by=world.users["storyteller"],
        now=dt.datetime(2024, 3, 5, 18, tzinfo=UTC),
    )
    captive.refresh_from_db()
    assert captive.status == Status.TORPOR
    assert run(sweepers.torpor_holds_sweep, world.game.cycle.deadline_at + dt.timedelta(1)) == 1
    captive.refresh_from_db()
    assert captive.status == Status.ACTIVE


def test_a_captive_whose_player_has_another_active_pc_stays_in_torpor(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    """The reviewer's case: Rose is held in torpor, then Alice gets Lily active (data from
    before XP-07 counted PCs in torpor). Waking Rose would break `one_active_pc_per_player` and
    fail the whole sweep every hour; instead Rose stays in torpor, an ST decides, and the other
    captives wake."""
    holder = make_character("Vlad", player=None)
    rose = make_character("Rose")
    mina = make_character("Mina", player="player_bob")
    for captive in (rose, mina):
        records.torpor_hold_record(
            holder=holder,
            captive=captive,
            cycle=world.game.cycle,
            by=world.users["storyteller"],
            now=dt.datetime(2024, 3, 5, 18, tzinfo=UTC),
        )
    lily = make_character("Lily")  # active while Rose is in torpor

    after = world.game.cycle.deadline_at + dt.timedelta(hours=1)
    assert run(sweepers.torpor_holds_sweep, after) == 2
    assert run(sweepers.torpor_holds_sweep, after + dt.timedelta(hours=1)) == 0
    statuses = dict(Character.objects.values_list("name", "status"))
    assert (statuses["Rose"], statuses["Lily"], statuses["Mina"]) == (
        Status.TORPOR,
        Status.ACTIVE,
        Status.ACTIVE,
    )
    assert TorporHold.objects.filter(ended_at__isnull=True).count() == 0
    [to_alice] = [m for m in mail.outbox if m.to == ["player_alice@example.com"]]
    assert "Rose stays in torpor" in to_alice.body
    assert "storyteller must decide" in to_alice.body and "(XP-07)" in to_alice.body
    [to_bob] = [m for m in mail.outbox if m.to == ["player_bob@example.com"]]
    assert "Mina recovers overnight" in to_bob.body
    assert lily.pk  # Lily was left alone


def test_two_of_one_players_pcs_waking_together_wake_one(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    """Two of Bob's approved PCs in torpor, no active one: waking both would break XP-07 (and
    the sweep); the first wakes, the second waits for an ST."""
    holder = make_character("Vlad", player=None)
    first = make_character("Mina", player="player_bob", status=Status.TORPOR)
    second = make_character("Lucy", player="player_bob", status=Status.TORPOR)
    holds = {c.pk: _hold(world, holder, c) for c in (first, second)}
    assert run(sweepers.torpor_holds_sweep, world.game.cycle.deadline_at + dt.timedelta(1)) == 2
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == (Status.ACTIVE, Status.TORPOR)
    body = Notification.objects.get(key=f"torpor-hold-ended:{holds[second.pk].pk}").body
    assert "storyteller must decide" in body


# --- TOR-02: captives --------------------------------------------------------------------------


def _captivity(world: World, captive: Character, captor: Character, game: Any) -> Captivity:
    return Captivity.objects.create(
        captive=captive,
        captor=captor,
        since=dt.date(2024, 3, 2),
        deadline_game=game,
        recorded_by=world.users["storyteller"],
    )


# The deadline game is on 2024-03-09; it has ended once the 10th has begun in New York (EST,
# UTC−5, until the 10th's 02:00 switch to summer time).
NY_MARCH_9_LATE = dt.datetime(2024, 3, 10, 4, 30, tzinfo=UTC)  # 23:30 on the 9th
NY_MARCH_10_EARLY = dt.datetime(2024, 3, 10, 5, 30, tzinfo=UTC)  # 00:30 on the 10th


def test_captive_not_released_by_the_end_of_the_game_dies(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    captor = make_character("Vlad")
    mina = make_character("Mina", player="player_bob", status=Status.STAKED)
    held = _captivity(world, mina, captor, world.game)
    no_game = _captivity(world, make_character("Lucy", player=None), captor, None)

    assert run(sweepers.captives_sweep, NY_MARCH_9_LATE) == 0
    held.refresh_from_db()
    assert held.resolved_at is None

    assert run(sweepers.captives_sweep, NY_MARCH_10_EARLY) == 1
    assert run(sweepers.captives_sweep, NY_MARCH_10_EARLY + dt.timedelta(hours=1)) == 0
    held.refresh_from_db()
    mina.refresh_from_db()
    no_game.refresh_from_db()
    assert (held.outcome, held.resolved_at) == (CaptiveOutcome.DIED, NY_MARCH_10_EARLY)
    assert (mina.status, mina.died_on) == (Status.DEAD, dt.date(2024, 3, 9))
    assert no_game.resolved_at is None
    [message] = mail.outbox
    assert message.to == ["player_bob@example.com"]
    assert "TOR-02" in message.body and "game 1" in message.body


def test_released_captive_is_left_alone(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    mina = make_character("Mina", player="player_bob")
    released = _captivity(world, mina, make_character("Vlad"), world.game)
    Captivity.objects.filter(pk=released.pk).update(
        outcome=CaptiveOutcome.RELEASED, resolved_at=dt.datetime(2024, 3, 9, 22, tzinfo=UTC)
    )
    assert run(sweepers.captives_sweep, NY_MARCH_10_EARLY) == 0
    mina.refresh_from_db()
    assert mina.status == Status.ACTIVE
    assert mail.outbox == []


def test_captive_already_dead_keeps_the_day_it_died(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    mina = make_character(
        "Mina", player="player_bob", status=Status.DEAD, died_on=dt.date(2024, 3, 5)
    )
    _captivity(world, mina, make_character("Vlad"), world.game)
    assert run(sweepers.captives_sweep, NY_MARCH_10_EARLY) == 1
    mina.refresh_from_db()
    assert mina.died_on == dt.date(2024, 3, 5)


@pytest.mark.parametrize("rows", [1, 50])
def test_captives_sweep_is_set_based(
    world: World,
    make_character: Callable[..., Character],
    run: Any,
    rows: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each death goes through `character_death_record` (XP-06 credit, thralls told, BND-03),
    one call per death: deaths are rare and each is its own story. So the statements are split:
    the sweep's own stay constant, and each death costs the death service the same fixed
    number, whatever the number of due rows."""
    captor = make_character("Vlad")
    for captive in _bulk_characters(world, rows, "Captive"):
        _captivity(world, captive, captor, world.game)
    own: list[str] = []
    per_death: list[list[str]] = []
    current = [own]  # where the statement being run belongs
    real = sweepers.character_death_record

    def death_service(**kwargs: Any) -> Character:
        per_death.append([])
        current.append(per_death[-1])
        try:
            return real(**kwargs)
        finally:
            current.pop()

    def spy(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        # As in `counted`: not the per-row notification work or the savepoints.
        if sweep_sql(sql):
            current[-1].append(sql)
        return execute(sql, params, many, context)

    monkeypatch.setattr(sweepers, "character_death_record", death_service)
    with connection.execute_wrapper(spy):
        assert run(sweepers.captives_sweep, NY_MARCH_10_EARLY) == rows
    # 1. the chronicles' time zones, 2. the due captivities locked, 3. their UPDATE,
    # 4. the captivities with captive, chronicle, player, captor and game
    assert len(own) == 4, own
    # Per death: 1. the character locked, 2. its UPDATE, 3. the player's ledger locked,
    # 4. the XP it spent, 5. the player's balance, 6. its bound thralls, 7. the drinkers of its
    # blood (none here, so no bond refresh)
    assert [len(sql) for sql in per_death] == [7] * rows, per_death[0]
    assert Character.objects.filter(status=Status.DEAD, died_on=dt.date(2024, 3, 9)).count() == rows
    assert len(mail.outbox) == rows


def test_a_captive_who_dies_gets_the_whole_death(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    """The reviewer's case: Rose (who spent XP, and whose blood bound Bob's Tom) dies by the
    sweep. Alice gets the XP-06 credit once, Tom's player is told at once, Tom's bond ends a
    month after the death (BND-03), and a second sweep changes nothing."""
    storyteller = world.users["storyteller"]
    rose = make_character("Rose")
    tom = make_character("Tom", player="player_bob", clan="brujah")
    captor = make_character("Vlad", player=None, clan="brujah")
    before = dt.datetime(2024, 3, 1, 18, tzinfo=UTC)
    for key, amount, kind in (("award", 30, XpKind.AWARD), ("spent", -10, XpKind.PURCHASE)):
        ledger.xp_entry_add(
            chronicle=world.chronicle,
            player_id=rose.player_id,
            amount=Decimal(amount),
            kind=kind,
            reason=key,
            key=key,
            character=rose,
            now=before,
        )
    for day in (5, 10, 15):
        bonds.drink_record(
            drinker=tom,
            donors=[rose],
            mixed=False,
            night=dt.date(2024, 2, day),
            by=storyteller,
            now=before,
        )
    bond = Bond.objects.get(thrall=tom, regnant=rose, ended_on__isnull=True)
    assert bond.bound
    captivity = records.captivity_record(
        captive=rose, captor=captor, since=dt.date(2024, 3, 1), by=storyteller, now=before
    )
    assert captivity.deadline_game == world.game  # 2024-03-09
    mail.outbox.clear()

    assert run(sweepers.captives_sweep, NY_MARCH_10_EARLY) == 1
    rose.refresh_from_db()
    assert (rose.status, rose.died_on) == (Status.DEAD, dt.date(2024, 3, 9))
    # XP-06: half of the 10 spent, on top of the 20 unspent; the rules did it, no actor.
    [credit] = XpEntry.objects.filter(kind=XpKind.RETIREMENT)
    assert (credit.amount, credit.actor_id) == (Decimal(5), None)
    assert ledger.xp_balance(chronicle=world.chronicle, player=rose.player_id) == Decimal(25)
    # BND-03: Tom's player is told at once; the bond is due to end a month after the death.
    [told] = [m for m in mail.outbox if m.to == ["player_bob@example.com"]]
    assert "Rose has died" in told.subject and "BND-03" in told.body
    [died] = [m for m in mail.outbox if m.to == ["player_alice@example.com"]]
    assert "TOR-02" in died.body
    bond = Bond.objects.get(thrall=tom, regnant=rose, ended_on__isnull=True)
    assert bond.due_on == dt.date(2024, 4, 9)

    state = (
        list(XpEntry.objects.values_list("pk", flat=True)),
        list(Notification.objects.values_list("key", flat=True)),
        list(Bond.objects.values_list("pk", "ended_on", "due_on")),
        len(mail.outbox),
    )
    assert run(sweepers.captives_sweep, NY_MARCH_10_EARLY + dt.timedelta(hours=1)) == 0
    assert state == (
        list(XpEntry.objects.values_list("pk", flat=True)),
        list(Notification.objects.values_list("key", flat=True)),
        list(Bond.objects.values_list("pk", "ended_on", "due_on")),
        len(mail.outbox),
    )

    # In force the day before the month is up (New York's 8 April), over on the 9th.
    assert run(bonds.bonds_sweep, dt.datetime(2024, 4, 9, 3, tzinfo=UTC)) == 0
    assert Bond.objects.filter(pk=bond.pk, ended_on__isnull=True).exists()
    assert run(bonds.bonds_sweep, dt.datetime(2024, 4, 9, 16, tzinfo=UTC)) == 1
    bond.refresh_from_db()
    assert bond.ended_on == dt.date(2024, 4, 9)


# --- XP-04: black veins ------------------------------------------------------------------------


def _diablerie(world: World, diablerist: Character, until: dt.date) -> Diablerie:
    return Diablerie.objects.create(
        diablerist=diablerist,
        victim_name="Old Mother",
        victim_generation=9,
        occurred_on=dt.date(2024, 3, 1),
        black_veins_until=until,
        recorded_by=world.users["storyteller"],
        recorded_at=dt.datetime(2024, 3, 2, tzinfo=UTC),
    )


NY_AUG_31_LATE = dt.datetime(2024, 9, 1, 3, 30, tzinfo=UTC)  # 23:30 on 31 August in New York
NY_SEPT_1_EARLY = dt.datetime(2024, 9, 1, 4, 30, tzinfo=UTC)  # 00:30 on 1 September


def test_black_veins_fade_on_their_day_once(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    lucien = make_character("Lucien")
    due = _diablerie(world, lucien, dt.date(2024, 9, 1))
    later = _diablerie(world, lucien, dt.date(2024, 9, 2))

    assert run(sweepers.black_veins_sweep, NY_AUG_31_LATE) == 0
    assert run(sweepers.black_veins_sweep, NY_SEPT_1_EARLY) == 1
    assert run(sweepers.black_veins_sweep, NY_SEPT_1_EARLY + dt.timedelta(hours=1)) == 0
    due.refresh_from_db()
    later.refresh_from_db()
    assert due.veins_faded_at == NY_SEPT_1_EARLY
    assert later.veins_faded_at is None
    [message] = mail.outbox
    assert message.to == ["player_alice@example.com"]
    assert "XP-04" in message.body and "Old Mother" in message.body


@pytest.mark.parametrize("rows", [1, 50])
def test_black_veins_sweep_is_set_based(
    world: World, make_character: Callable[..., Character], run: Any, rows: int
) -> None:
    lucien = make_character("Lucien")
    for _ in range(rows):
        _diablerie(world, lucien, dt.date(2024, 9, 1))
    with counted() as sql:
        assert run(sweepers.black_veins_sweep, NY_SEPT_1_EARLY) == rows
    # 1. the chronicles' time zones, 2. the due diableries locked (diablerist and player
    # joined), 3. the conditional UPDATE
    assert len(sql) == 3, sql
    assert len(mail.outbox) == rows


# --- Every sweeper -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sweep",
    [
        sweepers.stored_blood_expire_sweep,
        sweepers.torpor_holds_sweep,
        sweepers.captives_sweep,
        sweepers.black_veins_sweep,
    ],
    ids=["BLD-03", "TOR-01", "TOR-02", "XP-04"],
)
def test_nothing_due_means_nothing_done(world: World, run: Any, sweep: Sweep) -> None:
    assert run(sweep, NY_APRIL_15_EARLY) == 0
    assert Notification.objects.count() == 0


def test_a_player_without_an_address_is_not_mailed(
    world: World, make_character: Callable[..., Character], run: Any
) -> None:
    get_user_model().objects.filter(pk=world.users["player_alice"].pk).update(email="")
    blood = _blood(make_character("Lucien"), dt.date(2024, 4, 15))
    assert run(sweepers.stored_blood_expire_sweep, NY_APRIL_15_EARLY) == 1
    blood.refresh_from_db()
    assert blood.expired_at is not None  # the effect does not depend on the e-mail
    assert mail.outbox == []


# --- Two workers at once -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_row_another_worker_holds_is_skipped_not_waited_for(
    world: World, make_character: Callable[..., Character], postgres: None
) -> None:
    """Two sweeps at once: the second skips the row the first has locked (SKIP LOCKED), so it
    neither blocks nor expires the row a second time; the first worker's commit is the one
    effect."""
    lucien = make_character("Lucien")
    held = _blood(lucien, dt.date(2024, 4, 15))
    free = _blood(lucien, dt.date(2024, 4, 15))
    locked = threading.Event()
    release = threading.Event()

    def other_worker() -> None:
        try:
            with transaction.atomic():
                StoredBlood.objects.select_for_update().get(pk=held.pk)
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    worker = threading.Thread(target=other_worker)
    worker.start()
    try:
        assert locked.wait(10)
        assert sweepers.stored_blood_expire_sweep(now=NY_APRIL_15_EARLY) == 1
    finally:
        release.set()
        worker.join(10)
    held.refresh_from_db()
    free.refresh_from_db()
    assert held.expired_at is None  # left for the next run
    assert free.expired_at == NY_APRIL_15_EARLY
    assert sweepers.stored_blood_expire_sweep(now=NY_APRIL_15_EARLY) == 1
    held.refresh_from_db()
    assert held.expired_at == NY_APRIL_15_EARLY
