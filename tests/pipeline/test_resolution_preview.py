"""The resolution page for a big troupe (issue 12): one tab per step with its count, a page of a
step at a time, a filter by player or character done in SQL, overrides beside their lines, the
same number of queries whatever the size; "Re-resolve" disabled while a run is in flight; and
every state of a cycle told truly on the resolution pages and the members' cycle pages (a
released cycle never says "not resolved yet").

The month (tests/pipeline/conftest.py): Lucien (player_alice) submitted, Marguerite
(player_bob) did not; the preview has 6 outcomes (tests/pipeline/test_cycle_pages.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from chronicle.services import cycle_close
from downtimes.models import Outcome, OutcomeOverride, ResolutionRun, RunStatus
from downtimes.services import pipeline
from downtimes.services.steps import OUTCOME_POSITION

from .conftest import AFTER_DEADLINE, DURING, Month

pytestmark = pytest.mark.django_db

SLUG = "nightfall"
# What the page promises (downtimes/services/preview.py), restated: a step's tab shows 50
# lines a page, the overview the first 10 of each step.
PAGE = 50
OVERVIEW = 10


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(AFTER_DEADLINE, tick=False):
        yield


def url(name: str, *args: Any) -> str:
    return reverse(name, args=[SLUG, *args])


def st(month: Month) -> Client:
    return month.world.client("storyteller")


def text_of(response: Any) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def resolved(month: Month) -> ResolutionRun:
    cycle_close(cycle=month.cycle, by=month.world.users["storyteller"], now=AFTER_DEADLINE)
    run = pipeline.cycle_resolve_inline(
        cycle=month.cycle, by=month.world.users["storyteller"], now=AFTER_DEADLINE
    )
    month.cycle.refresh_from_db()
    return run


def many_awards(month: Month, run: ResolutionRun, count: int, player: str = "player_alice") -> None:
    user = month.world.users[player]
    character = month.lucien if player == "player_alice" else month.marguerite
    Outcome.objects.bulk_create(
        Outcome(
            cycle=month.cycle,
            run=run,
            step="awards",
            subject=f"extra:{player}:{i:04d}",
            position=OUTCOME_POSITION["awards"],
            player=user,
            character=character,
            title=f"Award {player} {i:04d}",
            explanation="2.5 XP (DT-03).",
            public_text="Base XP: 2.5.",
            xp=Decimal("2.5"),
            overridable="xp",
        )
        for i in range(count)
    )


def shown(response: Any) -> list[str]:
    return re.findall(r'<article class="outcome" id="outcome-(\d+)"', response.content.decode())


def tabs(response: Any) -> dict[str, int]:
    """The step tabs: step name → the count it shows."""
    nav = response.content.decode().split('id="step-tabs"')[1].split("</nav>")[0]
    return {
        step: int(n)
        for step, n in re.findall(r'data-step="(\w+)"[^>]*>[^<]*<span class="count">(\d+)', nav)
    }


# --- Tabs, pages, filter ---------------------------------------------------------------------


def test_each_non_empty_step_has_a_tab_with_its_count(month: Month) -> None:
    resolved(month)
    response = st(month).get(url("cycle_resolution", 1))
    expected: dict[str, int] = {}
    for step in Outcome.objects.filter(cycle=month.cycle).values_list("step", flat=True):
        expected[step] = expected.get(step, 0) + 1
    assert tabs(response) == expected
    assert list(tabs(response)) == sorted(expected, key=OUTCOME_POSITION.__getitem__)
    assert 'aria-current="page">All steps <span class="count">6</span>' in (
        response.content.decode()
    )


def test_a_big_step_is_paged_and_the_overview_shows_its_first_lines(month: Month) -> None:
    run = resolved(month)
    many_awards(month, run, 119)  # 120 awards with Alice's own
    client = st(month)
    overview = client.get(url("cycle_resolution", 1))
    awards = overview.content.decode().split('id="step-awards"')[1].split("</section>")[0]
    assert awards.count('class="outcome"') == OVERVIEW
    assert "See all 120 lines of Awards (DT-03..08)" in awards
    assert tabs(overview)["awards"] == 120

    first = client.get(url("cycle_resolution", 1), {"step": "awards"})
    assert len(shown(first)) == PAGE
    assert "Lines 1–50 of 120 (page 1 of 3)" in text_of(first)
    assert 'href="?step=awards&amp;page=2#preview" rel="next"' in first.content.decode()
    last = client.get(url("cycle_resolution", 1), {"step": "awards", "page": "3"})
    assert len(shown(last)) == 120 - 2 * PAGE
    assert "Lines 101–120 of 120 (page 3 of 3)" in text_of(last)
    pages = [
        *shown(first),
        *shown(client.get(url("cycle_resolution", 1), {"step": "awards", "page": "2"})),
        *shown(last),
    ]
    assert sorted(pages) == sorted(
        str(pk)
        for pk in Outcome.objects.filter(cycle=month.cycle, step="awards").values_list(
            "pk", flat=True
        )
    )
    # A page that is not a number is the first; one past the end is empty, not an error.
    assert shown(client.get(url("cycle_resolution", 1), {"step": "awards", "page": "x"})) == shown(
        first
    )
    beyond = client.get(url("cycle_resolution", 1), {"step": "awards", "page": "9"})
    assert beyond.status_code == 200 and shown(beyond) == []


def test_the_filter_matches_a_character_a_username_or_a_full_name(month: Month) -> None:
    run = resolved(month)
    many_awards(month, run, 3, player="player_bob")
    bob = month.world.users["player_bob"]
    bob.first_name, bob.last_name = "Robert", "Vance"
    bob.save()
    client = st(month)
    bobs = {
        str(pk)
        for pk in Outcome.objects.filter(cycle=month.cycle, player=bob).values_list("pk", flat=True)
    }
    marguerites = {
        str(pk)
        for pk in Outcome.objects.filter(cycle=month.cycle, character=month.marguerite).values_list(
            "pk", flat=True
        )
    }
    assert marguerites and marguerites <= bobs
    for who, expected in (("MARGUER", marguerites), ("player_bob", bobs), ("robert va", bobs)):
        response = client.get(url("cycle_resolution", 1), {"who": who})
        assert set(shown(response)) == expected, who
        assert "(filtered)" in text_of(response)
        # The tabs count what the filter keeps, and keep the filter.
        assert sum(tabs(response).values()) == len(expected)
        assert f"who={who.replace(' ', '+')}" in response.content.decode()
    nobody = client.get(url("cycle_resolution", 1), {"who": "nobody at all"})
    assert shown(nobody) == [] and "nothing matches the filter" in text_of(nobody)


def test_only_the_overridden_lines(month: Month) -> None:
    resolved(month)
    award = Outcome.objects.get(cycle=month.cycle, step="awards")
    pipeline.outcome_override(
        outcome=award, by=month.world.users["storyteller"], note="Plot", xp=Decimal(4)
    )
    response = st(month).get(url("cycle_resolution", 1), {"overridden": "on"})
    assert shown(response) == [str(award.pk)]
    body = response.content.decode()
    # Beside its line: the override's words in the same article as the outcome.
    article = body.split(f'id="outcome-{award.pk}"')[1].split("</article>")[0]
    assert 'class="beside"' in article and "Overridden by storyteller" in article


@pytest.mark.parametrize("count", [1, 200])
def test_a_filtered_step_page_costs_the_same_for_1_or_200_outcomes(
    month: Month, count: int, django_assert_num_queries: Any
) -> None:
    run = resolved(month)
    many_awards(month, run, count)
    client = st(month)
    client.get(url("cycle_resolution", 1))  # the session, warmed
    # session, user, membership, cycle; the latest run, its chunk counts, its failures; the
    # lines shown with player and character; the overrides; the counts per step; the header's
    # chronicle switcher.
    with django_assert_num_queries(11):
        response = client.get(
            url("cycle_resolution", 1), {"step": "awards", "who": "lucien", "page": "2"}
        )
    assert response.status_code == 200
    assert len(shown(response)) == max(0, min(PAGE, count + 1 - PAGE))


def test_an_override_returns_to_the_view_it_was_made_from(month: Month) -> None:
    run = resolved(month)
    many_awards(month, run, 60)
    award = Outcome.objects.get(cycle=month.cycle, subject="extra:player_alice:0059")
    client = st(month)
    page = client.get(url("cycle_resolution", 1), {"step": "awards", "page": "2", "who": "luc"})
    assert str(award.pk) in shown(page)
    back = re.search(r'name="back" value="([^"]*)"', page.content.decode())
    assert back is not None
    prefix = f"o{award.pk}"
    response = client.post(
        url("outcome_override", 1, award.pk),
        {
            f"{prefix}-xp": "3",
            f"{prefix}-note": "Plot",
            "back": back.group(1).replace("&amp;", "&"),
        },
    )
    assert response.status_code == 302
    assert response["Location"] == (
        url("cycle_resolution", 1) + f"?step=awards&who=luc&page=2#outcome-{award.pk}"
    )
    # Refused: the same view again, the error beside the field.
    refused = client.post(
        url("outcome_override", 1, award.pk),
        {f"{prefix}-xp": "1.25", f"{prefix}-note": "Plot", "back": "step=awards&page=2"},
    )
    assert refused.status_code == 400
    assert str(award.pk) in shown(refused)
    assert "XP is paid in steps of 0.5" in text_of(refused)


# --- Re-resolve while a run is in flight ----------------------------------------------------------


def resolve_button(response: Any) -> str:
    body = response.content.decode()
    found = re.search(r"<button type=\"submit\"[^>]*>(Re-resolve|Resolve)</button>", body)
    assert found is not None
    return found.group(0)


def test_re_resolve_is_disabled_with_a_reason_while_a_run_is_in_flight(month: Month) -> None:
    resolved(month)
    client = st(month)
    idle = client.get(url("cycle_resolution", 1))
    assert "disabled" not in resolve_button(idle)
    pipeline.cycle_resolve(cycle=month.cycle, by=month.world.users["storyteller"])
    running = client.get(url("cycle_resolution", 1))
    button = resolve_button(running)
    assert "Re-resolve" in button and " disabled" in button
    assert 'aria-describedby="resolve-why"' in button
    assert "You can resolve again once the running resolution has finished or failed" in (
        text_of(running)
    )
    ResolutionRun.objects.filter(status=RunStatus.RUNNING).update(status=RunStatus.FAILED)
    failed = client.get(url("cycle_resolution", 1))
    assert "disabled" not in resolve_button(failed)
    assert "The last resolution failed" in text_of(failed)


# --- Every state, told truly ---------------------------------------------------------------------


def list_row(month: Month) -> str:
    body = st(month).get(url("cycle_resolution_list")).content.decode()
    row = body.split('id="cycle-1"')[1].split("</tr>")[0]
    return " ".join(re.sub(r"<[^>]+>", " ", row).split())


def test_an_open_cycle(month: Month) -> None:
    page = text_of(st(month).get(url("cycle_resolution", 1)))
    assert "Not resolved yet: the downtime is still open." in page
    assert "close the cycle, then resolve it" in page
    assert "not resolved yet" in list_row(month)


def test_a_closed_cycle_never_resolved(month: Month) -> None:
    cycle_close(cycle=month.cycle, by=month.world.users["storyteller"], now=AFTER_DEADLINE)
    page = text_of(st(month).get(url("cycle_resolution", 1)))
    assert "Closed: submissions are locked. Resolve the cycle" in page
    assert "Not resolved yet." in page
    assert "not resolved yet" in list_row(month)


def test_a_resolved_cycle(month: Month) -> None:
    resolved(month)
    page = text_of(st(month).get(url("cycle_resolution", 1)))
    assert "The preview is ready" in page and "not resolved yet" not in page.lower()
    row = list_row(month)
    assert "Run 1: done" in row and "Release…" in row


def test_a_released_cycle_says_it_is_released(month: Month) -> None:
    resolved(month)
    pipeline.cycle_release(cycle=month.cycle, by=month.world.users["storyteller"])
    page = text_of(st(month).get(url("cycle_resolution", 1)))
    assert "Released on" in page and "not resolved yet" not in page.lower()
    assert "Release the results" not in page
    row = list_row(month)
    assert "Released" in row and "(run 1)" in row and "not resolved yet" not in row


def test_a_cycle_settled_on_paper_says_it_is_released(month: Month) -> None:
    cycle_close(cycle=month.cycle, by=month.world.users["storyteller"], now=AFTER_DEADLINE)
    assert pipeline.cycle_settle_on_paper(cycle=month.cycle, by=month.world.users["storyteller"])
    page = text_of(st(month).get(url("cycle_resolution", 1)))
    assert "Released: this cycle was settled on paper" in page
    assert "not resolved yet" not in page.lower()
    assert "Nothing computed yet" not in page and "resolve the cycle" not in page
    assert "Resolve" not in resolve_buttons(st(month).get(url("cycle_resolution", 1)))
    row = list_row(month)
    assert "settled on paper" in row and "not resolved yet" not in row
    release_page = text_of(st(month).get(url("cycle_release", 1)))
    assert "These results are already released." in release_page


def resolve_buttons(response: Any) -> str:
    return " ".join(re.findall(r"<button[^>]*>[^<]*</button>", response.content.decode()))


def members_page(month: Month, persona: str) -> str:
    return text_of(month.world.client(persona).get(url("cycle_detail", 1)))


def test_the_members_cycle_page_tells_each_state(month: Month) -> None:
    with time_machine.travel(DURING, tick=False):
        open_page = members_page(month, "player_alice")
        assert "Downtimes must arrive before the deadline above" in open_page
        assert "DT-01" not in open_page  # players read plain words
        cycle_close(cycle=month.cycle, by=month.world.users["storyteller"], now=DURING)
        early = members_page(month, "player_alice")
    assert "The storytellers closed this downtime early, on" in early
    assert "The deadline has passed" not in early
    assert "Go to the resolution" in members_page(month, "storyteller")
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.world.users["storyteller"])
    month.cycle.refresh_from_db()
    pipeline.cycle_release(cycle=month.cycle, by=month.world.users["storyteller"])
    released = members_page(month, "player_alice")
    assert "The results are released: read yours on your results page" in released


def test_a_cycle_closed_at_its_deadline_says_the_deadline_passed(month: Month) -> None:
    cycle_close(cycle=month.cycle, by=None, now=AFTER_DEADLINE)
    page = members_page(month, "player_bob")
    assert "The deadline has passed: submissions are locked." in page
    assert "early" not in page


# --- One place releases ------------------------------------------------------------------------


def test_the_search_desk_links_to_the_release_page_instead_of_releasing(month: Month) -> None:
    page = st(month).get(url("search_desk", 1)).content.decode()
    assert url("search_release", 1) not in page
    assert f'href="{url("cycle_release", 1)}"' in page
    assert "Release resolved results" not in page


def test_overrides_are_kept_beside_their_lines_after_a_re_resolve(month: Month) -> None:
    resolved(month)
    award = Outcome.objects.get(cycle=month.cycle, step="awards")
    pipeline.outcome_override(
        outcome=award, by=month.world.users["storyteller"], note="Plot", xp=Decimal(4)
    )
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.world.users["storyteller"])
    again = Outcome.objects.get(cycle=month.cycle, step="awards")
    assert OutcomeOverride.objects.filter(cycle=month.cycle).count() == 1
    body = st(month).get(url("cycle_resolution", 1), {"step": "awards"}).content.decode()
    article = body.split(f'id="outcome-{again.pk}"')[1].split("</article>")[0]
    assert (
        "<s>2.5</s> <strong>4</strong>" in article or "<s>2.5</s> <strong>4.0</strong>" in article
    )
