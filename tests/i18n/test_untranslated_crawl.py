"""Every page in Italian and in Catalan (issue 17): each persona, with their saved language set to
`it` (then `ca`), reads every page of the crawl world (tests/crawl_world.py, walked as the
time-zone and accessibility crawls walk it), and no page shows a message of the catalog in
English, nor English words nobody marked for translation (tests/i18n/untranslated.py).
The API's one error shape says its `message` in the reader's language too.

This fails until locale/ holds complete translations; the meta-tests below prove the checker on
a tiny catalog and page of their own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import time_machine
from django.apps import apps
from django.conf import settings
from django.db import connection, models
from django.http import HttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils.formats import get_format
from knox.models import AuthToken

from characters.models import Character
from chronicle.services.account import profile_language_set
from tests import crawl_world
from tests.conftest import PERSONAS, World
from tests.i18n import catalog
from tests.i18n.untranslated import Checker, strings_in

pytestmark = pytest.mark.django_db

EVERYONE: list[str | None] = [*PERSONAS, None]
APPS = {"auth", "chronicle", "characters", "havens", "downtimes"}


def world_strings() -> set[str]:
    """What the world's people typed, as stored: every text and JSON string of its rows (the
    choice fields aside: those are codes a page shows through its translated label)."""
    found: set[str] = set()
    for model in apps.get_models():
        if model._meta.app_label not in APPS:
            continue
        text = [
            f.name
            for f in model._meta.concrete_fields
            if isinstance(f, models.CharField | models.TextField | models.JSONField)
            and not f.choices
        ]
        for row in model._default_manager.values_list(*text) if text else ():
            for value in row:
                found.update(strings_in(value))
    return found


def _user_data(entries: list[catalog.Entry]) -> set[str]:
    """The world's strings, but for those that hold a message of the catalog: an English text
    a service wrote into a row is no one's words, and its page must not show it."""
    whole, parts = catalog.telltales(entries)
    return {s for s in world_strings() if s not in whole and not any(p in s for p in parts)}


def _clients(world: World, language: str) -> Callable[[str | None, str], Any]:
    """Signed-in personas read in their saved language (no cookie, no Accept-Language: the
    Profile alone decides); someone not signed in chose it with the switcher (the cookie)."""
    clients: dict[str | None, Client] = {}

    def get(persona: str | None, path: str) -> Any:
        if path.endswith(".pdf"):
            # Rendering a PDF takes a second; their words are read (pypdf) by their own tests.
            return HttpResponse(content_type="application/pdf")
        if persona not in clients:
            clients[persona] = crawl_world.client(world, persona)
            if persona is None:
                clients[persona].cookies[settings.LANGUAGE_COOKIE_NAME] = language
        return clients[persona].get(path)

    return get


@pytest.mark.parametrize("language", catalog.LANGUAGES)
def test_every_page_is_in_the_readers_language(
    world: World, make_character: Callable[..., Character], language: str
) -> None:
    # Chosen before the world is built: what its services write to people (an inbox message)
    # is then in their language, as it would be.
    for persona in PERSONAS:
        profile_language_set(user=world.users[persona], language=language)
    rich = crawl_world.build(world, make_character)
    entries = catalog.read(language)
    separator = str(get_format("DECIMAL_SEPARATOR", language))
    checker = Checker(entries, _user_data(entries), decimal_separator=separator)
    problems: dict[str, list[str]] = {}
    errors: list[str] = []
    pages = 0
    with time_machine.travel(crawl_world.NOW, tick=True):
        walked = list(
            crawl_world.walk(rich, EVERYONE, _clients(world, language), lambda r: r.status_code)
        )
    for persona, path, response in walked:
        if response.status_code >= 500:
            errors.append(f"{persona} {path}: {response.status_code}")
        if not response.get("Content-Type", "").startswith("text/html"):
            continue
        html = response.content.decode()
        if "<html" in html[:200]:  # a whole page, not a fragment for htmx nor a redirect
            pages += response.status_code == 200
            assert f'<html lang="{language}">' in html[:200], (persona, path)
        for problem in checker.page(html):
            problems.setdefault(problem, []).append(f"{persona or 'anonymous'} {path}")
    assert not errors, "Server errors:\n" + "\n".join(errors)
    # It read pages, or it would pass on nothing.
    assert pages >= 100, pages
    lines = [
        f"{problem}\n    on {', '.join(where[:3])}{' …' if len(where) > 3 else ''}"
        for problem, where in sorted(problems.items())
    ]
    assert not problems, f"{len(problems)} English texts on {language} pages:\n" + "\n".join(lines)


def test_the_apis_refusals_are_in_the_readers_language(world: World) -> None:
    """A player may not add a game: the refusal (our own message) comes in Italian, as does
    DRF's own for someone not signed in."""
    entries = catalog.read("it")
    checker = Checker(entries)
    profile_language_set(user=world.users["player_alice"], language="it")
    refused = world.client("player_alice").post(
        "/api/chronicles/nightfall/games/", {"date": "2030-05-04"}
    )
    anonymous = Client(HTTP_ACCEPT_LANGUAGE="it").get("/api/chronicles/")
    assert (refused.status_code, anonymous.status_code) == (403, 401)
    problems = []
    for response in (refused, anonymous):
        message = json.loads(response.content)["error"]["message"]
        problems += [f"{response.request['PATH_INFO']}: {p}" for p in checker.text(message)]
    assert not problems, problems


def test_a_token_caller_reads_refusals_in_their_saved_language(world: World) -> None:
    """A script with a token has no session: its owner's saved language still decides, with
    no query more than English costs."""
    alice = world.users["player_alice"]
    _token, key = AuthToken.objects.create(user=alice)
    caller = Client(HTTP_AUTHORIZATION=f"Token {key}")
    path = "/api/chronicles/nightfall/games/"
    with CaptureQueriesContext(connection) as english:
        in_english = caller.post(path, {"date": "2030-05-04"})
    profile_language_set(user=alice, language="it")
    with CaptureQueriesContext(connection) as italian:
        in_italian = caller.post(path, {"date": "2030-05-04"})
    assert (in_english.status_code, in_italian.status_code) == (403, 403)
    english_message = json.loads(in_english.content)["error"]["message"]
    italian_message = json.loads(in_italian.content)["error"]["message"]
    assert italian_message != english_message
    assert not Checker(catalog.read("it")).text(italian_message)
    assert len(italian.captured_queries) == len(english.captured_queries)


# --- The checker catches what it is for --------------------------------------------------

TINY_CATALOG = r"""
msgid ""
msgstr ""
"Language: it\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

msgid "Desk"
msgstr "Scrivania"

#, python-format
msgid "Open until %(when)s: no more changes after the deadline."
msgstr "Aperto fino a %(when)s: nessuna modifica dopo la scadenza."

msgid "Save the <strong>whole</strong> downtime now"
msgstr "Salva <strong>tutto</strong> il downtime ora"

msgid "Ventrue"
msgstr "Ventrue"

#, python-format
msgid "%(n)s day left"
msgid_plural "%(n)s days left"
msgstr[0] "%(n)s giorno rimasto"
msgstr[1] "%(n)s giorni rimasti"
"""


def _page(body: str) -> str:
    head = '<!doctype html><html lang="it"><head><title>Chronicle</title></head>'
    return f"{head}<body>{body}</body></html>"


def test_the_checker_finds_english_left_on_a_page() -> None:
    checker = Checker(catalog.parse(TINY_CATALOG), user_data=["Lucien keeps to the galleries."])
    html = _page(
        '<nav><a href="/d">Desk</a></nav>'
        "<p>Open until <time>mar 16 apr</time>: no more changes after the deadline.</p>"
        '<button title="Save the whole downtime now">Salva</button>'
        "<p>3 days left</p><p>Nothing is waiting for you.</p>"
    )
    problems = checker.page(html)
    assert "message in English: 'Desk'" in problems
    assert "message in English: 'no more changes after the deadline'" in problems
    assert "message in English: 'downtime now'" not in problems  # two words: too few to tell
    assert any(p.startswith("English 'you'") for p in problems), problems
    assert any(p.startswith("English 'the'") for p in problems), problems
    assert not any("days left" in p for p in problems)  # two words: too few to tell


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Saldo: 34.5 PE", ["34.5"]),
        ("+2.5 il 20 mar", ["2.5"]),
        ("Saldo: 34,5 PE", []),
        ("Scadenza 2024-04-16, 23:59 EDT; regole HAV-10..24, versione 1.2.3", []),
    ],
)
def test_the_checker_finds_a_number_written_the_english_way(text: str, found: list[str]) -> None:
    italian = Checker([], decimal_separator=",")
    problems = italian.page(_page(f"<p>{text}</p>"))
    assert [p.split("'")[1] for p in problems] == found, problems
    assert Checker([]).page(_page(f"<p>{text}</p>")) == []  # English writes 34.5


def test_the_checker_passes_a_translated_page_with_peoples_own_words() -> None:
    """Italian everywhere, a name the catalog keeps (Ventrue), the product's name, and a note a
    player typed in English: nothing to report."""
    checker = Checker(catalog.parse(TINY_CATALOG), user_data=["Lucien keeps to the galleries."])
    html = _page(
        '<header><a class="brand">Chronicle</a><a href="/d">Scrivania</a></header>'
        "<p>Aperto fino a <time>mar 16 apr</time>: nessuna modifica dopo la scadenza.</p>"
        "<p>Clan: Ventrue</p><blockquote>Lucien keeps to the galleries.</blockquote>"
        '<input type="submit" value="Salva"><script>var the = "and you";</script>'
    )
    assert checker.page(html) == []


def test_the_checker_reads_what_a_reader_sees_or_hears() -> None:
    checker = Checker(catalog.parse(TINY_CATALOG))
    for html in (
        '<button aria-label="Desk">×</button>',
        '<input type="submit" value="Desk">',
        '<form data-confirm="Are you sure? This cannot be undone."></form>',
        '<img alt="Your portrait" src="x.png">',
    ):
        assert checker.page(_page(html)), html
    # A text field's value is what someone typed, a hidden one is for machines.
    assert (
        checker.page(_page('<input type="text" value="the"><input type="hidden" value="and">'))
        == []
    )
