"""Each persona's dashboard and the house-rule settings page in a real browser (issue 12): what
to do next per role, at 1280 and 390 px. Screenshots go to var/screenshots/ (not committed)
for a reviewer; no page is wider than a 390 px phone."""

from __future__ import annotations

import datetime as dt
import os
import re
import zoneinfo
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.conf import settings
from playwright.sync_api import Browser, Page, expect

from characters.models import Character, XpKind
from characters.services import ledger
from characters.services.purchases import purchase_request
from chronicle import services
from downtimes.models import DeskItem, DeskStatus, ItemKind
from downtimes.services import submissions
from tests.browser.conftest import TIMEOUT_MS
from tests.conftest import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(os.environ.get("CHRONICLE_SCREENSHOTS", Path(settings.VAR_DIR) / "screenshots"))
NOW = dt.datetime(2024, 3, 12, 12, 0, tzinfo=zoneinfo.ZoneInfo("America/New_York"))


@pytest.fixture
def clock() -> Iterator[None]:
    with time_machine.travel(NOW, tick=True):
        yield


def shoot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"dashboard-{name}.png"), full_page=True)


def fits_a_phone(page: Page, name: str) -> None:
    """The same page, same session, at 390 px: nothing wider than the screen."""
    phone = page.context.browser.new_context(  # type: ignore[union-attr]
        base_url=page.url.split("/c/")[0],
        locale="en-US",
        viewport={"width": 390, "height": 844},
        storage_state=page.context.storage_state(),
    )
    phone_page = phone.new_page()
    phone_page.goto(page.url)
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    shoot(phone_page, f"{name}-390")
    phone.close()
    assert width <= 390, f"{name} is {width}px wide on a 390px phone"


def signed_in(browser: Browser, url: str, username: str) -> Page:
    context = browser.new_context(
        base_url=url, locale="en-US", viewport={"width": 1280, "height": 900}
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/c/nightfall/$"))
    return page


def a_month_in_play(world: World, make_character: Callable[..., Character]) -> None:
    """Alice has a draft and a purchase waiting; Bob submitted with votes; the desk has work."""
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    lucien = make_character("Lucien", player="player_alice")
    marguerite = make_character("Marguerite", player="player_bob", clan="ventrue")
    services.attendance_record(
        game=world.game,
        lines=[services.SignIn(u.pk, True, True) for u in (alice, bob)],
        by=world.users["storyteller"],
        now=NOW,
    )
    submissions.submission_for_edit(character=lucien, cycle=world.game.cycle, by=alice)
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=alice.pk,
        amount=Decimal(10),
        kind=XpKind.OPENING,
        reason="Opening balance",
        key="dashboard-opening",
    )
    purchase_request(character=lucien, by=alice, kind="willpower", now=NOW)
    draft = submissions.submission_for_edit(character=marguerite, cycle=world.game.cycle, by=bob)
    submissions.votes_save(submission=draft, by=bob, picks={"feared": "Lucien"})
    submissions.submission_submit(submission=draft, by=bob)
    for n, status in enumerate([DeskStatus.NEW, DeskStatus.NEW, DeskStatus.IN_PROGRESS]):
        DeskItem.objects.create(
            cycle=world.game.cycle,
            kind=ItemKind.INFLUENCE,
            character=marguerite,
            status=status,
            key=f"journey-{n}",
            created_at=NOW,
            updated_at=NOW,
        )


def test_each_persona_reads_what_to_do_next(
    browser: Browser,
    live_server: Any,
    world: World,
    make_character: Callable[..., Character],
    clock: None,
) -> None:
    a_month_in_play(world, make_character)
    url = live_server.url

    alice = signed_in(browser, url, "player_alice")
    downtime = alice.get_by_role("region", name="Downtime")
    expect(downtime.locator("#dash-countdown")).to_have_text("7 days left")
    expect(downtime.get_by_role("link", name="Lucien")).to_be_visible()
    expect(downtime.get_by_text("Draft, not submitted")).to_be_visible()
    expect(alice.get_by_role("region", name="XP purchases waiting")).to_contain_text("Willpower")
    expect(alice.get_by_role("region", name="Results")).to_contain_text("No results yet")
    shoot(alice, "player-1280")
    fits_a_phone(alice, "player")
    downtime.get_by_role("link", name="Lucien").click()
    expect(alice).to_have_url(re.compile(r"/downtime/\d+/$"))

    st = signed_in(browser, url, "storyteller")
    stage = st.get_by_role("region", name="This cycle")
    expect(stage.get_by_role("link", name="Close the downtime")).to_be_visible()
    desk = st.get_by_role("region", name="Influence desk")
    expect(desk.locator('[data-status="new"]')).to_have_text("2")
    expect(desk.locator('[data-status="in_progress"]')).to_have_text("1")
    expect(st.get_by_role("region", name="XP purchases to sign off")).to_contain_text("1")
    expect(st.get_by_role("region", name="Votes")).to_have_count(0)
    shoot(st, "storyteller-1280")
    fits_a_phone(st, "storyteller")
    desk.get_by_role("link", name="Open the desk").click()
    expect(st).to_have_url(re.compile(r"/desk/"))

    admin = signed_in(browser, url, "admin")
    votes = admin.get_by_role("region", name="Votes")
    expect(votes.locator("[data-votes]")).to_have_text("1 vote")
    expect(votes).to_contain_text("Voting open")
    expect(admin.get_by_role("region", name="This cycle")).to_be_visible()
    shoot(admin, "admin-1280")
    fits_a_phone(admin, "admin")


@pytest.fixture
def before_the_first_game() -> Iterator[None]:
    """GEN-05: before any game has been played a setting changes at once (after it, a change
    is published for a later game: tests/chronicle/test_rule_changes.py)."""
    with time_machine.travel(dt.datetime(2024, 3, 1, 12, 0, tzinfo=NOW.tzinfo), tick=True):
        yield


def test_the_admin_changes_and_resets_a_house_rule(
    browser: Browser, live_server: Any, world: World, before_the_first_game: None
) -> None:
    admin = signed_in(browser, live_server.url, "admin")
    admin.goto("/c/nightfall/settings/")
    expect(admin.get_by_role("heading", name=re.compile("^Character creation"))).to_be_visible()
    expect(
        admin.get_by_role("heading", name=re.compile("^Downtimes and XP awards"))
    ).to_be_visible()
    setting = admin.locator("#setting-willpower_cost")
    expect(setting).to_contain_text("CRE-06")
    expect(setting).to_contain_text("Default: 3")
    expect(setting.get_by_text("changed", exact=True)).to_have_count(0)

    setting.get_by_label("Cost of one willpower").fill("4")
    admin.get_by_role("button", name="Save house rules").click()
    expect(admin.get_by_text("House rules saved.")).to_be_visible()
    setting = admin.locator("#setting-willpower_cost")
    expect(setting).to_have_class(re.compile(r"\bchanged\b"))
    expect(setting.get_by_text("changed", exact=True)).to_be_visible()
    shoot(admin, "settings-1280")
    fits_a_phone(admin, "settings")

    setting.get_by_role("button", name=re.compile("^Reset to default")).click()
    expect(admin.get_by_text("is back to its default")).to_be_visible()
    setting = admin.locator("#setting-willpower_cost")
    expect(setting).not_to_have_class(re.compile(r"\bchanged\b"))
    expect(setting.get_by_label("Cost of one willpower")).to_have_value("3")
    world.chronicle.refresh_from_db()
    assert world.chronicle.house_rule_overrides == {}
