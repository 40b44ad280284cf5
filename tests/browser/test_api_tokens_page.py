"""The account page's API tokens in a real browser (issue 16): listed at 390 px without widening
the page, no serious axe-core finding, and a token revoked by its button."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.base import AXE_FILE_PATH
from django.conf import settings
from knox.models import AuthToken
from playwright.sync_api import Page, expect

from chronicle.services import api_tokens
from tests.browser.conftest import log_in
from tests.browser.test_accessibility import PHONE, WCAG_21_AA
from tests.conftest import World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(os.environ.get("CHRONICLE_SCREENSHOTS", Path(settings.VAR_DIR) / "screenshots"))


def _serious(page: Page) -> list[Any]:
    options = {"runOnly": {"type": "tag", "values": WCAG_21_AA}, "resultTypes": ["violations"]}
    results = page.evaluate("(options) => axe.run(document, options)", options)
    return [v["id"] for v in results["violations"] if v.get("impact") in ("serious", "critical")]


def test_tokens_on_the_account_page_at_390_px(page: Page, world: World) -> None:
    alice = world.users["player_alice"]
    (first, _), (second, _) = api_tokens.token_issue(user=alice), api_tokens.token_issue(user=alice)
    page.context.add_init_script(path=str(AXE_FILE_PATH))
    log_in(page, "player_alice")
    page.set_viewport_size(PHONE)
    page.goto("/account/#api-tokens")
    section = page.locator("#api-tokens")
    expect(section.get_by_role("heading", name="API tokens")).to_be_visible()
    rows = section.locator("tbody tr")
    expect(rows).to_have_count(2)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "account-api-tokens-390.png"), full_page=True)
    assert _serious(page) == []

    newest = second.token_key[: api_tokens.SHOWN_PREFIX]
    section.get_by_role("button", name=re.compile(f"Revoke the token {newest}")).click()
    expect(page.get_by_text("The API token is revoked; it no longer works.")).to_be_visible()
    expect(page.locator("#api-tokens tbody tr")).to_have_count(1)
    assert list(AuthToken.objects.values_list("digest", flat=True)) == [first.digest]
