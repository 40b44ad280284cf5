"""CRE-07 generation table, enforced: the creation quote, XP purchases (at request and again at
approval) and the sheet. The clan bonus point of CLN-01 may exceed the maximum."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError

from characters.models import Approval, Character, PurchaseStatus, XpEntry, XpKind, XpPurchase
from characters.services import creation, ledger
from characters.services.creation import DisadvantagePick, DisciplinePick, Draft
from characters.services.purchases import purchase_approve, purchase_request

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

# Three days after the world's game (2024-03-09): its cycle is open.
DOWNTIME = dt.datetime(2024, 3, 12, 18, 0, tzinfo=dt.UTC)

TOREADOR = Draft(
    name="Lucien",
    creature="kindred",
    clan="toreador",
    clan_bonus="social",
    physical=3,
    social=7,
    mental=5,
    abilities={"etiquette": 2, "expression": 2, "empathy": 1},
    willpower=2,
    influences={"herd": 1, "business": 1, "occult": 1},
    disciplines=(
        DisciplinePick("auspex", free="1b"),
        DisciplinePick("presence", free="1a"),
        DisciplinePick("celerity", top="1a"),
    ),
    disadvantages=(DisadvantagePick("Vain", major=True),),
    background_questionnaire="Embraced at the opera in 1923.",
)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(DOWNTIME, tick=False):
        yield


def quote(draft: Draft, world: Any) -> creation.Quote:
    return creation.creation_quote(draft, house_rules=world.chronicle.house_rules)


def cre07(problems: list[str]) -> list[str]:
    return [p for p in problems if "CRE-07" in p]


# --- Creation -----------------------------------------------------------------------------------


def test_a_trait_area_above_the_maximum_is_a_problem_and_submit_writes_nothing(world: Any) -> None:
    draft = dataclasses.replace(TOREADOR, physical=3, social=5, mental=7, extra_mental=4)
    found = quote(draft, world).problems
    assert cre07(found["physical"]) == [
        "Mental would be 11; generation 13 allows at most 10 in a trait area (a clan bonus point "
        "may go above it) (CRE-07)."
    ]
    character = creation.character_draft_create(
        chronicle=world.chronicle, player=world.users["player_alice"], draft=draft
    )
    with pytest.raises(ValidationError) as caught:
        creation.character_submit(character=character, by=world.users["player_alice"])
    assert "CRE-07" in " ".join(caught.value.messages)
    character.refresh_from_db()
    assert character.approval == Approval.DRAFT
    assert character.submitted_at is None


def test_willpower_above_the_maximum_is_a_problem(world: Any) -> None:
    draft = dataclasses.replace(TOREADOR, extra_willpower=9)
    assert cre07(quote(draft, world).problems["willpower"]) == [
        "Willpower would be 11; generation 13 allows at most 10 (CRE-07)."
    ]


def test_the_clan_bonus_point_may_exceed_the_maximum(world: Any) -> None:
    # Social 7 + 3 freebies = 10, the maximum; the Toreador's +1 social makes 11 on the sheet.
    draft = dataclasses.replace(TOREADOR, extra_social=3)
    result = quote(draft, world)
    assert result.ok, result.problems
    character = creation.character_draft_create(
        chronicle=world.chronicle, player=world.users["player_alice"], draft=draft
    )
    creation.character_submit(character=character, by=world.users["player_alice"])
    creation.character_approve(character=character, by=world.users["storyteller"])
    character.refresh_from_db()
    assert character.social == 11


def test_a_lower_generation_raises_the_maximum(world: Any) -> None:
    at_13 = dataclasses.replace(TOREADOR, social=7, extra_social=4, clan_bonus="herd")
    assert cre07(quote(at_13, world).problems.get("physical", []))
    at_12 = dataclasses.replace(at_13, generation=12)
    result = quote(at_12, world)
    assert not cre07(result.problems.get("physical", [])), result.problems


def test_the_house_rule_setting_changes_the_maximum(world: Any) -> None:
    world.chronicle.house_rule_overrides = {"generation_table_base": 8}
    world.chronicle.save()
    found = quote(dataclasses.replace(TOREADOR, extra_social=2), world).problems
    assert cre07(found["physical"]) == [
        "Social would be 9; generation 13 allows at most 8 in a trait area (a clan bonus point "
        "may go above it) (CRE-07)."
    ]


# --- Purchases ----------------------------------------------------------------------------------


@pytest.fixture
def bob(world: Any, make_character: Callable[..., Character]) -> Character:
    """A Ventrue at the maximum: physical 10 (one of it the clan bonus), willpower 10."""
    character = make_character(
        "Magnate", player="player_bob", clan="ventrue", clan_bonus="physical", physical=10
    )
    character.willpower = 10
    character.save()
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=character.player_id,
        amount=Decimal(40),
        kind=XpKind.AWARD,
        reason="test award",
        key="award:1",
    )
    return character


def request(character: Character, **kwargs: Any) -> XpPurchase:
    assert character.player is not None
    return purchase_request(character=character, by=character.player, **kwargs)


def test_willpower_above_the_maximum_is_refused_and_nothing_written(bob: Character) -> None:
    with pytest.raises(ValidationError) as caught:
        request(bob, kind="willpower")
    assert caught.value.message_dict["quantity"] == [
        "Willpower would be 11; generation 13 allows at most 10 (CRE-07)."
    ]
    assert not XpPurchase.objects.exists()


def test_a_trait_above_the_maximum_is_refused_not_counting_the_clan_bonus(
    bob: Character,
) -> None:
    # Physical 10 holds the Ventrue's +1 bonus, so 9 count: one more is allowed, two are not.
    with pytest.raises(ValidationError) as caught:
        request(bob, kind="trait", target="physical", quantity=2)
    assert caught.value.message_dict["target"] == [
        "Physical would be 11; generation 13 allows at most 10 (CRE-07)."
    ]
    assert not XpPurchase.objects.exists()
    assert request(bob, kind="trait", target="physical").status == PurchaseStatus.REQUESTED
    with pytest.raises(ValidationError, match="CRE-07"):
        request(bob, kind="trait", target="social", quantity=6)  # social 5 + 6 = 11


def test_approval_checks_the_maximum_again_and_writes_nothing(world: Any, bob: Character) -> None:
    purchase = request(bob, kind="trait", target="mental", quantity=2)
    Character.objects.filter(pk=bob.pk).update(mental=9)  # raised meanwhile by an ST
    with pytest.raises(ValidationError, match="CRE-07"):
        purchase_approve(purchase=purchase, by=world.users["storyteller"])
    purchase.refresh_from_db()
    assert purchase.status == PurchaseStatus.REQUESTED
    assert not XpEntry.objects.filter(kind=XpKind.PURCHASE).exists()
    bob.refresh_from_db()
    assert bob.mental == 9


def test_a_lower_generation_allows_more(bob: Character) -> None:
    Character.objects.filter(pk=bob.pk).update(generation=11)
    bob.refresh_from_db()
    assert request(bob, kind="willpower", quantity=2).cost == Decimal(6)


# --- Sheet --------------------------------------------------------------------------------------


def test_the_sheet_shows_the_generations_maximums(
    world: Any, make_character: Callable[..., Character]
) -> None:
    alice = make_character("Elder", generation=11)
    page = world.client("player_alice").get(f"/c/{world.chronicle.slug}/characters/{alice.pk}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert (
        "Maximums for generation 11 (CRE-07): 12 per trait area, 12 willpower, blood pool 12"
        in (text)
    )
    assert "<dt>Blood pool (CRE-07)</dt><dd>12</dd>" in text
