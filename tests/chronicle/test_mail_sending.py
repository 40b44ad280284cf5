"""Sending the mail log: a mail server that refuses leaves a failed row (never an error for the
caller), the sweeper retries it with backoff for every kind, a lost task is caught up, and two
workers claiming one row send it once. Only the e-mail backend is replaced (the outside world);
the database is the real one."""

from __future__ import annotations

import datetime as dt
import smtplib
import threading
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
import time_machine
from celery import Celery
from django.core import mail as outbox
from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.backends.locmem import EmailBackend as LocmemBackend
from django.db import connections

from chronicle.models import MailKind, MailLog, MailStatus
from chronicle.services import mail
from tests.conftest import World

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 12, 15, 0, tzinfo=dt.UTC)
MINUTE = dt.timedelta(minutes=1)


class RefusingBackend(BaseEmailBackend):
    """A mail server that is down."""

    def send_messages(self, email_messages: Any) -> int:
        raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")


REFUSING = "tests.chronicle.test_mail_sending.RefusingBackend"


@pytest.fixture
def frozen() -> Iterator[Any]:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


def _queued(world: World, kind: str = MailKind.RECEIPT, key: str = "receipt:1") -> MailLog:
    delivery = mail.deliver(
        kind=kind,
        user=world.users["player_alice"],
        chronicle=world.chronicle,
        key=key,
        subject="Downtime received",
        body="Your downtime is in.",
    )
    assert delivery.log is not None
    return delivery.log


@pytest.mark.parametrize(
    ("attempts", "minutes"),
    [
        pytest.param(1, 2, id="first-failure-2-minutes"),
        pytest.param(2, 4, id="second-4"),
        pytest.param(5, 32, id="fifth-32"),
        pytest.param(7, 128, id="seventh-128"),
    ],
)
def test_backoff_doubles(attempts: int, minutes: int) -> None:
    assert mail.retry_delay(attempts) == dt.timedelta(minutes=minutes)


def test_backoff_gives_up_after_the_last_attempt() -> None:
    assert mail.retry_delay(mail.MAX_ATTEMPTS) is None


def test_a_refusing_mail_server_leaves_a_failed_row_and_no_error(
    world: World, settings: Any, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.EMAIL_BACKEND = REFUSING
    with django_capture_on_commit_callbacks(execute=True):
        row = _queued(world)  # no exception reaches the caller
    row.refresh_from_db()
    assert (row.status, row.attempts) == (MailStatus.FAILED, 1)
    assert "SMTPServerDisconnected" in row.reason
    assert row.next_attempt_at == NOW + 2 * MINUTE
    assert row.body == "Your downtime is in."  # kept for the retry


def test_the_sweeper_retries_with_backoff_then_sends(
    world: World, settings: Any, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.EMAIL_BACKEND = REFUSING
    with django_capture_on_commit_callbacks(execute=True):
        row = _queued(world, kind=MailKind.TORPOR, key="torpor-hold-ended:1")
    # Not due yet: the sweeper leaves it.
    frozen.move_to(NOW + MINUTE)
    with django_capture_on_commit_callbacks(execute=True):
        assert mail.mail_sweep() == 0
    # Due: tried again, refused again, the wait doubles.
    frozen.move_to(NOW + 2 * MINUTE)
    with django_capture_on_commit_callbacks(execute=True):
        assert mail.mail_sweep() == 1
    row.refresh_from_db()
    assert (row.status, row.attempts) == (MailStatus.FAILED, 2)
    assert row.next_attempt_at == NOW + 2 * MINUTE + 4 * MINUTE
    # The server is back: the next sweep sends it, once.
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    frozen.move_to(NOW + 6 * MINUTE)
    with django_capture_on_commit_callbacks(execute=True):
        assert mail.mail_sweep() == 1
        assert mail.mail_sweep() == 0
    row.refresh_from_db()
    assert (row.status, row.attempts, row.reason) == (MailStatus.SENT, 3, "")
    assert [m.to for m in outbox.outbox] == [["player_alice@example.com"]]


def test_after_the_last_attempt_only_an_admin_retries(
    world: World, settings: Any, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.EMAIL_BACKEND = REFUSING
    row = _queued(world)
    MailLog.objects.filter(pk=row.pk).update(attempts=mail.MAX_ATTEMPTS - 1)
    assert not mail.mail_send(log_id=row.pk)
    row.refresh_from_db()
    assert (row.status, row.next_attempt_at) == (MailStatus.FAILED, None)
    frozen.move_to(NOW + dt.timedelta(days=2))
    assert mail.mail_sweep() == 0
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    with django_capture_on_commit_callbacks(execute=True):
        assert mail.mail_retry(row=row)
        assert not mail.mail_retry(row=row)  # a second click finds it queued
    row.refresh_from_db()
    assert row.status == MailStatus.SENT and len(outbox.outbox) == 1


def test_a_broker_down_at_commit_leaves_a_queued_row_for_the_sweeper(
    world: World, settings: Any, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from kombu.exceptions import OperationalError as BrokerDown

    settings.CHRONICLE_MAIL_EAGER = False  # through the broker, as in production
    with (
        mock.patch.object(Celery, "send_task", side_effect=BrokerDown("redis is down")),
        django_capture_on_commit_callbacks(execute=True),
    ):
        row = _queued(world)  # the robust hook swallows the broker's error
    row.refresh_from_db()
    assert row.status == MailStatus.QUEUED and outbox.outbox == []
    # Within its lease the row is left alone (its task may just be waiting in the queue).
    frozen.move_to(NOW + mail.QUEUED_LEASE - MINUTE)
    assert mail.mail_sweep() == 0
    frozen.move_to(NOW + mail.QUEUED_LEASE)
    with (
        mock.patch.object(Celery, "send_task") as send_task,
        django_capture_on_commit_callbacks(execute=True),
    ):
        assert mail.mail_sweep() == 1
    send_task.assert_called_once_with("chronicle.tasks.send_mail_log", args=[row.pk])
    assert mail.mail_send(log_id=row.pk)  # what the worker then does
    assert len(outbox.outbox) == 1


def test_a_sent_row_is_not_sent_again_by_a_redelivered_task(
    world: World, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        row = _queued(world)
    assert not mail.mail_send(log_id=row.pk)
    assert len(outbox.outbox) == 1


# --- Two workers, one row (PostgreSQL, real transactions, threads) ---------------------------


class HeldBackend(LocmemBackend):
    """A mail server that holds the first worker's mail until the test lets it go, so the second
    worker arrives while the first still has the row."""

    sending = threading.Event()
    release = threading.Event()

    def send_messages(self, email_messages: Any) -> int:
        HeldBackend.sending.set()
        assert HeldBackend.release.wait(timeout=10), "the test never released the mail"
        return super().send_messages(email_messages)


@pytest.mark.django_db(transaction=True)
def test_two_workers_claiming_one_row_send_it_once(
    postgres: None, world: World, settings: Any
) -> None:
    settings.EMAIL_BACKEND = "tests.chronicle.test_mail_sending.HeldBackend"
    HeldBackend.sending.clear()
    HeldBackend.release.clear()
    row = MailLog.objects.create(  # committed: both workers see it
        recipient=world.users["player_alice"],
        address="player_alice@example.com",
        kind=MailKind.RESULTS,
        subject="Your results",
        body="…",
        status=MailStatus.QUEUED,
        created_at=NOW,
        next_attempt_at=NOW + mail.QUEUED_LEASE,
    )
    results: dict[str, bool] = {}

    def worker(name: str) -> None:
        try:
            results[name] = mail.mail_send(log_id=row.pk)
        finally:
            connections.close_all()

    first = threading.Thread(target=worker, args=("first",))
    first.start()
    assert HeldBackend.sending.wait(timeout=10)  # the first holds the row, mid-send
    second = threading.Thread(target=worker, args=("second",))
    second.start()
    second.join(timeout=10)
    assert results == {"second": False}  # skipped the locked row at once, sent nothing
    HeldBackend.release.set()
    first.join(timeout=10)
    assert results == {"first": True, "second": False}
    assert len(outbox.outbox) == 1
    row.refresh_from_db()
    assert (row.status, row.attempts) == (MailStatus.SENT, 1)
    # A late third worker (a redelivered message) finds it sent.
    assert not mail.mail_send(log_id=row.pk)
    assert len(outbox.outbox) == 1
