"""A storyteller works the influence desk in a real browser: filters it (htmx, in place),
takes an item, resolves it with private notes and a result for the player, and sees the
counts move. The items are made with the ORM as the players' downtimes would have filed them.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from downtimes.models import DeskItem
from tests.browser.conftest import log_in
from tests.conftest import World

pytestmark = pytest.mark.browser

NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)


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


def test_storyteller_filters_assigns_resolves_and_notes(
    world: World, make_character: Any, page: Page
) -> None:
    lucien = make_character("Lucien", player="player_alice", business=3)
    marguerite = make_character("Marguerite", player="player_bob", clan="ventrue")
    make_item(world, lucien, "a", description="Find out who owns the docks")
    item = make_item(
        world, marguerite, "b", action="acquire", description="Buy a speedboat quietly"
    )

    log_in(page, "storyteller")
    page.get_by_role("navigation", name="Chronicle").get_by_role(
        "link", name="Influence desk"
    ).click()
    expect(page.get_by_role("heading", name="Influence desk")).to_be_visible()
    results = page.locator("#desk-results")
    expect(results).to_contain_text("New: 2")
    expect(results).to_contain_text("Find out who owns the docks")

    # Filter on Marguerite: the results change in place.
    filters = page.locator("#desk-filters")
    filters.get_by_label("Character").select_option(label="Marguerite")
    expect(results).not_to_contain_text("Find out who owns the docks")
    expect(results).to_contain_text("Buy a speedboat quietly")
    expect(results).to_contain_text("1 item match the filters")
    expect(page).to_have_url(re.compile(rf"character={marguerite.pk}"))

    # Take it.
    row = page.locator(f"#desk-item-{item.pk}")
    row.get_by_label(f"Assign item {item.pk} to").select_option("me")
    row.get_by_role("button", name="Assign").click()
    expect(page.get_by_role("status")).to_contain_text("Assigned")
    expect(page.locator(f"#desk-item-{item.pk}")).to_contain_text("storyteller")

    # Open, resolve, note, answer.
    page.locator(f"#desk-item-{item.pk}").get_by_role("link", name="Open").click()
    expect(page.get_by_role("heading", name=re.compile("Marguerite"))).to_be_visible()
    page.get_by_label("Status").select_option("resolved")
    page.get_by_label("Storyteller notes").fill("The seller is a Nosferatu ghoul.")
    page.get_by_label("Result for the player").fill("The boat is yours, moored at pier 9.")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Saved")
    expect(page.get_by_label("Storyteller notes")).to_have_value("The seller is a Nosferatu ghoul.")

    item.refresh_from_db()
    assert (item.status, item.assignee, item.version) == (
        "resolved",
        world.users["storyteller"],
        3,
    )
    assert item.result == "The boat is yours, moored at pier 9."

    page.get_by_role("link", name="Back to the desk").click()
    expect(page.locator("#desk-results")).to_contain_text("Resolved: 1")
