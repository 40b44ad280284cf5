"""Exactly once, with a real Celery worker on Redis and PostgreSQL (issue 6).

Each test resolves the same month (tests/pipeline/demo_month.py) twice: once inline in this
process without any fault, once by a real worker process with a fault in the middle, and
compares the two final states by `digest` (ledgers, havens, bonds, torpor holds, outcomes,
released desk items and notifications, ids mapped to names). The data must be committed for the
worker to see it, so these tests run with `transaction=True`; between the two runs the database
is flushed and the month built again.

The worker runs with a chunk size of 2 so that every step has several chunks. To strike in the
middle of a chunk, the worker gets the pipeline's test hook CHRONICLE_PIPELINE_TEST_HOLD: an
awards chunk waits, its outcomes written and not committed, while a file of the test's exists.
The test waits until the worker's transaction holds the chunk's row lock and has inserted
outcomes (pgrowlocks, pg_locks), strikes, then removes the file.

The demo chronicle (`manage.py seed_demo`) is resolved the same way: by a worker and inline,
and killed inside its havens chunk, which runs the haven steps in an atomic block it rolls back
(downtimes/services/haven_steps.py). `seed_demo` dates its games from the clock, so both builds
are made at one frozen instant; the worker's chunks read the wall clock (a task is given no
`now`), the inline run a fixed `now` a year or more earlier, so equal digests also say that
nothing the steps compute depends on when they run. Both runs are reviewed alike (an XP and a
"found" override) before the release.

Waiting for the worker is the one place these tests watch the wall clock: they poll the run
records with a deadline.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import signal
import subprocess
import time
import zoneinfo
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import close_old_connections, connection
from django.db.models import Sum
from django.utils import timezone

from characters.models import Character, XpEntry, XpKind
from chronicle.management.commands.seed_demo import DEMO_SLUG
from chronicle.models import Chronicle, Cycle, CycleStatus
from chronicle.services import cycle_close
from downtimes.models import ChunkStatus, Outcome, ResolutionRun, RunStatus, StepChunk
from downtimes.services import pipeline
from havens.models import Find, Search, Structure
from tests.invariants import assert_invariants

from .digest import digest, dump
from .workers import (
    RUN_DEADLINE,
    State,
    Worker,
    assert_once,
    assert_same,
    closed_month,
    database_url,
    fault_free,
    flush,
    released,
    run_done,
    wait_for,
)

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]

# The workers, the month and its digests: tests/pipeline/workers.py (fixtures in conftest.py).

# --- Holding a worker inside a chunk -------------------------------------------------------------


@pytest.fixture
def hold(tmp_path: Path) -> Iterator[Path]:
    """The file that holds a worker inside its awards chunks while it exists."""
    path = tmp_path / "hold-awards"
    path.touch()
    yield path
    path.unlink(missing_ok=True)


def holding(hold: Path) -> dict[str, Any]:
    return {"CHRONICLE_PIPELINE_TEST_HOLD": {"awards": str(hold)}}


@pytest.fixture
def row_locks(postgres: None) -> None:
    """pgrowlocks (PostgreSQL's contrib) reads which rows are locked, and by which backend,
    without taking a lock itself: polling with SELECT ... FOR UPDATE SKIP LOCKED instead would
    lock the free chunks for an instant, and a worker arriving then would skip one."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")


def chunk_in_flight(run: ResolutionRun, step: str) -> StepChunk | None:
    """The chunk of `step` a worker is inside: another backend holds its row lock and has
    inserted outcomes in that open transaction (a RowExclusiveLock on the outcomes table)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT s.id FROM {StepChunk._meta.db_table} s
            JOIN pgrowlocks(%s) r ON s.ctid = r.locked_row
            JOIN pg_locks l ON l.pid = ANY(r.pids) AND l.mode = 'RowExclusiveLock'
            JOIN pg_class c ON c.oid = l.relation AND c.relname = %s
            WHERE s.run_id = %s AND s.step = %s AND s.status = %s
            """,
            [StepChunk._meta.db_table, Outcome._meta.db_table, run.pk, step, ChunkStatus.PENDING],
        )
        rows = cursor.fetchall()
    return StepChunk.objects.get(pk=rows[0][0]) if rows else None


# --- The tests -----------------------------------------------------------------------------------


def test_a_real_worker_gives_the_inline_digest(
    postgres: None, chunked: None, broker: str, workers: Callable[..., Worker]
) -> None:
    expected = fault_free(broker)
    month = closed_month()
    workers()
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st)
    wait_for(lambda: run_done(run), RUN_DEADLINE, "the worker finishes the run")
    assert_once(run)
    assert StepChunk.objects.filter(run=run, step="awards").count() > 1  # really chunked
    assert_same(released(month), expected)
    assert_invariants()


def test_sigkill_mid_chunk_then_the_sweeper_gives_the_same_digest(
    row_locks: None, chunked: None, broker: str, workers: Callable[..., Worker], hold: Path
) -> None:
    expected = fault_free(broker)
    month = closed_month()
    doomed = workers("doomed", tuned=holding(hold))
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st)
    chunk = wait_for(
        lambda: chunk_in_flight(run, "awards"),
        RUN_DEADLINE,
        "the worker inside an awards chunk with its outcomes written",
    )
    earlier_steps = StepChunk.objects.filter(run=run, position__lt=chunk.position)
    assert {c.status for c in earlier_steps} == {ChunkStatus.DONE}  # mid-resolution

    doomed.kill()
    hold.unlink()
    # PostgreSQL rolls the dead worker's transaction back: nothing of the chunk is left.
    wait_for(lambda: chunk_in_flight(run, "awards") is None, 30, "the lock released")
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.PENDING and chunk.attempts == 0
    assert not Outcome.objects.filter(run=run, step="awards").exists()

    workers("replacement")
    # The killed task's message is unacknowledged in Redis until the visibility timeout
    # (hours); the other awards chunks go through, and the run waits on the killed one.
    others = StepChunk.objects.filter(run=run, step="awards").exclude(pk=chunk.pk)
    wait_for(
        lambda: not others.filter(status=ChunkStatus.PENDING).exists(),
        RUN_DEADLINE,
        "the other awards chunks done",
    )
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.PENDING
    assert not run_done(run)

    # The sweeper (beat, every minute) finds the chunk pending past STALE_AFTER.
    later = timezone.now() + pipeline.STALE_AFTER + dt.timedelta(seconds=1)
    assert pipeline.pipeline_sweep(now=later) >= 1
    wait_for(lambda: run_done(run), RUN_DEADLINE, "the run finished after the sweep")
    assert_once(run)
    assert_same(released(month), expected)
    assert_invariants()


def restart_postgresql() -> None:
    """Restart the machine's PostgreSQL cluster (fast shutdown: every session is cut, open
    transactions roll back). The command is the environment's own (its version from
    /etc/postgresql)."""
    (version,) = sorted(os.listdir("/etc/postgresql"))[-1:]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    connection.close()  # this process's session was cut too


def test_postgresql_restarted_mid_chunk_the_retry_gives_the_same_digest(
    row_locks: None, chunked: None, broker: str, workers: Callable[..., Worker], hold: Path
) -> None:
    """The worker is inside an awards chunk (outcomes written, not committed) when PostgreSQL
    restarts. Its transaction is gone; when it next speaks to the database the task raises
    OperationalError and ReliableTask's autoretry sends it again; the same worker runs the
    chunk again on a new connection. No sweeper is needed."""
    if not Path("/etc/postgresql").is_dir():
        pytest.fail("PostgreSQL's cluster is not on this machine (/etc/postgresql)")
    expected = fault_free(broker)
    month = closed_month()
    worker = workers("survivor", tuned=holding(hold))
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st)
    chunk = wait_for(
        lambda: chunk_in_flight(run, "awards"),
        RUN_DEADLINE,
        "the worker inside an awards chunk with its outcomes written",
    )
    restart_postgresql()
    hold.unlink()  # the chunk's transaction is gone; its next statement fails
    wait_for(lambda: run_done(run), RUN_DEADLINE, "the run finished after the restart")
    close_old_connections()
    assert worker.process.poll() is None  # the same worker, still up
    log = worker.log.read_text()
    assert "Retry in" in log, log[-3000:]
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.DONE, 1)
    assert_once(run)
    assert_same(released(month), expected)
    assert_invariants()


@pytest.mark.parametrize(
    ("acks_late", "recovered"),
    [
        pytest.param(True, True, id="acks_late-requeued"),
        pytest.param(False, False, id="acked_early-lost"),
    ],
)
def test_without_acks_late_a_killed_pool_process_loses_its_chunk_until_the_sweeper(
    row_locks: None,
    chunked: None,
    broker: str,
    workers: Callable[..., Worker],
    acks_late: bool,
    recovered: bool,
    hold: Path,
) -> None:
    """The measurement behind DESIGN's task settings, on the production pool (prefork, as in
    docker-compose.yml), killing the pool process that runs the chunk (the kernel's OOM killer
    does this), and no sweeper:

    - acks_late with reject_on_worker_lost (the project's settings): the worker sees its pool
      process lost, puts the message back, and a new pool process finishes the chunk.
    - acknowledged on receipt (Celery's default): the message was acknowledged when the pool
      process took it; the chunk stays pending however long we wait. Only the run records
      bring it back: the sweeper.

    (With --pool=solo the early acknowledgement waits for the event loop, which the running
    task blocks, so a killed solo worker's message is never acknowledged either way: Redis
    gives it back after the visibility timeout, hours here, and the sweeper comes first.)"""
    month = closed_month()
    worker = workers(
        "prefork",
        tuned=holding(hold),
        task_options={"acks_late": acks_late, "reject_on_worker_lost": acks_late},
        pool="prefork",
    )
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st)
    chunk = wait_for(lambda: chunk_in_flight(run, "awards"), RUN_DEADLINE, "inside a chunk")
    (child,) = worker.children()
    os.kill(child, signal.SIGKILL)
    hold.unlink()
    wait_for(lambda: "WorkerLostError" in worker.log.read_text(), 30, "the worker sees it")
    others = StepChunk.objects.filter(run=run, step="awards").exclude(pk=chunk.pk)
    wait_for(
        lambda: not others.filter(status=ChunkStatus.PENDING).exists(),
        RUN_DEADLINE,
        "the other awards chunks done",
    )
    # A requeued message comes back at once (it is at the head of the queue again); ten
    # seconds are many times what the other chunks took.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not run_done(run):
        time.sleep(0.2)
    assert run_done(run) is recovered
    chunk.refresh_from_db()
    assert chunk.status == (ChunkStatus.DONE if recovered else ChunkStatus.PENDING)
    if not recovered:
        later = timezone.now() + pipeline.STALE_AFTER + dt.timedelta(seconds=1)
        assert pipeline.pipeline_sweep(now=later) >= 1
        wait_for(lambda: run_done(run), RUN_DEADLINE, "the run finished after the sweep")
    assert_once(run)
    assert_invariants()


# --- The demo chronicle (seed_demo) ------------------------------------------------------------

# seed_demo dates its games from timezone.now() (the latest game is the last Saturday before
# today): both builds are made at this frozen instant, so they are the same world. A Wednesday:
# the latest game is Saturday 11 October 2025 and its downtime, due Tuesday 21 October (DT-01),
# is open.
DEMO_SEEDED_AT = dt.datetime(2025, 10, 15, 20, 0, tzinfo=zoneinfo.ZoneInfo("America/New_York"))
DEMO_CLOSED_AT = DEMO_SEEDED_AT + dt.timedelta(hours=1)
# The inline run's `now`, and the worker run's `cycle_resolve`. The worker's chunks cannot be
# given a `now`: they read the wall clock, a year or more later. What the steps compute must
# not depend on it.
DEMO_RESOLVED_AT = DEMO_SEEDED_AT + dt.timedelta(hours=2)
DEMO_REVIEWED_AT = DEMO_SEEDED_AT + dt.timedelta(hours=3)
DEMO_RELEASED_AT = DEMO_SEEDED_AT + dt.timedelta(hours=4)


@dataclass(frozen=True)
class Demo:
    chronicle: Chronicle
    cycle: Cycle
    st: Any


def closed_demo() -> Demo:
    """`seed_demo` at DEMO_SEEDED_AT, and its open cycle (game 3's) closed by an ST."""
    with time_machine.travel(DEMO_SEEDED_AT, tick=False):
        call_command("seed_demo", stdout=io.StringIO())
    chronicle = Chronicle.objects.get(slug=DEMO_SLUG)
    cycle = Cycle.objects.get(chronicle=chronicle, status=CycleStatus.OPEN)
    st = get_user_model().objects.get(username="st_lucia")
    assert cycle_close(cycle=cycle, by=st, now=DEMO_CLOSED_AT)
    return Demo(chronicle=chronicle, cycle=cycle, st=st)


def demo_released(demo: Demo) -> State:
    """The STs' review (two overrides, one of each kind), the release, the digest.

    - Old Dmitri missed game 3, so his no-downtime base XP is 0 (DT-04); the STs pay 2.5.
    - Marcus's downtime search spends 3 underworld on Isabella's Velvet Loft, which hides at
      (Mental 5 + influences ≥ 3) × 2 ≥ 16 points (HAV-25): 3 > 16 is false, not found
      (HAV-25b); the STs rule it found, so the release gives Marcus the find."""
    cycle = demo.cycle
    cycle.refresh_from_db()
    assert cycle.status == CycleStatus.RESOLVED
    dmitri = Character.objects.get(chronicle=demo.chronicle, name="Old Dmitri")
    marcus = Character.objects.get(chronicle=demo.chronicle, name="Marcus Steel")
    loft = Structure.objects.get(chronicle=demo.chronicle, name="The Velvet Loft")
    search = Search.objects.get(cycle=cycle, created_by=marcus)
    base = Outcome.objects.get(cycle=cycle, step="no_downtime", subject=f"base:{dmitri.player_id}")
    tested = Outcome.objects.get(
        cycle=cycle, step="searches", subject=f"search:{search.pk}:{loft.pk}"
    )
    assert (base.xp, tested.value["found"]) == (Decimal(0), False)  # by hand, above
    pipeline.outcome_override(
        outcome=base,
        by=demo.st,
        xp=Decimal("2.5"),
        note="The sign-in sheet missed him.",
        now=DEMO_REVIEWED_AT,
    )
    pipeline.outcome_override(
        outcome=tested,
        by=demo.st,
        found=True,
        note="Marcus bribed the gallery's doorman.",
        now=DEMO_REVIEWED_AT,
    )
    assert pipeline.cycle_release(cycle=cycle, by=demo.st, now=DEMO_RELEASED_AT) is True
    assert Find.objects.filter(structure=loft, character=marcus, cleared_at__isnull=True).exists()
    return State(digest=digest(demo.chronicle), lines=dump(demo.chronicle))


def demo_awards(cycle: Cycle) -> dict[str, Decimal]:
    return dict(
        XpEntry.objects.filter(cycle=cycle, kind=XpKind.AWARD)
        .values("player__username")
        .annotate(total=Sum("amount"))
        .values_list("player__username", "total")
    )


# By hand (tests/browser/test_demo_month_journey.py works the demo's votes out): 2.5 base XP
# for everyone who attended game 3 with a waiver, submitted or not (DT-03/04), +3 once per
# player who won a vote (DT-07/08); Dmitri was absent (0), and the STs' override pays him 2.5.
DEMO_AWARDS = {
    "alice": Decimal("5.5"),
    "bob": Decimal("5.5"),
    "carmen": Decimal("5.5"),
    "dmitri": Decimal("2.5"),
    "esme": Decimal("2.5"),
    "felix": Decimal("5.5"),
}


def demo_inline(broker: str) -> State:
    """The demo resolved in this process and released, then the database flushed."""
    demo = closed_demo()
    run = pipeline.cycle_resolve_inline(cycle=demo.cycle, by=demo.st, now=DEMO_RESOLVED_AT)
    assert run.status == RunStatus.DONE
    assert_once(run)
    state = demo_released(demo)
    assert demo_awards(demo.cycle) == DEMO_AWARDS
    flush(broker)
    return state


def test_the_demo_resolved_by_a_real_worker_gives_the_inline_digest(
    postgres: None, chunked: None, broker: str, workers: Callable[..., Worker]
) -> None:
    demo = closed_demo()
    worker = workers()
    run = pipeline.cycle_resolve(cycle=demo.cycle, by=demo.st, now=DEMO_RESOLVED_AT)
    wait_for(lambda: run_done(run), RUN_DEADLINE, "the worker finishes the demo's run")
    assert_once(run)
    for step in ("no_downtime", "awards", "notifications"):  # really chunked
        assert StepChunk.objects.filter(run=run, step=step).count() > 1
    by_worker = demo_released(demo)
    assert demo_awards(demo.cycle) == DEMO_AWARDS
    # A live worker would take the inline run's messages too, and the inline loop stops at a
    # chunk another process holds.
    worker.stop()
    flush(broker)

    assert_same(by_worker, demo_inline(broker))
    assert_invariants()


# --- The demo, killed inside its havens chunk ----------------------------------------------------


@pytest.fixture
def havens_hold(tmp_path: Path) -> Iterator[Path]:
    """The file that holds a worker inside the havens chunk while it exists."""
    path = tmp_path / "hold-havens"
    path.touch()
    yield path
    path.unlink(missing_ok=True)


def _backends_in(chunk_sql: str, params: list[Any], extra: str = "") -> list[tuple[Any, ...]]:
    """Rows (chunk id, backend pid) of the chunks matched by `chunk_sql` (a condition on `s`)
    whose row lock a live backend holds; `extra` narrows the backends (`a`, pg_stat_activity)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT s.id, a.pid FROM {StepChunk._meta.db_table} s
            JOIN pgrowlocks(%s) r ON s.ctid = r.locked_row
            JOIN pg_stat_activity a ON a.pid = ANY(r.pids)
            WHERE {chunk_sql} {extra}
            """,
            [StepChunk._meta.db_table, *params],
        )
        return cursor.fetchall()


def chunk_waiting(run: ResolutionRun, step: str) -> StepChunk | None:
    """The chunk of `step` whose worker is waiting for a row lock (pg_stat_activity)."""
    rows = _backends_in(
        "s.run_id = %s AND s.step = %s AND s.status = %s",
        [run.pk, step, ChunkStatus.PENDING],
        "AND a.wait_event_type = 'Lock'",
    )
    return StepChunk.objects.get(pk=rows[0][0]) if rows else None


def chunk_locked(chunk: StepChunk) -> bool:
    return bool(_backends_in("s.id = %s", [chunk.pk]))


def tables_written_in(chunk: StepChunk) -> list[str]:
    """The tables on which the backend inside `chunk` holds a write lock (RowExclusiveLock):
    an INSERT, UPDATE or DELETE of its open transaction. PostgreSQL releases the locks a
    subtransaction took when it is rolled back (sequences excepted: their locks belong to the
    top transaction, hence tables only)."""
    ((_, pid),) = _backends_in("s.id = %s", [chunk.pk])
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT DISTINCT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE l.pid = %s AND l.mode = 'RowExclusiveLock' AND c.relkind = 'r'
            ORDER BY c.relname
            """,
            [pid],
        )
        return [name for (name,) in cursor.fetchall()]


def world(chronicle: Chronicle) -> list[str]:
    """The dump without the preview's outcomes: what a resolution must leave as it was."""
    return [line for line in dump(chronicle) if not line.startswith("outcome")]


@pytest.mark.parametrize(
    "strike",
    [
        # The pipeline's test hold: the haven steps ran in their savepoint and were rolled
        # back, the chunk's outcomes are written, nothing is committed.
        pytest.param("after_the_steps", id="held-outcomes-written"),
        # A row lock this test holds on the demo's search stops the worker in the searches
        # step, inside the savepoint, with the earlier haven steps' writes in it.
        pytest.param("inside_the_steps", id="blocked-in-the-searches-step"),
    ],
)
def test_sigkill_in_the_demos_havens_chunk_then_the_sweeper_gives_the_same_digest(
    row_locks: None,
    chunked: None,
    broker: str,
    workers: Callable[..., Worker],
    havens_hold: Path,
    strike: str,
) -> None:
    import psycopg

    expected = demo_inline(broker)
    demo = closed_demo()
    untouched = world(demo.chronicle)
    blocker: psycopg.Connection[Any] | None = None
    if strike == "after_the_steps":
        doomed = workers(
            "doomed", tuned={"CHRONICLE_PIPELINE_TEST_HOLD": {"havens": str(havens_hold)}}
        )
        run = pipeline.cycle_resolve(cycle=demo.cycle, by=demo.st, now=DEMO_RESOLVED_AT)
        chunk = wait_for(
            lambda: chunk_in_flight(run, "havens"),
            RUN_DEADLINE,
            "the worker inside the havens chunk with its outcomes written",
        )
        # The savepoint is gone: the open transaction has written the outcomes, no haven.
        assert tables_written_in(chunk) == [Outcome._meta.db_table]
    else:
        search = Search.objects.get(cycle=demo.cycle)
        blocker = psycopg.connect(database_url())  # a transaction of its own, left open
        blocker.execute("SELECT id FROM havens_search WHERE id = %s FOR UPDATE", [search.pk])
        doomed = workers("doomed")
        run = pipeline.cycle_resolve(cycle=demo.cycle, by=demo.st, now=DEMO_RESOLVED_AT)
        chunk = wait_for(
            lambda: chunk_waiting(run, "havens"),
            RUN_DEADLINE,
            "the worker inside the havens chunk, waiting for the search's row",
        )
        written = tables_written_in(chunk)
        assert Outcome._meta.db_table not in written
        assert [t for t in written if t.startswith("havens_")], written  # haven writes pending
    earlier_steps = StepChunk.objects.filter(run=run, position__lt=chunk.position)
    assert earlier_steps.exists()
    assert {c.status for c in earlier_steps} == {ChunkStatus.DONE}  # mid-resolution

    doomed.kill()
    havens_hold.unlink()
    if blocker is not None:
        # The dead worker's backend, still waiting, takes the row, runs on, and fails when it
        # next writes to its client: it never commits.
        blocker.close()
    wait_for(lambda: not chunk_locked(chunk), 30, "the killed worker's transaction rolled back")
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.PENDING, 0)
    assert not Outcome.objects.filter(run=run, position__gte=chunk.position).exists()
    assert world(demo.chronicle) == untouched  # nothing of the haven steps is left

    workers("replacement")
    # The killed task's message is unacknowledged in Redis until the visibility timeout
    # (hours): the run waits on the chunk until the sweeper (beat, every minute) sends it again.
    later = timezone.now() + pipeline.STALE_AFTER + dt.timedelta(seconds=1)
    assert pipeline.pipeline_sweep(now=later) == 1
    wait_for(lambda: run_done(run), RUN_DEADLINE, "the run finished after the sweep")
    assert_once(run)
    assert_same(demo_released(demo), expected)
    assert_invariants()
