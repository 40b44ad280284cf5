"""A storyteller works the influence desk in a real browser: filters it (htmx, in place, the
character picked with the type-ahead), takes an item from the list, opens it beside the list,
resolves it with private notes and a result for the player, and sees the counts move; then
works the queue with the keyboard alone (j/k to move, a to take, r to resolve, Ctrl+Enter to
save and open the next). The items are made with the ORM as the players' downtimes would have
filed them. Screenshots at 1280 and 390 px go to var/screenshots/ (not committed), and on a
390 px phone the panes stack with nothing wider than the screen."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import Browser, Page, expect

from downtimes.models import DeskItem
from tests.browser.conftest import TIMEOUT_MS, log_in
from tests.conftest import World

pytestmark = pytest.mark.browser

NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)
SHOTS = Path(os.environ.get("CHRONICLE_SCREENSHOTS", Path(settings.VAR_DIR) / "screenshots"))


def make_item(world: World, character: Any, key: str, **fields: Any) -> DeskItem:
    values: dict[str, Any] = {
        "kind": "influence",
        "influence": "business",
        "points": 1,
        "action": "investigate",
        "created_at": NOW,
        "updated_at": NOW,
        "key": key,
    }
    values.update(fields)
    return DeskItem.objects.create(cycle=world.game.cycle, character=character, **values)


def shoot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / f"desk-{name}.png"), full_page=True)


def fits_a_phone(browser: Browser, url: str, page: Page, name: str) -> Page:
    """The same page, same session, at 390 px: nothing wider than the screen. The phone's
    page is returned open (the caller closes its context)."""
    phone = browser.new_context(
        base_url=url,
        locale="en-US",
        viewport={"width": 390, "height": 844},
        storage_state=page.context.storage_state(),
    )
    phone.set_default_timeout(TIMEOUT_MS)
    phone_page = phone.new_page()
    phone_page.goto(page.url)
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    shoot(phone_page, f"{name}-390")
    assert width <= 390, f"{name} is {width}px wide on a 390px phone"
    return phone_page


def settled(page: Page) -> None:
    """htmx has swapped and wired up what it loaded (it does so a moment after the swap)."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')"
    )


def open_desk(page: Page) -> None:
    page.get_by_role("navigation", name="Chronicle").get_by_role("link", name="Desk").click()
    expect(page.get_by_role("heading", name="Influence desk")).to_be_visible()


def tab_count(page: Page, status: str) -> Any:
    return page.locator(f'#desk-results a[data-status="{status}"] .count')


def test_storyteller_filters_takes_opens_and_resolves(
    world: World, make_character: Any, page: Page, browser: Browser, live_server: Any
) -> None:
    lucien = make_character("Lucien", player="player_alice", business=3)
    marguerite = make_character("Marguerite", player="player_bob", clan="ventrue")
    for i in range(30):  # a crowd for the type-ahead to search
        make_character(f"Childe {i:02}", player=None)
    make_item(world, lucien, "a", description="Find out who owns the docks")
    item = make_item(
        world, marguerite, "b", action="acquire", description="Buy a speedboat quietly"
    )

    log_in(page, "storyteller")
    open_desk(page)
    results = page.locator("#desk-results")
    expect(tab_count(page, "new")).to_have_text("2")
    expect(results).to_contain_text("Find out who owns the docks")

    # Filter on Marguerite with the type-ahead: a few letters, a suggestion, the list
    # changes in place and the address says so.
    field = page.locator("#desk-filters").get_by_label("Character")
    field.press_sequentially("Marg")
    suggestions = page.locator("#desk-filter-characters option")
    expect(suggestions).to_have_count(1)
    expect(suggestions.first).to_have_attribute("value", f"Marguerite #{marguerite.pk}")
    field.fill(f"Marguerite #{marguerite.pk}")
    expect(results).not_to_contain_text("Find out who owns the docks")
    expect(results).to_contain_text("Buy a speedboat quietly")
    expect(results).to_contain_text("1 item matches the filters")
    expect(page).to_have_url(re.compile(rf"character=Marguerite(\+|%20)%23{marguerite.pk}"))
    assert "kind=" not in page.url  # the empty filters are left out of the address
    settled(page)

    # Take it from its row.
    row = page.locator(f"#desk-item-{item.pk}")
    row.get_by_role("button", name="Take").click()
    expect(page.locator(f"#desk-item-{item.pk}")).to_contain_text("storyteller")
    expect(results.get_by_role("status")).to_contain_text("Assigned")
    settled(page)

    # Open it beside the list: its own address, the list still there.
    page.locator(f"#desk-item-{item.pk}").get_by_role("link", name=re.compile("Marguerite")).click()
    detail = page.locator("#desk-detail")
    expect(detail.get_by_role("heading", name=re.compile("Marguerite"))).to_be_visible()
    expect(page).to_have_url(re.compile(rf"/desk/items/{item.pk}/\?game=1&character="))
    expect(page.locator(f"#desk-item-{item.pk}")).to_have_attribute("aria-current", "true")
    settled(page)
    detail.get_by_label("Status").select_option("resolved")
    detail.get_by_label("Storyteller notes").fill("The seller is a Nosferatu ghoul.")
    detail.get_by_label("Result for the player").fill("The boat is yours, moored at pier 9.")
    detail.get_by_role("button", name="Save", exact=True).click()
    expect(detail.get_by_role("status")).to_contain_text("Saved")
    expect(detail.get_by_label("Storyteller notes")).to_have_value(
        "The seller is a Nosferatu ghoul."
    )
    # The list reloaded itself: the counts moved.
    expect(tab_count(page, "resolved")).to_have_text("1")

    item.refresh_from_db()
    assert (item.status, item.assignee, item.version) == (
        "resolved",
        world.users["storyteller"],
        3,
    )
    assert item.result == "The boat is yours, moored at pier 9."

    # The address of the open item is a page of its own (shared, reloaded, no JavaScript).
    page.reload()
    expect(
        page.locator("#desk-detail").get_by_role("heading", name=re.compile("Marguerite"))
    ).to_be_visible()
    expect(page.locator("#desk-detail").get_by_label("Result for the player")).to_have_value(
        "The boat is yours, moored at pier 9."
    )
    shoot(page, "item-1280")
    phone = fits_a_phone(browser, live_server.url, page, "item")
    # Stacked: the open item comes under the list, each as wide as the screen.
    boxes = [phone.locator(selector).bounding_box() for selector in (".pane-list", ".pane-detail")]
    assert boxes[0] and boxes[1] and boxes[1]["y"] >= boxes[0]["y"] + boxes[0]["height"]
    assert boxes[1]["width"] <= 390
    phone.context.close()


def test_storyteller_works_the_queue_with_the_keyboard(
    world: World, make_character: Any, page: Page, browser: Browser, live_server: Any
) -> None:
    lucien = make_character("Lucien", player="player_alice", business=3)
    marguerite = make_character("Marguerite", player="player_bob", clan="ventrue")
    first = make_item(world, lucien, "a", description="Find out who owns the docks")
    second = make_item(world, marguerite, "b", action="acquire", description="Buy a speedboat")
    third = make_item(world, lucien, "c", action="research", description="Read the grimoire")

    log_in(page, "storyteller")
    open_desk(page)
    expect(page.locator("#desk-keys")).to_contain_text("next and previous item")
    detail = page.locator("#desk-detail")
    heading = detail.get_by_role("heading", level=2)

    # j opens the first item, j again the next, k goes back.
    page.keyboard.press("j")
    expect(heading).to_contain_text(f"(#{first.pk})")
    expect(page).to_have_url(re.compile(rf"/desk/items/{first.pk}/"))
    page.keyboard.press("j")
    expect(heading).to_contain_text(f"(#{second.pk})")
    expect(page.locator(f"#desk-item-{second.pk}")).to_have_attribute("aria-current", "true")
    page.keyboard.press("k")
    expect(heading).to_contain_text(f"(#{first.pk})")
    settled(page)

    # a takes it.
    page.keyboard.press("a")
    expect(detail.get_by_role("status")).to_contain_text("Assigned")
    expect(page.locator(f"#desk-item-{first.pk}")).to_contain_text("storyteller")

    # Keys typed in a field are text, not shortcuts.
    notes = detail.get_by_label("Storyteller notes")
    notes.click()
    notes.press_sequentially("jak")
    expect(heading).to_contain_text(f"(#{first.pk})")
    expect(notes).to_have_value("jak")
    notes.press("Escape")

    # r marks it resolved and goes to the result; Ctrl+Enter saves and opens the next.
    page.keyboard.press("r")
    expect(detail.get_by_label("Status")).to_have_value("resolved")
    expect(detail.get_by_label("Result for the player")).to_be_focused()
    page.keyboard.type("The docks belong to the Prince.")
    page.keyboard.press("Control+Enter")
    expect(heading).to_contain_text(f"(#{second.pk})")
    expect(detail.get_by_role("status")).to_contain_text("Saved")
    expect(page).to_have_url(re.compile(rf"/desk/items/{second.pk}/"))
    expect(tab_count(page, "resolved")).to_have_text("1")
    first.refresh_from_db()
    assert (first.status, first.assignee, first.st_notes, first.result) == (
        "resolved",
        world.users["storyteller"],
        "jak",
        "The docks belong to the Prince.",
    )

    # The mouse's "Save and next" does the same.
    settled(page)
    detail.get_by_label("Status").select_option("in_progress")
    detail.get_by_role("button", name="Save and next").click()
    expect(heading).to_contain_text(f"(#{third.pk})")
    second.refresh_from_db()
    assert second.status == "in_progress"
    shoot(page, "keyboard-1280")

    # The browser's Back returns to the previous item.
    page.go_back()
    expect(page).to_have_url(re.compile(rf"/desk/items/{second.pk}/"))
    fits_a_phone(browser, live_server.url, page, "keyboard").context.close()
