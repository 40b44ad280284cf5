"""Teachers of XP purchases (DIS-07, SEW-01) without leaking other characters: a player names
their teacher in words, only staff pick a teacher character (`access.teacher_choices`), and an
ST links it at sign-off, where the full checks run. A player's id for someone else's character
answers exactly like an unknown id, and nothing a player reads names another character or
their levels."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError

from characters import access
from characters.models import (
    Character,
    DisciplineLevel,
    PurchaseStatus,
    Status,
    XpEntry,
    XpKind,
    XpPurchase,
)
from characters.services import ledger
from characters.services.purchases import purchase_approve, purchase_quote, purchase_request
from chronicle.models import Membership

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 12, 18, 0, tzinfo=dt.UTC)
API = "/api/chronicles/nightfall"
CONFIRM = "A storyteller will confirm your teacher at sign-off (DIS-07)."


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def rose(world: Any, make_character: Callable[..., Character]) -> Character:
    """Alice's Toreador with 30 XP: Fortitude, Dominate and Sewer Lore are all out-of-clan."""
    character = make_character("Rose", clan="toreador", disciplines={"auspex": "1a"})
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(30),
        kind=XpKind.AWARD,
        reason="award",
        key="award:1",
    )
    return character


@pytest.fixture
def marta(world: Any, make_character: Callable[..., Character]) -> Character:
    """A Nosferatu with 30 XP whose Auspex is out-of-clan: its 1a needs a teacher (DIS-07)."""
    character = make_character(
        "Marta's Pupil", clan="nosferatu", disciplines={"potence": "1a"}, sewer_lore=0
    )
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(30),
        kind=XpKind.AWARD,
        reason="award",
        key="award:1",
    )
    return character


@pytest.fixture
def victor(make_character: Callable[..., Character]) -> Character:
    """Bob's Ventrue, with Fortitude in-clan: a fine teacher, but not Alice's to know."""
    return make_character(
        "Victor", player="player_bob", clan="ventrue", disciplines={"fortitude": "1b"}
    )


@pytest.fixture
def spy(make_character: Callable[..., Character]) -> Character:
    """A secret NPC with Fortitude in-clan."""
    return make_character(
        "Secret Prince Spy", player=None, clan="ventrue", disciplines={"fortitude": "1b"}
    )


@pytest.fixture
def muse(make_character: Callable[..., Character]) -> Character:
    """A Toreador NPC with Auspex in-clan at 2a: may teach its basics (DIS-07)."""
    return make_character("Muse", player=None, clan="toreador", disciplines={"auspex": "2a"})


@pytest.fixture
def brawler(make_character: Callable[..., Character]) -> Character:
    """A Brujah NPC with Auspex only out-of-clan: may not teach it (DIS-07)."""
    return make_character("Brawler", player=None, clan="brujah", disciplines={"auspex": "2b"})


def nothing_spent() -> None:
    assert not XpEntry.objects.filter(kind=XpKind.PURCHASE).exists()
    assert not DisciplineLevel.objects.filter(acquired="play").exists()


def post(world: Any, persona: str, path: str, body: dict[str, Any]) -> Any:
    return world.client(persona).post(f"{API}/{path}", body, content_type="application/json")


# --- access.teacher_choices --------------------------------------------------------------------


def test_teacher_choices_staff_every_active_character_player_none(
    world: Any,
    make_character: Callable[..., Character],
    rose: Character,
    victor: Character,
    spy: Character,
) -> None:
    dead = make_character("Ash", player=None, status=Status.DEAD)
    make_character("Abroad", player=None, chronicle=world.other)
    storyteller = Membership.objects.get(chronicle=world.chronicle, user=world.users["storyteller"])
    player = Membership.objects.get(chronicle=world.chronicle, user=world.users["player_alice"])
    assert set(access.teacher_choices(storyteller)) == {rose, victor, spy}
    assert dead not in access.teacher_choices(storyteller)
    assert list(access.teacher_choices(player)) == []


# --- The API: a player's teacher id answers like an unknown one ---------------------------------


@pytest.mark.parametrize("path", ["purchases/quote/", "purchases/"])
@pytest.mark.parametrize(
    "body",
    [
        {"kind": "discipline", "discipline": "fortitude", "levels": ["1a"]},
        {"kind": "discipline", "discipline": "dominate", "levels": ["1a"]},
        {"kind": "sewer_lore", "quantity": 5},
    ],
    ids=["can-teach", "cannot-teach", "sewer-lore"],
)
def test_player_naming_another_character_by_id_gets_the_unknown_answer(
    world: Any,
    make_character: Callable[..., Character],
    rose: Character,
    victor: Character,
    spy: Character,
    path: str,
    body: dict[str, Any],
) -> None:
    sewer_rat = make_character("Sewer Rat", player=None, clan="nosferatu", sewer_lore=3)
    abroad = make_character("Abroad", player=None, chronicle=world.other)
    answers = []
    for teacher in (999_999, victor.pk, spy.pk, sewer_rat.pk, abroad.pk):
        response = post(
            world, "player_alice", path, {"character": rose.pk, **body, "teacher": teacher}
        )
        assert response.status_code == 400
        answers.append(response.content)
    # Byte for byte the same answer whatever the id: nothing to tell them apart.
    assert len(set(answers)) == 1, answers
    text = answers[0].decode()
    assert "teacher" in response.json()["error"]["fields"]
    for secret in ("Victor", "Spy", "Rat", "Abroad", "1b", "Sewer Lore 3"):
        assert secret not in text
    assert XpPurchase.objects.count() == 0


def test_player_quote_and_request_with_teacher_name_xp01_dis07(
    world: Any, marta: Character
) -> None:
    body = {
        "character": marta.pk,
        "kind": "discipline",
        "discipline": "auspex",
        "levels": ["1a"],
        "teacher_name": "Old Marta",
    }
    quote = post(world, "player_alice", "purchases/quote/", body)
    assert quote.status_code == 200
    assert quote.json() == {"cost": "4.0", "problems": [], "notes": [CONFIRM]}
    created = post(world, "player_alice", "purchases/", body)
    assert created.status_code == 201
    assert created.json()["teacher_name"] == "Old Marta" and created.json()["teacher"] is None
    purchase = XpPurchase.objects.get()
    assert (purchase.teacher_name, purchase.teacher, purchase.cost) == (
        "Old Marta",
        None,
        Decimal(4),
    )


def test_staff_picks_a_teacher_by_id_and_reads_why_it_cannot_teach(
    world: Any, marta: Character, muse: Character, brawler: Character
) -> None:
    body = {"character": marta.pk, "kind": "discipline", "discipline": "auspex", "levels": ["1a"]}
    ok = post(world, "storyteller", "purchases/quote/", {**body, "teacher": muse.pk})
    assert ok.json()["problems"] == []
    refused = post(world, "storyteller", "purchases/quote/", {**body, "teacher": brawler.pk})
    messages = [p["message"] for p in refused.json()["problems"]]
    assert any("DIS-07" in m and "out-of-clan" in m for m in messages), messages
    unknown = post(world, "storyteller", "purchases/quote/", {**body, "teacher": 999_999})
    assert unknown.status_code == 400


def test_api_approve_links_the_teacher_and_checks_it_dis07(
    world: Any, marta: Character, muse: Character, brawler: Character
) -> None:
    purchase = purchase_request(
        character=marta,
        by=world.users["player_alice"],
        kind="discipline",
        discipline="auspex",
        levels=["1a"],
        teacher_name="Old Marta",
    )
    path = f"purchases/{purchase.pk}/approve/"
    unknown = post(world, "storyteller", path, {"teacher": 999_999})
    assert unknown.status_code == 400 and "teacher" in unknown.json()["error"]["fields"]
    cannot = post(world, "storyteller", path, {"teacher": brawler.pk})
    assert cannot.status_code == 400
    assert "DIS-07" in cannot.json()["error"]["fields"]["teacher"][0]
    nothing_spent()
    approved = post(world, "storyteller", path, {"teacher": muse.pk})
    assert approved.status_code == 200 and approved.json()["teacher"] == muse.pk
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 1
    assert DisciplineLevel.objects.get(character=marta, discipline="auspex").teacher == muse
    # The player sees the name they gave, never the linked character's id.
    mine = world.client("player_alice").get(f"{API}/purchases/{purchase.pk}/").json()
    assert mine["teacher"] is None and mine["teacher_name"] == "Old Marta"


# --- Services -----------------------------------------------------------------------------------


def test_player_names_the_teacher_and_st_links_one_who_can_teach_dis07(
    world: Any, marta: Character, muse: Character
) -> None:
    player = world.users["player_alice"]
    quote = purchase_quote(
        character=marta,
        kind="discipline",
        discipline="auspex",
        levels=["1a"],
        teacher_name="Old Marta",
    )
    assert quote.ok and quote.notes == [CONFIRM]
    purchase = purchase_request(
        character=marta,
        by=player,
        kind="discipline",
        discipline="auspex",
        levels=["1a"],
        teacher_name=" Old Marta ",
    )
    assert purchase.teacher_name == "Old Marta" and purchase.teacher is None
    # A double click returns the pending request.
    again = purchase_request(
        character=marta,
        by=player,
        kind="discipline",
        discipline="auspex",
        levels=["1a"],
        teacher_name="Old Marta",
    )
    assert again.pk == purchase.pk
    approved = purchase_approve(purchase=purchase, by=world.users["storyteller"], teacher=muse)
    assert approved.status == PurchaseStatus.APPROVED and approved.teacher == muse
    entry = XpEntry.objects.get(kind=XpKind.PURCHASE)
    assert entry.amount == Decimal(-4) and entry.key == f"purchase:{purchase.pk}"
    level = DisciplineLevel.objects.get(character=marta, discipline="auspex")
    assert (level.code, level.teacher, level.purchase) == ("1a", muse, purchase)
    purchase.refresh_from_db()
    assert purchase.teacher == muse


@pytest.mark.parametrize("choose", ["brawler", None], ids=["cannot-teach", "no-teacher"])
def test_approval_with_a_teacher_who_cannot_teach_is_refused_dis07(
    world: Any, marta: Character, brawler: Character, choose: str | None
) -> None:
    purchase = purchase_request(
        character=marta,
        by=world.users["player_alice"],
        kind="discipline",
        discipline="auspex",
        levels=["1a"],
        teacher_name="Old Marta",
    )
    with pytest.raises(ValidationError) as caught:
        purchase_approve(
            purchase=purchase,
            by=world.users["storyteller"],
            teacher=brawler if choose else None,
        )
    assert "DIS-07" in " ".join(caught.value.messages)
    nothing_spent()
    purchase.refresh_from_db()
    assert (purchase.status, purchase.teacher) == (PurchaseStatus.REQUESTED, None)


def test_approval_refuses_a_teacher_of_another_chronicle_dis07(
    world: Any, marta: Character, make_character: Callable[..., Character]
) -> None:
    abroad = make_character(
        "Abroad", player=None, chronicle=world.other, disciplines={"auspex": "2a"}
    )
    purchase = purchase_request(
        character=marta,
        by=world.users["player_alice"],
        kind="discipline",
        discipline="auspex",
        levels=["1a"],
        teacher_name="Old Marta",
    )
    with pytest.raises(ValidationError) as caught:
        purchase_approve(purchase=purchase, by=world.users["storyteller"], teacher=abroad)
    assert "DIS-07" in " ".join(caught.value.messages)
    nothing_spent()


def test_without_a_teacher_name_the_usual_refusal_stands_dis07_sew01(
    world: Any, rose: Character
) -> None:
    player = world.users["player_alice"]
    for kwargs, rule in [
        ({"kind": "discipline", "discipline": "fortitude", "levels": ["1a"]}, "DIS-07"),
        ({"kind": "sewer_lore"}, "SEW-01"),
    ]:
        with pytest.raises(ValidationError) as caught:
            purchase_request(character=rose, by=player, **kwargs)
        assert rule in " ".join(caught.value.messages)
        assert "teacher" in caught.value.message_dict
    assert XpPurchase.objects.count() == 0


def test_sewer_lore_teacher_named_then_checked_at_sign_off_sew01(
    world: Any, rose: Character, make_character: Callable[..., Character]
) -> None:
    weak = make_character("Rat", player=None, clan="nosferatu", sewer_lore=0)
    guide = make_character("Guide", player=None, clan="nosferatu", sewer_lore=3)
    quote = purchase_quote(character=rose, kind="sewer_lore", teacher_name="the Guide")
    assert quote.ok and quote.notes == [
        "A storyteller will confirm your teacher at sign-off (SEW-01)."
    ]
    purchase = purchase_request(
        character=rose, by=world.users["player_alice"], kind="sewer_lore", teacher_name="the Guide"
    )
    with pytest.raises(ValidationError) as caught:
        purchase_approve(purchase=purchase, by=world.users["storyteller"], teacher=weak)
    assert "SEW-01" in " ".join(caught.value.messages)
    nothing_spent()
    purchase_approve(purchase=purchase, by=world.users["storyteller"], teacher=guide)
    rose.refresh_from_db()
    assert rose.sewer_lore == 1
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 1


def test_player_quote_never_names_a_given_teacher_or_their_levels(
    world: Any, rose: Character, spy: Character, make_character: Callable[..., Character]
) -> None:
    mole = make_character("Mole", player="player_bob", clan="nosferatu", sewer_lore=3)
    for kwargs in [
        {"kind": "discipline", "discipline": "dominate", "levels": ["1a"], "teacher": spy},
        {"kind": "sewer_lore", "quantity": 5, "teacher": mole},
    ]:
        player = purchase_quote(character=rose, **kwargs)
        staff = purchase_quote(character=rose, staff=True, **kwargs)
        text = " ".join(p.message for p in player.problems if p.field == "teacher")
        assert "teach" in text
        assert "Spy" not in text and "Mole" not in text and "3" not in text
        assert any(kwargs["teacher"].name in p.message for p in staff.problems)


# --- Pages --------------------------------------------------------------------------------------


def test_player_buy_form_lists_no_other_character(
    world: Any, rose: Character, victor: Character, spy: Character
) -> None:
    page = world.client("player_alice").get(f"/c/nightfall/characters/{rose.pk}/").content.decode()
    assert "Teacher (their character&#x27;s name)" in page
    assert 'name="teacher_name"' in page and 'name="teacher"' not in page
    for option in re.findall(r"<option[^>]*>([^<]*)</option>", page):
        assert option not in ("Victor", "Secret Prince Spy")
    assert "Victor" not in page and "Spy" not in page
    staff_page = world.client("storyteller").get(f"/c/nightfall/characters/{rose.pk}/")
    options = re.findall(r"<option[^>]*>([^<]*)</option>", staff_page.content.decode())
    assert "Victor" in options and "Secret Prince Spy" in options and "Rose" not in options


@pytest.mark.parametrize("discipline", ["fortitude", "dominate"])
def test_player_preview_ignores_a_teacher_id_and_names_nobody(
    world: Any, rose: Character, spy: Character, discipline: str
) -> None:
    client = world.client("player_alice")
    url = f"/c/nightfall/characters/{rose.pk}/buy/preview/"
    params = {"kind": "discipline", "discipline": discipline, "level": "1a", "quantity": 1}
    answers = [
        client.get(url, {**params, "moment": "downtime", "teacher": teacher}).content
        for teacher in (spy.pk, 999_999, "")
    ]
    assert len(set(answers)) == 1
    text = answers[0].decode()
    assert "DIS-07" in text and "Spy" not in text
    named = client.get(url, {**params, "moment": "downtime", "teacher_name": "Old Marta"})
    assert CONFIRM in named.content.decode()


def test_player_buys_naming_the_teacher_and_st_decides_on_the_page(
    world: Any, marta: Character, muse: Character, brawler: Character
) -> None:
    response = world.client("player_alice").post(
        f"/c/nightfall/characters/{marta.pk}/buy/",
        {
            "kind": "discipline",
            "discipline": "auspex",
            "level": "1a",
            "teacher_name": "Old Marta",
            "quantity": 1,
            "moment": "downtime",
        },
    )
    assert response.status_code == 302
    purchase = XpPurchase.objects.get()
    assert (purchase.teacher_name, purchase.teacher) == ("Old Marta", None)

    storyteller = world.client("storyteller")
    queue = storyteller.get("/c/nightfall/purchases/").content.decode()
    assert "teacher named: Old Marta" in queue and "Choose the teacher" in queue
    assert 'name="decision" value="approve"' not in queue  # no quick Approve without a teacher

    url = f"/c/nightfall/purchases/{purchase.pk}/"
    page = storyteller.get(url).content.decode()
    assert "Old Marta" in page and 'name="teacher"' in page and "Muse" in page

    cannot = storyteller.post(url, {"decision": "approve", "teacher": brawler.pk})
    assert cannot.status_code == 400
    assert any("DIS-07" in e for e in cannot.context["form"].errors["teacher"])
    unknown = storyteller.post(url, {"decision": "approve", "teacher": 999_999})
    assert unknown.status_code == 400 and unknown.context["form"].errors["teacher"]
    nothing_spent()

    done = storyteller.post(url, {"decision": "approve", "teacher": muse.pk})
    assert done.status_code == 302
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 1
    assert DisciplineLevel.objects.get(character=marta, discipline="auspex").teacher == muse


# The sheet for staff: 1. session, 2. user, 3. membership, 4. character, 5. ledger,
# 6. discipline levels, 7. diableries, 8. stored blood (none here, so no donors query), 9. bonds,
# 10. items, 11. pending purchases, 12. titles, 13. rituals, 14. disadvantages, 15. sewer
# locations, 16. the header's chronicle switcher, 17. the buy form's teacher choices, whatever
# the number of characters.
@pytest.mark.parametrize("size", [1, 40], ids=["1-character", "40-characters"])
def test_staff_sheet_query_count_does_not_grow(
    world: Any,
    rose: Character,
    make_character: Callable[..., Character],
    django_assert_num_queries: Any,
    size: int,
) -> None:
    for i in range(size):
        make_character(f"NPC {i}", player=None)
    client = world.client("storyteller")
    with django_assert_num_queries(17):
        response = client.get(f"/c/nightfall/characters/{rose.pk}/")
    assert response.status_code == 200
    assert response.content.decode().count("NPC ") >= size
