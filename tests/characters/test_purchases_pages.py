"""The purchase pages (XP-01) for every persona, the buy form's errors and live preview, and the
ST queue's constant query count."""

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
VISITORS = ["admin", "storyteller", "player_alice", "player_bob", "outsider", "other_storyteller"]


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


def client(world: Any, persona: str | None) -> Any:
    return world.client(persona)


# Who gets what: the owner and staff may see; other members and strangers get 404; a player
# on an ST-only page about their own purchase gets 403; anonymous visitors go to the login page.
SHEET_LIKE = {
    "admin": 200,
    "storyteller": 200,
    "player_alice": 200,
    "player_bob": 404,
    "outsider": 404,
    "other_storyteller": 404,
    None: 302,
}


@pytest.mark.parametrize("persona", [*VISITORS, None])
@pytest.mark.parametrize("suffix", ["", "print/", "buy/", "buy/preview/?kind=willpower&quantity=1"])
def test_sheet_and_buy_pages_per_persona(
    world: Any, alice: Character, persona: str | None, suffix: str
) -> None:
    response = client(world, persona).get(f"/c/nightfall/characters/{alice.pk}/{suffix}")
    assert response.status_code == SHEET_LIKE[persona]


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 403),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_queue_per_persona(
    world: Any, pending: XpPurchase, persona: str | None, expected: int
) -> None:
    response = client(world, persona).get("/c/nightfall/purchases/")
    assert response.status_code == expected
    if expected == 200:
        page = response.content.decode()
        assert "Mole" in page and "Approve" in page and "Reject" in page


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_decide_page_per_persona(
    world: Any, pending: XpPurchase, persona: str | None, expected: int
) -> None:
    response = client(world, persona).get(f"/c/nightfall/purchases/{pending.pk}/")
    assert response.status_code == expected
    # Only staff may post a decision; nobody else's POST writes anything.
    post = client(world, persona).post(
        f"/c/nightfall/purchases/{pending.pk}/", {"decision": "approve"}
    )
    if expected == 200:
        assert post.status_code == 302
    else:
        assert post.status_code == expected
        assert not XpEntry.objects.filter(kind=XpKind.PURCHASE).exists()


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 403),
        ("storyteller", 403),
        ("player_alice", 302),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_withdraw_per_persona(
    world: Any, pending: XpPurchase, persona: str | None, expected: int
) -> None:
    response = client(world, persona).post(f"/c/nightfall/purchases/{pending.pk}/withdraw/")
    assert response.status_code == expected
    pending.refresh_from_db()
    withdrawn = persona == "player_alice"
    assert (pending.status == PurchaseStatus.WITHDRAWN) is withdrawn


def test_buy_form_labels_and_request(world: Any, alice: Character) -> None:
    page = client(world, "player_alice").get(f"/c/nightfall/characters/{alice.pk}/")
    text = page.content.decode()
    for label in ("What to buy", "Discipline", "Level", "Teacher", "Request purchase"):
        assert label in text
    assert "Discipline level" in text  # an option label from PurchaseKind
    response = client(world, "player_alice").post(
        f"/c/nightfall/characters/{alice.pk}/buy/",
        {
            "kind": "discipline",
            "discipline": "potence",
            "level": "1b",
            "quantity": 1,
            "moment": "downtime",
        },
    )
    assert response.status_code == 302
    purchase = XpPurchase.objects.get()
    assert (purchase.levels, purchase.cost) == (["1b"], Decimal(3))


def test_buy_form_refusal_keeps_input_and_shows_rule_beside_field(
    world: Any, alice: Character
) -> None:
    response = client(world, "player_alice").post(
        f"/c/nightfall/characters/{alice.pk}/buy/",
        {
            "kind": "discipline",
            "discipline": "auspex",
            "level": "1a",
            "quantity": 1,
            "moment": "downtime",
            "note": "my careful note",
        },
    )
    assert response.status_code == 400
    form = response.context["form"]
    # A player has no teacher select (other characters are not theirs to know): the problem
    # goes beside the field where they name their teacher.
    assert any("DIS-07" in error for error in form.errors["teacher_name"])
    text = response.content.decode()
    assert "my careful note" in text and 'value="auspex" selected' in text
    assert XpPurchase.objects.count() == 0


def test_preview_shows_cost_and_problems_and_writes_nothing(world: Any, alice: Character) -> None:
    response = client(world, "player_alice").get(
        f"/c/nightfall/characters/{alice.pk}/buy/preview/",
        {
            "kind": "discipline",
            "discipline": "auspex",
            "level": "1a",
            "quantity": 1,
            "moment": "downtime",
        },
        headers={"HX-Request": "true"},
    )
    text = response.content.decode()
    assert response.status_code == 200
    assert "Cost:" in text and "4 XP" in text and "DIS-07" in text
    assert "<html" not in text  # the partial only
    assert XpPurchase.objects.count() == 0


def test_decide_reject_needs_a_note_and_keeps_the_page(world: Any, pending: XpPurchase) -> None:
    response = client(world, "storyteller").post(
        f"/c/nightfall/purchases/{pending.pk}/", {"decision": "reject", "note": ""}
    )
    assert response.status_code == 400
    assert "Tell the player why" in response.content.decode()
    pending.refresh_from_db()
    assert pending.status == PurchaseStatus.REQUESTED


def test_second_approval_from_the_page_says_who_approved(world: Any, pending: XpPurchase) -> None:
    client(world, "storyteller").post(
        f"/c/nightfall/purchases/{pending.pk}/", {"decision": "approve"}
    )
    response = client(world, "admin").post(
        f"/c/nightfall/purchases/{pending.pk}/", {"decision": "approve"}
    )
    assert response.status_code == 400
    assert "already approved by storyteller" in response.content.decode()
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 1


# The queue: 1. session, 2. user, 3. membership, 4. the requested purchases with character,
# player, teacher and cycle, 5. the players' balances, 6. the header's chronicle switcher.
@pytest.mark.parametrize("size", [1, 30], ids=["1-purchase", "30-purchases"])
def test_queue_query_count_does_not_grow(
    world: Any,
    make_character: Callable[..., Character],
    make_user: Callable[..., Any],
    django_assert_num_queries: Any,
    size: int,
) -> None:
    from chronicle import services as chronicle_services

    for i in range(size):
        user = make_user(f"queue_player_{i}")
        chronicle_services.membership_add(chronicle=world.chronicle, user=user, role="player")
        world.users[user.username] = user
        character = make_character(f"PC {i}", player=user.username)
        ledger.xp_entry_add(
            chronicle=world.chronicle,
            player_id=user.pk,
            amount=Decimal(5),
            kind=XpKind.AWARD,
            reason="award",
            key="award:1",
        )
        purchase_request(character=character, by=user, kind="trait", target="mental")
    storyteller = client(world, "storyteller")
    with django_assert_num_queries(6):
        response = storyteller.get("/c/nightfall/purchases/")
    assert response.status_code == 200
    assert len(response.context["lines"]) == size
