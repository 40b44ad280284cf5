"""The influence desk's services (issue 5) on PostgreSQL: optimistic versions, bulk approval,
release, at-game requests (INF-04), conflicts, the not-submitted list and its reminders."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import Any

import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.utils import timezone

from characters.models import Character, InfluenceSpend, XpPurchase
from characters.services.influence import influence_left
from chronicle import services as chronicle_services
from downtimes import selectors_desk
from downtimes.models import DeskItem, Submission
from downtimes.services import desk as services
from havens.models import Structure

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)
_keys = itertools.count(1)


def make_item(cycle: Any, character: Character, **fields: Any) -> DeskItem:
    """A desk item as the downtime form would have filed it (D1 owns that service)."""
    values: dict[str, Any] = {
        "kind": "influence",
        "influence": "business",
        "points": 1,
        "action": "investigate",
        "description": "Ask around.",
        "created_at": NOW,
        "updated_at": NOW,
        "key": f"test:{next(_keys)}",
    }
    values.update(fields)
    return DeskItem.objects.create(cycle=cycle, character=character, **values)


def make_structure(world: Any, name: str) -> Structure:
    return Structure.objects.create(
        chronicle=world.chronicle, kind="outer", name=name, location="Docks", created_at=NOW
    )


@pytest.fixture
def alice(make_character: Any) -> Character:
    return make_character("Lucien", player="player_alice", business=3)


@pytest.fixture
def bob(make_character: Any) -> Character:
    return make_character("Marguerite", player="player_bob", clan="ventrue")


# --- desk_item_update ------------------------------------------------------------------------


def test_update_changes_fields_and_bumps_version(world: Any, alice: Character) -> None:
    item = make_item(world.game.cycle, alice)
    st = world.users["storyteller"]
    updated = services.desk_item_update(
        item=item,
        by=st,
        version=1,
        status="in_progress",
        assignee=st,
        st_notes="Check the harbour.",
        result="You learn the ship sails at dawn.",
        now=NOW,
    )
    assert updated.version == 2
    item.refresh_from_db()
    assert (item.status, item.assignee, item.st_notes, item.result) == (
        "in_progress",
        st,
        "Check the harbour.",
        "You learn the ship sails at dawn.",
    )
    assert item.released_at is None


def test_two_storytellers_on_one_item_the_second_is_told(world: Any, alice: Character) -> None:
    item = make_item(world.game.cycle, alice)
    first, second = world.users["storyteller"], world.users["admin"]
    # Both opened the form at version 1.
    services.desk_item_update(item=item, by=first, version=1, st_notes="Mine", now=NOW)
    with pytest.raises(ValidationError) as caught:
        services.desk_item_update(item=item, by=second, version=1, status="rejected", now=NOW)
    assert caught.value.message_dict == {"version": [services.STALE_VERSION]}
    item.refresh_from_db()
    assert (item.status, item.st_notes, item.version) == ("new", "Mine", 2)
    # Told, the second ST re-applies from the current version: both changes stand.
    services.desk_item_update(item=item, by=second, version=2, status="rejected", now=NOW)
    item.refresh_from_db()
    assert (item.status, item.st_notes, item.version) == ("rejected", "Mine", 3)


def test_update_refuses_a_non_staff_assignee_and_writes_nothing(
    world: Any, alice: Character
) -> None:
    item = make_item(world.game.cycle, alice)
    for user in ("player_bob", "other_storyteller"):
        with pytest.raises(ValidationError) as caught:
            services.desk_item_update(
                item=item,
                by=world.users["storyteller"],
                version=1,
                assignee=world.users[user],
                st_notes="x",
            )
        assert "assignee" in caught.value.message_dict
    item.refresh_from_db()
    assert (item.assignee, item.st_notes, item.version) == (None, "", 1)


def test_update_refuses_an_unknown_status(world: Any, alice: Character) -> None:
    item = make_item(world.game.cycle, alice)
    with pytest.raises(ValidationError) as caught:
        services.desk_item_update(item=item, by=world.users["storyteller"], version=1, status="x")
    assert "status" in caught.value.message_dict


def test_update_without_a_change_keeps_the_version_and_unassign_clears(
    world: Any, alice: Character
) -> None:
    st = world.users["storyteller"]
    item = make_item(world.game.cycle, alice, assignee=st)
    same = services.desk_item_update(item=item, by=st, version=1, status="new", assignee=st)
    assert same.version == 1
    cleared = services.desk_item_update(item=item, by=st, version=1, unassign=True)
    assert (cleared.assignee, cleared.version) == (None, 2)


# --- desk_bulk_update / desk_release ---------------------------------------------------------


def test_bulk_approve_moves_only_undecided_items_of_the_cycle(
    world: Any, alice: Character, bob: Character, make_character: Any
) -> None:
    cycle = world.game.cycle
    new = make_item(cycle, alice)
    asking = make_item(cycle, bob, status="needs_info")
    rejected = make_item(cycle, bob, status="rejected")
    resolved = make_item(cycle, alice, status="resolved")
    stranger = make_character("Klaus", player=None, chronicle=world.other)
    elsewhere = make_item(world.other_game.cycle, stranger)
    done = services.desk_bulk_update(
        cycle=cycle,
        by=world.users["storyteller"],
        status="approved",
        ids=[new.pk, asking.pk, rejected.pk, resolved.pk, elsewhere.pk],
        now=NOW,
    )
    assert done == {"updated": 2, "skipped": 2}
    statuses = dict(DeskItem.objects.values_list("pk", "status"))
    assert statuses == {
        new.pk: "approved",
        asking.pk: "approved",
        rejected.pk: "rejected",
        resolved.pk: "resolved",
        elsewhere.pk: "new",
    }
    versions = dict(DeskItem.objects.values_list("pk", "version"))
    assert (versions[new.pk], versions[rejected.pk], versions[elsewhere.pk]) == (2, 1, 1)
    # A form opened before the bulk approval is now stale.
    with pytest.raises(ValidationError):
        services.desk_item_update(item=new, by=world.users["admin"], version=1, st_notes="x")
    # Twice: nothing more.
    again = services.desk_bulk_update(
        cycle=cycle,
        by=world.users["storyteller"],
        status="approved",
        items=DeskItem.objects.filter(cycle=cycle),
    )
    assert again == {"updated": 0, "skipped": 4}


def test_release_shows_resolved_results_once(world: Any, alice: Character) -> None:
    cycle = world.game.cycle
    resolved = make_item(cycle, alice, status="resolved", result="The deal closes.")
    open_item = make_item(cycle, alice, status="in_progress", result="Draft answer")
    assert services.desk_release(cycle=cycle, by=world.users["storyteller"], now=NOW) == 1
    assert services.desk_release(cycle=cycle, by=None) == 0
    resolved.refresh_from_db()
    open_item.refresh_from_db()
    assert resolved.released_at == NOW
    assert open_item.released_at is None


# --- at-game requests (INF-04) ---------------------------------------------------------------


def test_at_game_request_is_time_stamped_and_spends_as_at_the_game(
    world: Any, alice: Character
) -> None:
    cycle = world.game.cycle
    st = world.users["storyteller"]
    asked = dt.datetime(2024, 3, 9, 23, 40, tzinfo=dt.UTC)
    kwargs: dict[str, Any] = {
        "cycle": cycle,
        "character": alice,
        "by": st,
        "influence": "business",
        "points": 2,
        "action": "leave_city",
        "description": "Drives to Chicago for the night.",
        "requested_at": asked,
        "key": "k1",
    }
    item, created = services.at_game_request_record(**kwargs)
    again, created_again = services.at_game_request_record(**kwargs)
    assert (created, created_again, again.pk) == (True, False, item.pk)
    assert (item.kind, item.recorded_by, item.requested_at) == ("at_game", st, asked)
    spend = InfluenceSpend.objects.get(character=alice)
    assert (spend.points, spend.moment, item.spend_id) == (2, "game", spend.pk)
    assert influence_left(character=alice, cycle=cycle)["business"] == 1


def test_at_game_request_beyond_the_rating_writes_nothing(world: Any, alice: Character) -> None:
    with pytest.raises(ValidationError) as caught:
        services.at_game_request_record(
            cycle=world.game.cycle,
            character=alice,
            by=world.users["storyteller"],
            influence="business",
            points=4,
            action="leave_city",
            description="Away",
            requested_at=NOW,
            key="k2",
        )
    assert "INF-03" in " ".join(caught.value.message_dict["points"])
    assert not DeskItem.objects.exists()
    assert not InfluenceSpend.objects.exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"description": "  "}, "description"),
        ({"action": "fly"}, "action"),
        ({"points": 1, "influence": ""}, "influence"),
    ],
)
def test_at_game_request_refusals_name_the_field(
    world: Any, alice: Character, change: dict[str, Any], field: str
) -> None:
    kwargs: dict[str, Any] = {
        "cycle": world.game.cycle,
        "character": alice,
        "by": world.users["storyteller"],
        "action": "leave_city",
        "description": "Away",
        "requested_at": NOW,
        "key": "k3",
    }
    with pytest.raises(ValidationError) as caught:
        services.at_game_request_record(**(kwargs | change))
    assert field in caught.value.message_dict
    assert not DeskItem.objects.exists()


def test_at_game_request_for_another_chronicles_character_is_refused(
    world: Any, make_character: Any
) -> None:
    stranger = make_character("Klaus", player=None, chronicle=world.other)
    with pytest.raises(ValidationError):
        services.at_game_request_record(
            cycle=world.game.cycle,
            character=stranger,
            by=world.users["storyteller"],
            action="leave_city",
            description="Away",
            requested_at=NOW,
            key="k4",
        )


def test_at_game_request_in_a_closed_cycle_spends_nothing(world: Any, alice: Character) -> None:
    cycle = world.game.cycle
    chronicle_services.cycle_close(cycle=cycle, by=world.users["storyteller"])
    cycle.refresh_from_db()
    with pytest.raises(ValidationError):
        services.at_game_request_record(
            cycle=cycle,
            character=alice,
            by=world.users["storyteller"],
            influence="business",
            points=1,
            action="leave_city",
            description="Away",
            requested_at=NOW,
            key="k5",
        )
    assert not DeskItem.objects.exists()
    # Without points the request is still recorded (a signed, time-stamped note).
    item, _ = services.at_game_request_record(
        cycle=cycle,
        character=alice,
        by=world.users["storyteller"],
        action="leave_city",
        description="Away",
        requested_at=NOW,
        key="k6",
    )
    assert item.spend is None


# --- conflicts ----------------------------------------------------------------------------------


def test_conflicts_group_same_structure_character_and_influence(
    world: Any,
    alice: Character,
    bob: Character,
    make_character: Any,
    django_assert_num_queries: Any,
) -> None:
    cycle = world.game.cycle
    carl = make_character("Carl", player=None)
    haven = make_structure(world, "Old mill")
    lone = make_structure(world, "Chapel")
    a1 = make_item(cycle, alice, action="attack_haven", target_structure=haven)
    a2 = make_item(cycle, bob, action="repair", target_structure=haven, influence="government")
    make_item(cycle, bob, action="repair", target_structure=lone, influence="government")
    s1 = make_item(cycle, alice, action="search", target_character=carl)
    s2 = make_item(cycle, bob, action="investigate", target_character=carl, influence="occult")
    i1 = make_item(
        cycle, alice, action="attack_influence", target_character=bob, influence="business"
    )
    # Bob's own Business use this cycle meets the attack on it.
    own = make_item(cycle, bob, action="acquire", influence="business")
    make_item(cycle, bob, action="herd", influence="herd")
    # A withdrawn item and another cycle's item never conflict.
    make_item(
        cycle, bob, action="repair", target_structure=lone, withdrawn_at=NOW, influence="business"
    )
    make_item(
        world.other_game.cycle,
        make_character("Klaus", player=None, chronicle=world.other),
        action="repair",
        target_structure=haven,
    )
    # One query, grouped by the database, with the names the labels need.
    with django_assert_num_queries(1):
        groups = selectors_desk.desk_conflicts(cycle=cycle)
    found = {(g.kind, g.label): g.item_ids for g in groups}
    assert found == {
        ("character", "Character Carl"): [s1.pk, s2.pk],
        ("influence", "Marguerite's Business influence"): [i1.pk, own.pk],
        ("structure", "Structure Old mill"): [a1.pk, a2.pk],
    }


def test_conflicts_need_two_items_and_an_attack_for_an_influence(
    world: Any, alice: Character, bob: Character
) -> None:
    cycle = world.game.cycle
    # Alice's own Business uses, however many, do not clash with each other.
    make_item(cycle, alice, action="acquire", influence="business")
    make_item(cycle, alice, action="herd", influence="business")
    # Nor does an attack on one's own influence with nothing else on it, nor Bob's own
    # Business use meet an attack on Alice's Business.
    make_item(cycle, bob, action="attack_influence", target_character=bob, influence="occult")
    make_item(cycle, bob, action="acquire", influence="business")
    assert selectors_desk.desk_conflicts(cycle=cycle) == []
    attack = make_item(
        cycle, bob, action="attack_influence", target_character=alice, influence="business"
    )
    groups = selectors_desk.desk_conflicts(cycle=cycle)
    alice_business = list(
        DeskItem.objects.filter(character=alice, influence="business").values_list("pk", flat=True)
    )
    assert [(g.kind, g.label, g.item_ids) for g in groups] == [
        ("influence", "Lucien's Business influence", sorted([*alice_business, attack.pk]))
    ]


@pytest.mark.parametrize("n", [20, 600])
def test_conflicts_cost_one_query_whatever_the_number_of_items(
    world: Any, alice: Character, n: int, django_assert_num_queries: Any
) -> None:
    cycle = world.game.cycle
    havens = [make_structure(world, f"Haven {k}") for k in range(10)]
    lone = make_structure(world, "Lone")
    DeskItem.objects.bulk_create(
        DeskItem(
            cycle=cycle,
            character=alice,
            kind="influence",
            influence="",
            action="repair",
            target_structure=havens[i % 10],
            description="",
            created_at=NOW,
            updated_at=NOW,
            key=f"bulk:{i}",
        )
        for i in range(n)
    )
    make_item(cycle, alice, action="repair", influence="", target_structure=lone)
    ids = list(DeskItem.objects.filter(target_structure__in=havens).order_by("pk"))
    with django_assert_num_queries(1):
        groups = selectors_desk.desk_conflicts(cycle=cycle)
    expected = {
        f"Structure Haven {k}": [item.pk for item in ids if item.target_structure_id == haven.pk]
        for k, haven in enumerate(havens)
    }
    assert {g.label: g.item_ids for g in groups} == expected
    assert all(len(pks) == n // 10 for pks in expected.values())


def test_neighbours_follow_the_desk_order_within_the_filter(
    world: Any, alice: Character, bob: Character
) -> None:
    cycle = world.game.cycle
    later = NOW + dt.timedelta(hours=1)
    # Created out of id order: the desk reads by creation time, then id.
    c = make_item(cycle, alice, created_at=later)
    a = make_item(cycle, alice)
    b = make_item(cycle, bob)
    d = make_item(cycle, alice, created_at=later)
    everything = DeskItem.objects.filter(cycle=cycle)
    assert selectors_desk.neighbours(everything, a) == (None, b.pk)
    assert selectors_desk.neighbours(everything, b) == (a.pk, c.pk)
    assert selectors_desk.neighbours(everything, d) == (c.pk, None)
    # Within a filter that leaves b out, and for an item the filter leaves out itself.
    lucien = everything.filter(character=alice)
    assert selectors_desk.neighbours(lucien, a) == (None, c.pk)
    assert selectors_desk.neighbours(lucien, b) == (a.pk, c.pk)


# --- not submitted and reminders -----------------------------------------------------------------


def test_not_submitted_lists_active_pcs_without_a_submitted_downtime(
    world: Any, alice: Character, bob: Character, make_character: Any
) -> None:
    cycle = world.game.cycle
    make_character("Npc", player=None)
    make_character("Klaus", player=None, chronicle=world.other)
    now = timezone.now()
    Submission.objects.create(
        cycle=cycle,
        character=bob,
        player=world.users["player_bob"],
        status="submitted",
        created_at=now,
        updated_at=now,
        submitted_at=now,
    )
    assert list(services.not_submitted(cycle=cycle)) == [alice]
    Submission.objects.filter(character=bob).update(status="draft")
    assert list(services.not_submitted(cycle=cycle)) == [alice, bob]


def test_reminder_mail_sends_once_a_day_and_skips_who_submitted(
    world: Any,
    alice: Character,
    bob: Character,
    make_character: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    cycle = world.game.cycle
    stranger = make_character("Klaus", player="other_storyteller", chronicle=world.other)
    now = timezone.now()
    Submission.objects.create(
        cycle=cycle,
        character=bob,
        player=world.users["player_bob"],
        status="submitted",
        created_at=now,
        updated_at=now,
        submitted_at=now,
    )
    st = world.users["storyteller"]
    with django_capture_on_commit_callbacks(execute=True):
        sent = services.reminder_mail(
            cycle=cycle, characters=[alice, bob, stranger], by=st, now=NOW
        )
        again = services.reminder_mail(cycle=cycle, characters=[alice.pk], by=st, now=NOW)
    assert (sent, again) == (1, 0)
    assert [m.to for m in mail.outbox] == [["player_alice@example.com"]]
    # The deadline in the chronicle's zone, named; plain words for a player, no rule ID.
    assert "Tue 19 Mar 2024, 23:59 EDT" in mail.outbox[0].body
    assert "DT-01" not in mail.outbox[0].body
    with django_capture_on_commit_callbacks(execute=True):
        tomorrow = services.reminder_mail(
            cycle=cycle, characters=[alice], by=st, now=NOW + dt.timedelta(days=1)
        )
    assert tomorrow == 1


# --- Review fixes: withdrawn items, XP purchases, results edited after release ------------------


def make_purchase_item(world: Any, character: Character) -> DeskItem:
    """The desk row of an XP purchase, as the downtime form files it (with its XpPurchase)."""
    purchase = XpPurchase.objects.create(
        character=character,
        kind="willpower",
        cycle=world.game.cycle,
        cost=Decimal("3"),
        requested_by=world.users["player_alice"],
        requested_at=NOW,
    )
    return make_item(
        world.game.cycle,
        character,
        kind="purchase",
        action="",
        influence="",
        points=0,
        purchase=purchase,
        description="Willpower",
    )


@pytest.mark.parametrize("status", ["approved", "rejected", "in_progress", "resolved"])
def test_a_withdrawn_item_keeps_its_status(world: Any, alice: Character, status: str) -> None:
    item = make_item(world.game.cycle, alice, withdrawn_at=NOW)
    st = world.users["storyteller"]
    with pytest.raises(ValidationError) as refused:
        services.desk_item_update(item=item, by=st, version=1, status=status, now=NOW)
    assert refused.value.message_dict == {"status": [services.WITHDRAWN]}
    item.refresh_from_db()
    assert (item.status, item.version) == ("new", 1)
    # Notes still work: the STs may record why it was withdrawn.
    noted = services.desk_item_update(item=item, by=st, version=1, st_notes="Withdrawn.")
    assert (noted.status, noted.st_notes, noted.version) == ("new", "Withdrawn.", 2)


@pytest.mark.parametrize("status", ["approved", "rejected"])
def test_an_xp_purchase_is_decided_on_the_purchase_queue(
    world: Any, alice: Character, status: str
) -> None:
    item = make_purchase_item(world, alice)
    st = world.users["storyteller"]
    with pytest.raises(ValidationError) as refused:
        services.desk_item_update(item=item, by=st, version=1, status=status, now=NOW)
    assert refused.value.message_dict == {
        "status": ["Sign off XP purchases on the purchase queue (XP-01)."]
    }
    item.refresh_from_db()
    assert (item.status, item.version) == ("new", 1)
    assert XpPurchase.objects.get().status == "requested"
    # The desk still tracks it (in progress, notes).
    moved = services.desk_item_update(item=item, by=st, version=1, status="in_progress")
    assert moved.status == "in_progress"


def test_bulk_approve_skips_withdrawn_items_and_xp_purchases(world: Any, alice: Character) -> None:
    cycle = world.game.cycle
    live = make_item(cycle, alice)
    withdrawn = make_item(cycle, alice, withdrawn_at=NOW)
    purchase = make_purchase_item(world, alice)
    done = services.desk_bulk_update(
        cycle=cycle,
        by=world.users["storyteller"],
        status="approved",
        items=DeskItem.objects.filter(cycle=cycle),
        now=NOW,
    )
    assert done == {"updated": 1, "skipped": 2}
    statuses = dict(DeskItem.objects.values_list("pk", "status"))
    assert statuses == {live.pk: "approved", withdrawn.pk: "new", purchase.pk: "new"}
    assert DeskItem.objects.get(pk=withdrawn.pk).version == 1


def test_release_leaves_withdrawn_items_out(world: Any, alice: Character) -> None:
    cycle = world.game.cycle
    kept = make_item(cycle, alice, status="resolved", result="You learn X.")
    gone = make_item(cycle, alice, status="resolved", result="Never read.", withdrawn_at=NOW)
    assert services.desk_release(cycle=cycle, by=world.users["storyteller"], now=NOW) == 1
    released = dict(DeskItem.objects.values_list("pk", "released_at"))
    assert released == {kept.pk: NOW, gone.pk: None}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"result": "DRAFT: maybe she is staked"}, id="result"),
        pytest.param({"status": "in_progress"}, id="status"),
    ],
)
def test_a_released_result_changed_waits_for_the_next_release(
    world: Any, alice: Character, change: dict[str, str]
) -> None:
    cycle = world.game.cycle
    st = world.users["storyteller"]
    item = make_item(cycle, alice, status="resolved", result="You learn X.")
    services.desk_release(cycle=cycle, by=st, now=NOW)
    item.refresh_from_db()
    edited = services.desk_item_update(item=item, by=st, version=item.version, **change)
    assert edited.released_at is None
    item.refresh_from_db()
    assert item.released_at is None
    # Notes and assignment are the STs' own: the release stands.
    released = make_item(cycle, alice, status="resolved", result="Y.", released_at=NOW)
    kept = services.desk_item_update(
        item=released, by=st, version=1, st_notes="Follow up next cycle.", assignee=st
    )
    assert kept.released_at == NOW
    if change.get("status") != "in_progress":
        later = NOW + dt.timedelta(days=1)
        assert services.desk_release(cycle=cycle, by=st, now=later) == 1
        item.refresh_from_db()
        assert (item.released_at, item.result) == (later, change["result"])
