"""The mail pages: the inbox (newest first, unread marked, opening marks read, Mark all read),
the header's unread count, the mail choices, and a chronicle's mail log for its admins (status,
reason, filter, Retry). Each list page costs the same with 3 rows or 30."""

from __future__ import annotations

import datetime as dt
import re
import smtplib
from typing import Any

import pytest
from django.core import mail as outbox
from django.core.mail.backends.base import BaseEmailBackend
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chronicle.models import MailChoice, MailKind, MailLog, MailPreference, MailStatus, Message
from chronicle.services import mail
from tests.conftest import World

pytestmark = pytest.mark.django_db

START = dt.datetime(2024, 3, 12, 15, 0, tzinfo=dt.UTC)


class RefusingBackend(BaseEmailBackend):
    def send_messages(self, email_messages: Any) -> int:
        raise smtplib.SMTPRecipientsRefused({"player_bob@example.com": (550, b"No such user")})


def _notices(world: World, user: Any, count: int, *, kind: str = MailKind.RECEIPT) -> None:
    for i in range(count):
        mail.deliver(
            kind=kind,
            user=user,
            chronicle=world.chronicle,
            key=f"{kind}:{user.pk}:{i}",
            subject=f"Notice number {i}",
            body=f"Body of notice {i}.\nSee https://example.org/{i}",
            now=START + dt.timedelta(minutes=i),
        )


def _queries(client: Any, url: str) -> tuple[int, Any]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    return len(queries), response


# --- The inbox --------------------------------------------------------------------------------


def test_the_inbox_lists_newest_first_with_unread_marked(world: World) -> None:
    alice = world.users["player_alice"]
    _notices(world, alice, 3)
    _notices(world, world.users["player_bob"], 1)  # not Alice's
    Message.objects.filter(subject="Notice number 0").update(read_at=START)
    page = world.client("player_alice").get("/inbox/").content.decode()
    subjects = re.findall(r"Notice number \d", page)
    assert subjects == ["Notice number 2", "Notice number 1", "Notice number 0"]
    assert page.count('class="unread"') == 2
    assert "Nightfall" in page


@pytest.mark.parametrize("count", [3, 30])
def test_the_inbox_costs_the_same_for_3_or_30_messages(world: World, count: int) -> None:
    _notices(world, world.users["player_alice"], count)
    queries, response = _queries(world.client("player_alice"), "/inbox/")
    # 1. session, 2. user (with the unread count), 3. the page's COUNT, 4. the page's messages
    # (chronicle joined), 5. the header's chronicle switcher
    assert queries == 5, [q["sql"] for q in connection.queries[-queries:]]
    assert len(response.context["page"].object_list) == min(count, 25)


def test_the_inbox_pages_past_25(world: World) -> None:
    _notices(world, world.users["player_alice"], 30)
    page = world.client("player_alice").get("/inbox/?page=2").content.decode()
    assert "Page 2 of 2" in page and len(re.findall(r"Notice number \d+<", page)) == 5


def test_opening_a_message_marks_it_read_once(world: World) -> None:
    alice = world.users["player_alice"]
    _notices(world, alice, 2)
    message = Message.objects.get(subject="Notice number 1")
    client = world.client("player_alice")
    page = client.get(f"/inbox/{message.pk}/").content.decode()
    assert "Body of notice 1." in page and 'href="https://example.org/1"' in page
    # The header already counts it read: one left.
    assert "1 unread message<" in page
    message.refresh_from_db()
    first = message.read_at
    assert first is not None
    client.get(f"/inbox/{message.pk}/")
    message.refresh_from_db()
    assert message.read_at == first


def test_another_persons_message_is_not_found(world: World) -> None:
    _notices(world, world.users["player_alice"], 1)
    message = Message.objects.get()
    assert world.client("player_bob").get(f"/inbox/{message.pk}/").status_code == 404
    assert world.client("admin").get(f"/inbox/{message.pk}/").status_code == 404
    message.refresh_from_db()
    assert message.read_at is None


def test_mark_all_read(world: World) -> None:
    alice = world.users["player_alice"]
    _notices(world, alice, 3)
    _notices(world, world.users["player_bob"], 1)
    response = world.client("player_alice").post("/inbox/read-all/", follow=True)
    assert "3 messages marked read." in response.content.decode()
    assert not Message.objects.filter(recipient=alice, read_at__isnull=True).exists()
    assert Message.objects.filter(read_at__isnull=True).count() == 1  # Bob's is Bob's


# --- The header's unread count ----------------------------------------------------------------


def test_the_header_counts_unread_messages_with_an_accessible_label(world: World) -> None:
    _notices(world, world.users["player_alice"], 3)
    page = world.client("player_alice").get("/c/nightfall/").content.decode()
    badge = re.search(r'<a class="inbox-link"[^>]*>.*?</a>', page, re.S)
    assert badge, "no inbox link in the header"
    assert '<span aria-hidden="true">3</span>' in badge.group(0)
    assert '<span class="visually-hidden">3 unread messages</span>' in badge.group(0)
    quiet = world.client("player_bob").get("/c/nightfall/").content.decode()
    assert 'class="inbox-link"' in quiet and "unread message" not in quiet


def test_the_unread_count_costs_no_query_of_its_own(world: World) -> None:
    _notices(world, world.users["player_alice"], 3)
    queries, _response = _queries(world.client("player_alice"), "/account/mail/")
    # It comes with the user (chronicle.backends): no statement reads the messages alone.
    inbox_reads = [
        q["sql"]
        for q in connection.queries[-queries:]
        if "chronicle_message" in q["sql"] and "auth_user" not in q["sql"]
    ]
    assert inbox_reads == []


# --- Mail choices -----------------------------------------------------------------------------


def test_the_choices_page_saves_one_choice_per_kind(world: World) -> None:
    client = world.client("player_alice")
    page = client.get("/account/mail/")
    form = page.context["form"]
    assert set(form.fields) >= {MailKind.RECEIPT, MailKind.RESULTS, MailKind.ALARM}
    assert MailKind.PASSWORD_RESET not in form.fields  # always sent at once, never chosen
    html = page.content.decode()
    assert html.count('type="radio"') == 3 * len(form.fields)
    assert "Downtime receipts: Daily digest" in html  # each radio has its own name
    data = {name: MailChoice.IMMEDIATE for name in form.fields}
    data |= {MailKind.RECEIPT: MailChoice.DIGEST, MailKind.BOND: MailChoice.INBOX}
    response = client.post("/account/mail/", data)
    assert response.status_code == 302
    saved = dict(
        MailPreference.objects.filter(user=world.users["player_alice"]).values_list(
            "kind", "choice"
        )
    )
    assert saved[MailKind.RECEIPT] == MailChoice.DIGEST and saved[MailKind.BOND] == "inbox"
    # Saving again updates in place.
    data[MailKind.RECEIPT] = MailChoice.IMMEDIATE
    assert client.post("/account/mail/", data).status_code == 302
    assert mail.choice_for(world.users["player_alice"].pk, MailKind.RECEIPT) == "immediate"
    assert MailPreference.objects.filter(user=world.users["player_alice"]).count() == len(data)


def test_a_bad_choice_is_refused_next_to_its_row(world: World) -> None:
    client = world.client("player_alice")
    form = client.get("/account/mail/").context["form"]
    data = {name: MailChoice.IMMEDIATE for name in form.fields} | {MailKind.RECEIPT: "pigeon"}
    response = client.post("/account/mail/", data)
    assert response.status_code == 400
    assert response.context["form"].errors[MailKind.RECEIPT]
    assert not MailPreference.objects.exists()


# --- The mail log ---------------------------------------------------------------------------


def _logged(world: World, count: int) -> None:
    users = [world.users["player_alice"], world.users["player_bob"]]
    for i in range(count):
        mail.deliver(
            kind=MailKind.INVITATION,
            address=f"guest{i}@example.org",
            chronicle=world.chronicle,
            subject=f"Your invitation {i}",
            body="…",
            now=START,
        )
        mail.deliver(
            kind=MailKind.RECEIPT,
            user=users[i % 2],
            chronicle=world.chronicle,
            key=f"receipt:{i}",
            subject=f"Receipt {i}",
            body="…",
            now=START,
        )


@pytest.mark.parametrize("count", [3, 30])
def test_the_mail_log_costs_the_same_for_3_or_30_rows(world: World, count: int) -> None:
    _logged(world, count)
    queries, _response = _queries(world.client("admin"), "/c/nightfall/mail/")
    # 1. session, 2. user, 3. membership (chronicle joined), 4. the page's COUNT, 5. the page's
    # rows (recipient joined), 6. the header's chronicle switcher
    assert queries == 6


def test_the_mail_log_shows_status_reason_and_time_in_the_chronicles_zone(
    world: World, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.EMAIL_BACKEND = "tests.chronicle.test_mail_pages.RefusingBackend"
    with django_capture_on_commit_callbacks(execute=True):
        mail.deliver(
            kind=MailKind.RESULTS,
            user=world.users["player_bob"],
            chronicle=world.chronicle,
            key="cycle:1:summary:bob",
            subject="Nightfall: your results",
            body="…",
            now=START,
        )
    MailPreference.objects.create(
        user=world.users["player_alice"], kind=MailKind.RESULTS, choice=MailChoice.INBOX
    )
    mail.deliver(
        kind=MailKind.RESULTS,
        user=world.users["player_alice"],
        chronicle=world.chronicle,
        key="cycle:1:summary:alice",
        subject="Nightfall: your results",
        body="…",
        now=START,
    )
    # Another chronicle's mail is not this log's.
    mail.deliver(
        kind=MailKind.INVITATION,
        address="berlin@example.org",
        chronicle=world.other,
        subject="Other",
        body="…",
    )
    page = world.client("admin").get("/c/nightfall/mail/").content.decode()
    assert "player_bob@example.com" in page and "SMTPRecipientsRefused" in page
    assert "The recipient reads this kind in the inbox only." in page
    assert "berlin@example.org" not in page
    assert "Tue 12 Mar 2024, 11:00 EDT" in page  # 15:00 UTC in New York
    assert page.count(">Retry</button>") == 1
    failed = world.client("admin").get("/c/nightfall/mail/?status=failed").content.decode()
    assert "player_bob@example.com" in failed and "inbox only" not in failed
    assert world.client("admin").get("/c/nightfall/mail/?status=lost").status_code == 400


def test_retry_sends_a_failed_mail_now(
    world: World, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.EMAIL_BACKEND = "tests.chronicle.test_mail_pages.RefusingBackend"
    with django_capture_on_commit_callbacks(execute=True):
        mail.deliver(
            kind=MailKind.INVITATION,
            address="late@example.org",
            chronicle=world.chronicle,
            subject="Your invitation",
            body="…",
        )
    row = MailLog.objects.get()
    assert row.status == MailStatus.FAILED
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    url = f"/c/nightfall/mail/{row.pk}/retry/"
    # Only the chronicle's admins: a storyteller is refused, a stranger does not see it.
    assert world.client("storyteller").post(url).status_code == 403
    assert world.client("other_storyteller").post(url).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        response = world.client("admin").post(url, follow=True)
    assert "is queued again" in response.content.decode()
    row.refresh_from_db()
    assert row.status == MailStatus.SENT and [m.to for m in outbox.outbox] == [["late@example.org"]]


def test_the_mail_log_is_in_the_admins_menu_only(world: World) -> None:
    assert "/c/nightfall/mail/" in world.client("admin").get("/c/nightfall/").content.decode()
    for persona in ("storyteller", "player_alice"):
        page = world.client(persona).get("/c/nightfall/").content.decode()
        assert "/c/nightfall/mail/" not in page
    assert world.client("storyteller").get("/c/nightfall/mail/").status_code == 403
