from __future__ import annotations

import logging

from celery import shared_task

from . import export_jobs, services

log = logging.getLogger(__name__)


@shared_task
def close_due_cycles() -> list[int]:
    """Beat, every minute: close the cycles whose deadline has passed (DT-01). Idempotent."""
    closed = services.cycles_close_due()
    if closed:
        log.info("Closed %d cycle(s) at their deadline: %s", len(closed), closed)
    return closed


@shared_task
def export_chronicle_job(chronicle_id: int, job_id: str) -> None:
    """An admin's download of the whole chronicle: write the export file beside the job's state
    (chronicle.portability). Idempotent: a redelivered job that is done does nothing."""
    export_jobs.export_job_run(chronicle_id=chronicle_id, job_id=job_id)
