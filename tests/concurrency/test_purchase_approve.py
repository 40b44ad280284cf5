"""Approving XP purchases concurrently (XP-01, DESIGN "money-like numbers").

First the race is proven with a naive read-then-write approval written here; then the real
`purchase_approve` under the same race gives one ledger entry, and concurrent approvals of
different purchases never take the balance below zero. On PostgreSQL, because SQLite
serialises every writer and so cannot show a race.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import connections
from django.utils import timezone

from characters.models import Approval, Character, PurchaseStatus, XpEntry, XpKind, XpPurchase
from characters.services import ledger
from characters.services.purchases import purchase_approve, purchase_request
from tests.conftest import World
from tests.invariants import assert_invariants, broken_invariants

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def run_together(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Start `count` threads that call `work(i)` at the same instant; return their results."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except Exception as exc:  # surfaced to the test below
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def pc(world: World, xp: str) -> Character:
    character = Character.objects.create(
        chronicle=world.chronicle,
        player=world.users["player_alice"],
        name="Mole",
        clan="nosferatu",
        approval=Approval.APPROVED,
        background_questionnaire="A stranger in the rain.",
        background_approved_at=timezone.now(),
        willpower=2,
    )
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(xp),
        kind=XpKind.AWARD,
        reason="award",
        key="award:1",
    )
    return character


def balance(world: World) -> Decimal:
    return ledger.xp_balance(chronicle=world.chronicle, player=world.users["player_alice"])


def test_naive_read_then_write_approval_races(postgres: None, world: World) -> None:
    """The race exists: two STs both read "requested" and a balance of 4, then both write."""
    character = pc(world, "4")
    purchase = purchase_request(
        character=character, by=world.users["player_alice"], kind="willpower"
    )
    both_read = threading.Barrier(2)

    def naive(i: int) -> bool:
        fresh = XpPurchase.objects.get(pk=purchase.pk)
        affordable = balance(world) >= fresh.cost
        ok = fresh.status == PurchaseStatus.REQUESTED and affordable
        both_read.wait()  # both checks are done before either writes
        if ok:
            XpEntry.objects.create(
                chronicle=world.chronicle,
                player=world.users["player_alice"],
                character=character,
                amount=-fresh.cost,
                kind=XpKind.PURCHASE,
                reason="naive approval",
                key=f"naive:{purchase.pk}:{i}",
                created_at=timezone.now(),
            )
            XpPurchase.objects.filter(pk=purchase.pk).update(status=PurchaseStatus.APPROVED)
        return ok

    results = run_together(2, naive)
    assert results == [True, True]
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 2
    assert balance(world) == Decimal(-2)
    # The invariants see what the race left: a balance below zero, a purchase without its entry.
    out = broken_invariants()
    assert "xp_balances: 1 mismatch" in out
    assert "xp_purchases: 1 mismatch" in out


def test_two_storytellers_approving_the_same_purchase_write_one_entry(
    postgres: None, world: World
) -> None:
    character = pc(world, "4")
    purchase = purchase_request(
        character=character, by=world.users["player_alice"], kind="willpower"
    )
    deciders = [world.users["storyteller"], world.users["admin"]] * 3

    results = run_together(
        len(deciders), lambda i: purchase_approve(purchase=purchase, by=deciders[i])
    )
    unexpected = [
        r for r in results if isinstance(r, Exception) and not isinstance(r, ValidationError)
    ]
    assert not unexpected, unexpected
    approved = [r for r in results if isinstance(r, XpPurchase)]
    refused = [r for r in results if isinstance(r, ValidationError)]
    assert approved and all(r.status == PurchaseStatus.APPROVED for r in approved)
    # Whoever lost was told it was already approved; the winner's own repeats got it back.
    assert all("already approved" in " ".join(r.messages) for r in refused)
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 1
    assert balance(world) == Decimal(1)
    character.refresh_from_db()
    assert character.willpower == 3
    assert_invariants()


def test_concurrent_approvals_of_different_purchases_never_overspend(
    postgres: None, world: World
) -> None:
    """Seven purchases of 3 XP each from a balance of 10: exactly three go through."""
    character = pc(world, "10")
    asks: list[dict[str, Any]] = [
        {"kind": "willpower"},
        {"kind": "trait", "target": "physical", "quantity": 3},
        {"kind": "trait", "target": "social", "quantity": 3},
        {"kind": "trait", "target": "mental", "quantity": 3},
        {"kind": "ability", "target": "brawl", "quantity": 3},
        {"kind": "influence", "target": "herd", "quantity": 3},
        {"kind": "influence", "target": "occult", "quantity": 3},
    ]
    purchases = [
        purchase_request(character=character, by=world.users["player_alice"], **ask) for ask in asks
    ]
    assert {p.cost for p in purchases} == {Decimal(3)}
    storyteller = world.users["storyteller"]
    now = dt.datetime.now(dt.UTC)

    results = run_together(
        len(purchases),
        lambda i: purchase_approve(purchase=purchases[i], by=storyteller, now=now),
    )
    unexpected = [
        r for r in results if isinstance(r, Exception) and not isinstance(r, ValidationError)
    ]
    assert not unexpected, unexpected
    assert sum(isinstance(r, XpPurchase) for r in results) == 3
    assert all("XP-02" in " ".join(r.messages) for r in results if isinstance(r, ValidationError))
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 3
    assert XpPurchase.objects.filter(status=PurchaseStatus.APPROVED).count() == 3
    assert balance(world) == Decimal(1)
    assert_invariants()
