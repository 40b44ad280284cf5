"""The player's downtime services (DT-01/02, INF-03, DIS-09, DT-06) on PostgreSQL."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError

from characters.models import Character, InfluenceSpend, Notification, XpKind
from characters.services import ledger, purchases
from characters.services.influence import influence_left
from chronicle import services as chronicle_services
from downtimes.models import DeskItem, Submission, SubmissionStatus, Vote
from downtimes.services import submissions as services

from .conftest import AT_DEADLINE, DURING, JUST_BEFORE, NEW_YORK

pytestmark = [pytest.mark.django_db(transaction=False), pytest.mark.usefixtures("postgres")]


def _messages(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    return " ".join(exc.value.messages)


# --- DT-01: the deadline, 23:59 New York, on both sides ---------------------------------------


def test_deadline_is_2359_new_york(world: Any) -> None:
    local = world.game.cycle.deadline_at.astimezone(AT_DEADLINE.tzinfo)
    assert (local.date().isoformat(), local.hour, local.minute) == ("2024-03-19", 23, 59)


def test_one_minute_before_the_deadline_saves_and_submits(world: Any, lucien: Character) -> None:
    alice = world.users["player_alice"]
    with time_machine.travel(JUST_BEFORE, tick=False):
        sub = services.submission_for_edit(character=lucien, cycle=world.game.cycle, by=alice)
        sub = services.submission_save(submission=sub, by=alice, notes="Late", version=1)
        sub = services.submission_submit(submission=sub, by=alice)
    assert sub.status == SubmissionStatus.SUBMITTED


def test_at_23_59_everything_is_refused_and_nothing_written(world: Any, lucien: Character) -> None:
    alice = world.users["player_alice"]
    with time_machine.travel(DURING, tick=False):
        sub = services.submission_for_edit(character=lucien, cycle=world.game.cycle, by=alice)
    with time_machine.travel(AT_DEADLINE, tick=False):
        for call in (
            lambda: services.submission_save(submission=sub, by=alice, notes="x", version=1),
            lambda: services.submission_submit(submission=sub, by=alice),
            lambda: services.influence_action_add(
                submission=sub, by=alice, influence="business", points=1, action="other", key="k"
            ),
            lambda: services.power_add(
                submission=sub, by=alice, power="ritual", description="x", key="p"
            ),
            lambda: services.votes_save(submission=sub, by=alice, picks={"costume": "player_bob"}),
        ):
            with pytest.raises(ValidationError, match=r"The deadline .* has passed"):
                call()
    sub.refresh_from_db()
    assert (sub.notes, sub.status, sub.version) == ("", SubmissionStatus.DRAFT, 1)
    assert not DeskItem.objects.exists() and not Vote.objects.exists()


def test_no_new_draft_after_the_deadline(world: Any, lucien: Character) -> None:
    with (
        time_machine.travel(AT_DEADLINE, tick=False),
        pytest.raises(ValidationError, match=r"deadline \(Tue 19 Mar 2024, 23:59 EDT\) has passed"),
    ):
        services.submission_for_edit(
            character=lucien, cycle=world.game.cycle, by=world.users["player_alice"]
        )
    assert not Submission.objects.exists()


def test_only_the_player_writes_their_downtime(world: Any, lucien: Character, during: None) -> None:
    for persona in ("player_bob", "storyteller"):
        with pytest.raises(PermissionDenied):
            services.submission_for_edit(
                character=lucien, cycle=world.game.cycle, by=world.users[persona]
            )


# --- Autosave and submit -----------------------------------------------------------------------


def test_stale_version_is_refused_and_keeps_the_newer_text(world: Any, draft: Submission) -> None:
    alice = world.users["player_alice"]
    services.submission_save(submission=draft, by=alice, notes="From tab one", version=1)
    with pytest.raises(ValidationError) as exc:
        services.submission_save(submission=draft, by=alice, notes="From tab two", version=1)
    assert "another tab" in _messages(exc)
    draft.refresh_from_db()
    assert (draft.notes, draft.version) == ("From tab one", 2)


def test_double_submit_gives_one_submission_and_one_receipt(
    world: Any, draft: Submission, django_capture_on_commit_callbacks: Any
) -> None:
    alice = world.users["player_alice"]
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_submit(submission=draft, by=alice)
        services.submission_submit(submission=draft, by=alice)
    assert Submission.objects.filter(status=SubmissionStatus.SUBMITTED).count() == 1
    assert Notification.objects.filter(key__startswith="downtime-receipt").count() == 1
    assert len(mail.outbox) == 1 and "Lucien" in mail.outbox[0].subject


def test_resubmit_after_a_change_sends_a_new_receipt(world: Any, draft: Submission) -> None:
    alice = world.users["player_alice"]
    services.submission_submit(submission=draft, by=alice)
    with time_machine.travel(DURING.replace(hour=13), tick=False):
        services.submission_save(submission=draft, by=alice, game_report="It rained", version=1)
        services.submission_submit(submission=draft, by=alice)
    assert Notification.objects.filter(key__startswith="downtime-receipt").count() == 2


# --- Section 2: influence and loans (INF-03) ---------------------------------------------------


def test_influence_beyond_the_rating_is_refused(world: Any, draft: Submission) -> None:
    alice = world.users["player_alice"]
    services.influence_action_add(
        submission=draft, by=alice, influence="business", points=2, action="acquire", key="a"
    )
    with pytest.raises(ValidationError) as exc:
        services.influence_action_add(
            submission=draft, by=alice, influence="business", points=1, action="other", key="b"
        )
    assert "INF-03" in _messages(exc)
    assert DeskItem.objects.count() == 1


def test_same_key_twice_gives_one_action(world: Any, draft: Submission) -> None:
    alice = world.users["player_alice"]
    for _ in range(2):
        services.influence_action_add(
            submission=draft, by=alice, influence="business", points=1, action="other", key="a"
        )
    assert DeskItem.objects.count() == 1 and InfluenceSpend.objects.count() == 1


def test_withdraw_refunds(world: Any, draft: Submission) -> None:
    alice = world.users["player_alice"]
    item = services.influence_action_add(
        submission=draft, by=alice, influence="business", points=2, action="other", key="a"
    )
    services.influence_action_withdraw(item=item, by=alice)
    services.influence_action_withdraw(item=item, by=alice)
    assert influence_left(character=draft.character, cycle=draft.cycle)["business"] == 2


def test_borrowed_points_count_only_once_the_lender_confirms(
    world: Any, draft: Submission, bob_draft: Submission, marguerite: Character
) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    loan = services.loan_request(
        submission=draft, by=alice, lender_name="marguerite", influence="business", points=2
    )
    with pytest.raises(ValidationError, match="INF-03"):
        services.influence_action_add(
            submission=draft,
            by=alice,
            influence="business",
            points=4,
            action="other",
            lender=marguerite,
            key="a",
        )
    with pytest.raises(PermissionDenied):
        services.loan_confirm(loan=loan, by=alice)
    services.loan_confirm(loan=loan, by=bob)
    item = services.influence_action_add(
        submission=draft,
        by=alice,
        influence="business",
        points=4,
        action="other",
        lender=marguerite,
        key="a",
    )
    assert item.lender == marguerite
    assert influence_left(character=marguerite, cycle=draft.cycle)["business"] == 1


def test_a_lender_cannot_lend_more_than_they_have(
    world: Any, draft: Submission, bob_draft: Submission
) -> None:
    loan = services.loan_request(
        submission=draft,
        by=world.users["player_alice"],
        lender_name="Marguerite",
        influence="business",
        points=4,
    )
    with pytest.raises(ValidationError, match="INF-03"):
        services.loan_confirm(loan=loan, by=world.users["player_bob"])


def test_loan_from_an_unknown_name_is_refused(world: Any, draft: Submission) -> None:
    with pytest.raises(ValidationError, match="No active character has that exact name"):
        services.loan_request(
            submission=draft,
            by=world.users["player_alice"],
            lender_name="Nobody",
            influence="business",
            points=1,
        )


def test_search_goes_through_the_havens_service(
    world: Any, draft: Submission, marguerite: Character
) -> None:
    item = services.influence_action_add(
        submission=draft,
        by=world.users["player_alice"],
        influence="business",
        points=1,
        action="search",
        target_name="Marguerite",
        key="s",
    )
    assert item.haven_search is not None and item.spend is not None
    assert item.haven_search.target == marguerite


def test_build_needs_a_haven(world: Any, draft: Submission) -> None:
    with pytest.raises(ValidationError) as exc:
        services.influence_action_add(
            submission=draft,
            by=world.users["player_alice"],
            influence="business",
            points=1,
            action="build",
            key="b",
        )
    assert "target_structure" in exc.value.message_dict


# --- Section 4: special powers (DIS-09) --------------------------------------------------------


@pytest.mark.parametrize(
    ("power", "target", "ok"),
    [
        ("ritual", "", True),
        ("ritual", "Lucien", True),
        ("ritual", "Marguerite", False),
        ("other", "Marguerite", False),
        ("conditioning", "Marguerite", True),
        ("regnant_request", "Marguerite", True),
        ("torpor_hold", "Marguerite", True),
    ],
)
def test_special_powers_dis_09(
    world: Any, draft: Submission, marguerite: Character, power: str, target: str, ok: bool
) -> None:
    call = lambda: services.power_add(  # noqa: E731
        submission=draft,
        by=world.users["player_alice"],
        power=power,
        target_name=target,
        description="Three nights of it",
        key="p",
    )
    if ok:
        item = call()
        assert item.target_character == (marguerite if target == "Marguerite" else None)
    else:
        with pytest.raises(ValidationError) as exc:
            call()
        assert "DIS-09" in " ".join(exc.value.message_dict["target_name"])
        assert not DeskItem.objects.exists()


# --- Section 6: votes (DT-06) ------------------------------------------------------------------


def test_votes_saved_and_replaced(world: Any, draft: Submission, marguerite: Character) -> None:
    alice = world.users["player_alice"]
    services.votes_save(
        submission=draft, by=alice, picks={"feared": "marguerite", "costume": "player_bob"}
    )
    services.votes_save(submission=draft, by=alice, picks={"costume": ""})
    assert services.vote_choices(draft) == {"feared": "Marguerite"}


@pytest.mark.parametrize(
    ("category", "name"), [("liked", "Lucien"), ("roleplaying", "player_alice")]
)
def test_self_votes_refused(world: Any, draft: Submission, category: str, name: str) -> None:
    with pytest.raises(ValidationError) as exc:
        services.votes_save(
            submission=draft, by=world.users["player_alice"], picks={category: name}
        )
    assert "yourself" in exc.value.message_dict[category][0]
    assert not Vote.objects.exists()


def test_unknown_nominee_refused_and_nothing_written(
    world: Any, draft: Submission, marguerite: Character
) -> None:
    with pytest.raises(ValidationError) as exc:
        services.votes_save(
            submission=draft,
            by=world.users["player_alice"],
            picks={"feared": "Marguerite", "liked": "Nobody", "costume": "outsider"},
        )
    assert set(exc.value.message_dict) == {"liked", "costume"}
    assert not Vote.objects.exists()


# --- Reminders ---------------------------------------------------------------------------------


def test_reminders_48_hours_before_once_and_not_to_submitters(
    world: Any, draft: Submission, marguerite: Character
) -> None:
    services.submission_submit(submission=draft, by=world.users["player_alice"])
    assert services.reminders_send(now=DURING) == 0
    soon = AT_DEADLINE.replace(day=18)
    assert services.reminders_send(now=soon) == 1
    assert services.reminders_send(now=soon) == 0
    note = Notification.objects.get(key__startswith="downtime-reminder")
    assert note.character == marguerite


def test_reminder_task_runs_the_sweep(world: Any, marguerite: Character) -> None:
    from downtimes.tasks import send_downtime_reminders

    with time_machine.travel(AT_DEADLINE.replace(day=18), tick=False):
        assert send_downtime_reminders() == 1
        assert send_downtime_reminders() == 0


# --- Review fixes (issue 5) --------------------------------------------------------------------


def test_withdraw_bumps_the_version_so_an_open_desk_item_conflicts(
    world: Any, draft: Submission
) -> None:
    alice = world.users["player_alice"]
    item = services.influence_action_add(
        submission=draft, by=alice, influence="business", points=1, action="other", key="a"
    )
    seen = item.version  # what an ST's desk page holds
    later = DURING + dt.timedelta(minutes=5)
    services.item_withdraw(item=item, by=alice, now=later)
    item.refresh_from_db()
    assert item.version == seen + 1 and item.updated_at == later
    # Twice is once: no second bump.
    services.item_withdraw(item=item, by=alice, now=later + dt.timedelta(minutes=1))
    item.refresh_from_db()
    assert item.version == seen + 1


def test_item_keys_are_per_cycle(world: Any, draft: Submission, lucien: Character) -> None:
    alice = world.users["player_alice"]
    first = services.influence_action_add(
        submission=draft, by=alice, influence="business", points=1, action="other", key="k1"
    )
    power = services.power_add(
        submission=draft, by=alice, power="ritual", key="k1", description="Ward"
    )
    game2 = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 13))
    with time_machine.travel(dt.datetime(2024, 4, 15, 12, 0, tzinfo=NEW_YORK), tick=False):
        later = services.submission_for_edit(character=lucien, cycle=game2.cycle, by=alice)
        again = services.influence_action_add(
            submission=later, by=alice, influence="business", points=1, action="other", key="k1"
        )
        power_again = services.power_add(
            submission=later, by=alice, power="ritual", key="k1", description="Ward"
        )
        # Within the cycle the key still gives one item.
        same = services.influence_action_add(
            submission=later, by=alice, influence="business", points=1, action="other", key="k1"
        )
    assert again.pk != first.pk and again.cycle_id == game2.cycle.pk
    assert power_again.pk != power.pk and same.pk == again.pk
    assert again.spend is not None and again.spend.cycle_id == game2.cycle.pk
    assert InfluenceSpend.objects.count() == 2


@pytest.mark.parametrize(
    ("action", "project"),
    [("build", False), ("build", True), ("repair", True), ("attack_haven", True)],
)
def test_anothers_haven_is_unknown_whatever_its_projects(
    world: Any,
    draft: Submission,
    marguerite: Character,
    make_haven: Any,
    action: str,
    project: bool,
) -> None:
    # Found but not owned: build and repair answer like an unknown haven, before any project
    # lookup, so "no open project" never tells what the haven has. Not found: attack too.
    found_by = draft.character if action != "attack_haven" else None
    loft = make_haven(marguerite, project=project, found_by=found_by)
    with pytest.raises(ValidationError) as exc:
        services.influence_action_add(
            submission=draft,
            by=world.users["player_alice"],
            influence="business",
            points=1,
            action=action,
            target_structure=loft,
            key="b1",
        )
    assert exc.value.message_dict == {"target_structure": [services.NO_HAVEN]}
    assert not DeskItem.objects.exists() and not InfluenceSpend.objects.exists()


def test_building_on_ones_own_haven_pays_into_its_project(
    world: Any, draft: Submission, lucien: Character, make_haven: Any
) -> None:
    alice = world.users["player_alice"]
    bare = make_haven(lucien, name="Bare")
    with pytest.raises(ValidationError) as exc:
        services.influence_action_add(
            submission=draft,
            by=alice,
            influence="business",
            points=1,
            action="build",
            target_structure=bare,
            key="b0",
        )
    assert "HAV-02" in _messages(exc)  # one's own haven may say it has no open project
    loft = make_haven(lucien, project=True)
    item = services.influence_action_add(
        submission=draft,
        by=alice,
        influence="business",
        points=1,
        action="build",
        target_structure=loft,
        key="b1",
    )
    assert item.haven_project is not None and item.spend is not None


# --- XP purchases from the downtime, and the current downtime (second review) -----------------


def _xp(world: Any, player: str, amount: int) -> None:
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users[player].pk,
        amount=Decimal(amount),
        kind=XpKind.AWARD,
        reason="Game 1",
        key=f"seed:{player}",
    )


def test_a_purchase_decided_on_the_queue_shows_on_its_desk_item(
    world: Any, draft: Submission
) -> None:
    """XP-01: the sign-off happens on the purchase queue; the downtime's item follows it, so
    neither the player nor the desk sees a decided purchase as new."""
    _xp(world, "player_alice", 10)
    item = services.purchase_add(
        submission=draft,
        by=world.users["player_alice"],
        kind="discipline",
        discipline="auspex",
        levels=["1a"],
    )
    assert item.status == "new" and item.purchase is not None
    purchases.purchase_approve(purchase=item.purchase, by=world.users["storyteller"])
    item.refresh_from_db()
    assert item.status == "approved"
    again = services.purchase_add(
        submission=draft,
        by=world.users["player_alice"],
        kind="trait",
        target="mental",
        quantity=1,
    )
    purchases.purchase_withdraw(purchase=again.purchase, by=world.users["player_alice"])
    again.refresh_from_db()
    assert again.withdrawn_at is not None


def test_an_earlier_downtime_closes_once_the_next_game_is_played(
    world: Any, draft: Submission
) -> None:
    """A game before the previous deadline starts the next downtime: the earlier submission
    takes no more changes, so an item and its spend never sit in different cycles."""
    chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 3, 16))
    later = dt.datetime(2024, 3, 17, 12, 0, tzinfo=NEW_YORK)
    with (
        time_machine.travel(later, tick=False),
        pytest.raises(ValidationError, match="next downtime"),
    ):
        services.submission_save(
            submission=draft,
            by=world.users["player_alice"],
            notes="too late",
            game_report="",
            version=draft.version,
        )
