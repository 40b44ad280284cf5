"""Votes (DT-06..09) and game-report picks (DT-05).

The tally is computed from the votes every time it is shown, never stored or typed: the
ballots of submitted downtimes of the players who attended the cycle's game (INTERPRETATION
DT-06) go through `downtimes.rules`, and the names are looked up for display only. Read by
admins only: a player never learns how others voted.

Picks are the one thing here that writes: at most `game_report_picks` (4, DT-05) per cycle,
counted under the cycle's row lock so two STs picking at once cannot make a fifth.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from chronicle import rules as chronicle_rules
from chronicle.models import Attendance, Cycle, CycleStatus
from chronicle.rules import settings_for

from .. import rules
from ..models import ReportPick, Submission, SubmissionStatus, Vote

# An in-character nominee nobody plays (an NPC) has no player to pay or to compare with the
# voter; it still needs an entry in `player_of`, one that matches no player id.
NPC_PREFIX = "npc:"

CATEGORY_LABELS: dict[str, Any] = {
    "feared": _("Most feared"),
    "liked": _("Most liked"),
    "respected": _("Most respected"),
    "roleplaying": _("Excellent roleplaying"),
    "costume": _("Best costume"),
}


# --- Ballots ---------------------------------------------------------------------------------


def _vote_rows(cycle: Cycle) -> list[dict[str, Any]]:
    """One query: every counted vote of the cycle with what the tally and its display need.

    Counted (INTERPRETATION DT-06): the submission is submitted (drafts never count) and its
    player attended the cycle's game (chronicle.models.Attendance)."""
    attended = Attendance.objects.filter(game_id=cycle.game_id).values("player_id")
    votes = (
        Vote.objects.filter(
            submission__cycle=cycle,
            submission__status=SubmissionStatus.SUBMITTED,
            submission__player_id__in=attended,
        )
        .order_by("submission__submitted_at", "submission_id", "category")
        .values(
            "category",
            "submission_id",
            "submission__player_id",
            "submission__character__clan",
            "nominee_character_id",
            "nominee_character__name",
            "nominee_character__player_id",
            "nominee_character__player__username",
            "nominee_character__player__first_name",
            "nominee_character__player__last_name",
            "nominee_player_id",
            "nominee_player__username",
            "nominee_player__first_name",
            "nominee_player__last_name",
        )
    )
    return [dict(row) for row in votes]


def _ballots(rows: list[dict[str, Any]]) -> tuple[list[rules.Ballot], dict[str, str]]:
    ballots: list[rules.Ballot] = []
    player_of: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for row in rows:
        voter = str(row["submission__player_id"])
        # INTERPRETATION (DT-06 "one pick per category"): a player with two characters files
        # two downtimes; only the pick of the one submitted first counts (rows come in
        # submission order), so one player never weighs twice.
        if (voter, row["category"]) in seen:
            continue
        seen.add((voter, row["category"]))
        if row["nominee_character_id"] is not None:
            nominee = str(row["nominee_character_id"])
            owner = row["nominee_character__player_id"]
            player_of[nominee] = str(owner) if owner is not None else f"{NPC_PREFIX}{nominee}"
        else:
            nominee = str(row["nominee_player_id"])
        ballots.append(
            rules.Ballot(
                voter=voter,
                category=row["category"],
                nominee=nominee,
                double=rules.votes_double(row["submission__character__clan"]),
            )
        )
    return ballots, player_of


def ballots_for(*, cycle: Cycle) -> tuple[list[rules.Ballot], dict[str, str]]:
    """DT-06: the cycle's counted ballots (voter = player id; `double` when the voting
    character is Toreador) and `player_of` (character id → player id) for every nominated
    character. One query, whatever the number of votes."""
    return _ballots(_vote_rows(cycle))


# --- Tally -----------------------------------------------------------------------------------


def _person(first: str | None, last: str | None, username: str | None) -> str:
    full = f"{first or ''} {last or ''}".strip()
    return full or username or "?"


@dataclass(frozen=True)
class TallyRow:
    nominee: str
    name: str
    player_name: str  # the player behind a character (in-character); the player themself else
    votes: int
    ballots: int
    doubled: int  # how many of `ballots` were a Toreador's, counted twice (DT-06)
    rank: int
    winner: bool  # rank within rules.WINNING_PLACES (DT-07)
    tied: bool  # another nominee shares this rank
    announced: bool  # within the top two (DT-09)
    bar: int  # percent of the category's best, for the chart


@dataclass(frozen=True)
class CategoryTally:
    category: str
    label: str
    in_character: bool
    winning_places: int
    rows: list[TallyRow]
    winners: list[TallyRow]
    announced: list[TallyRow]
    tie_at_the_top: bool  # more winners than places (DT-07 INTERPRETATION: all of them win)


@dataclass(frozen=True)
class Award:
    player: str
    name: str
    xp: Decimal | int
    won: list[str]  # category labels where this player (or their character) won
    attended: bool
    waiver_signed: bool
    categories: list[str] = field(default_factory=list)  # the same, as rules.CATEGORIES codes
    adult: bool = True  # GEN-01: of age on the game's date (True when no date was given)

    @property
    def eligible(self) -> bool:
        """DT-04 shown beside the award: it is paid only to attending players with a waiver,
        of age on the game's date (GEN-01)."""
        return self.attended and self.waiver_signed and self.adult


@dataclass(frozen=True)
class Tally:
    cycle: Cycle
    ballots: int
    voters: int
    categories: list[CategoryTally] = field(default_factory=list)
    awards: list[Award] = field(default_factory=list)
    error: str = ""  # a stored ballot the rules refuse (e.g. a self-vote): shown, not a 500


def tally_for(*, cycle: Cycle) -> Tally:
    """DT-06..09 for the admins' page and API: per category the standings
    (`rules.vote_tally`), winners (rank within `rules.WINNING_PLACES`) and ties, the top two
    to announce (`rules.announced_standings`), and the awards (`rules.vote_awards`), with
    names resolved. Two queries (votes, the award winners' attendance) for any number of
    ballots."""
    rows = _vote_rows(cycle)
    ballots, player_of = _ballots(rows)
    voters = len({b.voter for b in ballots})
    try:
        house = cycle.chronicle.house_rules_for(cycle)  # GEN-05: this cycle's game
        tally = rules.vote_tally(
            ballots, player_of=player_of, **settings_for(rules.vote_tally, house)
        )
        awards = rules.vote_awards(
            ballots, player_of=player_of, **settings_for(rules.vote_awards, house)
        )
        announced = rules.announced_standings(
            ballots, player_of=player_of, **settings_for(rules.announced_standings, house)
        )
    except ValueError as exc:
        return Tally(cycle=cycle, ballots=len(ballots), voters=voters, error=str(exc))

    names: dict[tuple[str, str], tuple[str, str]] = {}
    players: dict[str, str] = {}
    for row in rows:
        if row["nominee_character_id"] is not None:
            owner = _person(
                row["nominee_character__player__first_name"],
                row["nominee_character__player__last_name"],
                row["nominee_character__player__username"],
            )
            if row["nominee_character__player_id"] is None:
                owner = gettext("no player")
            else:
                players[str(row["nominee_character__player_id"])] = owner
            key = ("ic", str(row["nominee_character_id"]))
            names[key] = (row["nominee_character__name"], owner)
        else:
            person = _person(
                row["nominee_player__first_name"],
                row["nominee_player__last_name"],
                row["nominee_player__username"],
            )
            players[str(row["nominee_player_id"])] = person
            names[("ooc", str(row["nominee_player_id"]))] = (person, person)

    counted: dict[tuple[str, str], int] = defaultdict(int)
    doubled: dict[tuple[str, str], int] = defaultdict(int)
    for ballot in ballots:
        counted[ballot.category, ballot.nominee] += 1
        if ballot.double and ballot.category in rules.IN_CHARACTER_CATEGORIES:
            doubled[ballot.category, ballot.nominee] += 1

    categories: list[CategoryTally] = []
    won_by: dict[str, list[str]] = defaultdict(list)
    for category in rules.CATEGORIES:
        in_character = category in rules.IN_CHARACTER_CATEGORIES
        places = rules.WINNING_PLACES[category]
        standings = tally[category]
        top = max((s.votes for s in standings), default=0)
        rank_sizes: dict[int, int] = defaultdict(int)
        for s in standings:
            rank_sizes[s.rank] += 1
        shown = {s.nominee for s in announced[category]}
        table: list[TallyRow] = []
        for s in standings:
            name, owner = names[("ic" if in_character else "ooc", s.nominee)]
            entry = TallyRow(
                nominee=s.nominee,
                name=name,
                player_name=owner,
                votes=s.votes,
                ballots=counted[category, s.nominee],
                doubled=doubled[category, s.nominee],
                rank=s.rank,
                winner=s.rank <= places,
                tied=rank_sizes[s.rank] > 1,
                announced=s.nominee in shown,
                bar=round(100 * s.votes / top) if top else 0,
            )
            table.append(entry)
            if entry.winner:
                winner = player_of[s.nominee] if in_character else s.nominee
                won_by[winner].append(category)
        winners = [r for r in table if r.winner]
        categories.append(
            CategoryTally(
                category=category,
                label=str(CATEGORY_LABELS[category]),
                in_character=in_character,
                winning_places=places,
                rows=table,
                winners=winners,
                announced=[r for r in table if r.announced],
                tie_at_the_top=len(winners) > places,
            )
        )

    # An NPC's win pays no one: there is no player behind it.
    paid = {player: xp for player, xp in awards.items() if not player.startswith(NPC_PREFIX)}
    # GEN-01: the date of birth and the game's date joined to the sheet, in the same query.
    minimum = settings_for(chronicle_rules.adult_on, house)
    sheet = {
        str(player_id): (waiver_signed, chronicle_rules.adult_on(born, game_date, **minimum))
        for player_id, waiver_signed, born, game_date in Attendance.objects.filter(
            game_id=cycle.game_id, player_id__in=[int(p) for p in paid]
        ).values_list(
            "player_id", "waiver_signed", "player__chronicle_profile__birth_date", "game__date"
        )
    }
    award_list = [
        Award(
            player=player,
            name=players.get(player, "?"),
            xp=xp,
            won=[str(CATEGORY_LABELS[c]) for c in won_by[player]],
            categories=won_by[player],
            attended=player in sheet,
            waiver_signed=sheet.get(player, (False, True))[0],
            adult=sheet.get(player, (False, True))[1],
        )
        for player, xp in paid.items()
    ]
    award_list.sort(key=lambda a: a.name.lower())
    return Tally(
        cycle=cycle,
        ballots=len(ballots),
        voters=voters,
        categories=categories,
        awards=award_list,
    )


# --- The awards alone, once per run ----------------------------------------------------------


@dataclass(frozen=True)
class AwardLine:
    """One vote award as the awards step pays it: DT-04 is checked there, with the chunk's
    sign-in sheet."""

    player: str  # a player id (an NPC's win pays no one and is left out)
    name: str
    xp: Decimal
    categories: tuple[str, ...]  # rules.CATEGORIES codes, in rules.CATEGORIES order


@dataclass(frozen=True)
class AwardTally:
    """What the awards step needs of the tally (DT-06..08), computed once per resolution run
    and stored on it (`ResolutionRun.tally`), so that each chunk reads it instead of counting
    every ballot of the cycle again."""

    awards: tuple[AwardLine, ...] = ()
    error: str = ""  # a stored ballot the rules refuse: no award can be computed

    def to_json(self) -> dict[str, Any]:
        return {
            "awards": [
                {
                    "player": a.player,
                    "name": a.name,
                    "xp": str(a.xp),
                    "categories": list(a.categories),
                }
                for a in self.awards
            ],
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AwardTally:
        return cls(
            awards=tuple(
                AwardLine(
                    player=str(a["player"]),
                    name=a["name"],
                    xp=Decimal(a["xp"]),
                    categories=tuple(a["categories"]),
                )
                for a in data.get("awards", [])
            ),
            error=data.get("error", ""),
        )


def award_tally(cycle: Cycle) -> AwardTally:
    """The vote awards of the cycle (DT-07/08) with the categories each winner won and their
    name, as `tally_for` gives them, without what only the tally page shows (standings for
    display, the top two to announce, the sign-in sheet). One query."""
    rows = _vote_rows(cycle)
    ballots, player_of = _ballots(rows)
    house = cycle.chronicle.house_rules_for(cycle)  # GEN-05: this cycle's game
    try:
        tally = rules.vote_tally(
            ballots, player_of=player_of, **settings_for(rules.vote_tally, house)
        )
        awards = rules.vote_awards(
            ballots, player_of=player_of, **settings_for(rules.vote_awards, house)
        )
    except ValueError as exc:
        return AwardTally(error=str(exc))
    won_by: dict[str, list[str]] = defaultdict(list)
    for category in rules.CATEGORIES:
        in_character = category in rules.IN_CHARACTER_CATEGORIES
        for s in tally[category]:
            if s.rank <= rules.WINNING_PLACES[category]:
                won_by[player_of[s.nominee] if in_character else s.nominee].append(category)
    names = _player_names(rows)
    return AwardTally(
        awards=tuple(
            AwardLine(
                player=player,
                name=names.get(player, "?"),
                xp=Decimal(xp),
                categories=tuple(won_by[player]),
            )
            for player, xp in awards.items()
            # An NPC's win pays no one: there is no player behind it.
            if not player.startswith(NPC_PREFIX)
        )
    )


def _player_names(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Player id → the name shown for them: every nominated player, and every player behind a
    nominated character."""
    players: dict[str, str] = {}
    for row in rows:
        if row["nominee_character_id"] is not None:
            if row["nominee_character__player_id"] is not None:
                players[str(row["nominee_character__player_id"])] = _person(
                    row["nominee_character__player__first_name"],
                    row["nominee_character__player__last_name"],
                    row["nominee_character__player__username"],
                )
        else:
            players[str(row["nominee_player_id"])] = _person(
                row["nominee_player__first_name"],
                row["nominee_player__last_name"],
                row["nominee_player__username"],
            )
    return players


# --- Game-report picks (DT-05) ---------------------------------------------------------------


def _lock_cycle(cycle_id: int) -> Cycle:
    return Cycle.objects.select_for_update().select_related("chronicle").get(pk=cycle_id)


def _check_text(sanitized_text: str, published: bool) -> None:
    if published and not sanitized_text.strip():
        raise ValidationError(
            {
                "published": gettext(
                    "Write the sanitized text before publishing: the player's own report is "
                    "never published as it stands (DT-05)."
                )
            }
        )


def _check_not_released(cycle: Cycle) -> None:
    if cycle.status == CycleStatus.RELEASED:
        raise ValidationError(
            gettext(
                "This cycle's results and awards are released; its picks can no longer "
                "change (DT-05)."
            )
        )


@transaction.atomic
def report_pick(
    *,
    submission: Submission,
    by: User,
    sanitized_text: str = "",
    published: bool = False,
    now: dt.datetime | None = None,
) -> ReportPick:
    """DT-05: pick a submitted downtime's game report (+3 XP at the awards step). At most
    `game_report_picks` (4) per cycle: the next is refused. Picking an already picked report
    returns its pick unchanged (a double click gives one pick)."""
    now = now or timezone.now()
    cycle = _lock_cycle(submission.cycle_id)
    existing = ReportPick.objects.filter(submission_id=submission.pk).first()
    if existing is not None:
        return existing
    _check_not_released(cycle)
    fresh = Submission.objects.get(pk=submission.pk)
    if fresh.status != SubmissionStatus.SUBMITTED:
        raise ValidationError(
            gettext("Only a submitted downtime's game report can be picked (DT-05).")
        )
    if not fresh.game_report.strip():
        raise ValidationError(gettext("This downtime has no game report to pick (DT-05)."))
    limit = cycle.chronicle.house_rules_for(cycle).game_report_picks  # GEN-05
    if ReportPick.objects.filter(cycle=cycle).count() >= limit:
        raise ValidationError(
            ngettext(
                "This cycle already has %(limit)s picked game report, the most allowed; "
                "unpick it first (DT-05).",
                "This cycle already has %(limit)s picked game reports, the most allowed; "
                "unpick one first (DT-05).",
                limit,
            )
            % {"limit": limit}
        )
    _check_text(sanitized_text, published)
    return ReportPick.objects.create(
        submission=fresh,
        cycle=cycle,
        sanitized_text=sanitized_text,
        published=published,
        picked_by=by,
        picked_at=now,
    )


@transaction.atomic
def report_unpick(*, pick: ReportPick, by: User) -> bool:
    """DT-05: take a pick back (before the cycle's awards are released). Returns whether a
    pick was removed: unpicking twice is harmless."""
    cycle = _lock_cycle(pick.cycle_id)
    _check_not_released(cycle)
    deleted, _ = ReportPick.objects.filter(pk=pick.pk).delete()
    return deleted > 0


@transaction.atomic
def report_pick_update(
    *, pick: ReportPick, by: User, sanitized_text: str, published: bool
) -> ReportPick:
    """DT-05: the sanitized text and its publish flag (allowed after release: publishing on
    the website often comes later)."""
    locked = ReportPick.objects.select_for_update().filter(pk=pick.pk).first()
    if locked is None:
        raise ValidationError(gettext("This pick was removed meanwhile (DT-05)."))
    _check_text(sanitized_text, published)
    locked.sanitized_text = sanitized_text
    locked.published = published
    locked.save(update_fields=["sanitized_text", "published"])
    return locked
