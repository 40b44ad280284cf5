"""The people API: the same services and rules about who may as the pages, one error shape."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core import mail
from django.test import Client

from chronicle.models import Chronicle, Invitation, Membership, Role
from tests.conftest import PERSONAS, World

STAFF_OK = {"admin": 200, "storyteller": 200, "player_alice": 403, "player_bob": 403}
STRANGERS = {"outsider": 404, "other_storyteller": 404}


def post(client: Client, url: str, body: Any) -> Any:
    return client.post(url, body, content_type="application/json")


@pytest.fixture
def sent(django_capture_on_commit_callbacks: Any) -> Any:
    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return run


def test_a_user_creates_a_chronicle_through_the_api(world: World) -> None:
    client = world.client("outsider")
    response = post(
        client,
        "/api/chronicles/",
        {"name": "Roma di Notte", "slug": "roma", "timezone": "Europe/Rome"},
    )
    assert response.status_code == 201, response.json()
    assert response.json() == {"slug": "roma", "name": "Roma di Notte", "timezone": "Europe/Rome"}
    assert Membership.objects.get(chronicle__slug="roma").role == Role.ADMIN


def test_a_bad_time_zone_is_one_error_shape(world: World) -> None:
    response = post(
        world.client("outsider"),
        "/api/chronicles/",
        {"name": "X", "slug": "x", "timezone": "Mars/Olympus"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert "timezone" in response.json()["error"]["fields"]
    assert not Chronicle.objects.filter(slug="x").exists()


@pytest.mark.parametrize("persona", PERSONAS)
def test_invitations_list_is_for_staff(world: World, persona: str) -> None:
    response = world.client(persona).get("/api/chronicles/nightfall/invitations/")
    assert response.status_code == (STAFF_OK | STRANGERS)[persona]


def test_invite_resend_revoke(world: World, sent: Any) -> None:
    client = world.client("admin")
    response = sent(
        post,
        client,
        "/api/chronicles/nightfall/invitations/",
        {
            "invitees": [
                {"email": "nina@example.org", "name": "Nina"},
                {"email": "jordi@example.org", "role": "storyteller"},
            ]
        },
    )
    assert response.status_code == 201, response.json()
    assert [(row["email"], row["role"], row["state"]) for row in response.json()] == [
        ("nina@example.org", "player", "pending"),
        ("jordi@example.org", "storyteller", "pending"),
    ]
    assert "token" not in response.content.decode() and len(mail.outbox) == 2
    nina = Invitation.objects.get(email="nina@example.org")
    resent = sent(post, client, f"/api/chronicles/nightfall/invitations/{nina.pk}/resend/", {})
    assert resent.status_code == 200 and len(mail.outbox) == 3
    revoked = post(client, f"/api/chronicles/nightfall/invitations/{nina.pk}/revoke/", {})
    assert revoked.json()["state"] == "revoked"
    listed = client.get("/api/chronicles/nightfall/invitations/").json()
    assert {row["email"] for row in listed["results"]} == {"nina@example.org", "jordi@example.org"}


def test_a_storyteller_cannot_invite_a_storyteller(world: World) -> None:
    response = post(
        world.client("storyteller"),
        "/api/chronicles/nightfall/invitations/",
        {"invitees": [{"email": "x@example.org", "role": "storyteller"}]},
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert not Invitation.objects.exists()


def test_a_logged_in_user_accepts_by_token(world: World, sent: Any) -> None:
    sent(
        post,
        world.client("admin"),
        "/api/chronicles/nightfall/invitations/",
        {"invitees": [{"email": "outsider@example.com"}]},
    )
    token = re.search(r"/invitations/([^/\s]+)/", mail.outbox[0].body).group(1)  # type: ignore[union-attr]
    client = world.client("outsider")
    response = post(client, "/api/invitations/accept/", {"token": token})
    assert response.status_code == 200
    assert response.json()["role"] == "player"
    again = post(client, "/api/invitations/accept/", {"token": token})
    assert again.status_code == 400
    assert "used already" in again.json()["error"]["message"]
    assert Membership.objects.filter(user=world.users["outsider"]).count() == 1


def test_roles_and_removal(world: World) -> None:
    bob = world.users["player_bob"].pk
    url = f"/api/chronicles/nightfall/memberships/{bob}/"
    player = world.client("player_alice")
    assert player.patch(url, {"role": "admin"}, content_type="application/json").status_code == 403
    storyteller = world.client("storyteller")
    assert (
        storyteller.patch(url, {"role": "admin"}, content_type="application/json").status_code
        == 403
    )
    admin = world.client("admin")
    changed = admin.patch(url, {"role": "storyteller"}, content_type="application/json")
    assert changed.status_code == 200 and changed.json()["role"] == "storyteller"
    assert admin.delete(url + "?characters=npc").status_code == 204
    assert not Membership.objects.filter(user_id=bob, chronicle=world.chronicle).exists()


def test_leave_and_the_last_admin(world: World) -> None:
    response = post(world.client("admin"), "/api/chronicles/nightfall/memberships/leave/", {})
    assert response.status_code == 400
    assert "last admin" in response.json()["error"]["message"]
    left = post(world.client("player_bob"), "/api/chronicles/nightfall/memberships/leave/", {})
    assert left.status_code == 204


def test_schema_documents_the_people_api(world: World) -> None:
    paths = (
        world.client("admin").get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    )
    for path in (
        "/api/chronicles/",
        "/api/chronicles/{slug}/invitations/",
        "/api/chronicles/{slug}/invitations/{id}/resend/",
        "/api/chronicles/{slug}/invitations/{id}/revoke/",
        "/api/chronicles/{slug}/memberships/leave/",
        "/api/invitations/accept/",
    ):
        assert path in paths, path
    member = paths["/api/chronicles/{slug}/memberships/{user_id}/"]
    assert {"get", "patch", "delete"} <= set(member)
