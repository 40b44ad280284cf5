"""Pipeline test helpers: the world's first game (Saturday 9 March 2024, New York) with two
PCs, Lucien (player_alice, who submits) and Marguerite (player_bob, who does not), both at the
game; Alice signed the waiver, Bob too unless a test says otherwise."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import time_machine

from characters.models import Character
from chronicle import services as chronicle_services
from chronicle.models import Cycle
from downtimes.services import submissions

from ..downtimes.conftest import AT_DEADLINE, DURING
from .workers import CHUNK_SIZE, Worker

AFTER_DEADLINE = AT_DEADLINE + dt.timedelta(hours=1)


@dataclass
class Month:
    world: Any
    cycle: Cycle
    lucien: Character
    marguerite: Character


@pytest.fixture
def month(world: Any, make_character: Callable[..., Character]) -> Month:
    lucien = make_character("Lucien", player="player_alice", clan="toreador", business=2)
    marguerite = make_character("Marguerite", player="player_bob", clan="ventrue", business=3)
    alice, bob, st = (world.users[n] for n in ("player_alice", "player_bob", "storyteller"))
    chronicle_services.attendance_record(
        game=world.game,
        lines=[
            chronicle_services.SignIn(player_id=alice.pk, attended=True, waiver_signed=True),
            chronicle_services.SignIn(player_id=bob.pk, attended=True, waiver_signed=True),
        ],
        by=st,
        now=DURING,
    )
    with time_machine.travel(DURING, tick=False):
        draft = submissions.submission_for_edit(character=lucien, cycle=world.game.cycle, by=alice)
        draft = submissions.submission_save(
            submission=draft,
            by=alice,
            game_report="The Harpy's salon went quiet.",
            version=draft.version,
        )
        submissions.submission_submit(submission=draft, by=alice)
    return Month(world=world, cycle=world.game.cycle, lucien=lucien, marguerite=marguerite)


# --- Real workers (tests/pipeline/workers.py) ----------------------------------------------------


@pytest.fixture
def broker(redis_broker: str) -> Iterator[str]:
    """The Redis db of this test run, emptied before and after: no message of an earlier test
    (or of the inline run, which enqueues too) may reach the worker."""
    import redis

    client = redis.Redis.from_url(redis_broker)
    client.flushdb()
    yield redis_broker
    client.flushdb()


@pytest.fixture
def workers(tmp_path: Path, broker: str) -> Iterator[Callable[..., Worker]]:
    """start(name, **Worker options) -> a worker process, stopped after the test."""
    started: list[Worker] = []

    def start(name: str = "worker", **options: Any) -> Worker:
        number = len(started)
        options.setdefault("hostname", f"{name}-{number}@%h")
        wait = options.pop("wait", True)
        worker = Worker(tmp_path / f"{name}-{number}.log", broker=broker, wait=False, **options)
        started.append(worker)  # stopped even if it never gets ready
        if wait:
            worker.wait_ready()
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def chunked(settings: Any) -> None:
    """This process chunks as the workers do (an inline run, a re-resolution)."""
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = CHUNK_SIZE
