"""A troupe starts on its own, in a real browser (issue 18): a user with no chronicle starts one,
invites two players and a storyteller by a pasted list; the players accept from their e-mails
(read from the test mailbox) and one creates a character; the storyteller accepts and approves
it. Screenshots at 1280 and 390 px go to var/screenshots/ (not committed) for a reviewer, and
no page of the journey is wider than a 390 px phone."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core import mail
from playwright.sync_api import Browser, Page, expect

from characters.models import Character
from chronicle.models import Membership, Role
from tests.browser.conftest import TIMEOUT_MS, fill_toreador, nav
from tests.conftest import PASSWORD, World

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("CHRONICLE_SCREENSHOTS", Path(settings.VAR_DIR) / "screenshots"))


def new_page(browser: Browser, url: str, width: int = 1280) -> Page:
    context = browser.new_context(
        base_url=url, locale="en-US", viewport={"width": width, "height": 900}
    )
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


def shoot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"people-{name}.png"), full_page=True)


def fits_a_phone(browser: Browser, url: str, page: Page, name: str) -> None:
    """The same page, same session, at 390 px: nothing wider than the screen."""
    phone = page.context.browser.new_context(  # type: ignore[union-attr]
        base_url=url,
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


def link_for(address: str) -> str:
    for message in mail.outbox:
        if message.to == [address]:
            found = re.search(r"https?://[^/\s]+(/invitations/[^/\s]+/)", message.body)
            assert found, message.body
            return found.group(1)
    raise AssertionError(f"no invitation mailed to {address}")


def accept(browser: Browser, url: str, address: str, name: str, username: str) -> Page:
    page = new_page(browser, url)
    page.goto(link_for(address))
    expect(page.get_by_role("heading", name="Join Roma di Notte")).to_be_visible()
    page.get_by_label("Your name").fill(name)
    page.get_by_label("Username").fill(username)
    page.get_by_label(re.compile(r"^Password\W*$")).fill(PASSWORD)
    page.get_by_label("Password again").fill(PASSWORD)
    page.get_by_role("button", name="Create my account and join").click()
    expect(page).to_have_url(re.compile(r"/c/roma/$"))
    expect(page.get_by_text("Welcome to Roma di Notte.")).to_be_visible()
    return page


def create_character(page: Page) -> None:
    nav(page, "My characters")
    page.get_by_role("link", name="Create a character").click()
    fill_toreador(page, "Giulia Orsini", "Embraced in Trastevere in 1870.")
    page.get_by_label("Extra social").fill("3")
    page.get_by_label("Extra willpower").fill("1")
    page.get_by_role("button", name="Save draft").click()
    expect(page).to_have_url(re.compile(r"/characters/\d+/edit/$"))
    page.get_by_role("button", name="Submit for approval").click()
    expect(page.get_by_text("Waiting for ST approval").first).to_be_visible()


def test_a_troupe_starts_invites_and_plays(
    world: World, browser: Browser, live_server: object
) -> None:
    url = live_server.url  # type: ignore[attr-defined]
    # A user with no chronicle yet logs in and is offered to start one.
    founder = new_page(browser, url)
    founder.goto("/accounts/login/")
    founder.get_by_label("Username").fill("outsider")
    founder.get_by_label("Password").fill(PASSWORD)
    founder.get_by_role("button", name="Log in").click()
    expect(founder.get_by_role("heading", name="Your chronicles")).to_be_visible()
    founder.get_by_role("link", name="Start a new chronicle").click()
    founder.get_by_label("Name of the chronicle").fill("Roma di Notte")
    founder.get_by_label("Address").fill("roma")
    founder.get_by_label("Time zone").select_option("Europe/Rome")
    shoot(founder, "start-1280")
    founder.get_by_role("button", name="Start the chronicle").click()
    expect(founder).to_have_url(re.compile(r"/c/roma/invitations/$"))
    expect(founder.get_by_text("Roma di Notte is ready and you are its admin.")).to_be_visible()

    # Two players and a storyteller, pasted as the troupe's mailing list has them.
    founder.get_by_label("E-mail addresses").fill(
        "Giulia Bianchi <giulia@example.org>\nPau Ferrer, pau@example.org\n"
        "Lucia Conti, lucia@example.org, storyteller"
    )
    founder.get_by_role("button", name="Send invitations").click()
    expect(founder.get_by_text("Invitations sent to:")).to_be_visible()
    expect(founder.locator("table.invitations tbody tr")).to_have_count(3)
    shoot(founder, "invitations-1280")
    fits_a_phone(browser, url, founder, "invitations")
    assert sorted(m.to[0] for m in mail.outbox) == [
        "giulia@example.org",
        "lucia@example.org",
        "pau@example.org",
    ]

    # The players accept from their e-mails; Giulia creates a character.
    giulia = accept(browser, url, "giulia@example.org", "Giulia Bianchi", "giulia")
    pau = accept(browser, url, "pau@example.org", "Pau Ferrer", "pau")
    create_character(giulia)

    # The storyteller accepts, finds the character waiting and approves it.
    lucia = accept(browser, url, "lucia@example.org", "Lucia Conti", "lucia")
    # The People page is a storyteller's too, reached from the roster (the bar keeps to six).
    lucia.goto("/c/roma/people/")
    expect(lucia.get_by_role("cell", name=re.compile("Giulia Orsini"))).to_be_visible()
    shoot(lucia, "people-1280")
    fits_a_phone(browser, url, lucia, "people")
    nav(lucia, "Characters")
    lucia.get_by_role("link", name="Review").click()
    lucia.get_by_role("button", name="Approve background").click()
    lucia.get_by_role("button", name="Approve", exact=True).click()
    character = Character.objects.get(name="Giulia Orsini")
    assert character.approval == "approved" and character.player.username == "giulia"  # type: ignore[union-attr]

    roles = dict(
        Membership.objects.filter(chronicle__slug="roma").values_list("user__username", "role")
    )
    assert roles == {
        "outsider": Role.ADMIN,
        "giulia": Role.PLAYER,
        "pau": Role.PLAYER,
        "lucia": Role.STORYTELLER,
    }
    # A link used twice adds nothing: Pau follows his again, logged in, and is told so.
    pau.goto(link_for("pau@example.org"))
    expect(pau.get_by_text("This invitation has been used already.")).to_be_visible()
    assert Membership.objects.filter(user__username="pau").count() == 1
    account = new_page(browser, url)
    account.context.add_cookies(giulia.context.cookies())
    account.goto("/account/")
    expect(account.get_by_role("cell", name="Roma di Notte")).to_be_visible()
    shoot(account, "account-1280")
    fits_a_phone(browser, url, account, "account")
    for page in (founder, giulia, pau, lucia, account):
        page.context.close()
