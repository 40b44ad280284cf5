"""characters/rules.py, by table: every worked example of CLN, CRE, DIS, CTL, BLD, BND, INF, XP,
ITM, SEW, TOR and GEN-02 in SPEC.md, plus the illegal inputs each rule must refuse.

Expected values are SPEC's numbers, written out, never recomputed with the code under test.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from characters import rules
from characters.rules import (
    BondBreak,
    Disadvantage,
    Drink,
    GenerationMaximums,
    Teacher,
    bond_state,
    cheating_penalty,
    check_clan_bonus,
    check_creation_generation,
    check_creation_package,
    check_disadvantages,
    check_discipline_allowed,
    check_level_order,
    check_new_request,
    check_purchase_timing,
    check_teacher,
    check_torpor_hold,
    concealment_downgrade_cost,
    control_traits,
    creation_flag_problems,
    discipline_cost,
    downgraded_concealability,
    generation_cost,
    generation_maximums,
    herd_blood_yield,
    in_clan_disciplines,
    influence_point_cost,
    is_in_clan,
    is_restricted,
    item_repair_cost,
    level_category,
    level_name,
    level_number,
    on_body_blood_limit,
    request_can_be_ignored,
    retirement_points,
    sewer_location_slots,
    sewer_search_succeeds,
    starting_influence,
    stored_blood_unusable_from,
    teacher_required,
)

# --- DIS-01 / DIS-02: levels, names, order ------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "number", "category"),
    [
        pytest.param("1a", 1, 1, id="DIS-01-1a-is-1-basic"),
        pytest.param("1b", 2, 1, id="DIS-01-1b-is-2-basic"),
        pytest.param("2a", 3, 2, id="DIS-01-2a-is-3-intermediate"),
        pytest.param("2b", 4, 2, id="DIS-01-2b-is-4-intermediate"),
        pytest.param("3a", 5, 3, id="DIS-01-3a-is-5-advanced"),
        pytest.param("2A", 3, 2, id="DIS-01-upper-case-2A-as-written-in-source"),
    ],
)
def test_level_numbers(level: str, number: int, category: int) -> None:
    assert level_number(level) == number
    assert level_category(level) == category


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("3b", id="DIS-01-no-3b"),
        pytest.param("4a", id="DIS-01-no-4a"),
        pytest.param("1c", id="DIS-01-no-1c"),
        pytest.param("", id="DIS-01-empty"),
        pytest.param(3, id="DIS-01-number-not-string"),
    ],
)
def test_bad_level_strings_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="Unknown discipline level"):
        level_number(bad)


@pytest.mark.parametrize(
    ("discipline", "level", "name"),
    [
        pytest.param("animalism", "2b", "Embrace the Beast", id="DIS-01-animalism-2b"),
        pytest.param("auspex", "1a", "Heightened Senses", id="DIS-01-SRC-03-auspex-1a"),
        pytest.param("celerity", "3a", "bid +27", id="DIS-01-celerity-3a-unnamed"),
        pytest.param("dominate", "2b", "Mastery-Conditioning", id="DIS-01-dominate-2b"),
        pytest.param("fortitude", "2b", "bid +8", id="DIS-01-fortitude-2b-unnamed"),
        pytest.param("obfuscate", "1b", "Mask of 1000 Faces", id="DIS-01-obfuscate-1b"),
        pytest.param("obtenebration", "2b", "Arms of the Abyss", id="DIS-01-obtenebration-2b"),
        pytest.param("potence", "3a", "bid +9, Sunder", id="DIS-01-potence-3a-sunder"),
        pytest.param("presence", "3a", "Majesty", id="DIS-01-presence-3a"),
        pytest.param("protean", "2a", "Beast Within (Wolf or Bat)", id="DIS-01-protean-2a"),
        pytest.param("quietus", "3a", "Blood Sweatier", id="DIS-01-quietus-3a"),
        pytest.param("serpentis", "2a", "Snake Form", id="DIS-01-serpentis-2a"),
        pytest.param("thaumaturgy_blood", "1b", "Blood Mastery", id="DIS-01-blood-1b"),
        pytest.param("thaumaturgy_blood", "3a", "Cauldron", id="DIS-01-blood-3a"),
        pytest.param("thaumaturgy_fire", "2b", "Fire Shield", id="DIS-01-fire-2b"),
        pytest.param("thaumaturgy_mind", "1a", "Stab", id="DIS-01-mind-1a"),
        pytest.param("vicissitude", "3a", "Horrid Form", id="DIS-01-vicissitude-3a"),
        pytest.param("visceratika", "2b", "Whispers of the Chamber", id="DIS-01-visceratika-2b"),
    ],
)
def test_level_names(discipline: str, level: str, name: str) -> None:
    assert level_name(discipline, level) == name


def test_unknown_discipline_name_is_refused() -> None:
    with pytest.raises(ValueError, match="Unknown discipline 'necromancy'"):
        level_name("necromancy", "1a")


@pytest.mark.parametrize(
    ("purchase", "problem"),
    [
        pytest.param(dict(levels=["1a"], owned=None), None, id="DIS-02-first-level-1a"),
        pytest.param(dict(levels=["2a"], owned="1b"), None, id="DIS-02-2a-after-both-basics"),
        pytest.param(dict(levels=["1a", "1b"], owned=None), None, id="DIS-02-1a-1b-together"),
        pytest.param(
            dict(levels=["1b"], owned=None), "next level to buy is 1a", id="DIS-02-1b-needs-1a"
        ),
        pytest.param(
            dict(levels=["2b"], owned="1b"), "next level to buy is 2a", id="DIS-02-skip-2a"
        ),
        pytest.param(
            dict(levels=["1a", "2a"], owned=None), "without gaps", id="DIS-02-gap-in-purchase"
        ),
        pytest.param(
            dict(levels=["1b", "1a"], owned=None), "without gaps", id="DIS-02-reverse-order"
        ),
        pytest.param(
            dict(levels=["3a"], owned="3a"), "already at 3a", id="DIS-02-nothing-above-3a"
        ),
        pytest.param(dict(levels=[], owned=None), "at least one", id="DIS-02-empty-purchase"),
        pytest.param(dict(levels="1a", owned=None), "as a list", id="DIS-02-bare-string"),
    ],
)
def test_level_order(purchase: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        check_level_order(**purchase)
    else:
        with pytest.raises(ValueError, match=problem):
            check_level_order(**purchase)


# --- CLN: clans -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("clan", "chosen", "in_clan"),
    [
        pytest.param("brujah", [], {"celerity", "potence", "presence"}, id="CLN-01-brujah"),
        pytest.param("gargoyle", [], {"fortitude", "potence", "visceratika"}, id="CLN-01-gargoyle"),
        pytest.param(
            "tremere",
            ["thaumaturgy_mind"],
            {"auspex", "dominate", "thaumaturgy_mind"},
            id="CLN-01-tremere-chooses-one-path",
        ),
        pytest.param(
            "caitiff",
            ["auspex", "celerity", "potence"],
            {"auspex", "celerity", "potence"},
            id="CLN-01-caitiff-chooses-three",
        ),
        pytest.param(None, [], set(), id="CRE-03-ghoul-has-no-clan"),
    ],
)
def test_in_clan_disciplines(clan: str | None, chosen: list[str], in_clan: set[str]) -> None:
    assert in_clan_disciplines(clan, chosen=chosen) == in_clan


@pytest.mark.parametrize(
    ("clan", "chosen", "problem"),
    [
        pytest.param(
            "caitiff",
            ["auspex", "celerity", "protean"],
            "non-restricted",
            id="CLN-01-caitiff-no-restricted",
        ),
        pytest.param("caitiff", ["auspex", "celerity"], "exactly 3", id="CLN-01-caitiff-only-two"),
        pytest.param(
            "caitiff", ["auspex", "auspex", "potence"], "exactly 3", id="CLN-01-caitiff-duplicate"
        ),
        pytest.param("tremere", [], "exactly 1", id="CLN-01-tremere-must-choose-a-path"),
        pytest.param("tremere", ["potence"], "Thaumaturgy paths", id="CLN-01-tremere-path-only"),
        pytest.param("brujah", ["auspex"], "do not choose", id="CLN-01-brujah-chooses-nothing"),
        pytest.param("baali", [], "Unknown clan 'baali'", id="CLN-01-unknown-clan"),
        pytest.param("Brujah", [], "Unknown clan", id="CLN-01-clan-is-lowercase"),
    ],
)
def test_in_clan_choices_are_validated(clan: str, chosen: list[str], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        in_clan_disciplines(clan, chosen=chosen)


@pytest.mark.parametrize(
    ("discipline", "restricted"),
    [
        pytest.param("thaumaturgy_fire", True, id="CLN-02-thaumaturgy-restricted"),
        pytest.param("protean", True, id="CLN-02-protean-restricted"),
        pytest.param("quietus", True, id="CLN-02-quietus-restricted"),
        pytest.param("visceratika", True, id="CLN-02-visceratika-restricted"),
        pytest.param("obtenebration", True, id="CLN-02-obtenebration-restricted"),
        pytest.param("serpentis", True, id="CLN-02-serpentis-restricted"),
        pytest.param("vicissitude", True, id="CLN-02-vicissitude-restricted"),
        pytest.param("animalism", False, id="CLN-02-animalism-open"),
        pytest.param("dominate", False, id="CLN-02-dominate-open"),
        pytest.param("potence", False, id="CLN-02-potence-open"),
    ],
)
def test_restricted_disciplines(discipline: str, restricted: bool) -> None:
    assert is_restricted(discipline) is restricted


@pytest.mark.parametrize(
    ("character", "expected"),
    [
        pytest.param(
            dict(discipline="thaumaturgy_blood", clan="tremere", chosen=["thaumaturgy_blood"]),
            True,
            id="CLN-01-tremere-chosen-path-in-clan",
        ),
        pytest.param(
            dict(discipline="thaumaturgy_fire", clan="tremere", chosen=["thaumaturgy_blood"]),
            False,
            id="CLN-01-tremere-other-path-out-of-clan",
        ),
        pytest.param(
            dict(discipline="potence", clan=None), False, id="CRE-03-ghoul-potence-out-of-clan"
        ),
        pytest.param(
            dict(discipline="potence", clan=None, ghoul_disciplines_out_of_clan=False),
            True,
            id="CRE-03-setting-ghoul-in-clan-price",
        ),
    ],
)
def test_is_in_clan(character: dict[str, Any], expected: bool) -> None:
    assert is_in_clan(**character) is expected


@pytest.mark.parametrize(
    ("clan", "herd_bonus", "influences"),
    [
        pytest.param("tremere", False, 2, id="CLN-04-tremere-buys-no-influence-has-2"),
        pytest.param("toreador", False, 3, id="CLN-04-toreador-social-bonus-3"),
        pytest.param("toreador", True, 4, id="CLN-04-toreador-herd-bonus-4"),
        pytest.param("brujah", False, 3, id="CLN-04-everyone-else-3"),
        pytest.param("caitiff", False, 3, id="CLN-04-caitiff-3"),
    ],
)
def test_starting_influence(clan: str, herd_bonus: bool, influences: int) -> None:
    assert starting_influence(clan, herd_bonus=herd_bonus) == influences


def test_only_toreador_take_the_herd_bonus() -> None:
    with pytest.raises(ValueError, match="Only Toreador"):
        starting_influence("ventrue", herd_bonus=True)


@pytest.mark.parametrize(
    ("clan", "choice", "problem"),
    [
        pytest.param("nosferatu", "sewer_lore", None, id="CLN-01-nosferatu-sewer-lore"),
        pytest.param("ventrue", "physical", None, id="CLN-01-ventrue-physical"),
        pytest.param("toreador", "herd", None, id="CLN-01-toreador-herd"),
        pytest.param("brujah", None, None, id="CLN-01-brujah-no-bonus"),
        pytest.param(
            "toreador", "leadership", "herd or social", id="CLN-01-toreador-not-leadership"
        ),
        pytest.param("ventrue", None, "must choose", id="CLN-01-ventrue-must-choose"),
        pytest.param("lasombra", "physical", "no creation bonus", id="CLN-01-lasombra-none"),
    ],
)
def test_clan_creation_bonus(clan: str, choice: str | None, problem: str | None) -> None:
    if problem is None:
        check_clan_bonus(clan, choice)
    else:
        with pytest.raises(ValueError, match=problem):
            check_clan_bonus(clan, choice)


def test_clan_table_modifiers() -> None:
    """CLN-01: the modifiers the app applies, row by row."""
    clans = rules.CLANS
    assert clans["assamite"].gains_from_kindred_blood is False
    assert (clans["brujah"].control_adjustment, clans["brujah"].control_cap) == (-1, 8)
    assert clans["gangrel"].control_cap == 7
    assert clans["gangrel"].fixed_bonuses == ("survival",)
    assert clans["gargoyle"].stored_blood_for_tremere_lord == 2
    assert clans["toreador"].in_character_vote_weight == 2
    assert clans["tremere"].free_basic_rituals == 1
    assert clans["tzimisce"].haven_needs_embrace_earth is True
    assert clans["ventrue"].needs_feeding_demographic is True
    assert clans["caitiff"].out_of_clan_level_surcharge == 1
    assert len(clans) == 13


@pytest.mark.parametrize(
    ("purchase", "cost"),
    [
        pytest.param(dict(influence="herd", clan="ventrue"), 2, id="CLN-03-ventrue-herd-costs-2"),
        pytest.param(dict(influence="business", clan="ventrue"), 1, id="INF-01-ventrue-business-1"),
        pytest.param(dict(influence="herd", clan="toreador"), 1, id="INF-01-toreador-herd-1"),
        pytest.param(dict(influence="occult", clan=None), 1, id="INF-01-ghoul-occult-1"),
        pytest.param(
            dict(influence="herd", clan="ventrue", ventrue_herd_mode="half_yield"),
            1,
            id="CLN-03-half-yield-setting-costs-1",
        ),
    ],
)
def test_influence_point_cost(purchase: dict[str, Any], cost: int) -> None:
    assert influence_point_cost(**purchase) == cost


@pytest.mark.parametrize(
    ("spend", "blood"),
    [
        pytest.param(dict(herd=2, clan="brujah"), 6, id="BLD-04-herd-yields-3-each"),
        pytest.param(dict(herd=2, clan="ventrue"), 6, id="CLN-03-ventrue-yield-stays-3"),
        pytest.param(
            dict(herd=3, clan="ventrue", ventrue_herd_mode="half_yield"),
            4,
            id="CLN-03-half-yield-rounds-down",
        ),
        pytest.param(
            dict(herd=2, clan="brujah", herd_yield=2), 4, id="BLD-04-masquerade-breach-lowered"
        ),
    ],
)
def test_herd_blood_yield(spend: dict[str, Any], blood: int) -> None:
    assert herd_blood_yield(**spend) == blood


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        pytest.param(
            dict(influence="status", clan=None), "Unknown influence", id="INF-01-unknown-influence"
        ),
        pytest.param(
            dict(influence="herd", clan="ventrue", ventrue_herd_mode="triple"),
            "ventrue_herd_mode",
            id="CLN-03-unknown-mode",
        ),
    ],
)
def test_influence_cost_refuses_bad_input(call: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        influence_point_cost(**call)


# --- DIS-03 .. DIS-06: discipline costs ----------------------------------------------------------


@pytest.mark.parametrize(
    ("purchase", "cost"),
    [
        pytest.param(
            dict(levels=["1a"], in_clan=False, at_creation=True),
            8,
            id="DIS-04-nosferatu-heightened-senses",
        ),
        pytest.param(
            dict(levels=["1a", "1b"], in_clan=False, at_creation=True),
            13,
            id="DIS-04-tremere-mind-buys-inquisition-and-blood-mastery",
        ),
        pytest.param(
            dict(levels=["1a"], in_clan=False, at_creation=False),
            4,
            id="DIS-05-nosferatu-taught-heightened-senses",
        ),
        pytest.param(
            dict(levels=["1a"], in_clan=False, at_creation=False),
            4,
            id="DIS-05-tremere-blood-month-1-inquisition",
        ),
        pytest.param(
            dict(levels=["1b"], in_clan=False, at_creation=False, path_owned=True),
            4,
            id="DIS-05-tremere-blood-month-2-blood-mastery",
        ),
        pytest.param(
            dict(levels=["1a", "1b"], in_clan=False, at_creation=False),
            8,
            id="DIS-05-tremere-blood-total-8-over-2-months",
        ),
        pytest.param(
            dict(levels=["1a"], in_clan=False, at_creation=False, caitiff=True),
            5,
            id="DIS-06-caitiff-auspex-1a-in-play",
        ),
        pytest.param(
            dict(levels=["1a"], in_clan=False, at_creation=True, caitiff=True),
            9,
            id="DIS-06-caitiff-auspex-1a-at-creation",
        ),
        pytest.param(
            dict(
                levels=["1a"],
                in_clan=False,
                at_creation=True,
                caitiff=True,
                caitiff_surcharge_at_creation=False,
            ),
            8,
            id="DIS-06-setting-no-caitiff-surcharge-at-creation",
        ),
        pytest.param(
            dict(levels=["1a"], in_clan=True, at_creation=False, caitiff=True),
            3,
            id="DIS-06-caitiff-in-clan-no-surcharge",
        ),
        pytest.param(
            dict(levels=["1a"], in_clan=True, at_creation=True), 3, id="DIS-03-in-clan-basic-3"
        ),
        pytest.param(
            dict(levels=["2a"], in_clan=True, at_creation=False), 6, id="DIS-03-in-clan-2a-6"
        ),
        pytest.param(
            dict(levels=["3a"], in_clan=True, at_creation=False), 9, id="DIS-03-in-clan-3a-9"
        ),
        pytest.param(
            dict(levels=["1a", "1b", "2a", "2b", "3a"], in_clan=True, at_creation=True),
            27,
            id="DIS-03-in-clan-all-five-3-3-6-6-9",
        ),
        pytest.param(
            dict(levels=["2a"], in_clan=False, at_creation=False, path_owned=True),
            7,
            id="DIS-05-out-of-clan-2a-in-play-6-plus-1",
        ),
        pytest.param(
            dict(levels=["1b"], in_clan=False, at_creation=True, path_owned=True),
            5,
            id="DIS-04-path-owned-no-path-fee",
        ),
        pytest.param(
            dict(levels=["2a"], in_clan=True, at_creation=False, discipline_cost_intermediate=5),
            5,
            id="DIS-03-setting-intermediate-cost",
        ),
        pytest.param(
            dict(levels=["3a"], in_clan=True, at_creation=False, discipline_cost_advanced=12),
            12,
            id="DIS-03-setting-advanced-cost",
        ),
    ],
)
def test_discipline_cost(purchase: dict[str, Any], cost: int) -> None:
    assert discipline_cost(**purchase) == cost


@pytest.mark.parametrize(
    ("levels", "problem"),
    [
        pytest.param(["1a", "2a"], "without gaps", id="DIS-02-cost-refuses-gap"),
        pytest.param(["1a", "1a"], "without gaps", id="DIS-02-cost-refuses-repeat"),
        pytest.param([], "at least one", id="DIS-03-cost-refuses-nothing"),
        pytest.param(["4a"], "Unknown discipline level", id="DIS-01-cost-refuses-4a"),
        pytest.param("1a", "as a list", id="DIS-03-cost-refuses-bare-string"),
    ],
)
def test_discipline_cost_refuses_bad_levels(levels: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        discipline_cost(levels, in_clan=False, at_creation=False)


@pytest.mark.parametrize(
    ("purchase", "problem"),
    [
        pytest.param(
            dict(discipline="auspex", kind="kindred", clan="nosferatu", at_creation=True),
            None,
            id="DIS-04-nosferatu-auspex-at-creation-ok",
        ),
        pytest.param(
            dict(discipline="protean", kind="kindred", clan="brujah", at_creation=True),
            "restricted",
            id="DIS-04-restricted-out-of-clan-at-creation",
        ),
        pytest.param(
            dict(discipline="protean", kind="kindred", clan="brujah", at_creation=False),
            None,
            id="DIS-07-restricted-out-of-clan-in-play-ok",
        ),
        pytest.param(
            dict(discipline="protean", kind="kindred", clan="gangrel", at_creation=True),
            None,
            id="DIS-04-restricted-in-clan-ok",
        ),
        pytest.param(
            dict(
                discipline="thaumaturgy_blood",
                kind="kindred",
                clan="tremere",
                chosen=["thaumaturgy_mind"],
                at_creation=True,
            ),
            None,
            id="DIS-04-tremere-other-path-at-creation-ok",
        ),
        pytest.param(
            dict(
                discipline="thaumaturgy_blood",
                kind="kindred",
                clan="caitiff",
                chosen=["auspex", "celerity", "potence"],
                at_creation=True,
            ),
            "restricted",
            id="DIS-04-caitiff-no-thaumaturgy-at-creation",
        ),
        pytest.param(
            dict(discipline="potence", kind="ghoul", at_creation=True),
            None,
            id="CRE-03-ghoul-potence-ok",
        ),
        pytest.param(
            dict(discipline="auspex", kind="ghoul", at_creation=False),
            "Celerity, Fortitude and Potence",
            id="CRE-03-ghoul-no-auspex",
        ),
        pytest.param(
            dict(discipline="celerity", kind="kine", at_creation=True),
            "Kine may not",
            id="CRE-04-kine-no-disciplines",
        ),
        pytest.param(
            dict(discipline="celerity", kind="ghoul", clan="brujah", at_creation=True),
            "no clan",
            id="CRE-03-ghoul-with-clan-refused",
        ),
        pytest.param(
            dict(discipline="celerity", kind="kindred", at_creation=True),
            "needs a clan",
            id="CRE-01-kindred-without-clan",
        ),
        pytest.param(
            dict(discipline="celerity", kind="mummy", at_creation=True),
            "Unknown character kind",
            id="CRE-01-unknown-kind",
        ),
    ],
)
def test_who_may_buy_a_discipline(purchase: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        check_discipline_allowed(**purchase)
    else:
        with pytest.raises(ValueError, match=problem):
            check_discipline_allowed(**purchase)


# --- DIS-07: teachers ----------------------------------------------------------------------------

TREMERE_BLOOD_3A = Teacher(clan="tremere", level="3a", chosen=("thaumaturgy_blood",))
BRUJAH_WITH_BLOOD_3A = Teacher(clan="brujah", level="3a")
TREMERE_BLOOD_2B = Teacher(clan="tremere", level="2b", chosen=("thaumaturgy_blood",))
MALKAVIAN_AUSPEX_2A = Teacher(clan="malkavian", level="2a")
MALKAVIAN_AUSPEX_1B = Teacher(clan="malkavian", level="1b")
NOSFERATU_WITH_AUSPEX_3A = Teacher(clan="nosferatu", level="3a")
CAITIFF_AUSPEX_2A = Teacher(clan="caitiff", level="2a", chosen=("auspex", "celerity", "potence"))


@pytest.mark.parametrize(
    ("lesson", "problem"),
    [
        pytest.param(
            dict(
                discipline="thaumaturgy_blood",
                level="1a",
                student_clan="brujah",
                teacher=TREMERE_BLOOD_3A,
            ),
            None,
            id="DIS-07-tremere-teaches-brujah-inquisition-month-1",
        ),
        pytest.param(
            dict(
                discipline="thaumaturgy_blood",
                level="1b",
                student_clan="brujah",
                teacher=TREMERE_BLOOD_3A,
            ),
            None,
            id="DIS-07-tremere-teaches-brujah-blood-mastery-month-2",
        ),
        pytest.param(
            dict(discipline="thaumaturgy_blood", level="2a", student_clan="brujah", teacher=None),
            None,
            id="DIS-07-brujah-buys-potency-without-teacher",
        ),
        pytest.param(
            dict(discipline="thaumaturgy_blood", level="2b", student_clan="brujah", teacher=None),
            None,
            id="DIS-07-brujah-buys-blood-destruction-without-teacher",
        ),
        pytest.param(
            dict(discipline="thaumaturgy_blood", level="3a", student_clan="brujah", teacher=None),
            None,
            id="DIS-07-brujah-buys-cauldron-without-teacher",
        ),
        pytest.param(
            dict(
                discipline="thaumaturgy_blood",
                level="1a",
                student_clan="ventrue",
                teacher=BRUJAH_WITH_BLOOD_3A,
            ),
            "only out-of-clan",
            id="DIS-07-brujah-cannot-teach-blood",
        ),
        pytest.param(
            dict(
                discipline="thaumaturgy_mind",
                level="1a",
                student_clan="ventrue",
                teacher=TREMERE_BLOOD_3A,
            ),
            "only out-of-clan",
            id="DIS-07-tremere-blood-cannot-teach-mind",
        ),
        pytest.param(
            dict(
                discipline="thaumaturgy_fire",
                level="1a",
                student_clan="ventrue",
                teacher=TREMERE_BLOOD_3A,
            ),
            "only out-of-clan",
            id="DIS-07-tremere-blood-cannot-teach-fire",
        ),
        pytest.param(
            dict(
                discipline="thaumaturgy_blood",
                level="1a",
                student_clan="brujah",
                teacher=TREMERE_BLOOD_2B,
            ),
            "3a or higher",
            id="DIS-07-restricted-teacher-at-2b-rejected",
        ),
        pytest.param(
            dict(
                discipline="auspex",
                level="1a",
                student_clan="nosferatu",
                teacher=MALKAVIAN_AUSPEX_2A,
            ),
            None,
            id="DIS-05-nosferatu-taught-by-auspex-2a",
        ),
        pytest.param(
            dict(
                discipline="auspex",
                level="1a",
                student_clan="nosferatu",
                teacher=MALKAVIAN_AUSPEX_1B,
            ),
            "2a or higher",
            id="DIS-07-teacher-at-1b-too-low",
        ),
        pytest.param(
            dict(discipline="auspex", level="1a", student_clan="nosferatu", teacher=None),
            "must be taught",
            id="DIS-07-out-of-clan-basic-needs-teacher",
        ),
        pytest.param(
            dict(
                discipline="auspex",
                level="1a",
                student_clan="brujah",
                teacher=NOSFERATU_WITH_AUSPEX_3A,
            ),
            "only out-of-clan",
            id="DIS-07-out-of-clan-3a-cannot-teach",
        ),
        pytest.param(
            dict(
                discipline="thaumaturgy_blood",
                level="1a",
                student_clan="tremere",
                student_chosen=["thaumaturgy_mind"],
                teacher=None,
            ),
            None,
            id="DIS-05-tremere-learns-other-path-without-teacher",
        ),
        pytest.param(
            dict(discipline="potence", level="1a", student_clan="brujah", teacher=None),
            None,
            id="DIS-07-in-clan-needs-no-teacher",
        ),
        pytest.param(
            dict(discipline="auspex", level="1b", student_clan="brujah", teacher=CAITIFF_AUSPEX_2A),
            None,
            id="DIS-07-caitiff-chosen-count-in-clan",
        ),
        pytest.param(
            dict(
                discipline="auspex",
                level="1b",
                student_clan="brujah",
                teacher=CAITIFF_AUSPEX_2A,
                caitiff_chosen_count_in_clan_for_teaching=False,
            ),
            "only out-of-clan",
            id="DIS-07-setting-caitiff-chosen-not-in-clan",
        ),
        pytest.param(
            dict(discipline="celerity", level="1a", student_clan=None, teacher=None),
            "must be taught",
            id="DIS-07-ghoul-needs-teacher-too",
        ),
    ],
)
def test_teachers(lesson: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        check_teacher(**lesson)
    else:
        with pytest.raises(ValueError, match=problem):
            check_teacher(**lesson)


@pytest.mark.parametrize(
    ("lesson", "required"),
    [
        pytest.param(
            dict(discipline="auspex", level="1b", student_clan="brujah"),
            True,
            id="DIS-07-basic-needs-teacher",
        ),
        pytest.param(
            dict(discipline="auspex", level="2a", student_clan="brujah"),
            False,
            id="DIS-07-intermediate-no-teacher",
        ),
        pytest.param(
            dict(discipline="celerity", level="1a", student_clan="brujah"),
            False,
            id="DIS-07-in-clan-no-teacher",
        ),
    ],
)
def test_teacher_required(lesson: dict[str, Any], required: bool) -> None:
    assert teacher_required(**lesson) is required


# --- DIS-08: timing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("purchase", "problem"),
    [
        pytest.param(
            dict(levels=["1a", "1b"], when="downtime", in_clan=False),
            "per month",
            id="DIS-08-blood-1a-1b-needs-two-months",
        ),
        pytest.param(
            dict(levels=["1a"], when="downtime", in_clan=False), None, id="DIS-08-blood-1a-month-1"
        ),
        pytest.param(
            dict(levels=["1b"], when="downtime", in_clan=False, levels_bought_this_cycle=1),
            "per month",
            id="DIS-08-blood-1b-same-month-rejected",
        ),
        pytest.param(
            dict(levels=["1b"], when="downtime", in_clan=False, levels_bought_this_cycle=0),
            None,
            id="DIS-08-blood-1b-next-month",
        ),
        pytest.param(
            dict(levels=["1a"], when="downtime", in_clan=True, levels_bought_this_cycle=1),
            "per month",
            id="DIS-08-one-level-across-all-disciplines",
        ),
        pytest.param(
            dict(levels=["1a"], when="game", in_clan=False),
            "only be bought in downtime",
            id="DIS-08-out-of-clan-not-at-game",
        ),
        pytest.param(
            dict(levels=["2a"], when="game", in_clan=True),
            None,
            id="DIS-08-in-clan-at-game-before-play",
        ),
        pytest.param(
            dict(levels=["1a", "1b", "2a"], when="creation", in_clan=False),
            None,
            id="DIS-08-no-limit-at-creation",
        ),
        pytest.param(
            dict(levels=["1a", "1b"], when="downtime", in_clan=True, discipline_levels_per_cycle=2),
            None,
            id="DIS-08-setting-two-per-cycle",
        ),
        pytest.param(
            dict(levels=["1a"], when="someday", in_clan=True),
            "when must be one of",
            id="DIS-08-unknown-moment",
        ),
        pytest.param(
            dict(levels=["1a"], when="downtime", in_clan=True, levels_bought_this_cycle=-1),
            "at least 0",
            id="DIS-08-negative-count",
        ),
    ],
)
def test_purchase_timing(purchase: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        check_purchase_timing(**purchase)
    else:
        with pytest.raises(ValueError, match=problem):
            check_purchase_timing(**purchase)


# --- CRE-01 / CRE-02 / CRE-05: creation ----------------------------------------------------------

KINDRED_BRUJAH = dict(
    kind="kindred",
    clan="brujah",
    trait_areas={"physical": 7, "social": 5, "mental": 3},
    abilities={"brawl": 2, "melee": 2, "dodge": 1},
    willpower=2,
    influences={"underworld": 2, "herd": 1},
    free_disciplines={"potence": ["1a", "1b"], "celerity": ["1a"]},
)
GHOUL = dict(
    kind="ghoul",
    trait_areas={"physical": 5, "social": 3, "mental": 7},
    abilities={"firearms": 1, "investigate": 2, "computer": 2},
    willpower=1,
    influences={"business": 3},
)


def changed(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, **changes}


@pytest.mark.parametrize(
    "sheet",
    [
        pytest.param(KINDRED_BRUJAH, id="CRE-01-kindred-brujah-valid"),
        pytest.param(GHOUL, id="CRE-01-SRC-02-ghoul-valid-free-ability-names"),
        pytest.param(changed(GHOUL, kind="kine"), id="CRE-01-kine-valid"),
        pytest.param(
            changed(
                KINDRED_BRUJAH,
                clan="tremere",
                chosen=["thaumaturgy_fire"],
                influences={"occult": 2},
                free_disciplines={"thaumaturgy_fire": ["1a", "1b"], "auspex": ["1a"]},
            ),
            id="CLN-04-tremere-package-has-2-influences",
        ),
        pytest.param(
            changed(
                KINDRED_BRUJAH,
                clan="caitiff",
                chosen=["auspex", "celerity", "potence"],
                free_disciplines={"auspex": ["1a"], "celerity": ["1a"], "potence": ["1a"]},
            ),
            id="CRE-01-caitiff-free-levels-in-chosen",
        ),
    ],
)
def test_valid_creation_packages(sheet: dict[str, Any]) -> None:
    check_creation_package(**sheet)


@pytest.mark.parametrize(
    ("sheet", "problem"),
    [
        pytest.param(
            changed(KINDRED_BRUJAH, trait_areas={"physical": 7, "social": 6, "mental": 3}),
            "7, 5 and 3",
            id="CRE-01-traits-not-7-5-3",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, trait_areas={"physical": 7, "social": 5}),
            "three trait areas",
            id="CRE-01-missing-trait-area",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, abilities={"brawl": 3, "melee": 2}),
            "at least 3 different",
            id="CRE-01-only-2-distinct-abilities",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, abilities={"brawl": 2, "melee": 2, "dodge": 2}),
            "exactly 5 ability",
            id="CRE-01-6-ability-points",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, abilities={"brawl": 2, "melee": 3, "dodge": 0}),
            "rating of 1 or more",
            id="CRE-01-zero-rated-ability",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, willpower=1), "2 willpower", id="CRE-01-kindred-willpower-2"
        ),
        pytest.param(changed(GHOUL, willpower=2), "1 willpower", id="CRE-01-ghoul-willpower-1"),
        pytest.param(
            changed(KINDRED_BRUJAH, influences={"herd": 4}),
            "exactly 3 starting",
            id="CRE-01-too-many-influences",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, influences={"status": 3}),
            "Unknown influence",
            id="INF-01-unknown-influence-type",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, influences={"herd": -1, "occult": 4}),
            "0 or more",
            id="CRE-01-negative-influence",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, free_disciplines={"auspex": ["1a", "1b"], "potence": ["1a"]}),
            "must be in-clan",
            id="CRE-01-free-level-out-of-clan",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, free_disciplines={"potence": ["1b"], "celerity": ["1a", "1b"]}),
            "1b requires 1a",
            id="CRE-01-free-1b-without-1a",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, free_disciplines={"potence": ["1a", "1b", "2a"]}),
            "basic only",
            id="CRE-01-free-2a-not-basic",
        ),
        pytest.param(
            changed(KINDRED_BRUJAH, free_disciplines={"potence": ["1a", "1b"]}),
            "exactly 3 free",
            id="CRE-01-only-2-free-levels",
        ),
        pytest.param(
            changed(GHOUL, free_disciplines={"potence": ["1a"]}),
            "no free disciplines",
            id="CRE-01-ghoul-gets-no-free-levels",
        ),
    ],
)
def test_invalid_creation_packages(sheet: dict[str, Any], problem: str) -> None:
    with pytest.raises(rules.RuleViolation, match=problem):
        check_creation_package(**sheet)


def test_creation_package_lists_every_problem() -> None:
    sheet = changed(KINDRED_BRUJAH, willpower=3, influences={"herd": 5})
    with pytest.raises(rules.RuleViolation) as raised:
        check_creation_package(**sheet)
    assert len(raised.value.problems) == 2


@pytest.mark.parametrize(
    ("kind", "freebies", "willpower"),
    [
        pytest.param("kindred", 10, 2, id="CRE-01-kindred-10-freebies"),
        pytest.param("ghoul", 19, 1, id="CRE-01-ghoul-19-freebies"),
        pytest.param("kine", 16, 1, id="CRE-01-kine-16-freebies"),
    ],
)
def test_package_table(kind: str, freebies: int, willpower: int) -> None:
    package = rules.creation_package(kind)
    assert (package.freebies, package.willpower) == (freebies, willpower)


UGLY = Disadvantage("hideously ugly", major=True, physical=True, hideously_ugly=True)
LIMP = Disadvantage("limp", major=True, physical=True)
BLIND_ONE_EYE = Disadvantage("blind in one eye", major=False, physical=True)
STUTTER = Disadvantage("stutter", major=False, physical=True)
TRUTHFUL = Disadvantage("complete truthfulness", major=False, physical=False)
PHOBIA = Disadvantage("phobia of fire", major=True, physical=False)
VENGEFUL = Disadvantage("vengefulness", major=False, physical=False)


@pytest.mark.parametrize(
    ("clan", "disadvantages", "problem"),
    [
        pytest.param("brujah", [PHOBIA], None, id="CRE-02-one-major"),
        pytest.param("brujah", [TRUTHFUL, STUTTER], None, id="CRE-02-two-minor"),
        pytest.param("brujah", [TRUTHFUL], "2 minor", id="CRE-02-one-minor-not-enough"),
        pytest.param(None, [], "2 minor", id="CRE-02-ghoul-needs-disadvantages-too"),
        pytest.param("malkavian", [PHOBIA, LIMP], None, id="CRE-02-malkavian-2-major"),
        pytest.param(
            "malkavian", [TRUTHFUL, STUTTER, BLIND_ONE_EYE], None, id="CRE-02-malkavian-3-minor"
        ),
        pytest.param(
            "malkavian",
            [PHOBIA, TRUTHFUL],
            "2 major or 3 minor",
            id="CRE-02-malkavian-literal-1-major-1-minor",
        ),
        pytest.param(
            "malkavian", [LIMP, UGLY], "non-physical", id="CRE-02-malkavian-needs-non-physical"
        ),
        pytest.param("nosferatu", [UGLY, LIMP], None, id="CRE-02-nosferatu-2-major-physical"),
        pytest.param(
            "nosferatu", [UGLY, STUTTER, BLIND_ONE_EYE], None, id="CRE-02-nosferatu-1-major-2-minor"
        ),
        pytest.param(
            "nosferatu",
            [LIMP, Disadvantage("hunchback", major=True, physical=True)],
            "hideously ugly",
            id="CRE-02-nosferatu-needs-ugly",
        ),
        pytest.param(
            "nosferatu", [UGLY, PHOBIA], "major physical", id="CRE-02-nosferatu-phobia-not-physical"
        ),
        pytest.param(
            "nosferatu",
            [UGLY, TRUTHFUL, VENGEFUL],
            "major physical",
            id="CRE-02-SRC-05-nosferatu-minors-physical",
        ),
        pytest.param(
            "brujah",
            [Disadvantage("ugly", major=True, physical=False, hideously_ugly=True)],
            "physical disadvantage",
            id="CRE-02-ugly-is-physical",
        ),
    ],
)
def test_disadvantages(
    clan: str | None, disadvantages: list[Disadvantage], problem: str | None
) -> None:
    if problem is None:
        check_disadvantages(disadvantages, clan=clan)
    else:
        with pytest.raises(ValueError, match=problem):
            check_disadvantages(disadvantages, clan=clan)


@pytest.mark.parametrize(
    ("generation", "caitiff", "settings", "problem"),
    [
        pytest.param(13, True, {}, None, id="CRE-05-caitiff-13th"),
        pytest.param(10, True, {}, None, id="CRE-05-caitiff-10th"),
        pytest.param(9, True, {}, "between generation 13 and 10", id="CRE-05-caitiff-not-9th"),
        pytest.param(8, False, {}, None, id="CRE-05-others-down-to-8th"),
        pytest.param(7, False, {}, "between generation 13 and 8", id="CRE-05-others-not-7th"),
        pytest.param(14, False, {}, "between", id="CRE-05-nobody-above-13th"),
        pytest.param(7, False, {"lowest_creation_generation": 7}, None, id="CRE-05-setting-7th"),
    ],
)
def test_creation_generation(
    generation: int, caitiff: bool, settings: dict[str, int], problem: str | None
) -> None:
    if problem is None:
        check_creation_generation(generation, caitiff=caitiff, **settings)
    else:
        with pytest.raises(ValueError, match=problem):
            check_creation_generation(generation, caitiff=caitiff, **settings)


# --- CRE-07: generation table -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("generation", "settings", "maximum"),
    [
        pytest.param(13, {}, 10, id="CRE-07-SRC-01-13th-is-10"),
        pytest.param(12, {}, 11, id="CRE-07-12th-is-11"),
        pytest.param(10, {}, 13, id="CRE-07-10th-is-13"),
        pytest.param(8, {}, 15, id="CRE-07-8th-is-15"),
        pytest.param(14, {}, 9, id="CRE-07-14th-one-less"),
        pytest.param(9, {"generation_table_base": 8}, 12, id="CRE-07-setting-base-8"),
        pytest.param(12, {"starting_generation": 12}, 10, id="CRE-07-setting-start-12"),
        pytest.param(15, {"generation_table_base": 1}, 1, id="CRE-07-never-below-1"),
    ],
)
def test_generation_maximums(generation: int, settings: dict[str, int], maximum: int) -> None:
    assert generation_maximums(generation, **settings) == GenerationMaximums(
        traits=maximum, willpower=maximum, blood_pool=maximum
    )


@pytest.mark.parametrize(
    ("generation", "settings"),
    [
        pytest.param(0, {}, id="CRE-07-generation-0"),
        pytest.param(12.5, {}, id="CRE-07-fractional-generation"),
        pytest.param(13, {"generation_table_base": 0}, id="CRE-07-base-0"),
    ],
)
def test_generation_maximums_refuses(generation: Any, settings: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        generation_maximums(generation, **settings)


# --- CRE-08 / CLN-01: creation flags -----------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "fields"),
    [
        pytest.param(dict(clan="gangrel", protean_form="wolf"), set(), id="CRE-08-gangrel-wolf"),
        pytest.param(dict(clan="gangrel", protean_form="bat"), set(), id="CRE-08-gangrel-bat"),
        pytest.param(dict(clan="gangrel"), {"protean_form"}, id="CRE-08-gangrel-must-choose"),
        pytest.param(
            dict(clan="gangrel", protean_form="both"), {"protean_form"}, id="CRE-08-never-both"
        ),
        pytest.param(
            dict(clan="brujah", protean_form="bat"), {"protean_form"}, id="CRE-08-others-at-2a"
        ),
        pytest.param(
            dict(clan="brujah", protean_form="bat", gangrel_only_choose_form_at_creation=False),
            set(),
            id="CRE-08-setting-others-may-choose",
        ),
        pytest.param(dict(clan=None, protean_form="wolf"), {"protean_form"}, id="CRE-08-ghoul"),
        pytest.param(
            dict(clan="ventrue"), {"feeding_demographic"}, id="CLN-01-ventrue-needs-demographic"
        ),
        pytest.param(
            dict(clan="ventrue", feeding_demographic="  "),
            {"feeding_demographic"},
            id="CLN-01-ventrue-blank-demographic",
        ),
        pytest.param(
            dict(clan="ventrue", feeding_demographic="Night-shift nurses"),
            set(),
            id="CLN-01-ventrue-demographic",
        ),
        pytest.param(
            dict(clan="toreador", feeding_demographic="Poets"),
            {"feeding_demographic"},
            id="CLN-01-demographic-only-ventrue",
        ),
        pytest.param(dict(clan="tzimisce"), {"embrace_earth"}, id="CLN-01-tzimisce-needs-earth"),
        pytest.param(dict(clan="tzimisce", embrace_earth=True), set(), id="CLN-01-tzimisce-earth"),
        pytest.param(
            dict(clan="lasombra", embrace_earth=True), {"embrace_earth"}, id="CLN-01-earth-only"
        ),
        pytest.param(dict(clan="brujah"), set(), id="CRE-08-brujah-has-no-flags"),
    ],
)
def test_creation_flag_problems(flags: dict[str, Any], fields: set[str]) -> None:
    problems = creation_flag_problems(**flags)
    assert set(problems) == fields
    for message in problems.values():
        assert "(CRE-08)" in message or "(CLN-01)" in message


# --- XP-03 / XP-05: generation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("purchase", "cost"),
    [
        pytest.param(dict(steps=1, diablerie=True), 3, id="XP-05-brujah-diablerizes-pays-3"),
        pytest.param(
            dict(steps=1, caitiff=True, diablerie=True), 4, id="XP-05-caitiff-diablerizes-pays-4"
        ),
        pytest.param(dict(steps=1), 2, id="XP-03-one-step-2"),
        pytest.param(dict(steps=3, caitiff=True), 9, id="CRE-05-caitiff-13th-to-10th-9"),
        pytest.param(dict(steps=5), 10, id="CRE-05-13th-to-8th-10"),
        pytest.param(dict(steps=0), 0, id="CRE-05-no-steps-free"),
        pytest.param(dict(steps=2, generation_step_cost=3), 6, id="XP-03-setting-step-cost"),
    ],
)
def test_generation_cost(purchase: dict[str, Any], cost: int) -> None:
    assert generation_cost(**purchase) == cost


@pytest.mark.parametrize(
    "steps",
    [pytest.param(-1, id="XP-03-negative-steps"), pytest.param(1.5, id="XP-03-fractional-steps")],
)
def test_generation_cost_refuses_bad_steps(steps: Any) -> None:
    with pytest.raises(ValueError, match="steps"):
        generation_cost(steps)


# --- CTL-01: control -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("character", "control"),
    [
        pytest.param(
            dict(clan="ventrue", generation=13, discipline_levels=3, willpower=2),
            10,
            id="CTL-01-13th-3-levels-12-capped-10",
        ),
        pytest.param(
            dict(clan="brujah", generation=13, discipline_levels=3, willpower=2),
            8,
            id="CTL-01-brujah-capped-8",
        ),
        pytest.param(
            dict(clan="ventrue", generation=9, discipline_levels=10, extra_control=1, willpower=3),
            4,
            id="CTL-01-9th-10-levels-max-3-4",
        ),
        pytest.param(
            dict(
                clan="gangrel", generation=13, discipline_levels=9, willpower=2, animalism_1b=True
            ),
            7,
            id="CTL-01-gangrel-animalism-1b-base-6-capped-7",
        ),
        pytest.param(
            dict(clan="toreador", generation=13, discipline_levels=9, willpower=2),
            6,
            id="CTL-01-base-6-uncapped",
        ),
        pytest.param(
            dict(
                clan="toreador", generation=13, discipline_levels=9, willpower=2, animalism_1b=True
            ),
            9,
            id="CTL-01-animalism-1b-adds-3",
        ),
        pytest.param(
            dict(clan="brujah", generation=13, discipline_levels=9, willpower=2),
            5,
            id="CTL-01-brujah-minus-1-below-cap",
        ),
        pytest.param(
            dict(
                clan="malkavian",
                generation=12,
                discipline_levels=6,
                childer=2,
                diableries=1,
                willpower=2,
            ),
            5,
            id="CTL-01-childer-and-diableries-count",
        ),
    ],
)
def test_control_traits(character: dict[str, Any], control: int) -> None:
    assert control_traits(**character) == control


@pytest.mark.parametrize(
    ("character", "problem"),
    [
        pytest.param(
            dict(clan="brujah", generation=13, discipline_levels=-1, willpower=2),
            "discipline_levels must be at least 0",
            id="CTL-01-negative-levels",
        ),
        pytest.param(
            dict(clan="brujah", generation=0, discipline_levels=3, willpower=2),
            "generation must be at least 1",
            id="CTL-01-generation-0",
        ),
        pytest.param(
            dict(clan="brujah", generation=13, discipline_levels=3, willpower=-2),
            "willpower",
            id="CTL-01-negative-willpower",
        ),
        pytest.param(
            dict(clan="brujah", generation=13, discipline_levels=3, childer=-1, willpower=2),
            "childer",
            id="CTL-01-negative-childer",
        ),
        pytest.param(
            dict(clan="ghoul", generation=13, discipline_levels=3, willpower=2),
            "Unknown clan",
            id="CTL-01-unknown-clan",
        ),
        pytest.param(
            dict(
                clan="gangrel", generation=13, discipline_levels=1, willpower=2, animalism_1b=True
            ),
            "at least 2",
            id="CTL-01-animalism-1b-needs-2-levels",
        ),
    ],
)
def test_control_traits_refuses_bad_input(character: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        control_traits(**character)


@pytest.mark.parametrize(
    ("control", "npc"),
    [
        pytest.param(0, True, id="CTL-02-below-1-npc"),
        pytest.param(1, False, id="CTL-02-1-stays-pc"),
    ],
)
def test_becomes_npc(control: int, npc: bool) -> None:
    assert rules.becomes_npc(control) is npc


# --- BLD: blood ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("control", "limit"),
    [
        pytest.param(7, 3, id="BLD-01-control-7-carries-3"),
        pytest.param(10, 5, id="BLD-01-control-10-carries-5"),
        pytest.param(8, 4, id="BLD-01-control-8-carries-4"),
        pytest.param(1, 0, id="BLD-01-control-1-carries-0"),
    ],
)
def test_on_body_blood_limit(control: int, limit: int) -> None:
    assert on_body_blood_limit(control) == limit


@pytest.mark.parametrize(
    "control",
    [
        pytest.param(-1, id="BLD-01-negative-control"),
        pytest.param(11, id="BLD-01-control-above-10"),
        pytest.param("7", id="BLD-01-string-control"),
    ],
)
def test_on_body_blood_limit_refuses_bad_control(control: Any) -> None:
    with pytest.raises(ValueError, match="control"):
        on_body_blood_limit(control)


@pytest.mark.parametrize(
    ("blood", "unusable_from"),
    [
        pytest.param(
            dict(donor_type="kine", collected_on=date(2024, 1, 15)),
            date(2024, 4, 15),
            id="BLD-03-kine-collected-jan-15-unusable-apr-15",
        ),
        pytest.param(
            dict(donor_type="kine", collected_on=date(2023, 11, 30)),
            date(2024, 2, 29),
            id="BLD-03-kine-month-end-clamped",
        ),
        pytest.param(
            dict(donor_type="kindred", collected_on=date(2024, 1, 15)),
            None,
            id="BLD-03-single-kindred-never-expires",
        ),
        pytest.param(
            dict(donor_type="mixed_kindred", collected_on=date(2024, 1, 15)),
            None,
            id="BLD-03-mixed-kindred-never-expires",
        ),
        pytest.param(
            dict(
                donor_type="mixed_kindred",
                collected_on=date(2024, 1, 15),
                mixed_kindred_blood_expires=True,
            ),
            date(2024, 4, 15),
            id="BLD-03-setting-mixed-expires",
        ),
        pytest.param(
            dict(donor_type="kine", collected_on=date(2024, 1, 15), kine_blood_months=2),
            date(2024, 3, 15),
            id="BLD-03-setting-kine-months",
        ),
    ],
)
def test_stored_blood_expiry(blood: dict[str, Any], unusable_from: date | None) -> None:
    assert stored_blood_unusable_from(**blood) == unusable_from


@pytest.mark.parametrize(
    ("blood", "problem"),
    [
        pytest.param(
            dict(donor_type="werewolf", collected_on=date(2024, 1, 15)),
            "Unknown donor type",
            id="BLD-03-unknown-donor-type",
        ),
        pytest.param(
            dict(donor_type="kine", collected_on="2024-01-15"),
            "must be a date",
            id="BLD-03-string-date",
        ),
    ],
)
def test_stored_blood_expiry_refuses_bad_input(blood: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        stored_blood_unusable_from(**blood)


# --- BND: blood bonds ----------------------------------------------------------------------------


def pure(night: date, regnant: str) -> Drink:
    return Drink(night=night, donors=(regnant,))


def mixed(night: date, *donors: str) -> Drink:
    return Drink(night=night, donors=donors, mixed=True)


THREE_NIGHTS_OF_ANNA = [
    pure(date(2024, 1, 1), "anna"),
    pure(date(2024, 1, 5), "anna"),
    pure(date(2024, 2, 20), "anna"),
]
SIX_MIXED_DRINKS = [mixed(date(2024, month, 1), "bela", "carl") for month in range(1, 4)] + [
    mixed(date(2024, 3, 1), "bela", "carl"),
    mixed(date(2024, 3, 1), "bela", "carl"),
    mixed(date(2024, 3, 1), "bela"),
]


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        pytest.param(
            dict(drinks=THREE_NIGHTS_OF_ANNA, on=date(2024, 2, 20)),
            dict(pure_regnant="anna", pure_since=date(2024, 2, 20), pure_ends=date(2025, 2, 20)),
            id="BND-03-bound-on-feb-20-ending-2025-02-20",
        ),
        pytest.param(
            dict(drinks=THREE_NIGHTS_OF_ANNA, on=date(2025, 2, 19)),
            dict(pure_regnant="anna", pure_ends=date(2025, 2, 20)),
            id="BND-03-still-bound-the-day-before-the-end",
        ),
        pytest.param(
            dict(drinks=THREE_NIGHTS_OF_ANNA, on=date(2025, 2, 20)),
            dict(pure_regnant=None, pure_levels={}),
            id="BND-03-bond-over-12-months-after-last-drink",
        ),
        pytest.param(
            dict(
                drinks=THREE_NIGHTS_OF_ANNA, on=date(2024, 6, 15), deaths={"anna": date(2024, 6, 1)}
            ),
            dict(pure_regnant="anna", pure_ends=date(2024, 7, 1)),
            id="BND-03-regnant-dies-jun-1-bond-ends-jul-1",
        ),
        pytest.param(
            dict(
                drinks=THREE_NIGHTS_OF_ANNA, on=date(2024, 7, 1), deaths={"anna": date(2024, 6, 1)}
            ),
            dict(pure_regnant=None),
            id="BND-03-regnant-death-plus-1-month-over",
        ),
        pytest.param(
            dict(
                drinks=[pure(date(2024, 1, 1), "anna"), pure(date(2024, 1, 1), "anna")],
                on=date(2024, 1, 2),
            ),
            dict(pure_regnant=None, pure_levels={"anna": 1}),
            id="BND-03-two-drinks-one-night-level-1",
        ),
        pytest.param(
            dict(drinks=THREE_NIGHTS_OF_ANNA[:2], on=date(2024, 1, 6)),
            dict(pure_levels={"anna": 2}),
            id="BND-01-level-2-not-yet-bound",
        ),
        pytest.param(
            dict(drinks=THREE_NIGHTS_OF_ANNA[:2], on=date(2025, 1, 5)),
            dict(pure_levels={}),
            id="BND-03-partial-levels-lapse-after-12-months",
        ),
        pytest.param(
            dict(
                drinks=[
                    *THREE_NIGHTS_OF_ANNA,
                    pure(date(2024, 3, 1), "bela"),
                    mixed(date(2024, 3, 2), "carl", "dora"),
                ],
                on=date(2024, 3, 3),
            ),
            dict(pure_regnant="anna", pure_levels={}, share_counts={}),
            id="BND-02-other-blood-no-effect-while-bound",
        ),
        pytest.param(
            dict(
                drinks=[*THREE_NIGHTS_OF_ANNA, pure(date(2024, 8, 1), "anna")], on=date(2024, 8, 2)
            ),
            dict(pure_regnant="anna", pure_ends=date(2025, 8, 1)),
            id="BND-02-regnant-blood-refreshes-timer",
        ),
        pytest.param(
            dict(
                drinks=[*THREE_NIGHTS_OF_ANNA, pure(date(2024, 8, 1), "anna")],
                on=date(2024, 8, 2),
                regnant_drink_refreshes_bond=False,
            ),
            dict(pure_regnant="anna", pure_ends=date(2025, 2, 20)),
            id="BND-02-setting-no-refresh",
        ),
        pytest.param(
            dict(
                drinks=THREE_NIGHTS_OF_ANNA,
                on=date(2024, 3, 1),
                rituals=[BondBreak(night=date(2024, 2, 25), donor="anna")],
            ),
            dict(pure_regnant=None, pure_levels={}),
            id="BND-03-ritual-ends-pure-bond",
        ),
        pytest.param(
            dict(drinks=SIX_MIXED_DRINKS, on=date(2024, 3, 1)),
            dict(share_bonds={"bela": date(2024, 9, 1)}, share_counts={"carl": 5}),
            id="BND-06-sixth-drink-mar-1-bound-ends-sep-1",
        ),
        pytest.param(
            dict(drinks=SIX_MIXED_DRINKS, on=date(2024, 9, 1)),
            dict(share_bonds={}, share_counts={}),
            id="BND-06-share-bond-and-partial-counts-over-after-6-months",
        ),
        pytest.param(
            dict(drinks=SIX_MIXED_DRINKS, on=date(2024, 4, 1), deaths={"bela": date(2024, 3, 10)}),
            dict(share_bonds={"bela": date(2024, 4, 10)}),
            id="BND-06-donor-death-plus-1-month",
        ),
        pytest.param(
            dict(
                drinks=[
                    *SIX_MIXED_DRINKS,
                    pure(date(2024, 3, 5), "anna"),
                    pure(date(2024, 3, 6), "anna"),
                    pure(date(2024, 3, 7), "anna"),
                ],
                on=date(2024, 3, 8),
            ),
            dict(pure_regnant=None, pure_levels={}, share_counts={"carl": 5, "anna": 3}),
            id="BND-05-07-single-donor-counts-as-share-while-share-bound",
        ),
        pytest.param(
            dict(drinks=[*SIX_MIXED_DRINKS, mixed(date(2024, 3, 5), "carl")], on=date(2024, 3, 6)),
            dict(share_bonds={"bela": date(2024, 9, 1), "carl": date(2024, 9, 5)}),
            id="BND-04-any-number-of-share-bonds",
        ),
        pytest.param(
            dict(
                drinks=[
                    *THREE_NIGHTS_OF_ANNA,
                    *[mixed(date(2024, 3, d), "bela") for d in range(1, 7)],
                ],
                on=date(2024, 3, 7),
            ),
            dict(pure_regnant="anna", share_bonds={}, share_counts={}),
            id="BND-07-no-share-bond-while-pure-bound",
        ),
        pytest.param(
            dict(
                drinks=[*THREE_NIGHTS_OF_ANNA, pure(date(2025, 3, 1), "bela")], on=date(2025, 3, 2)
            ),
            dict(pure_regnant=None, pure_levels={"bela": 1}),
            id="BND-03-after-pure-bond-ends-new-levels-count",
        ),
        pytest.param(
            dict(drinks=THREE_NIGHTS_OF_ANNA, on=date(2024, 1, 6), embraced_on=date(2024, 1, 6)),
            dict(pure_levels={}),
            id="CRE-04-embrace-breaks-partial-bonds",
        ),
        pytest.param(
            dict(drinks=THREE_NIGHTS_OF_ANNA, on=date(2024, 1, 2)),
            dict(pure_regnant=None, pure_levels={"anna": 1}),
            id="BND-01-later-drinks-ignored-for-an-earlier-date",
        ),
    ],
)
def test_bond_state(history: dict[str, Any], expected: dict[str, Any]) -> None:
    state = bond_state(**history)
    assert {name: getattr(state, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("drink", "problem"),
    [
        pytest.param(
            Drink(night=date(2024, 1, 1), donors=("anna", "bela")),
            "exactly one donor",
            id="BND-unmixed-drink-one-donor",
        ),
        pytest.param(
            Drink(night=date(2024, 1, 1), donors=()),
            "one or more donor",
            id="BND-drink-needs-a-donor",
        ),
        pytest.param(
            Drink(night=date(2024, 1, 1), donors=("anna", "anna"), mixed=True),
            "each donor",
            id="BND-04-donor-listed-twice",
        ),
        pytest.param(
            Drink(night="2024-01-01", donors=("anna",)),
            "must be a date",
            id="BND-night-must-be-date",
        ),  # type: ignore[arg-type]
    ],
)
def test_bond_state_refuses_bad_drinks(drink: Drink, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        bond_state([drink], on=date(2024, 2, 1))


def test_bond_state_refuses_a_death_that_is_not_a_date() -> None:
    with pytest.raises(ValueError, match="death date must be a date"):
        bond_state(THREE_NIGHTS_OF_ANNA, on=date(2024, 3, 1), deaths={"anna": "2024-06-01"})


@pytest.mark.parametrize(
    ("request_", "problem"),
    [
        pytest.param(dict(bound=True, active_requests=3), None, id="BND-09-4th-request-ok"),
        pytest.param(
            dict(bound=True, active_requests=4), "at most 4", id="BND-09-5th-request-rejected"
        ),
        pytest.param(
            dict(bound=False, active_requests=0), "bound thrall", id="BND-09-thrall-must-be-bound"
        ),
        pytest.param(
            dict(bound=True, active_requests=-1), "at least 0", id="BND-09-negative-count"
        ),
    ],
)
def test_regnant_requests(request_: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        check_new_request(**request_)
    else:
        with pytest.raises(ValueError, match=problem):
            check_new_request(**request_)


@pytest.mark.parametrize(
    ("set_at", "ignorable"),
    [
        pytest.param("game", True, id="BND-09-game-request-ignorable-with-willpower"),
        pytest.param("downtime", False, id="BND-09-downtime-request-binding"),
    ],
)
def test_request_can_be_ignored(set_at: str, ignorable: bool) -> None:
    assert request_can_be_ignored(set_at) is ignorable


# --- XP-06 / GEN-02 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("xp", "points"),
    [
        pytest.param(
            dict(spent=Decimal(40), unspent=Decimal(5)),
            Decimal(25),
            id="XP-06-40-spent-5-unspent-25",
        ),
        pytest.param(
            dict(spent=Decimal("12.5"), unspent=Decimal("0.5")),
            Decimal("7"),
            id="XP-06-odd-half-rounds-up",
        ),
        pytest.param(dict(spent=Decimal(0), unspent=Decimal(0)), Decimal(0), id="XP-06-nothing"),
        pytest.param(dict(spent=10, unspent=2), Decimal(7), id="XP-06-whole-numbers-accepted"),
    ],
)
def test_retirement_points(xp: dict[str, Any], points: Decimal) -> None:
    assert retirement_points(**xp) == points


@pytest.mark.parametrize(
    ("xp", "problem"),
    [
        pytest.param(
            dict(spent=Decimal(-1), unspent=Decimal(5)), "zero or more", id="XP-06-negative-spent"
        ),
        pytest.param(
            dict(spent=Decimal("0.3"), unspent=Decimal(5)),
            "steps of 0.5",
            id="XP-06-not-half-steps",
        ),
        pytest.param(dict(spent=40.0, unspent=Decimal(5)), "Decimal", id="XP-06-float-refused"),
    ],
)
def test_retirement_points_refuses_bad_xp(xp: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        retirement_points(**xp)


@pytest.mark.parametrize(
    ("offense", "earned", "action", "xp_change"),
    [
        pytest.param(1, Decimal(30), "warning", Decimal(0), id="GEN-02-first-offense-warning"),
        pytest.param(
            2, Decimal(30), "halve_xp", Decimal(-15), id="GEN-02-earned-30-second-offense-minus-15"
        ),
        pytest.param(
            2, Decimal("7.5"), "halve_xp", Decimal("-3.5"), id="GEN-02-odd-half-rounds-down"
        ),
        pytest.param(3, Decimal(30), "ban", Decimal(0), id="GEN-02-third-offense-ban"),
    ],
)
def test_cheating_penalty(offense: int, earned: Decimal, action: str, xp_change: Decimal) -> None:
    penalty = cheating_penalty(offense=offense, lifetime_earned_xp=earned)
    assert (penalty.action, penalty.xp_change) == (action, xp_change)


def test_cheating_offense_counts_from_1() -> None:
    with pytest.raises(ValueError, match="offense must be at least 1"):
        cheating_penalty(offense=0, lifetime_earned_xp=Decimal(30))


# --- ITM: items ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("purchase_cost", "downgrade"),
    [
        pytest.param(4 + 2, 18, id="ITM-03-item-4-plus-reinforcement-2-costs-18"),
        pytest.param(1, 3, id="ITM-03-cost-1-costs-3"),
    ],
)
def test_concealment_downgrade_cost(purchase_cost: int, downgrade: int) -> None:
    assert concealment_downgrade_cost(purchase_cost) == downgrade


@pytest.mark.parametrize(
    ("concealability", "downgraded"),
    [
        pytest.param("red", "yellow", id="ITM-03-red-to-yellow"),
        pytest.param("yellow", "blue", id="ITM-03-yellow-to-blue"),
    ],
)
def test_downgraded_concealability(concealability: str, downgraded: str) -> None:
    assert downgraded_concealability(concealability, already_downgraded=False) == downgraded


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        pytest.param(
            dict(concealability="red", already_downgraded=True),
            "only once",
            id="ITM-03-second-downgrade-rejected",
        ),
        pytest.param(
            dict(concealability="blue", already_downgraded=False),
            "already as concealable",
            id="ITM-03-blue-cannot-go-lower",
        ),
        pytest.param(
            dict(concealability="green", already_downgraded=False),
            "Unknown concealability",
            id="ITM-01-unknown-colour",
        ),
    ],
)
def test_downgraded_concealability_refusals(item: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        downgraded_concealability(**item)


@pytest.mark.parametrize(
    ("item", "repair"),
    [
        pytest.param(dict(purchase_cost=4), 2, id="ITM-02-half-of-4"),
        pytest.param(dict(purchase_cost=5), 3, id="ITM-02-half-of-5-rounds-up"),
        pytest.param(dict(purchase_cost=2), 1, id="ITM-02-minimum-1-below-cost"),
        # Issue 14: repair is strictly cheaper, so an item of cost 1 repairs free by default.
        pytest.param(dict(purchase_cost=1), 0, id="ITM-02-cost-1-free"),
        pytest.param(
            dict(purchase_cost=1, item_repair_free_at_cost_one=False), 1, id="ITM-02-cost-1-paid"
        ),
        pytest.param(
            dict(purchase_cost=10, item_repair_fraction=Decimal("0.25")),
            3,
            id="ITM-02-setting-fraction",
        ),
    ],
)
def test_item_repair_cost(item: dict[str, Any], repair: int) -> None:
    assert item_repair_cost(**item) == repair


@pytest.mark.parametrize(
    "cost_function",
    [
        pytest.param(concealment_downgrade_cost, id="ITM-03-negative-cost"),
        pytest.param(item_repair_cost, id="ITM-02-negative-cost"),
    ],
)
def test_item_costs_refuse_negative(cost_function: Any) -> None:
    # ITM-03 counts from 0; an item to repair costs at least 1 (ITM-01, issue 14).
    with pytest.raises(ValueError, match="purchase_cost must be at least 0|costs at least 1"):
        cost_function(-4)


# --- SEW: sewer lore -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lore", "nosferatu", "slots"),
    [
        pytest.param(2, True, 8, id="SEW-02-nosferatu-lore-2-has-8"),
        pytest.param(3, False, 3, id="SEW-02-non-nosferatu-lore-3-has-3"),
        pytest.param(8, True, 32, id="SEW-02-nosferatu-max-lore-8"),
        pytest.param(0, False, 0, id="SEW-02-no-lore-no-slots"),
    ],
)
def test_sewer_location_slots(lore: int, nosferatu: bool, slots: int) -> None:
    assert sewer_location_slots(lore, nosferatu=nosferatu) == slots


@pytest.mark.parametrize(
    "lore",
    [pytest.param(9, id="SEW-01-max-lore-8"), pytest.param(-1, id="SEW-02-negative-lore")],
)
def test_sewer_lore_range(lore: int) -> None:
    with pytest.raises(ValueError, match="lore"):
        sewer_location_slots(lore, nosferatu=True)


@pytest.mark.parametrize(
    ("searchers", "defenders", "found"),
    [
        pytest.param([2, 1, 1], [1], True, id="SEW-04-2-1-1-vs-1-success"),
        pytest.param([2], [1], False, id="SEW-04-2-vs-1-fail"),
        pytest.param([3], [1], True, id="SEW-04-3-vs-1-success-on-equal"),
        pytest.param([4, 2], [1, 1], True, id="SEW-04-6-vs-2-defenders-sum"),
        pytest.param([1], [], True, id="SEW-04-no-defenders"),
    ],
)
def test_sewer_search(searchers: list[int], defenders: list[int], found: bool) -> None:
    assert sewer_search_succeeds(searchers, defenders) is found


@pytest.mark.parametrize(
    ("searchers", "defenders", "problem"),
    [
        pytest.param([], [1], "at least one searcher", id="SEW-04-no-searchers"),
        pytest.param([2, -1], [1], "at least 0", id="SEW-04-negative-lore"),
        pytest.param([9], [1], "at most 8", id="SEW-04-lore-above-8"),
    ],
)
def test_sewer_search_refuses_bad_lore(
    searchers: list[int], defenders: list[int], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        sewer_search_succeeds(searchers, defenders)


# --- TOR-01 --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hold", "problem"),
    [
        pytest.param(dict(consecutive_downtimes_held=0), None, id="TOR-01-first-hold-ok"),
        pytest.param(
            dict(consecutive_downtimes_held=1),
            "at most 1 month",
            id="TOR-01-second-consecutive-hold-rejected",
        ),
        pytest.param(
            dict(consecutive_downtimes_held=1, torpor_hold_cycles=2),
            None,
            id="TOR-01-setting-two-cycles",
        ),
        pytest.param(dict(consecutive_downtimes_held=-1), "at least 0", id="TOR-01-negative-count"),
    ],
)
def test_torpor_hold(hold: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        check_torpor_hold(**hold)
    else:
        with pytest.raises(ValueError, match=problem):
            check_torpor_hold(**hold)


@pytest.mark.parametrize(
    ("kind", "quantity", "settings", "expected"),
    [
        pytest.param("trait", 3, {}, 3, id="CRE-06-trait-1-each"),
        pytest.param("ability", 2, {}, 2, id="CRE-06-ability-1-each"),
        pytest.param("willpower", 1, {}, 3, id="CRE-06-willpower-3"),
        pytest.param("willpower", 2, {"willpower_cost": 4}, 8, id="CRE-06-willpower-setting"),
        pytest.param("sewer_lore", 2, {"ability_cost": 2}, 4, id="SEW-01-lore-priced-as-ability"),
        pytest.param("trait", 0, {}, 0, id="CRE-06-none"),
    ],
)
def test_unit_cost(kind: str, quantity: int, settings: dict[str, int], expected: int) -> None:
    assert rules.unit_cost(kind, quantity, **settings) == expected


@pytest.mark.parametrize("kind", ["discipline", "Trait", ""])
def test_unit_cost_refuses_unknown_kinds(kind: str) -> None:
    with pytest.raises(ValueError, match="Unknown kind"):
        rules.unit_cost(kind, 1)


# --- INF-03: influence spending per cycle ----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "left"),
    [
        pytest.param(dict(rating=3, spent=0), 3, id="INF-03-nothing-spent-full-rating"),
        pytest.param(dict(rating=3, spent=2), 1, id="INF-03-spent-at-game-counts"),
        pytest.param(dict(rating=3, spent=3), 0, id="INF-03-all-spent"),
        pytest.param(dict(rating=2, spent=0, borrowed=3), 5, id="INF-03-borrowed-adds"),
        pytest.param(dict(rating=4, spent=1, lent=2), 1, id="INF-03-lent-away-subtracts"),
        pytest.param(dict(rating=1, spent=0, lent=3), 0, id="INF-03-never-negative"),
    ],
)
def test_influence_available(kwargs: dict[str, int], left: int) -> None:
    assert rules.influence_available(**kwargs) == left


@pytest.mark.parametrize(
    ("points", "rating", "spent", "message"),
    [
        pytest.param(4, 3, 0, "Only 3 points of Business are left", id="INF-03-more-than-rating"),
        pytest.param(2, 3, 2, "Only 1 point of Business is left", id="INF-03-after-game-spend"),
        pytest.param(0, 3, 0, "at least 1 point", id="INF-03-zero-points"),
    ],
)
def test_check_influence_spend_refuses(points: int, rating: int, spent: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rules.check_influence_spend("business", points, rating=rating, spent=spent)


def test_check_influence_spend_allows_exactly_what_is_left() -> None:
    rules.check_influence_spend("herd", 3, rating=2, spent=1, borrowed=2)
