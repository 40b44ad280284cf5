"""The downtimes app's periodic work, run by beat (chronicle/celery.py's beat_schedule).

Thin: each task calls one idempotent service (keyed e-mails), so a redelivered or overlapping
run sends nothing twice.
"""

from __future__ import annotations

import logging

from celery import shared_task

from .services import submissions

log = logging.getLogger(__name__)


@shared_task
def send_downtime_reminders() -> int:
    """DT-01: remind players who have not submitted, 48 hours before the deadline."""
    count = submissions.reminders_send()
    if count:
        log.info("Downtime reminders queued: %d", count)
    return count
