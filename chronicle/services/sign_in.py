"""Which character each player plays at a game (HAV-06), and black veins at the door (XP-04).

The ground floor names no app above it: the characters a player may be signed in as come from
each app's `attendance.py` (`playable(*, chronicle, player_ids, day)`), found the way the
dashboard finds each app's `dashboard.py`. This module checks a sign-in sheet's lines against
them; `attendance_record` writes what it settles.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib
import importlib.util
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_noop

from ..models import Attendance, Chronicle, Game
from ..moments import day_text


@dataclass(frozen=True)
class Playable:
    """A character a player may be signed in as on a game's day: their own, active and
    approved. `black_veins`: a diablerie's black veins show on that day (XP-04)."""

    id: int
    name: str
    black_veins: bool = False


class SheetLine(Protocol):
    """What this module reads of a sign-in line (`chronicle.services.SignIn`)."""

    @property
    def player_id(self) -> int: ...
    @property
    def attended(self) -> bool: ...
    @property
    def character_id(self) -> int | None: ...
    @property
    def permit_black_veins(self) -> bool | None: ...


PlayableSource = Callable[..., Mapping[int, Sequence[Playable]]]


@functools.cache
def _sources() -> list[PlayableSource]:
    found: list[PlayableSource] = []
    for config in apps.get_app_configs():
        name = f"{config.name}.attendance"
        if config.name != "chronicle" and importlib.util.find_spec(name):
            found.append(importlib.import_module(name).playable)
    return found


def sign_in_playable(
    *, chronicle: Chronicle, player_ids: Iterable[int], day: dt.date
) -> dict[int, list[Playable]]:
    """The characters each player may be signed in as on `day`, by player id (a player with
    none is left out). A fixed number of queries, whatever the number of players."""
    ids = sorted(set(player_ids))
    playable: dict[int, list[Playable]] = defaultdict(list)
    if not ids:
        return {}
    for source in _sources():
        for player_id, characters in source(chronicle=chronicle, player_ids=ids, day=day).items():
            playable[player_id].extend(characters)
    return dict(playable)


def default_character(characters: Sequence[Playable]) -> Playable | None:
    """HAV-06 (issue 14): a sign-in line's character by default: the player's only active
    character; none when they have none or several (then the storyteller chooses)."""
    return characters[0] if len(characters) == 1 else None


@dataclass(frozen=True)
class Settled:
    """What a sign-in line records beside attendance and waiver: the character played, and the
    storyteller who let it in with black veins showing (None: no permission needed or given)."""

    character_id: int | None
    permitted_by_id: int | None


def sign_in_characters(
    *,
    game: Game,
    lines: Sequence[SheetLine],
    saved: Mapping[int, Attendance],
    by_id: int,
) -> dict[int, Settled]:
    """HAV-06 and XP-04 on a sign-in sheet: for each attending line (by player id), the
    character played (the one chosen, else the player's only active character) and the
    storyteller's permission to enter with black veins. `saved` is the sheet's rows by player.

    Refuses, naming every problem at once: a character that is not one of the player's active
    characters; a player with several and none chosen; a character whose black veins show on
    the game's day without a storyteller's permission for this game (XP-04: "Character may not
    enter the game with black veins except with explicit storyteller permission"). A line that
    says nothing of the permission (`permit_black_veins=None`, the API's default) keeps the one
    saved for the same character."""
    attending = [line for line in lines if line.attended]
    if not attending:
        return {}
    playable = sign_in_playable(
        chronicle=game.chronicle, player_ids=[line.player_id for line in attending], day=game.date
    )
    settled: dict[int, Settled] = {}
    # (player id, sentence, its values but the player's name), worded once the names are read.
    problems: list[tuple[int, str, dict[str, str]]] = []
    for line in attending:
        own = playable.get(line.player_id, [])
        if line.character_id is None:
            # Not said: the character the sheet already holds, else the only active one.
            before = saved.get(line.player_id)
            kept = before.character_id if before else None
            character = next((c for c in own if c.id == kept), None) or default_character(own)
            if character is None and own:
                problems.append((line.player_id, SEVERAL, {}))
                continue
        else:
            character = next((c for c in own if c.id == line.character_id), None)
            if character is None:
                problems.append((line.player_id, NOT_THEIRS, {}))
                continue
        if character is None:
            settled[line.player_id] = Settled(character_id=None, permitted_by_id=None)
            continue
        permitted_by: int | None = None
        if character.black_veins:
            before = saved.get(line.player_id)
            if (
                before is not None
                and before.character_id == character.id
                and line.permit_black_veins is not False
            ):
                # Given before for this character: kept, with the storyteller who gave it.
                permitted_by = before.black_veins_permitted_by_id
            if line.permit_black_veins and permitted_by is None:
                permitted_by = by_id
            if permitted_by is None:
                problems.append(
                    (
                        line.player_id,
                        BLACK_VEINS,
                        {"character": character.name, "day": day_text(game.date)},
                    )
                )
                continue
        settled[line.player_id] = Settled(character_id=character.id, permitted_by_id=permitted_by)
    if problems:
        names = dict(
            get_user_model()
            .objects.filter(pk__in={pid for pid, _, _ in problems})
            .values_list("pk", "username")
        )
        raise ValidationError(
            [
                gettext(sentence) % {**values, "player": names.get(pid, pid)}
                for pid, sentence, values in problems
            ]
        )
    return settled


SEVERAL = gettext_noop(
    "%(player)s has several active characters: choose the one they play tonight."
)
NOT_THEIRS = gettext_noop(
    "%(player)s can only be signed in as one of their own active characters: choose one of theirs."
)
BLACK_VEINS = gettext_noop(
    "%(character)s (%(player)s) has black veins showing on %(day)s, from a diablerie in the "
    "last six months. A character may enter the game with black veins only with a "
    "storyteller's permission (XP-04): tick “Permit black veins” on %(player)s's line to let "
    "them in."
)
