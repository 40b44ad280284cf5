"""The daily digest: one mail per person per day with what they chose to get that way, exactly
once even when run twice or when the first run dies after claiming the day."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
import time_machine
from django.core import mail as outbox

from chronicle.models import MailChoice, MailKind, MailLog, MailPreference, MailStatus, Message
from chronicle.services import mail
from tests.conftest import World

pytestmark = pytest.mark.django_db

# The deployment's zone is UTC in the tests; digests leave from 07:00.
MORNING = dt.datetime(2024, 3, 12, 9, 0, tzinfo=dt.UTC)
NIGHT = dt.datetime(2024, 3, 12, 3, 0, tzinfo=dt.UTC)


@pytest.fixture
def frozen() -> Iterator[Any]:
    with time_machine.travel(MORNING, tick=False) as traveller:
        yield traveller


def _digest(user: Any, *kinds: str) -> None:
    for kind in kinds:
        MailPreference.objects.create(user=user, kind=kind, choice=MailChoice.DIGEST)


def _notice(world: World, user: Any, kind: str, key: str, subject: str, at: dt.datetime) -> None:
    mail.deliver(
        kind=kind,
        user=user,
        chronicle=world.chronicle,
        key=key,
        subject=subject,
        body=f"The text of {subject}.",
        now=at,
    )


def _run(capture: Any, now: dt.datetime) -> int:
    with capture(execute=True):
        return mail.digests_send(now=now)


def test_one_digest_per_person_with_their_digest_messages(
    world: World, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    _digest(alice, MailKind.RECEIPT, MailKind.BOND)
    _digest(bob, MailKind.RECEIPT)
    yesterday = MORNING - dt.timedelta(hours=20)
    _notice(world, alice, MailKind.RECEIPT, "r:1", "Downtime received: Lucien", yesterday)
    _notice(world, alice, MailKind.BOND, "b:1", "You feel a bond beginning", yesterday)
    _notice(world, bob, MailKind.RECEIPT, "r:2", "Downtime received: Marguerite", yesterday)
    with django_capture_on_commit_callbacks(execute=True):
        # Alice takes purchases at once: that one is mailed now and is not in her digest.
        _notice(world, alice, MailKind.PURCHASE, "p:1", "XP purchase approved", yesterday)
    outbox.outbox.clear()

    assert _run(django_capture_on_commit_callbacks, MORNING) == 2
    by_address = {m.to[0]: m for m in outbox.outbox}
    assert sorted(by_address) == ["player_alice@example.com", "player_bob@example.com"]
    to_alice = by_address["player_alice@example.com"]
    assert to_alice.subject == "Chronicle: 2 new messages"
    assert "Downtime received: Lucien" in to_alice.body
    assert "The text of You feel a bond beginning." in to_alice.body
    assert "XP purchase approved" not in to_alice.body
    assert "/inbox/" in to_alice.body and "/account/mail/" in to_alice.body
    assert by_address["player_bob@example.com"].subject == "Chronicle: 1 new message"
    digests = MailLog.objects.filter(kind=MailKind.DIGEST)
    assert {(d.recipient_id, d.status, d.key) for d in digests} == {
        (alice.pk, MailStatus.SENT, f"digest:{alice.pk}:2024-03-12"),
        (bob.pk, MailStatus.SENT, f"digest:{bob.pk}:2024-03-12"),
    }
    assert not Message.objects.filter(delivery=MailChoice.DIGEST, digest__isnull=True).exists()


def test_run_twice_in_a_day_sends_once_and_later_news_waits_for_tomorrow(
    world: World, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    alice = world.users["player_alice"]
    _digest(alice, MailKind.RECEIPT)
    _notice(world, alice, MailKind.RECEIPT, "r:1", "First", MORNING - dt.timedelta(hours=1))
    assert _run(django_capture_on_commit_callbacks, MORNING) == 1
    _notice(world, alice, MailKind.RECEIPT, "r:2", "Second", MORNING + dt.timedelta(hours=1))
    assert _run(django_capture_on_commit_callbacks, MORNING + dt.timedelta(hours=2)) == 0
    assert len(outbox.outbox) == 1
    tomorrow = MORNING + dt.timedelta(days=1)
    frozen.move_to(tomorrow)
    assert _run(django_capture_on_commit_callbacks, tomorrow) == 1
    assert [m.subject for m in outbox.outbox] == ["Chronicle: 1 new message"] * 2
    assert "Second" in outbox.outbox[1].body and "First" not in outbox.outbox[1].body


def test_nothing_before_the_morning_and_nothing_already_read(
    world: World, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    alice = world.users["player_alice"]
    _digest(alice, MailKind.RECEIPT)
    _notice(world, alice, MailKind.RECEIPT, "r:1", "Read already", NIGHT - dt.timedelta(hours=2))
    assert _run(django_capture_on_commit_callbacks, NIGHT) == 0
    mail.inbox_mark_all_read(user=alice)
    assert _run(django_capture_on_commit_callbacks, MORNING) == 0
    assert outbox.outbox == [] and not MailLog.objects.exists()


def test_a_run_that_dies_after_claiming_still_sends_exactly_once(
    world: World, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    alice = world.users["player_alice"]
    _digest(alice, MailKind.RECEIPT)
    _notice(world, alice, MailKind.RECEIPT, "r:1", "Downtime received", MORNING)
    # The worker is killed while the digest's mail is in flight (a BaseException, which nothing
    # catches, as nothing catches a SIGKILL): the claim is committed, the send is not.
    with (
        mock.patch("django.core.mail.send_mail", side_effect=KeyboardInterrupt),
        pytest.raises(KeyboardInterrupt),
    ):
        _run(django_capture_on_commit_callbacks, MORNING)
    claimed = MailLog.objects.get(kind=MailKind.DIGEST)
    assert claimed.status == MailStatus.QUEUED and outbox.outbox == []
    # Beat runs the digest again within the day: the day is claimed, nothing new is written.
    assert _run(django_capture_on_commit_callbacks, MORNING + dt.timedelta(hours=1)) == 0
    assert MailLog.objects.filter(kind=MailKind.DIGEST).count() == 1 and outbox.outbox == []
    # The sweeper finds the claimed row past its lease and sends it, once.
    later = MORNING + mail.QUEUED_LEASE
    frozen.move_to(later)
    with django_capture_on_commit_callbacks(execute=True):
        assert mail.mail_sweep() == 1
    with django_capture_on_commit_callbacks(execute=True):
        assert mail.mail_sweep() == 0
    assert _run(django_capture_on_commit_callbacks, later) == 0
    [digest] = outbox.outbox
    assert "Downtime received" in digest.body
    claimed.refresh_from_db()
    assert claimed.status == MailStatus.SENT


def test_a_digest_is_written_in_the_readers_language(
    world: World, frozen: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django.utils import translation

    from chronicle.models import Profile

    alice = world.users["player_alice"]
    Profile.objects.create(user=alice, language="it")
    _digest(alice, MailKind.RECEIPT)
    _notice(world, alice, MailKind.RECEIPT, "r:1", "Downtime received", MORNING)
    seen: list[str | None] = []
    real = mail.digest.digest_text

    def spy(user: Any, messages: Any) -> tuple[str, str]:
        seen.append(translation.get_language())
        return real(user, messages)

    with mock.patch.object(mail.digest, "digest_text", side_effect=spy):
        assert _run(django_capture_on_commit_callbacks, MORNING) == 1
    assert seen == ["it"]
