"""The number of SQL statements of a full resolution grows by chunk, not by character (issue 6:
"set-based in the database, never a query per row").

Counted with `connection.execute_wrapper`, which sees every statement this connection sends
(CaptureQueriesContext keeps only Django's last 9,000). The month is demo_month's, with extra
players (half submitted, half not, so both the no-downtime and the awards paths grow).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection

from chronicle.services import cycle_close
from downtimes.models import ChunkStatus, StepChunk
from downtimes.services import pipeline

from .demo_month import AFTER_DEADLINE, DemoMonth, build_month

pytestmark = pytest.mark.django_db

# The base month has 8 characters (7 PCs and the Prince) and 8 members (7 players and the ST).
BASE = 8


class Statements:
    def __init__(self) -> None:
        self.count = 0
        self.by_step: Counter[str] = Counter()
        self.step = ""

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        self.count += 1
        self.by_step[self.step] += 1
        return execute(sql, params, many, context)


@contextmanager
def counted() -> Iterator[Statements]:
    statements = Statements()
    with connection.execute_wrapper(statements):
        yield statements


def month_of(extra: int) -> DemoMonth:
    month = build_month(extra_players=extra, prefix=f"m{extra}_")
    cycle_close(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    return month


def resolution(month: DemoMonth) -> Statements:
    """Resolve as `cycle_resolve_inline` does, counting every statement, per step too."""
    with counted() as statements:
        statements.step = "plan"
        run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
        while True:
            chunk = (
                StepChunk.objects.filter(run=run, status=ChunkStatus.PENDING)
                .order_by("position", "number")
                .first()
            )
            if chunk is None:
                break
            statements.step = chunk.step
            assert pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE)
            statements.step = "plan"
    month.cycle.refresh_from_db()
    assert month.cycle.status == "resolved"
    return statements


def release(month: DemoMonth) -> int:
    with counted() as statements:
        assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    return statements.count


def chunks(month: DemoMonth) -> Counter[str]:
    return Counter(StepChunk.objects.filter(run__cycle=month.cycle).values_list("step", flat=True))


def test_one_chunk_costs_the_same_for_ten_times_the_characters(settings: Any) -> None:
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = 500
    small = month_of(extra=4)  # 12 characters, 12 members
    small_resolution = resolution(small)
    small_release = release(small)
    assert set(chunks(small).values()) == {1}

    large = month_of(extra=112)  # 120 characters, 120 members: ten times as many
    large_resolution = resolution(large)
    large_release = release(large)
    assert set(chunks(large).values()) == {1}

    assert large_resolution.by_step == small_resolution.by_step
    assert large_resolution.count == small_resolution.count
    assert large_release == small_release


def test_each_chunk_adds_the_same_statements(settings: Any) -> None:
    """Chunk size 10: 10, 20 and 30 characters (and members) give 1, 2 and 3 chunks per
    chunked step; each step's second and third chunk add the same number of statements, and
    the steps of one chunk (lock, havens) add none."""
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = 10
    runs = []
    for total in (10, 20, 30):
        month = month_of(extra=total - BASE)
        runs.append(resolution(month))
        steps = chunks(month)
        assert steps["awards"] == steps["no_downtime"] == total // 10
        assert steps["lock"] == steps["havens"] == 1
    second = {step: runs[1].by_step[step] - runs[0].by_step[step] for step in runs[2].by_step}
    third = {step: runs[2].by_step[step] - runs[1].by_step[step] for step in runs[2].by_step}
    assert second == third
    assert second["lock"] == second["havens"] == 0
    # A chunk's fixed cost is about ten statements (claim, the run's SHARE lock, the chunk's
    # UPDATE, moving the run on, and the savepoints the test's transaction adds), plus its
    # step's own reads and one INSERT of its outcomes.
    assert all(0 < second[step] <= PER_CHUNK_MAX for step in CHUNKED)


CHUNKED = [
    "no_downtime",
    "herd_blood",
    "torpor_holds",
    "diablerie_steps",
    "xp_purchases",
    "awards",
    "notifications",
]
PER_CHUNK_MAX = 20
