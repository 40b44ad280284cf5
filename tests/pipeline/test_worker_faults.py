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
import json
import os
import signal
import subprocess
import sys
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

from .demo_month import AFTER_DEADLINE, DemoMonth, build_month
from .digest import digest, dump

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]
CHUNK_SIZE = 2
WORKER_START = 60.0  # seconds for a worker process to report ready
RUN_DEADLINE = 120.0  # seconds for a resolution to finish once nothing stops it
WORKER_ARGS = [
    "worker",
    "-Q",
    "celery",
    "--without-mingle",
    "--without-gossip",
    "--concurrency=1",
    "--loglevel=INFO",
]
# A worker with test settings set after Django starts (the pause of the pipeline's test hook,
# or a naive task configuration); otherwise the same program as `celery -A chronicle worker`.
TUNED_WORKER = """
import json, os, sys
import django
django.setup()
from django.conf import settings
for name, value in json.loads(os.environ["H3_SETTINGS"]).items():
    setattr(settings, name, value)
from chronicle.celery import app
import downtimes.tasks  # autodiscovery is lazy; the task must be registered to be tuned
task = app.tasks["downtimes.tasks.resolve_chunk"]
for name, value in json.loads(os.environ.get("H3_TASK_OPTIONS", "{}")).items():
    setattr(task, name, value)
print("resolve_chunk: acks_late", task.acks_late, "reject_on_worker_lost",
      task.reject_on_worker_lost, flush=True)
app.worker_main(sys.argv[1:])
"""


# --- The worker --------------------------------------------------------------------------------


def _database_url() -> str:
    """The test database (pytest-django's `test_...` name), as the worker must reach it."""
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """One worker process, with its log in `tmp_path`."""

    def __init__(
        self,
        log: Path,
        *,
        broker: str,
        tuned: dict[str, Any] | None = None,
        task_options: dict[str, Any] | None = None,
        pool: str = "solo",
    ) -> None:
        self.log = log
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": _database_url(),
            "CELERY_BROKER_URL": broker,
            "CHRONICLE_PIPELINE_CHUNK_SIZE": str(CHUNK_SIZE),
            "PYTHONPATH": str(ROOT),
        }
        args = [*WORKER_ARGS, f"--pool={pool}"]
        if tuned is not None or task_options is not None:
            environment["H3_SETTINGS"] = json.dumps(tuned or {})
            environment["H3_TASK_OPTIONS"] = json.dumps(task_options or {})
            command = [sys.executable, "-c", TUNED_WORKER, *args]
        else:
            command = [str(ROOT / ".venv" / "bin" / "celery"), "-A", "chronicle", *args]
        self.handle = log.open("w")
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=self.handle, stderr=subprocess.STDOUT
        )
        wait_for(self.ready, WORKER_START, f"worker ready (log: {log})")

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"The worker exited: {self.log.read_text()[-3000:]}")
        return " ready." in self.log.read_text()

    def kill(self) -> None:
        """SIGKILL: no cleanup, no ack, no goodbye to the broker or the database."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def children(self) -> list[int]:
        """The pool's processes (prefork), from /proc."""
        task_dir = Path(f"/proc/{self.process.pid}/task")
        return [
            int(pid)
            for task in task_dir.iterdir()
            for pid in (task / "children").read_text().split()
        ]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self.handle.close()


def wait_for(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    """Poll `condition` until it gives something true, and return that; fail after `seconds`
    (the worker runs on the wall clock)."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"Timed out after {seconds:.0f}s waiting for: {what}")
        time.sleep(0.2)
    return value


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
    started: list[Worker] = []

    def start(name: str = "worker", **options: Any) -> Worker:
        worker = Worker(tmp_path / f"{name}-{len(started)}.log", broker=broker, **options)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


# --- The month, resolved -------------------------------------------------------------------------


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
def chunked(settings: Any) -> None:
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = CHUNK_SIZE


def closed_month() -> DemoMonth:
    month = build_month()
    cycle_close(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    return month


@dataclass(frozen=True)
class State:
    digest: str
    lines: list[str]  # what the digest hashes: a failing comparison shows the difference


def released(month: DemoMonth) -> State:
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st) is True
    return State(digest=digest(month.chronicle), lines=dump(month.chronicle))


def fault_free(broker: str) -> State:
    """The month resolved inline and released, then the database flushed for the next run."""
    month = closed_month()
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st)
    state = released(month)
    flush(broker)
    return state


def flush(broker: str) -> None:
    """An empty database and broker for the next build."""
    call_command("flush", interactive=False, verbosity=0)
    import redis

    redis.Redis.from_url(broker).flushdb()  # an inline run enqueues its chunks too


def assert_same(got: State, expected: State) -> None:
    assert got.lines == expected.lines
    assert got.digest == expected.digest


def run_done(run: ResolutionRun) -> bool:
    return ResolutionRun.objects.get(pk=run.pk).status == RunStatus.DONE


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


def assert_once(run: ResolutionRun) -> None:
    """Every chunk of the run done, each by exactly one committed attempt."""
    chunks = list(StepChunk.objects.filter(run=run))
    assert chunks and {c.status for c in chunks} == {ChunkStatus.DONE}
    assert {c.attempts for c in chunks} == {1}


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
        blocker = psycopg.connect(_database_url())  # a transaction of its own, left open
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
