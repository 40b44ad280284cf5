"""House-rule settings: publishing a change for a later game (GEN-05), putting one setting back
to the rules' default through the same publication, and correcting a setting "now" after a
GEN-03 decision.

GEN-05: "rules will be published and publicly discussed at least one game before any changes
take place". A change is published with the game from which it takes effect, which must come
after the next game to be played (`rules.rule_change_effective_ok`). It goes into the
chronicle's schedule (`Chronicle.house_rule_schedule`, read without a query by
`Chronicle.house_rules` and `Chronicle.house_rules_for(game)`) and is recorded as a
`HouseRuleChange`. Before any game has been played nothing is in force yet, so a change
applies at once. Every service locks the chronicle row first (two admins at once each keep
the other's changes) and puts open cycles' deadlines in step with the settings in force for
their own game.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import rules
from ..models import Chronicle, Game, HouseRuleChange
from . import _reschedule_open_cycles, chronicle_today

# A change that puts a setting back to the rules' default (not a value of its own).
TO_DEFAULT = object()

REASON_MAX = 200


@dataclass(frozen=True)
class Publication:
    """Where the chronicle stands for publishing a rule change (GEN-05)."""

    # A game has been played (dated today or earlier): changes wait for a later game.
    played: bool
    # The next game to be played: the published game of a change made today.
    next_game: int
    # The scheduled games a change may take effect from (after the next game), by date.
    choices: list[Game]
    # The last game played, from which a correction "now" applies (None before the first).
    current: Game | None


def publication_for(chronicle: Chronicle, *, now: dt.datetime | None = None) -> Publication:
    """One query: the chronicle's games, split around today (in the chronicle's zone)."""
    today = chronicle_today(chronicle, now or timezone.now())
    games = list(Game.objects.filter(chronicle=chronicle).order_by("date", "number"))
    played = [g for g in games if g.date <= today]
    upcoming = [g for g in games if g.date >= today]
    # Without a game ahead, the next game is the one not scheduled yet.
    last = max((g.number for g in games), default=0)
    next_game = upcoming[0].number if upcoming else last + 1
    choices = [g for g in upcoming if rules.rule_change_effective_ok(next_game, g.number)]
    return Publication(
        played=bool(played),
        next_game=next_game,
        choices=choices,
        current=played[-1] if played else None,
    )


def _json_value(value: object) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def _changed(changes: dict[str, object], before: rules.HouseRules) -> dict[str, object]:
    """The changes checked one by one (a message under the setting's field), keeping only the
    settings whose value differs from `before`; TO_DEFAULT stays as it is."""
    unknown = sorted(name for name in changes if name not in rules.HOUSE_RULE_FIELDS)
    if unknown:
        raise ValidationError(
            _("There is no house-rule setting called %(name)s.") % {"name": ", ".join(unknown)}
        )
    kept: dict[str, object] = {}
    errors: dict[str, str] = {}
    for name, raw in changes.items():
        if raw is TO_DEFAULT:
            value = rules.HOUSE_RULE_FIELDS[name].default
        else:
            try:
                value = getattr(rules.house_rules_from({name: raw}), name)
            except ValueError as exc:
                errors[name] = str(exc)
                continue
        if value != getattr(before, name):
            kept[name] = TO_DEFAULT if raw is TO_DEFAULT else value
    if errors:
        raise ValidationError(errors)
    return kept


def _entries(changed: dict[str, object], game: Game) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "value": None if value is TO_DEFAULT else _json_value(value),
            "default": value is TO_DEFAULT,
            "effective_game": game.number,
            "effective_on": game.date.isoformat(),
        }
        for name, value in changed.items()
    ]


def _records(
    chronicle: Chronicle,
    changed: dict[str, object],
    *,
    published_game: int | None,
    effective_game: int | None,
    by: User | None,
    now: dt.datetime,
    reason: str = "",
) -> list[HouseRuleChange]:
    return HouseRuleChange.objects.bulk_create(
        [
            HouseRuleChange(
                chronicle=chronicle,
                name=name,
                value=None if value is TO_DEFAULT else _json_value(value),
                to_default=value is TO_DEFAULT,
                published_game=published_game,
                effective_game=effective_game,
                by=by,
                at=now,
                reason=reason,
            )
            for name, value in changed.items()
        ]
    )


def _schedule(locked: Chronicle, entries: list[dict[str, Any]]) -> None:
    """Add `entries` to the schedule, after every change for the same or an earlier game."""
    schedule = list(locked.house_rule_schedule or []) + entries
    schedule.sort(key=lambda e: e["effective_game"])  # stable: publication order within a game
    locked.house_rule_schedule = schedule
    locked.save(update_fields=["house_rule_schedule"])


def _apply_to_base(
    locked: Chronicle,
    changes: dict[str, object],
    *,
    by: User | None,
    now: dt.datetime,
    reason: str = "",
) -> list[HouseRuleChange]:
    """Before the first game: nothing is in force yet, so the base settings change at once."""
    changed = _changed(changes, rules.house_rules_from(locked.house_rule_overrides))
    if not changed:
        return []
    merged = dict(locked.house_rule_overrides or {})
    for name, value in changed.items():
        if value is TO_DEFAULT:
            merged.pop(name, None)
        else:
            merged[name] = _json_value(value)
    locked.house_rule_overrides = rules.house_rules_overrides(rules.house_rules_from(merged))
    locked.save(update_fields=["house_rule_overrides"])
    return _records(
        locked,
        changed,
        published_game=None,
        effective_game=None,
        by=by,
        now=now,
        reason=reason,
    )


def _follow(chronicle: Chronicle, locked: Chronicle) -> None:
    """The caller's instance reads what was saved."""
    chronicle.house_rule_overrides = locked.house_rule_overrides
    chronicle.house_rule_schedule = locked.house_rule_schedule


@transaction.atomic
def house_rules_publish(
    *,
    chronicle: Chronicle,
    changes: dict[str, object],
    effective_game: int | None,
    by: User | None = None,
    now: dt.datetime | None = None,
) -> list[HouseRuleChange]:
    """GEN-05: publish changes of house-rule settings (a value, or TO_DEFAULT) to take effect
    from game `effective_game`, which must be a scheduled game after the next game. Before the
    first game has been played they apply at once. Returns the recorded changes (none when
    every setting already has the value asked for that game)."""
    now = now or timezone.now()
    locked = Chronicle.objects.select_for_update().get(pk=chronicle.pk)
    publication = publication_for(locked, now=now)
    if not publication.played:
        records = _apply_to_base(locked, changes, by=by, now=now)
    else:
        game = _effective_game(publication, effective_game)
        changed = _changed(changes, locked.house_rules_for(game.number))
        if not changed:
            return []
        _schedule(locked, _entries(changed, game))
        records = _records(
            locked,
            changed,
            published_game=publication.next_game,
            effective_game=game.number,
            by=by,
            now=now,
        )
    _reschedule_open_cycles(locked)
    _follow(chronicle, locked)
    return records


def _effective_game(publication: Publication, effective_game: int | None) -> Game:
    """The scheduled game a change takes effect from, checked against GEN-05."""
    if effective_game is None:
        raise ValidationError(
            {
                "effective_game": _(
                    "Choose the game from which the change takes effect: a game has been "
                    "played, so changes are announced a game ahead (GEN-05)."
                )
            }
        )
    try:
        allowed = rules.rule_change_effective_ok(publication.next_game, effective_game)
    except ValueError as exc:
        raise ValidationError({"effective_game": str(exc)}) from exc
    if not allowed:
        raise ValidationError(
            {
                "effective_game": _(
                    "A change published now takes effect from game %(first)s at the earliest: "
                    "it must be announced at game %(next)s, at least one game before "
                    "(GEN-05)."
                )
                % {"first": publication.next_game + 1, "next": publication.next_game}
            }
        )
    game = next((g for g in publication.choices if g.number == effective_game), None)
    if game is None:
        raise ValidationError(
            {
                "effective_game": _(
                    "Game %(number)s is not scheduled yet: schedule it first, then publish the "
                    "change for it (GEN-05)."
                )
                % {"number": effective_game}
            }
        )
    return game


def chronicle_house_rule_reset(
    *,
    chronicle: Chronicle,
    name: str,
    effective_game: int | None = None,
    by: User | None = None,
    now: dt.datetime | None = None,
) -> bool:
    """Put setting `name` back to the rules' default, published like any change (GEN-05):
    from `effective_game`, or at once before the first game. Returns False when the setting
    already has its default then (nothing changed); refuses an unknown name."""
    if name not in rules.HOUSE_RULE_FIELDS:
        raise ValidationError(_("There is no house-rule setting called %(name)s.") % {"name": name})
    records = house_rules_publish(
        chronicle=chronicle,
        changes={name: TO_DEFAULT},
        effective_game=effective_game,
        by=by,
        now=now,
    )
    return bool(records)


@transaction.atomic
def house_rule_correct_now(
    *,
    chronicle: Chronicle,
    overrides: dict[str, object],
    by: User | None,
    reason: str,
    now: dt.datetime | None = None,
) -> list[HouseRuleChange]:
    """GEN-03 / GEN-05: correct settings at once, as decided by a recorded storytellers' vote
    (`reason` names it, e.g. "GEN-03 decision 12"). The correction applies from the last game
    played (so to its open downtime too) and is recorded with the reason; changes already
    published for later games still take effect from their game. Before the first game it
    changes the base settings, like any change then. Returns the recorded changes."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError(
            {"reason": _("Say which decision corrects the setting now (GEN-03).")}
        )
    if len(reason) > REASON_MAX:
        raise ValidationError(
            {"reason": _("Give the reason in at most %(most)s letters.") % {"most": REASON_MAX}}
        )
    now = now or timezone.now()
    locked = Chronicle.objects.select_for_update().get(pk=chronicle.pk)
    publication = publication_for(locked, now=now)
    current = publication.current
    if current is None:
        records = _apply_to_base(locked, dict(overrides), by=by, now=now, reason=reason)
    else:
        changed = _changed(dict(overrides), locked.house_rules_for(current.number))
        if not changed:
            return []
        _schedule(locked, _entries(changed, current))
        records = _records(
            locked,
            changed,
            published_game=None,
            effective_game=current.number,
            by=by,
            now=now,
            reason=reason,
        )
    _reschedule_open_cycles(locked)
    _follow(chronicle, locked)
    return records
