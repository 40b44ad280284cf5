"""Ownership changes asked for now and applied in downtime (HAV-03, HAV-05, HAV-06, HAV-07),
and the storytellers' rulings: every refusal names its rule and writes nothing."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from chronicle.models import CycleStatus
from havens.models import (
    ChangeKind,
    ChangeStatus,
    CryptVote,
    DestroyedBy,
    Ownership,
    OwnershipChange,
    Structure,
    StructureStatus,
    TheftControl,
)
from havens.services import ownership as services

pytestmark = [pytest.mark.django_db]
NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)


def _counts() -> tuple[int, ...]:
    return (
        OwnershipChange.objects.count(),
        Ownership.objects.count(),
        CryptVote.objects.count(),
        TheftControl.objects.count(),
    )


@pytest.fixture
def cast(world: Any, make_character: Any) -> dict[str, Any]:
    alice = make_character("Lucien", player="player_alice")
    bob = make_character("Bastien", player="player_bob", clan="brujah")
    carl = make_character("Carl", player=None, clan="ventrue", status="npc")
    outer = Structure.objects.create(
        chronicle=world.chronicle,
        kind="outer",
        name="Manor",
        location="Hill",
        status=StructureStatus.STANDING,
        created_at=NOW,
    )
    crypt = Structure.objects.create(
        chronicle=world.chronicle,
        kind="crypt",
        outer=outer,
        name="Cellar",
        location="Hill, below",
        status=StructureStatus.STANDING,
        created_at=NOW,
    )
    Ownership.objects.create(structure=outer, character=alice, how="built", started_at=NOW)
    Ownership.objects.create(structure=crypt, character=bob, how="built", started_at=NOW)
    return {
        "alice": alice,
        "bob": bob,
        "carl": carl,
        "outer": outer,
        "crypt": crypt,
        "a": world.users["player_alice"],
        "b": world.users["player_bob"],
        "st": world.users["storyteller"],
        "cycle": world.game.cycle,
        "world": world,
    }


def test_transfer_by_name_links_the_one_active_character(cast: dict[str, Any]) -> None:
    change = services.structure_transfer_request(
        structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="bastien"
    )
    assert (change.kind, change.status, change.cycle) == (
        ChangeKind.TRANSFER,
        ChangeStatus.PENDING,
        cast["cycle"],
    )
    assert change.to_character == cast["bob"]
    # Same request again (a double click): the same change.
    again = services.structure_transfer_request(
        structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="bastien"
    )
    assert again.pk == change.pk


def test_transfer_to_an_unknown_name_looks_the_same_and_waits_for_an_st(
    cast: dict[str, Any],
) -> None:
    change = services.structure_transfer_request(
        structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Nobody"
    )
    assert change.to_character is None and change.status == ChangeStatus.PENDING
    assert change.to_name == "Nobody" and change.to_character is None


def test_transfer_refusals(cast: dict[str, Any]) -> None:
    before = _counts()
    with pytest.raises(ValidationError, match="HAV-05"):
        services.structure_transfer_request(
            structure=cast["crypt"], from_character=cast["alice"], by=cast["a"], to_name="Carl"
        )
    with pytest.raises(ValidationError, match="your own characters"):
        services.structure_transfer_request(
            structure=cast["outer"], from_character=cast["alice"], by=cast["b"], to_name="Carl"
        )
    with pytest.raises(ValidationError, match="storytellers"):
        services.structure_transfer_request(
            structure=cast["outer"],
            from_character=cast["alice"],
            by=cast["a"],
            to_character=cast["bob"],
        )
    with pytest.raises(ValidationError, match="recipient"):
        services.structure_transfer_request(
            structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name=" "
        )
    cycle = cast["cycle"]
    cycle.status, cycle.closed_at = CycleStatus.CLOSED, timezone.now()
    cycle.save()
    with pytest.raises(ValidationError, match="HAV-05"):
        services.structure_transfer_request(
            structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Carl"
        )
    assert _counts() == before


def test_a_second_different_transfer_must_cancel_the_first(cast: dict[str, Any]) -> None:
    first = services.structure_transfer_request(
        structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Bastien"
    )
    with pytest.raises(ValidationError, match="cancel it first"):
        services.structure_transfer_request(
            structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Carl"
        )
    services.change_cancel(change=first, by=cast["a"])
    second = services.structure_transfer_request(
        structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Carl"
    )
    assert second.pk != first.pk


def test_a_new_will_replaces_the_old_one(cast: dict[str, Any]) -> None:
    first = services.structure_will_set(
        structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Bastien"
    )
    second = services.structure_will_set(
        structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Carl"
    )
    first.refresh_from_db()
    assert first.status == ChangeStatus.CANCELLED
    assert second.status == ChangeStatus.PENDING and second.kind == ChangeKind.WILL
    assert second.to_character is None  # Carl is an NPC, not an active character


def test_forsake_request_is_once(cast: dict[str, Any]) -> None:
    one = services.structure_forsake_request(
        structure=cast["outer"], character=cast["alice"], by=cast["a"]
    )
    two = services.structure_forsake_request(
        structure=cast["outer"], character=cast["alice"], by=cast["a"]
    )
    assert one.pk == two.pk and one.kind == ChangeKind.FORSAKE
    with pytest.raises(ValidationError, match="HAV-06"):
        services.structure_forsake_request(
            structure=cast["outer"], character=cast["bob"], by=cast["b"]
        )


def test_exclusive_owner_of_the_outer_haven_destroys_a_crypt(cast: dict[str, Any]) -> None:
    services.crypt_destroy_vote(crypt=cast["crypt"], voter=cast["alice"], by=cast["a"])
    services.crypt_destroy_vote(crypt=cast["crypt"], voter=cast["alice"], by=cast["a"])
    changes = OwnershipChange.objects.filter(structure=cast["crypt"])
    assert [(c.kind, c.status) for c in changes] == [
        (ChangeKind.DESTROY_CRYPT, ChangeStatus.PENDING)
    ]
    assert CryptVote.objects.count() == 1


def test_partial_owners_need_a_simple_majority(cast: dict[str, Any], make_character: Any) -> None:
    other = make_character("Other", player=None, status="npc")
    third = make_character("Third", player=None, status="npc")
    for owner in (other, third):
        Ownership.objects.create(
            structure=cast["outer"], character=owner, how="joined", started_at=NOW
        )
    st = cast["st"]
    services.crypt_destroy_vote(crypt=cast["crypt"], voter=cast["alice"], by=cast["a"])
    assert not OwnershipChange.objects.exists()  # 1 of 3
    services.crypt_destroy_vote(crypt=cast["crypt"], voter=other, by=st)
    assert OwnershipChange.objects.get().kind == ChangeKind.DESTROY_CRYPT  # 2 of 3


def test_crypt_vote_refusals(cast: dict[str, Any]) -> None:
    before = _counts()
    with pytest.raises(ValidationError, match="HAV-03"):
        services.crypt_destroy_vote(crypt=cast["crypt"], voter=cast["bob"], by=cast["b"])
    with pytest.raises(ValidationError, match="HAV-03"):
        services.crypt_destroy_vote(crypt=cast["outer"], voter=cast["alice"], by=cast["a"])
    assert _counts() == before


def test_cancel_only_ones_own_pending_change(cast: dict[str, Any]) -> None:
    change = services.structure_forsake_request(
        structure=cast["outer"], character=cast["alice"], by=cast["a"]
    )
    with pytest.raises(ValidationError, match="storytellers"):
        services.change_cancel(change=change, by=cast["b"])
    assert services.change_cancel(change=change, by=cast["a"]).status == ChangeStatus.CANCELLED
    assert services.change_cancel(change=change, by=cast["a"]).status == ChangeStatus.CANCELLED
    OwnershipChange.objects.filter(pk=change.pk).update(status=ChangeStatus.APPLIED)
    with pytest.raises(ValidationError, match="still waiting"):
        services.change_cancel(change=change, by=cast["st"])


def test_theft_control_is_staff_only_and_once_per_game(cast: dict[str, Any]) -> None:
    game = cast["world"].game
    before = _counts()
    with pytest.raises(ValidationError, match="storytellers"):
        services.theft_control_record(
            structure=cast["outer"], game=game, thieves=[cast["bob"]], by=cast["a"]
        )
    with pytest.raises(ValidationError, match="HAV-07"):
        services.theft_control_record(structure=cast["outer"], game=game, thieves=[], by=cast["st"])
    with pytest.raises(ValidationError, match="game of this chronicle"):
        services.theft_control_record(
            structure=cast["outer"],
            game=cast["world"].other_game,
            thieves=[cast["bob"]],
            by=cast["st"],
        )
    assert _counts() == before
    one = services.theft_control_record(
        structure=cast["outer"], game=game, thieves=[cast["bob"]], by=cast["st"]
    )
    two = services.theft_control_record(
        structure=cast["outer"], game=game, thieves=[cast["bob"], cast["carl"]], by=cast["st"]
    )
    assert one.pk == two.pk and set(two.thieves.all()) == {cast["bob"], cast["carl"]}


def test_storyteller_destroys_a_structure_and_its_crypts_now(cast: dict[str, Any]) -> None:
    pending = services.structure_forsake_request(
        structure=cast["crypt"], character=cast["bob"], by=cast["b"]
    )
    with pytest.raises(ValidationError, match="storytellers"):
        services.structure_destroy(structure=cast["outer"], by=cast["a"], note="no")
    with pytest.raises(ValidationError, match="why"):
        services.structure_destroy(structure=cast["outer"], by=cast["st"], note=" ")
    services.structure_destroy(structure=cast["outer"], by=cast["st"], note="Burnt down")
    for structure in (cast["outer"], cast["crypt"]):
        structure.refresh_from_db()
        assert structure.status == StructureStatus.DESTROYED
        assert structure.destroyed_by == DestroyedBy.STORYTELLER
    assert not Ownership.objects.filter(ended_at__isnull=True).exists()
    pending.refresh_from_db()
    assert pending.status == ChangeStatus.VOID
    with pytest.raises(ValidationError, match="destroyed"):
        services.structure_forsake_request(
            structure=cast["crypt"], character=cast["bob"], by=cast["b"]
        )


def test_storyteller_sets_the_owners(cast: dict[str, Any]) -> None:
    services.structure_owner_set(
        structure=cast["outer"], characters=[cast["bob"], cast["carl"]], by=cast["st"], note="x"
    )
    owners = set(
        Ownership.objects.filter(structure=cast["outer"], ended_at__isnull=True).values_list(
            "character__name", flat=True
        )
    )
    assert owners == {"Bastien", "Carl"}
    with pytest.raises(ValidationError, match="HAV-01"):
        services.structure_owner_set(
            structure=cast["crypt"], characters=[cast["bob"], cast["carl"]], by=cast["st"], note=""
        )


# --- Review fixes: HAV-04 towards the crypt's owner, HAV-01 one owner per crypt --------------


def test_crypt_destruction_names_neither_voters_nor_the_count(
    cast: dict[str, Any], make_character: Any
) -> None:
    """HAV-04: the change lives on the crypt, whose owner reads it; it must not tell who owns
    the outer haven nor how many do. The storytellers read both in its outcome."""
    other = make_character("Hidden Partner", player=None, status="npc")
    Ownership.objects.create(structure=cast["outer"], character=other, how="joined", started_at=NOW)
    services.crypt_destroy_vote(crypt=cast["crypt"], voter=cast["alice"], by=cast["a"])
    services.crypt_destroy_vote(crypt=cast["crypt"], voter=other, by=cast["st"])
    change = OwnershipChange.objects.get(structure=cast["crypt"])
    assert change.from_character is None
    assert change.note == services.CRYPT_DESTRUCTION
    assert change.outcome == (
        "2 of 2 owners of the outer haven in favour: Hidden Partner, Lucien (HAV-03)."
    )


def test_a_crypt_is_controlled_by_one_thief(cast: dict[str, Any]) -> None:
    """HAV-01: thieves who keep a crypt own it, and a crypt has exactly one owner."""
    game = cast["world"].game
    before = _counts()
    with pytest.raises(ValidationError) as refused:
        services.theft_control_record(
            structure=cast["crypt"], game=game, thieves=[cast["alice"], cast["carl"]], by=cast["st"]
        )
    assert refused.value.message_dict["thieves"] == [
        "A crypt has exactly one owner (HAV-01): name one thief."
    ]
    assert _counts() == before
    control = services.theft_control_record(
        structure=cast["crypt"], game=game, thieves=[cast["alice"], cast["alice"]], by=cast["st"]
    )
    assert list(control.thieves.all()) == [cast["alice"]]


def test_storyteller_gives_a_crypt_one_owner(cast: dict[str, Any]) -> None:
    before = _counts()
    for characters in ([], [cast["alice"], cast["carl"]]):
        with pytest.raises(ValidationError, match="HAV-01"):
            services.structure_owner_set(
                structure=cast["crypt"], characters=characters, by=cast["st"], note="x"
            )
    assert _counts() == before
    services.structure_owner_set(
        structure=cast["crypt"], characters=[cast["carl"]], by=cast["st"], note="ruling"
    )
    assert list(
        Ownership.objects.filter(structure=cast["crypt"], ended_at__isnull=True).values_list(
            "character__name", flat=True
        )
    ) == ["Carl"]


def test_ownership_refusals_name_their_rule(cast: dict[str, Any]) -> None:
    from characters.services.common import rule_ids

    refusals = []
    for call in (
        lambda: services.structure_transfer_request(
            structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name=" "
        ),
        lambda: services.structure_transfer_request(
            structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Lucien"
        ),
        lambda: services.structure_will_set(
            structure=cast["outer"], from_character=cast["alice"], by=cast["a"], to_name="Lucien"
        ),
        lambda: services.structure_transfer_request(
            structure=cast["outer"], from_character=cast["alice"], by=cast["b"], to_name="X"
        ),
        lambda: services.structure_destroy(structure=cast["outer"], by=cast["st"], note=" "),
        lambda: services.theft_control_record(
            structure=cast["outer"],
            game=cast["world"].other_game,
            thieves=[cast["bob"]],
            by=cast["st"],
        ),
    ):
        with pytest.raises(ValidationError) as refused:
            call()
        refusals.extend(refused.value.messages)
    assert len(refusals) == 6
    assert all(rule_ids(m) for m in refusals), refusals
