"""havens/rules.py, by table: every worked example of HAV and HID in SPEC.md, plus the illegal
inputs each rule must refuse.

Expected values are SPEC's numbers, written out, never recomputed with the code under test.
"""

from __future__ import annotations

from typing import Any

import pytest

from havens import rules
from havens.rules import (
    OwnerStanding,
    RuleViolation,
    attribute_cost,
    check_attribute_purchase,
    check_hidden_object_registration,
    check_hidden_object_search,
    check_influence_attack_target,
    consecutive_absences,
    cooperative_search_finds,
    crypt_destruction_allowed,
    design_problems,
    forsake_outcome,
    forsaken_by_absence,
    haven_hiding_points,
    hidden_object_search_bid,
    hiding_owner,
    hiding_points,
    influence_attack,
    min_influences_to_win_ties,
    reinforcement_attack_bid,
    reinforcement_points,
    reinforcement_tie_winner,
    repair_cost,
    search_finds,
    structure_breached,
    theft_completes,
)

# --- HAV-03 / HAV-06 / HAV-07: ownership ---------------------------------------------------------


@pytest.mark.parametrize(
    ("vote", "allowed"),
    [
        pytest.param(dict(outer_owners=1, in_favour=1), True, id="HAV-03-exclusive-owner"),
        pytest.param(dict(outer_owners=3, in_favour=2), True, id="HAV-03-2-of-3-majority"),
        pytest.param(dict(outer_owners=4, in_favour=2), False, id="HAV-03-half-is-not-majority"),
        pytest.param(dict(outer_owners=4, in_favour=3), True, id="HAV-03-3-of-4-majority"),
        pytest.param(dict(outer_owners=2, in_favour=1), False, id="HAV-03-1-of-2-not-majority"),
    ],
)
def test_crypt_destruction(vote: dict[str, int], allowed: bool) -> None:
    assert crypt_destruction_allowed(**vote) is allowed


@pytest.mark.parametrize(
    ("vote", "problem"),
    [
        pytest.param(dict(outer_owners=0, in_favour=0), "at least 1", id="HAV-03-no-owners"),
        pytest.param(
            dict(outer_owners=2, in_favour=3), "at most 2", id="HAV-03-more-votes-than-owners"
        ),
        pytest.param(dict(outer_owners=2, in_favour=-1), "at least 0", id="HAV-03-negative-votes"),
    ],
)
def test_crypt_destruction_refuses_bad_counts(vote: dict[str, int], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        crypt_destruction_allowed(**vote)


ABSENT_GAMES_1_TO_6 = [False] * 6
ABSENT_1_TO_6_BUT_ATTENDED_4 = [False, False, False, True, False, False]


@pytest.mark.parametrize(
    ("attended", "absences", "forsaken"),
    [
        pytest.param(ABSENT_GAMES_1_TO_6, 6, True, id="HAV-06-absent-games-1-6-forsaken-after-6"),
        pytest.param(ABSENT_GAMES_1_TO_6[:5], 5, False, id="HAV-06-absent-1-5-not-yet"),
        pytest.param(ABSENT_1_TO_6_BUT_ATTENDED_4, 2, False, id="HAV-06-attending-game-4-resets"),
        pytest.param(
            [True, *ABSENT_GAMES_1_TO_6], 6, True, id="HAV-06-six-in-a-row-after-attending"
        ),
        pytest.param([], 0, False, id="HAV-06-no-games-yet"),
    ],
)
def test_forsaking_by_absence(attended: list[bool], absences: int, forsaken: bool) -> None:
    assert consecutive_absences(attended) == absences
    assert forsaken_by_absence(attended) is forsaken


def test_forsaking_setting() -> None:
    assert forsaken_by_absence([False] * 4, forsake_after_absent_games=4) is True


def test_forsaking_refuses_non_booleans() -> None:
    with pytest.raises(ValueError, match="true/false"):
        consecutive_absences([0, 1, 0])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("structure", "owners", "outcome"),
    [
        pytest.param(
            "outer", 1, "destroy_with_crypts", id="HAV-06-exclusive-owner-destroys-outer-and-crypts"
        ),
        pytest.param("crypt", 1, "destroy", id="HAV-06-crypt-destroyed"),
        pytest.param(
            "outer",
            2,
            "remaining_owner_becomes_exclusive",
            id="HAV-06-last-partial-becomes-exclusive",
        ),
        pytest.param("outer", 3, "owner_removed", id="HAV-06-partial-owner-leaves"),
    ],
)
def test_forsake_outcome(structure: str, owners: int, outcome: str) -> None:
    assert forsake_outcome(structure=structure, owners=owners) == outcome


@pytest.mark.parametrize(
    ("structure", "owners", "problem"),
    [
        pytest.param("crypt", 2, "exactly one owner", id="HAV-01-crypt-has-one-owner"),
        pytest.param("castle", 1, "Unknown structure", id="HAV-01-unknown-structure"),
        pytest.param("outer", 0, "at least 1", id="HAV-01-no-owner"),
    ],
)
def test_forsake_outcome_refuses_bad_input(structure: str, owners: int, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        forsake_outcome(structure=structure, owners=owners)


@pytest.mark.parametrize(
    ("controlled", "stolen"),
    [
        pytest.param([True, True], True, id="HAV-07-two-games-of-control-steals"),
        pytest.param([True], False, id="HAV-07-one-game-not-enough"),
        pytest.param([True, False, True], False, id="HAV-07-must-be-consecutive"),
        pytest.param([False, True, True], True, id="HAV-07-latest-two-games"),
    ],
)
def test_theft(controlled: list[bool], stolen: bool) -> None:
    assert theft_completes(controlled) is stolen


def test_theft_setting() -> None:
    assert theft_completes([True, True], theft_control_games=3) is False


def test_theft_disables_alarms_and_locks_only() -> None:
    assert {
        "alarm",
        "two_way_lock",
        "one_way_lock",
        "timelock",
    } == rules.ATTRIBUTES_DISABLED_BY_THEFT


# --- HAV-10 .. HAV-24: attributes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "quantity", "cost"),
    [
        pytest.param("alarm", 1, 5, id="HAV-10-alarm-5"),
        pytest.param("alarm", 2, 10, id="HAV-10-two-alarms-10"),
        pytest.param("exit", 3, 15, id="HAV-11-three-exits-15"),
        pytest.param("camera", 4, 4, id="HAV-12-SRC-04-camera-1-each"),
        pytest.param("recorder", 1, 1, id="HAV-13-recorder-1"),
        pytest.param("hiding", 1, 15, id="HAV-14-hiding-15"),
        pytest.param("influence_resistance", 18, 6, id="HAV-15-6-influence-buys-18-points"),
        pytest.param("influence_resistance", 3, 1, id="HAV-15-3-points-1"),
        pytest.param("two_way_lock", 3, 6, id="HAV-16-two-way-lock-2-each"),
        pytest.param("one_way_lock", 1, 2, id="HAV-17-one-way-lock-2"),
        pytest.param("timelock", 1, 2, id="HAV-18-timelock-2"),
        pytest.param("mobility", 1, 15, id="HAV-19-mobility-15"),
        pytest.param("monitor", 2, 2, id="HAV-20-monitor-1-each"),
        pytest.param("reinforcement", 100, 10, id="HAV-26-ten-influences-100-points"),
        pytest.param("reinforcement", 10, 1, id="HAV-21-1-influence-10-points"),
        pytest.param("seals", 1, 10, id="HAV-22-seals-10"),
    ],
)
def test_attribute_cost(kind: str, quantity: int, cost: int) -> None:
    assert attribute_cost(kind, quantity) == cost


def test_attribute_cost_quantity_defaults_to_1() -> None:
    assert attribute_cost("alarm") == 5


@pytest.mark.parametrize(
    ("kind", "quantity", "problem"),
    [
        pytest.param("moat", 1, "Unknown haven attribute 'moat'", id="HAV-10-unknown-kind"),
        pytest.param(
            "reinforcement", 15, "multiple of 10", id="HAV-21-reinforcement-not-multiple-of-10"
        ),
        pytest.param(
            "influence_resistance", 4, "multiple of 3", id="HAV-15-resistance-not-multiple-of-3"
        ),
        pytest.param("alarm", 0, "at least 1", id="HAV-10-zero-quantity"),
        pytest.param("camera", -2, "at least 1", id="HAV-12-negative-quantity"),
        pytest.param("seals", 2, "once per structure", id="HAV-22-seals-once"),
        pytest.param("hiding", 2, "once per structure", id="HAV-14-hiding-once"),
        pytest.param("alarm", True, "whole number", id="HAV-10-bool-quantity"),
    ],
)
def test_attribute_cost_refuses_bad_input(kind: str, quantity: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        attribute_cost(kind, quantity)


@pytest.mark.parametrize(
    ("influences", "points"),
    [
        pytest.param(10, 100, id="HAV-26-ten-influences-100-points"),
        pytest.param(9, 90, id="HAV-26-nine-influences-90-points"),
        pytest.param(1, 10, id="HAV-21-one-influence-10-points"),
        pytest.param(0, 0, id="HAV-21-no-reinforcement"),
    ],
)
def test_reinforcement_points(influences: int, points: int) -> None:
    assert reinforcement_points(influences) == points


def test_reinforcement_points_refuse_negative() -> None:
    with pytest.raises(ValueError, match="influences must be at least 0"):
        reinforcement_points(-1)


@pytest.mark.parametrize(
    ("original_cost", "repair"),
    [
        pytest.param(2, 1, id="HAV-24-lock-2-repairs-for-1"),
        pytest.param(10, 5, id="HAV-24-reinforcement-10-repairs-for-5"),
        pytest.param(5, 3, id="HAV-24-cost-5-rounds-up-to-3"),
        pytest.param(0, 0, id="HAV-24-nothing-to-repair"),
    ],
)
def test_repair_cost(original_cost: int, repair: int) -> None:
    assert repair_cost(original_cost) == repair


def test_repair_cost_refuses_negative() -> None:
    with pytest.raises(ValueError, match="original_cost must be at least 0"):
        repair_cost(-2)


# --- HAV-23: design validation -------------------------------------------------------------------

CRYPT_WITH_5_EXITS = {"exit": 5, "alarm": 1}
MOBILE_OUTER = {"mobility": 1, "alarm": 2}
HIDDEN_REINFORCED_OUTER = {"hiding": 1, "reinforcement": 30, "influence_resistance": 9}


@pytest.mark.parametrize(
    ("purchase", "problem"),
    [
        pytest.param(
            dict(structure="crypt", existing=CRYPT_WITH_5_EXITS, kind="exit"),
            "at most 5 alternate exits",
            id="HAV-23-sixth-exit-on-crypt-rejected",
        ),
        pytest.param(
            dict(structure="outer", existing=MOBILE_OUTER, kind="hiding"),
            "cannot also have Hiding",
            id="HAV-23-mobile-plus-hiding-rejected",
        ),
        pytest.param(
            dict(structure="outer", existing=MOBILE_OUTER, kind="reinforcement", quantity=10),
            "cannot be reinforced",
            id="HAV-23-mobile-plus-reinforcement-rejected",
        ),
        pytest.param(
            dict(structure="outer", existing=MOBILE_OUTER, kind="exit"),
            "alternate exits",
            id="HAV-23-mobile-plus-exit-rejected",
        ),
        pytest.param(
            dict(structure="outer", existing=HIDDEN_REINFORCED_OUTER, kind="mobility"),
            "cannot also have Hiding",
            id="HAV-23-hidden-haven-cannot-become-mobile",
        ),
        pytest.param(
            dict(structure="outer", existing={"reinforcement": 10}, kind="mobility"),
            "cannot be reinforced",
            id="HAV-23-reinforced-haven-cannot-become-mobile",
        ),
        pytest.param(
            dict(
                structure="crypt",
                existing={},
                kind="reinforcement",
                quantity=10,
                inside_mobile_haven=True,
            ),
            "inside a mobile haven",
            id="HAV-23-crypt-in-mobile-haven-counts-as-mobile",
        ),
        pytest.param(
            dict(structure="outer", existing={}, kind="alarm", buyer_is_owner=False),
            "Only a structure's owners",
            id="HAV-02-non-owner-rejected",
        ),
        pytest.param(
            dict(structure="outer", existing={"seals": 1}, kind="seals"),
            "at most one seals",
            id="HAV-22-second-seals-rejected",
        ),
    ],
)
def test_attribute_purchase_rejected(purchase: dict[str, Any], problem: str) -> None:
    purchase.setdefault("buyer_is_owner", True)
    with pytest.raises(RuleViolation, match=problem):
        check_attribute_purchase(**purchase)


@pytest.mark.parametrize(
    ("purchase", "cost"),
    [
        pytest.param(
            dict(structure="crypt", existing={"exit": 4}, kind="exit"),
            5,
            id="HAV-11-fifth-exit-on-crypt-ok",
        ),
        pytest.param(
            dict(structure="outer", existing={"exit": 5}, kind="exit"),
            5,
            id="HAV-11-exit-limit-is-per-crypt",
        ),
        pytest.param(
            dict(structure="outer", existing=MOBILE_OUTER, kind="influence_resistance", quantity=6),
            2,
            id="HAV-15-mobile-may-buy-resistance",
        ),
        pytest.param(
            dict(
                structure="outer",
                existing=HIDDEN_REINFORCED_OUTER,
                kind="reinforcement",
                quantity=20,
            ),
            2,
            id="HAV-21-more-reinforcement",
        ),
        pytest.param(
            dict(
                structure="crypt",
                existing={},
                kind="reinforcement",
                quantity=10,
                inside_mobile_haven=True,
                crypt_in_mobile_haven_is_mobile=False,
            ),
            1,
            id="HAV-23-setting-crypt-not-mobile",
        ),
    ],
)
def test_attribute_purchase_accepted(purchase: dict[str, Any], cost: int) -> None:
    assert check_attribute_purchase(buyer_is_owner=True, **purchase) == cost


def test_design_problems_lists_every_problem() -> None:
    design = {"mobility": 1, "hiding": 1, "reinforcement": 10, "exit": 6}
    assert len(design_problems(structure="crypt", attributes=design)) == 4


def test_valid_design_has_no_problems() -> None:
    assert design_problems(structure="outer", attributes=HIDDEN_REINFORCED_OUTER) == []


@pytest.mark.parametrize(
    ("design", "problem"),
    [
        pytest.param(
            dict(structure="outer", attributes={"moat": 1}),
            "Unknown haven attribute",
            id="HAV-23-unknown-attribute",
        ),
        pytest.param(
            dict(structure="outer", attributes={"alarm": -1}),
            "at least 0",
            id="HAV-23-negative-quantity",
        ),
        pytest.param(
            dict(structure="outer", attributes={}, inside_mobile_haven=True),
            "Only a crypt",
            id="HAV-01-outer-haven-is-not-inside",
        ),
    ],
)
def test_design_problems_refuses_bad_input(design: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        design_problems(**design)


# --- HAV-25 / HAV-25b: hiding and searching ------------------------------------------------------


@pytest.mark.parametrize(
    ("owner", "points"),
    [
        pytest.param(
            dict(mental_traits=7, influences=3, hidden=False),
            20,
            id="HAV-25-mental-7-influences-3-is-20",
        ),
        pytest.param(
            dict(mental_traits=7, influences=3, hidden=True), 40, id="HAV-25-hidden-doubles-to-40"
        ),
        pytest.param(
            dict(mental_traits=0, influences=0, hidden=False), 0, id="HAV-25-nothing-hides-nothing"
        ),
    ],
)
def test_hiding_points(owner: dict[str, Any], points: int) -> None:
    assert hiding_points(**owner) == points


@pytest.mark.parametrize(
    "owner",
    [
        pytest.param(
            dict(mental_traits=-1, influences=3, hidden=False), id="HAV-25-negative-mental"
        ),
        pytest.param(
            dict(mental_traits=7, influences=-3, hidden=False), id="HAV-25-negative-influences"
        ),
    ],
)
def test_hiding_points_refuse_negative(owner: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be at least 0"):
        hiding_points(**owner)


PARTIAL_OWNER_6_PLUS_5 = OwnerStanding(owner="anna", mental_traits=6, influences=5)
PARTIAL_OWNER_8_PLUS_2 = OwnerStanding(owner="bela", mental_traits=8, influences=2)


def test_hiding_owner_is_the_highest_mental_plus_influences() -> None:
    assert hiding_owner([PARTIAL_OWNER_8_PLUS_2, PARTIAL_OWNER_6_PLUS_5]).owner == "anna"


@pytest.mark.parametrize(
    ("haven", "points"),
    [
        pytest.param(
            dict(owners=[PARTIAL_OWNER_6_PLUS_5, PARTIAL_OWNER_8_PLUS_2], hidden=False),
            22,
            id="HAV-25-partial-owners-6-5-and-8-2-is-22",
        ),
        pytest.param(
            dict(owners=[PARTIAL_OWNER_6_PLUS_5, PARTIAL_OWNER_8_PLUS_2], hidden=True),
            44,
            id="HAV-25-partial-owners-hidden",
        ),
        pytest.param(
            dict(owners=[PARTIAL_OWNER_6_PLUS_5], hidden=False, mobile=True),
            44,
            id="HAV-25-mobile-doubled-by-default",
        ),
        pytest.param(
            dict(
                owners=[PARTIAL_OWNER_6_PLUS_5],
                hidden=False,
                mobile=True,
                mobile_havens_hiding_doubled=False,
            ),
            22,
            id="HAV-25-setting-off-mobile-not-doubled",
        ),
        pytest.param(
            dict(
                owners=[PARTIAL_OWNER_6_PLUS_5],
                hidden=False,
                mobile=True,
                mobile_havens_hiding_doubled=True,
            ),
            44,
            id="HAV-25-setting-mobile-doubled",
        ),
    ],
)
def test_haven_hiding_points(haven: dict[str, Any], points: int) -> None:
    assert haven_hiding_points(**haven) == points


@pytest.mark.parametrize(
    ("haven", "problem"),
    [
        pytest.param(
            dict(owners=[], hidden=False), "at least one owner", id="HAV-01-haven-without-owner"
        ),
        pytest.param(
            dict(owners=[PARTIAL_OWNER_6_PLUS_5], hidden=True, mobile=True),
            "both Hiding and Mobility",
            id="HAV-23-hidden-and-mobile",
        ),
    ],
)
def test_haven_hiding_points_refuses_bad_input(haven: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        haven_hiding_points(**haven)


@pytest.mark.parametrize(
    ("spent", "hiding", "found"),
    [
        pytest.param(20, 20, False, id="HAV-25b-20-vs-20-not-found"),
        pytest.param(21, 20, True, id="HAV-25b-21-vs-20-found"),
        pytest.param(0, 0, False, id="HAV-25b-nothing-spent"),
    ],
)
def test_search_finds(spent: int, hiding: int, found: bool) -> None:
    assert search_finds(spent=spent, hiding_points=hiding) is found


@pytest.mark.parametrize(
    ("spends", "found"),
    [
        pytest.param([12, 9], True, id="HAV-25b-cooperating-12-plus-9-found"),
        pytest.param([12], False, id="HAV-25b-not-cooperating-12-alone-fails"),
        pytest.param([9], False, id="HAV-25b-not-cooperating-9-alone-fails"),
    ],
)
def test_cooperative_search(spends: list[int], found: bool) -> None:
    assert cooperative_search_finds(spends, hiding_points=20) is found


@pytest.mark.parametrize(
    ("search", "problem"),
    [
        pytest.param(
            dict(spent=-1, hiding_points=20),
            "spent must be at least 0",
            id="HAV-25b-negative-spend",
        ),
        pytest.param(
            dict(spent=21, hiding_points=-20),
            "hiding_points must be at least 0",
            id="HAV-25b-negative-hiding",
        ),
    ],
)
def test_search_refuses_negative(search: dict[str, int], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        search_finds(**search)


def test_cooperative_search_needs_searchers() -> None:
    with pytest.raises(ValueError, match="each cooperating searcher"):
        cooperative_search_finds([], hiding_points=20)


# --- HAV-25c: influence attacks ------------------------------------------------------------------

SIX_INFLUENCE_OF_RESISTANCE = 18  # HAV-15: 6 influence buys 18 points


@pytest.mark.parametrize(
    ("attack", "left", "destroyed"),
    [
        pytest.param(
            dict(resistance=SIX_INFLUENCE_OF_RESISTANCE, spent=18),
            0,
            False,
            id="HAV-25c-attack-18-leaves-0-standing",
        ),
        pytest.param(
            dict(resistance=SIX_INFLUENCE_OF_RESISTANCE, spent=19),
            0,
            True,
            id="HAV-25c-attack-19-destroys",
        ),
        pytest.param(
            dict(resistance=0, spent=1), 0, True, id="HAV-25c-no-resistance-1-point-destroys"
        ),
        pytest.param(
            dict(resistance=SIX_INFLUENCE_OF_RESISTANCE, spent=5),
            13,
            False,
            id="HAV-25c-partial-attack-permanent",
        ),
    ],
)
def test_influence_attack(attack: dict[str, int], left: int, destroyed: bool) -> None:
    assert influence_attack(**attack) == (left, destroyed)


@pytest.mark.parametrize(
    ("attack", "problem"),
    [
        pytest.param(
            dict(resistance=-1, spent=1),
            "resistance must be at least 0",
            id="HAV-25c-negative-resistance",
        ),
        pytest.param(
            dict(resistance=18, spent=-1), "spent must be at least 0", id="HAV-25c-negative-spend"
        ),
    ],
)
def test_influence_attack_refuses_negative(attack: dict[str, int], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        influence_attack(**attack)


@pytest.mark.parametrize(
    ("target", "problem"),
    [
        pytest.param(
            dict(mobile=False, found_before_submission=True), None, id="HAV-25c-found-static-haven"
        ),
        pytest.param(
            dict(mobile=True, found_before_submission=True),
            "mobile haven",
            id="HAV-25c-mobile-immune",
        ),
        pytest.param(
            dict(mobile=False, found_before_submission=False),
            "already found",
            id="HAV-25c-must-be-found-first",
        ),
        pytest.param(
            dict(mobile=False, found_before_submission=False, attack_needs_earlier_find=False),
            None,
            id="HAV-25c-setting-same-downtime-find",
        ),
    ],
)
def test_influence_attack_target(target: dict[str, bool], problem: str | None) -> None:
    if problem is None:
        check_influence_attack_target(**target)
    else:
        with pytest.raises(ValueError, match=problem):
            check_influence_attack_target(**target)


# --- HAV-26: reinforcement attacks ---------------------------------------------------------------

P3A, P2B, P2A, P1B, P1A, NO_POTENCE = 5, 4, 3, 2, 1, 0


@pytest.mark.parametrize(
    ("attackers", "bid"),
    [
        pytest.param(dict(potence_levels=[P3A, P2A, P2A]), 99, id="HAV-26-3a-2a-2a-is-49-25-25-99"),
        pytest.param(
            dict(potence_levels=[P3A, P2A, P2A, P1A]), 99, id="HAV-26-only-3-strongest-count"
        ),
        pytest.param(
            dict(potence_levels=[P1A, P2A, P3A, P2A]), 99, id="HAV-26-order-does-not-matter"
        ),
        pytest.param(dict(potence_levels=[P1A]), 9, id="HAV-26-one-attacker-1a-is-9"),
        pytest.param(dict(potence_levels=[NO_POTENCE]), 4, id="HAV-26-no-potence-adds-4"),
        pytest.param(
            dict(potence_levels=[NO_POTENCE], potence_zero_adds=0),
            0,
            id="HAV-26-setting-no-potence-adds-0",
        ),
        pytest.param(
            dict(potence_levels=[P2B, P1B, NO_POTENCE, NO_POTENCE]), 56, id="HAV-26-36-16-4"
        ),
        # Issue 14: an empty attacking party bids nothing (it used to be refused).
        pytest.param(dict(potence_levels=[]), 0, id="HAV-26a-empty-party-bids-0"),
    ],
)
def test_reinforcement_attack_bid(attackers: dict[str, Any], bid: int) -> None:
    assert reinforcement_attack_bid(**attackers) == bid


@pytest.mark.parametrize(
    ("attackers", "problem"),
    [
        pytest.param(dict(potence_levels=3), "each attacker", id="HAV-26-level-not-a-list"),
        pytest.param(dict(potence_levels=[6]), "at most 5", id="HAV-26-level-above-3a"),
        pytest.param(dict(potence_levels=[-1]), "at least 0", id="HAV-26-negative-level"),
        pytest.param(
            dict(potence_levels=["3a"]), "whole number", id="HAV-26-level-string-not-number"
        ),
        pytest.param(
            dict(potence_levels=[P1A], potence_zero_adds=2),
            "4 .* or 0",
            id="HAV-26-setting-only-4-or-0",
        ),
    ],
)
def test_reinforcement_attack_bid_refuses_bad_levels(
    attackers: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        reinforcement_attack_bid(**attackers)


@pytest.mark.parametrize(
    ("attack_bid", "influences"),
    [
        pytest.param(99, 10, id="HAV-26-ten-influences-win-ties-against-99"),
        pytest.param(100, 11, id="HAV-26-bid-100-needs-11"),
        pytest.param(9, 1, id="HAV-26-bid-9-needs-1"),
        pytest.param(0, 1, id="HAV-26-bid-0-needs-1"),
    ],
)
def test_min_influences_to_win_ties(attack_bid: int, influences: int) -> None:
    assert min_influences_to_win_ties(attack_bid) == influences


@pytest.mark.parametrize(
    ("test", "winner"),
    [
        pytest.param(
            dict(reinforcement=100, attack_bid=99),
            "structure",
            id="TST-01-reinforcement-100-vs-99-structure-wins-ties",
        ),
        pytest.param(
            dict(reinforcement=90, attack_bid=99),
            "attacker",
            id="HAV-26-9-influences-90-vs-99-attacker-wins-ties",
        ),
        pytest.param(
            dict(reinforcement=99, attack_bid=99), None, id="TST-01-equal-bids-no-tie-winner"
        ),
    ],
)
def test_reinforcement_tie_winner(test: dict[str, int], winner: str | None) -> None:
    assert reinforcement_tie_winner(**test) == winner


@pytest.mark.parametrize(
    ("tests", "breached"),
    [
        pytest.param(
            dict(attacker_won=[False, True], any_attacker_has_potence_3a=False),
            True,
            id="HAV-26-beating-once-penetrates",
        ),
        pytest.param(
            dict(attacker_won=[False, False, False], any_attacker_has_potence_3a=False),
            False,
            id="HAV-26-no-win-no-breach",
        ),
        pytest.param(
            dict(attacker_won=[False], any_attacker_has_potence_3a=True),
            False,
            id="HAV-26-3a-first-failure-not-yet",
        ),
        pytest.param(
            dict(attacker_won=[False, False], any_attacker_has_potence_3a=True),
            True,
            id="HAV-26-3a-breaches-after-10-minutes",
        ),
        pytest.param(
            dict(
                attacker_won=[False, False],
                any_attacker_has_potence_3a=True,
                potence_3a_breach_after_tests=3,
            ),
            False,
            id="HAV-26-setting-3-tests",
        ),
    ],
)
def test_structure_breached(tests: dict[str, Any], breached: bool) -> None:
    assert structure_breached(**tests) is breached


# --- HID: objects hidden on site -----------------------------------------------------------------

AUSPEX_1B, AUSPEX_2A, AUSPEX_3A = 2, 3, 5


@pytest.mark.parametrize(
    ("search", "problem"),
    [
        pytest.param(
            dict(auspex_level=AUSPEX_2A, number=1), None, id="HID-02-auspex-2a-searches-1"
        ),
        pytest.param(
            dict(auspex_level=AUSPEX_3A, number=10), None, id="HID-02-auspex-3a-searches-10"
        ),
        pytest.param(
            dict(auspex_level=AUSPEX_1B, number=5),
            "Auspex 2a or higher",
            id="HID-02-auspex-1b-rejected",
        ),
        pytest.param(
            dict(auspex_level=AUSPEX_2A, number=11), "from 1 to 10", id="HID-02-number-11-rejected"
        ),
        pytest.param(
            dict(auspex_level=AUSPEX_2A, number=0), "from 1 to 10", id="HID-02-number-0-rejected"
        ),
        pytest.param(
            dict(auspex_level=6, number=5), "at most 5", id="HID-02-auspex-level-above-3a"
        ),
    ],
)
def test_hidden_object_search(search: dict[str, int], problem: str | None) -> None:
    if problem is None:
        check_hidden_object_search(**search)
    else:
        with pytest.raises(ValueError, match=problem):
            check_hidden_object_search(**search)


def test_hidden_object_search_bid() -> None:
    assert hidden_object_search_bid(mental_traits=7, investigate=2, auspex_level=AUSPEX_2A) == 12


@pytest.mark.parametrize(
    ("registration", "problem"),
    [
        pytest.param(dict(obfuscate_bid=12, number=10), None, id="HID-01-register-number-10"),
        pytest.param(
            dict(obfuscate_bid=12, number=11), "from 1 to 10", id="HID-01-number-11-rejected"
        ),
        pytest.param(dict(obfuscate_bid=-1, number=3), "at least 0", id="HID-01-negative-bid"),
    ],
)
def test_hidden_object_registration(registration: dict[str, int], problem: str | None) -> None:
    if problem is None:
        check_hidden_object_registration(**registration)
    else:
        with pytest.raises(ValueError, match=problem):
            check_hidden_object_registration(**registration)


# --- HAV-24: what waits for a repair ----------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "state", "needed"),
    [
        pytest.param("two_way_lock", "destroyed", True, id="HAV-24-destroyed-lock"),
        pytest.param("two_way_lock", "bypassed", False, id="HAV-16-bypassed-lock-is-intact"),
        pytest.param("two_way_lock", "active", False, id="HAV-24-working-lock"),
        pytest.param("reinforcement", "breached", True, id="HAV-24-breached-reinforcement"),
        pytest.param("one_way_lock", "destroyed", False, id="HAV-17-indestructible"),
        pytest.param(
            "alarm", "inoperative", False, id="HAV-07-inoperative-is-replaced-not-repaired"
        ),
    ],
)
def test_needs_repair(kind: str, state: str, needed: bool) -> None:
    assert rules.needs_repair(kind, state) is needed


@pytest.mark.parametrize("kind", ["alarm", "exit", "hiding", "mobility", "seals", "timelock"])
def test_indestructible_kinds(kind: str) -> None:
    assert not rules.is_destructible(kind)


def test_every_attribute_refusal_names_its_rule() -> None:
    with pytest.raises(ValueError, match=r"\(HAV-15\)"):
        rules.attribute_cost("influence_resistance", 4)
    with pytest.raises(ValueError, match=r"\(HAV-14\)"):
        rules.attribute_cost("hiding", 2)
    problems = rules.design_problems(structure="outer", attributes={"reinforcement": 15})
    assert problems == ["reinforcement comes in steps of 10 points (HAV-21)."]
