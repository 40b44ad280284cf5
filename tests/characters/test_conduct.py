"""GEN-02 cheating offenses and GEN-06 respend grants."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from characters.models import CheatingOffense, RespendGrant, XpKind
from characters.services import conduct, ledger

pytestmark = pytest.mark.django_db


def test_second_offense_debits_half_of_the_earned_xp(world: Any) -> None:
    """GEN-02 TV: earned 30, 2nd offense → −15 (spent XP does not shrink what was earned)."""
    alice, st = world.users["player_alice"], world.users["storyteller"]
    for key, amount in (("a1", 20), ("a2", 10)):
        ledger.xp_entry_add(
            chronicle=world.chronicle,
            player_id=alice.pk,
            amount=Decimal(amount),
            kind=XpKind.AWARD,
            reason="game",
            key=key,
        )
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=alice.pk,
        amount=Decimal(-20),
        kind=XpKind.PURCHASE,
        reason="Potence 1a",
        key="p1",
    )
    first = conduct.cheating_offense_record(
        chronicle=world.chronicle, player=alice, note="extra trait card", by=st
    )
    assert (first.number, first.action, first.xp_change) == (1, "warning", 0)
    assert ledger.xp_balance(chronicle=world.chronicle, player=alice) == 10
    second = conduct.cheating_offense_record(
        chronicle=world.chronicle, player=alice, note="again", by=st
    )
    assert (second.number, second.action, second.xp_change) == (2, "halve_xp", Decimal(-15))
    assert ledger.xp_balance(chronicle=world.chronicle, player=alice) == -5
    third = conduct.cheating_offense_record(
        chronicle=world.chronicle, player=alice, note="third", by=st
    )
    assert third.action == "ban"
    assert ledger.xp_balance(chronicle=world.chronicle, player=alice) == -5


def test_an_offense_needs_a_note(world: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        conduct.cheating_offense_record(
            chronicle=world.chronicle,
            player=world.users["player_bob"],
            note=" ",
            by=world.users["storyteller"],
        )
    assert "note" in caught.value.message_dict
    assert not CheatingOffense.objects.exists()


def test_respend_grant_is_stored_with_its_reason(world: Any, make_character: Any) -> None:
    character = make_character("Lucien")
    with pytest.raises(ValidationError) as caught:
        conduct.respend_grant(character=character, subject="", reason="", by=world.users["admin"])
    assert set(caught.value.message_dict) == {"subject", "reason"}
    grant = conduct.respend_grant(
        character=character,
        subject="Celerity",
        reason="Celerity bids changed at game 12",
        by=world.users["admin"],
    )
    assert RespendGrant.objects.get() == grant and grant.subject == "Celerity"
