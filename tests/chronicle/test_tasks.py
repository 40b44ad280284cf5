"""The deadline task: its configuration, idempotence, retries, and a real worker on Redis."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from celery.contrib.testing.worker import start_worker
from celery.fixups.django import DjangoWorkerFixup
from celery.signals import task_postrun
from django.conf import settings
from django.db import OperationalError, connections

from chronicle import services, tasks
from chronicle.celery import app
from chronicle.models import Cycle, CycleStatus, CycleTransition
from tests.conftest import World

AFTER_BOTH_DEADLINES = dt.datetime(2024, 3, 21, 12, 0, tzinfo=dt.UTC)


def test_reliability_settings_are_in_force() -> None:
    conf = app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.broker_transport_options["visibility_timeout"] >= 3600
    # Celery's Django fixup must see it, or each task opens a new database session.
    assert DjangoWorkerFixup(app).db_reuse_max == settings.CELERY_DB_REUSE_MAX > 1
    task = app.tasks["chronicle.tasks.close_due_cycles"]
    assert OperationalError in task.autoretry_for
    assert task.retry_jitter is True and task.max_retries


def test_beat_schedule_runs_the_deadline_task_every_minute() -> None:
    entry = app.conf.beat_schedule["close-due-cycles"]
    assert entry["task"] == "chronicle.tasks.close_due_cycles"
    assert entry["schedule"] == 60.0
    assert entry["task"] in app.tasks


def test_task_run_twice_closes_once(world: World) -> None:
    with time_machine.travel(AFTER_BOTH_DEADLINES, tick=False):
        first = tasks.close_due_cycles()
        second = tasks.close_due_cycles()
    assert sorted(first) == sorted([world.game.cycle.pk, world.other_game.cycle.pk])
    assert second == []
    assert CycleTransition.objects.count() == 2


def test_task_retries_when_the_database_drops(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = services.cycles_close_due
    calls: list[int] = []

    def flaky(**kwargs: Any) -> list[int]:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(**kwargs)

    monkeypatch.setattr(services, "cycles_close_due", flaky)
    with time_machine.travel(AFTER_BOTH_DEADLINES, tick=False):
        result = tasks.close_due_cycles.apply()
    assert len(calls) == 2
    assert sorted(result.get()) == sorted([world.game.cycle.pk, world.other_game.cycle.pk])


class Finished(list[str]):
    """Names of the tasks the in-process worker finished, and an event set after the second."""

    def __init__(self) -> None:
        super().__init__()
        self.two = threading.Event()


@pytest.fixture
def finished_tasks() -> Iterator[Finished]:
    # The worker thread opens its own database connection; close it after each task so the
    # test database can be dropped.
    finished = Finished()

    def done(sender: Any = None, **kwargs: Any) -> None:
        connections.close_all()
        finished.append(sender.name)
        if len(finished) >= 2:
            finished.two.set()

    task_postrun.connect(done, weak=False)
    yield finished
    task_postrun.disconnect(done)


@pytest.mark.redis
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_closes_due_cycles(
    postgres: None, redis_broker: str, world: World, finished_tasks: Finished
) -> None:
    """End to end: beat's message goes through Redis to a real worker, which closes the cycles
    (their 2024 deadlines are long past) in PostgreSQL, once, even when sent twice."""
    # Messages an earlier test left in the queue (the pipeline's chunks, sent on commit) are not
    # this test's: only its own two may run.
    app.control.purge()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        tasks.close_due_cycles.delay()
        tasks.close_due_cycles.delay()
        assert finished_tasks.two.wait(timeout=30), f"the worker ran only {finished_tasks}"
    assert finished_tasks == ["chronicle.tasks.close_due_cycles"] * 2
    assert set(Cycle.objects.values_list("status", flat=True)) == {CycleStatus.CLOSED}
    assert CycleTransition.objects.count() == 2
