"""The pipeline's API (issue 6): /api/chronicles/<slug>/resolution/ (cycles with progress;
close, resolve, release-plan, release, xp), its outcomes with overrides, and the player's
results, with the one error shape and constant query counts on the lists.

The month as in test_cycle_pages: each player is owed 2.5 XP (DT-03, DT-04)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from unittest import mock

import pytest
import time_machine
from celery import Celery
from django.test import Client

from characters.models import XpEntry
from chronicle import services as chronicle_services
from chronicle.models import CycleStatus
from chronicle.services import cycle_close
from downtimes.models import Outcome, OutcomeOverride, ResolutionRun, StepChunk
from downtimes.services import pipeline
from downtimes.services.pipeline import CHUNK_TASK
from downtimes.services.steps import OUTCOME_POSITION

from .conftest import AFTER_DEADLINE, Month

pytestmark = pytest.mark.django_db

API = "/api/chronicles/nightfall"


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(AFTER_DEADLINE, tick=False):
        yield


def st(month: Month) -> Client:
    return month.world.client("storyteller")


def resolved(month: Month) -> None:
    by = month.world.users["storyteller"]
    cycle_close(cycle=month.cycle, by=by, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=by, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()


def base_of(month: Month, player: str) -> Outcome:
    user = month.world.users[player]
    step = "awards" if player == "player_alice" else "no_downtime"
    return Outcome.objects.get(cycle=month.cycle, step=step, subject=f"base:{user.pk}")


def test_cycles_list_and_retrieve_with_progress(month: Month) -> None:
    chronicle_services.game_create(
        chronicle=month.world.chronicle, date=month.world.game.date.replace(day=23), place="x"
    )
    resolved(month)
    listing = st(month).get(f"{API}/resolution/")
    assert listing.status_code == 200
    rows = listing.json()["results"]
    assert [(r["game_number"], r["status"]) for r in rows] == [(2, "open"), (1, "resolved")]
    assert rows[0]["progress"] is None
    progress = rows[1]["progress"]
    # Nine steps (Herd blood, BLD-04, is the ninth), one chunk each (chunk size 500), all done.
    assert (progress["run"], progress["status"]) == (1, "done")
    assert (progress["done"], progress["total"], progress["percent"]) == (9, 9, 100)
    assert [s["name"] for s in progress["steps"]][:3] == ["lock", "no_downtime", "havens"]
    one = st(month).get(f"{API}/resolution/1/")
    assert one.status_code == 200 and one.json()["progress"] == progress
    for bad in ("99", "0", "99999999999"):
        missing = st(month).get(f"{API}/resolution/{bad}/")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("cycles", [1, 8])
def test_cycles_list_costs_the_same_for_1_or_8_cycles(
    month: Month, cycles: int, django_assert_num_queries: Any
) -> None:
    for day in range(1, cycles):
        chronicle_services.game_create(
            chronicle=month.world.chronicle,
            date=month.world.game.date.replace(day=10 + day),
            place="x",
        )
    resolved(month)
    client = st(month)
    # session, user, membership; the count and the page of cycles; the latest runs; their
    # chunk counts.
    with django_assert_num_queries(7):
        response = client.get(f"{API}/resolution/")
    assert len(response.json()["results"]) == cycles


def test_close_then_resolve_enqueues_and_answers_202(
    month: Month, django_capture_on_commit_callbacks: Any
) -> None:
    client = st(month)
    refused = client.post(f"{API}/resolution/1/resolve/")
    assert refused.status_code == 400
    assert "close it first" in refused.json()["error"]["message"]
    closed = client.post(f"{API}/resolution/1/close/")
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    again = client.post(f"{API}/resolution/1/close/")
    assert again.status_code == 409
    assert again.json() == {
        "error": {"code": "already_closed", "message": "This cycle is already closed."}
    }
    with (
        mock.patch.object(Celery, "send_task") as send_task,
        django_capture_on_commit_callbacks(execute=True),
    ):
        started = client.post(f"{API}/resolution/1/resolve/")
    assert started.status_code == 202
    body = started.json()
    assert body["progress"]["status"] == "running"
    assert (body["progress"]["done"], body["progress"]["total"]) == (0, 9)
    lock = StepChunk.objects.get(run__cycle=month.cycle, step="lock")
    send_task.assert_called_once_with(CHUNK_TASK, args=[lock.pk])
    assert not Outcome.objects.filter(cycle=month.cycle).exists()


def test_outcomes_list_with_overrides(month: Month) -> None:
    resolved(month)
    award = base_of(month, "player_alice")
    pipeline.outcome_override(
        outcome=award, by=month.world.users["admin"], note="Plot", xp=Decimal("3.5")
    )
    response = st(month).get(f"{API}/resolution/1/outcomes/")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 6
    steps = [r["step"] for r in body["results"]]
    assert steps == sorted(steps, key=OUTCOME_POSITION.__getitem__)  # DT-10 order
    row = next(r for r in body["results"] if r["id"] == award.pk)
    assert row["xp"] == "2.5" and row["effective_xp"] == "3.5"
    assert row["override"]["note"] == "Plot" and row["override"]["by"] == "admin"
    assert row["explanation"] == "2.5 XP for a submitted downtime (DT-03)."
    assert row["step_label"] == "Awards (DT-03..08)"
    one = st(month).get(f"{API}/resolution/1/outcomes/{award.pk}/")
    assert one.status_code == 200 and one.json() == row
    page = st(month).get(f"{API}/resolution/1/outcomes/", {"limit": 2, "offset": 2})
    assert len(page.json()["results"]) == 2


@pytest.mark.parametrize("count", [1, 200])
def test_outcomes_list_costs_the_same_for_1_or_200(
    month: Month, count: int, django_assert_num_queries: Any
) -> None:
    resolved(month)
    run = ResolutionRun.objects.get(cycle=month.cycle)
    Outcome.objects.filter(cycle=month.cycle).delete()
    Outcome.objects.bulk_create(
        Outcome(
            cycle=month.cycle,
            run=run,
            step="awards",
            subject=f"x:{i}",
            position=OUTCOME_POSITION["awards"],
            player=month.world.users["player_alice"],
            character=month.lucien,
            title=f"Award {i}",
            explanation="e",
            xp=Decimal("2.5"),
            overridable="xp",
        )
        for i in range(count)
    )
    client = st(month)
    # session, user, membership, cycle; the overrides; the count and the page of outcomes
    # with their player and character.
    with django_assert_num_queries(7):
        response = client.get(f"{API}/resolution/1/outcomes/", {"limit": 500})
    assert len(response.json()["results"]) == count


def test_override_post_and_delete_with_one_error_shape(month: Month) -> None:
    resolved(month)
    award = base_of(month, "player_alice")
    path = f"{API}/resolution/1/outcomes/{award.pk}/override/"
    client = st(month)
    half = client.post(path, {"xp": "1.25", "note": "x"}, content_type="application/json")
    assert half.status_code == 400
    assert half.json() == {
        "error": {
            "code": "invalid",
            "message": "Some fields need attention.",
            "fields": {"xp": ["XP is paid in steps of 0.5, from 0 up."]},
        }
    }
    no_note = client.post(path, {"xp": "3"}, content_type="application/json")
    assert no_note.status_code == 400 and "note" in no_note.json()["error"]["fields"]
    blank = client.post(path, {"xp": "3", "note": "  "}, content_type="application/json")
    assert blank.status_code == 400
    assert blank.json()["error"]["fields"] == {"note": ["This field may not be blank."]}
    saved = client.post(path, {"xp": "3", "note": "Plot"}, content_type="application/json")
    assert saved.status_code == 200
    assert saved.json()["effective_xp"] == "3.0"
    assert OutcomeOverride.objects.get().xp == Decimal(3)
    lock = Outcome.objects.get(cycle=month.cycle, step="lock")
    fixed = client.post(
        f"{API}/resolution/1/outcomes/{lock.pk}/override/",
        {"note": "x"},
        content_type="application/json",
    )
    assert fixed.status_code == 400
    assert "cannot be overridden" in fixed.json()["error"]["message"]
    assert client.delete(path).status_code == 204
    assert not OutcomeOverride.objects.exists()
    assert client.delete(path).status_code == 204  # nothing to remove: the same answer


def test_release_plan_release_and_release_again(month: Month) -> None:
    resolved(month)
    client = st(month)
    plan = client.get(f"{API}/resolution/1/release-plan/").json()
    assert {k: v for k, v in plan.items() if k != "key"} == {
        "xp_entries": 2,
        "xp_total": "5.0",
        "players": 2,
        "haven_outcomes": 0,
        "overrides": 0,
        "outcomes": 6,
        # Nothing unfinished, nothing in the ledger outside the release (issue 12).
        "unfinished": [],
        "blocked": False,
        "outside_release": [],
    }
    pipeline.outcome_override(
        outcome=base_of(month, "player_bob"), by=month.world.users["admin"], note="n", xp=Decimal(3)
    )
    stale = client.post(
        f"{API}/resolution/1/release/", {"key": plan["key"]}, content_type="application/json"
    )
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "plan_changed"
    assert not XpEntry.objects.filter(cycle=month.cycle).exists()
    fresh = client.get(f"{API}/resolution/1/release-plan/").json()
    assert fresh["xp_total"] == "5.5" and fresh["key"] != plan["key"]
    done = client.post(
        f"{API}/resolution/1/release/", {"key": fresh["key"]}, content_type="application/json"
    )
    assert done.status_code == 200 and done.json()["status"] == CycleStatus.RELEASED
    assert XpEntry.objects.filter(cycle=month.cycle).count() == 2
    again = client.post(f"{API}/resolution/1/release/", {}, content_type="application/json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_released"
    assert XpEntry.objects.filter(cycle=month.cycle).count() == 2


def test_release_of_an_unresolved_cycle_is_400_in_words(month: Month) -> None:
    response = st(month).post(f"{API}/resolution/1/release/", {}, content_type="application/json")
    assert response.status_code == 400
    assert "no finished preview" in response.json()["error"]["message"]


def test_xp_report(month: Month) -> None:
    resolved(month)
    rows = st(month).get(f"{API}/resolution/1/xp/").json()
    assert sorted((r["player"], r["character"], r["xp"]) for r in rows) == [
        ("player_alice", "Lucien", "2.5"),
        ("player_bob", "Marguerite", "2.5"),
    ]
    assert {r["kind"] for r in rows} == {"Award (preview)"}


def test_results_are_the_players_own_and_only_once_released(month: Month) -> None:
    resolved(month)
    alice = month.world.client("player_alice")
    assert alice.get(f"{API}/results/").json()["results"] == []
    pipeline.cycle_release(cycle=month.cycle, by=month.world.users["storyteller"])
    mine = alice.get(f"{API}/results/").json()["results"]
    assert [(r["game_number"], r["step"], r["text"]) for r in mine] == [
        (1, "awards", "Base XP: 2.5.")
    ]
    assert set(mine[0]) == {"id", "game_number", "step", "step_label", "character_name", "text"}
    bob = month.world.client("player_bob").get(f"{API}/results/").json()["results"]
    assert sorted(r["step"] for r in bob) == ["no_downtime", "no_downtime"]
    assert all("Lucien" not in str(r) for r in bob)
