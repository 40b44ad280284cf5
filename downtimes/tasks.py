"""The downtimes app's periodic work, run by beat (chronicle/celery.py's beat_schedule).

Thin: each task calls one idempotent service (keyed e-mails), so a redelivered or overlapping
run sends nothing twice.
"""

from __future__ import annotations

import logging

from celery import shared_task

from .services import pipeline, submissions

log = logging.getLogger(__name__)


@shared_task
def send_downtime_reminders() -> int:
    """DT-01: remind players who have not submitted, 48 hours before the deadline."""
    count = submissions.reminders_send()
    if count:
        log.info("Downtime reminders queued: %d", count)
    return count


@shared_task
def resolve_chunk(chunk_id: int) -> bool:
    """One chunk of one resolution step (DT-10). Idempotent: a redelivered message, or a second
    worker, finds the chunk done or locked and returns False."""
    return pipeline.chunk_run(chunk_id=chunk_id)


@shared_task
def sweep_pipeline() -> int:
    """Beat, every minute: the run records are the truth; enqueue again what no worker did."""
    again = pipeline.pipeline_sweep()
    if again:
        log.info("Pipeline sweeper enqueued %d chunk(s) again", again)
    return again


@shared_task
def send_cycle_summaries(cycle_id: int) -> int:
    """After a release: the players' summary e-mails, keyed, in batches."""
    sent = pipeline.summaries_send(cycle_id=cycle_id)
    # More to send after a batch that got through: go on. A batch that sent nothing (the mail
    # server is down) leaves the rest to the sweeper, a few minutes later.
    if sent and pipeline.summaries_pending(cycle_id=cycle_id):
        send_cycle_summaries.delay(cycle_id)
    return sent
