"""Closing a cycle concurrently: eight workers at the deadline, and an ST racing the task.

On PostgreSQL, because SQLite serialises every writer and so cannot show a race.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from chronicle import services
from chronicle.models import Cycle, CycleStatus, CycleTransition
from tests.conftest import World
from tests.invariants import assert_invariants

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def run_together(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Start `count` threads that call `work(i)` at the same instant; return their results."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except Exception as exc:  # surfaced to the test below
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_eight_concurrent_sweeps_close_each_cycle_once(postgres: None, world: World) -> None:
    now = world.game.cycle.deadline_at + dt.timedelta(minutes=1)
    results = run_together(8, lambda i: services.cycles_close_due(now=now))
    assert not [r for r in results if isinstance(r, Exception)], results
    closed = [cid for r in results for cid in r]
    assert sorted(closed) == sorted([world.game.cycle.pk, world.other_game.cycle.pk])
    assert CycleTransition.objects.count() == 2
    assert set(Cycle.objects.values_list("status", flat=True)) == {CycleStatus.CLOSED}
    assert_invariants()


def test_storytellers_and_the_task_race_to_close(postgres: None, world: World) -> None:
    cycle = world.game.cycle
    now = cycle.deadline_at
    storyteller = world.users["storyteller"]

    def work(i: int) -> Any:
        if i % 2:
            return services.cycle_close(cycle=cycle, by=storyteller, now=now)
        return cycle.pk in services.cycles_close_due(now=now)

    results = run_together(6, work)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert results.count(True) == 1
    assert CycleTransition.objects.filter(cycle=cycle).count() == 1
    assert_invariants()
