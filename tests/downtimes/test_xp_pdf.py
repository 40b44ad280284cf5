"""The cycle's XP report as a PDF (issue 17, "Paper"): the same statement as the page (the
release's lines, overrides applied, then each group outside the release, with subtotals), for
staff only, in the reader's language, at a constant number of queries.

The month: Lucien (player_alice) and Marguerite (player_bob) both came to game 1 and signed the
waiver; the storytellers set Alice's award to 4 XP and Bob's to 1.5 XP with a note each."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from characters.models import Character, XpKind
from characters.services import ledger
from chronicle import services as chronicle_services
from chronicle.models import Cycle, Role
from downtimes.models import Outcome
from downtimes.services import pipeline
from tests.pdfs import language_of, pages_of, text_of

from .conftest import AT_DEADLINE, DURING

pytestmark = pytest.mark.django_db

AFTER_DEADLINE = AT_DEADLINE + dt.timedelta(hours=1)
URL = "/c/nightfall/resolution/1/xp.pdf"
PAGE = "/c/nightfall/resolution/1/xp/"


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(AFTER_DEADLINE, tick=False):
        yield


@pytest.fixture
def month(world: Any, lucien: Character, marguerite: Character) -> Cycle:
    """Resolved, with both base awards overridden by the storytellers."""
    alice, bob, st = (world.users[n] for n in ("player_alice", "player_bob", "storyteller"))
    chronicle_services.attendance_record(
        game=world.game,
        lines=[
            chronicle_services.SignIn(player_id=alice.pk, attended=True, waiver_signed=True),
            chronicle_services.SignIn(player_id=bob.pk, attended=True, waiver_signed=True),
        ],
        by=st,
        now=DURING,
    )
    cycle = world.game.cycle
    chronicle_services.cycle_close(cycle=cycle, by=st, now=AFTER_DEADLINE)
    cycle.refresh_from_db()
    pipeline.cycle_resolve_inline(cycle=cycle, by=st, now=AFTER_DEADLINE)
    for player, xp, note in ((alice, "4", "Ran the plot"), (bob, "1.5", "Quiet night")):
        award = Outcome.objects.get(cycle=cycle, subject=f"base:{player.pk}", xp__isnull=False)
        pipeline.outcome_override(outcome=award, by=st, note=note, xp=Decimal(xp))
    cycle.refresh_from_db()
    return cycle


def subtotals(html: str) -> list[str]:
    """The page's subtotal lines ("2 entries, 5.5 XP, 2 players."), as text."""
    found = re.findall(r'<p class="subtotal"><strong>(.*?)</strong></p>', html, re.S)
    return [" ".join(line.split()) for line in found]


def test_the_preview_on_paper_has_the_overrides_and_their_total(world: Any, month: Cycle) -> None:
    response = world.client("storyteller").get(URL)
    assert response["Content-Disposition"] == 'inline; filename="nightfall-game-1-xp.pdf"'
    text = text_of(response)
    assert "XP of the downtime after game 1" in text and "Nightfall" in text
    assert "player_alice Lucien 4.0" in text and "Ran the plot" in text
    assert "player_bob Marguerite 1.5" in text and "Quiet night" in text
    assert "2 entries, 5.5 XP, 2 players." in text  # 4 + 1.5
    page = world.client("storyteller").get(PAGE).content.decode()
    assert subtotals(page) == ["2 entries, 5.5 XP, 2 players."]


def test_after_the_release_the_groups_and_subtotals_match_the_page(
    world: Any, month: Cycle
) -> None:
    st = world.users["storyteller"]
    pipeline.cycle_release(cycle=month, by=st, now=AFTER_DEADLINE)
    # A purchase signed off in the cycle: charged outside the release (XP-01).
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(-3),
        kind=XpKind.PURCHASE,
        reason="Bought Celerity 1a",
        key="purchase:test",
        cycle=month,
    )
    text = text_of(world.client("admin").get(URL))
    assert "The release" in text and "Outside the release" in text
    assert "player_alice Lucien 4.0" in text and "player_bob Marguerite 1.5" in text
    assert "Bought Celerity 1a" in text
    assert "2 entries, 5.5 XP, 2 players." in text
    assert "1 entry, -3.0 XP, 1 player." in text
    page = world.client("admin").get(PAGE).content.decode()
    assert subtotals(page) == ["2 entries, 5.5 XP, 2 players.", "1 entry, -3.0 XP, 1 player."]


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        pytest.param("player_alice", 403, id="player"),
        pytest.param("outsider", 404, id="outsider"),
        pytest.param("other_storyteller", 404, id="another-chronicles-storyteller"),
    ],
)
def test_only_staff_get_the_report_as_on_the_page(
    world: Any, month: Cycle, persona: str, status: int
) -> None:
    client = world.client(persona)
    page = client.get(PAGE)
    response = client.get(URL)
    assert page.status_code == response.status_code == status
    assert b"%PDF" not in response.content


def test_anonymous_is_sent_to_log_in(world: Any) -> None:
    response = world.client(None).get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_an_empty_cycle_says_so(world: Any) -> None:
    text = text_of(world.client("storyteller").get(URL))
    assert "No XP for this cycle in the preview yet." in text


def test_the_report_in_italian_declares_its_language(world: Any, month: Cycle) -> None:
    with translation.override("it"):
        response = world.client("storyteller").get(URL, HTTP_ACCEPT_LANGUAGE="it")
        player = translation.gettext("Player")
    assert language_of(response) == "it"
    text = text_of(response)
    assert "Lucien 4,0" in text  # Italian numbers: a decimal comma
    if player != "Player":
        assert player in text


def test_the_report_costs_the_same_queries_for_3_or_30_players(
    world: Any, make_user: Callable[..., Any], make_character: Callable[..., Character]
) -> None:
    cycle = world.game.cycle

    def grow(upto: int) -> None:
        have = len([u for u in world.users if u.startswith("p_")])
        for n in range(have, upto):
            name = f"p_{n:02d}"
            world.users[name] = user = make_user(name)
            chronicle_services.membership_add(
                chronicle=world.chronicle, user=user, role=Role.PLAYER
            )
            character = make_character(f"Kindred {n:02d}", player=name)
            ledger.xp_entry_add(
                chronicle=world.chronicle,
                player_id=user.pk,
                amount=Decimal("2.5"),
                kind=XpKind.AWARD,
                reason="Game 1",
                key=f"cycle:{cycle.pk}:awards:base:{user.pk}",
                character=character,
                cycle=cycle,
            )

    client = world.client("storyteller")
    counts = []
    for size in (3, 30):
        grow(size)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(URL)
        counts.append(len(queries))
        pages = pages_of(response)
        assert f"p_{size - 1:02d} Kindred {size - 1:02d} 2.5" in " ".join(pages)
        total = Decimal("2.5") * size
        assert f"{size} entries, {total} XP, {size} players." in " ".join(pages)
    assert counts[0] == counts[1], counts
