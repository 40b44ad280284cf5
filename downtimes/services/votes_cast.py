"""Section 6 of the downtime (DT-06): the ballot a player fills in, one pick per category.

Picks come from the cast of the cycle's game, so a typo cannot lose a vote: in-character
categories offer the characters of the players who attended that game (chronicle.Attendance,
the sign-in sheet), out-of-character ones the players who attended, by name only. The page and
the API send ids (`votes_cast`) and each pick is checked against the cast; a vote for oneself
or a character one plays is refused. Only submitted downtimes of attending players count in
the tally (`downtimes.services.votes`).

`votes_save` takes names, for scripts and the demo, which write ballots as they were written
on paper: an active character by its exact name, a player by username (an absent one too: the
tally pays nobody who was absent, DT-04).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import FilteredRelation, Prefetch, Q
from django.utils.translation import gettext, gettext_noop

from characters.models import Approval, Status
from chronicle.models import Attendance, Cycle, Membership, Role

from .. import rules
from ..models import Submission, Vote
from .submissions import NO_CHARACTER, NO_PLAYER, _now, _touch, _writable, active_character_named


def person_name(user: User) -> str:
    """A player as other players read them: their name, or their username when they gave
    none. Nothing more (no address, no characters)."""
    return user.get_full_name() or user.get_username()


@dataclass(frozen=True)
class Nominee:
    id: int
    name: str
    player_id: int | None  # a character's player; a player's own id


@dataclass(frozen=True)
class Cast:
    """Who may be picked in the votes of one cycle: the cast of its game."""

    game_number: int
    characters: list[Nominee] = field(default_factory=list)
    players: list[Nominee] = field(default_factory=list)

    @property
    def recorded(self) -> bool:
        """Whether the game's sign-in sheet has anyone on it yet."""
        return bool(self.players)

    def nominees(self, category: str) -> list[Nominee]:
        return self.characters if category in rules.IN_CHARACTER_CATEGORIES else self.players

    def offered(self, category: str, voter_id: int | None) -> list[Nominee]:
        """The choices the voter is offered: the cast without themself and their characters."""
        return [n for n in self.nominees(category) if n.player_id != voter_id]

    def find(self, category: str, nominee_id: int) -> Nominee | None:
        return next((n for n in self.nominees(category) if n.id == nominee_id), None)


def cast_for(cycle: Cycle) -> Cast:
    """The cast of the cycle's game, names sorted. One query, whatever the numbers: the
    sign-in sheet with each player's active, approved characters of the chronicle joined."""
    # Columns, not model instances: the whole sign-in sheet is read on every downtime page, and
    # building 600 instances of a 300-player game cost more than the rest of the page's reads.
    rows = (
        Attendance.objects.filter(game_id=cycle.game_id)
        .annotate(
            played=FilteredRelation(
                "player__characters",
                condition=Q(
                    player__characters__chronicle_id=cycle.chronicle_id,
                    player__characters__status=Status.ACTIVE,
                    player__characters__approval=Approval.APPROVED,
                ),
            )
        )
        .values_list(
            "pk",
            "player_id",
            "player__first_name",
            "player__last_name",
            "player__username",
            "played__id",
            "played__name",
        )
    )
    # One row per (line of the sheet, character of its player): each line and each
    # character once.
    lines: dict[int, Nominee] = {}
    played: dict[int, Nominee] = {}
    for line, pk, first, last, username, character_id, character_name in rows:
        if line not in lines:
            # `person_name` from its columns: `User.get_full_name()`, or the username.
            name = f"{first} {last}".strip() or username
            lines[line] = Nominee(id=pk, name=name, player_id=pk)
        if character_id is not None:
            played[character_id] = Nominee(id=character_id, name=character_name, player_id=pk)
    players = list(lines.values())
    characters = list(played.values())
    return Cast(
        game_number=cycle.game.number,
        characters=sorted(characters, key=lambda n: (n.name.casefold(), n.id)),
        players=sorted(players, key=lambda n: (n.name.casefold(), n.id)),
    )


# --- Reading -----------------------------------------------------------------------------------


def votes_prefetch() -> Prefetch:
    """For lists: each submission's votes with their nominees, in one query for all."""
    # The nominees' names only: their whole character and user rows cost more than the rest.
    return Prefetch(
        "votes",
        queryset=Vote.objects.select_related("nominee_character", "nominee_player").only(
            "submission_id",
            "category",
            "nominee_character_id",
            "nominee_player_id",
            "nominee_character__name",
            "nominee_player__first_name",
            "nominee_player__last_name",
            "nominee_player__username",
        ),
    )


def _votes(submission: Submission) -> list[Vote]:
    cache = getattr(submission, "_prefetched_objects_cache", {})
    if "votes" in cache:
        return list(cache["votes"])
    return list(submission.votes.select_related("nominee_character", "nominee_player"))


def vote_choices(submission: Submission) -> dict[str, str]:
    """Category -> the nominee's name (a character's name; a player's name, or username when
    they gave none). Reads the prefetch (`votes_prefetch`) when there is one, so a list costs
    no query per row."""
    out: dict[str, str] = {}
    for vote in _votes(submission):
        if vote.nominee_character is not None:
            out[vote.category] = vote.nominee_character.name
        elif vote.nominee_player is not None:
            out[vote.category] = person_name(vote.nominee_player)
    return out


def vote_picks(submission: Submission) -> dict[str, int]:
    """Category -> the nominee's id (a character's or a player's), for the ballot form."""
    out: dict[str, int] = {}
    for vote in _votes(submission):
        nominee = vote.nominee_character_id or vote.nominee_player_id
        if nominee is not None:
            out[vote.category] = nominee
    return out


# --- Writing -----------------------------------------------------------------------------------


def _unknown_category(category: str) -> str:
    return gettext("Unknown vote category %(category)r; use one of %(categories)s.") % {
        "category": category,
        "categories": ", ".join(rules.CATEGORIES),
    }


SELF_VOTE = gettext_noop("You may not vote for yourself or for a character you play.")


def _self_vote(by: User, category: str, nominee_id: int, player_id: int | None) -> bool:
    """The rules own what a valid ballot is (self-votes, DT-06)."""
    ballot = rules.Ballot(str(by.pk), category, str(nominee_id))
    in_character = category in rules.IN_CHARACTER_CATEGORIES
    player_of = {str(nominee_id): str(player_id or "")} if in_character else {}
    try:
        rules.vote_tally([ballot], player_of=player_of)
    except ValueError:
        return True
    return False


def _vote(submission: Submission, category: str, nominee_id: int) -> Vote:
    if category in rules.IN_CHARACTER_CATEGORIES:
        return Vote(submission=submission, category=category, nominee_character_id=nominee_id)
    return Vote(submission=submission, category=category, nominee_player_id=nominee_id)


def _write(
    submission: Submission,
    chosen: dict[str, Vote],
    cleared: list[str],
    errors: dict[str, list[str]],
    now: dt.datetime,
) -> list[Vote]:
    """Every problem at once, beside its category; nothing is written then."""
    if errors:
        raise ValidationError(errors)
    Vote.objects.filter(submission=submission, category__in=[*chosen, *cleared]).delete()
    votes = Vote.objects.bulk_create(chosen.values())
    _touch(submission, now)
    return votes


@transaction.atomic
def votes_cast(
    *,
    submission: Submission,
    by: User,
    picks: Mapping[str, int | None],
    now: dt.datetime | None = None,
) -> list[Vote]:
    """DT-06: one pick per category, by id, from the cast of the cycle's game (`cast_for`): a
    character (in character) or a player (out of character) who attended. None (or 0) clears
    the category. A pick outside the cast or a self-vote is refused beside its category, and
    nothing is written then."""
    now = _now(now)
    locked = _writable(submission, by, now)
    cast = cast_for(locked.cycle)
    errors: dict[str, list[str]] = {}
    chosen: dict[str, Vote] = {}
    cleared: list[str] = []
    for category, nominee_id in picks.items():
        if category not in rules.CATEGORIES:
            errors.setdefault("__all__", []).append(_unknown_category(category))
            continue
        if not nominee_id:
            cleared.append(category)
            continue
        nominee = cast.find(category, nominee_id)
        if nominee is None:
            if category in rules.IN_CHARACTER_CATEGORIES:
                text = gettext("Pick one of the characters who attended game %(number)s.")
            else:
                text = gettext("Pick one of the players who attended game %(number)s.")
            errors.setdefault(category, []).append(text % {"number": cast.game_number})
            continue
        if _self_vote(by, category, nominee.id, nominee.player_id):
            errors.setdefault(category, []).append(gettext(SELF_VOTE))
            continue
        chosen[category] = _vote(locked, category, nominee.id)
    return _write(locked, chosen, cleared, errors, now)


@transaction.atomic
def votes_save(
    *,
    submission: Submission,
    by: User,
    picks: Mapping[str, str],
    now: dt.datetime | None = None,
) -> list[Vote]:
    """DT-06 by names, for scripts and the demo (see the module's docstring): in-character
    categories name the one active character of exactly that name; out-of-character ones a
    player of the chronicle by username. An empty name clears the category; self-votes are
    refused; every problem is reported at once, beside its category, and nothing is written
    then.

    INTERPRETATION: an unknown name is refused; this tells only whether an active character of
    that name exists, which play already tells."""
    now = _now(now)
    locked = _writable(submission, by, now)
    chronicle_id = locked.cycle.chronicle_id
    errors: dict[str, list[str]] = {}
    chosen: dict[str, Vote] = {}
    cleared: list[str] = []
    for category, raw in picks.items():
        if category not in rules.CATEGORIES:
            errors.setdefault("__all__", []).append(_unknown_category(category))
            continue
        name = (raw or "").strip()
        if not name:
            cleared.append(category)
            continue
        if category in rules.IN_CHARACTER_CATEGORIES:
            character = active_character_named(chronicle_id, name)
            if character is None:
                errors.setdefault(category, []).append(gettext(NO_CHARACTER) % {"rule": "DT-06"})
                continue
            nominee_id, player_id = character.pk, character.player_id
        else:
            member = Membership.objects.filter(
                chronicle_id=chronicle_id, role=Role.PLAYER, user__username__iexact=name
            ).first()
            if member is None:
                errors.setdefault(category, []).append(gettext(NO_PLAYER))
                continue
            nominee_id, player_id = member.user_id, member.user_id
        if _self_vote(by, category, nominee_id, player_id):
            errors.setdefault(category, []).append(gettext(SELF_VOTE))
            continue
        chosen[category] = _vote(locked, category, nominee_id)
    return _write(locked, chosen, cleared, errors, now)
