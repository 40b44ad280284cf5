"""The downtime journey in a real browser (issue 5): a player fills all six sections, the texts
save as she types (htmx autosave), she leaves, comes back to find her draft, and submits."""

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
from downtimes.models import DeskItem, Submission, SubmissionStatus, Vote
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOW = dt.datetime(2024, 3, 15, 12, 0, tzinfo=zoneinfo.ZoneInfo("America/New_York"))


@pytest.fixture
def clock() -> Iterator[None]:
    with time_machine.travel(NOW, tick=True):
        yield


def test_player_fills_six_sections_saves_returns_submits(
    page: Page, world: Any, make_character: Callable[..., Character], clock: None
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
    log_in(page, "player_alice")
    page.get_by_role("link", name="Downtime", exact=True).click()
    expect(page.get_by_role("heading", name="Downtime: Lucien")).to_be_visible()
    expect(page.locator("#countdown")).to_contain_text("left")

    # 1 and 5: typed text autosaves (htmx) without pressing anything.
    with page.expect_response(lambda r: r.url.endswith("/save/") and r.ok):
        page.get_by_label("Anything the STs should know").fill("Quiet month at the docks.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    with page.expect_response(lambda r: r.url.endswith("/save/") and r.ok):
        page.get_by_label("Game report").fill("The prince's speech was great.")

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

    # 3: an XP purchase with its live cost.
    xp = page.locator("#purchase-form")
    xp.get_by_label("What to buy").select_option("willpower")
    expect(page.locator("#purchase-preview")).to_contain_text("XP")
    xp.get_by_role("button", name="Request purchase").click()
    expect(page.locator("#xp .items")).to_contain_text("Willpower")

    # 4: a ritual on herself.
    powers = page.locator("#power-form")
    powers.get_by_label("Kind of power").select_option("ritual")
    powers.get_by_label("What you do").fill("Ward my haven")
    powers.get_by_role("button", name="Add special power").click()
    expect(page.locator("#powers .items")).to_contain_text("Ritual")

    # 6: votes; a self-vote is refused beside the field.
    votes = page.locator("#votes-form")
    votes.get_by_label("Most feared").fill("Marguerite")
    votes.get_by_label("Best costume").fill("player_alice")
    votes.get_by_role("button", name="Save votes").click()
    expect(page.locator("#votes-form")).to_contain_text("DT-06")
    page.locator("#votes-form").get_by_label("Best costume").fill("player_bob")
    page.locator("#votes-form").get_by_role("button", name="Save votes").click()
    expect(page.locator("#votes-form").get_by_label("Best costume")).to_have_value("player_bob")

    # Leave and come back: the draft is there.
    page.goto("/c/nightfall/")
    page.get_by_role("link", name="Downtime", exact=True).click()
    expect(page.get_by_label("Anything the STs should know")).to_have_value(
        "Quiet month at the docks."
    )
    expect(page.get_by_label("Game report")).to_have_value("The prince's speech was great.")
    expect(page.locator("#submission-status")).to_have_text("Draft")

    page.get_by_role("button", name="Submit downtime").click()
    expect(page.locator("#submission-status")).to_have_text("Submitted")

    sub = Submission.objects.get()
    assert sub.status == SubmissionStatus.SUBMITTED
    assert DeskItem.objects.filter(submission=sub).count() == 3
    assert Vote.objects.filter(submission=sub).count() == 2
