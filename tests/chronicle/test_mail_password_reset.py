"""Password reset (issue 17): the request only hands the address to a worker, so a known and an
unknown address cost the request the same work, and nothing is sent while it runs."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail as outbox
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from chronicle.models import MailKind, MailLog, MailStatus, Message
from tests.conftest import World

pytestmark = pytest.mark.django_db


def _ask(address: str, capture: Any) -> tuple[list[str], list[Any], Any]:
    """POST the reset form; the SQL the request ran, its after-commit hooks (not run), and the
    response."""
    client = Client()
    with CaptureQueriesContext(connection) as queries, capture(execute=False) as hooks:
        response = client.post(reverse("password_reset"), {"email": address})
    assert response.status_code == 302
    return [q["sql"] for q in queries.captured_queries], hooks, response


def test_the_request_does_the_same_work_for_a_known_and_an_unknown_address(
    world: World, django_capture_on_commit_callbacks: Any
) -> None:
    known_sql, known_hooks, known = _ask(
        "player_alice@example.com", django_capture_on_commit_callbacks
    )
    unknown_sql, unknown_hooks, unknown = _ask(
        "nobody@example.com", django_capture_on_commit_callbacks
    )
    # The same statements (none of them looks the address up), one hook each, no mail.
    assert known_sql == unknown_sql
    assert not any("auth_user" in sql for sql in known_sql)
    assert (len(known_hooks), len(unknown_hooks)) == (1, 1)
    assert outbox.outbox == [] and not MailLog.objects.exists()
    assert known["Location"] == unknown["Location"] == reverse("password_reset_done")
    # The worker's part: the known address gets its mail, the unknown one nothing.
    known_hooks[0]()
    unknown_hooks[0]()
    [sent] = outbox.outbox
    assert sent.to == ["player_alice@example.com"]
    assert "/accounts/reset/" in sent.body
    row = MailLog.objects.get()
    assert (row.kind, row.status, row.recipient) == (
        MailKind.PASSWORD_RESET,
        MailStatus.SENT,
        world.users["player_alice"],
    )
    assert row.body == ""  # the link is not kept once it left
    assert not Message.objects.exists()  # a reset link never sits in an inbox


def test_an_inactive_account_gets_no_reset_mail(
    world: World, django_capture_on_commit_callbacks: Any
) -> None:
    bob = world.users["player_bob"]
    bob.is_active = False
    bob.save()
    _sql, hooks, _response = _ask("player_bob@example.com", django_capture_on_commit_callbacks)
    for hook in hooks:
        hook()
    assert outbox.outbox == [] and not MailLog.objects.exists()
