"""The storyteller's journey in a real browser: log in, schedule a game, fill in its sign-in
sheet, and read the downtime deadline it opened (DT-01) — and a player who may do none of it.

Playwright's sync API drives Debian's Chromium against pytest-django's live server. Time is
frozen (ticking) on Saturday 9 March 2024, 20:00 in New York: the game is "today", and its
deadline is the second Tuesday after it, 19 March 2024 at 23:59 New York time — after the
switch to summer time on 10 March, so a deadline computed with the wrong offset shows.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Iterator
from pathlib import Path

import pytest
import time_machine
from playwright.sync_api import Page, expect

from chronicle.models import Attendance, Cycle, CycleStatus, Game
from tests.browser.conftest import log_in
from tests.conftest import World

pytestmark = pytest.mark.browser

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
NOW = dt.datetime(2024, 3, 9, 20, 0, tzinfo=NEW_YORK)  # a Saturday evening


@pytest.fixture
def frozen_time() -> Iterator[None]:
    # tick=True: time moves on from NOW, in this thread and the live server's.
    with time_machine.travel(NOW, tick=True):
        yield


def test_storyteller_schedules_a_game_and_fills_its_sign_in_sheet(
    world: World, frozen_time: None, page: Page, tmp_path: Path
) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    log_in(page, "storyteller")

    # The games page (from the dashboard's Next game card: the bar keeps a storyteller's six
    # links), and the form for a new game.
    page.get_by_role("link", name="All games").click()
    expect(page.get_by_role("heading", name="Games of Nightfall")).to_be_visible()
    page.get_by_role("link", name="New game").click()
    expect(page.get_by_role("heading", name="New game")).to_be_visible()
    page.get_by_label("Date").fill("2024-03-09")
    page.get_by_label("Start time").fill("19:30")
    page.get_by_label("Place").fill("The Crypt, 13 Raven Lane")
    page.get_by_role("button", name="Create game").click()

    # The new game's page: game 2 (the world already has game 1).
    expect(page).to_have_url(re.compile(r"/c/nightfall/games/2/$"))
    expect(page.get_by_role("heading", name="Game 2")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Game 2 created")
    expect(page.get_by_text("Sat 9 Mar 2024")).to_be_visible()
    expect(page.get_by_text("The Crypt, 13 Raven Lane")).to_be_visible()

    # Its sign-in sheet: alice came and signed the waiver, bob came without signing.
    page.get_by_role("link", name="Sign-in sheet").first.click()
    expect(page.get_by_role("heading", name="Sign-in sheet: game 2")).to_be_visible()
    page.get_by_label("player_alice attended").check()
    page.get_by_label("player_alice signed the waiver").check()
    page.get_by_label("player_bob attended").check()
    page.get_by_role("button", name="Save sign-in sheet").click()
    expect(page.get_by_role("status")).to_have_text("Sign-in sheet of game 2 saved.")
    # The sheet shows what was saved.
    expect(page.get_by_label("player_alice attended")).to_be_checked()
    expect(page.get_by_label("player_alice signed the waiver")).to_be_checked()
    expect(page.get_by_label("player_bob attended")).to_be_checked()
    expect(page.get_by_label("player_bob signed the waiver")).not_to_be_checked()

    # Back to the game, then its downtime cycle.
    page.get_by_role("link", name="Back to the game").click()
    expect(page.get_by_role("heading", name="Attendance (2)")).to_be_visible()
    page.get_by_role("link", name="cycle page").click()
    expect(page.get_by_role("heading", name="Downtime after game 2")).to_be_visible()
    # The deadline in the chronicle's zone, naming it (EDT: New York is on summer time then).
    deadline = page.locator("dt:text-is('Deadline') + dd time")
    expect(deadline).to_have_text("Tue 19 Mar 2024, 23:59 EDT")
    expect(page.locator("dt:text-is('Status') + dd")).to_have_text("Open")
    # The server's clock is frozen too: 10 days, 2 h 59 min from Saturday 20:00 EST.
    expect(page.locator(".countdown")).to_have_text("(1\xa0week, 3\xa0days left)")
    expect(page.get_by_role("button", name="Close this downtime now")).to_be_visible()
    page.screenshot(path=str(tmp_path / "cycle.png"), full_page=True)
    assert (tmp_path / "cycle.png").stat().st_size > 0

    # What the browser did is in the database.
    game = Game.objects.get(chronicle=world.chronicle, number=2)
    assert (game.date, game.start_time, game.place) == (
        dt.date(2024, 3, 9),
        dt.time(19, 30),
        "The Crypt, 13 Raven Lane",
    )
    sheet = {
        a.player_id: (a.waiver_signed, a.recorded_by_id)
        for a in Attendance.objects.filter(game=game)
    }
    storyteller = world.users["storyteller"].pk
    assert sheet == {alice.pk: (True, storyteller), bob.pk: (False, storyteller)}
    assert not Attendance.objects.filter(game=world.game).exists()
    cycle = Cycle.objects.get(game=game)
    assert cycle.status == CycleStatus.OPEN
    assert cycle.deadline_at == dt.datetime(2024, 3, 19, 23, 59, tzinfo=NEW_YORK)
    # New York is on summer time (UTC-4) by then, though the game was on winter time (UTC-5).
    assert cycle.deadline_at == dt.datetime(2024, 3, 20, 3, 59, tzinfo=dt.UTC)


def test_player_cannot_schedule_a_game(world: World, frozen_time: None, page: Page) -> None:
    log_in(page, "player_alice")

    page.get_by_role("navigation", name="Chronicle").get_by_role("link", name="Games").click()
    expect(page.get_by_role("heading", name="Games of Nightfall")).to_be_visible()
    expect(page.get_by_role("link", name="1", exact=True)).to_be_visible()  # game 1 is listed
    expect(page.get_by_role("link", name="New game")).to_have_count(0)

    response = page.goto("/c/nightfall/games/new/")
    assert response is not None and response.status == 403
    expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    expect(
        page.get_by_text("Only the chronicle's storytellers and admins may do this.")
    ).to_be_visible()
    expect(page.get_by_label("Date")).to_have_count(0)
    assert Game.objects.filter(chronicle=world.chronicle).count() == 1
