"""Character creation services (CRE-01..09, CLN-01, DIS-02..06, DIS-10, SEW-01, XP-07) on the
real database: the quote, every refusal with its rule ID and nothing written, and approval."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest
import time_machine
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError

from characters.models import (
    Acquired,
    Approval,
    Character,
    Disadvantage,
    DisciplineLevel,
    Ritual,
    Status,
    StoredBlood,
)
from characters.services import creation
from characters.services.common import rule_ids
from characters.services.creation import DisadvantagePick, DisciplinePick, Draft

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NOW = dt.datetime(2024, 3, 20, 19, 0, tzinfo=dt.UTC)

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
    extra_social=2,
    extra_willpower=1,
    background_questionnaire="Embraced at the opera in 1923.",
)

TREMERE = dataclasses.replace(
    TOREADOR,
    name="Ilse",
    clan="tremere",
    clan_bonus="",
    chosen_disciplines=("thaumaturgy_mind",),
    influences={"occult": 2},
    disciplines=(
        DisciplinePick("thaumaturgy_mind", free="1b"),
        DisciplinePick("auspex", free="1a"),
        DisciplinePick("thaumaturgy_blood", top="1a"),
    ),
    extra_social=0,
    extra_willpower=0,
)

NOSFERATU = dataclasses.replace(
    TOREADOR,
    name="Grub",
    clan="nosferatu",
    clan_bonus="sewer_lore",
    disciplines=(
        DisciplinePick("obfuscate", free="1b"),
        DisciplinePick("potence", free="1a"),
        DisciplinePick("auspex", top="1a"),
    ),
    disadvantages=(
        DisadvantagePick("Hideously ugly", major=True, physical=True, hideously_ugly=True),
        DisadvantagePick("Hunchback", major=True, physical=True),
    ),
    extra_social=0,
    extra_willpower=0,
)


def quote(draft: Draft, world: Any) -> creation.Quote:
    return creation.creation_quote(draft, house_rules=world.chronicle.house_rules)


def user(world: Any, persona: str) -> Any:
    return world.users[persona]


def make_draft(world: Any, draft: Draft = TOREADOR, persona: str = "player_alice") -> Character:
    return creation.character_draft_create(
        chronicle=world.chronicle, player=user(world, persona), draft=draft
    )


def submitted(world: Any, draft: Draft = TOREADOR, persona: str = "player_alice") -> Character:
    character = make_draft(world, draft, persona)
    return creation.character_submit(character=character, by=user(world, persona), now=NOW)


def snapshot(character: Character) -> dict[str, Any]:
    fresh = Character.objects.get(pk=character.pk)
    return {
        "approval": fresh.approval,
        "submitted_at": fresh.submitted_at,
        "approved_at": fresh.approved_at,
        "freebies_spent": fresh.freebies_spent,
        "levels": DisciplineLevel.objects.filter(character=character).count(),
        "disadvantages": Disadvantage.objects.filter(character=character).count(),
    }


# --- The quote --------------------------------------------------------------------------------


def test_valid_toreador_costs_eight_of_ten_freebies(world: Any) -> None:
    result = quote(TOREADOR, world)
    assert result.problems == {}
    # 2 social (trait 1 each) + 1 willpower (3) + Celerity 1a in-clan (3)
    assert (result.cost, result.freebies) == (8, 10)


def test_tremere_buying_another_path_costs_doc_example_13(world: Any) -> None:
    """DIS-04 TV: Tremere (Mind in-clan) Inquisition + Blood Mastery = 3 + 3 + 2 + 3 + 2."""
    draft = dataclasses.replace(
        TREMERE,
        disciplines=(*TREMERE.disciplines[:2], DisciplinePick("thaumaturgy_blood", top="1b")),
    )
    result = quote(draft, world)
    assert ("Thaumaturgy: Blood 1a, 1b (out-of-clan)", 13) in result.lines
    # 13 is over the kindred's 10 freebies (CRE-01)
    assert list(result.problems) == ["freebies"]
    assert "(CRE-01)" in result.problems["freebies"][0]
    assert quote(TREMERE, world).cost == 8 and quote(TREMERE, world).ok


def test_nosferatu_with_auspex_costs_doc_example_8(world: Any) -> None:
    """DIS-04 TV: Nosferatu Heightened Senses = 3 + 3 + 2."""
    result = quote(NOSFERATU, world)
    assert result.problems == {}
    assert result.lines == (("Auspex 1a (out-of-clan)", 8),)


def test_ventrue_herd_costs_double_and_house_rules_change_unit_costs(world: Any) -> None:
    """CLN-03: Ventrue Herd 2 per point; CRE-06 unit costs come from the house rules."""
    ventrue = dataclasses.replace(
        TOREADOR,
        clan="ventrue",
        clan_bonus="leadership",
        disciplines=(DisciplinePick("dominate", free="1b"), DisciplinePick("presence", free="1a")),
        extra_social=0,
        extra_willpower=0,
        extra_influences={"herd": 2, "business": 1},
    )
    assert quote(ventrue, world).cost == 2 * 2 + 1
    world.chronicle.house_rule_overrides = {"willpower_cost": 5}
    assert quote(TOREADOR, world).cost == 2 + 5 + 3


@pytest.mark.parametrize(
    ("changes", "field", "rule"),
    [
        pytest.param(
            {"disciplines": (*TOREADOR.disciplines[:2], DisciplinePick("protean", top="1a"))},
            "disciplines",
            "DIS-04",
            id="DIS-04-restricted-out-of-clan-at-creation",
        ),
        pytest.param(
            {
                "creature": "ghoul",
                "clan": "",
                "clan_bonus": "",
                "willpower": 1,
                "disciplines": (DisciplinePick("dominate", top="1a"),),
            },
            "disciplines",
            "CRE-03",
            id="CRE-03-ghoul-dominate",
        ),
        pytest.param(
            {
                "creature": "kine",
                "clan": "",
                "clan_bonus": "",
                "willpower": 1,
                "disciplines": (DisciplinePick("potence", top="1a"),),
            },
            "disciplines",
            "CRE-04",
            id="CRE-04-kine-any-discipline",
        ),
        pytest.param(
            {
                "clan": "malkavian",
                "clan_bonus": "",
                "disciplines": (
                    DisciplinePick("auspex", free="1b"),
                    DisciplinePick("dominate", free="1a"),
                ),
                "extra_social": 0,
                "extra_willpower": 0,
            },
            "disadvantages",
            "CRE-02",
            id="CRE-02-malkavian-one-major",
        ),
        pytest.param(
            {
                "base": NOSFERATU,
                "disadvantages": (
                    DisadvantagePick("Hunchback", major=True, physical=True),
                    DisadvantagePick("Clawed", major=True, physical=True),
                ),
            },
            "disadvantages",
            "CRE-02",
            id="CRE-02-nosferatu-not-hideously-ugly",
        ),
        pytest.param(
            {
                "clan": "caitiff",
                "clan_bonus": "",
                "chosen_disciplines": ("auspex", "celerity", "potence"),
                "disciplines": (
                    DisciplinePick("auspex", free="1b"),
                    DisciplinePick("potence", free="1a"),
                ),
                "generation": 9,
                "extra_social": 0,
                "extra_willpower": 0,
            },
            "generation",
            "CRE-05",
            id="CRE-05-caitiff-generation-9",
        ),
        pytest.param(
            {"extra_mental": 3},
            "freebies",
            "CRE-01",
            id="CRE-01-freebies-over-budget",
        ),
        pytest.param(
            {"physical": 5, "social": 5, "mental": 5},
            "physical",
            "CRE-01",
            id="CRE-01-not-7-5-3",
        ),
        pytest.param(
            {"sewer_lore": 1},
            "sewer_lore",
            "SEW-01",
            id="SEW-01-sewer-lore-not-nosferatu",
        ),
        pytest.param(
            {"clan_bonus": "herd", "clan": "ventrue"},
            "clan_bonus",
            "CLN-01",
            id="CLN-01-ventrue-cannot-take-herd",
        ),
    ],
)
def test_every_refusal_cites_its_rule_and_submit_writes_nothing(
    world: Any, changes: dict[str, Any], field: str, rule: str
) -> None:
    base = changes.get("base", TOREADOR)
    draft = dataclasses.replace(base, **{k: v for k, v in changes.items() if k != "base"})
    problems = quote(draft, world).problems
    assert field in problems, problems
    assert any(f"({rule})" in message for message in problems[field]), problems[field]

    character = make_draft(world, draft)
    before = snapshot(character)
    with pytest.raises(ValidationError) as refused:
        creation.character_submit(character=character, by=user(world, "player_alice"), now=NOW)
    assert any(f"({rule})" in m for m in refused.value.message_dict[field])
    assert snapshot(character) == before


def test_every_message_names_a_rule(world: Any) -> None:
    messy = Draft(name="", clan="caitiff", chosen_disciplines=("protean",), generation=9)
    problems = quote(messy, world).problems
    assert {"name", "chosen_disciplines", "disadvantages", "generation"} <= set(problems)
    for messages in problems.values():
        for message in messages:
            assert rule_ids(message), message


# --- Drafts -----------------------------------------------------------------------------------


def test_a_double_clicked_create_makes_one_draft(world: Any) -> None:
    first = make_draft(world)
    second = make_draft(world, dataclasses.replace(TOREADOR, extra_social=1))
    assert first.pk == second.pk
    assert Character.objects.filter(player=user(world, "player_alice")).count() == 1
    assert Character.objects.get(pk=first.pk).creation["extra_social"] == 1


def test_update_only_by_the_player_or_a_storyteller_while_editable(world: Any) -> None:
    character = make_draft(world)
    changed = dataclasses.replace(TOREADOR, name="Lucien de Sade")
    with pytest.raises(PermissionDenied):
        creation.character_draft_update(
            character=character, by=user(world, "player_bob"), draft=changed
        )
    creation.character_draft_update(
        character=character, by=user(world, "storyteller"), draft=changed
    )
    assert Character.objects.get(pk=character.pk).name == "Lucien de Sade"

    creation.character_submit(character=character, by=user(world, "player_alice"), now=NOW)
    with pytest.raises(ValidationError, match="CRE-09"):
        creation.character_draft_update(
            character=character, by=user(world, "player_alice"), draft=TOREADOR
        )
    assert Character.objects.get(pk=character.pk).name == "Lucien de Sade"


def test_submit_needs_the_questionnaire(world: Any) -> None:
    character = make_draft(world, dataclasses.replace(TOREADOR, background_questionnaire=" "))
    with pytest.raises(ValidationError) as refused:
        creation.character_submit(character=character, by=user(world, "player_alice"), now=NOW)
    assert "CRE-09" in refused.value.message_dict["background_questionnaire"][0]
    assert Character.objects.get(pk=character.pk).approval == Approval.DRAFT


def test_double_submit_writes_once(world: Any) -> None:
    character = submitted(world)
    again = creation.character_submit(
        character=character, by=user(world, "player_alice"), now=NOW + dt.timedelta(minutes=1)
    )
    assert again.submitted_at == NOW
    assert again.approval == Approval.SUBMITTED and again.freebies_spent == 8


# --- Approval ---------------------------------------------------------------------------------


@time_machine.travel(NOW, tick=False)
def test_approval_writes_the_sheet_and_levels(
    world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    character = submitted(world)
    with django_capture_on_commit_callbacks(execute=True):
        approved = creation.character_approve(
            character=character, by=user(world, "storyteller"), now=NOW
        )
    fresh = Character.objects.get(pk=approved.pk)
    assert (fresh.approval, fresh.status) == (Approval.APPROVED, Status.ACTIVE)
    assert (fresh.approved_by, fresh.approved_at) == (user(world, "storyteller"), NOW)
    # 7 social + 2 bought + 1 Toreador bonus (CLN-01); 2 + 1 willpower
    assert (fresh.physical, fresh.social, fresh.mental, fresh.willpower) == (3, 10, 5, 3)
    assert fresh.influences == {
        "business": 1,
        "government": 0,
        "herd": 1,
        "occult": 1,
        "underworld": 0,
    }
    levels = {
        (lvl.discipline, lvl.code): (lvl.free, lvl.cost, lvl.acquired)
        for lvl in DisciplineLevel.objects.filter(character=fresh)
    }
    assert levels == {
        ("auspex", "1a"): (True, 0, Acquired.CREATION),
        ("auspex", "1b"): (True, 0, Acquired.CREATION),
        ("presence", "1a"): (True, 0, Acquired.CREATION),
        ("celerity", "1a"): (False, 3, Acquired.CREATION),
    }
    assert list(Disadvantage.objects.filter(character=fresh).values_list("name", "major")) == [
        ("Vain", True)
    ]
    assert fresh.freebies_spent == 8
    assert [(m.subject, m.to) for m in mail.outbox] == [
        ("Lucien is approved", ["player_alice@example.com"])
    ]
    again = creation.character_approve(character=fresh, by=user(world, "admin"), now=NOW)
    assert again.approved_by == user(world, "storyteller")
    assert DisciplineLevel.objects.filter(character=fresh).count() == 4


def test_tremere_gets_a_free_ritual_and_its_bought_path_priced_per_level(world: Any) -> None:
    """DIS-10: one free basic ritual; DIS-04: the out-of-clan path's fee sits on its first level."""
    character = submitted(world, TREMERE)
    creation.character_approve(character=character, by=user(world, "storyteller"), now=NOW)
    assert Ritual.objects.filter(character=character, free=True).count() == 1
    blood = DisciplineLevel.objects.get(character=character, discipline="thaumaturgy_blood")
    assert (blood.code, blood.cost, blood.free) == ("1a", 8, False)
    assert Character.objects.get(pk=character.pk).influence_total == 2  # CLN-04


def test_gargoyle_blood_goes_to_one_regional_tremere_lord(world: Any) -> None:
    """CLN-01: 2 stored-blood points of the Gargoyle, held by an NPC made once per chronicle."""
    gargoyle = dataclasses.replace(
        TOREADOR,
        clan="gargoyle",
        clan_bonus="",
        disciplines=(DisciplinePick("fortitude", free="1b"), DisciplinePick("potence", free="1a")),
        extra_social=0,
    )
    first = submitted(world, gargoyle, "player_alice")
    second = submitted(world, dataclasses.replace(gargoyle, name="Stone"), "player_bob")
    for character in (first, second):
        creation.character_approve(character=character, by=user(world, "storyteller"), now=NOW)
    lords = Character.objects.filter(name=creation.TREMERE_LORD, chronicle=world.chronicle)
    assert [(lord.status, lord.player_id) for lord in lords] == [(Status.NPC, None)]
    stored = StoredBlood.objects.filter(holder=lords[0])
    assert sorted(b.points for b in stored) == [2, 2]
    assert {d.pk for b in stored for d in b.donors.all()} == {first.pk, second.pk}


def test_nosferatu_sewer_lore_bonus_lands_on_the_sheet(world: Any) -> None:
    character = submitted(world, dataclasses.replace(NOSFERATU, sewer_lore=1))
    creation.character_approve(character=character, by=user(world, "storyteller"), now=NOW)
    fresh = Character.objects.get(pk=character.pk)
    assert fresh.sewer_lore == 2 and fresh.freebies_spent == 9


def test_a_second_active_pc_is_refused_and_nothing_written(world: Any, make_character: Any) -> None:
    make_character("Old Hand", player="player_alice")
    character = submitted(world)
    before = snapshot(character)
    with pytest.raises(ValidationError, match="XP-07"):
        creation.character_approve(character=character, by=user(world, "storyteller"), now=NOW)
    assert snapshot(character) == before


@pytest.mark.parametrize("status", [Status.TORPOR, Status.STAKED])
def test_a_pc_in_torpor_or_staked_is_still_in_play(
    world: Any, make_character: Any, status: str
) -> None:
    """XP-07: a PC in torpor or staked may recover (TOR-01) and would then be a second active
    PC; approving another one for the same player is refused and writes nothing."""
    make_character("Sleeper", player="player_alice", status=status)
    character = submitted(world)
    before = snapshot(character)
    with pytest.raises(ValidationError, match=r"Sleeper in play.*\(XP-07\)"):
        creation.character_approve(character=character, by=user(world, "storyteller"), now=NOW)
    assert snapshot(character) == before


@pytest.mark.parametrize("status", [Status.RETIRED, Status.DEAD])
def test_a_retired_or_dead_pc_leaves_room_for_a_new_one(
    world: Any, make_character: Any, status: str
) -> None:
    make_character("Gone", player="player_alice", status=status)
    character = submitted(world)
    creation.character_approve(character=character, by=user(world, "storyteller"), now=NOW)
    assert Character.objects.get(pk=character.pk).status == Status.ACTIVE


def test_only_storytellers_approve_return_and_approve_backgrounds(world: Any) -> None:
    character = submitted(world)
    alice = user(world, "player_alice")
    for service in (creation.character_approve, creation.background_approve):
        with pytest.raises(PermissionDenied):
            service(character=character, by=alice, now=NOW)
    with pytest.raises(PermissionDenied):
        creation.character_return(character=character, by=alice, note="no", now=NOW)
    with pytest.raises(PermissionDenied):
        creation.character_approve(
            character=character, by=user(world, "other_storyteller"), now=NOW
        )
    assert snapshot(character)["approval"] == Approval.SUBMITTED


def test_a_draft_cannot_be_approved_before_it_is_submitted(world: Any) -> None:
    character = make_draft(world)
    with pytest.raises(ValidationError, match="CRE-09"):
        creation.character_approve(character=character, by=user(world, "storyteller"), now=NOW)
    assert snapshot(character)["approval"] == Approval.DRAFT


def test_return_with_a_note_then_edit_and_resubmit(world: Any) -> None:
    character = submitted(world)
    st = user(world, "storyteller")
    with pytest.raises(ValidationError):
        creation.character_return(character=character, by=st, note="  ", now=NOW)
    assert snapshot(character)["approval"] == Approval.SUBMITTED
    returned = creation.character_return(
        character=character, by=st, note="Less willpower, please.", now=NOW
    )
    assert (returned.approval, returned.approval_note) == (
        Approval.RETURNED,
        "Less willpower, please.",
    )
    creation.character_draft_update(
        character=character,
        by=user(world, "player_alice"),
        draft=dataclasses.replace(TOREADOR, extra_willpower=0),
    )
    again = creation.character_submit(character=character, by=user(world, "player_alice"), now=NOW)
    assert (again.approval, again.freebies_spent) == (Approval.SUBMITTED, 5)


def test_background_approval_is_recorded_once(world: Any) -> None:
    character = make_draft(world)
    st = user(world, "storyteller")
    creation.background_approve(character=character, by=st, now=NOW)
    creation.background_approve(
        character=character, by=user(world, "admin"), now=NOW + dt.timedelta(days=1)
    )
    fresh = Character.objects.get(pk=character.pk)
    assert (fresh.background_approved_by, fresh.background_approved_at) == (st, NOW)


def test_background_approval_needs_a_questionnaire(world: Any) -> None:
    character = make_draft(world, dataclasses.replace(TOREADOR, background_questionnaire=""))
    with pytest.raises(ValidationError, match="CRE-09"):
        creation.background_approve(character=character, by=user(world, "storyteller"), now=NOW)
    assert Character.objects.get(pk=character.pk).background_approved_at is None
