"""The downtime journey in a real browser (issue 5, issue 12): a player fills all six sections,
the texts save as she types (htmx autosave), she picks her votes from the game's cast, sees her
XP and the purchases waiting, withdraws a power with a visible button, leaves, comes back to
find her draft, and submits. The storytellers close the downtime early, resolve it with a
written result for her action and release it: her downtime page says it was closed early and
links to the results, where she reads the storytellers' words. Screenshots at 1280 and 390 px
go to var/screenshots/ (not committed), and no page of the journey is wider than a phone."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from playwright.sync_api import Page, expect

from characters.models import Character, XpKind
from characters.services import ledger
from chronicle import services as chronicle_services
from downtimes.models import DeskItem, DeskStatus, ItemKind, Submission, SubmissionStatus, Vote
from downtimes.services import desk, pipeline
from tests.browser.conftest import log_in
from tests.browser.test_people_journey import fits_a_phone, shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOW = dt.datetime(2024, 3, 15, 12, 0, tzinfo=zoneinfo.ZoneInfo("America/New_York"))


@pytest.fixture
def clock() -> Iterator[None]:
    with time_machine.travel(NOW, tick=True):
        yield


RESULT = "The warehouse belongs to a shell company of the Giovanni."
ST_NOTE = "ST only: the Giovanni are watching the docks."


def _visible(page: Page, selector: str) -> None:
    """A button one can see: its text is not the colour of its background (issue 12: the
    Withdraw buttons were white on white)."""
    colours = page.eval_on_selector(
        selector,
        "el => { const s = getComputedStyle(el);"
        " return [s.color, s.backgroundColor, s.visibility, el.offsetWidth]; }",
    )
    color, background, visibility, width = colours
    assert visibility == "visible" and width > 0, colours
    assert color != background, colours


def test_player_fills_six_sections_saves_returns_submits(
    page: Page,
    world: Any,
    make_character: Callable[..., Character],
    clock: None,
    live_server: Any,
) -> None:
    lucien = make_character("Lucien", player="player_alice", business=2)
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=lucien.player_id,
        amount=Decimal(10),
        kind=XpKind.OPENING,
        reason="Opening balance",
        key="journey-opening",
    )
    make_character("Marguerite", player="player_bob", clan="ventrue")
    # Game 1's sign-in sheet: the votes pick among who attended.
    chronicle_services.attendance_record(
        game=world.game,
        lines=[
            chronicle_services.SignIn(world.users[p].pk, attended=True, waiver_signed=True)
            for p in ("player_alice", "player_bob")
        ],
        by=world.users["storyteller"],
        now=NOW,
    )
    log_in(page, "player_alice")
    page.get_by_role("link", name="Downtime", exact=True).click()
    expect(page.get_by_role("heading", name="Downtime: Lucien")).to_be_visible()
    expect(page.locator("#countdown")).to_contain_text("left")
    page.wait_for_load_state("load")  # autosave's htmx trigger is bound once the page loaded

    # 1 and 5: typed text autosaves (htmx) without pressing anything.
    with page.expect_response(lambda r: r.url.endswith("/save/") and r.ok):
        page.get_by_label("Anything the STs should know").fill("Quiet month at the docks.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    with page.expect_response(lambda r: r.url.endswith("/save/") and r.ok):
        page.get_by_role("textbox", name="Game report").fill("The prince's speech was great.")

    # 2: an influence action; a refusal first (INF-03), kept as typed.
    form = page.locator("#action-form")
    form.get_by_label("What the influence does").select_option("investigate")
    form.get_by_label("Influence type").select_option("business")
    form.get_by_label("Points").fill("5")
    form.get_by_label("Description").fill("Who owns the warehouse?")
    form.get_by_role("button", name="Add influence action").click()
    expect(page.locator("#action-form")).to_contain_text("INF-03")
    expect(page.locator("#action-form").get_by_label("Description")).to_have_value(
        "Who owns the warehouse?"
    )
    page.locator("#action-form").get_by_label("Points").fill("1")
    page.locator("#action-form").get_by_role("button", name="Add influence action").click()
    expect(page.locator("#influence .items")).to_contain_text("Investigate")
    expect(page.locator("#influence")).to_contain_text("Business 1")

    # 3: an XP purchase with its live cost; the section shows her XP and what waits.
    expect(page.locator("#xp-available")).to_have_text("10")
    # The add reloaded the page: htmx binds the preview's trigger only once the page has
    # loaded, and a change made while the page is still parsing gets no preview.
    page.wait_for_load_state("load")
    xp = page.locator("#purchase-form")
    xp.get_by_label("What to buy").select_option("willpower")
    expect(page.locator("#purchase-preview")).to_contain_text("XP")
    xp.get_by_role("button", name="Request purchase").click()
    expect(page.locator("#xp .items")).to_contain_text("Willpower")
    expect(page.locator("#xp-waiting")).to_contain_text("Willpower")
    expect(page.locator("#xp-available")).to_have_text("10")  # charged only at sign-off

    # 4: a ritual on herself, and one she takes back with a Withdraw button she can see.
    for what in ("Ward my haven", "Scry the docks"):
        powers = page.locator("#power-form")
        powers.get_by_label("Kind of power").select_option("ritual")
        powers.get_by_label("What you do").fill(what)
        powers.get_by_role("button", name="Add special power").click()
        expect(page.locator("#powers .items")).to_contain_text(what)
    scry = page.locator("#powers .items li").filter(has_text="Scry the docks")
    _visible(page, "#powers .items li:last-child button")
    scry.get_by_role("button", name="Withdraw").click()
    expect(page.locator("#powers .items li").filter(has_text="Scry the docks")).to_contain_text(
        "Withdrawn"
    )

    # 6: votes, picked from the cast of game 1: never herself, never a typo.
    votes = page.locator("#votes-form")
    costume = votes.get_by_label("Best costume")
    expect(costume.locator("option", has_text="player_alice")).to_have_count(0)
    votes.get_by_label("Most feared").select_option(label="Marguerite")
    costume.select_option(label="player_bob")
    votes.get_by_role("button", name="Save votes").click()
    expect(page.get_by_role("status").first).to_contain_text("Votes saved")
    expect(page.locator("#votes-form").get_by_label("Best costume")).to_have_value(
        str(world.users["player_bob"].pk)
    )
    shoot(page, "downtime-page-1280")
    fits_a_phone(page.context.browser, live_server.url, page, "downtime-page")  # type: ignore[arg-type]

    # Leave and come back: the draft is there.
    page.goto("/c/nightfall/")
    page.get_by_role("link", name="Downtime", exact=True).click()
    expect(page.get_by_label("Anything the STs should know")).to_have_value(
        "Quiet month at the docks."
    )
    expect(page.get_by_role("textbox", name="Game report")).to_have_value(
        "The prince's speech was great."
    )
    expect(page.locator("#submission-status")).to_have_text("Draft")

    page.get_by_role("button", name="Submit downtime").click()
    expect(page.locator("#submission-status")).to_have_text("Submitted")

    sub = Submission.objects.get()
    assert sub.status == SubmissionStatus.SUBMITTED
    assert DeskItem.objects.filter(submission=sub).count() == 4
    assert DeskItem.objects.filter(submission=sub, withdrawn_at__isnull=False).count() == 1
    assert Vote.objects.filter(submission=sub).count() == 2

    # The storytellers write the action's result, close the downtime early, resolve, release.
    st = world.users["storyteller"]
    action = DeskItem.objects.get(submission=sub, kind=ItemKind.INFLUENCE)
    desk.desk_item_update(
        item=action,
        by=st,
        version=action.version,
        status=DeskStatus.RESOLVED,
        result=RESULT,
        st_notes=ST_NOTE,
    )
    chronicle_services.cycle_close(cycle=world.game.cycle, by=st)
    pipeline.cycle_resolve_inline(cycle=world.game.cycle, by=st)
    assert pipeline.cycle_release(cycle=world.game.cycle, by=st)

    # Her downtime page tells her truly what happened, and where to read it.
    page.reload()
    expect(page.locator("#state")).to_contain_text("The storytellers closed this downtime early")
    expect(page.locator("#state")).not_to_contain_text("deadline has passed")
    expect(page.get_by_role("button", name="Submit downtime")).to_have_count(0)
    page.get_by_role("link", name="Read your results").click()

    # The results page: the storytellers' written result, in plain words, on the page itself.
    expect(page.get_by_role("heading", name="Your downtime results")).to_be_visible()
    results = page.get_by_role("region", name="After game 1")
    expect(results).to_contain_text(RESULT)
    expect(results).to_contain_text("Investigate")
    expect(results).to_contain_text("Awards")
    expect(results).not_to_contain_text("DT-")
    expect(page.locator("body")).not_to_contain_text(ST_NOTE)
    shoot(page, "downtime-results-1280")
    fits_a_phone(page.context.browser, live_server.url, page, "downtime-results")  # type: ignore[arg-type]
