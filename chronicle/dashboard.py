"""The dashboard's cards: "what to do next", per role (issue 12).

Each app that has something to say on the dashboard keeps a `dashboard.py` with
`cards(situation) -> list[Card]`; this module finds them the way `seed_demo` finds each app's
`demo.seed`, so the ground floor names no app above it. A card is a template and its context,
read with a fixed number of queries (aggregates, never one query per row): the dashboard costs
the same with one character or three hundred.

What every card shares is read once here (`Situation`): the current downtime for a player
(`services.current_downtime`, the one definition every app uses) and, for the storytellers,
the cycle their next step is on.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from django.apps import apps
from django.db.models import Count, Window

from . import access, services
from .models import Cycle, CycleStatus, Game, Membership
from .rule_changes import upcoming_changes
from .services.governance import open_votes_for


@dataclass(frozen=True)
class Card:
    """One box of the dashboard: `template` rendered with `context` (as `card`), placed by
    `order` (lower first)."""

    template: str
    order: int
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Situation:
    """What the cards of one dashboard share, read once."""

    membership: Membership
    now: dt.datetime
    today: dt.date
    # Players: the current downtime (`services.current_downtime`), open or not; None for
    # staff, who read `working`.
    current: Cycle | None
    # Staff: the oldest cycle whose game has been played and whose results are not released
    # yet (the pipeline moves in order, so the next step is there); else the latest released.
    working: Cycle | None
    # Staff: how many further played cycles wait for their release after `working`.
    also_waiting: int

    @property
    def is_staff(self) -> bool:
        return access.is_staff(self.membership)

    @property
    def is_admin(self) -> bool:
        return access.is_admin(self.membership)

    @property
    def chronicle(self) -> Any:
        return self.membership.chronicle


def _working_cycle(membership: Membership, today: dt.date) -> tuple[Cycle | None, int]:
    """One query: the played cycles not released yet, oldest game first, with their number
    (a window count, so the rest need not be read); else one more for the latest released."""
    played = access.cycles_visible_to(membership).filter(game__date__lte=today)
    first = (
        played.exclude(status=CycleStatus.RELEASED)
        .select_related("game")
        .annotate(waiting=Window(Count("pk")))
        .order_by("game__date", "game__number")
        .first()
    )
    if first is not None:
        return first, first.waiting - 1  # type: ignore[attr-defined]
    latest = played.select_related("game").order_by("-game__date", "-game__number").first()
    return latest, 0


def situation(membership: Membership, now: dt.datetime) -> Situation:
    chronicle = membership.chronicle
    today = services.chronicle_today(chronicle, now)
    current: Cycle | None = None
    working: Cycle | None = None
    also_waiting = 0
    if access.is_staff(membership):
        working, also_waiting = _working_cycle(membership, today)
    else:
        # Whatever its stage: the Downtime box says when a closed one closed, and why.
        current = services.current_downtime(chronicle, now=now, open_only=False)
    return Situation(
        membership=membership,
        now=now,
        today=today,
        current=current,
        working=working,
        also_waiting=also_waiting,
    )


def _next_game(situation: Situation) -> list[Card]:
    """Every member: the next game (one query); staff may schedule one when there is none."""
    game: Game | None = (
        access.games_visible_to(situation.membership)
        .filter(date__gte=situation.today)
        .order_by("date", "number")
        .first()
    )
    return [
        Card(
            "chronicle/cards/next_game.html",
            order=50,
            context={"game": game, "today": situation.today},
        )
    ]


def _rule_changes(situation: Situation) -> list[Card]:
    """Every member: the house-rule changes announced for games not played yet (GEN-05), read
    from the chronicle row already loaded (no query); no card when none is announced."""
    changes = upcoming_changes(situation.chronicle, situation.today)
    if not changes:
        return []
    return [Card("chronicle/cards/rule_changes.html", order=55, context={"changes": changes})]


def _open_votes(situation: Situation) -> list[Card]:
    """Every member: the decision votes (GEN-03 / GEN-04) open to them that they have not cast
    (one query, whatever their number); no card when there are none."""
    proposals = open_votes_for(situation.membership, situation.now)
    if not proposals:
        return []
    return [Card("chronicle/cards/decisions.html", order=5, context={"proposals": proposals})]


@functools.cache
def _providers() -> list[Callable[[Situation], list[Card]]]:
    """Each installed app's `dashboard.cards`, found once per process."""
    found: list[ModuleType] = []
    for config in apps.get_app_configs():
        name = f"{config.name}.dashboard"
        if config.name != "chronicle" and importlib.util.find_spec(name):
            found.append(importlib.import_module(name))
    return [module.cards for module in found]


def cards_for(membership: Membership, now: dt.datetime) -> list[Card]:
    """The member's dashboard, in order."""
    state = situation(membership, now)
    cards = _next_game(state) + _rule_changes(state) + _open_votes(state)
    for provider in _providers():
        cards.extend(provider(state))
    return sorted(cards, key=lambda card: card.order)
