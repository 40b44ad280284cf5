"""Downtime house rules: player votes and the XP awards they bring (DT-06 .. DT-09).

Pure Python: standard library only, no clock. Illegal input raises `ValueError` with a message a
player or ST can act on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from characters.rules import CLANS
from chronicle.rules import _

IN_CHARACTER_CATEGORIES: tuple[str, ...] = ("feared", "liked", "respected")
OUT_OF_CHARACTER_CATEGORIES: tuple[str, ...] = ("roleplaying", "costume")
CATEGORIES: tuple[str, ...] = IN_CHARACTER_CATEGORIES + OUT_OF_CHARACTER_CATEGORIES

TOREADOR_VOTE_WEIGHT = CLANS["toreador"].in_character_vote_weight  # DT-06, in-character only
VOTE_AWARD_XP = 3  # DT-07
# DT-07: winning places per category: the top character, or the top two players.
WINNING_PLACES: Mapping[str, int] = {
    **{category: 1 for category in IN_CHARACTER_CATEGORIES},
    **{category: 2 for category in OUT_OF_CHARACTER_CATEGORIES},
}
ANNOUNCED_PLACES = 2  # DT-09


@dataclass(frozen=True)
class Ballot:
    """DT-06: one pick of one voter (a player id) in one category.

    In-character categories ("feared", "liked", "respected") name a character id as `nominee`;
    out-of-character ones ("roleplaying", "costume") name a player id. `double` means the voter's
    character is Toreador. Validation happens when ballots are counted, not here, so a bad
    ballot read from storage can still be reported.
    """

    voter: str
    category: str
    nominee: str
    double: bool = False


def votes_double(clan: str | None) -> bool:
    """DT-06: whether a voter whose character is of this clan counts double in the
    in-character categories (Toreador, CLN-01)."""
    if not clan or clan not in CLANS:
        return False
    return CLANS[clan].in_character_vote_weight > 1


@dataclass(frozen=True)
class Standing:
    """DT-07 / DT-09: a nominee's votes and rank in one category (rank = 1 + the number of
    nominees with more votes, so ties share a rank)."""

    nominee: str
    votes: int
    rank: int


def _check_ballots(ballots: Iterable[Ballot], player_of: Mapping[str, str]) -> list[Ballot]:
    """DT-06: known categories, one pick per voter and category, no self-votes.

    INTERPRETATION: self-votes are rejected; a voter votes for themselves by naming their own
    player (out-of-character) or a character that player plays (in-character).
    """
    checked: list[Ballot] = []
    seen: set[tuple[str, str]] = set()
    for ballot in ballots:
        if ballot.category not in CATEGORIES:
            raise ValueError(
                _("Unknown vote category %(category)r; use one of %(categories)s.")
                % {"category": ballot.category, "categories": ", ".join(CATEGORIES)}
            )
        for name in ("voter", "nominee"):
            value = getattr(ballot, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"Every ballot needs a {name} id; got {value!r}.")
        if not isinstance(ballot.double, bool):
            raise ValueError(f"double must be true or false, got {ballot.double!r}.")
        if (ballot.voter, ballot.category) in seen:
            raise ValueError(
                _("Voter %(voter)r picked twice in %(category)r; one pick per category (DT-06).")
                % {"voter": ballot.voter, "category": ballot.category}
            )
        seen.add((ballot.voter, ballot.category))
        if ballot.category in IN_CHARACTER_CATEGORIES:
            if ballot.nominee not in player_of:
                raise ValueError(
                    f"Unknown character {ballot.nominee!r} in {ballot.category!r}: "
                    "player_of must map every nominated character to its player."
                )
            nominee_player = player_of[ballot.nominee]
        else:
            nominee_player = ballot.nominee
        if nominee_player == ballot.voter:
            raise ValueError(
                _(
                    "Voter %(voter)r voted for themselves in %(category)r; self-votes are not "
                    "allowed (DT-06)."
                )
                % {"voter": ballot.voter, "category": ballot.category}
            )
        checked.append(ballot)
    return checked


def vote_tally(
    ballots: Iterable[Ballot],
    *,
    player_of: Mapping[str, str],
    toreador_vote_weight: int = TOREADOR_VOTE_WEIGHT,
) -> dict[str, list[Standing]]:
    """DT-06 / DT-07: every category's standings, most votes first (ties by nominee id, for a
    stable order). Toreador ballots count twice in the in-character categories only. Only the
    ballots of attending players' submitted downtimes should be passed (INTERPRETATION)."""
    votes: dict[str, dict[str, int]] = {category: {} for category in CATEGORIES}
    for ballot in _check_ballots(ballots, player_of):
        weight = 1
        if ballot.double and ballot.category in IN_CHARACTER_CATEGORIES:
            weight = toreador_vote_weight
        counts = votes[ballot.category]
        counts[ballot.nominee] = counts.get(ballot.nominee, 0) + weight
    tally: dict[str, list[Standing]] = {}
    for category, counts in votes.items():
        ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        standings: list[Standing] = []
        # Rank = 1 + how many have more votes: in the sorted list that is the position of the
        # first nominee with these votes (one pass: counting for each nominee was quadratic).
        for position, (nominee, n) in enumerate(ordered):
            rank = standings[-1].rank if standings and standings[-1].votes == n else position + 1
            standings.append(Standing(nominee, n, rank))
        tally[category] = standings
    return tally


def vote_awards(
    ballots: Iterable[Ballot],
    *,
    player_of: Mapping[str, str],
    toreador_vote_weight: int = TOREADOR_VOTE_WEIGHT,
    vote_award_xp: Decimal | int = VOTE_AWARD_XP,
) -> dict[str, Decimal | int]:
    """DT-07 / DT-08: XP per player id, winners only.

    - DT-07: the top character of each in-character category, and the top two players of each
      out-of-character category, win. INTERPRETATION on ties: every nominee whose rank (1 + the
      number with more votes) is within the winning places wins.
    - DT-08: INTERPRETATION: characters are mapped to their player (`player_of`), and a player
      who wins any number of positions gets 3 XP once; their other positions stay empty (no
      runner-up moves up) and other winners are unaffected.

    An unknown category, a second pick by a voter in one category, a self-vote, or an
    in-character nominee missing from `player_of` raises `ValueError`.
    """
    winners: set[str] = set()
    tally = vote_tally(ballots, player_of=player_of, toreador_vote_weight=toreador_vote_weight)
    for category, standings in tally.items():
        for standing in standings:
            if standing.rank <= WINNING_PLACES[category]:
                is_character = category in IN_CHARACTER_CATEGORIES
                winners.add(player_of[standing.nominee] if is_character else standing.nominee)
    return {player: vote_award_xp for player in sorted(winners)}


def announced_standings(
    ballots: Iterable[Ballot],
    *,
    player_of: Mapping[str, str],
    toreador_vote_weight: int = TOREADOR_VOTE_WEIGHT,
) -> dict[str, list[Standing]]:
    """DT-09: the top two of every category, ties included, announced at the next game and on
    the website (nominees are shown as voted: characters or players)."""
    return {
        category: [s for s in standings if s.rank <= ANNOUNCED_PLACES]
        for category, standings in vote_tally(
            ballots, player_of=player_of, toreador_vote_weight=toreador_vote_weight
        ).items()
    }


# --- DIS-09: special powers in downtime ---------------------------------------------------------

SPECIAL_POWER_KINDS: tuple[str, ...] = (
    "ritual",
    "conditioning",
    "regnant_request",
    "torpor_hold",
    "other",
)
# DIS-09's exceptions: Conditioning (3 nights), regnant requests (BND-09), torpor holds
# (TOR-01) are the only powers a downtime may turn on another character.
POWERS_THAT_MAY_TARGET_OTHERS: frozenset[str] = frozenset(
    {"conditioning", "regnant_request", "torpor_hold"}
)


def check_special_power(kind: str, *, targets_other: bool) -> None:
    """DIS-09: no discipline or ritual may affect another character in downtime, except
    Conditioning, regnant requests (BND-09) and torpor holds (TOR-01)."""
    if kind not in SPECIAL_POWER_KINDS:
        raise ValueError(
            _("Unknown special power %(kind)r; use one of %(kinds)s.")
            % {"kind": kind, "kinds": ", ".join(SPECIAL_POWER_KINDS)}
        )
    if not isinstance(targets_other, bool):
        raise ValueError(f"targets_other must be true or false, got {targets_other!r}.")
    if targets_other and kind not in POWERS_THAT_MAY_TARGET_OTHERS:
        raise ValueError(
            _(
                "No discipline or ritual may affect another character in downtime; only "
                "Conditioning, requests to a thrall and torpor holds may (DIS-09)."
            )
        )


# --- The cycle's base XP, eligibility and cashing in (DT-03, DT-04, INF-05) --------------------

NO_DOWNTIME_XP = Decimal("2.5")  # DT-03
SUBMITTED_DOWNTIME_XP = Decimal("2.5")  # DT-03 INTERPRETATION: downtimes are optional


def award_ineligibility(*, attended: bool, waiver_signed: bool, adult: bool = True) -> str | None:
    """DT-04: every XP award needs the game attended and its waiver signed, by a player of age
    on the game's date (GEN-01: `adult`, from chronicle.rules.adult_on). None when eligible,
    else the reason in words a player understands."""
    if not attended:
        return _("not paid: the player did not attend the game (DT-04)")
    if not adult:
        return _("not paid: the player was under age on the game's date (GEN-01, DT-04)")
    if not waiver_signed:
        return _("not paid: no signed waiver for the game (DT-04)")
    return None


def base_xp(
    *,
    submitted: bool,
    no_downtime_xp: Decimal = NO_DOWNTIME_XP,
    submitted_downtime_xp: Decimal = SUBMITTED_DOWNTIME_XP,
) -> Decimal:
    """DT-03: the cycle's base XP, with or without a submitted downtime (before DT-04)."""
    if not isinstance(submitted, bool):
        raise ValueError(f"submitted must be true or false, got {submitted!r}.")
    return Decimal(submitted_downtime_xp if submitted else no_downtime_xp)


@dataclass(frozen=True)
class CashIn:
    points: dict[str, int]
    total_points: int
    money: int | None  # None when the STs set the money value by hand (setting 0)


def cash_in(available: Mapping[str, int], *, influence_money_value: int = 0) -> CashIn:
    """DT-03 with INF-05: without a downtime, every influence point still available this cycle
    is cashed in for its money value (a setting; 0 means the STs decide the sum)."""
    points: dict[str, int] = {}
    for name, left in available.items():
        if not isinstance(left, int) or isinstance(left, bool) or left < 0:
            raise ValueError(f"Influence left must be a whole number ≥ 0, got {left!r} ({name}).")
        if left:
            points[name] = left
    if not isinstance(influence_money_value, int) or influence_money_value < 0:
        raise ValueError(
            _("The money value must be ≥ 0, got %(value)r (INF-05).")
            % {"value": influence_money_value}
        )
    total = sum(points.values())
    return CashIn(
        points=points,
        total_points=total,
        money=total * influence_money_value if influence_money_value else None,
    )
