"""The Grapevine Import page on a 390 px phone: a storyteller uploads a real file and reads the
preview without sideways scrolling (long file names wrap, wide tables scroll in their box)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.conftest import TIMEOUT_MS, log_in, nav
from tests.browser.test_people_journey import shoot
from tests.characters.test_grapevine_services import DATA
from tests.conftest import World

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_import_preview_fits_the_screen(
    world: World, browser: Browser, live_server: object, width: int
) -> None:
    context = browser.new_context(
        base_url=live_server.url,  # type: ignore[attr-defined]
        locale="en-US",
        viewport={"width": width, "height": 900},
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, "storyteller")
    nav(page, "Characters")
    page.get_by_role("main").get_by_role("link", name="Import from Grapevine").click()
    page.locator("input[type=file]").set_input_files(
        str(DATA / "chronicle_camarilla_five_xml_many_settings.gex")
    )
    page.locator("main form button[type=submit]").last.click()
    expect(page).to_have_url(re.compile(r"/import/\d+/$"))
    expect(page.get_by_role("heading", name="Characters")).to_be_visible()
    expect(page.get_by_text("Adam St. Charles").first).to_be_visible()
    shoot(page, f"import-{width}")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    context.close()
