"""The character journey in a real browser (issue 3): a player creates a Toreador in the wizard
and watches the freebie total move as they type (htmx), submits it; a storyteller approves the
character and its background (CRE-09); the player asks to buy an in-clan level with XP, sees its
cost from the rules; the storyteller signs it off (XP-01), and the sheet shows the level and the
new balance, written once in the ledger.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Iterator
from decimal import Decimal

import pytest
import time_machine
from playwright.sync_api import Browser, Page, expect

from characters.models import Character, DisciplineLevel, XpEntry, XpKind
from characters.services import ledger
from tests.browser.conftest import TIMEOUT_MS, fill_toreador, log_in, nav
from tests.conftest import World

pytestmark = pytest.mark.browser

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
NOW = dt.datetime(2024, 3, 12, 21, 0, tzinfo=NEW_YORK)  # downtime after game 1 is open


@pytest.fixture
def frozen_time() -> Iterator[None]:
    with time_machine.travel(NOW, tick=True):
        yield


def as_user(browser: Browser, live_server_url: str, username: str) -> Page:
    context = browser.new_context(base_url=live_server_url, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, username)
    return page


def test_player_creates_a_toreador_and_buys_a_level_signed_off_by_an_st(
    world: World, frozen_time: None, browser: Browser, live_server: object
) -> None:
    url = live_server.url  # type: ignore[attr-defined]
    alice = as_user(browser, url, "player_alice")

    # The wizard, from the player's list of characters.
    nav(alice, "My characters")
    alice.get_by_role("link", name="Create a character").click()
    fill_toreador(alice, "Lucienne Valois", "Embraced at the opera in 1921.")
    # Freebies, priced by the rules as the player types (CRE-06: 1 per trait).
    alice.get_by_label("Extra social").fill("3")
    expect(alice.locator("#freebie-total")).to_have_text(re.compile(r"Freebies: 3 of 10 spent"))
    alice.get_by_label("Extra willpower").fill("1")
    expect(alice.locator("#freebie-total")).to_have_text(re.compile(r"Freebies: 6 of 10 spent"))
    # A rule problem shows beside its field while typing: two 7s break the 7/5/3 package.
    alice.get_by_label("Physical", exact=True).fill("7")
    expect(alice.locator("#problems-physical")).to_contain_text("CRE-01")
    alice.get_by_label("Physical", exact=True).fill("3")
    expect(alice.locator("#problems-physical")).to_be_empty()

    alice.get_by_role("button", name="Save draft").click()
    expect(alice).to_have_url(re.compile(r"/characters/\d+/edit/$"))
    character = Character.objects.get(name="Lucienne Valois")
    assert character.approval == "draft"
    alice.get_by_role("button", name="Submit for approval").click()
    expect(alice.get_by_text("Waiting for ST approval").first).to_be_visible()

    # The storyteller approves the character and its background.
    st = as_user(browser, url, "storyteller")
    st.goto(f"/c/{world.chronicle.slug}/characters/")
    st.get_by_role("link", name="Review").click()
    st.get_by_role("button", name="Approve background").click()
    st.get_by_role("button", name="Approve", exact=True).click()
    expect(st).to_have_url(re.compile(rf"/characters/{character.pk}/$"))
    character.refresh_from_db()
    assert character.approval == "approved" and character.background_approved_at

    # XP from the first game (the between-games pipeline awards it; here, the ledger directly).
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(10),
        kind=XpKind.AWARD,
        reason="Game 1",
        key="award:game-1",
    )

    # The player asks for Auspex 2a (in-clan, no teacher): 6 XP by DIS-03.
    alice.goto(f"/c/{world.chronicle.slug}/characters/{character.pk}/")
    expect(alice.get_by_text("XP balance: 10")).to_be_visible()
    expect(alice.get_by_text("Aura Perception")).to_be_visible()  # DIS-01 name of Auspex 1b
    alice.get_by_label("What to buy").select_option("discipline")
    alice.get_by_label("Discipline", exact=True).select_option("auspex")
    alice.get_by_label("Level", exact=True).select_option("2a")
    expect(alice.locator("#purchase-preview")).to_contain_text("6")
    alice.get_by_role("button", name="Request purchase").click()
    expect(alice.get_by_text("Waiting for ST sign-off").first).to_be_visible()

    # The storyteller signs it off from the queue.
    nav(st, "Purchases")
    st.get_by_role("button", name="Approve").first.click()
    expect(st.get_by_text("Lucienne Valois")).to_have_count(0)

    alice.reload()
    expect(alice.get_by_text("XP balance: 4")).to_be_visible()
    expect(alice.get_by_text("2a Senses of the Enlightened")).to_be_visible()
    assert DisciplineLevel.objects.filter(
        character=character, discipline="auspex", level=3
    ).exists()
    assert XpEntry.objects.filter(key__startswith="purchase:").count() == 1
    for page in (alice, st):
        page.context.close()
