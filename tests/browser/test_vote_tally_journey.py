"""The admin's vote journey in a real browser (DT-06..09): after a game whose players voted,
the admin opens the vote tally from the header, picks the cycle and sees each category's
winners, the awards SPEC DT-08's worked example gives, and the top two to announce."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in, nav
from tests.conftest import World
from tests.downtimes import test_votes_services as shared
from tests.downtimes.test_votes_services import Voting

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# SPEC DT-08's worked example, shared with the services' tests.
worked_example = shared.worked_example


@pytest.fixture
def voting(world: World, make_user: Callable[..., Any]) -> Voting:
    return Voting(world, make_user)


def test_admin_opens_the_vote_tally(
    page: Page, world: World, voting: Voting, worked_example: dict[str, Any]
) -> None:
    log_in(page, "admin")
    nav(page, "Votes and XP")
    expect(page.get_by_role("heading", name="Vote tally")).to_be_visible()
    page.get_by_label("Cycle after game").select_option(str(world.game.number))
    page.get_by_role("button", name="Show").click()

    feared = page.get_by_role("region", name="Most feared")
    expect(feared.locator(".winners")).to_contain_text("A (p1)")
    expect(feared.get_by_role("img", name="Most feared votes")).to_be_visible()
    roleplay = page.get_by_role("region", name="Excellent roleplaying")
    expect(roleplay.locator(".winners")).to_contain_text("p1, p5")

    awards = page.get_by_role("region", name="Awards the votes give (DT-07, DT-08)")
    rows = awards.locator("tbody tr")
    expect(rows).to_have_count(5)
    for name in ("p1", "p4", "p5", "p7", "p8"):
        expect(awards.get_by_role("row").filter(has_text=name).first).to_contain_text("3")
    expect(awards).not_to_contain_text("p6")
