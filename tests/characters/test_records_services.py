"""The storytellers' record services on PostgreSQL: every refusal names its rule and writes
nothing (BLD, XP-04..07, TOR, ITM, SEW, MSC, DIS-10)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.exceptions import ValidationError

from characters.models import (
    Captivity,
    Character,
    Diablerie,
    Item,
    KnownSewerLocation,
    Ritual,
    Status,
    StoredBlood,
    TorporHold,
    XpEntry,
    XpKind,
)
from characters.services import ledger, rebuild, records
from chronicle import services as chronicle_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NOW = dt.datetime(2024, 3, 20, 21, 0, tzinfo=ZoneInfo("America/New_York"))
TODAY = dt.date(2024, 3, 20)


@pytest.fixture
def st(world: Any) -> Any:
    return world.users["storyteller"]


def give(world: Any, character: Character, amount: str, kind: str, key: str) -> None:
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=character.player_id,
        amount=Decimal(amount),
        kind=kind,
        reason=key,
        key=key,
        character=character,
        now=NOW,
    )


# --- Stored blood -------------------------------------------------------------------------------


def test_bld03_kine_blood_gets_its_expiry(make_character: Any, st: Any) -> None:
    holder = make_character("Holder")
    blood = records.stored_blood_add(
        holder=holder,
        location="haven fridge",
        on_body=False,
        points=5,
        donor_type="kine",
        donors=[],
        donor_note="a blood bank",
        collected_on=dt.date(2024, 1, 15),
        by=st,
        now=NOW,
    )
    assert blood.unusable_from == dt.date(2024, 4, 15)


def test_bld01_on_body_limit_is_half_control(make_character: Any, st: Any) -> None:
    # generation 13 - 0 levels + willpower 2 = 15, capped at 10 → 5 on the body.
    holder = make_character("Holder", willpower=2)
    records.stored_blood_add(
        holder=holder,
        location="",
        on_body=True,
        points=5,
        donor_type="kine",
        donors=[],
        donor_note="",
        collected_on=TODAY,
        by=st,
        now=NOW,
    )
    with pytest.raises(ValidationError, match="BLD-01"):
        records.stored_blood_add(
            holder=holder,
            location="",
            on_body=True,
            points=1,
            donor_type="kine",
            donors=[],
            donor_note="",
            collected_on=TODAY,
            by=st,
            now=NOW,
        )
    assert StoredBlood.objects.count() == 1


def test_bld05_ghoul_holds_at_most_three_kindred_blood(make_character: Any, st: Any) -> None:
    ghoul = make_character("Renfield", creature="ghoul", player=None)
    donor = make_character("Donor", player=None)
    with pytest.raises(ValidationError, match="BLD-05"):
        records.stored_blood_add(
            holder=ghoul,
            location="flask",
            on_body=False,
            points=4,
            donor_type="kindred",
            donors=[donor],
            donor_note="",
            collected_on=TODAY,
            by=st,
            now=NOW,
        )
    assert not StoredBlood.objects.exists()


def test_bld02_transfer_splits_and_keeps_donors_and_dates(make_character: Any, st: Any) -> None:
    holder = make_character("Holder")
    other = make_character("Other", player="player_bob")
    donors = [make_character(n, player=None) for n in ("D1", "D2")]
    blood = records.stored_blood_add(
        holder=holder,
        location="car",
        on_body=False,
        points=4,
        donor_type="mixed_kindred",
        donors=donors,
        donor_note="",
        collected_on=dt.date(2024, 1, 2),
        by=st,
        now=NOW,
    )
    moved = records.stored_blood_transfer(
        blood=blood, to_holder=other, to_location="crypt", points=3, by=st, now=NOW
    )
    blood.refresh_from_db()
    assert (blood.points, moved.points, moved.holder_id) == (1, 3, other.pk)
    assert moved.collected_on == dt.date(2024, 1, 2)
    assert set(moved.donors.all()) == set(donors)
    with pytest.raises(ValidationError, match="BLD-02"):
        records.stored_blood_transfer(blood=blood, to_location="bush", points=2, by=st, now=NOW)
    blood.refresh_from_db()
    assert blood.points == 1


# --- Diablerie, death, retirement ---------------------------------------------------------------


def test_xp04_diablerie_of_a_victim_in_torpor(make_character: Any, st: Any) -> None:
    diablerist = make_character("Diablerist")
    victim = make_character("Victim", player="player_bob", generation=11)
    diablerie = records.diablerie_record(
        diablerist=diablerist,
        victim=victim,
        victim_name="",
        victim_generation=0,
        occurred_on=dt.date(2024, 3, 1),
        victim_in_torpor=True,
        killed_by_aggravated_or_coup=False,
        by=st,
        now=NOW,
    )
    assert diablerie.black_veins_until == dt.date(2024, 9, 1)
    assert diablerie.generation_step == "queued"  # XP-05: 11 is lower than 13
    victim.refresh_from_db()
    assert (victim.status, victim.died_on) == (Status.DEAD, dt.date(2024, 3, 1))


@pytest.mark.parametrize(
    ("in_torpor", "coup"),
    [pytest.param(False, False, id="XP-04-not-torpid"), pytest.param(True, True, id="XP-04-coup")],
)
def test_xp04_diablerie_refused(make_character: Any, st: Any, in_torpor: bool, coup: bool) -> None:
    diablerist = make_character("Diablerist")
    victim = make_character("Victim", player="player_bob")
    with pytest.raises(ValidationError, match="XP-04"):
        records.diablerie_record(
            diablerist=diablerist,
            victim=victim,
            victim_name="",
            victim_generation=0,
            occurred_on=TODAY,
            victim_in_torpor=in_torpor,
            killed_by_aggravated_or_coup=coup,
            by=st,
            now=NOW,
        )
    victim.refresh_from_db()
    assert victim.status == Status.ACTIVE
    assert not Diablerie.objects.exists()


def test_xp06_retirement_refund_40_spent_5_unspent(
    world: Any, make_character: Any, st: Any
) -> None:
    pc = make_character("Old")
    give(world, pc, "45", XpKind.AWARD, "award")
    give(world, pc, "-40", XpKind.PURCHASE, "purchase")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)  # twice: once
    credit = XpEntry.objects.get(kind=XpKind.RETIREMENT)
    assert (credit.amount, credit.key) == (Decimal(20), f"retirement:{pc.pk}")
    assert ledger.xp_balance(chronicle=world.chronicle, player=pc.player_id) == Decimal(25)
    pc.refresh_from_db()
    assert (pc.status, pc.retired_on) == (Status.RETIRED, TODAY)


def test_xp06_death_refund_once(world: Any, make_character: Any, st: Any) -> None:
    pc = make_character("Doomed")
    give(world, pc, "10", XpKind.AWARD, "award")
    give(world, pc, "-10", XpKind.PURCHASE, "purchase")
    for _ in range(2):
        records.character_death_record(character=pc, died_on=TODAY, by=st, now=NOW)
    assert ledger.xp_balance(chronicle=world.chronicle, player=pc.player_id) == Decimal(5)
    pc.refresh_from_db()
    assert pc.status == Status.DEAD


def test_xp07_return_from_retirement(world: Any, make_character: Any, st: Any) -> None:
    pc = make_character("Back")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    new = make_character("New")
    with pytest.raises(ValidationError, match="XP-07"):
        rebuild.character_return(character=pc, by=st, now=NOW)
    records.character_retire(character=new, on=TODAY, by=st, now=NOW)
    rebuild.character_return(character=pc, by=st, now=NOW)
    pc.refresh_from_db()
    assert pc.status == Status.ACTIVE


def test_xp07_dead_character_cannot_return(make_character: Any, st: Any) -> None:
    pc = make_character("Gone")
    records.character_death_record(character=pc, died_on=TODAY, by=st, now=NOW)
    with pytest.raises(ValidationError, match="XP-07"):
        rebuild.character_return(character=pc, by=st, now=NOW)
    pc.refresh_from_db()
    assert pc.status == Status.DEAD


@pytest.mark.parametrize("status", [Status.TORPOR, Status.STAKED])
def test_xp07_no_return_while_another_pc_is_in_torpor_or_staked(
    make_character: Any, st: Any, status: str
) -> None:
    """A PC in torpor or staked may recover (TOR-01) and would then be a second active PC."""
    pc = make_character("Back")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    make_character("Sleeper", status=status)
    with pytest.raises(ValidationError, match=r"Sleeper in play.*\(XP-07\)"):
        rebuild.character_return(character=pc, by=st, now=NOW)
    pc.refresh_from_db()
    assert (pc.status, pc.retired_on) == (Status.RETIRED, TODAY)


def test_xp06_death_by_the_rules_credits_without_an_actor(world: Any, make_character: Any) -> None:
    """TOR-02: a death nobody recorded (the captives sweep) still credits XP-06; the entry has
    no actor."""
    pc = make_character("Doomed")
    give(world, pc, "10", XpKind.AWARD, "award")
    give(world, pc, "-10", XpKind.PURCHASE, "purchase")
    records.character_death_record(character=pc, died_on=TODAY, by=None, now=NOW)
    credit = XpEntry.objects.get(kind=XpKind.RETIREMENT)
    assert (credit.amount, credit.actor_id) == (Decimal(5), None)


# --- Torpor and captives ------------------------------------------------------------------------


def test_tor01_second_consecutive_hold_refused(world: Any, make_character: Any, st: Any) -> None:
    holder = make_character("Holder")
    captive = make_character("Captive", player="player_bob")
    second = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 13))
    records.torpor_hold_record(
        holder=holder, captive=captive, cycle=world.game.cycle, by=st, now=NOW
    )
    with pytest.raises(ValidationError, match="TOR-01"):
        records.torpor_hold_record(
            holder=holder, captive=captive, cycle=second.cycle, by=st, now=NOW
        )
    assert TorporHold.objects.count() == 1


def test_tor01_a_hold_puts_the_captive_in_torpor(world: Any, make_character: Any, st: Any) -> None:
    """The hold is what keeps the captive in torpor: without the status the sweep's recovery
    (torpor → active once the hold ends) would never apply."""
    holder = make_character("Holder", player=None)
    captive = make_character("Captive", player="player_bob")
    records.torpor_hold_record(
        holder=holder, captive=captive, cycle=world.game.cycle, by=st, now=NOW
    )
    assert captive.status == Status.TORPOR
    captive.refresh_from_db()
    assert captive.status == Status.TORPOR


def test_tor01_a_hold_on_a_staked_captive_keeps_it_staked(
    world: Any, make_character: Any, st: Any
) -> None:
    holder = make_character("Holder", player=None)
    captive = make_character("Captive", player="player_bob", status=Status.STAKED)
    records.torpor_hold_record(
        holder=holder, captive=captive, cycle=world.game.cycle, by=st, now=NOW
    )
    captive.refresh_from_db()
    assert captive.status == Status.STAKED


def test_tor01_refused_hold_leaves_the_captive_active(
    world: Any, make_character: Any, st: Any
) -> None:
    holder = make_character("Holder", player=None)
    captive = make_character("Captive", player="player_bob")
    second = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 13))
    records.torpor_hold_record(
        holder=holder, captive=captive, cycle=world.game.cycle, by=st, now=NOW
    )
    Character.objects.filter(pk=captive.pk).update(status=Status.ACTIVE)  # recovered since
    with pytest.raises(ValidationError, match="TOR-01"):
        records.torpor_hold_record(
            holder=holder, captive=captive, cycle=second.cycle, by=st, now=NOW
        )
    captive.refresh_from_db()
    assert captive.status == Status.ACTIVE


def test_tor02_captivity_deadline_and_kill(world: Any, make_character: Any, st: Any) -> None:
    captor = make_character("Captor")
    captive = make_character("Captive", player="player_bob")
    captivity = records.captivity_record(
        captive=captive, captor=captor, since=dt.date(2024, 3, 1), by=st, now=NOW
    )
    assert captivity.deadline_game == world.game  # the game of 2024-03-09
    with pytest.raises(ValidationError, match="TOR-02"):
        records.captivity_record(captive=captive, captor=captor, since=TODAY, by=st, now=NOW)
    assert Captivity.objects.count() == 1
    records.captivity_resolve(captivity=captivity, outcome="killed", by=st, now=NOW)
    captive.refresh_from_db()
    assert captive.status == Status.DEAD
    with pytest.raises(ValidationError, match="TOR-02"):
        records.captivity_resolve(captivity=captivity, outcome="released", by=st, now=NOW)


# --- Items --------------------------------------------------------------------------------------


def test_itm01_item_expiry_and_heavy_armor_is_red(make_character: Any, st: Any) -> None:
    pc = make_character("Owner")
    item = records.item_add(
        character=pc,
        name="Knife",
        concealability="blue",
        armor=0,
        purchase_cost=2,
        potence_reinforced=False,
        by=st,
        now=NOW,
    )
    assert item.expires_on == dt.date(2024, 9, 20)
    with pytest.raises(ValidationError, match="ITM-01"):
        records.item_add(
            character=pc,
            name="Plate",
            concealability="yellow",
            armor=4,
            purchase_cost=2,
            potence_reinforced=False,
            by=st,
            now=NOW,
        )
    assert Item.objects.count() == 1


def test_itm02_repair_costs_half_and_refreshes(make_character: Any, st: Any) -> None:
    pc = make_character("Owner")
    item = records.item_add(
        character=pc,
        name="Coat",
        concealability="yellow",
        armor=1,
        purchase_cost=5,
        potence_reinforced=False,
        by=st,
        now=NOW,
    )
    later = NOW + dt.timedelta(days=30)
    assert records.item_repair(item=item, by=st, now=later) == 3
    item.refresh_from_db()
    assert item.expires_on == dt.date(2024, 10, 19)


def test_itm03_downgrade_costs_three_times_once(make_character: Any, st: Any) -> None:
    pc = make_character("Owner")
    item = records.item_add(
        character=pc,
        name="Rifle",
        concealability="red",
        armor=0,
        purchase_cost=6,
        potence_reinforced=False,
        by=st,
        now=NOW,
    )  # 4 + 2 attachments
    assert records.item_downgrade(item=item, by=st, now=NOW) == 18
    item.refresh_from_db()
    assert (item.concealability, item.downgraded) == ("yellow", True)
    with pytest.raises(ValidationError, match="ITM-03"):
        records.item_downgrade(item=item, by=st, now=NOW)
    item.refresh_from_db()
    assert item.concealability == "yellow"


# --- Sewers -------------------------------------------------------------------------------------


def test_sew02_slots_and_sew03_level(world: Any, make_character: Any, st: Any) -> None:
    nos = make_character("Nos", clan="nosferatu", sewer_lore=2)
    low = records.sewer_location_add(
        chronicle=world.chronicle, number=1, level=1, description="", defenders=[], by=st
    )
    deep = records.sewer_location_add(
        chronicle=world.chronicle, number=2, level=3, description="", defenders=[], by=st
    )
    with pytest.raises(ValidationError, match="SEW-03"):
        records.sewer_location_add(
            chronicle=world.chronicle, number=1, level=1, description="", defenders=[], by=st
        )
    with pytest.raises(ValidationError, match="SEW-03"):
        records.sewer_location_learn(character=nos, location=deep, on=TODAY, by=st)
    known = records.sewer_location_learn(character=nos, location=low, on=TODAY, by=st)
    # Nosferatu lore 2 → 8 slots; a non-Nosferatu with lore 1 has one.
    other = make_character("Other", player="player_bob", sewer_lore=1)
    records.sewer_location_learn(character=other, location=low, on=TODAY, by=st)
    third = records.sewer_location_add(
        chronicle=world.chronicle, number=3, level=1, description="", defenders=[], by=st
    )
    with pytest.raises(ValidationError, match="SEW-02"):
        records.sewer_location_learn(character=other, location=third, on=TODAY, by=st)
    with pytest.raises(ValidationError, match="SEW-03"):
        records.sewer_location_forget(known=known, in_downtime=False, by=st, now=NOW)
    records.sewer_location_forget(known=known, in_downtime=True, by=st, now=NOW)
    assert KnownSewerLocation.objects.filter(forgotten_on__isnull=True).count() == 1


def test_sew04_group_search_at_three_times_is_enough(
    world: Any, make_character: Any, st: Any
) -> None:
    defender = make_character("Defender", player=None, clan="nosferatu", sewer_lore=2)
    spot = records.sewer_location_add(
        chronicle=world.chronicle, number=7, level=5, description="", defenders=[defender], by=st
    )
    weak = [make_character("W1", player=None, sewer_lore=5)]
    assert records.sewer_search(searchers=weak, location=spot, by=st, now=NOW) == []
    full = make_character("Full", player=None, sewer_lore=0)  # no free slot
    group = [make_character("S1", player=None, sewer_lore=3), *weak, full]
    assert records.sewer_search(searchers=group, location=spot, by=st, now=NOW) == group[:2]
    assert KnownSewerLocation.objects.count() == 2


# --- Miscellany ---------------------------------------------------------------------------------


def test_msc_records(make_character: Any, st: Any) -> None:
    pc = make_character("Tremere", clan="tremere")
    other = make_character("Other", player="player_bob")
    records.summons_lock_add(holder=pc, target=other, won_on=TODAY, by=st, now=NOW)
    with pytest.raises(ValidationError, match="MSC-01"):
        records.summons_lock_add(holder=pc, target=pc, won_on=TODAY, by=st, now=NOW)
    records.conditioning_record(
        subject=pc, conditioner=other, description="Obeys", recorded_on=TODAY, by=st, now=NOW
    )
    with pytest.raises(ValidationError, match="MSC-02"):
        records.conditioning_record(
            subject=pc, conditioner=other, description=" ", recorded_on=TODAY, by=st, now=NOW
        )
    title = records.title_add(character=pc, name="Prince", city="Chicago", by=st)
    with pytest.raises(ValidationError):
        records.title_add(character=pc, name="Prince", city="Chicago", by=st)
    records.title_remove(title=title, by=st)
    records.st_note_set(character=pc, notes="Secret", by=st)
    pc.refresh_from_db()
    assert pc.st_notes == "Secret"
    records.ritual_add(character=pc, name="Wake", learned_on=None, free=True, by=st, now=NOW)
    with pytest.raises(ValidationError, match="DIS-10"):
        records.ritual_add(character=pc, name="Ward", learned_on=None, free=True, by=st, now=NOW)
    with pytest.raises(ValidationError, match="DIS-10"):
        records.ritual_add(character=other, name="Wake", learned_on=None, free=True, by=st, now=NOW)
    assert Ritual.objects.count() == 1
