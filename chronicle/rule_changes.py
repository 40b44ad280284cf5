"""GEN-05: the house-rule changes a member reads, on the settings page and the dashboard.

Upcoming changes come from `Chronicle.house_rule_schedule` (no query); past ones from the
record of published changes (`HouseRuleChange`, one query).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext

from . import rules
from .forms import _shown
from .models import Chronicle, HouseRuleChange

PAST_SHOWN = 30


@dataclass(frozen=True)
class UpcomingChange:
    """A published change that takes effect from a game not played yet."""

    name: str
    label: str
    rule: str
    old: str
    new: str
    to_default: bool
    game: int
    on: dt.date


@dataclass(frozen=True)
class PastChange:
    """One recorded change: published for a game, or applied at once (with its reason)."""

    name: str
    label: str
    rule: str
    new: str
    to_default: bool
    published_game: int | None
    effective_game: int | None
    at: dt.datetime
    by: User | None
    reason: str


def _label(name: str) -> str:
    return gettext(rules.HOUSE_RULE_FIELDS[name].metadata["label"])


def _value(name: str, raw: Any, to_default: bool) -> str:
    if to_default:
        return _shown(rules.HOUSE_RULE_FIELDS[name].default)
    return _shown(getattr(rules.house_rules_from({name: raw}), name))


def upcoming_changes(chronicle: Chronicle, today: dt.date) -> list[UpcomingChange]:
    """The scheduled changes whose game is after `today`, each with the value it replaces
    (the value in force just before it) and the one it brings, in the order they apply."""
    schedule = chronicle.house_rule_schedule or []
    if not schedule:
        return []
    shown: list[UpcomingChange] = []
    merged = dict(chronicle.house_rule_overrides or {})
    day = today.isoformat()
    for change in schedule:
        name = change["name"]
        before = getattr(rules.house_rules_from(merged), name)
        if change.get("default"):
            merged.pop(name, None)
        else:
            merged[name] = change["value"]
        if change["effective_on"] <= day:
            continue
        shown.append(
            UpcomingChange(
                name=name,
                label=_label(name),
                rule=rules.HOUSE_RULE_FIELDS[name].metadata["rule"],
                old=_shown(before),
                new=_value(name, change.get("value"), bool(change.get("default"))),
                to_default=bool(change.get("default")),
                game=change["effective_game"],
                on=dt.date.fromisoformat(change["effective_on"]),
            )
        )
    return shown


def past_changes(chronicle: Chronicle, *, today: dt.date) -> list[PastChange]:
    """The recorded changes already in force (applied at once, or whose game has been
    played), newest first; one query."""
    upcoming = {
        change["effective_game"]
        for change in chronicle.house_rule_schedule or []
        if change["effective_on"] > today.isoformat()
    }
    records = HouseRuleChange.objects.filter(chronicle=chronicle).select_related("by")[:200]
    shown: list[PastChange] = []
    for record in records:
        if record.name not in rules.HOUSE_RULE_FIELDS:
            continue  # a setting since removed from the rules
        if record.published_game is not None and record.effective_game in upcoming:
            continue
        shown.append(
            PastChange(
                name=record.name,
                label=_label(record.name),
                rule=rules.HOUSE_RULE_FIELDS[record.name].metadata["rule"],
                new=_value(record.name, record.value, record.to_default),
                to_default=record.to_default,
                published_game=record.published_game,
                effective_game=record.effective_game,
                at=record.at,
                by=record.by,
                reason=record.reason,
            )
        )
        if len(shown) >= PAST_SHOWN:
            break
    return shown
