"""Issue 16: the Content-Security-Policy (nonces, no 'unsafe-inline') breaks nothing in a real
browser. A player's downtime page autosaves (htmx), the desk filters in place (htmx), the API's
Swagger UI draws the schema, Django's admin opens for a superuser; Chromium reports no policy
violation on any of them (its console, and the `securitypolicyviolation` events). A style the
policy forbids, added on purpose at the end, is reported: the listeners do hear violations."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Iterator
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from playwright.sync_api import Browser, Page, expect

from downtimes.models import DeskItem
from tests.browser.conftest import TIMEOUT_MS, log_in
from tests.conftest import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOW = dt.datetime(2024, 3, 15, 12, 0, tzinfo=zoneinfo.ZoneInfo("America/New_York"))
# Recorded before any script of the page runs (an init script is not subject to the policy).
LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  const where = `${e.sourceFile}:${e.lineNumber}`;
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${where}`);
});
"""


@pytest.fixture
def clock() -> Iterator[None]:
    with time_machine.travel(NOW, tick=True):
        yield


class Watch:
    """Every console message that speaks of the Content Security Policy, and every violation
    event, on the pages of one browser context."""

    def __init__(self) -> None:
        self.console: list[str] = []
        self.pages: list[Page] = []

    def open(self, browser: Browser, live_server: Any) -> Page:
        context = browser.new_context(base_url=live_server.url, locale="en-US")
        context.set_default_timeout(TIMEOUT_MS)
        context.add_init_script(LISTEN)
        page = context.new_page()
        page.on("console", self._console)
        self.pages.append(page)
        return page

    def _console(self, message: Any) -> None:
        text = message.text
        if "Content Security Policy" in text or "Refused to" in text:
            self.console.append(text)

    def violations(self, page: Page) -> list[str]:
        return [*self.console, *page.evaluate("window.__violations")]


def test_pages_keep_working_under_the_policy(
    browser: Browser,
    live_server: Any,
    world: World,
    make_character: Any,
    clock: None,
) -> None:
    watch = Watch()
    lucien = make_character("Lucien", player="player_alice", business=2)
    DeskItem.objects.create(
        cycle=world.game.cycle,
        character=lucien,
        kind="influence",
        influence="business",
        points=1,
        action="investigate",
        description="Find out who owns the docks",
        created_at=NOW,
        updated_at=NOW,
        key="csp-a",
    )

    # A player's downtime: typing autosaves through htmx.
    player = watch.open(browser, live_server)
    log_in(player, "player_alice")
    player.get_by_role("link", name="Downtime", exact=True).click()
    expect(player.get_by_role("heading", name="Downtime: Lucien")).to_be_visible()
    expect(player.locator("#countdown")).to_contain_text("left")  # countdown.js ran
    player.wait_for_load_state("load")
    with player.expect_response(lambda r: r.url.endswith("/save/") and r.ok):
        player.get_by_label("Anything the STs should know").fill("Quiet month at the docks.")
    expect(player.locator("#save-status")).to_contain_text("Draft saved")
    assert watch.violations(player) == [], watch.violations(player)

    # The storyteller's desk: the filters swap the list in place.
    st = watch.open(browser, live_server)
    log_in(st, "storyteller")
    st.get_by_role("navigation", name="Chronicle").get_by_role("link", name="Desk").click()
    expect(st.get_by_role("heading", name="Influence desk")).to_be_visible()
    results = st.locator("#desk-results")
    expect(results).to_contain_text("Find out who owns the docks")
    st.wait_for_load_state("load")
    st.locator("#desk-filters").get_by_label("Character").fill(f"Lucien #{lucien.pk}")
    expect(results).to_contain_text("1 item matches the filters")
    assert watch.violations(st) == [], watch.violations(st)

    # The API's documentation page (Swagger UI from spectacular-sidecar's files).
    st.goto("/api/docs/")
    expect(st.locator(".swagger-ui .info .title")).to_be_visible()
    expect(st.locator(".swagger-ui .opblock").first).to_be_visible()
    assert watch.violations(st) == [], watch.violations(st)

    # Django's admin, for a deployment superuser.
    get_user_model().objects.create_superuser(username="root", password=PASSWORD)
    root = watch.open(browser, live_server)
    root.goto("/admin/login/")
    root.get_by_label("Username").fill("root")
    root.get_by_label("Password").fill(PASSWORD)
    root.get_by_role("button", name="Log in").click()
    expect(root.get_by_role("heading", name="Site administration")).to_be_visible()
    root.goto("/admin/characters/character/")
    expect(root.locator("#result_list")).to_contain_text("Lucien")
    assert watch.violations(root) == [], watch.violations(root)

    # The listeners hear a violation when there is one: a style attribute is refused.
    player.evaluate("document.body.insertAdjacentHTML('beforeend', '<p style=\"color:red\">x</p>')")
    player.wait_for_function("window.__violations.length > 0")
    assert any("style-src" in v for v in watch.violations(player)), watch.violations(player)
