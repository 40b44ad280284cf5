"""People pages through the test client: who may open each, what each says, and query counts
that stay the same for 5 and 300 members."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from characters.models import Character
from chronicle.models import Chronicle, Invitation, Membership, Role
from chronicle.services import people
from tests.conftest import PASSWORD, PERSONAS, World

User = get_user_model()


@pytest.fixture
def sent(django_capture_on_commit_callbacks: Any) -> Any:
    """Run a request with its after-commit mail sent, as in production."""

    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return run


def link_path(message: Any) -> str:
    found = re.search(r"https?://[^/\s]+(/invitations/[^/\s]+/)", message.body)
    assert found, message.body
    return found.group(1)


# -- Who may open what ---------------------------------------------------------------------------

STAFF = {"admin": 200, "storyteller": 200, "player_alice": 403, "player_bob": 403}
STRANGERS = {"outsider": 404, "other_storyteller": 404}


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("url", ["/c/nightfall/people/", "/c/nightfall/invitations/"])
def test_people_and_invitations_are_for_staff(world: World, persona: str, url: str) -> None:
    expected = (STAFF | STRANGERS)[persona]
    assert world.client(persona).get(url).status_code == expected


@pytest.mark.parametrize("url", ["/c/nightfall/people/", "/account/", "/chronicles/new/"])
def test_anonymous_visitors_are_sent_to_log_in(world: World, url: str) -> None:
    response = Client().get(url)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_player_cannot_change_roles_or_remove(world: World) -> None:
    client = world.client("player_alice")
    bob = world.users["player_bob"].pk
    assert client.post(f"/c/nightfall/people/{bob}/role/", {"role": "admin"}).status_code == 403
    assert client.post(f"/c/nightfall/people/{bob}/remove/", {"characters": "npc"}).status_code == (
        403
    )
    assert Membership.objects.get(user_id=bob, chronicle=world.chronicle).role == Role.PLAYER


def test_another_chronicles_member_is_404_on_the_people_routes(world: World) -> None:
    other = world.users["other_storyteller"].pk
    client = world.client("admin")
    assert client.post(f"/c/nightfall/people/{other}/role/", {"role": "admin"}).status_code == 404
    assert client.get(f"/c/nightfall/people/{other}/remove/").status_code == 404


# -- Starting and inviting -------------------------------------------------------------------------


def test_a_user_starts_a_chronicle_from_the_page(world: World) -> None:
    client = world.client("outsider")
    response = client.post(
        "/chronicles/new/",
        {"name": "Barcelona de Nit", "slug": "bcn", "timezone_name": "Europe/Madrid"},
    )
    assert response.status_code == 302 and response["Location"] == "/c/bcn/invitations/"
    chronicle = Chronicle.objects.get(slug="bcn")
    assert chronicle.timezone == "Europe/Madrid"
    assert Membership.objects.get(chronicle=chronicle).role == Role.ADMIN


def test_a_taken_slug_is_shown_next_to_the_field_and_keeps_the_input(world: World) -> None:
    response = world.client("outsider").post(
        "/chronicles/new/", {"name": "My Nightfall", "slug": "nightfall", "timezone_name": "UTC"}
    )
    assert response.status_code == 400
    assert "That address is taken" in response.content.decode()
    assert 'value="My Nightfall"' in response.content.decode()


@override_settings(CHRONICLE_OPEN_CREATION=False)
def test_closed_creation_says_who_may(world: World) -> None:
    response = world.client("outsider").get("/chronicles/new/")
    assert response.status_code == 403
    assert "only its operators" in response.content.decode()


def test_pasted_list_invites_several_with_their_roles(world: World, sent: Any) -> None:
    client = world.client("admin")
    text = (
        "Nina Rossi <nina@example.org>\njordi@example.org, storyteller\n\nMarta, marta@example.org"
    )
    response = sent(client.post, "/c/nightfall/invitations/", {"addresses": text, "role": "player"})
    assert response.status_code == 302
    roles = dict(Invitation.objects.values_list("email", "role"))
    assert roles == {
        "nina@example.org": "player",
        "jordi@example.org": "storyteller",
        "marta@example.org": "player",
    }
    assert sorted(m.to[0] for m in mail.outbox) == sorted(roles)


def test_csv_upload_invites(world: World, sent: Any) -> None:
    upload = SimpleUploadedFile(
        "people.csv",
        b"name,email,role\nNina,nina@example.org,player\nJordi,jordi@example.org,admin\n",
    )
    response = sent(
        world.client("admin").post,
        "/c/nightfall/invitations/",
        {"addresses": "", "role": "player", "csv_file": upload},
    )
    assert response.status_code == 302
    assert Invitation.objects.get(email="jordi@example.org").role == Role.ADMIN
    assert Invitation.objects.get(email="nina@example.org").name == "Nina"


def test_a_bad_line_is_named_and_nothing_is_sent(world: World) -> None:
    text = "nina@example.org\nnot an address\n"
    response = world.client("admin").post(
        "/c/nightfall/invitations/", {"addresses": text, "role": "player"}
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "Line 2" in body and "nina@example.org" in body  # the typed list is kept
    assert not Invitation.objects.exists() and mail.outbox == []


def test_a_storyteller_is_refused_a_storyteller_invitation(world: World) -> None:
    response = world.client("storyteller").post(
        "/c/nightfall/invitations/", {"addresses": "x@example.org, admin", "role": "player"}
    )
    assert response.status_code == 400
    assert "You may invite players only" in response.content.decode()
    assert not Invitation.objects.exists()


# -- Following the link ----------------------------------------------------------------------------


def test_a_new_person_follows_the_link_and_joins(world: World, sent: Any) -> None:
    sent(
        world.client("admin").post,
        "/c/nightfall/invitations/",
        {"addresses": "nina@example.org", "role": "player"},
    )
    path = link_path(mail.outbox[0])
    client = Client()
    page = client.get(path)
    assert page.status_code == 200
    assert "Join Nightfall" in page.content.decode()
    response = client.post(
        path,
        {
            "name": "Nina Rossi",
            "username": "nina",
            "password": PASSWORD,
            "password_again": PASSWORD,
        },
    )
    assert response.status_code == 302 and response["Location"] == "/c/nightfall/"
    assert client.get("/c/nightfall/").status_code == 200  # logged in and a member
    # The link is spent: it says so in words and offers nothing to sign up with.
    again = Client().get(path)
    assert again.status_code == 410
    assert "used already" in again.content.decode()


def test_the_accept_page_does_not_tell_whether_the_address_has_an_account(
    world: World, sent: Any
) -> None:
    """A stranger holding links to a known and an unknown address sees the same page."""
    client = world.client("admin")
    sent(
        client.post,
        "/c/nightfall/invitations/",
        {"addresses": "outsider@example.com\nnobody@example.org", "role": "player"},
    )

    def scrubbed(message: Any) -> str:
        # CSRF tokens, the links' own tokens and the CSP nonce differ on every page; nothing
        # else may.
        response = Client().get(link_path(message))
        csp = response.get("Content-Security-Policy", "")
        nonce = csp.partition("'nonce-")[2].partition("'")[0]
        page = response.content.decode().replace(nonce, "NONCE") if nonce else ""
        return re.sub(r"[\w-]{40,}", "TOKEN", page)

    known, unknown = (scrubbed(m) for m in mail.outbox)
    assert known and known == unknown


def test_a_logged_in_user_of_another_address_is_refused(world: World, sent: Any) -> None:
    sent(
        world.client("admin").post,
        "/c/nightfall/invitations/",
        {"addresses": "someone@example.org", "role": "player"},
    )
    path = link_path(mail.outbox[0])
    client = world.client("outsider")
    assert "another address" in client.get(path).content.decode()
    response = client.post(path)
    assert response.status_code == 400
    assert not Membership.objects.filter(user=world.users["outsider"]).exists()


def test_a_revoked_link_offers_to_ask_for_a_new_one(world: World, sent: Any) -> None:
    client = world.client("storyteller")
    sent(client.post, "/c/nightfall/invitations/", {"addresses": "n@example.org", "role": "player"})
    path = link_path(mail.outbox[0])
    invitation = Invitation.objects.get()
    client.post(f"/c/nightfall/invitations/{invitation.pk}/revoke/")
    page = Client().get(path)
    assert page.status_code == 410
    assert "withdrew" in page.content.decode()
    assert "Ask for a new invitation" in page.content.decode()
    mail.outbox.clear()
    token = path.split("/")[2]
    sent(Client().post, f"/invitations/{token}/renew/")
    assert mail.outbox and "storyteller@example.com" in mail.outbox[0].to


def test_an_unknown_link_is_a_plain_page(world: World) -> None:
    response = Client().get("/invitations/not-a-real-token/")
    assert response.status_code == 410
    assert "not (or no longer) an invitation" in response.content.decode()


# -- Roles, removal, leaving, account -----------------------------------------------------------


def test_admin_changes_a_role_from_the_people_page(world: World) -> None:
    bob = world.users["player_bob"]
    response = world.client("admin").post(
        f"/c/nightfall/people/{bob.pk}/role/", {"role": "storyteller"}
    )
    assert response.status_code == 302
    assert Membership.objects.get(user=bob, chronicle=world.chronicle).role == Role.STORYTELLER


def test_the_last_admin_is_told_why_they_cannot_leave(world: World) -> None:
    response = world.client("admin").post("/c/nightfall/leave/", {"characters": "retired"})
    assert response.status_code == 400
    assert "last admin" in response.content.decode()
    assert Membership.objects.filter(user=world.users["admin"], chronicle=world.chronicle)


def test_a_player_leaves(world: World) -> None:
    client = world.client("player_bob")
    assert client.get("/c/nightfall/leave/").status_code == 200
    response = client.post("/c/nightfall/leave/", {"characters": "retired"})
    assert response.status_code == 302 and response["Location"] == "/account/"
    assert client.get("/c/nightfall/").status_code == 404


def test_the_account_page_lists_chronicles_and_changes_the_name(world: World) -> None:
    client = world.client("player_alice")
    page = client.get("/account/").content.decode()
    assert "Nightfall" in page and "Leave" in page
    client.post("/account/", {"save_name": "1", "name": "Alice Vidal"})
    assert User.objects.get(username="player_alice").get_full_name() == "Alice Vidal"


def test_an_email_change_waits_for_the_new_address_to_confirm(world: World, sent: Any) -> None:
    client = world.client("player_alice")
    sent(client.post, "/account/", {"change_email": "1", "email": "alice@new.example"})
    alice = User.objects.get(username="player_alice")
    assert alice.email == "player_alice@example.com"
    [message] = mail.outbox
    assert message.to == ["alice@new.example"]
    path = re.search(r"https?://[^/\s]+(/account/email/[^\s]+/)", message.body).group(1)  # type: ignore[union-attr]
    assert world.client("player_bob").get(path).status_code == 302
    assert User.objects.get(username="player_bob").email == "player_bob@example.com"
    client.get(path)
    assert User.objects.get(username="player_alice").email == "alice@new.example"


def test_signup_is_closed_by_default(world: World) -> None:
    assert Client().get("/accounts/signup/").status_code == 404


@override_settings(CHRONICLE_OPEN_REGISTRATION=True)
def test_signup_when_opened(world: World) -> None:
    response = Client().post(
        "/accounts/signup/",
        {
            "email": "new@example.org",
            "name": "New",
            "username": "newbie",
            "password": PASSWORD,
            "password_again": PASSWORD,
        },
    )
    assert response.status_code == 302
    assert User.objects.get(username="newbie").email == "new@example.org"


# -- The shell command -----------------------------------------------------------------------------


def test_create_chronicle_prints_the_admins_link(world: World, capsys: Any, sent: Any) -> None:
    sent(
        call_command,
        "create_chronicle",
        name="Roma di Notte",
        slug="roma",
        timezone="Europe/Rome",
        admin_email="prince@example.org",
    )
    out = capsys.readouterr().out
    path = re.search(r"https?://[^/\s]+(/invitations/[^/\s]+/)", out).group(1)  # type: ignore[union-attr]
    assert mail.outbox[0].to == ["prince@example.org"]
    client = Client()
    client.post(
        path,
        {"name": "Prince", "username": "prince", "password": PASSWORD, "password_again": PASSWORD},
    )
    membership = Membership.objects.get(chronicle__slug="roma")
    assert (membership.user.username, membership.role) == ("prince", Role.ADMIN)


def test_create_chronicle_refuses_a_bad_time_zone(world: World) -> None:
    with pytest.raises(CommandError, match="time zone"):
        call_command(
            "create_chronicle",
            name="X",
            slug="x",
            timezone="Mars/Olympus",
            admin_email="a@example.org",
        )
    assert not Chronicle.objects.filter(slug="x").exists()


# -- Query counts ----------------------------------------------------------------------------------


def _grow(world: World, prefix: str, n: int) -> None:
    """n more players, each with a character, and an invitation each."""
    users = User.objects.bulk_create(
        User(username=f"{prefix}{i:04d}", email=f"{prefix}{i:04d}@example.org") for i in range(n)
    )
    Membership.objects.bulk_create(
        Membership(chronicle=world.chronicle, user=u, role=Role.PLAYER) for u in users
    )
    Character.objects.bulk_create(
        Character(chronicle=world.chronicle, player=u, name=f"PC of {u.username}") for u in users
    )
    people.invitations_create(
        membership=Membership.objects.get(user=world.users["admin"], chronicle=world.chronicle),
        invitees=[people.Invitee(email=f"inv-{u.username}@example.org") for u in users],
    )


@pytest.mark.parametrize("url", ["/c/nightfall/people/", "/c/nightfall/invitations/"])
def test_people_pages_cost_the_same_for_5_and_300_members(world: World, url: str) -> None:
    client = world.client("admin")

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    _grow(world, "p", 1)  # 5 members
    small = count()
    _grow(world, "q", 295)  # 300 members
    large = count()
    # People: session, user, membership, the members with their users, their characters, the
    # latest membership events. Invitations: session, user, membership, the invitations with
    # their inviters.
    assert small == large, (small, large)
    assert small <= 8


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("action", ["resend", "revoke"])
def test_resend_and_revoke_are_for_staff(world: World, persona: str, action: str) -> None:
    [(invitation, _token)] = people.invitations_create(
        membership=Membership.objects.get(user=world.users["admin"], chronicle=world.chronicle),
        invitees=[people.Invitee(email="nina@example.org")],
    )
    before = Invitation.objects.values_list("token_hash", "revoked_at").get()
    response = world.client(persona).post(f"/c/nightfall/invitations/{invitation.pk}/{action}/")
    expected = {"admin": 302, "storyteller": 302} | {
        "player_alice": 403,
        "player_bob": 403,
        "outsider": 404,
        "other_storyteller": 404,
    }
    assert response.status_code == expected[persona]
    after = Invitation.objects.values_list("token_hash", "revoked_at").get()
    assert (after != before) == (expected[persona] == 302)


@override_settings(CHRONICLE_OPEN_CREATION=False)
def test_the_account_page_offers_no_start_when_creation_is_closed(world: World) -> None:
    page = world.client("player_alice").get("/account/").content.decode()
    assert "/chronicles/new/" not in page
