"""Two worker processes on two queue sets resolve one cycle exactly once (issue 15: the
deployment grows past one machine, README "Growing past one machine").

Worker A consumes only `pipeline`; worker B consumes `celery,pipeline,mail`, as two hosts given
different work would. Both compete for the resolution's chunks (chunk size 2: many chunks per
step). Every chunk is also sent a second time while it is pending, as a redelivery or the
sweeper would, so that the two processes race for the same chunk, not only for the queue.

The month (tests/pipeline/demo_month.py) is first resolved inline and released for the
expected state, in a transaction rolled back; then it is built again and taken through the
queues: the deadline closes it on `celery` (beat's task, worker B), the storyteller resolves it
on `pipeline` (A and B), releases it, and the players' summaries go out on `mail` (B).

Exactly once: every chunk done by one committed attempt; the workers' logs say that every
chunk returned True once in all (each duplicate returned False), and that each worker did some;
the released state (outcomes, ledgers, havens, notifications: `digest`) is the inline one; the
release wrote the XP entries its plan announced, once, and a second release writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

import pytest
import redis
from celery import current_app
from django.db import transaction
from django.db.models import Sum

from characters.models import XpEntry
from chronicle.celery import MAIL_QUEUE, PIPELINE_QUEUE, QUEUES
from chronicle.models import CycleStatus
from downtimes.models import ChunkStatus, StepChunk
from downtimes.services import pipeline

from .demo_month import build_month
from .digest import dump
from .workers import RUN_DEADLINE, Worker, assert_once, resolved_inline, run_done, wait_for

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
]

# Extra players (demo_month's `extraNNN`) for more chunks per step: with chunk size 2, about 8
# chunks for each character step.
EXTRA_PLAYERS = 8
RESOLVE_CHUNK = "downtimes.tasks.resolve_chunk"
# Celery's INFO line for a finished task: its name, id and return value.
SUCCEEDED = re.compile(r"Task (?P<task>[\w.]+)\[[\w-]+\] succeeded in [\d.e-]+s: (?P<value>.+)$")


def returns(worker: Worker, task: str) -> list[str]:
    """What `task` returned each time this worker ran it, from the worker's log."""
    return [
        m.group("value")
        for line in worker.log.read_text().splitlines()
        if (m := SUCCEEDED.search(line)) and m.group("task") == task
    ]


def test_two_workers_on_two_queue_sets_resolve_a_cycle_exactly_once(
    postgres: None, chunked: None, broker: str, workers: Callable[..., Worker]
) -> None:
    a = workers("a", queues=PIPELINE_QUEUE, wait=False)
    b = workers("b", queues=",".join(QUEUES), wait=False)
    # While they start: the expected state, the month resolved and released in this process,
    # in a transaction rolled back. Nothing of it stays, and what it enqueues on commit (its
    # chunks, the summaries) is never sent.
    with transaction.atomic():
        expected = resolved_inline(extra_players=EXTRA_PLAYERS).lines
        transaction.set_rollback(True)
    assert any(line.startswith("outcome") for line in expected)
    month = build_month(extra_players=EXTRA_PLAYERS)
    a.wait_ready()
    b.wait_ready()

    # The deadline (March 2024) is long past: beat's task closes the cycle, on `celery`.
    current_app.send_task("chronicle.tasks.close_due_cycles")
    wait_for(
        lambda: returns(b, "chronicle.tasks.close_due_cycles") == [f"[{month.cycle.pk}]"],
        RUN_DEADLINE,
        "worker B closes the cycle",
    )
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.CLOSED

    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st)
    duplicated: set[int] = set()

    def finished_while_duplicating() -> bool:
        # Each chunk enqueued and still pending gets one more message: A and B race for it.
        pending = StepChunk.objects.filter(
            run=run, status=ChunkStatus.PENDING, enqueued_at__isnull=False
        ).exclude(pk__in=duplicated)
        for pk in pending.values_list("pk", flat=True):
            current_app.send_task(RESOLVE_CHUNK, args=[pk])
            duplicated.add(pk)
        return run_done(run)

    wait_for(finished_while_duplicating, RUN_DEADLINE, "the workers finish the run")
    assert_once(run)
    chunks = StepChunk.objects.filter(run=run).count()
    for step in ("no_downtime", "awards", "notifications"):  # really chunked
        assert StepChunk.objects.filter(run=run, step=step).count() > 2
    assert duplicated, "no chunk was pending long enough to be sent twice"

    # Every message is answered: one True per chunk in all, a False for each duplicate.
    def answered() -> tuple[list[str], list[str]] | None:
        done = returns(a, RESOLVE_CHUNK), returns(b, RESOLVE_CHUNK)
        return done if sum(map(len, done)) == chunks + len(duplicated) else None

    by_a, by_b = wait_for(answered, RUN_DEADLINE, "every resolve_chunk message answered")
    assert sorted(set(by_a + by_b)) == ["False", "True"]
    assert (by_a + by_b).count("True") == chunks
    assert by_a.count("True") > 0 and by_b.count("True") > 0, (by_a, by_b)

    # The release: what the plan announced, written once.
    ledger = XpEntry.objects.filter(chronicle=month.chronicle)
    before = ledger.count(), ledger.aggregate(s=Sum("amount"))["s"] or Decimal(0)
    plan = pipeline.release_plan(cycle=month.cycle)
    assert plan.xp_entries > 0
    month.cycle.refresh_from_db()
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st) is True
    by_workers = dump(month.chronicle)
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st) is False
    after = ledger.count(), ledger.aggregate(s=Sum("amount"))["s"]
    assert (after[0] - before[0], after[1] - before[1]) == (plan.xp_entries, plan.xp_total)
    assert by_workers == expected

    # The players' summaries leave on `mail`, which only worker B consumes.
    wait_for(
        lambda: not pipeline.summaries_pending(cycle_id=month.cycle.pk),
        RUN_DEADLINE,
        "worker B sends the summaries",
    )
    # The rows are marked sent when the batch commits; the worker logs the task's return just
    # after, so wait for that line too.
    wait_for(
        lambda: returns(b, "downtimes.tasks.send_cycle_summaries"),
        RUN_DEADLINE,
        "worker B logs the summaries task's return",
    )
    assert returns(a, "downtimes.tasks.send_cycle_summaries") == []
    assert "Received task: downtimes.tasks.send_cycle_summaries" not in a.log.read_text()


def test_each_task_goes_to_one_queue(broker: str) -> None:
    """Routing by name, through Redis: one message on the named queue, none on the others."""
    client = redis.Redis.from_url(broker)
    sent = {
        RESOLVE_CHUNK: PIPELINE_QUEUE,
        "chronicle.tasks.send_mail_log": MAIL_QUEUE,
        "downtimes.tasks.send_cycle_summaries": MAIL_QUEUE,
        "chronicle.tasks.close_due_cycles": "celery",
        "downtimes.tasks.sweep_pipeline": "celery",
    }
    for task, queue in sent.items():
        current_app.send_task(task, args=[0] if queue != "celery" else [])
        lengths = {name: client.llen(name) for name in QUEUES}
        assert lengths[queue] == 1 and sum(lengths.values()) == 1, (task, lengths)
        client.delete(queue)
