from __future__ import annotations

import logging

from celery import shared_task

from . import services

log = logging.getLogger(__name__)


@shared_task
def close_due_cycles() -> list[int]:
    """Beat, every minute: close the cycles whose deadline has passed (DT-01). Idempotent."""
    closed = services.cycles_close_due()
    if closed:
        log.info("Closed %d cycle(s) at their deadline: %s", len(closed), closed)
    return closed
