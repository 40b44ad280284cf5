"""Exactly once, in one process (issue 6, DT-10): every way a chunk, a task or a release may run
twice gives the effects of one run; the sweeper re-enqueues only what is stale; a superseded run
writes nothing. The races run on PostgreSQL with threads, each with its own connection.

The month is tests/pipeline/demo_month.py. Its hand-computed release (DT-03..08): base XP 2.5
for Isabella, Marcus and Carmen (submitted, waiver), and for Dmitri and Gina (no downtime,
waiver; Gina is held in torpor, still in play); picked reports 3 each for Isabella and Carmen
(DT-05); votes 3 each for alice (costume), bob (feared, costume) and carmen (liked, respected,
roleplaying), once per player (DT-07/08); nothing for Esme (no waiver) or Felix (absent): 10
ledger entries, 27.5 XP. Cashed in (DT-03): Dmitri's herd 1 and underworld 2, Felix's herd 3,
Gina's occult 1: 4 spends.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.db.models import F, Sum

from characters.models import InfluenceSpend, XpEntry, XpKind
from characters.services import ledger
from chronicle import services as chronicle_services
from chronicle.models import CycleStatus
from chronicle.services import cycle_close
from downtimes import tasks
from downtimes.models import ChunkStatus, Outcome, ResolutionRun, RunStatus, StepChunk
from downtimes.services import pipeline, steps

from .demo_month import AFTER_DEADLINE, DemoMonth, build_month
from .digest import digest, dump

RELEASE_ENTRIES = 10
RELEASE_XP = Decimal("27.5")
CASH_IN_SPENDS = 4


def run_together(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Start `count` threads that call `work(i)` at the same instant; return their results."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except Exception as exc:  # surfaced to the test
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def poll(condition: Callable[[], Any], seconds: float = 15.0) -> bool:
    """Wait, polling, until `condition()` is true or `seconds` pass (another thread's
    transaction is what we wait for); returns whether it came true."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    result: list[Any] = []

    def run() -> None:
        try:
            result.append(work())
        except Exception as exc:  # surfaced to the test
            result.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


@pytest.fixture
def chunked(settings: Any) -> None:
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = 2


@pytest.fixture
def month(chunked: None) -> DemoMonth:
    month = build_month()
    cycle_close(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    return month


def resolved(month: DemoMonth) -> ResolutionRun:
    run = pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED
    return run


def pending(run: ResolutionRun, step: str) -> list[StepChunk]:
    return list(
        StepChunk.objects.filter(run=run, step=step, status=ChunkStatus.PENDING).order_by("number")
    )


def run_until(run: ResolutionRun, step: str) -> None:
    """Run the run's chunks in order, inline, up to (not including) the first of `step`."""
    while True:
        chunk = (
            StepChunk.objects.filter(run=run, status=ChunkStatus.PENDING)
            .order_by("position", "number")
            .first()
        )
        assert chunk is not None, f"no {step} chunk left"
        if chunk.step == step:
            return
        assert pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE)


def lock_waiters() -> int:
    """Sessions of this database waiting for a lock right now."""
    with connection.cursor() as cursor:
        # Inside a transaction the statistics views keep their first snapshot: drop it.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return int(cursor.fetchone()[0])


class Gate:
    """Holds one thread inside a step's compute (after the chunk's row lock is taken, before
    anything is written) until the test opens it."""

    def __init__(self) -> None:
        self.inside = threading.Event()
        self.open = threading.Event()
        self.holds: set[int] = set()  # thread idents to hold

    def wrap(self, compute: steps.Compute) -> steps.Compute:
        def gated(*args: Any) -> list[Outcome]:
            outcomes = compute(*args)
            if threading.get_ident() in self.holds:
                self.inside.set()
                assert self.open.wait(30), "the gate was never opened"
            return outcomes

        return gated


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    gate = Gate()
    for name, step in steps.STEP_BY_NAME.items():
        monkeypatch.setitem(
            steps.STEP_BY_NAME, name, dataclasses.replace(step, compute=gate.wrap(step.compute))
        )
    yield gate
    gate.open.set()


def held(gate: Gate, work: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Run `work` in a thread that the gate holds inside its compute; return once it is there."""

    def inner() -> Any:
        gate.holds.add(threading.get_ident())
        return work()

    thread, result = in_thread(inner)
    assert gate.inside.wait(30), result
    return thread, result


# --- The digest --------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_digest_names_ids_so_two_builds_give_one_digest(chunked: None) -> None:
    """The same month on a database flushed in between (sequences not reset, so every id
    differs) gives the same digest; and every number in every key is named."""
    first = build_month()
    cycle_close(cycle=first.cycle, by=first.st, now=AFTER_DEADLINE)
    resolved(first)
    assert pipeline.cycle_release(cycle=first.cycle, by=first.st, now=AFTER_DEADLINE)
    lines, hashed, alice = dump(first.chronicle), digest(first.chronicle), first.users["alice"].pk

    call_command("flush", interactive=False, verbosity=0, reset_sequences=False)
    second = build_month()
    cycle_close(cycle=second.cycle, by=second.st, now=AFTER_DEADLINE)
    resolved(second)
    assert pipeline.cycle_release(cycle=second.cycle, by=second.st, now=AFTER_DEADLINE)

    assert second.users["alice"].pk != alice
    assert dump(second.chronicle) == lines
    assert digest(second.chronicle) == hashed
    unnamed = [line for line in lines if ":#" in line or "|?|" in line or ":?" in line]
    assert not unnamed


@pytest.mark.django_db
def test_the_digest_changes_with_one_more_effect(month: DemoMonth) -> None:
    resolved(month)
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    before = digest(month.chronicle)
    ledger.xp_entry_add(
        chronicle=month.chronicle,
        player_id=month.users["bob"].pk,
        amount=Decimal("0.5"),
        kind=XpKind.CORRECTION,
        reason="Costume judged twice",
        key="correction:1",
        actor=month.st,
        now=AFTER_DEADLINE,
    )
    assert digest(month.chronicle) != before


# --- Chunks --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_chunk_run_twice_has_one_effect(month: DemoMonth) -> None:
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(run, "awards")
    chunk = pending(run, "awards")[0]
    assert pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE) is True
    rows = list(Outcome.objects.filter(run=run, step="awards").values_list("pk", "xp"))
    assert rows  # the chunk holds alice: her base, report and vote awards

    assert pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE) is False
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts, chunk.outcomes) == (ChunkStatus.DONE, 1, len(rows))
    assert list(Outcome.objects.filter(run=run, step="awards").values_list("pk", "xp")) == rows


@pytest.mark.django_db
def test_a_redelivered_task_after_done_is_a_no_op(month: DemoMonth) -> None:
    """acks_late: a worker that dies after the commit and before the ack gets the message
    again; the task finds the chunk done."""
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(run, "no_downtime")
    chunk = pending(run, "no_downtime")[0]
    assert tasks.resolve_chunk.apply(args=[chunk.pk]).get() is True
    rows = list(Outcome.objects.filter(run=run).order_by("pk").values_list("pk", "subject"))
    assert tasks.resolve_chunk.apply(args=[chunk.pk]).get() is False
    assert list(Outcome.objects.filter(run=run).order_by("pk").values_list("pk", "subject")) == rows
    chunk.refresh_from_db()
    assert chunk.attempts == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_workers_on_one_chunk_one_runs_it(month: DemoMonth, gate: Gate) -> None:
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(run, "awards")
    chunk = pending(run, "awards")[0]
    first, result = held(gate, lambda: pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE))
    # The second worker finds the row locked and leaves at once (SKIP LOCKED), not waiting.
    assert pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE) is False
    gate.open.set()
    first.join(30)
    assert result == [True]
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.DONE, 1)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_chunks_of_one_step_run_at_the_same_time(month: DemoMonth, gate: Gate) -> None:
    """Chunks exist so that workers share a step. A worker inside one chunk must not make
    another worker skip a different chunk of the same run (it would sit pending until the
    sweeper, a minute later). Regression: the chunk was claimed with FOR UPDATE over a join,
    which locked the run, cycle, chronicle and game rows too, so SKIP LOCKED skipped every
    other chunk of the cycle while one ran."""
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(run, "awards")
    one, two = pending(run, "awards")[:2]
    first, result = held(gate, lambda: pipeline.chunk_run(chunk_id=one.pk, now=AFTER_DEADLINE))
    second, other = in_thread(lambda: pipeline.chunk_run(chunk_id=two.pk, now=AFTER_DEADLINE))
    # The second chunk commits while the first is still inside its own; only moving the run
    # on afterwards waits for the first (the run's row).
    try:
        two_done = StepChunk.objects.filter(pk=two.pk, status=ChunkStatus.DONE)
        assert poll(lambda: two_done.exists() or not second.is_alive()) and two_done.exists()
    finally:
        gate.open.set()
        first.join(30)
        second.join(30)
    assert (result, other) == ([True], [True])
    assert set(
        StepChunk.objects.filter(pk__in=[one.pk, two.pk]).values_list("status", flat=True)
    ) == {ChunkStatus.DONE}


def naive_chunk_run(chunk_id: int, both_read: threading.Barrier) -> bool:
    """The naive claim, for the comparison below: read the status, then work, no row lock."""
    with transaction.atomic():
        chunk = StepChunk.objects.select_related("run__cycle").get(pk=chunk_id)
        if chunk.status != ChunkStatus.PENDING:
            return False
        both_read.wait()  # both workers saw "pending" before either wrote
        outcomes = steps.STEP_BY_NAME[chunk.step].compute(
            chunk.run.cycle, chunk.lo, chunk.hi, AFTER_DEADLINE
        )
        for outcome in outcomes:
            outcome.cycle, outcome.run = chunk.run.cycle, chunk.run
            outcome.position = steps.OUTCOME_POSITION[outcome.step]
        Outcome.objects.bulk_create(
            outcomes,
            update_conflicts=True,
            unique_fields=["cycle", "step", "subject"],
            update_fields=pipeline.OUTCOME_FIELDS,
        )
        StepChunk.objects.filter(pk=chunk.pk).update(
            status=ChunkStatus.DONE, attempts=F("attempts") + 1
        )
    return True


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_without_the_row_lock_two_workers_both_run_a_chunk(month: DemoMonth) -> None:
    """The failure mode the lock prevents, measured: two workers that read "pending" without
    a lock both compute and write the chunk (attempts 2). The outcomes' key (cycle, step,
    subject) still keeps one row each, so the preview is right, but the work is done twice."""
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(run, "awards")
    chunk = pending(run, "awards")[0]
    both_read = threading.Barrier(2)
    assert run_together(2, lambda i: naive_chunk_run(chunk.pk, both_read)) == [True, True]
    chunk.refresh_from_db()
    assert chunk.attempts == 2
    subjects = list(Outcome.objects.filter(run=run, step="awards").values_list("subject"))
    assert subjects and len(subjects) == len(set(subjects))


# --- Runs: superseded, swept ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_superseded_runs_chunks_do_nothing(month: DemoMonth) -> None:
    old = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    old_chunks = list(StepChunk.objects.filter(run=old).values_list("pk", flat=True))
    new = resolved(month)
    assert ResolutionRun.objects.get(pk=old.pk).status == RunStatus.SUPERSEDED
    assert not any(pipeline.chunk_run(chunk_id=pk, now=AFTER_DEADLINE) for pk in old_chunks)
    assert not Outcome.objects.filter(run=old).exists()
    assert set(Outcome.objects.filter(cycle=month.cycle).values_list("run", flat=True)) == {new.pk}
    later = AFTER_DEADLINE + pipeline.STALE_AFTER * 10
    assert pipeline.pipeline_sweep(now=later) == 0


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_chunk_in_flight_when_its_run_is_superseded_leaves_no_stale_outcome(
    month: DemoMonth, gate: Gate
) -> None:
    """An ST re-resolves after a change while a worker is inside a chunk of the old run. The
    old chunk must not write what it computed before the change over the new run's preview.
    Here Alice's waiver is taken back (DT-04): the new preview pays her base award 0."""
    old = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(old, "awards")
    chunk = pending(old, "awards")[0]  # holds Alice
    worker, result = held(gate, lambda: pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE))
    alice = month.users["alice"]
    chronicle_services.attendance_record(
        game=month.game,
        lines=[chronicle_services.SignIn(alice.pk, True, False)],
        by=month.st,
        now=AFTER_DEADLINE,
    )

    # Let the old chunk go once the re-resolution is done, or as soon as it waits for the old
    # chunk (a correct cycle_resolve may wait; it must then see the old chunk's commit).
    def release_when_ready() -> None:
        second_done = ResolutionRun.objects.filter(
            cycle=month.cycle, number=2, status=RunStatus.DONE
        )
        poll(lambda: lock_waiters() or second_done.exists(), seconds=30)
        gate.open.set()

    watcher, _ = in_thread(release_when_ready)
    resolved(month)
    worker.join(30)
    watcher.join(30)
    assert not worker.is_alive() and len(result) == 1

    base = Outcome.objects.get(cycle=month.cycle, step="awards", subject=f"base:{alice.pk}")
    assert base.xp == Decimal(0)
    assert base.run.number == 2
    assert set(Outcome.objects.filter(cycle=month.cycle).values_list("run__number", flat=True)) == {
        2
    }


@pytest.mark.django_db
def test_the_sweeper_re_enqueues_a_stale_chunk_and_not_a_fresh_one(
    month: DemoMonth, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks() as sent:
        run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    lock = StepChunk.objects.get(run=run, step="lock")
    assert (len(sent), lock.enqueued_at) == (1, AFTER_DEADLINE)  # the first step's one chunk

    fresh = AFTER_DEADLINE + pipeline.STALE_AFTER - dt.timedelta(seconds=1)
    with django_capture_on_commit_callbacks() as sent:
        assert pipeline.pipeline_sweep(now=fresh) == 0
    assert sent == []

    stale = AFTER_DEADLINE + pipeline.STALE_AFTER + dt.timedelta(seconds=1)
    with django_capture_on_commit_callbacks() as sent:
        assert pipeline.pipeline_sweep(now=stale) == 1
    assert len(sent) == 1
    lock.refresh_from_db()
    assert lock.enqueued_at == stale  # the next sweep counts from now, not from the first send
    # Steps after the first are not enqueued before it is done.
    assert (
        not StepChunk.objects.filter(run=run, enqueued_at__isnull=False)
        .exclude(pk=lock.pk)
        .exists()
    )


@pytest.mark.django_db
def test_the_sweeper_moves_on_a_run_whose_advance_was_lost(month: DemoMonth) -> None:
    """A worker that committed its chunk and died before enqueuing the next step (or whose
    run_advance failed) leaves a run with every enqueued chunk done: the sweeper moves it."""
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    lock = StepChunk.objects.get(run=run, step="lock")
    with transaction.atomic():  # the chunk's own transaction, without the advance after it
        StepChunk.objects.filter(pk=lock.pk).update(status=ChunkStatus.DONE)
    next_step = StepChunk.objects.filter(run=run, step="no_downtime")
    assert not next_step.filter(enqueued_at__isnull=False).exists()
    pipeline.pipeline_sweep(now=AFTER_DEADLINE)
    assert next_step.exists() and not next_step.filter(enqueued_at__isnull=True).exists()


# --- Release -------------------------------------------------------------------------------------


def released_totals(month: DemoMonth) -> tuple[int, Decimal, int]:
    entries = XpEntry.objects.filter(cycle=month.cycle, kind=XpKind.AWARD)
    spends = InfluenceSpend.objects.filter(cycle=month.cycle, key__contains=":cash-in:")
    return entries.count(), entries.aggregate(t=Sum("amount"))["t"], spends.count()


@pytest.mark.django_db
def test_releasing_twice_writes_one_set_of_entries(month: DemoMonth) -> None:
    resolved(month)
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE) is True
    once = digest(month.chronicle)
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE) is False
    assert released_totals(month) == (RELEASE_ENTRIES, RELEASE_XP, CASH_IN_SPENDS)
    assert digest(month.chronicle) == once


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_releases_write_one_set_of_entries(month: DemoMonth) -> None:
    resolved(month)
    results = run_together(
        4, lambda i: pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    )
    assert sorted(results, key=str) == [False, False, False, True]
    assert released_totals(month) == (RELEASE_ENTRIES, RELEASE_XP, CASH_IN_SPENDS)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_run_finishing_while_it_is_re_resolved_does_not_deadlock(
    month: DemoMonth, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last chunk's worker moves the run on (finishing it marks the cycle resolved) just as
    an ST re-resolves (which locks the cycle, then supersedes the run). Both must take the
    cycle and the run in one order, or PostgreSQL kills one of them as a deadlock.

    The interleaving is made certain: this session takes the cycle's lock as cycle_resolve's
    first statement does, the worker's run_advance starts, and once it waits, cycle_resolve
    goes on in the same transaction."""
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    advance = pipeline.run_advance
    # Every chunk done, the last advance not yet made.
    monkeypatch.setattr(pipeline, "run_advance", lambda **kwargs: None)
    while chunk := StepChunk.objects.filter(run=run, status=ChunkStatus.PENDING).first():
        assert pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE)
    assert ResolutionRun.objects.get(pk=run.pk).status == RunStatus.RUNNING  # not finished yet

    errors: list[Exception] = []
    with transaction.atomic():
        pipeline._lock_cycle(month.cycle)
        worker, result = in_thread(lambda: advance(run_id=run.pk, now=AFTER_DEADLINE))
        poll(lambda: lock_waiters() or not worker.is_alive())
        try:
            pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
        except Exception as exc:  # a deadlock victim, reported below
            errors.append(exc)
    worker.join(30)
    errors += [r for r in result if isinstance(r, Exception)]
    assert not errors


# The second review: the sweeper held the cycle's row while it waited for a running chunk (the
# run's row, FOR UPDATE behind the chunk's FOR SHARE), so every minute an ST's override,
# re-resolve or release of that cycle waited for the chunk in flight. Now it never waits.
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("sweep", [False, True], ids=["no-sweep", "sweep-during-chunk"])
def test_an_override_does_not_wait_for_a_chunk_in_flight(
    month: DemoMonth,
    gate: Gate,
    sweep: bool,
) -> None:
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(run, "awards")
    chunk = pending(run, "awards")[0]
    worker, _ = held(gate, lambda: pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE))
    threads = [worker]
    if sweep:
        later = AFTER_DEADLINE + pipeline.STALE_AFTER + dt.timedelta(seconds=1)
        sweeper, _ = in_thread(lambda: pipeline.pipeline_sweep(now=later))
        threads.append(sweeper)
        # The sweeper neither waits for the chunk in flight nor holds the cycle meanwhile.
        assert poll(lambda: not sweeper.is_alive(), seconds=3), "the sweeper waits"
    outcome = Outcome.objects.filter(cycle=month.cycle, overridable="xp").first()
    assert outcome is not None
    override, result = in_thread(
        lambda: pipeline.outcome_override(outcome=outcome, by=month.st, note="n", xp=Decimal(1))
    )
    threads.append(override)
    try:
        # The override needs no row the chunk holds: it should be done at once.
        assert poll(lambda: not override.is_alive(), seconds=3), "the ST's override is blocked"
    finally:
        gate.open.set()
        for thread in threads:
            thread.join(30)
