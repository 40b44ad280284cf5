"""`deliver` (chronicle.services.mail): an inbox message always, then the recipient's choice
decides the e-mail; rendered in the recipient's language; keyed, so a re-run writes nothing."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core import mail as outbox
from django.utils import translation

from characters.models import Notification
from characters.services.notify import notify
from chronicle.models import (
    MailChoice,
    MailKind,
    MailLog,
    MailPreference,
    MailStatus,
    Message,
    Profile,
    SkipReason,
)
from chronicle.services import mail
from tests.conftest import World

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 12, 15, 0, tzinfo=dt.UTC)


def _prefer(user: Any, kind: str, choice: str) -> None:
    MailPreference.objects.create(user=user, kind=kind, choice=choice)


def _receipt(world: World, user: Any, key: str = "receipt:1", **extra: Any) -> mail.Delivery:
    return mail.deliver(
        kind=MailKind.RECEIPT,
        user=user,
        chronicle=world.chronicle,
        key=key,
        subject="Downtime received: Lucien",
        body="Your downtime is in.",
        now=NOW,
        **extra,
    )


def test_at_once_writes_the_inbox_and_the_worker_sends_after_commit(
    world: World, django_capture_on_commit_callbacks: Any
) -> None:
    alice = world.users["player_alice"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        delivery = _receipt(world, alice)
    # Nothing leaves inside the caller's transaction: the mail waits for the commit.
    assert outbox.outbox == [] and len(callbacks) == 1
    assert delivery.message is not None and delivery.message.delivery == MailChoice.IMMEDIATE
    assert delivery.log is not None and delivery.log.status == MailStatus.QUEUED
    assert delivery.log.body == "Your downtime is in."
    callbacks[0]()
    [sent] = outbox.outbox
    assert (sent.to, sent.subject) == (["player_alice@example.com"], "Downtime received: Lucien")
    row = MailLog.objects.get()
    assert (row.status, row.attempts, row.chronicle_id) == (MailStatus.SENT, 1, world.chronicle.pk)
    assert row.sent_at is not None and row.body == ""  # the text lives on in the inbox only
    assert Message.objects.get().read_at is None


def test_daily_digest_keeps_the_mail_for_the_digest(world: World) -> None:
    alice = world.users["player_alice"]
    _prefer(alice, MailKind.RECEIPT, MailChoice.DIGEST)
    delivery = _receipt(world, alice)
    assert delivery.message is not None and delivery.message.delivery == MailChoice.DIGEST
    assert delivery.log is None and not MailLog.objects.exists()


def test_inbox_only_is_logged_as_skipped_by_choice(
    world: World, django_capture_on_commit_callbacks: Any
) -> None:
    alice = world.users["player_alice"]
    _prefer(alice, MailKind.RECEIPT, MailChoice.INBOX)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        delivery = _receipt(world, alice)
    assert callbacks == [] and outbox.outbox == []
    assert delivery.message is not None
    row = MailLog.objects.get()
    assert (row.status, row.reason) == (MailStatus.SKIPPED, SkipReason.CHOICE)
    assert row.reason_text == str(SkipReason.CHOICE.label)


def test_a_choice_is_per_kind(world: World, django_capture_on_commit_callbacks: Any) -> None:
    alice = world.users["player_alice"]
    _prefer(alice, MailKind.RECEIPT, MailChoice.INBOX)
    with django_capture_on_commit_callbacks(execute=True):
        mail.deliver(
            kind=MailKind.PURCHASE,
            user=alice,
            key="purchase:1:approved",
            subject="XP purchase approved",
            body="…",
        )
    assert [m.subject for m in outbox.outbox] == ["XP purchase approved"]


def test_no_address_is_logged_as_skipped(world: World) -> None:
    alice = world.users["player_alice"]
    alice.email = ""
    alice.save()
    _receipt(world, alice)
    row = MailLog.objects.get()
    assert (row.status, row.reason, row.address) == (MailStatus.SKIPPED, SkipReason.NO_ADDRESS, "")
    assert Message.objects.filter(recipient=alice).count() == 1  # still in the inbox


def test_the_same_key_writes_nothing_twice(world: World) -> None:
    alice = world.users["player_alice"]
    assert _receipt(world, alice).new
    again = _receipt(world, alice)
    assert not again.new and again.message is None and again.log is None
    assert (Message.objects.count(), MailLog.objects.count()) == (1, 1)


def test_an_address_without_account_is_logged_without_an_inbox(world: World) -> None:
    delivery = mail.deliver(
        kind=MailKind.INVITATION,
        address="newcomer@example.org",
        chronicle=world.chronicle,
        subject="Your invitation to Nightfall",
        body="Follow this link: https://example.org/invitations/secret/",
    )
    assert delivery.message is None and not Message.objects.exists()
    row = MailLog.objects.get()
    assert (row.recipient_id, row.address, row.status) == (
        None,
        "newcomer@example.org",
        MailStatus.QUEUED,
    )


def test_a_notice_without_its_recipient_or_key_is_a_programming_error(world: World) -> None:
    with pytest.raises(ValueError, match="recipient and a key"):
        mail.deliver(kind=MailKind.RECEIPT, user=world.users["player_alice"], subject="s", body="b")
    with pytest.raises(ValueError, match="unknown mail kind"):
        mail.deliver(kind="gossip", address="a@example.org", subject="s", body="b")


# --- The recipient's language ---------------------------------------------------------------


def _speaks(user: Any, language: str) -> None:
    Profile.objects.update_or_create(user=user, defaults={"language": language})


def test_a_mail_is_written_in_the_recipients_language_not_the_senders(world: World) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    _speaks(alice, "it")
    seen: list[str | None] = []

    def subject() -> str:
        seen.append(translation.get_language())
        return f"subject in {translation.get_language()}"

    # The storyteller acting in Catalan: each reader still gets their own language.
    with translation.override("ca"):
        for user in (alice, bob):
            mail.deliver(
                kind=MailKind.PURCHASE,
                user=user,
                key=f"purchase:7:{user.pk}",
                subject=subject,
                body=lambda: f"body in {translation.get_language()}",
            )
        assert translation.get_language() == "ca"  # the sender's language is left as it was
    assert seen == ["it", "en"]
    by_user = dict(Message.objects.values_list("recipient__username", "body"))
    assert by_user == {"player_alice": "body in it", "player_bob": "body in en"}
    assert MailLog.objects.get(recipient=alice).subject == "subject in it"


def test_a_lazy_translation_is_rendered_in_the_recipients_language(world: World) -> None:
    from django.utils.functional import lazy

    alice = world.users["player_alice"]
    _speaks(alice, "ca")
    language_now = lazy(lambda: f"[{translation.get_language()}]", str)()
    mail.deliver(kind=MailKind.BOND, user=alice, key="bond-ended:1", subject=language_now, body="…")
    assert Message.objects.get().subject == "[ca]"


# --- notify(): the characters' keyed notices go through deliver ------------------------------


def test_notify_keeps_its_key_and_writes_the_players_inbox(
    world: World, make_character: Any, django_capture_on_commit_callbacks: Any
) -> None:
    lucien = make_character("Lucien")
    with django_capture_on_commit_callbacks(execute=True):
        assert notify(character=lucien, key="purchase:3:approved", subject="Approved", body="…")
        assert not notify(character=lucien, key="purchase:3:approved", subject="Again", body="…")
    message = Message.objects.get()
    assert (message.kind, message.chronicle_id, message.recipient) == (
        MailKind.PURCHASE,
        world.chronicle.pk,
        world.users["player_alice"],
    )
    assert Notification.objects.get(key="purchase:3:approved").subject == "Approved"
    assert [m.subject for m in outbox.outbox] == ["Approved"]


def test_notify_names_the_kind_of_every_existing_key() -> None:
    from characters.services.notify import kind_of

    assert kind_of("downtime-receipt:4:abc") == MailKind.RECEIPT
    assert kind_of("dt-desk-reminder:1:2:2024-03-12") == MailKind.REMINDER
    assert kind_of("torpor-hold-ended:9") == MailKind.TORPOR
    assert kind_of("alarm-firing:1:2") == MailKind.ALARM
    assert kind_of("something-new:1") == MailKind.OTHER


def test_notify_without_a_player_tells_nobody(world: World, make_character: Any) -> None:
    npc = make_character("Gustav", player=None)
    assert not notify(character=npc, key="blood-expired:1", subject="s", body="b")
    assert not Message.objects.exists() and not MailLog.objects.exists()
