"""Logging in and out, password reset, login throttling and API tokens, through the test client.

Every user of the `world` fixture has the password `PASSWORD` and the e-mail
`<username>@example.com`. Logins go through the real form (not `force_login`), so that
django-axes sees them exactly as it sees a browser's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from axes.models import AccessAttempt
from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user_model
from django.core import mail
from django.test import Client
from django.urls import reverse
from knox.models import AuthToken

from chronicle import services
from chronicle.models import Role
from tests.conftest import PASSWORD, World, give_birth_dates

LOGIN = "/accounts/login/"
WRONG_PASSWORD = "not-the-password"
NEW_PASSWORD = "a-brand-new-Passphrase-1987"


@pytest.fixture
def world(world: World) -> World:
    """The personas gave their date of birth (GEN-01): a login lands where it always did."""
    give_birth_dates(world.users.values())
    return world


@pytest.fixture(autouse=True)
def clean_axes(db: None) -> Iterator[None]:
    """No lockout leaks in from, or out to, another test (the transaction is rolled back too)."""
    axes_reset()
    yield
    axes_reset()


def log_in(client: Client, username: str, password: str, **extra: Any) -> Any:
    return client.post(LOGIN, {"username": username, "password": password}, **extra)


def logged_in_user_id(client: Client) -> str | None:
    return client.session.get(SESSION_KEY)


# --- Log in -----------------------------------------------------------------------------------


def test_login_page_renders_for_anonymous(client: Client) -> None:
    response = client.get(LOGIN)
    assert response.status_code == 200
    assert response.templates[0].name == "registration/login.html"
    content = response.content.decode()
    assert 'name="username"' in content
    assert 'name="password"' in content
    assert 'name="csrfmiddlewaretoken"' in content
    assert reverse("password_reset") in content


def test_wrong_password_shows_an_error_and_does_not_log_in(world: World, client: Client) -> None:
    response = log_in(client, "player_alice", WRONG_PASSWORD)
    assert response.status_code == 200  # the form again, not a redirect
    assert "Please enter a correct username and password" in response.content.decode()
    assert logged_in_user_id(client) is None
    # Still anonymous: a page behind the login sends us back to it.
    assert client.get("/c/nightfall/").status_code == 302


def test_login_redirects_home_then_to_the_only_chronicle(world: World, client: Client) -> None:
    response = log_in(client, "player_alice", PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == reverse("home")
    assert logged_in_user_id(client) == str(world.users["player_alice"].pk)

    response = client.get(response["Location"], follow=True)
    assert response.redirect_chain == [("/c/nightfall/", 302)]
    assert response.status_code == 200
    assert response.templates[0].name == "chronicle/dashboard.html"
    assert "<h1>Nightfall" in response.content.decode()


def test_login_honours_next(world: World, client: Client) -> None:
    response = client.post(
        LOGIN, {"username": "storyteller", "password": PASSWORD, "next": "/c/nightfall/games/"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/c/nightfall/games/"


def test_login_refuses_an_offsite_next(world: World, client: Client) -> None:
    response = client.post(
        LOGIN,
        {"username": "storyteller", "password": PASSWORD, "next": "https://evil.example/"},
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("home")


def test_member_of_two_chronicles_gets_the_switcher(world: World, client: Client) -> None:
    user = world.users["other_storyteller"]
    services.membership_add(chronicle=world.chronicle, user=user, role=Role.PLAYER)

    response = log_in(client, "other_storyteller", PASSWORD, follow=True)
    assert response.redirect_chain == [(reverse("home"), 302)]
    assert response.status_code == 200
    assert response.templates[0].name == "chronicle/switcher.html"
    content = response.content.decode()
    assert "Your chronicles" in content
    assert '<a href="/c/nightfall/">Nightfall</a>' in content
    assert '<a href="/c/other-city/">Other City</a>' in content


def test_user_without_chronicle_is_told_so(world: World, client: Client) -> None:
    response = log_in(client, "outsider", PASSWORD, follow=True)
    assert response.redirect_chain == [(reverse("home"), 302)]
    assert response.status_code == 200
    content = response.content.decode()
    assert "You do not belong to any chronicle yet" in content
    assert "/c/nightfall/" not in content
    assert "/c/other-city/" not in content


# --- Log out and anonymous access ------------------------------------------------------------


def test_logout_refuses_get(world: World, client: Client) -> None:
    log_in(client, "player_alice", PASSWORD)
    response = client.get(reverse("logout"))
    assert response.status_code == 405
    assert logged_in_user_id(client) == str(world.users["player_alice"].pk)


def test_logout_by_post_ends_the_session(world: World, client: Client) -> None:
    log_in(client, "player_alice", PASSWORD)
    assert client.get("/c/nightfall/").status_code == 200

    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert response["Location"] == reverse("login")
    assert logged_in_user_id(client) is None
    response = client.get("/c/nightfall/")
    assert response.status_code == 302
    assert response["Location"].startswith(LOGIN)


@pytest.mark.parametrize(
    "path", ["/", "/c/nightfall/", "/c/nightfall/games/", "/c/nightfall/games/new/"]
)
def test_anonymous_is_sent_to_login_with_next(world: World, client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"] == f"{LOGIN}?next={path}"


def test_logout_button_is_a_post_form(world: World, client: Client) -> None:
    log_in(client, "player_alice", PASSWORD)
    content = client.get("/c/nightfall/").content.decode()
    assert re.search(
        r'<form method="post" action="' + re.escape(reverse("logout")) + '"', content
    ), "the Log out button must POST"


# --- Password reset ---------------------------------------------------------------------------


def reset_link(message: mail.EmailMessage) -> str:
    match = re.search(r"https?://testserver(/accounts/reset/[^/\s]+/[^/\s]+/)", message.body)
    assert match, f"no reset link in the e-mail:\n{message.body}"
    return match.group(1)


def test_password_reset_by_email(
    world: World, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    # The mail leaves from a worker after the response (issue 17): run it as the worker would.
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("password_reset"), {"email": "player_alice@example.com"})
    assert response.status_code == 302
    assert response["Location"] == reverse("password_reset_done")

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["player_alice@example.com"]
    assert message.subject == "Reset your Chronicle password"
    assert "player_alice" in message.body
    link = reset_link(message)

    # The link from the e-mail swaps its token into the session and redirects to a URL
    # without it (so the token does not leak through the Referer header).
    response = client.get(link)
    assert response.status_code == 302
    set_password_url = response["Location"]
    assert set_password_url.endswith("/set-password/")
    response = client.get(set_password_url)
    assert response.status_code == 200
    assert response.context["validlink"] is True

    # A weak password is refused by the validators.
    response = client.post(
        set_password_url, {"new_password1": "12345678", "new_password2": "12345678"}
    )
    assert response.status_code == 200
    assert "This password is too common" in response.content.decode()

    response = client.post(
        set_password_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("password_reset_complete")

    # The old password no longer works; the new one does.
    fresh = Client()
    assert log_in(fresh, "player_alice", PASSWORD).status_code == 200
    assert logged_in_user_id(fresh) is None
    response = log_in(fresh, "player_alice", NEW_PASSWORD)
    assert response.status_code == 302
    assert logged_in_user_id(fresh) == str(world.users["player_alice"].pk)

    # The link is single-use.
    response = Client().get(link, follow=True)
    assert response.context["validlink"] is False


def without_csrf_token(response: Any) -> str:
    """The page without its per-request CSRF tokens: htmx's header and the language switcher's
    hidden field, which differ on every response whatever the address; and the CSP nonce."""
    page = re.sub(r'"X-CSRFToken": "[^"]*"', "", response.content.decode())
    nonce = response.get("Content-Security-Policy", "").partition("'nonce-")[2].partition("'")[0]
    if nonce:
        page = page.replace(nonce, "")
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


def test_password_reset_for_unknown_email_sends_nothing_and_looks_the_same(
    world: World, client: Client
) -> None:
    known = client.post(reverse("password_reset"), {"email": "player_bob@example.com"}, follow=True)
    mail.outbox.clear()
    unknown = client.post(reverse("password_reset"), {"email": "nobody@example.com"}, follow=True)

    assert len(mail.outbox) == 0
    assert unknown.redirect_chain == known.redirect_chain == [(reverse("password_reset_done"), 302)]
    assert unknown.status_code == known.status_code == 200
    assert "Check your e-mail" in unknown.content.decode()
    # Byte for byte the same page, but for the per-request CSRF token.
    assert without_csrf_token(unknown) == without_csrf_token(known)


# --- Login throttling (django-axes) -----------------------------------------------------------


def test_lockout_after_failure_limit(world: World, client: Client) -> None:
    limit = settings.AXES_FAILURE_LIMIT
    assert limit == 5
    for _ in range(limit - 1):
        response = log_in(client, "player_alice", WRONG_PASSWORD)
        assert response.status_code == 200
        assert "Please enter a correct username and password" in response.content.decode()

    # The limit-th failure is the one that locks the account (axes' default: 429).
    response = log_in(client, "player_alice", WRONG_PASSWORD)
    assert response.status_code == 429
    assert "Too many failed log-ins" in response.content.decode()

    # Now even the right password is refused, and no session is created.
    response = log_in(client, "player_alice", PASSWORD)
    assert response.status_code == 429
    assert "registration/locked_out.html" in [t.name for t in response.templates]
    assert "Too many failed log-ins" in response.content.decode()
    assert logged_in_user_id(client) is None
    assert client.get("/c/nightfall/").status_code == 302

    # The refused right password counts as one more failure.
    attempt = AccessAttempt.objects.get(username="player_alice")
    assert attempt.failures_since_start == limit + 1
    assert attempt.ip_address == "127.0.0.1"


def test_lockout_is_per_username_and_ip(world: World) -> None:
    attacker = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(attacker, "player_alice", WRONG_PASSWORD)
    assert log_in(attacker, "player_alice", PASSWORD).status_code == 429

    # Another user from the same IP address is not locked out.
    neighbour = Client()
    response = log_in(neighbour, "player_bob", PASSWORD)
    assert response.status_code == 302
    assert logged_in_user_id(neighbour) == str(world.users["player_bob"].pk)

    # The same user from another IP address is not locked out either.
    elsewhere = Client(REMOTE_ADDR="192.0.2.10")
    response = log_in(elsewhere, "player_alice", PASSWORD)
    assert response.status_code == 302
    assert logged_in_user_id(elsewhere) == str(world.users["player_alice"].pk)


def test_failures_below_the_limit_are_forgotten_after_a_success(
    world: World, client: Client
) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        log_in(client, "player_alice", WRONG_PASSWORD)
    assert log_in(client, "player_alice", PASSWORD).status_code == 302  # AXES_RESET_ON_SUCCESS
    client.post(reverse("logout"))

    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(client, "player_alice", WRONG_PASSWORD).status_code == 200
    assert log_in(client, "player_alice", PASSWORD).status_code == 302


def test_axes_reset_unlocks(world: World, client: Client) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, "player_alice", WRONG_PASSWORD)
    assert log_in(client, "player_alice", PASSWORD).status_code == 429

    assert axes_reset(username="player_alice") == 1
    assert log_in(client, "player_alice", PASSWORD).status_code == 302


def test_lockout_also_closes_the_api_token_endpoint(world: World, client: Client) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, "player_alice", WRONG_PASSWORD)

    response = Client().post(
        "/api/auth/token/",
        {"username": "player_alice", "password": PASSWORD},
        content_type="application/json",
    )
    # Axes refuses the right password here too, and says so as the page does.
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "locked_out"
    assert not AuthToken.objects.exists()


# --- API token --------------------------------------------------------------------------------


def test_api_token_authenticates_requests(world: World) -> None:
    api = Client()
    response = api.post(
        "/api/auth/token/",
        {"username": "player_alice", "password": PASSWORD},
        content_type="application/json",
    )
    assert response.status_code == 200
    key = response.json()["token"]
    assert set(response.json()) == {"token", "expiry"}
    assert AuthToken.objects.get(user=world.users["player_alice"]).token_key == key[:15]

    # Without the token the API refuses; with it, it answers as player_alice.
    response = Client().get("/api/chronicles/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    response = Client().get("/api/chronicles/", headers={"Authorization": f"Token {key}"})
    assert response.status_code == 200
    assert [c["slug"] for c in response.json()["results"]] == ["nightfall"]

    # A wrong token is refused, in the API's error shape.
    response = Client().get("/api/chronicles/", headers={"Authorization": "Token not-a-key"})
    assert response.status_code == 401
    assert response.json() == {
        "error": {"code": "authentication_failed", "message": "Invalid token."}
    }


def test_each_api_log_in_makes_a_new_token(world: World) -> None:
    keys = [
        Client()
        .post("/api/auth/token/", {"username": "storyteller", "password": PASSWORD})
        .json()["token"]
        for _ in range(2)
    ]
    assert keys[0] != keys[1]
    for key in keys:
        response = Client().get("/api/chronicles/", headers={"Authorization": f"Token {key}"})
        assert response.status_code == 200


BAD_CREDENTIALS = "Unable to log in with provided credentials."


@pytest.mark.parametrize(
    ("data", "message", "fields"),
    [
        pytest.param(
            {"username": "player_alice", "password": WRONG_PASSWORD},
            BAD_CREDENTIALS,
            None,
            id="wrong-password",
        ),
        pytest.param(
            {"username": "nobody", "password": PASSWORD}, BAD_CREDENTIALS, None, id="unknown-user"
        ),
        pytest.param(
            {"username": "player_alice"},
            "Some fields need attention.",
            {"password": ["This field is required."]},
            id="missing-password",
        ),
    ],
)
def test_api_token_bad_credentials(
    world: World, data: dict[str, str], message: str, fields: dict[str, list[str]] | None
) -> None:
    response = Client().post("/api/auth/token/", data, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    expected: dict[str, Any] = {"code": "invalid", "message": message}
    if fields:
        expected["fields"] = fields
    assert response.json() == {"error": expected}
    assert not AuthToken.objects.exists()


def test_inactive_user_cannot_log_in(world: World, make_user: Callable[..., Any]) -> None:
    user = make_user("retired")
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    client = Client()
    response = log_in(client, "retired", PASSWORD)
    assert response.status_code == 200
    assert logged_in_user_id(client) is None
