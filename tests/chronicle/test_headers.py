"""Issue 16: the response headers that protect every page.

- Content-Security-Policy (django-csp): every page and API answer of the crawl world carries one,
  without 'unsafe-inline'; every HTML page's policy names its nonce, every inline <script> and
  <style> it serves carries that nonce, and no element has a `style=` attribute (style-src
  without 'unsafe-inline' would drop it).
- Permissions-Policy on every answer.
- `Cache-Control: private, no-store` on every answer to a signed-in request (pages and API,
  errors included), none on static files and public pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import time_machine
from django.http import HttpResponse
from django.test import Client

from characters.models import Character
from tests import crawl_world
from tests.conftest import World

pytestmark = pytest.mark.django_db

NONCE = re.compile(r"'nonce-([A-Za-z0-9+/=]+)'")
TAG = re.compile(r"<(script|style)\b([^>]*)>", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[a-zA-Z][^<>]*\sstyle\s*=", re.IGNORECASE)
NONCE_ATTRIBUTE = re.compile(r"""\snonce\s*=\s*["']([^"']*)["']""")


def csp_problems(response: HttpResponse) -> list[str]:
    """What is wrong with one answer's Content-Security-Policy and the HTML it guards."""
    policy = response.get("Content-Security-Policy", "")
    if not policy:
        return ["no Content-Security-Policy"]
    problems = []
    if "unsafe-inline" in policy or "unsafe-eval" in policy:
        problems.append(f"unsafe source in {policy!r}")
    for directive in ("object-src 'none'", "frame-ancestors 'none'", "base-uri 'self'"):
        if directive not in policy:
            problems.append(f"no {directive}")
    if not response.get("Content-Type", "").startswith("text/html"):
        return problems
    nonces = NONCE.findall(policy)
    if len(set(nonces)) != 1:
        return [*problems, f"HTML without one nonce in {policy!r}"]
    nonce = nonces[0]
    for directive in ("script-src", "style-src"):
        if not re.search(rf"{directive} [^;]*'nonce-{re.escape(nonce)}'", policy):
            problems.append(f"{directive} lacks the nonce")
    body = response.content.decode(errors="replace")
    for tag, attributes in TAG.findall(body):
        if tag.lower() == "script" and re.search(r"\ssrc\s*=", attributes):
            continue  # script-src 'self' covers our own files
        found = NONCE_ATTRIBUTE.search(attributes)
        if found is None or found.group(1) != nonce:
            problems.append(f"inline <{tag}{attributes}> without the response's nonce")
    problems += [f"style attribute: {m.group(0)[:80]}" for m in STYLE_ATTRIBUTE.finditer(body)]
    return problems


def _get(world: World) -> Callable[[str | None, str], Any]:
    clients: dict[str | None, Client] = {}

    def get(persona: str | None, path: str) -> Any:
        if path.endswith(".pdf"):
            return HttpResponse(content_type="application/pdf")  # slow, and no HTML
        if persona not in clients:
            clients[persona] = crawl_world.client(world, persona)
        return clients[persona].get(path)

    return get


@pytest.fixture
def rich(world: World, make_character: Callable[..., Character]) -> crawl_world.Rich:
    return crawl_world.build(world, make_character)


def test_every_page_has_a_policy_with_its_nonce(rich: crawl_world.Rich) -> None:
    problems: list[str] = []
    pages = 0
    personas: list[str | None] = [None, "admin", "storyteller", "player_alice", "outsider"]
    with time_machine.travel(crawl_world.NOW, tick=True):
        for api in (False, True):
            walked = crawl_world.walk(
                rich, personas, _get(rich.world), lambda r: r.status_code, api=api
            )
            for persona, path, response in walked:
                if response.get("Content-Type", "") == "application/pdf":
                    continue
                pages += 1
                problems += [f"{persona} {path}: {p}" for p in csp_problems(response)]
    assert pages > 300, pages
    assert not problems, "\n".join(problems[:40])


def test_the_error_pages_and_login_have_the_policy(world: World) -> None:
    for persona, path in [
        (None, "/accounts/login/"),
        (None, "/no-such-page/"),
        ("player_alice", "/no-such-page/"),
        ("player_alice", f"/c/{world.other.slug}/"),
        ("storyteller", "/api/docs/"),
        (None, "/api/docs/"),
    ]:
        response = world.client(persona).get(path)
        assert csp_problems(response) == [], (persona, path, response.status_code)


def test_the_checker_sees_what_it_must() -> None:
    """The crawl above would pass with a checker that sees nothing."""
    policy = "default-src 'self'; script-src 'self' 'nonce-abc'; style-src 'self' 'nonce-abc'; "
    policy += "object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

    def page(body: str, header: str = policy) -> HttpResponse:
        response = HttpResponse(body)
        response["Content-Security-Policy"] = header
        return response

    assert csp_problems(page('<script nonce="abc">1</script><script src="/a.js"></script>')) == []
    assert csp_problems(page("<script>1</script>"))
    assert csp_problems(page('<style nonce="xyz">p{}</style>'))
    assert csp_problems(page('<p style="color:red">'))
    assert csp_problems(page("<p>", header=policy.replace("'self';", "'self' 'unsafe-inline';")))
    assert csp_problems(HttpResponse("<p>")) == ["no Content-Security-Policy"]
    # Text that merely mentions style= (escaped by the template) is no attribute.
    assert csp_problems(page("<p>&lt;b style=x&gt;</p>")) == []


def test_htmx_is_told_to_inject_no_style_and_evaluate_nothing(world: World) -> None:
    response = world.client("player_alice").get(f"/c/{world.chronicle.slug}/")
    nonce = NONCE.findall(response["Content-Security-Policy"])[0]
    body = response.content.decode()
    config = re.search(r'<meta name="htmx-config" content=\'([^\']*)\'>', body)
    assert config is not None
    assert '"includeIndicatorStyles": false' in config.group(1)
    assert '"allowEval": false' in config.group(1)
    assert f'"inlineScriptNonce": "{nonce}"' in config.group(1)


# --- Permissions-Policy ---------------------------------------------------------------------


@pytest.mark.parametrize("persona", [None, "player_alice"])
def test_every_answer_has_a_permissions_policy(world: World, persona: str | None) -> None:
    client = world.client(persona)
    for path in ("/accounts/login/", f"/c/{world.chronicle.slug}/", "/api/chronicles/", "/nope/"):
        policy = client.get(path).get("Permissions-Policy", "")
        for feature in ("camera", "microphone", "geolocation", "payment", "usb"):
            assert f"{feature}=()" in policy, (persona, path, policy)


# --- Cache-Control ----------------------------------------------------------------------------


def test_every_answer_to_a_player_is_private_and_not_stored(rich: crawl_world.Rich) -> None:
    wrong: list[str] = []
    seen: set[int] = set()
    with time_machine.travel(crawl_world.NOW, tick=True):
        for api in (False, True):
            walked = crawl_world.walk(
                rich, ["player_alice"], _get(rich.world), lambda r: r.status_code, api=api
            )
            for _persona, path, response in walked:
                if response.get("Content-Type", "") == "application/pdf" and not response.content:
                    continue
                seen.add(response.status_code)
                if response.get("Cache-Control") != "private, no-store":
                    wrong.append(f"{path} {response.status_code}: {response.get('Cache-Control')}")
    assert {200, 404} <= seen, seen
    assert not wrong, "\n".join(wrong[:40])


def test_errors_pdfs_and_api_refusals_are_private_too(world: World) -> None:
    alice = world.client("player_alice")
    slug = world.chronicle.slug
    for path in ("/no-such-page/", f"/c/{world.other.slug}/", f"/c/{slug}/desk/"):
        response = alice.get(path)
        assert response.status_code in (403, 404), (path, response.status_code)
        assert response["Cache-Control"] == "private, no-store", path
    # A POST the CSRF check refuses (403), and the API's own errors.
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(world.users["player_alice"])
    refused = strict.post("/accounts/password_change/", {})
    assert refused.status_code == 403
    assert refused["Cache-Control"] == "private, no-store"
    api = alice.get(f"/api/chronicles/{world.other.slug}/")
    assert api.status_code == 404 and api["Cache-Control"] == "private, no-store"
    # Credentials the API refuses: the 401 is as private as the 200 would have been.
    anonymous_with_token = Client(HTTP_AUTHORIZATION="Token not-a-real-token")
    bad = anonymous_with_token.get("/api/chronicles/")
    assert bad.status_code in (401, 403), bad.status_code
    assert bad["Cache-Control"] == "private, no-store"


def test_public_pages_and_static_files_may_be_cached(world: World) -> None:
    """Nothing is added for someone not signed in (the login page and /health keep Django's
    own never_cache, which the views chose)."""
    anonymous = Client()
    assert "Cache-Control" not in anonymous.get("/no-such-page/")
    assert anonymous.get("/health")["Cache-Control"] != "private, no-store"
    css = anonymous.get("/static/chronicle/app.css")
    assert css.status_code == 200
    assert "private" not in css.get("Cache-Control", "")
    # A signed-in person's static files are the same for everyone: cacheable.
    css = world.client("player_alice").get("/static/chronicle/app.css")
    assert css.status_code == 200
    assert "no-store" not in css.get("Cache-Control", "")
