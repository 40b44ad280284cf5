from __future__ import annotations

import logging

from celery import shared_task

from . import export_jobs, services
from .services import governance, mail

log = logging.getLogger(__name__)


@shared_task
def close_due_cycles() -> list[int]:
    """Beat, every minute: close the cycles whose deadline has passed (DT-01). Idempotent."""
    closed = services.cycles_close_due()
    if closed:
        log.info("Closed %d cycle(s) at their deadline: %s", len(closed), closed)
    return closed


@shared_task
def proposals_close_due() -> list[int]:
    """Beat, every minute: close the decisions whose vote has ended and apply the passed ones
    (GEN-03 / GEN-04). Idempotent: each close locks its proposal and closes an open one only,
    so two workers (or a redelivery) apply a decision once."""
    closed = governance.proposals_close_due()
    if closed:
        log.info("Closed %d decision vote(s) at their deadline: %s", len(closed), closed)
    return closed


@shared_task
def export_chronicle_job(chronicle_id: int, job_id: str) -> None:
    """An admin's download of the whole chronicle: write the export file beside the job's state
    (chronicle.portability). Idempotent: a redelivered job that is done does nothing."""
    export_jobs.export_job_run(chronicle_id=chronicle_id, job_id=job_id)


# --- Mail (chronicle.services.mail): thin, each idempotent -------------------------------------


@shared_task
def send_mail_log(log_id: int) -> bool:
    """One mail log row, sent once (a redelivered message finds it sent or locked)."""
    return mail.mail_send(log_id=log_id)


@shared_task
def sweep_mail() -> int:
    """Beat, every few minutes: failed mails whose retry is due, and queued ones whose task was
    lost, go back to the queue (every kind)."""
    again = mail.mail_sweep()
    if again:
        log.info("Mail sweeper queued %d mail(s) again", again)
    return again


@shared_task
def send_daily_digests() -> int:
    """Beat, hourly: today's digest for everyone who has digest messages owed (once a day)."""
    return mail.digests_send()


@shared_task
def send_password_reset(email: str, domain: str, use_https: bool) -> int:
    """A password-reset request, answered here rather than in the request (issue 17)."""
    return mail.password_reset_send(email=email, domain=domain, use_https=use_https)
