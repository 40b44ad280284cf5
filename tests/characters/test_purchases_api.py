"""The sheet, ledger and purchase endpoints (XP-01) for every persona, through the same
services as the pages."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from characters.models import Character, PurchaseStatus, XpEntry, XpKind, XpPurchase
from characters.services import ledger
from characters.services.purchases import purchase_request

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 12, 18, 0, tzinfo=dt.UTC)
API = "/api/chronicles/nightfall"


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def alice(world: Any, make_character: Callable[..., Character]) -> Character:
    character = make_character("Mole", clan="nosferatu", disciplines={"potence": "1a"})
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(20),
        kind=XpKind.AWARD,
        reason="award",
        key="award:1",
    )
    return character


@pytest.fixture
def pending(world: Any, alice: Character) -> XpPurchase:
    return purchase_request(character=alice, by=world.users["player_alice"], kind="willpower")


READ = {
    "admin": 200,
    "storyteller": 200,
    "player_alice": 200,
    "player_bob": 404,
    "outsider": 404,
    "other_storyteller": 404,
    None: 401,
}
PERSONAS = list(READ)


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("path", ["sheets/{id}/", "characters/{id}/ledger/"])
def test_sheet_and_ledger_per_persona(
    world: Any, alice: Character, persona: str | None, path: str
) -> None:
    response = world.client(persona).get(f"{API}/{path.format(id=alice.pk)}")
    assert response.status_code == READ[persona]
    if response.status_code == 200 and "ledger" in path:
        assert response.json()["count"] == 1


@pytest.mark.parametrize("persona", PERSONAS)
def test_purchase_list_and_detail_per_persona(
    world: Any, pending: XpPurchase, persona: str | None
) -> None:
    listing = world.client(persona).get(f"{API}/purchases/")
    detail = world.client(persona).get(f"{API}/purchases/{pending.pk}/")
    expected = READ[persona]
    assert detail.status_code == expected
    if persona == "player_bob":
        assert listing.status_code == 200 and listing.json()["count"] == 0
    elif expected == 200:
        assert listing.json()["count"] == 1
    else:
        assert listing.status_code == expected


def test_purchase_list_filters_by_status(world: Any, pending: XpPurchase) -> None:
    client = world.client("storyteller")
    assert client.get(f"{API}/purchases/?status=approved").json()["count"] == 0
    assert client.get(f"{API}/purchases/?status=requested").json()["count"] == 1
    assert client.get(f"{API}/purchases/?status=nonsense").status_code == 400


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 201),
        ("storyteller", 201),
        ("player_alice", 201),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 401),
    ],
)
def test_create_and_quote_per_persona(
    world: Any, alice: Character, persona: str | None, expected: int
) -> None:
    body = {"character": alice.pk, "kind": "trait", "target": "mental"}
    quote = world.client(persona).post(
        f"{API}/purchases/quote/", body, content_type="application/json"
    )
    assert quote.status_code == (200 if expected == 201 else expected)
    assert XpPurchase.objects.count() == 0  # a quote writes nothing
    created = world.client(persona).post(f"{API}/purchases/", body, content_type="application/json")
    assert created.status_code == expected
    assert XpPurchase.objects.count() == (1 if expected == 201 else 0)


def test_quote_and_refusal_cite_the_rule(world: Any, alice: Character) -> None:
    body = {"character": alice.pk, "kind": "discipline", "discipline": "auspex", "levels": ["1a"]}
    client = world.client("player_alice")
    quote = client.post(f"{API}/purchases/quote/", body, content_type="application/json").json()
    assert quote["cost"] == "4.0"
    assert any("DIS-07" in p["message"] and p["field"] == "teacher" for p in quote["problems"])
    refused = client.post(f"{API}/purchases/", body, content_type="application/json")
    assert refused.status_code == 400
    assert "DIS-07" in refused.json()["error"]["fields"]["teacher"][0]
    assert XpPurchase.objects.count() == 0


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 401),
    ],
)
@pytest.mark.parametrize("action", ["approve", "reject"])
def test_approve_and_reject_per_persona(
    world: Any, pending: XpPurchase, persona: str | None, expected: int, action: str
) -> None:
    response = world.client(persona).post(
        f"{API}/purchases/{pending.pk}/{action}/",
        {"note": "Not now."},
        content_type="application/json",
    )
    assert response.status_code == expected
    pending.refresh_from_db()
    if expected == 200:
        assert pending.status == (
            PurchaseStatus.APPROVED if action == "approve" else PurchaseStatus.REJECTED
        )
        assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == (action == "approve")
    else:
        assert pending.status == PurchaseStatus.REQUESTED


def test_second_approval_is_refused_with_the_error_shape(world: Any, pending: XpPurchase) -> None:
    world.client("storyteller").post(f"{API}/purchases/{pending.pk}/approve/")
    again = world.client("admin").post(f"{API}/purchases/{pending.pk}/approve/")
    assert again.status_code == 400
    assert "already approved" in again.json()["error"]["message"]
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 1


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 403),
        ("storyteller", 403),
        ("player_alice", 200),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 401),
    ],
)
def test_withdraw_per_persona(
    world: Any, pending: XpPurchase, persona: str | None, expected: int
) -> None:
    response = world.client(persona).post(f"{API}/purchases/{pending.pk}/withdraw/")
    assert response.status_code == expected
    pending.refresh_from_db()
    assert (pending.status == PurchaseStatus.WITHDRAWN) is (expected == 200)


# 1. session, 2. user, 3. membership, 4. character, 5. count, 6. the page of entries.
@pytest.mark.parametrize("size", [1, 200], ids=["1-entry", "200-entries"])
def test_ledger_query_count_does_not_grow(
    world: Any, alice: Character, django_assert_num_queries: Any, size: int
) -> None:
    XpEntry.objects.bulk_create(
        XpEntry(
            chronicle=world.chronicle,
            player=world.users["player_alice"],
            amount=Decimal(1),
            kind=XpKind.AWARD,
            reason="award",
            key=f"extra:{i}",
            created_at=NOW,
        )
        for i in range(size)
    )
    client = world.client("player_alice")
    with django_assert_num_queries(6):
        response = client.get(f"{API}/characters/{alice.pk}/ledger/")
    assert response.json()["count"] == size + 1
