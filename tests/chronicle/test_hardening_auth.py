"""Issue 16, as an attacker tried it: a lockout of anyone behind a proxy, nested JSON as a 500,
and password resets without a limit. Each finding's reproduction is a test here."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.core import mail as outbox
from django.test import Client, override_settings
from django.urls import reverse

from chronicle.api_parsers import MAX_DEPTH, nesting_depth
from tests.conftest import PASSWORD, World

pytestmark = pytest.mark.django_db

WRONG = "not-the-password"
ATTACKER = "203.0.113.66"
HER_HOME = "198.51.100.7"
# The proxy's own address, as the web process sees it: the test client's REMOTE_ADDR.
PROXY = "127.0.0.1"

behind_one_proxy = override_settings(CHRONICLE_PROXY_COUNT=1)


def _via_proxy(client_address: str) -> Client:
    """A client whose requests come through one proxy that says who sent them."""
    return Client(HTTP_X_FORWARDED_FOR=client_address)


def _log_in(client: Client, password: str) -> Any:
    return client.post(reverse("login"), {"username": "storyteller", "password": password})


def _token(client: Client, password: str) -> Any:
    return client.post(
        "/api/auth/token/",
        {"username": "storyteller", "password": password},
        content_type="application/json",
    )


# --- Lockouts behind a proxy ------------------------------------------------------------------


@behind_one_proxy
def test_an_attacker_behind_the_proxy_locks_out_only_himself_on_the_login_page(
    world: World,
) -> None:
    attacker = _via_proxy(ATTACKER)
    answers = [_log_in(attacker, WRONG).status_code for _ in range(5)]
    assert answers == [200, 200, 200, 200, 429]

    # Her right password from her own address logs her in: she is not locked out.
    storyteller = _via_proxy(HER_HOME)
    response = _log_in(storyteller, PASSWORD)
    assert response.status_code == 302
    assert storyteller.session.get("_auth_user_id") == str(world.users["storyteller"].pk)

    # The attacker's address stays locked, even with the right password.
    assert _log_in(attacker, WRONG).status_code == 429
    assert _log_in(attacker, PASSWORD).status_code == 429

    # The lockout row names the attacker's address, not the proxy's.
    [attempt] = AccessAttempt.objects.filter(username="storyteller")
    assert attempt.ip_address == ATTACKER
    assert not AccessAttempt.objects.filter(ip_address=PROXY).exists()


@behind_one_proxy
def test_an_attacker_behind_the_proxy_locks_out_only_himself_on_the_token_endpoint(
    world: World,
) -> None:
    attacker = _via_proxy(ATTACKER)
    answers = [_token(attacker, WRONG).status_code for _ in range(5)]
    assert answers == [400, 400, 400, 400, 429]

    response = _token(_via_proxy(HER_HOME), PASSWORD)
    assert response.status_code == 200
    assert response.json()["token"]

    sixth = _token(attacker, WRONG)
    assert sixth.status_code == 429
    assert sixth.json()["error"]["code"] == "locked_out"
    [attempt] = AccessAttempt.objects.filter(username="storyteller")
    assert attempt.ip_address == ATTACKER


@behind_one_proxy
def test_an_address_written_into_the_header_by_the_client_is_not_believed(
    world: World,
) -> None:
    # The proxy appends the address it saw to whatever the client sent: the attacker cannot
    # pose as a new address with each try, nor as her.
    for forged in ["192.0.2.1", "192.0.2.2", HER_HOME, "192.0.2.4", "192.0.2.5"]:
        _log_in(_via_proxy(f"{forged}, {ATTACKER}"), WRONG)
    assert _log_in(_via_proxy(f"{HER_HOME}, {ATTACKER}"), PASSWORD).status_code == 429
    assert _log_in(_via_proxy(HER_HOME), PASSWORD).status_code == 302
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {ATTACKER}


def test_without_a_proxy_count_the_header_is_ignored(world: World) -> None:
    # Straight on the internet (the default), anyone can write X-Forwarded-For: it counts for
    # nothing, and the lockout follows the connection's address.
    for forged in ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.5"]:
        _log_in(_via_proxy(forged), WRONG)
    assert _log_in(_via_proxy(HER_HOME), PASSWORD).status_code == 429
    assert AccessAttempt.objects.get().ip_address == PROXY


# --- Nested JSON --------------------------------------------------------------------------------

DEEP_ARRAYS = "[" * 1000
DEEP_OBJECTS = '{"a":' * 1000


def _assert_parse_error(response: Any) -> None:
    assert response.status_code == 400, response.content[:200]
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == "parse_error"
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


@pytest.mark.parametrize("body", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["arrays", "objects"])
@pytest.mark.parametrize(
    ("persona", "path"),
    [
        (None, "/api/auth/token/"),
        ("admin", "/api/chronicles/nightfall/invitations/"),
        ("storyteller", "/api/chronicles/nightfall/games/"),
        ("player_alice", "/api/chronicles/nightfall/drafts/"),
    ],
)
def test_json_nested_too_deep_is_a_400_in_the_error_shape(
    world: World, persona: str | None, path: str, body: str
) -> None:
    client = world.client(persona)
    _assert_parse_error(client.post(path, body, content_type="application/json"))


def test_json_at_the_limit_is_parsed_and_one_deeper_is_not(world: World) -> None:
    client = world.client("storyteller")
    path = "/api/chronicles/nightfall/games/"
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    response = client.post(path, at_limit, content_type="application/json")
    # Parsed: the serializer answers, not the parser.
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    deeper = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    _assert_parse_error(client.post(path, deeper, content_type="application/json"))


def test_invalid_json_is_a_400_in_the_error_shape(world: World) -> None:
    _assert_parse_error(
        Client().post("/api/auth/token/", '{"username": ', content_type="application/json")
    )


def test_brackets_inside_strings_do_not_count() -> None:
    assert nesting_depth('["[[[[[[", {"a": "{{{{\\"[["}]') == 2
    assert nesting_depth('"' + "[" * 100 + '"') == 0
    assert nesting_depth(DEEP_ARRAYS) == MAX_DEPTH + 1


# --- Password reset -----------------------------------------------------------------------------


Reset = Callable[[Client, str], Any]


@pytest.fixture
def reset(django_capture_on_commit_callbacks: Any) -> Reset:
    """Ask for a reset. Its mail task is sent after commit (and run at once, as
    CHRONICLE_MAIL_EAGER says): inside the test's transaction, the hooks run as a commit would."""

    def ask(client: Client, address: str) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(reverse("password_reset"), {"email": address})
        # Throttled or not, known or not: the same "if the address is known" page.
        assert response.status_code == 302
        assert response["Location"] == reverse("password_reset_done")
        return response

    return ask


def test_thirteen_resets_for_one_address_send_at_most_three_mails(
    world: World, reset: Reset, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="chronicle.security"):
        for number in range(13):
            # From 13 different clients: the limit is the address's own.
            reset(Client(REMOTE_ADDR=f"192.0.2.{number + 1}"), "storyteller@example.com")
    assert len(outbox.outbox) == 3
    assert {tuple(sent.to) for sent in outbox.outbox} == {("storyteller@example.com",)}
    refused = [r for r in caplog.records if "Password reset refused" in r.getMessage()]
    assert len(refused) == 10
    assert all("storyteller@example.com" not in r.getMessage() for r in refused)

    # The address's case does not make it another address.
    reset(Client(REMOTE_ADDR="192.0.2.99"), "StoryTeller@Example.com")
    assert len(outbox.outbox) == 3

    # Another address still gets its mail.
    reset(Client(REMOTE_ADDR="192.0.2.100"), "player_alice@example.com")
    assert len(outbox.outbox) == 4
    assert outbox.outbox[-1].to == ["player_alice@example.com"]


def test_one_client_asking_for_many_addresses_is_throttled(
    world: World, reset: Reset, caplog: pytest.LogCaptureFixture
) -> None:
    client = Client(REMOTE_ADDR="192.0.2.50")
    for number in range(10):
        reset(client, f"nobody{number}@example.com")
    with caplog.at_level(logging.WARNING, logger="chronicle.security"):
        reset(client, "player_alice@example.com")
    assert outbox.outbox == []
    assert any("too many from client 192.0.2.50" in r.getMessage() for r in caplog.records)

    # Someone else, from elsewhere, is not affected.
    reset(Client(REMOTE_ADDR="192.0.2.51"), "player_bob@example.com")
    assert [sent.to for sent in outbox.outbox] == [["player_bob@example.com"]]


@behind_one_proxy
def test_the_reset_throttle_counts_the_client_behind_the_proxy(world: World, reset: Reset) -> None:
    for number in range(10):
        reset(_via_proxy(ATTACKER), f"nobody{number}@example.com")
    reset(_via_proxy(ATTACKER), "player_alice@example.com")
    assert outbox.outbox == []
    # Everyone else comes through the same proxy, and is not throttled with him.
    reset(_via_proxy(HER_HOME), "player_alice@example.com")
    assert [sent.to for sent in outbox.outbox] == [["player_alice@example.com"]]
