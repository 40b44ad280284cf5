"""downtimes/rules.py, by table: the worked examples of DT-06 .. DT-09 in SPEC.md, plus the
illegal ballots vote counting must refuse.

Expected values are SPEC's numbers, written out, never recomputed with the code under test.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import pytest

from downtimes import rules
from downtimes.rules import Ballot, Standing, announced_standings, vote_awards

# Characters and the players who play them. B and C are unnamed in SPEC's DT-08 example.
PLAYER_OF = {"A": "P1", "B": "P2", "C": "P3", "D": "P4", "E": "P9"}


def votes(category: str, nominee: str, count: int, *, toreador: bool = False) -> list[Ballot]:
    """`count` ballots for `nominee`, each from a different voter who is no nominee's player."""
    kind = "toreador" if toreador else "voter"
    return [
        Ballot(
            voter=f"{kind}-{category}-{nominee}-{n}",
            category=category,
            nominee=nominee,
            double=toreador,
        )
        for n in range(count)
    ]


def test_ballot_is_the_contract() -> None:
    """RAPI: a frozen dataclass with fields voter, category, nominee, double=False, in order."""
    fields = [(f.name, f.default) for f in dataclasses.fields(Ballot)]
    assert fields == [
        ("voter", dataclasses.MISSING),
        ("category", dataclasses.MISSING),
        ("nominee", dataclasses.MISSING),
        ("double", False),
    ]
    ballot = Ballot("P1", "liked", "D")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ballot.nominee = "A"  # type: ignore[misc]


DT_08_EXAMPLE = [
    *votes("feared", "A", 5),
    *votes("feared", "B", 3),
    *votes("liked", "A", 4),
    *votes("liked", "C", 2),
    *votes("respected", "D", 6),
    *votes("roleplaying", "P1", 7),
    *votes("roleplaying", "P5", 4),
    *votes("roleplaying", "P6", 2),
    *votes("costume", "P7", 5),
    *votes("costume", "P8", 3),
]


@pytest.mark.parametrize(
    ("ballots", "awards"),
    [
        pytest.param(
            DT_08_EXAMPLE,
            {"P1": 3, "P4": 3, "P5": 3, "P7": 3, "P8": 3},
            id="DT-08-example-P1-P4-P5-P7-P8-get-3-each",
        ),
        pytest.param(
            [*votes("feared", "A", 3), *votes("feared", "B", 2, toreador=True)],
            {"P2": 3},
            id="DT-06-toreador-votes-count-double-in-character",
        ),
        pytest.param(
            [
                *votes("roleplaying", "P5", 2, toreador=True),
                *votes("roleplaying", "P6", 3),
                *votes("roleplaying", "P7", 3),
            ],
            {"P6": 3, "P7": 3},
            id="DT-06-toreador-votes-count-once-out-of-character",
        ),
        pytest.param(
            [*votes("liked", "A", 3), *votes("liked", "B", 3), *votes("liked", "C", 1)],
            {"P1": 3, "P2": 3},
            id="DT-07-tie-at-the-top-in-character-both-win",
        ),
        pytest.param(
            [*votes("costume", "P5", 5), *votes("costume", "P6", 3), *votes("costume", "P7", 3)],
            {"P5": 3, "P6": 3, "P7": 3},
            id="DT-07-tie-for-second-out-of-character-all-win",
        ),
        pytest.param(
            [*votes("costume", "P5", 5), *votes("costume", "P6", 5), *votes("costume", "P7", 3)],
            {"P5": 3, "P6": 3},
            id="DT-07-tie-for-first-leaves-no-second-place",
        ),
        pytest.param(
            [*votes("feared", "A", 4), *votes("feared", "B", 3), *votes("roleplaying", "P1", 2)],
            {"P1": 3},
            id="DT-08-top-of-two-lists-gets-3-once-runner-up-does-not-move-up",
        ),
        pytest.param(
            [*votes("feared", "A", 2), *votes("liked", "A", 2), *votes("respected", "A", 2)],
            {"P1": 3},
            id="DT-08-top-of-every-in-character-list-3-once",
        ),
        pytest.param([], {}, id="DT-07-no-ballots-no-awards"),
    ],
)
def test_vote_awards(ballots: list[Ballot], awards: dict[str, int]) -> None:
    assert vote_awards(ballots, player_of=PLAYER_OF) == awards


def test_vote_awards_accepts_any_iterable() -> None:
    assert vote_awards(iter(votes("respected", "D", 1)), player_of=PLAYER_OF) == {"P4": 3}


@pytest.mark.parametrize(
    ("ballots", "problem"),
    [
        pytest.param(
            [Ballot("P1", "funniest", "A")],
            "Unknown vote category 'funniest'",
            id="DT-06-unknown-category",
        ),
        pytest.param(
            [Ballot("P1", "Feared", "B")], "Unknown vote category", id="DT-06-category-is-lowercase"
        ),
        pytest.param(
            [Ballot("P5", "feared", "A"), Ballot("P5", "feared", "B")],
            "picked twice",
            id="DT-06-one-pick-per-category",
        ),
        pytest.param(
            [Ballot("P1", "liked", "A")],
            "voted for themselves",
            id="DT-06-self-vote-in-character-rejected",
        ),
        pytest.param(
            [Ballot("P7", "costume", "P7")],
            "voted for themselves",
            id="DT-06-self-vote-out-of-character-rejected",
        ),
        pytest.param(
            [Ballot("P1", "feared", "Z")],
            "Unknown character 'Z'",
            id="DT-06-character-without-player",
        ),
        pytest.param([Ballot("", "feared", "A")], "needs a voter", id="DT-06-ballot-without-voter"),
        pytest.param(
            [Ballot("P5", "costume", "")], "needs a nominee", id="DT-06-ballot-without-nominee"
        ),
    ],
)
def test_vote_awards_refuses_bad_ballots(ballots: list[Ballot], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        vote_awards(ballots, player_of=PLAYER_OF)


def test_the_same_voter_may_pick_once_in_every_category() -> None:
    ballots = [
        Ballot("P9", "feared", "A"),
        Ballot("P9", "liked", "B"),
        Ballot("P9", "respected", "C"),
        Ballot("P9", "roleplaying", "P1"),
        Ballot("P9", "costume", "P2"),
    ]
    assert vote_awards(ballots, player_of=PLAYER_OF) == {"P1": 3, "P2": 3, "P3": 3}


@pytest.mark.parametrize(
    ("ballots", "category", "announced"),
    [
        pytest.param(
            [
                *votes("feared", "A", 5),
                *votes("feared", "B", 3),
                *votes("feared", "C", 3),
                *votes("feared", "D", 1),
            ],
            "feared",
            [Standing("A", 5, 1), Standing("B", 3, 2), Standing("C", 3, 2)],
            id="DT-09-top-two-with-ties-announced",
        ),
        pytest.param(
            DT_08_EXAMPLE,
            "roleplaying",
            [Standing("P1", 7, 1), Standing("P5", 4, 2)],
            id="DT-09-example-roleplaying-top-two",
        ),
        pytest.param(
            DT_08_EXAMPLE,
            "feared",
            [Standing("A", 5, 1), Standing("B", 3, 2)],
            id="DT-09-runner-up-announced-though-not-awarded",
        ),
        pytest.param(
            [*votes("liked", "A", 2), *votes("liked", "B", 1, toreador=True)],
            "liked",
            [Standing("A", 2, 1), Standing("B", 2, 1)],
            id="DT-09-toreador-double-in-standings",
        ),
        pytest.param([], "costume", [], id="DT-09-no-votes-nothing-announced"),
    ],
)
def test_announced_standings(
    ballots: list[Ballot], category: str, announced: list[Standing]
) -> None:
    assert announced_standings(ballots, player_of=PLAYER_OF)[category] == announced


def test_announcement_covers_all_five_categories() -> None:
    standings: dict[str, Any] = announced_standings([], player_of=PLAYER_OF)
    assert list(standings) == ["feared", "liked", "respected", "roleplaying", "costume"]


def test_tied_standings_share_the_rank_of_one_plus_those_ahead() -> None:
    """DT-07's rank, 1 + the number of nominees with more votes, on a field with ties at the
    top, in the middle and at the bottom (the tally ranks in one pass over the sorted list)."""
    votes = {"A": 3, "B": 3, "C": 2, "D": 1, "E": 1, "F": 1}
    ballots = [
        Ballot(f"V{nominee}{i}", "costume", f"P{nominee}")
        for nominee, n in votes.items()
        for i in range(n)
    ]
    standings = rules.vote_tally(ballots, player_of={})["costume"]
    assert [(s.nominee, s.votes, s.rank) for s in standings] == [
        ("PA", 3, 1),
        ("PB", 3, 1),
        ("PC", 2, 3),
        ("PD", 1, 4),
        ("PE", 1, 4),
        ("PF", 1, 4),
    ]


# --- DIS-09: special powers in downtime ---------------------------------------------------------

from downtimes.rules import check_special_power  # noqa: E402


@pytest.mark.parametrize(
    ("kind", "targets_other", "refused"),
    [
        pytest.param("ritual", False, False, id="DIS-09-ritual-on-self-ok"),
        pytest.param("ritual", True, True, id="DIS-09-ritual-on-other-reject"),
        pytest.param("other", False, False, id="DIS-09-other-power-on-self-ok"),
        pytest.param("other", True, True, id="DIS-09-other-power-on-other-reject"),
        pytest.param("conditioning", True, False, id="DIS-09-conditioning-on-other-ok"),
        pytest.param("regnant_request", True, False, id="DIS-09-BND-09-regnant-request-ok"),
        pytest.param("torpor_hold", True, False, id="DIS-09-TOR-01-torpor-hold-ok"),
        pytest.param("conditioning", False, False, id="DIS-09-conditioning-on-self-ok"),
    ],
)
def test_check_special_power(kind: str, targets_other: bool, refused: bool) -> None:
    if refused:
        with pytest.raises(ValueError, match=r"\(DIS-09\)"):
            check_special_power(kind, targets_other=targets_other)
    else:
        check_special_power(kind, targets_other=targets_other)


@pytest.mark.parametrize(
    ("kind", "targets_other"),
    [
        pytest.param("dominate", False, id="unknown-kind"),
        pytest.param("ritual", 1, id="targets-other-not-bool"),
    ],
)
def test_check_special_power_bad_input(kind: str, targets_other: Any) -> None:
    with pytest.raises(ValueError):
        check_special_power(kind, targets_other=targets_other)


@pytest.mark.parametrize(
    ("clan", "double"),
    [
        pytest.param("toreador", True, id="DT-06-toreador-counts-double"),
        pytest.param("brujah", False, id="DT-06-brujah-single"),
        pytest.param("", False, id="DT-06-no-clan-single"),
        pytest.param(None, False, id="DT-06-ghoul-single"),
    ],
)
def test_votes_double(clan: str | None, double: bool) -> None:
    assert rules.votes_double(clan) is double


def test_house_rule_weights_reach_the_tally() -> None:
    """DT-06/07 settings: a chronicle may weigh Toreador votes and awards differently."""
    ballots = [
        rules.Ballot("p1", "feared", "c2", double=True),
        rules.Ballot("p3", "feared", "c4"),
        rules.Ballot("p5", "feared", "c4"),
    ]
    player_of = {"c2": "p2", "c4": "p4"}
    assert rules.vote_awards(ballots, player_of=player_of) == {"p2": 3, "p4": 3}  # tie 2-2
    weighted = rules.vote_awards(
        ballots, player_of=player_of, toreador_vote_weight=3, vote_award_xp=Decimal("2.5")
    )
    assert weighted == {"p2": Decimal("2.5")}


# --- DT-03 / DT-04 / INF-05: the cycle's base XP, eligibility and cashing in --------------------


@pytest.mark.parametrize(
    ("attended", "waiver", "expected"),
    [
        pytest.param(True, True, None, id="DT-04-attended-with-waiver"),
        pytest.param(True, False, "no signed waiver", id="DT-04-no-waiver"),
        pytest.param(False, False, "did not attend", id="DT-04-absent"),
        pytest.param(False, True, "did not attend", id="DT-04-absent-waiver-on-file"),
    ],
)
def test_award_ineligibility(attended: bool, waiver: bool, expected: str | None) -> None:
    reason = rules.award_ineligibility(attended=attended, waiver_signed=waiver)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and expected in reason and "DT-04" in reason


@pytest.mark.parametrize(
    ("submitted", "settings", "expected"),
    [
        pytest.param(False, {}, Decimal("2.5"), id="DT-03-no-downtime-2.5"),
        pytest.param(True, {}, Decimal("2.5"), id="DT-03-submitted-base-default"),
        pytest.param(
            True, {"submitted_downtime_xp": Decimal("0")}, Decimal("0"), id="DT-03-setting-zero"
        ),
        pytest.param(
            False, {"no_downtime_xp": Decimal("1.5")}, Decimal("1.5"), id="DT-03-setting-no-dt"
        ),
    ],
)
def test_base_xp(submitted: bool, settings: dict[str, Decimal], expected: Decimal) -> None:
    assert rules.base_xp(submitted=submitted, **settings) == expected


def test_base_xp_refuses_a_non_boolean() -> None:
    with pytest.raises(ValueError, match="true or false"):
        rules.base_xp(submitted="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("available", "value", "points", "total", "money"),
    [
        pytest.param(
            {"business": 3, "herd": 0, "occult": 2},
            0,
            {"business": 3, "occult": 2},
            5,
            None,
            id="DT-03-INF-05-st-decides",
        ),
        pytest.param(
            {"business": 3, "occult": 2},
            100,
            {"business": 3, "occult": 2},
            5,
            500,
            id="DT-03-INF-05-valued",
        ),
        pytest.param({"business": 0}, 100, {}, 0, 0, id="DT-03-nothing-left"),
    ],
)
def test_cash_in(
    available: dict[str, int], value: int, points: dict[str, int], total: int, money: int | None
) -> None:
    cashed = rules.cash_in(available, influence_money_value=value)
    assert (cashed.points, cashed.total_points, cashed.money) == (points, total, money)


@pytest.mark.parametrize(
    ("available", "value"),
    [
        pytest.param({"business": -1}, 0, id="negative-left"),
        pytest.param({"business": 1}, -5, id="negative-value"),
    ],
)
def test_cash_in_refuses(available: dict[str, int], value: int) -> None:
    with pytest.raises(ValueError):
        rules.cash_in(available, influence_money_value=value)
