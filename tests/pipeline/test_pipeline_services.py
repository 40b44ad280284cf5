"""The pipeline's services on the database: close, resolve inline, review, release."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError

from characters.models import InfluenceSpend, Notification, XpEntry
from characters.services.records import torpor_hold_record
from chronicle.models import Attendance, CycleStatus
from chronicle.services import cycle_close
from downtimes.models import Outcome, OutcomeOverride, Submission
from downtimes.services import pipeline, submissions
from downtimes.services.votes import report_pick

from .conftest import AFTER_DEADLINE, Month


def _resolved(month: Month) -> None:
    st = month.world.users["storyteller"]
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()


def test_resolve_writes_a_preview_that_changes_no_balance(month: Month) -> None:
    _resolved(month)
    assert month.cycle.status == CycleStatus.RESOLVED
    rows = {(o.step, o.subject): o for o in Outcome.objects.filter(cycle=month.cycle)}
    alice, bob = (month.world.users[n] for n in ("player_alice", "player_bob"))
    assert rows["awards", f"base:{alice.pk}"].xp == Decimal("2.5")
    assert rows["no_downtime", f"base:{bob.pk}"].xp == Decimal("2.5")
    assert rows["no_downtime", f"cash-in:{month.marguerite.pk}"].value["cash_in"] == {
        "business": 3,
        "herd": 1,
        "occult": 1,
    }
    assert not XpEntry.objects.filter(cycle=month.cycle).exists()
    assert not InfluenceSpend.objects.filter(cycle=month.cycle).exists()


def test_release_applies_once(month: Month) -> None:
    _resolved(month)
    st = month.world.users["storyteller"]
    assert pipeline.cycle_release(cycle=month.cycle, by=st, now=AFTER_DEADLINE) is True
    assert pipeline.cycle_release(cycle=month.cycle, by=st, now=AFTER_DEADLINE) is False
    entries = XpEntry.objects.filter(cycle=month.cycle)
    assert sorted(e.amount for e in entries) == [Decimal("2.5"), Decimal("2.5")]
    spent = InfluenceSpend.objects.filter(cycle=month.cycle, character=month.marguerite)
    assert sum(s.points for s in spent) == 5


@pytest.mark.parametrize("size", [1, 500])
def test_chunking_gives_the_same_preview(month: Month, size: int, settings) -> None:
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = size
    _resolved(month)
    # lock, cash-in and base XP for Marguerite, base XP for Lucien, two summaries
    assert Outcome.objects.filter(cycle=month.cycle).count() == 6


def _st(month: Month):  # type: ignore[no-untyped-def]
    return month.world.users["storyteller"]


def test_dt04_no_waiver_pays_nothing_and_says_why(month: Month) -> None:
    bob = month.world.users["player_bob"]
    Attendance.objects.filter(game=month.world.game, player=bob).update(waiver_signed=False)
    _resolved(month)
    base = Outcome.objects.get(cycle=month.cycle, step="no_downtime", subject=f"base:{bob.pk}")
    assert base.xp == 0
    assert "no signed waiver" in base.explanation and "DT-04" in base.explanation
    pipeline.cycle_release(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    assert not XpEntry.objects.filter(cycle=month.cycle, player=bob).exists()


def test_override_is_kept_through_re_resolving_and_paid_at_release(month: Month) -> None:
    bob = month.world.users["player_bob"]
    Attendance.objects.filter(game=month.world.game, player=bob).update(waiver_signed=False)
    _resolved(month)
    base = Outcome.objects.get(cycle=month.cycle, step="no_downtime", subject=f"base:{bob.pk}")
    pipeline.outcome_override(
        outcome=base, by=_st(month), xp=Decimal("2.5"), note="Waiver found in the car."
    )
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED
    assert OutcomeOverride.objects.get().note == "Waiver found in the car."
    pipeline.cycle_release(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    entry = XpEntry.objects.get(cycle=month.cycle, player=bob)
    assert entry.amount == Decimal("2.5")
    summary = Notification.objects.get(key=f"cycle:{month.cycle.pk}:summary:{bob.pk}")
    assert "A storyteller changed this award to 2.5 XP." in summary.body
    assert "Waiver found in the car." not in summary.body  # ST notes stay with the STs


@pytest.mark.parametrize(
    ("xp", "field"),
    [
        pytest.param(Decimal("-1"), "xp", id="negative"),
        pytest.param(Decimal("1.2"), "xp", id="not-half-steps"),
        pytest.param(None, "xp", id="missing"),
    ],
)
def test_override_refuses_bad_xp(month: Month, xp: Decimal | None, field: str) -> None:
    _resolved(month)
    alice = month.world.users["player_alice"]
    base = Outcome.objects.get(cycle=month.cycle, step="awards", subject=f"base:{alice.pk}")
    with pytest.raises(ValidationError) as err:
        pipeline.outcome_override(outcome=base, by=_st(month), xp=xp, note="why")
    assert field in err.value.message_dict
    assert not OutcomeOverride.objects.exists()


def test_override_needs_a_note_and_a_storyteller(month: Month) -> None:
    _resolved(month)
    alice = month.world.users["player_alice"]
    base = Outcome.objects.get(cycle=month.cycle, step="awards", subject=f"base:{alice.pk}")
    with pytest.raises(ValidationError) as err:
        pipeline.outcome_override(outcome=base, by=_st(month), xp=Decimal(3), note="  ")
    assert "note" in err.value.message_dict
    with pytest.raises(PermissionDenied):
        pipeline.outcome_override(outcome=base, by=alice, xp=Decimal(30), note="please")
    lock = Outcome.objects.get(cycle=month.cycle, step="lock")
    with pytest.raises(ValidationError):
        pipeline.outcome_override(outcome=lock, by=_st(month), xp=Decimal(1), note="no")


def test_report_pick_pays_game_report_xp(month: Month) -> None:
    submission = Submission.objects.get(cycle=month.cycle, character=month.lucien)
    report_pick(submission=submission, by=_st(month), now=AFTER_DEADLINE)
    _resolved(month)
    pipeline.cycle_release(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    alice = month.world.users["player_alice"]
    amounts = sorted(e.amount for e in XpEntry.objects.filter(cycle=month.cycle, player=alice))
    assert amounts == [Decimal("2.5"), Decimal("3")]  # DT-03 base + DT-05 pick


def test_the_cycle_must_be_closed_before_resolving_and_resolved_before_release(
    month: Month,
) -> None:
    with pytest.raises(ValidationError, match="still open"):
        pipeline.cycle_resolve(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    cycle_close(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    with pytest.raises(ValidationError, match="no finished preview"):
        pipeline.cycle_release(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    with pytest.raises(PermissionDenied):
        pipeline.cycle_resolve(
            cycle=month.cycle, by=month.world.users["player_alice"], now=AFTER_DEADLINE
        )


def test_release_refuses_a_stale_cash_in(month: Month) -> None:
    _resolved(month)
    # An at-game spend recorded after the preview: what is left to cash in changed.
    InfluenceSpend.objects.create(
        character=month.marguerite,
        cycle=month.cycle,
        influence="business",
        points=1,
        reason="At-game request",
        key="late",
        created_at=AFTER_DEADLINE,
    )
    with pytest.raises(ValidationError, match="resolve the cycle again"):
        pipeline.cycle_release(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    assert not XpEntry.objects.filter(cycle=month.cycle).exists()
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED


def test_torpor_hold_ends_at_release(month: Month, make_character) -> None:  # type: ignore[no-untyped-def]
    captive = make_character("Gustav", player=None, clan="brujah")
    hold = torpor_hold_record(
        holder=month.lucien, captive=captive, cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE
    )
    _resolved(month)
    outcome = Outcome.objects.get(cycle=month.cycle, step="torpor_holds")
    assert "TOR-01" in outcome.explanation
    hold.refresh_from_db()
    assert hold.ended_at is None  # the preview changes nothing
    pipeline.cycle_release(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    hold.refresh_from_db()
    assert hold.ended_at == AFTER_DEADLINE


def test_one_summary_per_player_and_results_only_for_their_reader(month: Month) -> None:
    _resolved(month)
    pipeline.cycle_release(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    mail.outbox.clear()
    sent = pipeline.summaries_send(cycle_id=month.cycle.pk)
    assert sent == 2 and sorted(m.to[0] for m in mail.outbox) == [
        "player_alice@example.com",
        "player_bob@example.com",
    ]
    assert pipeline.summaries_send(cycle_id=month.cycle.pk) == 0
    alice, bob = (month.world.users[n] for n in ("player_alice", "player_bob"))
    mine = list(pipeline.results_for(user=bob))
    assert mine and all(o.player_id == bob.pk or month.marguerite.pk in o.readers for o in mine)
    assert not set(pipeline.results_for(user=alice)) & set(mine)
    assert not pipeline.results_for(user=month.world.users["outsider"]).exists()


def test_closing_early_locks_submissions_with_a_clear_message(month: Month) -> None:
    from tests.downtimes.conftest import DURING

    alice = month.world.users["player_alice"]
    assert pipeline.cycle_close_now(cycle=month.cycle, by=_st(month), now=DURING)
    submission = Submission.objects.get(cycle=month.cycle, character=month.lucien)
    with pytest.raises(ValidationError, match="closed this downtime"):
        submissions.submission_save(
            submission=submission,
            by=alice,
            notes="one more thing",
            version=submission.version,
            now=DURING,
        )
    with pytest.raises(PermissionDenied):
        pipeline.cycle_close_now(cycle=month.cycle, by=alice, now=DURING)


def test_a_hold_the_hourly_sweep_already_ended_is_still_in_the_preview(
    month: Month,
    make_character,  # type: ignore[no-untyped-def]
) -> None:
    from characters.services.sweepers import torpor_holds_sweep

    captive = make_character("Gustav", player=None, clan="brujah")
    torpor_hold_record(
        holder=month.lucien, captive=captive, cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE
    )
    cycle_close(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    assert torpor_holds_sweep(now=AFTER_DEADLINE) == 1  # beat's hourly sweep, at the close
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=_st(month), now=AFTER_DEADLINE)
    outcome = Outcome.objects.get(cycle=month.cycle, step="torpor_holds")
    assert "ended when the downtime closed" in outcome.explanation


def test_a_cycle_settled_on_paper_is_released_without_paying(month: Month) -> None:
    st = _st(month)
    assert not pipeline.cycle_settle_on_paper(cycle=month.cycle, by=st)  # still open
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    with pytest.raises(PermissionDenied):
        pipeline.cycle_settle_on_paper(cycle=month.cycle, by=month.world.users["player_alice"])
    assert pipeline.cycle_settle_on_paper(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    assert not pipeline.cycle_settle_on_paper(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RELEASED
    assert not XpEntry.objects.filter(cycle=month.cycle).exists()
    with pytest.raises(ValidationError, match="already released"):
        pipeline.cycle_resolve(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
