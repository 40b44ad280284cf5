"""Issue 14 through the services, the pages and the API: XP at the game only before play starts
(XP-01), a Tremere's other Thaumaturgy paths at the game (CLN-01, `tremere_paths_any_time`), and
items that cost at least 1 with a repair that costs less (ITM-01, ITM-02)."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.urls import reverse

from characters.models import Character, Item, PurchaseStatus, XpEntry, XpKind, XpPurchase
from characters.services import ledger, records
from characters.services.purchases import purchase_approve, purchase_quote, purchase_request
from chronicle import services
from chronicle.models import Chronicle

pytestmark = pytest.mark.django_db

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")  # the world chronicle's zone
# The world's game is on Saturday 2024-03-09; here it starts at 19:00 New York time.
PLAY_STARTS = dt.time(19, 0)
BEFORE_PLAY = dt.datetime(2024, 3, 9, 18, 59, tzinfo=NEW_YORK)
LATE_IN_PLAY = dt.datetime(2024, 3, 9, 23, 30, tzinfo=NEW_YORK)
API = "/api/chronicles/nightfall"


def award(world: Any, character: Character, amount: str = "20") -> None:
    assert character.player_id is not None
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=character.player_id,
        amount=Decimal(amount),
        kind=XpKind.AWARD,
        reason="test award",
        key=f"award:{character.pk}",
    )


def house(world: Any, **overrides: object) -> None:
    Chronicle.objects.filter(pk=world.chronicle.pk).update(house_rule_overrides=overrides)


@pytest.fixture
def starts_at_seven(world: Any) -> None:
    services.game_update(game=world.game, start_time=PLAY_STARTS)


@pytest.fixture
def alice(world: Any, make_character: Callable[..., Character]) -> Character:
    character = make_character("Mole", clan="nosferatu", disciplines={"potence": "1a"})
    award(world, character)
    return character


@pytest.fixture
def warlock(world: Any, make_character: Callable[..., Character]) -> Character:
    """A Tremere with Mind Thaumaturgy in-clan and 20 XP (CLN-01)."""
    character = make_character(
        "Warlock",
        clan="tremere",
        chosen_disciplines=["thaumaturgy_mind"],
        disciplines={"thaumaturgy_mind": "1a", "auspex": "1a"},
    )
    award(world, character)
    return character


def ask(character: Character, **kwargs: Any) -> XpPurchase:
    assert character.player is not None
    return purchase_request(character=character, by=character.player, **kwargs)


def moment_refusal(call: Callable[[], Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        call()
    problems = caught.value.message_dict.get("moment", [])
    assert problems, caught.value.message_dict
    return " ".join(problems)


# --- XP-01: services ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moment", "accepted"),
    [
        pytest.param(LATE_IN_PLAY, False, id="XP-01-2330-refused"),
        pytest.param(BEFORE_PLAY, True, id="XP-01-1859-accepted"),
        pytest.param(dt.datetime(2024, 3, 9, 19, 0, tzinfo=NEW_YORK), False, id="XP-01-1900"),
        pytest.param(dt.datetime(2024, 3, 9, 9, 0, tzinfo=NEW_YORK), True, id="XP-01-morning"),
    ],
)
def test_at_game_purchase_until_play_starts(
    world: Any, alice: Character, starts_at_seven: None, moment: dt.datetime, accepted: bool
) -> None:
    with time_machine.travel(moment, tick=False):
        if accepted:
            bought = ask(alice, kind="willpower", moment="game")
            assert bought.cycle == world.game.cycle
            return
        text = moment_refusal(lambda: ask(alice, kind="willpower", moment="game"))
    assert "Play started at 19:00" in text and "downtime" in text and "XP-01" in text
    assert not XpPurchase.objects.exists()


def test_the_start_is_read_in_the_chronicles_zone(
    world: Any, alice: Character, starts_at_seven: None
) -> None:
    """23:30 UTC on the game's day is 18:30 in New York: before play, so accepted."""
    with time_machine.travel(dt.datetime(2024, 3, 9, 23, 30, tzinfo=dt.UTC), tick=False):
        ask(alice, kind="willpower", moment="game")
    assert XpPurchase.objects.count() == 1


def test_a_game_without_a_start_time_takes_the_whole_day(world: Any, alice: Character) -> None:
    assert world.game.start_time is None
    with time_machine.travel(LATE_IN_PLAY, tick=False):
        ask(alice, kind="willpower", moment="game")
    assert XpPurchase.objects.count() == 1


def test_downtime_purchases_ignore_the_start(
    world: Any, alice: Character, starts_at_seven: None
) -> None:
    with time_machine.travel(LATE_IN_PLAY, tick=False):
        ask(alice, kind="willpower", moment="downtime")
    assert XpPurchase.objects.count() == 1


def test_asked_before_play_is_signed_off_after_it(
    world: Any, alice: Character, starts_at_seven: None
) -> None:
    """XP-01: the ST's sign-off comes later that night; what counts is when the player asked."""
    with time_machine.travel(BEFORE_PLAY, tick=False):
        asked = ask(alice, kind="willpower", moment="game")
    with time_machine.travel(LATE_IN_PLAY, tick=False):
        approved = purchase_approve(purchase=asked, by=world.users["storyteller"])
    assert approved.status == PurchaseStatus.APPROVED
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 1


def test_the_preview_shows_the_refusal(world: Any, alice: Character, starts_at_seven: None) -> None:
    quote = purchase_quote(character=alice, kind="willpower", moment="game", now=LATE_IN_PLAY)
    assert [p.field for p in quote.problems] == ["moment"]
    assert "Play started at 19:00" in quote.problems[0].message
    assert purchase_quote(character=alice, kind="willpower", moment="game", now=BEFORE_PLAY).ok


# --- XP-01: page and API --------------------------------------------------------------------------


BUY = {"kind": "willpower", "quantity": 1, "moment": "game"}


def test_buy_page_refuses_after_play_started_beside_when(
    world: Any, alice: Character, starts_at_seven: None
) -> None:
    url = reverse("purchase_create", args=["nightfall", alice.pk])
    with time_machine.travel(LATE_IN_PLAY, tick=False):
        response = world.client("player_alice").post(url, BUY)
    assert response.status_code == 400
    errors = response.context["form"].errors["moment"]
    assert any("Play started at 19:00" in e and "XP-01" in e for e in errors)
    assert "Play started at 19:00" in response.content.decode()
    assert not XpPurchase.objects.exists()
    with time_machine.travel(BEFORE_PLAY, tick=False):
        response = world.client("player_alice").post(url, BUY)
    assert response.status_code == 302
    assert XpPurchase.objects.count() == 1


def test_api_refuses_after_play_started_with_the_error_shape(
    world: Any, alice: Character, starts_at_seven: None
) -> None:
    body = {"character": alice.pk, **BUY}
    client = world.client("player_alice")
    with time_machine.travel(LATE_IN_PLAY, tick=False):
        quote = client.post(f"{API}/purchases/quote/", body, content_type="application/json")
        refused = client.post(f"{API}/purchases/", body, content_type="application/json")
    assert any(p["field"] == "moment" and "XP-01" in p["message"] for p in quote.json()["problems"])
    assert refused.status_code == 400
    assert "Play started at 19:00" in refused.json()["error"]["fields"]["moment"][0]
    assert not XpPurchase.objects.exists()
    with time_machine.travel(BEFORE_PLAY, tick=False):
        created = client.post(f"{API}/purchases/", body, content_type="application/json")
    assert created.status_code == 201


# --- CLN-01: a Tremere's other Thaumaturgy paths at the game --------------------------------------


BLOOD_1A = {"kind": "discipline", "discipline": "thaumaturgy_blood", "levels": ["1a"]}


def test_tremere_buys_another_path_at_the_game_by_default(world: Any, warlock: Character) -> None:
    """CLN-01: "may be bought any time at out-of-clan cost without requiring a teacher"."""
    with time_machine.travel(BEFORE_PLAY, tick=False):
        bought = ask(warlock, moment="game", **BLOOD_1A)
    assert bought.cost == Decimal(4)  # DIS-05 TV: 0 (no path fee in play) + 3 + 1
    assert bought.teacher is None and bought.cycle == world.game.cycle
    purchase_approve(purchase=bought, by=world.users["storyteller"], now=LATE_IN_PLAY)
    assert warlock.disciplines.filter(discipline="thaumaturgy_blood", level=1).exists()


def test_tremere_paths_at_the_game_off_keeps_downtime_only(world: Any, warlock: Character) -> None:
    house(world, tremere_paths_any_time=False)
    warlock = Character.objects.get(pk=warlock.pk)
    with time_machine.travel(BEFORE_PLAY, tick=False):
        text = moment_refusal(lambda: ask(warlock, moment="game", **BLOOD_1A))
        assert "DIS-08" in text
        ask(warlock, moment="downtime", **BLOOD_1A)  # in downtime it still goes ahead
    assert XpPurchase.objects.count() == 1


def test_other_clans_out_of_clan_stays_downtime_only(
    world: Any, make_character: Callable[..., Character]
) -> None:
    """Only a Tremere's paths: a Brujah's out-of-clan level at the game is still refused."""
    brujah = make_character("Brawler", clan="brujah", disciplines={"auspex": "1b"})
    award(world, brujah)
    with time_machine.travel(BEFORE_PLAY, tick=False):
        text = moment_refusal(
            lambda: ask(
                brujah, kind="discipline", discipline="auspex", levels=["2a"], moment="game"
            )
        )
    assert "DIS-08" in text


# --- ITM-01 / ITM-02: items ---------------------------------------------------------------------

NOW = dt.datetime(2024, 3, 20, 12, 0, tzinfo=NEW_YORK)


def add_item(pc: Character, by: Any, cost: int) -> Item:
    return records.item_add(
        character=pc,
        name="Knife",
        concealability="blue",
        armor=0,
        purchase_cost=cost,
        potence_reinforced=False,
        by=by,
        now=NOW,
    )


def test_an_item_of_cost_0_is_refused_itm01(world: Any, alice: Character) -> None:
    with pytest.raises(ValidationError) as caught:
        add_item(alice, world.users["storyteller"], 0)
    assert "ITM-01" in caught.value.message_dict["purchase_cost"][0]
    assert not Item.objects.exists()


@pytest.mark.parametrize(
    ("cost", "overrides", "repair"),
    [
        pytest.param(1, {}, 0, id="ITM-02-cost-1-free-by-default"),
        pytest.param(1, {"item_repair_free_at_cost_one": False}, 1, id="ITM-02-cost-1-paid"),
        pytest.param(2, {}, 1, id="ITM-02-cost-2-repairs-1"),
        pytest.param(5, {}, 3, id="ITM-02-cost-5-repairs-3"),
        pytest.param(2, {"item_repair_fraction": "0.9"}, 1, id="ITM-02-fraction-below-cost"),
    ],
)
def test_repair_costs_less_than_the_item(
    world: Any, alice: Character, cost: int, overrides: dict[str, object], repair: int
) -> None:
    house(world, **overrides)
    item = add_item(alice, world.users["storyteller"], cost)
    assert records.item_repair(item=item, by=world.users["storyteller"], now=NOW) == repair


def test_an_old_free_item_cannot_be_repaired_for_less(world: Any, alice: Character) -> None:
    item = Item.objects.create(
        character=alice,
        name="Old knife",
        concealability="blue",
        purchase_cost=0,
        expires_on=dt.date(2024, 4, 1),
    )
    with pytest.raises(ValidationError, match="ITM-02"):
        records.item_repair(item=item, by=world.users["storyteller"], now=NOW)
    item.refresh_from_db()
    assert item.expires_on == dt.date(2024, 4, 1) and item.repaired_at is None


def records_api(pc: Character, kind: str) -> str:
    return f"{API}/characters/{pc.pk}/records/{kind}/"


def test_records_api_refuses_cost_0_and_repairs_cost_1_free(world: Any, alice: Character) -> None:
    client = world.client("storyteller")
    item = {"name": "Knife", "concealability": "blue", "armor": 0, "purchase_cost": 0}
    refused = client.post(records_api(alice, "item"), item, content_type="application/json")
    assert refused.status_code == 400
    assert "ITM-01" in refused.json()["error"]["fields"]["purchase_cost"][0]
    assert not Item.objects.exists()
    item["purchase_cost"] = 1
    assert (
        client.post(records_api(alice, "item"), item, content_type="application/json").status_code
        == 200
    )
    repaired = client.post(
        records_api(alice, "item-repair"),
        {"item": Item.objects.get().pk},
        content_type="application/json",
    )
    assert repaired.status_code == 200
    assert repaired.json()["message"] == "Item repaired free of charge."


def test_records_page_shows_the_cost_refusal_beside_the_field(world: Any, alice: Character) -> None:
    url = reverse("character_action", args=["nightfall", alice.pk, "item"])
    data = {
        "item-name": "Knife",
        "item-concealability": "blue",
        "item-armor": "0",
        "item-purchase_cost": "0",
    }
    response = world.client("storyteller").post(url, data)
    assert response.status_code == 400
    assert "An item costs at least 1 (ITM-01)." in response.content.decode()
    assert not Item.objects.exists()
