"""API tokens (issue 16): hashed, expiring, one per log-in, revocable from the API and the account
page, and revoked when the password changes or is reset, or the account is deactivated."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from knox.models import AuthToken

from chronicle.services import api_tokens
from tests.conftest import PASSWORD, World, give_birth_dates

NEW_PASSWORD = "a-brand-new-Passphrase-1987"
CHRONICLES = "/api/chronicles/"


@pytest.fixture
def world(world: World) -> World:
    give_birth_dates(world.users.values())
    return world


@pytest.fixture(autouse=True)
def clean_axes(db: None) -> Iterator[None]:
    axes_reset()
    yield
    axes_reset()


def issue(username: str = "player_alice", password: str = PASSWORD) -> Any:
    return Client().post(
        "/api/auth/token/",
        {"username": username, "password": password},
        content_type="application/json",
    )


def key_of(username: str = "player_alice", password: str = PASSWORD) -> str:
    response = issue(username, password)
    assert response.status_code == 200, response.content
    return str(response.json()["token"])


def call(key: str, path: str = CHRONICLES, method: str = "get") -> Any:
    return getattr(Client(), method)(path, headers={"Authorization": f"Token {key}"})


def works(key: str) -> bool:
    status = call(key).status_code
    assert status in (200, 401), status
    return bool(status == 200)


# --- Issuing ------------------------------------------------------------------------------------


def test_each_log_in_makes_a_new_token_and_both_work(world: World) -> None:
    first, second = key_of(), key_of()
    assert first != second
    assert works(first) and works(second)
    assert AuthToken.objects.filter(user=world.users["player_alice"]).count() == 2


def test_the_response_gives_the_token_and_its_expiry(world: World) -> None:
    before = timezone.now()
    response = issue()
    body = response.json()
    assert set(body) == {"token", "expiry"}
    expiry = dt.datetime.fromisoformat(body["expiry"])
    ttl = dt.timedelta(days=settings.API_TOKEN_TTL_DAYS)
    assert settings.API_TOKEN_TTL_DAYS == 30
    assert before + ttl <= expiry <= timezone.now() + ttl


def test_the_database_never_holds_the_key(world: World) -> None:
    key = key_of()
    token = AuthToken.objects.get(user=world.users["player_alice"])
    # Only its SHA-512 and its first characters (to find the row) are stored.
    assert token.digest == hashlib.sha512(key.encode()).hexdigest()
    assert len(key) == 64 and key.startswith(token.token_key) and len(token.token_key) == 15
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {AuthToken._meta.db_table}")
        stored = " ".join(str(value) for row in cursor.fetchall() for value in row)
    assert key not in stored


def test_api_failures_count_towards_the_lockout(world: World) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert issue(password="wrong-password").status_code == 400
    assert issue(password="wrong-password").status_code == 429
    response = issue()
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "locked_out"
    assert not AuthToken.objects.exists()


# --- Using and expiring --------------------------------------------------------------------------


def test_a_token_expires_after_the_ttl(world: World) -> None:
    key = key_of()
    ttl = dt.timedelta(days=settings.API_TOKEN_TTL_DAYS)
    with time_machine.travel(timezone.now() + ttl - dt.timedelta(minutes=1), tick=False):
        assert works(key)
    with time_machine.travel(timezone.now() + ttl + dt.timedelta(minutes=1), tick=False):
        response = call(key)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "authentication_failed"
    # The expired row is gone, not merely refused.
    assert not AuthToken.objects.exists()
    assert not works(key)


def test_unauthenticated_calls_answer_401_with_the_token_challenge(world: World) -> None:
    response = Client().get(CHRONICLES)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["error"]["code"] == "not_authenticated"
    response = call("0" * 64)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {
        "error": {"code": "authentication_failed", "message": "Invalid token."}
    }


def test_an_inactive_owners_token_is_refused(world: World) -> None:
    key = key_of()
    # Behind the services' back (no signal): the authentication itself still refuses.
    type(world.users["player_alice"]).objects.filter(username="player_alice").update(
        is_active=False
    )
    response = call(key)
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "User inactive or deleted."


# --- Revoking through the API -------------------------------------------------------------------


def test_logout_revokes_only_the_calling_token(world: World) -> None:
    first, second = key_of(), key_of()
    response = call(first, "/api/auth/logout/", "post")
    assert response.status_code == 204
    assert not works(first)
    assert works(second)
    assert call(first, "/api/auth/logout/", "post").status_code == 401


def test_logout_all_revokes_every_token_of_the_caller_only(world: World) -> None:
    first, second, bobs = key_of(), key_of(), key_of("player_bob")
    assert call(first, "/api/auth/logout-all/", "post").status_code == 204
    assert not works(first) and not works(second)
    assert works(bobs)


def test_logout_needs_a_token_not_a_session(world: World) -> None:
    key = key_of()
    for path in ("/api/auth/logout/", "/api/auth/logout-all/"):
        response = world.client("player_alice").post(path)
        assert response.status_code == 401
    assert works(key)


# --- Revoked when the password changes or the account closes ------------------------------------


def test_changing_the_password_revokes_every_token(world: World) -> None:
    first, second, bobs = key_of(), key_of(), key_of("player_bob")
    response = world.client("player_alice").post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302
    assert not works(first) and not works(second)
    assert works(bobs)
    assert works(key_of(password=NEW_PASSWORD))


def test_a_password_reset_revokes_every_token(world: World) -> None:
    alice = world.users["player_alice"]
    key = key_of()
    alice.refresh_from_db()  # the API log-in set last_login, which the reset link signs
    uid = urlsafe_base64_encode(force_bytes(alice.pk))
    client = Client()
    response = client.get(f"/accounts/reset/{uid}/{default_token_generator.make_token(alice)}/")
    assert response.status_code == 302
    response = client.post(
        response["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("password_reset_complete")
    assert not works(key)


def test_deactivating_the_account_revokes_every_token(world: World) -> None:
    key, bobs = key_of(), key_of("player_bob")
    alice = world.users["player_alice"]
    alice.is_active = False
    alice.save()
    assert not AuthToken.objects.filter(user=alice).exists()
    alice.is_active = True
    alice.save()
    assert not works(key)
    assert works(bobs)


def test_other_saves_of_the_user_keep_the_tokens(world: World) -> None:
    key = key_of()
    alice = world.users["player_alice"]
    alice.first_name = "Alice"
    alice.save()
    assert works(key)


# --- The account page -----------------------------------------------------------------------------


def test_the_account_page_lists_tokens_by_prefix_only(world: World) -> None:
    key = key_of()
    token = AuthToken.objects.get()
    response = world.client("player_alice").get(reverse("account"))
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="api-tokens"' in page
    assert f"<code>{key[: api_tokens.SHOWN_PREFIX]}…</code>" in page
    assert key[: api_tokens.SHOWN_PREFIX + 1] not in page
    assert token.token_key not in page
    assert reverse("api_token_revoke", args=[token.digest]) in page
    assert reverse("api_tokens_revoke_all") in page
    # Another person's token is not on it.
    key_of("player_bob")
    page = world.client("player_alice").get(reverse("account")).content.decode()
    assert page.count('class="danger small"') == 1


def test_the_account_page_says_when_there_are_none(world: World) -> None:
    page = world.client("player_alice").get(reverse("account")).content.decode()
    assert "No API tokens." in page
    assert reverse("api_tokens_revoke_all") not in page


def test_revoke_from_the_account_page(world: World) -> None:
    first, second = key_of(), key_of()
    digest = AuthToken.objects.get(token_key=first[:15]).digest
    url = reverse("api_token_revoke", args=[digest])
    client = world.client("player_alice")
    assert client.get(url).status_code == 405
    response = client.post(url)
    assert response.status_code == 302
    assert response["Location"] == reverse("account") + "#api-tokens"
    assert not works(first)
    assert works(second)
    # Already gone: nothing to revoke.
    assert client.post(url).status_code == 404


def test_revoke_needs_the_csrf_token(world: World) -> None:
    key = key_of()
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["player_alice"])
    digest = AuthToken.objects.get().digest
    assert client.post(reverse("api_token_revoke", args=[digest])).status_code == 403
    assert client.post(reverse("api_tokens_revoke_all")).status_code == 403
    assert works(key)


def test_nobody_revokes_another_persons_token(world: World) -> None:
    bobs = key_of("player_bob")
    digest = AuthToken.objects.get().digest
    for persona in ("player_alice", "admin", "storyteller"):
        response = world.client(persona).post(reverse("api_token_revoke", args=[digest]))
        assert response.status_code == 404
        world.client(persona).post(reverse("api_tokens_revoke_all"))
    assert works(bobs)
    assert Client().post(reverse("api_token_revoke", args=[digest])).status_code == 302
    assert works(bobs)


def test_revoke_all_from_the_account_page(world: World) -> None:
    first, second, bobs = key_of(), key_of(), key_of("player_bob")
    response = world.client("player_alice").post(reverse("api_tokens_revoke_all"), follow=True)
    assert response.status_code == 200
    assert "2 API tokens are revoked." in response.content.decode()
    assert not works(first) and not works(second)
    assert works(bobs)


def test_the_account_page_costs_the_same_queries_with_1_or_10_tokens(world: World) -> None:
    alice = world.users["player_alice"]
    client = world.client("player_alice")
    client.get(reverse("account"))  # warm caches (session, content types)

    def queries(tokens: int) -> int:
        AuthToken.objects.filter(user=alice).delete()
        for _ in range(tokens):
            api_tokens.token_issue(user=alice)
        with CaptureQueriesContext(connection) as captured:
            response = client.get(reverse("account"))
        assert response.status_code == 200
        assert response.content.decode().count("<code>") - 1 == tokens  # one in the help text
        return len(captured.captured_queries)

    assert queries(1) == queries(10)
