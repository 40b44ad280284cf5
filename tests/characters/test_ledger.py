"""The XP ledger (XP-07, DESIGN "money-like numbers"): append-only, keyed, never negative."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction

from characters import rules as character_rules
from characters.models import XpEntry, XpKind
from characters.services import ledger
from chronicle import rules as chronicle_rules

pytestmark = pytest.mark.django_db


def add(world: Any, amount: str, key: str, **extra: Any) -> tuple[XpEntry, bool]:
    return ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(amount),
        kind=extra.pop("kind", XpKind.AWARD),
        reason=extra.pop("reason", "test award"),
        key=key,
        **extra,
    )


def balance(world: Any, persona: str = "player_alice") -> Decimal:
    return ledger.xp_balance(chronicle=world.chronicle, player=world.users[persona])


def test_balance_is_the_sum_of_entries_per_player_and_chronicle(world: Any) -> None:
    add(world, "2.5", "award:1")
    add(world, "3", "award:2")
    add(world, "-4", "spend:1", kind=XpKind.PURCHASE)
    assert balance(world) == Decimal("1.5")
    assert balance(world, "player_bob") == 0
    balances = ledger.xp_balances(
        chronicle=world.chronicle,
        player_ids=[world.users["player_alice"].pk, world.users["player_bob"].pk],
    )
    assert balances == {
        world.users["player_alice"].pk: Decimal("1.5"),
        world.users["player_bob"].pk: 0,
    }


def test_the_same_key_writes_once(world: Any) -> None:
    first, created = add(world, "3", "award:game-1")
    again, created_again = add(world, "3", "award:game-1")
    assert created and not created_again
    assert again.pk == first.pk
    assert balance(world) == 3


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        pytest.param("0", "0 would change nothing", id="zero"),
        pytest.param("0.3", "steps of 0.5", id="not-a-half-step"),
        pytest.param("NaN", "steps of 0.5", id="nan"),
        pytest.param("10000000", "more XP than", id="too-large"),
    ],
)
def test_bad_amounts_are_refused(world: Any, amount: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        add(world, amount, "bad")
    assert not XpEntry.objects.exists()


def test_a_spend_never_takes_the_balance_below_zero(world: Any) -> None:
    add(world, "3", "award:1")
    with pytest.raises(ValidationError, match=r"Not enough XP.*XP-02"):
        add(world, "-3.5", "spend:1", kind=XpKind.PURCHASE)
    assert balance(world) == 3


def test_a_penalty_may_go_below_zero_when_the_rules_impose_it(world: Any) -> None:
    # GEN-02: the second offense halves lifetime earned XP even if some was spent.
    add(world, "30", "award:1")
    add(world, "-20", "spend:1", kind=XpKind.PURCHASE)
    penalty = character_rules.cheating_penalty(offense=2, lifetime_earned_xp=Decimal(30))
    add(
        world, str(penalty.xp_change), "penalty:2", kind=XpKind.PENALTY, allow_negative_balance=True
    )
    assert balance(world) == Decimal(-5)


def test_a_correction_is_a_reversing_entry_never_an_edit(world: Any) -> None:
    entry, _ = add(world, "3", "award:1")
    storyteller = world.users["storyteller"]
    reversal = ledger.xp_entry_reverse(entry=entry, by=storyteller, reason="wrong game")
    assert reversal.amount == Decimal(-3) and reversal.reverses == entry
    assert reversal.reason == "Reversal: wrong game"
    assert balance(world) == 0
    with pytest.raises(ValidationError, match="already been reversed"):
        ledger.xp_entry_reverse(entry=entry, by=storyteller, reason="again")
    with pytest.raises(ValidationError, match="cannot itself be reversed"):
        ledger.xp_entry_reverse(entry=reversal, by=storyteller, reason="undo")
    assert XpEntry.objects.count() == 2


def test_reversing_a_credit_already_spent_is_refused(world: Any) -> None:
    entry, _ = add(world, "4", "award:1")
    add(world, "-4", "spend:1", kind=XpKind.PURCHASE)
    with pytest.raises(ValidationError, match="Not enough XP"):
        ledger.xp_entry_reverse(entry=entry, by=world.users["storyteller"], reason="oops")


def test_a_correction_needs_a_reason(world: Any) -> None:
    with pytest.raises(ValidationError, match="needs a reason"):
        ledger.xp_correction_add(
            chronicle=world.chronicle,
            player_id=world.users["player_alice"].pk,
            amount=Decimal(2),
            reason="  ",
            by=world.users["storyteller"],
        )
    entry = ledger.xp_correction_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(2),
        reason="forgot the costume vote",
        by=world.users["storyteller"],
    )
    assert entry.kind == XpKind.CORRECTION and balance(world) == 2


def test_outsiders_have_no_ledger_here(world: Any) -> None:
    with pytest.raises(ValidationError, match="not a member"):
        ledger.xp_entry_add(
            chronicle=world.chronicle,
            player_id=world.users["outsider"].pk,
            amount=Decimal(1),
            kind=XpKind.AWARD,
            reason="nope",
            key="k",
        )


@pytest.mark.parametrize("statement", ["UPDATE", "DELETE"])
def test_postgres_refuses_to_edit_or_delete_ledger_entries(
    world: Any, postgres: None, statement: str
) -> None:
    entry, _ = add(world, "3", "award:1")
    with pytest.raises(DatabaseError), transaction.atomic():
        if statement == "UPDATE":
            XpEntry.objects.filter(pk=entry.pk).update(amount=Decimal(30))
        else:
            XpEntry.objects.filter(pk=entry.pk).delete()
    entry.refresh_from_db()
    assert entry.amount == 3


def test_rules_settings_come_from_the_chronicle(world: Any) -> None:
    """Services pass a rule its INTERPRETATION settings by name (`settings_for`)."""
    house = chronicle_rules.house_rules_from({"discipline_cost_intermediate": 7})
    kwargs = chronicle_rules.settings_for(character_rules.discipline_cost, house)
    assert kwargs["discipline_cost_intermediate"] == 7
    assert character_rules.discipline_cost(["2a"], in_clan=True, at_creation=False, **kwargs) == 7
    assert "pure_bond_months" not in kwargs
