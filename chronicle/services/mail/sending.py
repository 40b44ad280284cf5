"""Sending the mail log's rows: one worker task per row, the sweeper that retries every kind,
and an admin's Retry.

A row is sent while its lock is held (SELECT … FOR UPDATE SKIP LOCKED, still queued) and marked
sent in the same transaction, so two workers never both send it, and a worker killed mid-send
leaves it queued for the sweeper. The one window left is a kill between the mail server's
"accepted" and the commit: that mail goes twice. At least once, never lost.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from celery import current_app
from django.conf import settings
from django.core import mail
from django.db import transaction
from django.utils import timezone

from ...models import MailLog, MailStatus

log = logging.getLogger(__name__)

MAIL_TASK = "chronicle.tasks.send_mail_log"
# A queued row not sent by then had its task lost (a broker down at commit, a worker killed):
# the sweeper queues it again. Well above a busy queue's wait, so it rarely sends a task twice
# (and a second task finds the row sent).
QUEUED_LEASE = dt.timedelta(minutes=10)
MAX_ATTEMPTS = 8
RETRY_BASE = dt.timedelta(minutes=2)
RETRY_CAP = dt.timedelta(hours=6)
SWEEP_BATCH = 500
REASON_LENGTH = 500


def retry_delay(attempts: int) -> dt.timedelta | None:
    """How long after its `attempts`-th failure a mail is tried again: 2, 4, 8 … minutes, at
    most 6 hours; None after MAX_ATTEMPTS (about four hours of trying), when the row stays
    failed until an admin presses Retry."""
    if attempts >= MAX_ATTEMPTS:
        return None
    return min(RETRY_BASE * 2 ** max(attempts - 1, 0), RETRY_CAP)


def run_in_worker(task: str, args: list[Any], inline: Callable[[], object]) -> None:
    """Hand `task` to the broker. With CHRONICLE_MAIL_EAGER (the test settings) run `inline`,
    the task's own body, here instead: tests read Django's outbox without a worker."""
    if getattr(settings, "CHRONICLE_MAIL_EAGER", False):
        inline()
    else:
        current_app.send_task(task, args=args)


def after_commit(task: str, args: list[Any], inline: Callable[[], object]) -> None:
    """`run_in_worker` once the transaction commits. Robust: a broker that is down must not turn
    committed work into a 500; what it leaves behind (a queued row) is the sweeper's."""

    # A function, not a functools.partial: Django logs a robust hook's failure by the hook's
    # __qualname__, which a partial lacks (the log line itself would raise).
    def hand_over() -> None:
        run_in_worker(task, args, inline)

    transaction.on_commit(hand_over, robust=True)


def enqueue_after_commit(log_id: int) -> None:
    after_commit(MAIL_TASK, [log_id], partial(mail_send, log_id=log_id))


def mail_send(*, log_id: int) -> bool:
    """The worker's task: send one queued row, once. False when it is not queued any more
    (sent, or another worker holds it) or the mail server refused it (the row says why)."""
    with transaction.atomic():
        row = (
            MailLog.objects.select_for_update(skip_locked=True)
            .filter(pk=log_id, status=MailStatus.QUEUED)
            .first()
        )
        if row is None:
            return False
        return send_claimed(row)


def send_claimed(row: MailLog) -> bool:
    """Send a row the caller holds (locked, or created in its own open transaction) and record
    what happened. A failure of the mail server is recorded, never raised: the row is failed,
    with the reason, and its next try after the backoff."""
    now = timezone.now()
    row.attempts += 1
    try:
        # Looked up on the module at call time, so a test's patch of django.core.mail reaches it.
        mail.send_mail(row.subject, row.body, settings.DEFAULT_FROM_EMAIL, [row.address])
    except Exception as exc:  # noqa: BLE001 - anything the mail server says is the row's reason
        delay = retry_delay(row.attempts)
        row.status = MailStatus.FAILED
        row.reason = f"{type(exc).__name__}: {exc}"[:REASON_LENGTH]
        row.next_attempt_at = now + delay if delay is not None else None
        row.save(update_fields=["attempts", "status", "reason", "next_attempt_at"])
        log.warning("Mail %s failed (attempt %d): %s", row.pk, row.attempts, row.reason)
        return False
    row.status = MailStatus.SENT
    row.sent_at = now
    row.reason = ""
    row.next_attempt_at = None
    row.body = ""
    row.save(update_fields=["attempts", "status", "sent_at", "reason", "next_attempt_at", "body"])
    return True


def mail_sweep(*, now: dt.datetime | None = None) -> int:
    """Beat, every few minutes, for every kind: rows whose next try is due (failed ones after
    their backoff, queued ones past their lease) are queued again, and a task is sent for each
    after commit. Rows a worker is sending right now are locked, so skipped. Returns how many."""
    now = now or timezone.now()
    with transaction.atomic():
        due = list(
            MailLog.objects.select_for_update(skip_locked=True)
            .filter(
                status__in=(MailStatus.QUEUED, MailStatus.FAILED),
                next_attempt_at__lte=now,
            )
            .order_by("next_attempt_at", "pk")
            .values_list("pk", flat=True)[:SWEEP_BATCH]
        )
        if due:
            MailLog.objects.filter(pk__in=due).update(
                status=MailStatus.QUEUED, next_attempt_at=now + QUEUED_LEASE
            )
            for pk in due:
                enqueue_after_commit(pk)
    return len(due)


@transaction.atomic
def mail_retry(*, row: MailLog, now: dt.datetime | None = None) -> bool:
    """An admin's Retry on a failed row (even one that gave up): queued again at once. False
    when it is not failed any more (the sweeper, or another admin, was first). The caller has
    checked who may (chronicle.access.mail_log_entry_for)."""
    now = now or timezone.now()
    changed = MailLog.objects.filter(pk=row.pk, status=MailStatus.FAILED).update(
        status=MailStatus.QUEUED, next_attempt_at=now + QUEUED_LEASE
    )
    if changed:
        enqueue_after_commit(row.pk)
    return bool(changed)
