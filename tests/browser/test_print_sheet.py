"""The print sheet in a real browser (issue 12): under print media it is black on white, its
buttons and toolbar are gone, its tables have borders, and on a 390 px phone screen it fits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page

from characters.models import Character, XpKind
from characters.services import ledger
from tests.browser.conftest import log_in
from tests.browser.test_people_journey import fits_a_phone, shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _style(page: Page, selector: str, prop: str) -> str:
    value: str = page.eval_on_selector(
        selector, f"el => getComputedStyle(el).getPropertyValue('{prop}')"
    )
    return value


def test_the_print_sheet_prints_black_on_white_with_bordered_tables(
    page: Page, world: Any, make_character: Callable[..., Character], live_server: Any
) -> None:
    mole = make_character("Mole", clan="nosferatu", disciplines={"obfuscate": "1b"})
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=mole.player_id,
        amount=10,
        kind=XpKind.OPENING,
        reason="Opening balance",
        key="print-opening",
    )
    log_in(page, "player_alice")
    page.goto(f"/c/nightfall/characters/{mole.pk}/print/")
    assert _style(page, ".print-toolbar", "display") != "none"  # on screen: the print button
    shoot(page, "print-sheet-1280")
    fits_a_phone(page.context.browser, live_server.url, page, "print-sheet")  # type: ignore[arg-type]

    page.emulate_media(media="print")
    assert _style(page, ".print-toolbar", "display") == "none"
    assert _style(page, "body", "color") == "rgb(0, 0, 0)"
    assert _style(page, "body", "background-color") == "rgb(255, 255, 255)"
    for side in ("top", "bottom", "left", "right"):
        assert _style(page, "td", f"border-{side}-style") == "solid"
        assert _style(page, "td", f"border-{side}-color") == "rgb(0, 0, 0)"
    assert _style(page, "table", "border-collapse") == "collapse"
    assert _style(page, "section.card", "break-inside") == "avoid"
    pdf = page.pdf(format="A4")
    assert pdf[:4] == b"%PDF"
