"""Which language a page is in, and how a person chooses it (issue 17):

- the order of precedence: the language saved on the person's account, then the language cookie
  (the switcher sets it for everyone), then the browser's Accept-Language, then English; at no
  extra query (the Profile comes with the user: chronicle.backends);
- the switcher in the header (also for someone not signed in) and on the account page, and its
  view: it saves, sets the cookie, and goes back only to a page of this site;
- <html lang> names the page's language; moments and XP numbers are written the locale's way;
  the countdown's words come from the page, not from its script; the API's error `message` is
  in the request's language.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import zoneinfo
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection
from django.template import Context, Template
from django.template.loader import render_to_string
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import translation
from rest_framework import exceptions
from rest_framework.fields import DateField

from characters.models import Character, XpKind
from characters.services import ledger
from chronicle.models import Profile
from chronicle.moments import day_text, moment_text
from chronicle.services.account import profile_language_set
from tests.conftest import World

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
COOKIE = settings.LANGUAGE_COOKIE_NAME


def _lang(response: Any) -> str:
    match = re.search(r'<html lang="([^"]*)"', response.content.decode())
    assert match, response.content[:200]
    return match.group(1)


def _client(world: World, persona: str | None, cookie: str | None, accept: str | None) -> Client:
    client = Client(**({"HTTP_ACCEPT_LANGUAGE": accept} if accept else {}))
    if persona:
        client.force_login(world.users[persona])
    if cookie:
        client.cookies[COOKIE] = cookie
    return client


# --- Which language -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("saved", "cookie", "accept", "expected"),
    [
        pytest.param("ca", "it", "it", "ca", id="saved-beats-cookie-and-browser"),
        pytest.param("it", None, None, "it", id="saved-alone"),
        pytest.param("", "ca", "it", "ca", id="cookie-beats-browser"),
        pytest.param("", None, "it-IT,it;q=0.9,en;q=0.5", "it", id="browser"),
        pytest.param("", None, "de-DE,de;q=0.9", "en", id="browser-in-no-language-of-ours"),
        pytest.param("", None, None, "en", id="english"),
        pytest.param(None, None, "ca", "ca", id="no-profile-yet"),
    ],
)
def test_the_language_of_a_page(
    world: World, saved: str | None, cookie: str | None, accept: str | None, expected: str
) -> None:
    if saved is not None:
        profile_language_set(user=world.users["player_alice"], language=saved)
    client = _client(world, "player_alice", cookie, accept)
    response = client.get(f"/c/{world.chronicle.slug}/")
    assert response.status_code == 200
    assert _lang(response) == expected
    assert expected == response.wsgi_request.LANGUAGE_CODE
    assert response["Content-Language"] == expected


@pytest.mark.parametrize(
    ("cookie", "accept", "expected"),
    [("it", "ca", "it"), (None, "ca", "ca"), (None, None, "en"), ("xx", "it", "it")],
)
def test_someone_not_signed_in_reads_the_cookies_language_else_the_browsers(
    world: World, cookie: str | None, accept: str | None, expected: str
) -> None:
    response = _client(world, None, cookie, accept).get("/accounts/login/")
    assert _lang(response) == expected


def test_a_saved_language_no_longer_offered_falls_back_to_the_browsers(world: World) -> None:
    Profile.objects.create(user=world.users["player_alice"], language="de")
    response = _client(world, "player_alice", None, "ca").get("/account/")
    assert _lang(response) == "ca"


def _queries(client: Client, path: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200
    return len(queries)


def test_the_saved_language_costs_no_query(world: World) -> None:
    """The Profile is joined to the user's own lookup: a page costs the same without a Profile,
    with a blank language or with a saved one."""
    alice = world.users["player_alice"]
    client = Client()
    client.force_login(alice)
    page = f"/c/{world.chronicle.slug}/games/"
    counts = [_queries(client, page)]
    for language in ("", "it"):
        profile_language_set(user=alice, language=language)
        counts.append(_queries(client, page))
    assert counts[0] == counts[1] == counts[2], counts
    assert _lang(client.get(page)) == "it"


# --- The switcher -----------------------------------------------------------------------------


def _switcher(html: str, form_id: str = "language-bar") -> str:
    """The language form whose select is `form_id` (the header's, or the account page's)."""
    forms = re.findall(r'<form method="post" action="/language/".*?</form>', html, re.DOTALL)
    mine = [form for form in forms if f'id="{form_id}"' in form]
    assert len(mine) == 1, forms
    return mine[0]


@pytest.mark.parametrize("persona", ["player_alice", "storyteller", "admin", None])
def test_the_header_has_the_switcher_for_everyone(world: World, persona: str | None) -> None:
    path = f"/c/{world.chronicle.slug}/" if persona else "/accounts/login/"
    html = _client(world, persona, "ca", None).get(path).content.decode()
    header = html.split('<header class="topbar"', 1)[1].split("</header>", 1)[0]
    form = _switcher(header)
    assert 'method="post"' in form and 'name="csrfmiddlewaretoken"' in form
    assert '<label for="language-bar">' in form
    assert '<select id="language-bar" name="language">' in form
    # Each language in its own words, marked with its own lang; the page's selected.
    assert '<option value="en" lang="en">English</option>' in form
    assert '<option value="it" lang="it">Italiano</option>' in form
    assert '<option value="ca" lang="ca" selected>Català</option>' in form
    assert '<button type="submit"' in form
    assert f'name="next" value="{path}"' in form


def test_choosing_a_language_saves_it_and_sets_the_cookie(world: World) -> None:
    client = _client(world, "player_alice", None, "en")
    page = f"/c/{world.chronicle.slug}/games/"
    response = client.post("/language/", {"language": "it", "next": page})
    assert (response.status_code, response["Location"]) == (302, page)
    assert Profile.objects.get(user=world.users["player_alice"]).language == "it"
    cookie = response.cookies[COOKIE]
    assert cookie.value == "it" and int(cookie["max-age"]) == settings.LANGUAGE_COOKIE_AGE
    assert _lang(client.get(page)) == "it"
    # The choice is the account's: another browser, without the cookie, reads Italian too.
    assert _lang(_client(world, "player_alice", None, "en").get(page)) == "it"


def test_someone_not_signed_in_chooses_by_the_cookie_alone(world: World) -> None:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    response = client.post("/language/", {"language": "ca", "next": "/accounts/login/"})
    assert response["Location"] == "/accounts/login/"
    assert response.cookies[COOKIE].value == "ca"
    assert not Profile.objects.exists()
    assert _lang(client.get("/accounts/login/")) == "ca"


@pytest.mark.parametrize(
    "next_page",
    ["https://evil.example/", "//evil.example/c/", "javascript:alert(1)", ""],
)
def test_the_switcher_goes_back_only_to_this_site(world: World, next_page: str) -> None:
    response = _client(world, "player_alice", None, None).post(
        "/language/", {"language": "it", "next": next_page}
    )
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_without_next_the_switcher_goes_back_where_it_was(world: World) -> None:
    page = f"/c/{world.chronicle.slug}/games/"
    response = _client(world, "player_alice", None, None).post(
        "/language/", {"language": "ca"}, HTTP_REFERER=f"http://testserver{page}"
    )
    assert response["Location"] == f"http://testserver{page}"


def test_a_language_not_offered_changes_nothing(world: World) -> None:
    profile_language_set(user=world.users["player_alice"], language="ca")
    client = _client(world, "player_alice", None, None)
    response = client.post("/language/", {"language": "de", "next": "/account/"}, follow=True)
    assert Profile.objects.get(user=world.users["player_alice"]).language == "ca"
    assert COOKIE not in response.cookies or not response.cookies[COOKIE].value
    assert 'class="toast error"' in response.content.decode()


def test_the_service_saves_only_a_language_offered(world: World) -> None:
    alice = world.users["player_alice"]
    assert profile_language_set(user=alice, language="ca").language == "ca"
    assert profile_language_set(user=alice, language="").language == ""
    with pytest.raises(ValidationError) as refused:
        profile_language_set(user=alice, language="fr")
    assert "language" in refused.value.message_dict
    assert Profile.objects.get(user=alice).language == ""


def test_the_switcher_takes_only_a_post(world: World) -> None:
    assert _client(world, "player_alice", None, None).get("/language/").status_code == 405


def test_the_account_page_shows_the_saved_choice_and_can_give_it_back_to_the_browser(
    world: World,
) -> None:
    profile_language_set(user=world.users["player_alice"], language="ca")
    client = _client(world, "player_alice", "ca", "it")
    form = _switcher(client.get("/account/").content.decode(), "language-account")
    assert '<option value="ca" lang="ca" selected>Català</option>' in form
    assert '<option value="">' in form  # "As my browser says"
    response = client.post("/language/", {"language": "", "next": "/account/"})
    assert Profile.objects.get(user=world.users["player_alice"]).language == ""
    assert response.cookies[COOKIE].value == ""  # deleted
    page = client.get("/account/")
    assert _lang(page) == "it"  # the browser's, now
    form = _switcher(page.content.decode(), "language-account")
    assert '<option value="" selected>' in form


# --- <html lang>, moments, numbers, the countdown, the API ------------------------------------


def test_every_full_page_template_says_its_language() -> None:
    """base.html and the pages that do not extend it (the 500 page, the print sheet): mails are
    no pages."""
    templates = ROOT / "templates"
    full = [
        p
        for p in templates.rglob("*.html")
        if "<html" in p.read_text(encoding="utf-8") and "mail" not in p.parts
    ]
    assert templates / "base.html" in full and templates / "500.html" in full
    for path in full:
        text = path.read_text(encoding="utf-8")
        assert re.search(r'<html lang="\{\{', text), path.relative_to(ROOT)
    with translation.override("ca"):
        assert '<html lang="ca">' in render_to_string("500.html")


def test_the_print_sheet_says_its_language(world: World, make_character: Any) -> None:
    lucien = make_character("Lucien")
    profile_language_set(user=world.users["player_alice"], language="it")
    response = world.client("player_alice").get(
        f"/c/{world.chronicle.slug}/characters/{lucien.pk}/print/"
    )
    assert _lang(response) == "it"


@pytest.mark.parametrize(
    ("language", "moment", "day"),
    [
        ("en", "Tue 8 Dec 2026, 23:59 EST", "Tue 8 Dec 2026"),
        ("it", "Mar 8 dic 2026, 23:59 EST", "Mar 8 dic 2026"),
        ("ca", "dt. 8 des. 2026, 23:59 EST", "dt. 8 des. 2026"),
    ],
)
def test_moments_are_written_the_languages_way(language: str, moment: str, day: str) -> None:
    late = dt.datetime(2026, 12, 9, 4, 59, tzinfo=dt.UTC)
    with translation.override(language):
        assert moment_text(late, NEW_YORK) == moment
        assert day_text(late, NEW_YORK) == day
        html = Template("{% load chronicle_ui %}{{ m|when:z }} {{ m|day:z }}").render(
            Context({"m": late, "z": NEW_YORK})
        )
    assert f">{moment}</time>" in html and f">{day}</time>" in html


def test_xp_shows_the_locales_decimal_separator(world: World, make_character: Any) -> None:
    lucien: Character = make_character("Lucien")
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal("34.5"),
        kind=XpKind.AWARD,
        reason="Costume prize",
        key="test:award",
    )
    sheet = f"/c/{world.chronicle.slug}/characters/{lucien.pk}/"
    english = world.client("player_alice").get(sheet).content.decode()
    profile_language_set(user=world.users["player_alice"], language="it")
    italian = world.client("player_alice").get(sheet).content.decode()
    assert "34.5" in english and "34,5" not in english
    assert "34,5" in italian and "34.5" not in italian


def test_the_countdowns_words_come_from_the_page(world: World, make_character: Any) -> None:
    """countdown.js writes what data-left says, in the page's language; it has no words."""
    script = (ROOT / "downtimes" / "static" / "downtimes" / "countdown.js").read_text()
    assert script_texts(script) == [] and "dataset.left" in script
    lucien = make_character("Lucien")
    with time_machine.travel(dt.datetime(2024, 3, 15, 12, tzinfo=NEW_YORK), tick=False):
        page = world.client("player_alice").get(f"/c/{world.chronicle.slug}/downtime/{lucien.pk}/")
    html = page.content.decode()
    assert 'id="countdown"' in html
    assert 'data-left="{d} d {h} h {m} min left"' in html


# A text in a script (a string literal of two words or more, or an English function word) is
# text a reader sees that no catalog can translate: it must come from the page.
STRING = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'")
WORDS = re.compile(r"[A-Za-z]{2,} [a-z]{2,}|\b(?:the|your|with|and|you|this)\b", re.IGNORECASE)


def script_texts(source: str) -> list[str]:
    code = re.sub(r"^\s*//.*$", "", source, flags=re.MULTILINE)
    found = (a or b for a, b in STRING.findall(code))
    return [text for text in found if WORDS.search(text) and text != "use strict"]


def test_no_script_carries_english_a_reader_sees() -> None:
    scripts = [p for p in ROOT.glob("*/static/**/*.js") if ".venv" not in p.parts]
    assert len(scripts) >= 3
    found = {
        str(p.relative_to(ROOT)): texts
        for p in scripts
        if (texts := script_texts(p.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_script_check_finds_english() -> None:
    old_countdown = 'el.textContent = s ? "(" + d + " d " + h + " h " + m + " min left)" : x;'
    assert script_texts(old_countdown) == [" min left)"]
    assert script_texts('window.confirm("Are you sure?")') == ["Are you sure?"]
    assert script_texts("document.querySelector(\"input, textarea, [data-x='a b']\")") == []


def test_the_apis_messages_are_in_the_requests_language(world: World) -> None:
    anonymous = Client(HTTP_ACCEPT_LANGUAGE="it").get("/api/chronicles/")
    with translation.override("it"):
        italian = str(exceptions.NotAuthenticated.default_detail)
    assert json.loads(anonymous.content)["error"]["message"] == italian
    with translation.override("en"):
        assert italian != str(exceptions.NotAuthenticated.default_detail)
    # A signed-in storyteller who saved Catalan: DRF's field errors in Catalan.
    profile_language_set(user=world.users["storyteller"], language="ca")
    response = world.client("storyteller").post(
        f"/api/chronicles/{world.chronicle.slug}/games/", {"date": "not a date"}
    )
    assert response.status_code == 400
    error = json.loads(response.content)["error"]
    with translation.override("ca"):
        catalan = str(DateField.default_error_messages["invalid"]).split("{")[0]
    assert catalan and error["fields"]["date"][0].startswith(catalan), error
