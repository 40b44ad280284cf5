"""Game-report picks (DT-05): at most 4 per cycle, only submitted downtimes with a report,
idempotent, nothing written on refusal; the sanitized text and its publish flag."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from characters.models import Character
from chronicle.models import Cycle, CycleStatus
from downtimes.models import ReportPick, Submission, SubmissionStatus
from downtimes.services import votes as services
from tests.conftest import World

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 14, 20, 0, tzinfo=dt.UTC)


def report(
    world: World,
    make_user: Callable[..., Any],
    name: str,
    *,
    text: str = "We met at Elysium and the Prince frowned.",
    submitted: bool = True,
) -> Submission:
    user = make_user(name)
    character = Character.objects.create(chronicle=world.chronicle, player=user, name=name.title())
    return Submission.objects.create(
        cycle=world.game.cycle,
        character=character,
        player=user,
        status=SubmissionStatus.SUBMITTED if submitted else SubmissionStatus.DRAFT,
        game_report=text,
        created_at=NOW,
        updated_at=NOW,
        submitted_at=NOW if submitted else None,
    )


@pytest.fixture
def st(world: World) -> Any:
    return world.users["storyteller"]


def test_dt05_fifth_pick_refused_and_nothing_written(
    world: World, make_user: Callable[..., Any], st: Any
) -> None:
    reports = [report(world, make_user, f"writer{i}") for i in range(5)]
    for submission in reports[:4]:
        services.report_pick(submission=submission, by=st, now=NOW)
    with pytest.raises(ValidationError, match=r"\(DT-05\)"):
        services.report_pick(submission=reports[4], by=st, now=NOW)
    assert ReportPick.objects.filter(cycle=world.game.cycle).count() == 4
    # Unpicking one frees a place.
    services.report_unpick(pick=ReportPick.objects.get(submission=reports[0]), by=st)
    services.report_pick(submission=reports[4], by=st, now=NOW)
    assert set(ReportPick.objects.values_list("submission", flat=True)) == {
        s.pk for s in reports[1:]
    }


def test_dt05_limit_is_the_house_rule_setting(
    world: World, make_user: Callable[..., Any], st: Any
) -> None:
    world.chronicle.house_rule_overrides = {"game_report_picks": 1}
    world.chronicle.save()
    first, second = (report(world, make_user, f"w{i}") for i in range(2))
    services.report_pick(submission=first, by=st, now=NOW)
    with pytest.raises(ValidationError, match=r"already has 1 picked"):
        services.report_pick(submission=second, by=st, now=NOW)


def test_picking_twice_gives_one_pick(world: World, make_user: Callable[..., Any], st: Any) -> None:
    submission = report(world, make_user, "writer")
    one = services.report_pick(submission=submission, by=st, sanitized_text="Clean.", now=NOW)
    two = services.report_pick(submission=submission, by=st, sanitized_text="Other.", now=NOW)
    assert one.pk == two.pk and two.sanitized_text == "Clean."
    assert ReportPick.objects.count() == 1


@pytest.mark.parametrize(
    ("submitted", "text", "message"),
    [
        pytest.param(False, "A fine report.", "Only a submitted", id="DT-05-draft"),
        pytest.param(True, "   ", "no game report", id="DT-05-empty-report"),
    ],
)
def test_only_submitted_reports_can_be_picked(
    world: World,
    make_user: Callable[..., Any],
    st: Any,
    submitted: bool,
    text: str,
    message: str,
) -> None:
    submission = report(world, make_user, "writer", text=text, submitted=submitted)
    with pytest.raises(ValidationError, match=message):
        services.report_pick(submission=submission, by=st, now=NOW)
    assert not ReportPick.objects.exists()


def test_publishing_needs_a_sanitized_text(
    world: World, make_user: Callable[..., Any], st: Any
) -> None:
    submission = report(world, make_user, "writer")
    with pytest.raises(ValidationError) as refused:
        services.report_pick(submission=submission, by=st, published=True, now=NOW)
    assert "published" in refused.value.message_dict
    assert not ReportPick.objects.exists()
    pick = services.report_pick(submission=submission, by=st, now=NOW)
    with pytest.raises(ValidationError, match=r"\(DT-05\)"):
        services.report_pick_update(pick=pick, by=st, sanitized_text="", published=True)
    pick = services.report_pick_update(
        pick=pick, by=st, sanitized_text="The court gathered.", published=True
    )
    pick.refresh_from_db()
    assert (pick.sanitized_text, pick.published) == ("The court gathered.", True)


def test_released_cycle_picks_are_frozen_but_text_may_change(
    world: World, make_user: Callable[..., Any], st: Any
) -> None:
    picked, other = report(world, make_user, "picked"), report(world, make_user, "other")
    pick = services.report_pick(submission=picked, by=st, now=NOW)
    Cycle.objects.filter(pk=world.game.cycle.pk).update(
        status=CycleStatus.RELEASED, closed_at=NOW, resolved_at=NOW, released_at=NOW
    )
    with pytest.raises(ValidationError, match=r"released.*\(DT-05\)"):
        services.report_pick(submission=other, by=st, now=NOW)
    with pytest.raises(ValidationError, match=r"\(DT-05\)"):
        services.report_unpick(pick=pick, by=st)
    services.report_pick_update(pick=pick, by=st, sanitized_text="Later.", published=True)
    assert ReportPick.objects.get().published


def test_unpicking_twice_is_harmless(world: World, make_user: Callable[..., Any], st: Any) -> None:
    pick = services.report_pick(submission=report(world, make_user, "w"), by=st, now=NOW)
    assert services.report_unpick(pick=pick, by=st) is True
    assert services.report_unpick(pick=pick, by=st) is False
