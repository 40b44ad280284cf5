"""The release at scale (issue 15): its statements grow by chunk of the resolution, never by
player; no statement reads more than a chunk's outcomes (so the release never holds every
outcome of the cycle); it writes exactly the rows of the set-based lower bound the benchmark
compares it with (bench/release_bound.py); and the recheck, now chunk by chunk, still refuses
a change in any chunk.

The months are demo_month's with extra players (half submitted, half not, so the no-downtime
cash-ins and the awards both grow), resolved with a small chunk size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction

from bench.release_bound import release_bound, written
from characters.models import XpEntry, XpKind
from chronicle.models import Attendance, CycleStatus
from downtimes.models import Outcome, StepChunk
from downtimes.services import pipeline

from .demo_month import AFTER_DEADLINE, DemoMonth
from .test_statement_counts import BASE, month_of

pytestmark = pytest.mark.django_db

CHUNK = 10


def resolved(extra: int) -> DemoMonth:
    month = month_of(extra=extra)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED
    return month


class Statements:
    """Every statement the connection sends; for a SELECT over the outcomes table, the rows it
    returned (psycopg's rowcount after a SELECT is the number of rows)."""

    def __init__(self) -> None:
        self.count = 0
        self.outcome_reads: list[tuple[int, str]] = []

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        self.count += 1
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith("SELECT") and '"downtimes_outcome"' in sql:
            self.outcome_reads.append((context["cursor"].rowcount, sql))
        return result


@contextmanager
def counted() -> Iterator[Statements]:
    statements = Statements()
    with connection.execute_wrapper(statements):
        yield statements


def released(month: DemoMonth) -> Statements:
    with counted() as statements:
        assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    return statements


def test_the_release_adds_the_same_statements_per_chunk(settings: Any) -> None:
    """10, 20 and 30 characters and members with chunks of 10: 1, 2 and 3 chunks per chunked
    step. Each chunk adds the same statements to the release (its recheck, its page of
    summaries, its page of Herd blood), a few dozen at most."""
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = CHUNK
    counts = []
    for total in (10, 20, 30):
        month = resolved(extra=total - BASE)
        assert StepChunk.objects.filter(run__cycle=month.cycle, step="awards").count() == (
            total // CHUNK
        )
        counts.append(released(month).count)
    second, third = counts[1] - counts[0], counts[2] - counts[1]
    assert second == third, counts
    # Per chunk: three rechecked steps (their own reads and the previewed outcomes of the
    # chunk) and the summaries' six reads and one insert.
    assert 0 < second <= 40, counts


def test_no_statement_of_the_release_reads_more_than_a_chunk_of_outcomes(
    settings: Any, postgres: None
) -> None:
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = CHUNK
    month = resolved(extra=60)
    outcomes = Outcome.objects.filter(cycle=month.cycle).count()
    # A chunk's players read a few outcomes each (their base XP or cash-in, awards, the
    # searchers' and owners' lines): at most 5 per subject of the chunk.
    bound = 5 * CHUNK
    assert outcomes > 3 * bound  # so reading them all would show
    statements = released(month)
    assert statements.outcome_reads, "the release reads the outcomes"
    most, sql = max(statements.outcome_reads)
    assert most <= bound, sql
    # The counts are real (psycopg gives a SELECT's rows), and the release did read them all
    # in its pages: more than any one statement's bound.
    assert most > 0 and sum(rows for rows, _ in statements.outcome_reads) > bound


class Rollback(Exception):
    pass


def test_the_release_writes_the_rows_of_the_set_based_bound(settings: Any, postgres: None) -> None:
    """bench/release_bound.py is the benchmark's lower bound: it must write what the release
    writes (every XP entry's player, character, key, amount and reason; the cash-ins; the
    readers), or the comparison would flatter the release. The bound runs first and is rolled
    back, then the real release runs on the same rows."""
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = CHUNK
    month = resolved(extra=24)
    award = Outcome.objects.filter(
        cycle=month.cycle, step="awards", overridable="xp", xp__gt=0
    ).first()
    assert award is not None
    pipeline.outcome_override(
        outcome=award, by=month.st, note="Played the scene", xp=Decimal("4.5")
    )
    with pytest.raises(Rollback), transaction.atomic():
        rows = release_bound(month.cycle.pk, now=AFTER_DEADLINE)
        bound = written(month.cycle.pk)
        raise Rollback
    assert rows["xp"] > 24 // 2 and rows["cash_in"] > 0 and rows["readers"] > 0, rows
    assert written(month.cycle.pk)["xp_entries"] == 0  # rolled back

    assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    assert written(month.cycle.pk) == bound
    assert XpEntry.objects.get(key=f"cycle:{month.cycle.pk}:awards:{award.subject}").amount == (
        Decimal("4.5")
    )


def test_the_chunked_recheck_refuses_a_change_in_a_later_chunk(settings: Any) -> None:
    """A player of the last chunk loses their waiver after the preview (DT-04): their base XP
    changes and the release, rechecking chunk by chunk, refuses it and writes nothing."""
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = CHUNK
    month = resolved(extra=22)
    last = StepChunk.objects.filter(run__cycle=month.cycle, step="awards").order_by("-lo").first()
    assert last is not None and last.number > 0
    base = (
        Outcome.objects.filter(
            cycle=month.cycle,
            step="awards",
            subject__startswith="base:",
            player_id__gte=last.lo,
            player_id__lte=last.hi,
            xp__gt=0,
        )
        .select_related("player")
        .first()
    )
    assert base is not None and base.player is not None
    # The sheet is locked once resolved; an admin's correction in the database is the kind of
    # change the recheck is there for.
    assert Attendance.objects.filter(game=month.game, player=base.player).update(
        waiver_signed=False
    )
    with pytest.raises(ValidationError, match="resolve the cycle again") as refused:
        pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    assert base.title in str(refused.value)
    assert not XpEntry.objects.filter(cycle=month.cycle, kind=XpKind.AWARD).exists()
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED


def test_a_second_release_writes_nothing() -> None:
    month = resolved(extra=4)
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    before = XpEntry.objects.filter(cycle=month.cycle).count()
    assert before > 0
    assert not pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    assert XpEntry.objects.filter(cycle=month.cycle).count() == before
