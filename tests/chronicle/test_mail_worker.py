"""The broker path end to end (the other mail tests run the task where its hook fires): a notice
and a password reset, committed by a request, go through Redis to a real worker in a thread of
this process, which sends them from PostgreSQL's mail log. The request itself sends nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.core import mail as outbox
from django.db import connections, transaction
from django.test import Client
from django.urls import reverse

from chronicle.celery import app
from chronicle.models import MailKind, MailLog, MailStatus
from chronicle.services import mail
from tests.conftest import World

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

WAIT_S = 30


class Finished:
    """The names of the tasks the worker finished, and an event per awaited task."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.events: dict[str, threading.Event] = {}

    def event(self, name: str) -> threading.Event:
        return self.events.setdefault(name, threading.Event())


@pytest.fixture
def worker(postgres: None, redis_broker: str, settings: Any) -> Iterator[Finished]:
    settings.CHRONICLE_MAIL_EAGER = False  # through the broker, as in production
    # Messages an earlier test left in the queue are not this test's.
    app.control.purge()
    finished = Finished()

    def done(sender: Any = None, **kwargs: Any) -> None:
        # The worker thread's own connections: closed, so the test database can be dropped.
        connections.close_all()
        finished.names.append(sender.name)
        finished.event(sender.name).set()

    task_postrun.connect(done, weak=False)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            yield finished
    finally:
        task_postrun.disconnect(done)


@pytest.mark.django_db(transaction=True)
def test_a_notice_is_sent_by_the_worker_after_commit(worker: Finished, world: World) -> None:
    with transaction.atomic():
        delivery = mail.deliver(
            kind=MailKind.RESULTS,
            user=world.users["player_alice"],
            chronicle=world.chronicle,
            key="cycle:1:summary:alice",
            subject="Nightfall: your results",
            body="Lucien gained 2.5 XP.",
        )
        assert outbox.outbox == []
    assert worker.event("chronicle.tasks.send_mail_log").wait(WAIT_S), worker.names
    assert delivery.log is not None
    row = MailLog.objects.get(pk=delivery.log.pk)
    assert row.status == MailStatus.SENT
    [sent] = outbox.outbox
    assert (sent.to, sent.body) == (["player_alice@example.com"], "Lucien gained 2.5 XP.")


@pytest.mark.django_db(transaction=True)
def test_a_password_reset_is_answered_by_the_worker(worker: Finished, world: World) -> None:
    response = Client().post(reverse("password_reset"), {"email": "player_bob@example.com"})
    assert response.status_code == 302
    assert worker.event("chronicle.tasks.send_password_reset").wait(WAIT_S), worker.names
    [sent] = outbox.outbox
    assert sent.to == ["player_bob@example.com"] and "/accounts/reset/" in sent.body
    row = MailLog.objects.get()
    assert (row.kind, row.status) == (MailKind.PASSWORD_RESET, MailStatus.SENT)
