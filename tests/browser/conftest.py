"""Browser fixtures: Playwright's sync API driving Debian's Chromium against the live server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.conftest import PASSWORD, World, give_birth_dates

TIMEOUT_MS = 10_000

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def world(world: World) -> World:
    """The personas gave their date of birth (GEN-01): logging in lands where it always did."""
    give_birth_dates(world.users.values())
    return world


@pytest.fixture
def browser(chromium: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Browser]:
    # The sync API runs an event loop in this thread; the ORM calls this test makes after
    # starting it are still plain synchronous code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            # While that loop runs, Django keeps this thread's connections in a context
            # variable, apart from the test's own: a query made then opens a second
            # connection. Close it, or PostgreSQL cannot drop the test database at the end.
            connections.close_all()


@pytest.fixture
def page(browser: Browser, live_server: Any) -> Iterator[Page]:
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def log_in(page: Page, username: str) -> None:
    page.goto("/accounts/login/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    # One chronicle: home sends the member straight to its dashboard.
    expect(page).to_have_url(re.compile(r"/c/nightfall/$"))
    expect(page.get_by_role("heading", name="Nightfall")).to_be_visible()
    expect(page.locator("header .who")).to_have_text(username)


def fill_toreador(page: Page, name: str, questionnaire: str) -> None:
    """The creation wizard's fields for a legal Toreador (7/5/3, two free discipline levels,
    two disadvantages), as a player fills them; the freebies are the caller's."""
    page.get_by_label(re.compile(r"^Name\b")).fill(name)
    page.get_by_label("Creature").select_option("kindred")
    page.get_by_label("Clan", exact=True).select_option("toreador")
    page.get_by_label("Clan bonus").select_option("social")
    page.get_by_label("Physical", exact=True).fill("3")
    page.get_by_label("Social", exact=True).fill("7")
    page.get_by_label("Mental", exact=True).fill("5")
    for n, (ability, rating) in enumerate(
        [("etiquette", "2"), ("performance", "2"), ("investigation", "1")], start=1
    ):
        page.get_by_label(f"Ability {n}", exact=True).fill(ability)
        page.get_by_label(f"Rating {n}", exact=True).fill(rating)
    page.get_by_label("Willpower", exact=True).fill("2")
    page.get_by_label("Business", exact=True).fill("1")
    page.get_by_label("Herd", exact=True).fill("1")
    page.get_by_label("Occult", exact=True).fill("1")
    page.get_by_label("Discipline 1", exact=True).select_option("auspex")
    page.get_by_label("Free levels 1").select_option("1b")
    page.get_by_label("Discipline 2", exact=True).select_option("celerity")
    page.get_by_label("Free levels 2").select_option("1a")
    page.get_by_label("Disadvantage 1", exact=True).fill("Vain")
    page.get_by_label("Disadvantage 2", exact=True).fill("Jealous")
    page.get_by_label("Background questionnaire").fill(questionnaire)


def nav(page: Page, name: str) -> None:
    """Follow a link of the top bar as a user would: open the phone's menu when the bar is
    folded, and the Admin menu when the link is in it."""
    # Until the stylesheet has loaded, the phone's menu button shows at any width; deciding
    # before then clicks a button that the stylesheet hides a moment later.
    page.wait_for_load_state("load")
    bar = page.locator("[data-topbar]")
    toggle = bar.locator("[data-menu-toggle]")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    site_nav = page.get_by_role("navigation", name="Chronicle")
    link = site_nav.get_by_role("link", name=name, exact=True)
    if link.count() == 0:
        site_nav.locator("details.nav-menu > summary").click()
    link.click()
