"""The between-games pipeline (DT-10): close → resolve into a preview → review → release.

Exactly once, whatever happens:
- A resolution is a `ResolutionRun` with one `StepChunk` per task, planned up front. A chunk's
  outcomes and its `done` are written in one transaction, under the chunk's row lock taken with
  SKIP LOCKED: a redelivered message or a second worker finds it locked or done and writes
  nothing, and a worker killed mid-chunk (or a database restart) rolls the chunk back to
  pending.
- The run records, not the broker, are the truth: `pipeline_sweep` (beat, every minute)
  enqueues again every pending chunk of the current step that no worker has finished in a
  while, and moves a run on whose chunks are all done.
- Outcomes are keyed per cycle, step and subject; the release writes ledger entries keyed per
  cycle, step and subject too, and runs once, under the cycle's row lock and a status guard.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext, ngettext

from characters.models import Character
from chronicle.models import Cycle, CycleStatus, CycleTransition, Membership

from ..models import (
    ChunkStatus,
    Outcome,
    OutcomeOverride,
    ResolutionRun,
    RunStatus,
    StepChunk,
)
from .desk import staff_of
from .enqueue import send_after_commit
from .release import effective_xp as effective_xp  # the views' and the API's, as before
from .release import xp_statement
from .release_apply import HAVEN_STEPS as HAVEN_STEPS  # moved (issue 15); callers unchanged
from .release_apply import RECHECKED_STEPS as RECHECKED_STEPS
from .release_apply import PreviewChanged as PreviewChanged
from .release_apply import ReleasePlan as ReleasePlan
from .release_apply import cycle_release as cycle_release
from .release_apply import release_key as release_key
from .release_apply import release_plan as release_plan
from .steps import OUTCOME_POSITION, STEP_BY_NAME, STEPS
from .summaries import SUMMARY_TASK as SUMMARY_TASK  # the tests', as before
from .summaries import _summaries_sweep
from .summaries import public_line as public_line  # the views', the API's and the tasks', as before
from .summaries import summaries_pending as summaries_pending
from .summaries import summaries_send as summaries_send
from .votes import award_tally

log = logging.getLogger(__name__)

CHUNK_TASK = "downtimes.tasks.resolve_chunk"
# A chunk nobody finished this long after it was enqueued is enqueued again. A worker still
# busy with it holds its row lock, so the second message finds nothing to do.
STALE_AFTER = dt.timedelta(seconds=60)
OUTCOME_FIELDS = [
    "run",
    "position",
    "player",
    "character",
    "title",
    "explanation",
    "public_text",
    "texts",
    "xp",
    "value",
    "readers",
    "overridable",
]


def _now(now: dt.datetime | None) -> dt.datetime:
    return now or timezone.now()


def _require_staff(cycle: Cycle, by: User | None) -> None:
    if by is None:
        return  # the deadline task and the sweeper act for the chronicle
    if not staff_of(cycle, by):
        raise PermissionDenied(gettext("Only the chronicle's storytellers may run its downtime."))


def _lock_cycle(cycle: Cycle | int) -> Cycle:
    pk = cycle if isinstance(cycle, int) else cycle.pk
    # Only the cycle's row: locking its chronicle and game too would serialize unrelated work.
    # NO KEY UPDATE, because a chunk's outcome INSERT checks its cycle foreign key with KEY
    # SHARE: FOR UPDATE here made re-resolving during a chunk a deadlock (the chunk waiting on
    # the cycle, cycle_resolve waiting on the chunk's SHARE lock of the run it supersedes).
    return (
        Cycle.objects.select_for_update(of=("self",), no_key=True)
        .select_related("chronicle", "game")
        .get(pk=pk)
    )


def _share_run(run_id: int) -> bool:
    """Hold the run's row in SHARE mode for the chunk's transaction: chunks of one run go on
    side by side, but superseding the run (an UPDATE) waits for them, so an old run's chunk
    never commits outcomes after a new run started. True if the run is still running."""
    if connection.vendor != "postgresql":
        # SQLite serializes every write transaction already.
        return ResolutionRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT status FROM downtimes_resolutionrun WHERE id = %s FOR SHARE", [run_id]
        )
        row = cursor.fetchone()
    return row is not None and row[0] == RunStatus.RUNNING


def _transition(cycle: Cycle, status: str, now: dt.datetime, by: User | None) -> None:
    # Re-resolving enters "resolved" again: the first time is the audit trail's row.
    CycleTransition.objects.bulk_create(
        [CycleTransition(cycle=cycle, status=status, at=now, by=by)], ignore_conflicts=True
    )


def _enqueue(chunk_ids: Iterable[int]) -> None:
    for pk in chunk_ids:
        send_after_commit(CHUNK_TASK, pk)


# --- Close and resolve -------------------------------------------------------------------------


def _ranges(ids: list[int], size: int) -> list[tuple[int, int]]:
    return [(ids[i], ids[min(i + size, len(ids)) - 1]) for i in range(0, len(ids), size)]


def _plan(cycle: Cycle, size: int) -> dict[str, list[tuple[int, int]]]:
    """Each step's chunks: id ranges of at most `size` subjects (two queries in all)."""
    characters = list(
        Character.objects.filter(chronicle_id=cycle.chronicle_id)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    players = sorted(
        set(
            Membership.objects.filter(chronicle_id=cycle.chronicle_id).values_list(
                "user_id", flat=True
            )
        )
    )
    ids = {"character": characters, "player": players}
    return {
        step.name: [(0, 0)] if step.unit == "whole" else _ranges(ids[step.unit], size) or []
        for step in STEPS
    }


@transaction.atomic
def cycle_resolve(
    *, cycle: Cycle, by: User | None, now: dt.datetime | None = None
) -> ResolutionRun:
    """Start resolving the closed cycle into a preview, or re-resolve it after a change: a new
    run supersedes the last (whose outcomes go when this one finishes; overrides stay)."""
    now = _now(now)
    cycle = _lock_cycle(cycle)
    _require_staff(cycle, by)
    if cycle.status == CycleStatus.OPEN:
        raise ValidationError(
            gettext(
                "The cycle is still open: close it first, so that submissions are locked (DT-10)."
            )
        )
    if cycle.status == CycleStatus.RELEASED:
        raise ValidationError(
            gettext("The cycle's results are already released; nothing to resolve.")
        )
    ResolutionRun.objects.filter(cycle=cycle, status=RunStatus.RUNNING).update(
        status=RunStatus.SUPERSEDED, finished_at=now
    )
    number = (ResolutionRun.objects.filter(cycle=cycle).aggregate(n=Max("number"))["n"] or 0) + 1
    size = int(getattr(settings, "CHRONICLE_PIPELINE_CHUNK_SIZE", 500))
    run = ResolutionRun.objects.create(
        cycle=cycle,
        number=number,
        chunk_size=size,
        started_by=by,
        started_at=now,
        # Once per run: the ballots are the cycle's, not a chunk's (closed, so they are locked).
        tally=award_tally(cycle).to_json(),
    )
    plan = _plan(cycle, size)
    chunks = [
        StepChunk(run=run, position=position, step=step.name, number=n, lo=lo, hi=hi)
        for position, step in enumerate(STEPS)
        for n, (lo, hi) in enumerate(plan[step.name])
    ]
    StepChunk.objects.bulk_create(chunks)
    if cycle.status == CycleStatus.RESOLVED:
        # The preview is being recomputed: until it is done there is nothing to release.
        Cycle.objects.filter(pk=cycle.pk).update(status=CycleStatus.CLOSED)
    _advance(run, now)
    return run


def cycle_close_now(*, cycle: Cycle, by: User, now: dt.datetime | None = None) -> bool:
    """An ST closes the cycle before its deadline (DT-10: submissions lock)."""
    from chronicle.services import cycle_close

    _require_staff(cycle, by)
    return cycle_close(cycle=cycle, by=by, now=now)


def _advance(run: ResolutionRun, now: dt.datetime) -> None:
    """Move the run on: enqueue the next step's chunks once every chunk before them is done;
    finish the run when all are. Call under the run's row lock."""
    pending = (
        StepChunk.objects.filter(run=run)
        .exclude(status=ChunkStatus.DONE)
        .order_by("position", "number")
    )
    first = pending.first()
    if first is None:
        _finish(run, now)
        return
    fresh = list(
        pending.filter(position=first.position, enqueued_at__isnull=True).values_list(
            "pk", flat=True
        )
    )
    if fresh:
        StepChunk.objects.filter(pk__in=fresh).update(enqueued_at=now)
        _enqueue(fresh)


def _finish(run: ResolutionRun, now: dt.datetime) -> None:
    cycle = _lock_cycle(run.cycle_id)
    Outcome.objects.filter(cycle=cycle).exclude(run=run).delete()
    ResolutionRun.objects.filter(pk=run.pk).update(status=RunStatus.DONE, finished_at=now)
    if cycle.status == CycleStatus.CLOSED:
        Cycle.objects.filter(pk=cycle.pk).update(status=CycleStatus.RESOLVED, resolved_at=now)
        _transition(cycle, CycleStatus.RESOLVED, now, run.started_by)


def _lock_run(run_id: int) -> ResolutionRun | None:
    """The run's row, locked after its cycle's: cycle_resolve takes the cycle and then
    supersedes the run, and finishing a run (`_finish`) marks the cycle resolved, so both
    orders must be the same or a run finishing during a re-resolve is a deadlock."""
    cycle_id = ResolutionRun.objects.filter(pk=run_id).values_list("cycle_id", flat=True).first()
    if cycle_id is None:
        return None
    _lock_cycle(cycle_id)
    return ResolutionRun.objects.select_for_update().filter(pk=run_id).first()


@transaction.atomic
def run_advance(*, run_id: int, now: dt.datetime | None = None) -> None:
    run = _lock_run(run_id)
    if run is None or run.status != RunStatus.RUNNING:
        return
    _advance(run, _now(now))


def _test_hold(step: str) -> None:
    """A test hook, never set in production: the fault tests (tests/pipeline/
    test_worker_faults.py) give a worker CHRONICLE_PIPELINE_TEST_HOLD = {step: path}. A chunk
    of that step then waits, its outcomes written but not committed, while the file at `path`
    exists (ten minutes at most), so the test can kill the worker or restart PostgreSQL right
    there, and lets the chunk go by removing the file."""
    path = getattr(settings, "CHRONICLE_PIPELINE_TEST_HOLD", {}).get(step)
    deadline = time.monotonic() + 600
    while path and os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)


MAX_ATTEMPTS = 3


def _chunk_failed(chunk_id: int, exc: Exception, now: dt.datetime) -> None:
    """Record a failure that retrying the connection will not cure (bad data, a bug): the
    sweeper tries the chunk again, and after `MAX_ATTEMPTS` the chunk and its run fail, with
    the error on the cycle page, rather than a progress bar that never moves."""
    with transaction.atomic():
        chunk = StepChunk.objects.select_for_update(of=("self",)).filter(pk=chunk_id).first()
        if chunk is None or chunk.status != ChunkStatus.PENDING:
            return
        attempts = chunk.attempts + 1
        failed = attempts >= MAX_ATTEMPTS
        StepChunk.objects.filter(pk=chunk_id).update(
            attempts=attempts,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            status=ChunkStatus.FAILED if failed else ChunkStatus.PENDING,
            finished_at=now if failed else None,
        )
        if failed:
            ResolutionRun.objects.filter(pk=chunk.run_id, status=RunStatus.RUNNING).update(
                status=RunStatus.FAILED, finished_at=now
            )


def chunk_run(*, chunk_id: int, now: dt.datetime | None = None) -> bool:
    """Compute one chunk's outcomes and mark it done, in one transaction; then move the run
    on. False when there was nothing to do (done, superseded, or another worker has it), or
    when the step failed on its data (recorded on the chunk; see `_chunk_failed`). A lost
    database connection is raised, for the task's retry."""
    now = _now(now)
    try:
        with transaction.atomic():
            chunk = (
                StepChunk.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("run__cycle__chronicle", "run__cycle__game")
                .filter(pk=chunk_id, status=ChunkStatus.PENDING)
                .first()
            )
            if chunk is None or not _share_run(chunk.run_id):
                return False
            cycle = chunk.run.cycle
            # The awards step reads the run's tally, counted once in `cycle_resolve`.
            outcomes = STEP_BY_NAME[chunk.step].compute(cycle, chunk.lo, chunk.hi, now)
            for outcome in outcomes:
                outcome.cycle = cycle
                outcome.run = chunk.run
                outcome.position = OUTCOME_POSITION[outcome.step]
                # Names are the players' to choose: a long one must not fail the chunk.
                outcome.title = outcome.title[:200]
            Outcome.objects.bulk_create(
                outcomes,
                update_conflicts=True,
                unique_fields=["cycle", "step", "subject"],
                update_fields=OUTCOME_FIELDS,
                batch_size=500,
            )
            _test_hold(chunk.step)
            StepChunk.objects.filter(pk=chunk.pk).update(
                status=ChunkStatus.DONE,
                finished_at=now,
                outcomes=len(outcomes),
                attempts=chunk.attempts + 1,
                error="",
            )
    except (OperationalError, InterfaceError):
        raise
    except Exception as exc:  # noqa: BLE001 - any other failure is the chunk's, recorded
        log.exception("Resolution chunk %s failed", chunk_id)
        _chunk_failed(chunk_id, exc, now)
        return False
    run_advance(run_id=chunk.run_id, now=now)
    return True


def pipeline_sweep(*, now: dt.datetime | None = None) -> int:
    """The run records are the truth: enqueue again every chunk of a running run that is
    pending and was enqueued more than `STALE_AFTER` ago (its message was lost, or its worker
    died), and move on runs whose enqueued chunks are all done. Returns the chunks enqueued.

    It never waits for a lock: a chunk in flight holds its own row and its run's (SHARE), an
    ST's action holds the cycle; what is busy now is looked at again in a minute."""
    now = _now(now)
    again = 0
    for run_id, cycle_id in ResolutionRun.objects.filter(status=RunStatus.RUNNING).values_list(
        "pk", "cycle_id"
    ):
        with transaction.atomic():
            stale = list(
                StepChunk.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(
                    run_id=run_id,
                    run__status=RunStatus.RUNNING,
                    status=ChunkStatus.PENDING,
                    enqueued_at__lt=now - STALE_AFTER,
                )
                .values_list("pk", flat=True)
            )
            if stale:
                StepChunk.objects.filter(pk__in=stale).update(enqueued_at=now)
                _enqueue(stale)
                again += len(stale)
        with transaction.atomic():
            # The same order as everywhere (cycle, then run), without waiting.
            cycle = list(
                Cycle.objects.select_for_update(skip_locked=True, no_key=True, of=("self",))
                .filter(pk=cycle_id)
                .values_list("pk", flat=True)
            )
            run = (
                ResolutionRun.objects.select_for_update(skip_locked=True)
                .filter(pk=run_id, status=RunStatus.RUNNING)
                .first()
                if cycle
                else None
            )
            if run is not None:
                _advance(run, now)
    with transaction.atomic():
        _summaries_sweep(now)
    return again


def cycle_resolve_inline(
    *, cycle: Cycle, by: User | None, now: dt.datetime | None = None
) -> ResolutionRun:
    """Resolve in this process, chunk by chunk, with the same services the worker runs: for
    the demo, the tests, and a chronicle without a worker. Messages it enqueues find their
    chunks done."""
    run = cycle_resolve(cycle=cycle, by=by, now=now)
    while True:
        chunk_ids = list(
            StepChunk.objects.filter(run=run, status=ChunkStatus.PENDING)
            .order_by("position", "number")
            .values_list("pk", flat=True)[:1]
        )
        if not chunk_ids:
            break
        if not chunk_run(chunk_id=chunk_ids[0], now=now):
            break
    run.refresh_from_db()
    return run


# --- Progress and review -----------------------------------------------------------------------


@dataclass(frozen=True)
class StepProgress:
    name: str
    label: str
    done: int
    total: int


@dataclass(frozen=True)
class Progress:
    run: ResolutionRun | None
    done: int
    total: int
    steps: list[StepProgress]
    errors: list[str] = field(default_factory=list)

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0

    @property
    def running(self) -> bool:
        return self.run is not None and self.run.status == RunStatus.RUNNING


STEP_LABELS = {step.name: format_lazy("{} ({})", step.label, step.rule) for step in STEPS}


def progress_of(
    run: ResolutionRun, counts: dict[str, tuple[int, int]], errors: list[str] | None = None
) -> Progress:
    """A run's progress from its (done, total) chunks per step; shared by `run_progress` and
    the list of cycles (`selectors.progress_by_cycle`)."""
    steps = [
        StepProgress(
            name=step.name,
            label=str(STEP_LABELS[step.name]),
            done=counts.get(step.name, (0, 0))[0],
            total=counts.get(step.name, (0, 0))[1],
        )
        for step in STEPS
    ]
    return Progress(
        run=run,
        done=sum(s.done for s in steps),
        total=sum(s.total for s in steps),
        steps=steps,
        errors=errors or [],
    )


def run_progress(*, cycle: Cycle) -> Progress:
    """The latest run's chunks done per step, and its chunks' failures (three queries)."""
    run = ResolutionRun.objects.filter(cycle=cycle).order_by("-number").first()
    if run is None:
        return Progress(run=None, done=0, total=0, steps=[])
    counts = {
        row["step"]: (row["done"], row["total"])
        for row in StepChunk.objects.filter(run=run)
        .values("step")
        .annotate(total=Count("pk"), done=Count("pk", filter=Q(status=ChunkStatus.DONE)))
    }
    errors = [
        (
            ngettext(
                "%(step)s, chunk %(chunk)s: failed %(attempts)s time and stopped: %(error)s. "
                "Correct what it names and resolve again.",
                "%(step)s, chunk %(chunk)s: failed %(attempts)s times and stopped: %(error)s. "
                "Correct what it names and resolve again.",
                attempts,
            )
            if status == ChunkStatus.FAILED
            else gettext(
                "%(step)s, chunk %(chunk)s: failed (%(error)s); it is tried again within a minute."
            )
        )
        % {
            "step": STEP_LABELS.get(step, step),
            "chunk": number + 1,
            "attempts": attempts,
            "error": error,
        }
        for step, number, status, attempts, error in StepChunk.objects.filter(run=run)
        .exclude(error="")
        .order_by("position", "number")
        .values_list("step", "number", "status", "attempts", "error")
    ]
    return progress_of(run, counts, errors)


def outcomes_for(*, cycle: Cycle) -> QuerySet[Outcome]:
    return (
        Outcome.objects.filter(cycle=cycle)
        .select_related("player", "character")
        .order_by("position", "subject")
    )


def overrides_for(*, cycle: Cycle) -> dict[tuple[str, str], OutcomeOverride]:
    return {
        (o.step, o.subject): o
        for o in OutcomeOverride.objects.filter(cycle=cycle).select_related("by")
    }


@transaction.atomic
def outcome_override(
    *,
    outcome: Outcome,
    by: User,
    note: str,
    xp: Decimal | None = None,
    found: bool | None = None,
    now: dt.datetime | None = None,
) -> OutcomeOverride:
    """An ST changes one outcome of the preview, with a note: the XP of an award, or whether a
    search found its target. Kept through re-resolving; applied by the release."""
    now = _now(now)
    cycle = _lock_cycle(outcome.cycle_id)
    _require_staff(cycle, by)
    if cycle.status == CycleStatus.RELEASED:
        raise ValidationError(gettext("The results are released; record a correction instead."))
    note = note.strip()
    if not note:
        raise ValidationError(
            {"note": gettext("Say why you change this outcome; the note is kept.")}
        )
    if outcome.overridable == "xp":
        if xp is None:
            raise ValidationError({"xp": gettext("Give the XP this award should pay.")})
        if xp < 0 or xp * 2 != int(xp * 2):
            raise ValidationError({"xp": gettext("XP is paid in steps of 0.5, from 0 up.")})
        found = None
    elif outcome.overridable == "found":
        if found is None:
            raise ValidationError({"found": gettext("Say whether the search finds its target.")})
        xp = None
    else:
        raise ValidationError(
            gettext("This outcome cannot be overridden; change its inputs instead.")
        )
    override, _ = OutcomeOverride.objects.update_or_create(
        cycle=cycle,
        step=outcome.step,
        subject=outcome.subject,
        defaults={"xp": xp, "found": found, "note": note, "by": by, "at": now},
    )
    return override


@transaction.atomic
def outcome_override_remove(*, outcome: Outcome, by: User) -> bool:
    cycle = _lock_cycle(outcome.cycle_id)
    _require_staff(cycle, by)
    if cycle.status == CycleStatus.RELEASED:
        raise ValidationError(gettext("The results are released; record a correction instead."))
    deleted, _ = OutcomeOverride.objects.filter(
        cycle=cycle, step=outcome.step, subject=outcome.subject
    ).delete()
    return bool(deleted)


@transaction.atomic
def cycle_settle_on_paper(*, cycle: Cycle, by: User | None, now: dt.datetime | None = None) -> bool:
    """A cycle the STs resolved before the chronicle moved into Chronicle (its XP entered from
    the paper records): mark it released without computing or paying anything, so that nobody
    resolves it a second time. Only for a closed cycle never resolved here; False otherwise."""
    now = _now(now)
    cycle = _lock_cycle(cycle)
    _require_staff(cycle, by)
    if cycle.status != CycleStatus.CLOSED or ResolutionRun.objects.filter(cycle=cycle).exists():
        return False
    Cycle.objects.filter(pk=cycle.pk).update(status=CycleStatus.RELEASED, released_at=now)
    _transition(cycle, CycleStatus.RELEASED, now, by)
    return True


def results_for(*, user: User, cycle: Cycle | None = None) -> QuerySet[Outcome]:
    """The released outcomes this player reads."""
    qs = Outcome.objects.filter(
        reader_rows__player=user, cycle__status=CycleStatus.RELEASED
    ).select_related("cycle__game", "character")
    if cycle is not None:
        qs = qs.filter(cycle=cycle)
    return qs.order_by("-cycle__deadline_at", "position", "subject")


def xp_report(*, cycle: Cycle) -> list[dict[str, Any]]:
    """Every XP line of the cycle with its reason and its group, for the CSV and the API: the
    release's lines first (the same as the release plan counts, `release.xp_statement`), then
    each group of ledger entries of the cycle outside the release (purchases charged at
    sign-off, XP-01)."""
    return [
        {
            "player": line.player,
            "character": line.character,
            "xp": line.xp,
            "reason": line.reason,
            "kind": line.kind,
            "note": line.note,
            "group": group.label,
            "in_release": group.in_release,
        }
        for group in xp_statement(cycle=cycle).groups
        for line in group.lines
    ]
