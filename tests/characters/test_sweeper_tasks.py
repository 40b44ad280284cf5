"""The sweeper tasks: each calls its sweeper (run directly, as the worker would), and beat runs
every one of them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
import time_machine
from django.core import mail

from characters import tasks
from characters.models import (
    Bond,
    BondKind,
    CaptiveOutcome,
    Captivity,
    Character,
    Diablerie,
    DonorType,
    Status,
    StoredBlood,
    TorporHold,
)
from chronicle.celery import app
from tests.conftest import World

UTC = dt.UTC
TASKS = [
    "characters.tasks.sweep_stored_blood",
    "characters.tasks.sweep_torpor_holds",
    "characters.tasks.sweep_captives",
    "characters.tasks.sweep_black_veins",
    "characters.tasks.sweep_bonds",
]


@pytest.mark.parametrize("name", TASKS)
def test_beat_runs_every_sweeper_hourly_without_piling_up(name: str) -> None:
    [entry] = [e for e in app.conf.beat_schedule.values() if e["task"] == name]
    assert name in app.tasks
    assert entry["schedule"] == 3600.0
    # A run the workers could not take within the hour expires instead of queueing behind the
    # next one: the sweepers are idempotent, so the next run does its work.
    assert 0 < entry["options"]["expires"] < entry["schedule"]


@pytest.mark.parametrize("name", TASKS)
def test_tasks_are_reliable(name: str) -> None:
    task = app.tasks[name]
    assert task.acks_late is True
    assert task.max_retries and task.retry_jitter is True


@pytest.mark.django_db
def test_tasks_run_their_sweepers_once(
    world: World,
    make_character: Callable[..., Character],
    django_capture_on_commit_callbacks: Any,
    postgres: None,
) -> None:
    storyteller = world.users["storyteller"]
    lucien = make_character("Lucien")
    mina = make_character("Mina", player="player_bob", status=Status.TORPOR)
    lucy = make_character("Lucy", player=None, status=Status.STAKED)
    blood = StoredBlood.objects.create(
        holder=lucien,
        location="fridge",
        points=2,
        donor_type=DonorType.KINE,
        collected_on=dt.date(2024, 1, 15),
        unusable_from=dt.date(2024, 4, 15),
    )
    hold = TorporHold.objects.create(
        holder=lucien,
        captive=mina,
        cycle=world.game.cycle,
        recorded_by=storyteller,
        recorded_at=dt.datetime(2024, 3, 10, tzinfo=UTC),
    )
    captivity = Captivity.objects.create(
        captive=lucy,
        captor=lucien,
        since=dt.date(2024, 3, 2),
        deadline_game=world.game,
        recorded_by=storyteller,
    )
    diablerie = Diablerie.objects.create(
        diablerist=lucien,
        victim_name="Old Mother",
        victim_generation=9,
        occurred_on=dt.date(2023, 10, 1),
        black_veins_until=dt.date(2024, 4, 1),
        recorded_by=storyteller,
        recorded_at=dt.datetime(2023, 10, 2, tzinfo=UTC),
    )
    swept = [
        tasks.sweep_stored_blood,
        tasks.sweep_torpor_holds,
        tasks.sweep_captives,
        tasks.sweep_black_veins,
    ]
    # Mid-April in New York: every one of the four timers above is due.
    with (
        time_machine.travel(dt.datetime(2024, 4, 20, 12, tzinfo=UTC), tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        first = [task() for task in swept]
        second = [task() for task in swept]
    assert first == [1, 1, 1, 1]
    assert second == [0, 0, 0, 0]
    for row in (blood, hold, captivity, diablerie):
        row.refresh_from_db()
    assert blood.expired_at is not None
    assert hold.ended_at is not None
    assert captivity.outcome == CaptiveOutcome.DIED
    assert diablerie.veins_faded_at is not None
    # Lucy is an NPC; blood and veins go to Alice, the hold to Bob.
    assert sorted(m.to[0] for m in mail.outbox) == [
        "player_alice@example.com",
        "player_alice@example.com",
        "player_bob@example.com",
    ]


@pytest.mark.django_db
def test_bond_task_ends_a_bond_past_its_due_day(
    world: World,
    make_character: Callable[..., Character],
    django_capture_on_commit_callbacks: Any,
    postgres: None,
) -> None:
    # A bond row with no drink behind it is not in force on its due day (BND-10).
    bond = Bond.objects.create(
        thrall=make_character("Mina", player="player_bob"),
        regnant=make_character("Vlad"),
        kind=BondKind.PURE,
        level=1,
        bound=False,
        since=dt.date(2024, 3, 9),
        due_on=dt.date(2024, 4, 1),
    )
    with (
        time_machine.travel(dt.datetime(2024, 4, 2, 16, tzinfo=UTC), tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert tasks.sweep_bonds() == 1
        assert tasks.sweep_bonds() == 0
    bond.refresh_from_db()
    assert bond.ended_on is not None
