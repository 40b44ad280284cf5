"""XP purchases in play (XP-01..05, DIS-02..08, CRE-03/04/09, SEW-01): every refusal names its
rule and writes nothing; approval writes one ledger entry and the effect, once."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError

from characters.models import (
    Character,
    Diablerie,
    DisciplineLevel,
    GenerationStep,
    PurchaseStatus,
    XpEntry,
    XpKind,
    XpPurchase,
)
from characters.services import ledger
from characters.services.purchases import (
    diablerie_step_decline,
    purchase_approve,
    purchase_quote,
    purchase_reject,
    purchase_request,
    purchase_withdraw,
)

pytestmark = pytest.mark.django_db

# Three days after the world's game (2024-03-09): its cycle is open.
DOWNTIME = dt.datetime(2024, 3, 12, 18, 0, tzinfo=dt.UTC)
# The evening of the game itself, in the chronicle's time zone (New York).
GAME_NIGHT = dt.datetime(2024, 3, 9, 23, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(DOWNTIME, tick=False):
        yield


def award(world: Any, character: Character, amount: str, key: str = "award:1") -> None:
    assert character.player_id is not None
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=character.player_id,
        amount=Decimal(amount),
        kind=XpKind.AWARD,
        reason="test award",
        key=key,
    )


def balance(world: Any, character: Character) -> Decimal:
    assert character.player_id is not None
    return ledger.xp_balance(chronicle=world.chronicle, player=character.player_id)


def refused(call: Callable[[], Any], rule: str) -> str:
    """Run a service expected to refuse; the message must cite `rule`."""
    with pytest.raises(ValidationError) as caught:
        call()
    text = " ".join(caught.value.messages)
    assert rule in text, text
    return text


def nothing_written() -> None:
    assert XpPurchase.objects.count() == 0
    assert not XpEntry.objects.filter(kind=XpKind.PURCHASE).exists()


@pytest.fixture
def alice(world: Any, make_character: Callable[..., Character]) -> Character:
    """A Nosferatu with 20 XP (animalism, obfuscate, potence in-clan)."""
    character = make_character(
        "Mole", clan="nosferatu", disciplines={"obfuscate": "1b", "potence": "1a"}
    )
    award(world, character, "20")
    return character


@pytest.fixture
def auspex_teacher(make_character: Callable[..., Character]) -> Character:
    """A Toreador NPC with Auspex in-clan at 2a: may teach its basics (DIS-07)."""
    return make_character("Muse", player=None, clan="toreador", disciplines={"auspex": "2a"})


def request(world: Any, character: Character, **kwargs: Any) -> XpPurchase:
    assert character.player is not None
    return purchase_request(character=character, by=character.player, **kwargs)


# --- Refusals -----------------------------------------------------------------------------------


def test_out_of_clan_basic_without_teacher_is_refused_dis07(world: Any, alice: Character) -> None:
    refused(
        lambda: request(world, alice, kind="discipline", discipline="auspex", levels=["1a"]),
        "DIS-07",
    )
    nothing_written()


def test_teacher_with_the_discipline_only_out_of_clan_is_refused_dis07(
    world: Any, alice: Character, make_character: Callable[..., Character]
) -> None:
    brujah = make_character("Brawler", player=None, clan="brujah", disciplines={"auspex": "2b"})
    # An ST asking on the player's behalf reads why this teacher cannot teach.
    text = refused(
        lambda: purchase_request(
            character=alice,
            by=world.users["storyteller"],
            kind="discipline",
            discipline="auspex",
            levels=["1a"],
            teacher=brujah,
        ),
        "DIS-07",
    )
    assert "out-of-clan" in text
    # The player is told only that the teacher cannot teach: nothing about them.
    text = refused(
        lambda: request(
            world, alice, kind="discipline", discipline="auspex", levels=["1a"], teacher=brujah
        ),
        "DIS-07",
    )
    assert "Brawler" not in text and "out-of-clan" not in text and "2b" not in text
    nothing_written()


def test_taught_out_of_clan_level_costs_4_dis05(
    world: Any, alice: Character, auspex_teacher: Character
) -> None:
    quote = purchase_quote(
        character=alice,
        kind="discipline",
        discipline="auspex",
        levels=["1a"],
        teacher=auspex_teacher,
    )
    assert quote.ok, quote.problems
    assert quote.cost == Decimal(4)  # DIS-05 TV: 0 + 3 + 1
    assert XpPurchase.objects.count() == 0  # a quote writes nothing


def test_second_level_in_one_cycle_is_refused_dis08(world: Any, alice: Character) -> None:
    first = request(world, alice, kind="discipline", discipline="potence", levels=["1b"])
    refused(
        lambda: request(world, alice, kind="discipline", discipline="obfuscate", levels=["2a"]),
        "DIS-08",
    )
    purchase_approve(purchase=first, by=world.users["storyteller"])
    refused(
        lambda: request(world, alice, kind="discipline", discipline="obfuscate", levels=["2a"]),
        "DIS-08",
    )
    assert XpPurchase.objects.count() == 1


def test_out_of_clan_at_a_game_is_refused_dis08(
    world: Any, alice: Character, auspex_teacher: Character
) -> None:
    with time_machine.travel(GAME_NIGHT, tick=False):
        refused(
            lambda: request(
                world,
                alice,
                kind="discipline",
                discipline="auspex",
                levels=["1a"],
                teacher=auspex_teacher,
                moment="game",
            ),
            "DIS-08",
        )
        # In-clan at the game is fine, in the cycle of tonight's game.
        bought = request(
            world, alice, kind="discipline", discipline="potence", levels=["1b"], moment="game"
        )
    assert bought.cycle == world.game.cycle
    assert XpPurchase.objects.count() == 1


def test_at_game_purchase_without_a_game_today_is_refused_xp01(
    world: Any, alice: Character
) -> None:
    refused(lambda: request(world, alice, kind="willpower", moment="game"), "XP-01")
    nothing_written()


def test_ghoul_buying_dominate_is_refused_cre03(
    world: Any, make_character: Callable[..., Character]
) -> None:
    ghoul = make_character("Renfield", player="player_bob", creature="ghoul")
    award(world, ghoul, "20")
    refused(
        lambda: request(world, ghoul, kind="discipline", discipline="dominate", levels=["1a"]),
        "CRE-03",
    )
    nothing_written()


def test_kine_buying_any_discipline_is_refused_cre04(
    world: Any, make_character: Callable[..., Character]
) -> None:
    kine = make_character("Officer Dale", player="player_bob", creature="kine")
    award(world, kine, "20")
    refused(
        lambda: request(world, kine, kind="discipline", discipline="potence", levels=["1a"]),
        "CRE-04",
    )
    nothing_written()


def test_background_not_approved_blocks_spending_xp02_cre09(
    world: Any, make_character: Callable[..., Character]
) -> None:
    fresh = make_character("Newcomer", player="player_bob", background_approved=False)
    award(world, fresh, "20")
    text = refused(lambda: request(world, fresh, kind="trait", target="mental"), "XP-02")
    assert "CRE-09" in text
    nothing_written()


def test_not_enough_xp_is_refused(world: Any, make_character: Callable[..., Character]) -> None:
    poor = make_character("Pauper", player="player_bob")
    award(world, poor, "2")
    refused(lambda: request(world, poor, kind="willpower"), "XP-02")  # willpower costs 3
    nothing_written()


def test_queued_diablerie_step_comes_first_xp05(world: Any, alice: Character) -> None:
    Diablerie.objects.create(
        diablerist=alice,
        victim_name="Old One",
        victim_generation=9,
        occurred_on=dt.date(2024, 3, 9),
        black_veins_until=dt.date(2024, 9, 9),
        generation_step=GenerationStep.QUEUED,
        recorded_by=world.users["storyteller"],
        recorded_at=DOWNTIME,
    )
    refused(lambda: request(world, alice, kind="trait", target="mental"), "XP-05")
    nothing_written()
    step = request(world, alice, kind="generation")
    assert step.cost == Decimal(3)  # XP-05 TV: generation price 2 + 1
    purchase_approve(purchase=step, by=world.users["storyteller"])
    alice.refresh_from_db()
    assert alice.generation == 12
    assert Diablerie.objects.get().generation_step == GenerationStep.TAKEN
    # Only one step per downtime (XP-05), and the step is no longer queued.
    assert request(world, alice, kind="trait", target="mental").status == PurchaseStatus.REQUESTED


def test_declining_the_diablerie_step_unblocks_other_purchases_xp05(
    world: Any, alice: Character
) -> None:
    diablerie = Diablerie.objects.create(
        diablerist=alice,
        victim_name="Old One",
        victim_generation=9,
        occurred_on=dt.date(2024, 3, 9),
        black_veins_until=dt.date(2024, 9, 9),
        generation_step=GenerationStep.QUEUED,
        recorded_by=world.users["storyteller"],
        recorded_at=DOWNTIME,
    )
    assert alice.player is not None
    diablerie_step_decline(diablerie=diablerie, by=alice.player)
    diablerie_step_decline(diablerie=diablerie, by=alice.player)  # twice is a no-op
    assert Diablerie.objects.get().generation_step == GenerationStep.DECLINED
    assert request(world, alice, kind="trait", target="mental").cost == Decimal(1)


def test_sewer_lore_needs_a_nosferatu_teacher_sew01(
    world: Any, make_character: Callable[..., Character]
) -> None:
    toreador = make_character("Dancer", player="player_bob")
    award(world, toreador, "20")
    refused(lambda: request(world, toreador, kind="sewer_lore"), "SEW-01")
    weak = make_character("Rat", player=None, clan="nosferatu", sewer_lore=0)
    refused(lambda: request(world, toreador, kind="sewer_lore", teacher=weak), "SEW-01")
    nothing_written()
    guide = make_character("Guide", player=None, clan="nosferatu", sewer_lore=3)
    assert request(world, toreador, kind="sewer_lore", teacher=guide).cost == Decimal(1)


def test_player_cannot_ask_for_someone_elses_character(world: Any, alice: Character) -> None:
    with pytest.raises(PermissionDenied):
        purchase_request(character=alice, by=world.users["player_bob"], kind="willpower")
    nothing_written()


# --- Approval ----------------------------------------------------------------------------------


def test_approval_writes_one_ledger_entry_and_the_levels_xp01(
    world: Any, alice: Character, auspex_teacher: Character
) -> None:
    purchase = request(
        world, alice, kind="discipline", discipline="auspex", levels=["1a"], teacher=auspex_teacher
    )
    storyteller = world.users["storyteller"]
    approved = purchase_approve(purchase=purchase, by=storyteller)
    assert approved.status == PurchaseStatus.APPROVED
    assert approved.decided_by == storyteller and approved.decided_at == DOWNTIME
    entry = XpEntry.objects.get(kind=XpKind.PURCHASE)
    assert entry.amount == Decimal(-4) and entry.key == f"purchase:{purchase.pk}"
    assert approved.ledger_entry == entry
    level = DisciplineLevel.objects.get(character=alice, discipline="auspex")
    assert (level.code, level.acquired, level.teacher, level.cost) == (
        "1a",
        "play",
        auspex_teacher,
        4,
    )
    assert level.cycle == world.game.cycle and level.purchase == purchase
    assert balance(world, alice) == Decimal(16)


def test_second_approval_is_refused_and_writes_nothing(world: Any, alice: Character) -> None:
    purchase = request(world, alice, kind="trait", target="physical", quantity=2)
    purchase_approve(purchase=purchase, by=world.users["storyteller"])
    # The same ST's double click gets the approved purchase back.
    again = purchase_approve(purchase=purchase, by=world.users["storyteller"])
    assert again.status == PurchaseStatus.APPROVED
    text = refused(lambda: purchase_approve(purchase=purchase, by=world.users["admin"]), "XP-01")
    assert "storyteller" in text and "already approved" in text
    assert XpEntry.objects.filter(kind=XpKind.PURCHASE).count() == 1
    alice.refresh_from_db()
    assert alice.physical == 9


def test_double_submit_makes_one_request(world: Any, alice: Character) -> None:
    first = request(world, alice, kind="influence", target="herd")
    second = request(world, alice, kind="influence", target="herd")
    assert first.pk == second.pk
    assert XpPurchase.objects.count() == 1


def test_balance_never_goes_negative(world: Any, make_character: Callable[..., Character]) -> None:
    bob = make_character("Bobby", player="player_bob")
    award(world, bob, "4")
    one = request(world, bob, kind="willpower")  # 3 XP each; both fit alone
    two = request(world, bob, kind="trait", target="social", quantity=2)
    purchase_approve(purchase=one, by=world.users["storyteller"])
    refused(lambda: purchase_approve(purchase=two, by=world.users["storyteller"]), "XP-02")
    assert balance(world, bob) == Decimal(1)
    two.refresh_from_db()
    assert two.status == PurchaseStatus.REQUESTED


def test_a_player_cannot_approve(world: Any, alice: Character) -> None:
    purchase = request(world, alice, kind="willpower")
    with pytest.raises(PermissionDenied):
        purchase_approve(purchase=purchase, by=world.users["player_alice"])
    assert not XpEntry.objects.filter(kind=XpKind.PURCHASE).exists()


def test_reject_needs_a_note_and_spends_nothing(world: Any, alice: Character) -> None:
    purchase = request(world, alice, kind="willpower")
    with pytest.raises(ValidationError):
        purchase_reject(purchase=purchase, by=world.users["storyteller"], note=" ")
    rejected = purchase_reject(purchase=purchase, by=world.users["storyteller"], note="Not now.")
    assert rejected.status == PurchaseStatus.REJECTED and rejected.decision_note == "Not now."
    refused(lambda: purchase_approve(purchase=purchase, by=world.users["storyteller"]), "XP-01")
    assert balance(world, alice) == Decimal(20)


def test_withdraw_by_the_player_while_requested(world: Any, alice: Character) -> None:
    purchase = request(world, alice, kind="willpower")
    with pytest.raises(PermissionDenied):
        purchase_withdraw(purchase=purchase, by=world.users["storyteller"])
    assert alice.player is not None
    assert purchase_withdraw(purchase=purchase, by=alice.player).status == "withdrawn"
    assert purchase_withdraw(purchase=purchase, by=alice.player).status == "withdrawn"
    refused(lambda: purchase_approve(purchase=purchase, by=world.users["storyteller"]), "XP-01")


def test_approval_rechecks_the_rules(world: Any, alice: Character) -> None:
    """The world moves between request and sign-off: a level bought meanwhile by another
    purchase makes the second one fail DIS-08 at approval, and nothing is written."""
    first = request(world, alice, kind="discipline", discipline="potence", levels=["1b"])
    # An ST approves another level for this cycle straight in the database (e.g. a correction).
    DisciplineLevel.objects.create(
        character=alice, discipline="animalism", level=1, acquired="play", cycle=world.game.cycle
    )
    refused(lambda: purchase_approve(purchase=first, by=world.users["storyteller"]), "DIS-08")
    assert not XpEntry.objects.filter(kind=XpKind.PURCHASE).exists()
    assert not DisciplineLevel.objects.filter(discipline="potence", level=2).exists()
