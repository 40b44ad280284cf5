"""The game's sign-in sheet as a PDF for the door (issue 17, "Paper"), and the fetcher that keeps
WeasyPrint off the network (chronicle/pdf.py).

The sheet lists the players the sign-in page lists, each with their playable characters, a
space to sign and a box for the waiver; the game's day, time and place in the chronicle's zone;
its header on every page and the page numbers in the footer; for staff only."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from characters.models import Approval, Character, Status
from chronicle import services
from chronicle.models import Role
from chronicle.pdf import Refused, StaticFilesOnly, css_string, page_number_css, static_name
from tests.pdfs import language_of, pages_of, text_of

pytestmark = pytest.mark.django_db

URL = "/c/nightfall/games/1/sign-in.pdf"
HEADER = ("Player", "Character", "Signature", "Waiver signed")


@pytest.fixture
def cast(world: Any, make_character: Callable[..., Character]) -> dict[str, Character]:
    """Alice plays Lucien; Bob plays Marguerite and has a retired PC and a draft; an NPC and a
    PC of the other chronicle are nobody's line on this sheet."""
    services.game_update(game=world.game, start_time=dt.time(20, 30))
    retired = make_character("Old Gaspard", player="player_bob")
    retired.status = Status.RETIRED
    retired.save(update_fields=["status"])
    draft = make_character("Unfinished Ines", player="player_bob")
    draft.approval = Approval.DRAFT
    draft.save(update_fields=["approval"])
    return {
        "lucien": make_character("Lucien", player="player_alice"),
        "marguerite": make_character("Marguerite", player="player_bob"),
        "retired": retired,
        "draft": draft,
        "npc": make_character("Prince Vannevar", player=None),
        "elsewhere": make_character("Berliner", player="other_storyteller", chronicle=world.other),
    }


def test_the_door_sheet_lists_each_player_with_their_character(
    world: Any, cast: dict[str, Character]
) -> None:
    response = world.client("storyteller").get(URL)
    assert response["Content-Disposition"] == 'inline; filename="nightfall-game-1-sign-in.pdf"'
    text = text_of(response)
    for label in HEADER:
        assert label in text, label
    assert "player_alice Lucien" in text
    assert "player_bob Marguerite" in text
    for name in ("Old Gaspard", "Unfinished Ines", "Prince Vannevar", "Berliner"):
        assert name not in text, name
    # Staff are no players: the sheet is the players', as on the page.
    assert "storyteller" not in text and "admin" not in text
    # The game on Saturday 9 March 2024, 20:30 in New York (EST: daylight time starts on the
    # 10th), at the Elysium.
    assert "Sat 9 Mar 2024, 20:30 EST" in text
    assert "Elysium" in text
    assert "Nightfall" in text
    assert "Page 1 of 1" in text


def test_a_player_with_a_full_name_is_listed_by_it(world: Any, cast: dict[str, Character]) -> None:
    alice = world.users["player_alice"]
    alice.first_name, alice.last_name = "Alice", "Fontaine"
    alice.save(update_fields=["first_name", "last_name"])
    text = text_of(world.client("storyteller").get(URL))
    assert "Alice Fontaine player_alice Lucien" in text


def test_without_a_start_time_the_sheet_gives_the_day(world: Any) -> None:
    text = text_of(world.client("admin").get(URL))
    assert "Sat 9 Mar 2024" in text and "EST" not in text


def test_a_long_sheet_repeats_its_header_and_numbers_its_pages(
    world: Any, make_user: Callable[..., Any], make_character: Callable[..., Character]
) -> None:
    for n in range(30):
        name = f"extra{n:02d}"
        world.users[name] = make_user(name)
        services.membership_add(chronicle=world.chronicle, user=world.users[name], role=Role.PLAYER)
        make_character(f"Childe {n:02d}", player=name)
    pages = pages_of(world.client("storyteller").get(URL))
    assert len(pages) >= 2
    for number, page in enumerate(pages, start=1):
        for label in HEADER:
            assert label in page, (number, label)
        assert f"Page {number} of {len(pages)}" in page
    text = " ".join(pages)
    assert all(f"extra{n:02d} Childe {n:02d}" in text for n in range(30))


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        pytest.param("player_alice", 403, id="player"),
        pytest.param("outsider", 404, id="outsider"),
        pytest.param("other_storyteller", 404, id="another-chronicles-storyteller"),
    ],
)
def test_only_staff_print_the_sheet_as_on_the_page(world: Any, persona: str, status: int) -> None:
    client = world.client(persona)
    page = client.get("/c/nightfall/games/1/sign-in/")
    response = client.get(URL)
    assert page.status_code == response.status_code == status
    assert b"%PDF" not in response.content


def test_anonymous_is_sent_to_log_in(world: Any) -> None:
    response = world.client(None).get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_an_unknown_game_is_404(world: Any) -> None:
    assert world.client("storyteller").get("/c/nightfall/games/99/sign-in.pdf").status_code == 404


def test_the_sheet_in_italian_declares_its_language(world: Any, cast: dict[str, Character]) -> None:
    with translation.override("it"):
        response = world.client("storyteller").get(URL, HTTP_ACCEPT_LANGUAGE="it")
        waiver = translation.gettext("Waiver signed")
    assert language_of(response) == "it"
    text = text_of(response)
    assert "Lucien" in text
    if waiver != "Waiver signed":
        assert waiver in text


def test_the_sheet_costs_the_same_queries_for_3_or_30_players(
    world: Any, make_user: Callable[..., Any], make_character: Callable[..., Character]
) -> None:
    def add_players(upto: int) -> None:
        have = len([u for u in world.users if u.startswith("p_")])
        for n in range(have, upto):
            name = f"p_{n:02d}"
            world.users[name] = make_user(name)
            services.membership_add(
                chronicle=world.chronicle, user=world.users[name], role=Role.PLAYER
            )
            make_character(f"Kindred {n:02d}", player=name)

    client = world.client("storyteller")
    counts = []
    for size in (3, 30):
        add_players(size)
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get(URL)
            seconds = time.perf_counter() - started
        counts.append(len(queries))
        assert f"p_{size - 1:02d} Kindred {size - 1:02d}" in text_of(response)
        print(f"sign-in sheet, {size + 2} players: {seconds:.2f}s, {len(queries)} queries")
    assert counts[0] == counts[1], counts


# --- The fetcher: our static files, nothing else -------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("http://127.0.0.1:9/evil.css", id="another-host"),
        pytest.param("https://example.com/static/chronicle/pdf.css", id="static-path-elsewhere"),
        pytest.param("file:///etc/passwd", id="a-local-file"),
        pytest.param("https://chronicle.invalid/media/x.png", id="outside-static"),
        pytest.param("https://chronicle.invalid/static/../../etc/passwd", id="climbing-out"),
        pytest.param("https://chronicle.invalid/static/%2e%2e/settings.py", id="climbing-quoted"),
        pytest.param("https://chronicle.invalid/static/chronicle/nothing.css", id="no-such-file"),
        pytest.param("data:text/css,body{color:red}", id="data-url"),
    ],
)
def test_the_fetcher_refuses_anything_but_our_static_files(url: str) -> None:
    with pytest.raises(Refused):
        StaticFilesOnly().fetch(url)


def test_the_fetcher_serves_our_static_files() -> None:
    assert static_name("https://chronicle.invalid/static/chronicle/pdf.css") == "chronicle/pdf.css"
    response = StaticFilesOnly().fetch("https://chronicle.invalid/static/chronicle/pdf.css")
    assert response.content_type == "text/css"
    assert b"DejaVu Sans" in response.read()


def test_footer_text_cannot_break_out_of_its_css_string() -> None:
    assert css_string('a"b</style>\\') == '"a\\22 b\\3c \\2f style\\3e \\5c "'
    assert css_string("Pàgina 1 d'1") == '"Pàgina 1 d\'1"'
    assert page_number_css() == '"Page " counter(page) " of " counter(pages)'
