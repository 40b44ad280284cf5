"""A returning character is rebuilt (XP-07, XP-07a) and an embraced ghoul or kine is rebuilt as
kindred (CRE-04), issue 14: the character reopens as a draft of the creation wizard, the XP
stays in the player's ledger (neither lost nor counted twice), and a storyteller approves it
like a new character. Services, then pages."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from characters import rules
from characters.models import (
    Acquired,
    Approval,
    Bond,
    Captivity,
    Character,
    Creature,
    DisciplineLevel,
    Notification,
    PurchaseKind,
    PurchaseStatus,
    Status,
    XpEntry,
    XpKind,
    XpPurchase,
)
from characters.services import bonds, creation, ledger, rebuild, records
from characters.services.creation import DisciplinePick, Draft
from chronicle.models import Chronicle
from tests.characters.test_creation_pages import FORM
from tests.characters.test_creation_services import TOREADOR

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NY = ZoneInfo("America/New_York")
NOW = dt.datetime(2024, 3, 20, 21, 0, tzinfo=NY)
TODAY = dt.date(2024, 3, 20)


@pytest.fixture
def st(world: Any) -> Any:
    return world.users["storyteller"]


@pytest.fixture
def alice(world: Any) -> Any:
    return world.users["player_alice"]


def give(world: Any, character: Character, amount: str, kind: str, key: str) -> None:
    assert character.player_id is not None
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


def balance(world: Any) -> Decimal:
    return ledger.xp_balance(chronicle=world.chronicle, player=world.users["player_alice"])


def old_sheet(world: Any, make_character: Any, name: str = "Lucien", **fields: Any) -> Character:
    """A PC that played a while: a discipline bought in play, traits above the package."""
    pc = make_character(name, disciplines={"auspex": "1b"}, physical=9, **fields)
    DisciplineLevel.objects.create(
        character=pc, discipline="auspex", level=3, acquired=Acquired.PLAY, cost=6
    )
    return pc


def rebuild_as(draft: Draft, character: Character, by: Any) -> Character:
    """The player fills the wizard in again and submits it."""
    creation.character_draft_update(
        character=character, by=by, draft=dataclasses.replace(draft, name=character.name)
    )
    return creation.character_submit(character=character, by=by, now=NOW)


def house(world: Any, **overrides: object) -> None:
    Chronicle.objects.filter(pk=world.chronicle.pk).update(house_rule_overrides=overrides)


# --- Rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spent", "before", "expected"),
    [
        pytest.param("40", "0", "40", id="XP-07a-first-build-counts-all"),
        pytest.param("60", "40", "20", id="XP-07a-only-since-the-rebuild"),
        pytest.param("40", "40", "0", id="XP-07a-nothing-spent-since"),
        pytest.param("35", "40", "0", id="XP-07a-a-reversal-never-goes-below-zero"),
    ],
)
def test_xp07a_spent_since_rebuild(spent: str, before: str, expected: str) -> None:
    assert rules.spent_since_rebuild(
        spent=Decimal(spent), spent_before_rebuild=Decimal(before)
    ) == Decimal(expected)


@pytest.mark.parametrize(
    ("creature", "message"),
    [
        pytest.param("animal_ghoul", r"Animals cannot be embraced \(CRE-03\)", id="CRE-03-animal"),
        pytest.param("kindred", "already kindred", id="CRE-04-kindred-already"),
        pytest.param("werewolf", "Only a ghoul or kine", id="CRE-04-unknown"),
    ],
)
def test_cre04_who_can_be_embraced(creature: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rules.check_embrace(creature)


@pytest.mark.parametrize("creature", ["ghoul", "kine"])
def test_cre04_ghoul_and_kine_can_be_embraced(creature: str) -> None:
    rules.check_embrace(creature)


@pytest.mark.parametrize(
    ("refund", "expected"),
    [
        pytest.param(True, "30", id="CRE-04-same-xp-refunds-the-spent"),
        pytest.param(False, "0", id="CRE-04-setting-off-current-balance-only"),
    ],
)
def test_cre04_embrace_xp_refund(refund: bool, expected: str) -> None:
    got = rules.embrace_xp_refund(spent=Decimal(30), embrace_refunds_spent_xp=refund)
    assert got == Decimal(expected)


# --- Return from retirement (XP-07) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("awarded", "spent", "after_retirement"),
    [
        # The reproduction: 40 of 45 spent; XP-06 gives 20 + 5 unspent = 25.
        pytest.param("45", "40", "25", id="XP-07-rebuild-40-of-45-gives-25"),
        pytest.param("10", "10", "5", id="XP-07-rebuild-all-spent"),
        pytest.param("20", "0", "20", id="XP-07-rebuild-nothing-spent"),
    ],
)
def test_xp07_return_opens_a_draft_with_the_current_xp(
    world: Any,
    make_character: Any,
    st: Any,
    alice: Any,
    awarded: str,
    spent: str,
    after_retirement: str,
) -> None:
    pc = old_sheet(world, make_character)
    give(world, pc, awarded, XpKind.AWARD, "award")
    if spent != "0":
        give(world, pc, f"-{spent}", XpKind.PURCHASE, "purchase")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    assert balance(world) == Decimal(after_retirement)

    back = rebuild.character_return(character=pc, by=st, now=NOW)

    back.refresh_from_db()
    # A draft of the wizard, not the old sheet: no levels, nothing bought.
    assert (back.status, back.approval, back.retired_on) == (Status.ACTIVE, Approval.DRAFT, None)
    assert not DisciplineLevel.objects.filter(character=back).exists()
    assert (back.physical, back.social, back.mental, back.abilities) == (0, 0, 0, {})
    # What identifies the character stays as the draft's starting values.
    draft = Draft.from_character(back)
    assert (draft.name, draft.creature, draft.clan) == ("Lucien", "kindred", "toreador")
    assert (draft.physical, draft.disciplines, draft.generation) == (0, (), 13)
    assert back.background_questionnaire == "Who sired you? A stranger in the rain."
    # The XP: the player's current balance, nothing added or taken by the return.
    assert balance(world) == Decimal(after_retirement)
    assert rebuild.rebuild_for(back) == rebuild.Rebuild(
        balance=Decimal(after_retirement), embraced_on=None
    )
    assert XpEntry.objects.filter(kind=XpKind.RETIREMENT).count() == (1 if spent != "0" else 0)

    # Rebuilt through the wizard and approved by an ST like a new character.
    rebuild_as(TOREADOR, back, alice)
    approved = creation.character_approve(character=back, by=st, now=NOW)
    approved.refresh_from_db()
    assert (approved.status, approved.approval) == (Status.ACTIVE, Approval.APPROVED)
    assert approved.social == 7 + 2 + 1  # package, freebies and the Toreador's bonus
    levels = set(
        DisciplineLevel.objects.filter(character=approved).values_list("discipline", "level")
    )
    assert levels == {("auspex", 1), ("auspex", 2), ("presence", 1), ("celerity", 1)}
    assert balance(world) == Decimal(after_retirement)


def test_xp07a_second_retirement_counts_only_the_new_build(
    world: Any, make_character: Any, st: Any, alice: Any
) -> None:
    """Neither lost (a second XP-06 credit is written) nor double counted (only the 10 XP the
    rebuilt character spent count, not the 40 already credited)."""
    pc = old_sheet(world, make_character)
    give(world, pc, "45", XpKind.AWARD, "award")
    give(world, pc, "-40", XpKind.PURCHASE, "purchase")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    rebuild.character_return(character=pc, by=st, now=NOW)
    rebuild_as(TOREADOR, pc, alice)
    creation.character_approve(character=pc, by=st, now=NOW)
    give(world, pc, "-10", XpKind.PURCHASE, "purchase-2")
    assert balance(world) == Decimal(15)

    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)

    credits = list(
        XpEntry.objects.filter(kind=XpKind.RETIREMENT).order_by("pk").values_list("key", "amount")
    )
    assert credits == [(f"retirement:{pc.pk}", Decimal(20)), (f"retirement:{pc.pk}:1", Decimal(5))]
    assert balance(world) == Decimal(20)


def test_xp07_return_tells_the_player_and_withdraws_old_requests(
    world: Any, make_character: Any, st: Any, alice: Any
) -> None:
    pc = old_sheet(world, make_character)
    waiting = XpPurchase.objects.create(
        character=pc,
        kind=PurchaseKind.TRAIT,
        target="physical",
        cost=Decimal(1),
        requested_by=alice,
        requested_at=NOW,
    )
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    rebuild.character_return(character=pc, by=st, now=NOW)
    notice = Notification.objects.get(character=pc, key=f"character-rebuild:{pc.pk}:1")
    assert notice.subject == "Rebuild Lucien"
    assert "XP-07" in notice.body
    waiting.refresh_from_db()
    assert waiting.status == PurchaseStatus.WITHDRAWN


def _dead(world: Any, make_character: Any, st: Any) -> Character:
    pc = make_character("Lucien")
    records.character_death_record(character=pc, died_on=TODAY, by=st, now=NOW)
    return pc


def _other_active(world: Any, make_character: Any, st: Any) -> Character:
    pc = make_character("Lucien")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    make_character("Newcomer")
    return pc


def _other_in_torpor(world: Any, make_character: Any, st: Any) -> Character:
    pc = make_character("Lucien")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    make_character("Sleeper", status=Status.TORPOR)
    return pc


def _captive(world: Any, make_character: Any, st: Any) -> Character:
    pc = make_character("Lucien")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    captor = make_character("Captor", player="player_bob")
    Captivity.objects.create(captive=pc, captor=captor, since=TODAY, recorded_by=st)
    return pc


def _active(world: Any, make_character: Any, st: Any) -> Character:
    return make_character("Lucien")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        pytest.param(_dead, r"Lucien is dead \(XP-07\)", id="XP-07-refused-killed"),
        pytest.param(_other_active, r"Newcomer in play.*\(XP-07\)", id="XP-07-refused-other-pc"),
        pytest.param(
            _other_in_torpor, r"Sleeper in play \(torpor\).*\(XP-07\)", id="XP-07-refused-torpor"
        ),
        pytest.param(_captive, r"held captive.*\(XP-07\)", id="XP-07-refused-trapped"),
        pytest.param(_active, r"Lucien is active \(XP-07\)", id="XP-07-refused-not-retired"),
    ],
)
def test_xp07_refused_returns_write_nothing(
    world: Any, make_character: Any, st: Any, setup: Any, message: str
) -> None:
    pc = setup(world, make_character, st)
    before = Character.objects.filter(pk=pc.pk).values().get()
    with pytest.raises(ValidationError, match=message):
        rebuild.character_return(character=pc, by=st, now=NOW)
    assert Character.objects.filter(pk=pc.pk).values().get() == before
    assert not Notification.objects.filter(key__startswith="character-rebuild").exists()


def test_xp07_one_pc_in_play_is_checked_again_at_approval(
    world: Any, make_character: Any, st: Any, alice: Any
) -> None:
    pc = make_character("Lucien")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    rebuild.character_return(character=pc, by=st, now=NOW)
    rebuild_as(TOREADOR, pc, alice)
    make_character("Newcomer")  # approved meanwhile, e.g. by another ST
    with pytest.raises(ValidationError, match=r"Newcomer in play.*\(XP-07\)"):
        creation.character_approve(character=pc, by=st, now=NOW)


# --- Embrace (CRE-04) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("creature", "awarded", "spent", "refund", "expected"),
    [
        # "recreated from scratch as a kindred with the same XP": 30 spent + 5 unspent.
        pytest.param("ghoul", "35", "30", True, "35", id="CRE-04-ghoul-same-xp"),
        pytest.param("kine", "12", "4", True, "12", id="CRE-04-kine-same-xp"),
        pytest.param("ghoul", "35", "0", True, "35", id="CRE-04-nothing-spent"),
        pytest.param("ghoul", "35", "30", False, "5", id="CRE-04-setting-off-keeps-balance"),
    ],
)
def test_cre04_embrace_opens_a_kindred_draft_with_the_same_xp(
    world: Any,
    make_character: Any,
    st: Any,
    alice: Any,
    creature: str,
    awarded: str,
    spent: str,
    refund: bool,
    expected: str,
) -> None:
    house(world, embrace_refunds_spent_xp=refund)
    pc = make_character("Renfield", creature=creature)
    if creature == "ghoul":
        DisciplineLevel.objects.create(
            character=pc, discipline="potence", level=1, acquired=Acquired.PLAY, cost=3
        )
    give(world, pc, awarded, XpKind.AWARD, "award")
    if spent != "0":
        give(world, pc, f"-{spent}", XpKind.PURCHASE, "purchase")

    embraced = rebuild.character_embrace(
        character=pc, embraced_on=TODAY, clan="toreador", by=st, now=NOW
    )

    embraced.refresh_from_db()
    assert (embraced.creature, embraced.clan, embraced.embraced_on) == (
        Creature.KINDRED,
        "toreador",
        TODAY,
    )
    assert (embraced.status, embraced.approval) == (Status.ACTIVE, Approval.DRAFT)
    assert not DisciplineLevel.objects.filter(character=embraced).exists()
    assert balance(world) == Decimal(expected)
    assert rebuild.rebuild_for(embraced) == rebuild.Rebuild(
        balance=Decimal(expected), embraced_on=TODAY
    )
    # Twice: the refund is written once (the key), the rules refuse a kindred.
    with pytest.raises(ValidationError, match="already kindred"):
        rebuild.character_embrace(character=pc, embraced_on=TODAY, by=st, now=NOW)
    assert balance(world) == Decimal(expected)

    rebuild_as(TOREADOR, embraced, alice)
    creation.character_approve(character=embraced, by=st, now=NOW)
    embraced.refresh_from_db()
    assert (embraced.creature, embraced.approval) == (Creature.KINDRED, Approval.APPROVED)
    assert DisciplineLevel.objects.filter(character=embraced, discipline="presence").exists()


def test_cre04_embrace_breaks_every_bond(world: Any, make_character: Any, st: Any) -> None:
    ghoul = make_character("Renfield", creature="ghoul")
    regnant = make_character("Dracul", player="player_bob", clan="tzimisce")
    for night in (dt.date(2024, 1, 1), dt.date(2024, 1, 5), dt.date(2024, 2, 20)):
        bonds.drink_record(
            drinker=ghoul,
            donors=[regnant],
            mixed=False,
            night=night,
            by=st,
            now=dt.datetime.combine(night, dt.time(21), tzinfo=NY),
        )
    assert Bond.objects.get(thrall=ghoul).bound
    rebuild.character_embrace(character=ghoul, embraced_on=TODAY, by=st, now=NOW)
    bond = Bond.objects.get(thrall=ghoul)
    assert (bond.ended_on, bond.end_reason) == (TODAY, bonds.ENDED_EMBRACED)


def test_cre04_embraced_character_is_rebuilt_as_kindred_only(
    world: Any, make_character: Any, st: Any, alice: Any
) -> None:
    ghoul = make_character("Renfield", creature="ghoul")
    rebuild.character_embrace(character=ghoul, embraced_on=TODAY, by=st, now=NOW)
    ghoul.refresh_from_db()
    assert ghoul.clan == ""  # the player chooses it in the wizard
    as_ghoul = Draft(
        name="Renfield",
        creature="ghoul",
        physical=5,
        social=3,
        mental=2,
        abilities={"brawl": 2, "dodge": 1},
        willpower=1,
        influences={"herd": 1},
        disciplines=(DisciplinePick("potence", top="1a"),),
        background_questionnaire="A servant.",
    )
    creation.character_draft_update(character=ghoul, by=alice, draft=as_ghoul)
    with pytest.raises(ValidationError) as refused:
        creation.character_submit(character=ghoul, by=alice, now=NOW)
    creature = refused.value.message_dict["creature"]
    assert "Renfield was embraced: rebuild them as kindred (CRE-04)." in creature


def _animal(make_character: Any) -> Character:
    return make_character("Fido", creature="animal_ghoul")


def _kindred(make_character: Any) -> Character:
    return make_character("Lucien")


def _dead_ghoul(make_character: Any) -> Character:
    return make_character("Renfield", creature="ghoul", status=Status.DEAD)


def _draft_ghoul(make_character: Any) -> Character:
    ghoul = make_character("Renfield", creature="ghoul")
    Character.objects.filter(pk=ghoul.pk).update(approval=Approval.DRAFT)
    return ghoul


@pytest.mark.parametrize(
    ("setup", "day", "field", "message"),
    [
        pytest.param(_animal, TODAY, "creature", "CRE-03", id="CRE-03-animals-cannot"),
        pytest.param(_kindred, TODAY, "creature", "already kindred", id="CRE-04-kindred"),
        pytest.param(_dead_ghoul, TODAY, "__all__", r"is dead \(CRE-04\)", id="CRE-04-dead"),
        pytest.param(_draft_ghoul, TODAY, "__all__", r"is draft \(CRE-04\)", id="CRE-04-draft"),
        pytest.param(
            _kindred, dt.date(2024, 3, 21), "embraced_on", "in the future", id="CRE-04-future"
        ),
    ],
)
def test_cre04_refused_embraces_write_nothing(
    world: Any,
    make_character: Any,
    st: Any,
    setup: Any,
    day: dt.date,
    field: str,
    message: str,
) -> None:
    pc = setup(make_character)
    before = Character.objects.filter(pk=pc.pk).values().get()
    with pytest.raises(ValidationError) as refused:
        rebuild.character_embrace(character=pc, embraced_on=day, by=st, now=NOW)
    if field == "__all__":
        assert not hasattr(refused.value, "error_dict")
        found = refused.value.messages
    else:
        found = refused.value.message_dict[field]
    assert any(re.search(message, m) for m in found), found
    assert Character.objects.filter(pk=pc.pk).values().get() == before
    assert not XpEntry.objects.exists()


def test_cre04_embraced_npc_keeps_its_sheet(world: Any, make_character: Any, st: Any) -> None:
    npc = make_character("Igor", player=None, creature="ghoul", status=Status.NPC)
    rebuild.character_embrace(character=npc, embraced_on=TODAY, clan="tzimisce", by=st, now=NOW)
    npc.refresh_from_db()
    assert (npc.creature, npc.clan, npc.status, npc.approval) == (
        Creature.KINDRED,
        "tzimisce",
        Status.NPC,
        Approval.APPROVED,
    )
    assert npc.rebuilds == 0


# --- Pages ----------------------------------------------------------------------------------


def action_url(pc: Character, action: str) -> str:
    return reverse("character_action", args=["nightfall", pc.pk, action])


def test_pages_return_then_rebuild_then_approve(
    world: Any, make_character: Any, st: Any, alice: Any
) -> None:
    pc = old_sheet(world, make_character)
    give(world, pc, "45", XpKind.AWARD, "award")
    give(world, pc, "-40", XpKind.PURCHASE, "purchase")
    records.character_retire(character=pc, on=TODAY, by=st, now=NOW)
    staff = world.client("storyteller")

    # A player cannot bring a character back; the ST can, from the records page.
    assert world.client("player_alice").post(action_url(pc, "return")).status_code == 403
    response = staff.post(action_url(pc, "return"), follow=True)
    assert response.status_code == 200
    assert "back as a draft" in response.content.decode()
    pc.refresh_from_db()
    assert pc.approval == Approval.DRAFT

    player = world.client("player_alice")
    dashboard = player.get(reverse("dashboard", args=["nightfall"])).content.decode()
    assert "Rebuild your character" in dashboard
    assert reverse("character_edit", args=["nightfall", pc.pk]) in dashboard
    sheet = player.get(reverse("character_sheet", args=["nightfall", pc.pk])).content.decode()
    assert "Rebuild your character" in sheet and "25 XP" in sheet
    wizard = player.get(reverse("character_edit", args=["nightfall", pc.pk])).content.decode()
    assert "back from retirement" in wizard and 'value="Lucien"' in wizard

    form = dict(FORM, name="Lucien")
    response = player.post(reverse("character_submit", args=["nightfall", pc.pk]), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    pc.refresh_from_db()
    assert pc.approval == Approval.SUBMITTED

    review = staff.get(reverse("character_review", args=["nightfall", pc.pk])).content.decode()
    assert "back from retirement" in review
    response = staff.post(
        reverse("character_review", args=["nightfall", pc.pk]), {"action": "approve"}
    )
    assert response.status_code == 302
    pc.refresh_from_db()
    assert (pc.status, pc.approval, pc.social) == (Status.ACTIVE, Approval.APPROVED, 10)
    assert balance(world) == Decimal(25)
    dashboard = player.get(reverse("dashboard", args=["nightfall"])).content.decode()
    assert "Rebuild your character" not in dashboard


def test_pages_embrace_from_the_records_page(
    world: Any, make_character: Any, st: Any, alice: Any
) -> None:
    ghoul = make_character("Renfield", creature="ghoul")
    staff = world.client("storyteller")
    page = staff.get(reverse("character_actions", args=["nightfall", ghoul.pk])).content.decode()
    assert 'name="embrace-embraced_on"' in page and "Clan of the sire" in page

    refused = staff.post(action_url(ghoul, "embrace"), {"embrace-embraced_on": "2099-01-01"})
    assert refused.status_code == 400
    assert "in the future" in refused.content.decode()

    response = staff.post(
        action_url(ghoul, "embrace"),
        {"embrace-embraced_on": "2024-03-01", "embrace-clan": "brujah"},
    )
    assert response.status_code == 302
    ghoul.refresh_from_db()
    assert (ghoul.creature, ghoul.clan, ghoul.approval) == ("kindred", "brujah", Approval.DRAFT)
    sheet = world.client("player_alice").get(
        reverse("character_sheet", args=["nightfall", ghoul.pk])
    )
    assert "Rebuild your character as kindred" in sheet.content.decode()


def test_api_embrace_is_a_records_action(world: Any, make_character: Any) -> None:
    ghoul = make_character("Renfield", creature="ghoul")
    client = world.client("storyteller")
    url = f"/api/chronicles/nightfall/characters/{ghoul.pk}/records/embrace/"
    response = client.post(url, {"embraced_on": "2024-03-01"}, content_type="application/json")
    assert response.status_code == 200, response.content
    ghoul.refresh_from_db()
    assert (ghoul.creature, ghoul.approval) == ("kindred", Approval.DRAFT)
    again = client.post(url, {"embraced_on": "2024-03-01"}, content_type="application/json")
    assert again.status_code == 400
    assert "CRE-04" in again.content.decode()
