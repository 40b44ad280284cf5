"""States told truly (issue 12, "What players read"): each item was reproduced here first, then
fixed. The world's first game was on Saturday 9 March 2024 in New York; its downtime is due by
Tuesday 19 March 2024, 23:59 EDT.

1. "The current downtime" is one function (`chronicle.services.current_downtime`): the downtime
   page, the API and XP purchases all use it; a game scheduled ahead opens nothing.
2. A downtime the storytellers closed early says so (not "the deadline has passed").
4. The downtime page's XP section shows the XP available and the purchases waiting.
5. Votes are picked from the cast of the game, by id; the API checks the pick attended.
6. Withdraw buttons are visible buttons.
9. Every moment on the page is in the chronicle's zone, with its abbreviation.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from html.parser import HTMLParser
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.urls import reverse

from characters.models import Character, PurchaseMoment, XpKind
from characters.services import ledger
from characters.services.purchases import purchase_request
from chronicle import services as chronicle_services
from downtimes.models import DeskItem, Submission, Vote
from downtimes.services import submissions as services

from .conftest import AT_DEADLINE, DURING, NEW_YORK

pytestmark = pytest.mark.django_db

API = "/api/chronicles/nightfall/submissions/"
RULE_ID = re.compile(r"\b(?:DT|XP|INF|HAV|DIS|CRE|BND|TOR|SEW|GEN|CLN|CTL|BLD)-\d")


def _url(name: str, character: Character) -> str:
    return reverse(name, kwargs={"slug": "nightfall", "character_id": character.pk})


def _page(world: Any, character: Character, persona: str = "player_alice") -> str:
    response = world.client(persona).get(_url("downtime_character", character))
    assert response.status_code == 200
    return response.content.decode()


def _attended(world: Any, *personas: str) -> None:
    chronicle_services.attendance_record(
        game=world.game,
        lines=[
            chronicle_services.SignIn(world.users[p].pk, attended=True, waiver_signed=True)
            for p in personas
        ],
        by=world.users["storyteller"],
        now=DURING,
    )


# --- 1. One current downtime ---------------------------------------------------------------------


def test_a_game_scheduled_ahead_does_not_take_the_purchases_of_this_downtime(
    world: Any, lucien: Character, during: None
) -> None:
    """Game 2 is scheduled (its cycle exists, "open", with a later deadline): a purchase made
    during game 1's downtime is still charged to game 1's cycle."""
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=lucien.player_id,
        amount=Decimal(20),
        kind=XpKind.OPENING,
        reason="Opening balance",
        key="opening",
    )
    second = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    assert second.cycle.deadline_at > world.game.cycle.deadline_at
    purchase = purchase_request(
        character=lucien,
        by=world.users["player_alice"],
        kind="willpower",
        moment=PurchaseMoment.DOWNTIME,
    )
    assert purchase.cycle_id == world.game.cycle.pk


def test_the_page_and_the_api_show_the_current_downtime_not_the_scheduled_one(
    world: Any, lucien: Character, during: None
) -> None:
    chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    page = _page(world, lucien)
    assert "after game 1" in page and "after game 2" not in page
    response = world.client("player_alice").post(
        API, {"character": lucien.pk}, content_type="application/json"
    )
    assert response.status_code == 201
    assert Submission.objects.get().cycle_id == world.game.cycle.pk


def test_a_later_game_closed_early_does_not_reopen_the_earlier_downtime(
    world: Any, lucien: Character
) -> None:
    """Game 2 is played before game 1's deadline and its downtime closed early: game 1's
    downtime is not "current" again (nobody acts in two downtimes)."""
    second = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 3, 16))
    game_day = dt.datetime(2024, 3, 16, 23, 0, tzinfo=NEW_YORK)
    chronicle_services.cycle_close(cycle=second.cycle, by=world.users["storyteller"], now=game_day)
    assert chronicle_services.current_downtime(world.chronicle, now=game_day) is None
    shown = chronicle_services.current_downtime(world.chronicle, now=game_day, open_only=False)
    assert shown == second.cycle
    with time_machine.travel(game_day, tick=False):
        page = _page(world, lucien)
    assert "after game 2" in page and "closed this downtime early" in page
    assert "Submit downtime" not in page


def test_a_future_game_opens_no_downtime(world: Any, lucien: Character) -> None:
    """Game 1's downtime is over; creating game 2 (ahead) does not make a downtime open."""
    after = dt.datetime(2024, 3, 25, 12, 0, tzinfo=NEW_YORK)
    chronicle_services.cycles_close_due(now=after)
    chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    assert chronicle_services.current_downtime(world.chronicle, now=after) is None
    with time_machine.travel(after, tick=False):
        page = _page(world, lucien)
        assert "after game 1" in page and "is open" not in page
        assert "Submit downtime" not in page


# --- 2. Closed early, or the deadline passed ------------------------------------------------------


def test_a_downtime_closed_early_says_so(world: Any, draft: Submission, lucien: Character) -> None:
    closed_at = dt.datetime(2024, 3, 16, 20, 0, tzinfo=NEW_YORK)
    chronicle_services.cycle_close(
        cycle=world.game.cycle, by=world.users["storyteller"], now=closed_at
    )
    with time_machine.travel(closed_at + dt.timedelta(hours=12), tick=False):
        page = _page(world, lucien)
        assert "The storytellers closed this downtime early" in page
        assert "Sat 16 Mar 2024, 20:00 EDT" in page
        assert "deadline has passed" not in page and "Submit downtime" not in page
        with pytest.raises(ValidationError, match="closed this downtime early") as refused:
            services.submission_save(
                submission=draft, by=world.users["player_alice"], notes="x", version=1
            )
        assert "deadline" not in str(refused.value)
        api = world.client("player_alice").get(f"{API}{draft.pk}/").json()
        assert api["state"] == "closed_early" and api["closed_at"]
        assert "closed this downtime early" in api["state_text"]
        saved = world.client("player_alice").post(
            f"{API}{draft.pk}/save/", {"notes": "x", "version": 1}, content_type="application/json"
        )
        assert saved.status_code == 400
        assert "closed this downtime early" in saved.json()["error"]["message"]


def test_a_deadline_that_passed_says_so(world: Any, draft: Submission, lucien: Character) -> None:
    with time_machine.travel(AT_DEADLINE, tick=False):
        page = _page(world, lucien)
        assert "The deadline" in page and "has passed" in page and "early" not in page
        api = world.client("player_alice").get(f"{API}{draft.pk}/").json()
        assert api["state"] == "deadline_passed"
    chronicle_services.cycles_close_due(now=AT_DEADLINE)
    with time_machine.travel(AT_DEADLINE + dt.timedelta(days=1), tick=False):
        page = _page(world, lucien)
        assert "has passed" in page and "early" not in page
        api = world.client("player_alice").get(f"{API}{draft.pk}/").json()
        assert api["state"] == "deadline_passed"


def test_an_open_downtime_says_it_is_open(world: Any, draft: Submission) -> None:
    with time_machine.travel(DURING, tick=False):
        api = world.client("player_alice").get(f"{API}{draft.pk}/").json()
    assert api["state"] == "open" and api["closed_at"] is None
    assert "Tue 19 Mar 2024, 23:59 EDT" in api["state_text"]


# --- 4. The XP section -------------------------------------------------------------------------


def test_the_xp_section_shows_xp_available_and_purchases_waiting(
    world: Any, draft: Submission, lucien: Character, during: None
) -> None:
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=lucien.player_id,
        amount=Decimal("12.5"),
        kind=XpKind.OPENING,
        reason="Opening balance",
        key="opening",
    )
    alice = world.users["player_alice"]
    item = services.purchase_add(submission=draft, by=alice, kind="willpower")
    at_game = purchase_request(character=lucien, by=alice, kind="trait", target="mental")
    assert item.purchase is not None
    page = _page(world, lucien)
    xp = page[page.index('id="xp"') :]
    xp = xp[: xp.index("</section>")]
    assert "XP available" in xp and "12.5" in xp
    assert "Waiting for a storyteller" in xp
    for purchase in (item.purchase, at_game):
        assert f"{purchase.cost.normalize():f} XP" in xp
    assert "Mental" in xp or "mental" in xp


# --- 5. Votes from the cast --------------------------------------------------------------------


class _Selects(HTMLParser):
    """The options of every <select> of a page, by the select's name; and the text inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.options: dict[str, list[tuple[str, str]]] = {}
        self.inputs: list[str] = []
        self._select: str | None = None
        self._value: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "select":
            self._select = a.get("name") or ""
            self.options[self._select] = []
        elif tag == "option" and self._select is not None:
            self._value = a.get("value") or ""
        elif tag == "input" and a.get("type") in (None, "text"):
            self.inputs.append(a.get("name") or "")

    def handle_data(self, data: str) -> None:
        if self._select is not None and self._value is not None:
            self.options[self._select].append((self._value, data.strip()))
            self._value = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


def _vote_form(page: str) -> _Selects:
    start = page.index('id="votes-form"')
    parser = _Selects()
    parser.feed(page[start : page.index("</form>", start)])
    return parser


def test_votes_offer_the_cast_of_the_game(
    world: Any, lucien: Character, marguerite: Character, make_character: Any, during: None
) -> None:
    world.users["player_bob"].first_name = "Bob"
    world.users["player_bob"].last_name = "Builder"
    world.users["player_bob"].save()
    make_character("Absent Annie", player="admin")  # her player did not come
    _attended(world, "player_alice", "player_bob")
    form = _vote_form(_page(world, lucien))
    assert not [name for name in form.inputs if name in ("feared", "costume")]
    feared = form.options["feared"]
    assert (str(marguerite.pk), "Marguerite") in feared
    names = [label for _, label in feared]
    assert "Absent Annie" not in names and "Lucien" not in names  # absent, and her own
    costume = form.options["costume"]
    assert (str(world.users["player_bob"].pk), "Bob Builder") in costume
    # Names only: no username, no e-mail, not the player's characters.
    assert all("@" not in label and "player_bob" not in label for _, label in costume)
    assert str(world.users["player_alice"].pk) not in [v for v, _ in costume]


def test_a_vote_is_saved_by_id_on_the_page(
    world: Any, lucien: Character, marguerite: Character, during: None
) -> None:
    _attended(world, "player_alice", "player_bob")
    response = world.client("player_alice").post(
        _url("downtime_votes_save", lucien),
        {"feared": str(marguerite.pk), "costume": str(world.users["player_bob"].pk)},
    )
    assert response.status_code == 302
    votes = {v.category: v for v in Vote.objects.all()}
    assert votes["feared"].nominee_character == marguerite
    assert votes["costume"].nominee_player == world.users["player_bob"]
    form = _vote_form(_page(world, lucien))
    assert form.options["feared"]  # the saved pick is selected on the next load
    page = _page(world, lucien)
    assert re.search(rf'<option value="{marguerite.pk}" selected>Marguerite</option>', page)


def test_the_page_refuses_someone_who_did_not_attend(
    world: Any, lucien: Character, make_character: Any, during: None
) -> None:
    absent = make_character("Absent Annie", player="admin")
    _attended(world, "player_alice", "player_bob")
    response = world.client("player_alice").post(
        _url("downtime_votes_save", lucien), {"feared": str(absent.pk)}
    )
    assert response.status_code == 400 and not Vote.objects.exists()


def test_before_the_sign_in_sheet_the_page_says_why_nobody_can_be_picked(
    world: Any, lucien: Character, during: None
) -> None:
    page = _page(world, lucien)
    assert "sign-in sheet" in page


def test_the_api_takes_ids_and_checks_the_pick_attended(
    world: Any,
    draft: Submission,
    lucien: Character,
    marguerite: Character,
    make_character: Any,
) -> None:
    absent = make_character("Absent Annie", player="admin")
    _attended(world, "player_alice", "player_bob")
    client = world.client("player_alice")
    url = f"{API}{draft.pk}/votes/"
    with time_machine.travel(DURING, tick=False):
        ok = client.post(
            url,
            {"picks": {"feared": marguerite.pk, "costume": world.users["player_bob"].pk}},
            content_type="application/json",
        )
        assert ok.status_code == 200, ok.content
        assert ok.json()["votes"] == {"feared": "Marguerite", "costume": "player_bob"}
        refused = client.post(url, {"picks": {"liked": absent.pk}}, content_type="application/json")
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["code"] == "invalid" and "liked" in error["fields"]
        assert "attended" in " ".join(error["fields"]["liked"])
        assert not RULE_ID.search(refused.content.decode())
        own = client.post(
            url,
            {"picks": {"costume": world.users["player_alice"].pk}},
            content_type="application/json",
        )
        assert own.status_code == 400 and "costume" in own.json()["error"]["fields"]
        cast = client.get(f"{API}{draft.pk}/cast/").json()
    assert {"id": marguerite.pk, "name": "Marguerite"} in cast["feared"]
    assert all(row["id"] != absent.pk for row in cast["liked"])
    assert {"id": world.users["player_bob"].pk, "name": "player_bob"} in cast["costume"]
    cleared = None
    with time_machine.travel(DURING, tick=False):
        cleared = client.post(url, {"picks": {"feared": None}}, content_type="application/json")
    assert cleared.status_code == 200 and "feared" not in cleared.json()["votes"]


# --- 6. Withdraw buttons, 9. dates ---------------------------------------------------------------


def test_withdraw_buttons_are_outlined_buttons(
    world: Any, draft: Submission, lucien: Character, during: None
) -> None:
    services.power_add(
        submission=draft, by=world.users["player_alice"], power="ritual", key="w", description="W"
    )
    page = _page(world, lucien)
    buttons = re.findall(r"<button[^>]*>\s*Withdraw\s*</button>", page)
    assert buttons and all(re.search(r'class="[^"]*\b(secondary|danger)\b', b) for b in buttons)
    assert not any('class="link"' in b for b in buttons)


def test_every_moment_on_the_page_is_in_the_chronicles_zone(
    world: Any, draft: Submission, lucien: Character, during: None
) -> None:
    services.submission_submit(submission=draft, by=world.users["player_alice"])
    page = _page(world, lucien)
    # Submitted at noon in New York (16:00 UTC).
    assert "Fri 15 Mar 2024, 12:00 EDT" in page and "16:00" not in page
    assert "Tue 19 Mar 2024, 23:59 EDT" in page
    assert '<time datetime="2024-03-19T23:59:00-04:00">' in page


def test_the_downtime_page_carries_no_rule_ids(
    world: Any, draft: Submission, lucien: Character, during: None
) -> None:
    _attended(world, "player_alice", "player_bob")
    page = _page(world, lucien)
    assert not RULE_ID.search(page), RULE_ID.findall(page)


def test_a_withdrawn_item_is_not_withdrawn_twice(
    world: Any, draft: Submission, lucien: Character, during: None
) -> None:
    item = services.power_add(
        submission=draft, by=world.users["player_alice"], power="ritual", key="w", description="W"
    )
    client = world.client("player_alice")
    url = reverse("downtime_item_withdraw", args=["nightfall", lucien.pk, item.pk])
    assert client.post(url).status_code == 302
    assert DeskItem.objects.get(pk=item.pk).withdrawn_at is not None
    page = _page(world, lucien)
    assert not re.findall(r"<button[^>]*>\s*Withdraw\s*</button>", page)
