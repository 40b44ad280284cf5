"""The language switcher in a real browser (issue 17): without JavaScript at 1280 px, in the
phone's menu at 390 px; either way the next page is in the chosen language, and the top bar
stays one row (tests/browser/test_accessibility.py holds that for every page)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import Browser, Page, expect

from chronicle.models import Profile
from tests.browser.conftest import TIMEOUT_MS, browser, log_in  # noqa: F401
from tests.conftest import World, give_birth_dates

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(os.environ.get("CHRONICLE_SCREENSHOTS", Path(settings.VAR_DIR) / "screenshots"))


@pytest.fixture
def world(world: World) -> World:
    """The personas gave their date of birth (GEN-01): logging in lands where it always did."""
    give_birth_dates(world.users.values())
    return world


def _page(browser: Browser, live_server: Any, **options: Any) -> Page:  # noqa: F811
    context = browser.new_context(base_url=live_server.url, locale="en-US", **options)
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


def _shot(page: Page, name: str) -> None:
    SHOTS.joinpath("i18n").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "i18n" / f"{name}.png"))


def test_a_player_switches_to_italian_without_javascript(
    browser: Browser,  # noqa: F811
    live_server: Any,
    world: World,
) -> None:
    page = _page(
        browser, live_server, viewport={"width": 1280, "height": 800}, java_script_enabled=False
    )
    log_in(page, "player_alice")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    switcher = page.locator("header details.language")
    switcher.locator("summary").click()
    _shot(page, "switcher-1280")
    switcher.get_by_label("Language").select_option("it")
    switcher.get_by_role("button").click()
    expect(page).to_have_url(f"{live_server.url}/c/nightfall/")
    expect(page.locator("html")).to_have_attribute("lang", "it")
    assert Profile.objects.get(user=world.users["player_alice"]).language == "it"
    page.context.close()


def test_someone_not_signed_in_switches_on_a_phone(
    browser: Browser,  # noqa: F811
    live_server: Any,
    world: World,
) -> None:
    page = _page(browser, live_server, viewport={"width": 390, "height": 844})
    page.goto("/accounts/login/")
    switcher = page.locator("header details.language")
    switcher.locator("summary").click()
    _shot(page, "switcher-anonymous-390")
    switcher.get_by_label("Language").select_option("ca")
    switcher.get_by_role("button").click()
    expect(page.locator("html")).to_have_attribute("lang", "ca")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.context.close()


def test_a_storyteller_switches_in_the_phones_menu(
    browser: Browser,  # noqa: F811
    live_server: Any,
    world: World,
) -> None:
    page = _page(browser, live_server, viewport={"width": 390, "height": 844})
    log_in(page, "storyteller")
    page.locator("[data-menu-toggle]").click()
    switcher = page.locator("header details.language")
    switcher.locator("summary").click()
    _shot(page, "switcher-menu-390")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    switcher.get_by_label("Language").select_option("it")
    switcher.get_by_role("button").click()
    expect(page.locator("html")).to_have_attribute("lang", "it")
    page.context.close()
