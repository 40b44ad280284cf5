"""The storytellers' resolution pages (issue 6, DT-10) and the player's results page, through the
test client: close, resolve (enqueued, never run inline), the progress bar and its polling, the
preview in DT-10 order, overrides with errors beside their fields, the release's confirmation,
the XP report and its CSV, and the vote tally's line about payment.

The month (tests/pipeline/conftest.py): Lucien (player_alice) submitted, Marguerite
(player_bob) did not; both attended and signed the waiver. So (DT-03, DT-04) each player is
owed 2.5 XP, Alice for a submitted downtime and Bob for none: 2 entries, 5.0 XP, 2 players.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from unittest import mock

import pytest
import time_machine
from celery import Celery
from django.test import Client
from django.urls import reverse

from characters.models import Character, XpEntry
from chronicle import services as chronicle_services
from chronicle.models import CycleStatus
from chronicle.services import cycle_close
from downtimes.models import (
    ChunkStatus,
    Outcome,
    OutcomeOverride,
    ResolutionRun,
    RunStatus,
    StepChunk,
)
from downtimes.selectors import release_plan_key
from downtimes.services import pipeline
from downtimes.services.pipeline import CHUNK_TASK
from downtimes.services.preview import OVERVIEW_SIZE
from downtimes.services.steps import OUTCOME_POSITION, STEPS

from .conftest import AFTER_DEADLINE, Month

pytestmark = pytest.mark.django_db

SLUG = "nightfall"


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    """After the month's deadline: the views read the clock."""
    with time_machine.travel(AFTER_DEADLINE, tick=False):
        yield


def url(name: str, *args: Any) -> str:
    return reverse(name, args=[SLUG, *args])


def st(month: Month) -> Client:
    return month.world.client("storyteller")


def closed(month: Month) -> None:
    cycle_close(cycle=month.cycle, by=month.world.users["storyteller"], now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()


def resolved(month: Month) -> ResolutionRun:
    closed(month)
    run = pipeline.cycle_resolve_inline(
        cycle=month.cycle, by=month.world.users["storyteller"], now=AFTER_DEADLINE
    )
    month.cycle.refresh_from_db()
    return run


def outcome(month: Month, step: str, subject: str) -> Outcome:
    return Outcome.objects.get(cycle=month.cycle, step=step, subject=subject)


def base_of(month: Month, player: str) -> Outcome:
    """The player's base XP outcome: an award for Alice (submitted), a no-downtime default for
    Bob."""
    user = month.world.users[player]
    step = "awards" if player == "player_alice" else "no_downtime"
    return outcome(month, step, f"base:{user.pk}")


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


# --- Close, resolve, progress -----------------------------------------------------------------


def test_close_button_closes_an_open_cycle_once(month: Month) -> None:
    page = st(month).get(url("cycle_resolution", 1))
    assert page.status_code == 200
    assert url("cycle_resolution_close", 1) in page.content.decode()
    first = st(month).post(url("cycle_resolution_close", 1), follow=True)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.CLOSED
    assert month.cycle.closed_at == AFTER_DEADLINE
    assert "The cycle is closed; submissions are locked (DT-10)." in messages_of(first)
    again = st(month).post(url("cycle_resolution_close", 1), follow=True)
    assert "This cycle was already closed." in messages_of(again)


def test_resolving_an_open_cycle_is_refused_in_words(month: Month) -> None:
    response = st(month).post(url("cycle_resolve", 1), follow=True)
    assert response.status_code == 200
    assert any("close it first" in m and "DT-10" in m for m in messages_of(response))
    assert not ResolutionRun.objects.filter(cycle=month.cycle).exists()


def test_resolve_button_enqueues_the_first_step_and_runs_nothing_inline(
    month: Month, django_capture_on_commit_callbacks: Any
) -> None:
    closed(month)
    with (
        mock.patch.object(Celery, "send_task") as send_task,
        django_capture_on_commit_callbacks(execute=True) as callbacks,
    ):
        response = st(month).post(url("cycle_resolve", 1))
    assert response.status_code == 302
    assert response["Location"] == url("cycle_resolution", 1) + "#progress"
    run = ResolutionRun.objects.get(cycle=month.cycle)
    assert run.status == RunStatus.RUNNING and run.started_by == month.world.users["storyteller"]
    lock = StepChunk.objects.get(run=run, step="lock")
    # One task per chunk of the first step (DT-10: lock submissions), sent after commit.
    assert len(callbacks) == 1
    send_task.assert_called_once_with(CHUNK_TASK, args=[lock.pk])
    assert lock.enqueued_at == AFTER_DEADLINE
    assert not StepChunk.objects.filter(run=run, enqueued_at__isnull=False).exclude(pk=lock.pk)
    # Nothing ran in the request: no chunk done, no outcome, the cycle still only closed.
    assert not StepChunk.objects.filter(run=run, status=ChunkStatus.DONE).exists()
    assert not Outcome.objects.filter(cycle=month.cycle).exists()
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.CLOSED


def test_the_progress_bar_polls_while_running_and_reloads_when_done(month: Month) -> None:
    closed(month)
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.world.users["storyteller"])
    chunks = list(StepChunk.objects.filter(run=run).order_by("position", "number"))
    # Chunk size 500, four members and two characters: one chunk per step.
    assert len(chunks) == len(STEPS) == 9
    for chunk in chunks[:2]:
        assert pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE)

    page = st(month).get(url("cycle_resolution", 1)).content.decode()
    assert 'hx-trigger="every 1s"' in page
    assert 'hx-get="' + url("cycle_progress", 1) + '"' in page
    assert "2 of 9 chunks done (22%)" in page  # 2 of 9 = 22 %
    assert '<progress id="progress-bar" max="100" value="22">' in page
    assert url("cycle_resolution", 1) + "#progress" in page  # the Refresh link without JS

    fragment = st(month).get(url("cycle_progress", 1), HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    body = fragment.content.decode()
    assert body.lstrip().startswith('<section class="card" id="progress"')
    assert "<html" not in body and 'hx-trigger="every 1s"' in body
    assert "HX-Refresh" not in fragment

    for chunk in chunks[2:]:
        pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE)
    done = st(month).get(url("cycle_progress", 1), HTTP_HX_REQUEST="true")
    assert "hx-trigger" not in done.content.decode()  # polling stops
    assert "9 of 9 chunks done (100%)" in done.content.decode()
    assert done["HX-Refresh"] == "true"  # the whole page reloads to show the preview


def test_the_progress_fragment_without_htmx_goes_to_the_page(month: Month) -> None:
    response = st(month).get(url("cycle_progress", 1))
    assert response.status_code == 302
    assert response["Location"] == url("cycle_resolution", 1) + "#progress"


# --- The preview ------------------------------------------------------------------------------


def test_the_preview_is_grouped_by_step_in_dt10_order(month: Month) -> None:
    resolved(month)
    page = st(month).get(url("cycle_resolution", 1)).content.decode()
    labels = [
        "Lock submissions (DT-01)",
        "No-downtime defaults (DT-03)",
        "Ownership changes (HAV-01..03)",
        "Searches (HAV-25b)",
        "Torpor holds (TOR-01)",
        "Approved XP purchases (XP-01)",
        "Awards (DT-03..08)",
        "Notifications (DT-10)",
    ]
    places = [page.index(f". {label} <span") for label in labels]
    assert places == sorted(places)
    # Each outcome with its title, its explanation (the STs') and its XP.
    bob = base_of(month, "player_bob")
    assert bob.title in page and bob.explanation in page
    assert "2.5 XP for a submitted downtime (DT-03)." in page
    assert "<strong>2.5</strong>" in page
    assert "Preview: 6 outcomes" in page  # as the services' test counts them
    assert url("cycle_release", 1) in page


def test_a_step_filter_lists_that_step_only(month: Month) -> None:
    resolved(month)
    page = st(month).get(url("cycle_resolution", 1), {"step": "awards"}).content.decode()
    assert base_of(month, "player_alice").title in page
    assert base_of(month, "player_bob").title not in page
    assert st(month).get(url("cycle_resolution", 1), {"step": "nope"}).status_code == 404


def test_an_xp_override_is_saved_shown_and_removed(month: Month) -> None:
    resolved(month)
    award = base_of(month, "player_alice")
    prefix = f"o{award.pk}"
    response = st(month).post(
        url("outcome_override", 1, award.pk),
        {f"{prefix}-xp": "3.5", f"{prefix}-note": "She ran the whole plot"},
    )
    assert response.status_code == 302
    assert response["Location"] == url("cycle_resolution", 1) + f"#outcome-{award.pk}"
    override = OutcomeOverride.objects.get(cycle=month.cycle, step="awards")
    assert (override.xp, override.note) == (Decimal("3.5"), "She ran the whole plot")
    assert override.by == month.world.users["storyteller"]
    page = st(month).get(url("cycle_resolution", 1)).content.decode()
    assert "Overridden by storyteller" in page and "She ran the whole plot" in page
    assert "<s>2.5</s> <strong>3.5</strong>" in page

    removed = st(month).post(url("outcome_override_remove", 1, award.pk), follow=True)
    assert any("Override removed" in m for m in messages_of(removed))
    assert not OutcomeOverride.objects.exists()
    again = st(month).post(url("outcome_override_remove", 1, award.pk), follow=True)
    assert "This outcome had no override." in messages_of(again)


@pytest.mark.parametrize(
    ("xp", "note", "field", "error"),
    [
        pytest.param("1.25", "typo", "xp", "XP is paid in steps of 0.5, from 0 up.", id="half"),
        pytest.param("-1", "typo", "xp", "greater than or equal to 0", id="negative"),
        pytest.param("", "typo", "xp", "Give the XP this award should pay.", id="no-xp"),
        pytest.param("3", "", "note", "Say why you change this outcome", id="no-note"),
        pytest.param("3", "   ", "note", "Say why you change this outcome", id="blank-note"),
        pytest.param("x", "typo", "xp", "Enter a number.", id="not-a-number"),
        pytest.param("99999999", "typo", "xp", "less than or equal to", id="huge"),
    ],
)
def test_a_refused_override_shows_the_error_beside_its_field_and_keeps_the_input(
    month: Month, xp: str, note: str, field: str, error: str
) -> None:
    resolved(month)
    award = base_of(month, "player_alice")
    prefix = f"o{award.pk}"
    response = st(month).post(
        url("outcome_override", 1, award.pk), {f"{prefix}-xp": xp, f"{prefix}-note": note}
    )
    assert response.status_code == 400
    assert not OutcomeOverride.objects.exists()
    body = response.content.decode()
    # The error sits in the field's own block, and what was typed is still there.
    start = body.index(f'for="id_{prefix}-{field}"')
    block = body[start : body.index("</div>", start)]
    assert error in block
    if xp.strip():
        assert f'value="{xp}"' in body
    if note.strip():
        assert note in body
    assert "<details open>" in body


def test_a_search_can_be_overridden_found_or_not(month: Month) -> None:
    run = resolved(month)
    search = Outcome.objects.create(
        cycle=month.cycle,
        run=run,
        step="searches",
        subject="search:1:2",
        position=OUTCOME_POSITION["searches"],
        character=month.lucien,
        player=month.world.users["player_alice"],
        title="Lucien searches a haven",
        explanation="Search of 19 influence against 20 hiding points: not found.",
        overridable="found",
    )
    prefix = f"o{search.pk}"
    page = st(month).get(url("cycle_resolution", 1)).content.decode()
    assert f'name="{prefix}-found" value="yes"' in page and f'name="{prefix}-xp"' not in page
    refused = st(month).post(url("outcome_override", 1, search.pk), {f"{prefix}-note": "why"})
    assert refused.status_code == 400
    assert "Say whether the search finds its target." in refused.content.decode()
    response = st(month).post(
        url("outcome_override", 1, search.pk),
        {f"{prefix}-found": "yes", f"{prefix}-note": "The ghoul talked"},
    )
    assert response.status_code == 302
    override = OutcomeOverride.objects.get(cycle=month.cycle, step="searches")
    assert override.found is True and override.xp is None
    page = st(month).get(url("cycle_resolution", 1)).content.decode()
    assert ": found. Note: The ghoul talked" in page


def test_an_outcome_without_override_is_refused_in_words(month: Month) -> None:
    resolved(month)
    lock = outcome(month, "lock", "cycle")
    page = st(month).get(url("cycle_resolution", 1)).content.decode()
    assert url("outcome_override", 1, lock.pk) not in page
    response = st(month).post(
        url("outcome_override", 1, lock.pk), {f"o{lock.pk}-note": "x"}, follow=True
    )
    assert "This outcome cannot be overridden; change its inputs instead." in messages_of(response)


def test_an_outcome_of_another_cycle_is_404(month: Month) -> None:
    resolved(month)
    award = base_of(month, "player_alice")
    game = chronicle_services.game_create(
        chronicle=month.world.chronicle, date=month.world.game.date.replace(day=23), place="x"
    )
    assert st(month).post(url("outcome_override", game.number, award.pk)).status_code == 404
    assert st(month).post(url("outcome_override", 1, 2**40)).status_code == 404
    assert st(month).get(url("cycle_resolution", 99)).status_code == 404


@pytest.mark.parametrize("count", [1, 200])
def test_the_cycle_page_costs_the_same_for_1_or_200_outcomes(
    month: Month, count: int, django_assert_num_queries: Any
) -> None:
    run = resolved(month)
    Outcome.objects.filter(cycle=month.cycle).delete()
    alice = month.world.users["player_alice"]
    Outcome.objects.bulk_create(
        Outcome(
            cycle=month.cycle,
            run=run,
            step="awards",
            subject=f"extra:{i}",
            position=OUTCOME_POSITION["awards"],
            player=alice,
            character=month.lucien,
            title=f"Award {i}",
            explanation="2.5 XP (DT-03).",
            public_text="Base XP: 2.5.",
            xp=Decimal("2.5"),
            overridable="xp",
        )
        for i in range(count)
    )
    OutcomeOverride.objects.bulk_create(
        OutcomeOverride(
            cycle=month.cycle,
            step="awards",
            subject=f"extra:{i}",
            xp=Decimal(3),
            note="n",
            by=month.world.users["storyteller"],
            at=AFTER_DEADLINE,
        )
        for i in range(0, count, 2)
    )
    client = st(month)
    # session, user, membership, cycle; the latest run, its chunk counts and its chunks'
    # failures (run_progress); the outcomes with player and character; the overrides with
    # their author; outcomes per step; the header's chronicle switcher.
    with django_assert_num_queries(11):
        response = client.get(url("cycle_resolution", 1))
    assert response.status_code == 200
    # The overview shows the first lines of each step; the step's tab pages the rest (issue 12,
    # tests/pipeline/test_resolution_preview.py).
    assert response.content.decode().count('class="outcome"') == min(count, OVERVIEW_SIZE)


def test_the_cycle_list_shows_status_and_latest_run(month: Month) -> None:
    chronicle_services.game_create(
        chronicle=month.world.chronicle, date=month.world.game.date.replace(day=23), place="x"
    )
    resolved(month)
    page = st(month).get(url("cycle_resolution_list"))
    assert page.status_code == 200
    body = page.content.decode()
    assert "Run 1: done" in body and "not resolved yet" in body
    assert body.index('id="cycle-2"') < body.index('id="cycle-1"')  # newest first


# --- Release ------------------------------------------------------------------------------------


def confirmation(client: Client) -> tuple[Any, dict[str, str]]:
    page = client.get(url("cycle_release", 1))
    form = page.context["form"]
    return page, {"run": str(form.initial["run"]), "plan": form.initial["plan"]}


def test_the_release_says_what_it_will_do_then_releases_once(month: Month) -> None:
    resolved(month)
    client = st(month)
    page, data = confirmation(client)
    body = page.content.decode()
    assert page.status_code == 200
    text = " ".join(body.split())
    assert "<strong>2</strong> XP entries totalling <strong>5.0 XP</strong>" in text
    assert "each of the 2 players gets" in text  # the summaries' readers, not the XP's
    assert "<strong>0</strong> haven outcomes" in text
    assert "<strong>0</strong> storyteller overrides are applied" in text
    assert "<strong>one summary e-mail</strong>" in text
    assert "This cannot be undone." in text
    assert not XpEntry.objects.filter(cycle=month.cycle).exists()  # reading changes nothing

    released = client.post(url("cycle_release", 1), data, follow=True)
    assert any(m.startswith("Released:") for m in messages_of(released))
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RELEASED
    assert sorted(e.amount for e in XpEntry.objects.filter(cycle=month.cycle)) == [
        Decimal("2.5"),
        Decimal("2.5"),
    ]
    again = client.post(url("cycle_release", 1), data, follow=True)
    assert "The results of this cycle are already released." in messages_of(again)
    assert XpEntry.objects.filter(cycle=month.cycle).count() == 2
    # Released: the preview can no longer be overridden.
    page = client.get(url("cycle_resolution", 1)).content.decode()
    assert "Save the override" not in page and "Release the results" not in page


def test_a_release_confirmed_for_another_preview_shows_the_new_plan(month: Month) -> None:
    resolved(month)
    client = st(month)
    _, data = confirmation(client)
    pipeline.outcome_override(
        outcome=base_of(month, "player_bob"),
        by=month.world.users["admin"],
        note="Helped at the game",
        xp=Decimal(3),
    )
    response = client.post(url("cycle_release", 1), data)
    assert response.status_code == 409
    assert not XpEntry.objects.filter(cycle=month.cycle).exists()
    text = " ".join(response.content.decode().split())
    assert "The preview changed since this confirmation was shown" in text
    assert "totalling <strong>5.5 XP</strong>" in text  # 2.5 + 3
    assert "<strong>1</strong> storyteller override is applied" in text
    for bad in ({}, {"run": "x", "plan": "y"}):
        assert client.post(url("cycle_release", 1), bad).status_code == 409


def test_a_release_without_a_finished_preview_is_a_message_not_a_500(month: Month) -> None:
    resolved(month)
    pipeline.cycle_resolve(cycle=month.cycle, by=month.world.users["storyteller"])
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.CLOSED  # being resolved again
    client = st(month)
    page = client.get(url("cycle_release", 1))
    assert "There is no finished preview to release" in page.content.decode()
    assert "Release now" not in page.content.decode()
    run, key = release_plan_key(month.cycle, pipeline.release_plan(cycle=month.cycle))
    response = client.post(url("cycle_release", 1), {"run": run, "plan": key}, follow=True)
    assert response.status_code == 200
    assert any("no finished preview" in m for m in messages_of(response))
    assert not XpEntry.objects.filter(cycle=month.cycle).exists()


# --- XP report ----------------------------------------------------------------------------------


def test_the_xp_report_lists_the_preview_with_overrides(month: Month) -> None:
    resolved(month)
    pipeline.outcome_override(
        outcome=base_of(month, "player_alice"),
        by=month.world.users["storyteller"],
        note="Ran the plot",
        xp=Decimal(4),
    )
    page = st(month).get(url("cycle_xp_report", 1))
    assert page.status_code == 200
    text = " ".join(page.content.decode().split())
    assert "2 entries, 6.5 XP, 2 players." in text  # 4 + 2.5
    assert "<td>player_alice</td><td>Lucien</td><td>4.0</td>" in text
    assert "Ran the plot" in text


def test_the_xp_report_downloads_as_csv(month: Month) -> None:
    resolved(month)
    pipeline.cycle_release(cycle=month.cycle, by=month.world.users["storyteller"])
    for response in (
        st(month).get(url("cycle_xp_report", 1), {"format": "csv"}),
        st(month).get(url("cycle_xp_report_csv", 1)),
    ):
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/csv")
        assert response["Content-Disposition"] == ('attachment; filename="nightfall-game-1-xp.csv"')
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        assert rows[0] == [
            "Player",
            "Character",
            "XP",
            "Reason",
            "Kind",
            "Override note",
            "Group",
        ]
        # Released: the ledger's lines, by player.
        assert [r[:3] for r in rows[1:]] == [
            ["player_alice", "Lucien", "2.5"],
            ["player_bob", "Marguerite", "2.5"],
        ]
        assert rows[1][3] == base_of(month, "player_alice").title


def test_a_csv_cell_that_looks_like_a_formula_is_quoted(month: Month) -> None:
    Character.objects.filter(pk=month.lucien.pk).update(name='=HYPERLINK("http://x")')
    resolved(month)
    rows = list(
        csv.reader(io.StringIO(st(month).get(url("cycle_xp_report_csv", 1)).content.decode()))
    )
    lucien = next(r for r in rows if r[0] == "player_alice")
    assert lucien[1] == """'=HYPERLINK("http://x")"""


# --- The player's results, the vote tally --------------------------------------------------------


def test_results_appear_only_after_release_and_only_the_players_own(month: Month) -> None:
    resolved(month)
    alice = month.world.client("player_alice")
    before = alice.get(url("results"))
    assert before.status_code == 200
    assert "No results yet" in before.content.decode()

    pipeline.cycle_release(cycle=month.cycle, by=month.world.users["storyteller"])
    body = alice.get(url("results")).content.decode()
    assert "After game 1" in body
    assert "Base XP: 2.5." in body  # Alice's award's public text
    assert "(no downtime)" not in body and "No downtime was submitted" not in body  # Bob's
    assert base_of(month, "player_alice").explanation not in body  # the STs' words
    submission = month.lucien.submissions.get()
    assert reverse("downtime_submission", args=[SLUG, submission.pk]) in body
    assert reverse("search_list", args=[SLUG]) in body

    bob = month.world.client("player_bob").get(url("results")).content.decode()
    assert "Base XP: 2.5 (no downtime)." in bob and "No downtime was submitted" in bob
    assert "Base XP: 2.5." not in bob


def test_results_show_an_xp_override_as_the_summary_mail_does(month: Month) -> None:
    resolved(month)
    pipeline.outcome_override(
        outcome=base_of(month, "player_alice"),
        by=month.world.users["storyteller"],
        note="Ran the plot",
        xp=Decimal(4),
    )
    pipeline.cycle_release(cycle=month.cycle, by=month.world.users["storyteller"])
    body = month.world.client("player_alice").get(url("results")).content.decode()
    assert "Base XP: 2.5. A storyteller changed this award to 4.0 XP." in body
    assert "Ran the plot" not in body  # the note is the STs' own


def test_the_vote_tally_says_when_awards_are_paid(month: Month) -> None:
    admin = month.world.client("admin")
    before = admin.get(url("vote_tally"), {"cycle": 1}).content.decode()
    assert "These awards are paid when the cycle's results are released" in before
    assert url("cycle_resolution", 1) in before
    resolved(month)
    pipeline.cycle_release(cycle=month.cycle, by=month.world.users["storyteller"])
    after = admin.get(url("vote_tally"), {"cycle": 1}).content.decode()
    assert "These awards were <strong>paid</strong> with the cycle's release" in after


def test_the_nav_links_resolution_for_staff_and_results_for_players(month: Month) -> None:
    staff = st(month).get(url("dashboard")).content.decode()
    player = month.world.client("player_alice").get(url("dashboard")).content.decode()
    assert url("cycle_resolution_list") in staff and url("results") not in staff
    assert url("results") in player and url("cycle_resolution_list") not in player


def test_an_override_after_the_release_is_refused_in_words(month: Month) -> None:
    resolved(month)
    pipeline.cycle_release(cycle=month.cycle, by=month.world.users["storyteller"])
    award = base_of(month, "player_alice")
    prefix = f"o{award.pk}"
    response = st(month).post(
        url("outcome_override", 1, award.pk),
        {f"{prefix}-xp": "3", f"{prefix}-note": "late"},
        follow=True,
    )
    assert response.status_code == 200
    assert "The results are released; record a correction instead." in messages_of(response)
    removed = st(month).post(url("outcome_override_remove", 1, award.pk), follow=True)
    assert "The results are released; record a correction instead." in messages_of(removed)
    assert not OutcomeOverride.objects.exists()
