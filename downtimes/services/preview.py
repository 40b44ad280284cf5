"""The resolution preview as the storytellers browse it (issue 12: navigable for 400 players):
one step at a time, a page of lines at a time, filtered by player or character in SQL, with a
count per step. Reads only; the page costs the same queries whatever the number of outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Value, Window
from django.db.models.functions import Concat, RowNumber

from chronicle.models import Cycle

from ..models import Outcome, OutcomeOverride

# Lines of one step per page, and per step on the overview (every step at once).
PAGE_SIZE = 50
OVERVIEW_SIZE = 10
WHO_MAX = 100
MAX_PAGE = 100_000


@dataclass(frozen=True)
class PreviewFilter:
    """What the storyteller asked for: a step (or all), a player's or character's name (part of
    it, any case), only the overridden lines, a page of the step."""

    step: str = ""
    who: str = ""
    overridden: bool = False
    page: int = 1

    @property
    def active(self) -> bool:
        return bool(self.who or self.overridden)


def _filtered(cycle: Cycle, wanted: PreviewFilter) -> QuerySet[Outcome]:
    outcomes = Outcome.objects.filter(cycle=cycle)
    who = wanted.who.strip()
    if who:
        outcomes = outcomes.alias(
            player_name=Concat(F("player__first_name"), Value(" "), F("player__last_name"))
        ).filter(
            Q(character__name__icontains=who)
            | Q(player__username__icontains=who)
            | Q(player_name__icontains=who)
        )
    if wanted.overridden:
        outcomes = outcomes.filter(
            Exists(
                OutcomeOverride.objects.filter(
                    cycle=OuterRef("cycle"), step=OuterRef("step"), subject=OuterRef("subject")
                )
            )
        )
    return outcomes


def preview_counts(*, cycle: Cycle, wanted: PreviewFilter) -> dict[str, int]:
    """Outcomes per step under the filter (one query)."""
    return dict(
        _filtered(cycle, wanted)
        .values_list("step")
        .annotate(n=Count("pk"))
        .order_by()
        .values_list("step", "n")
    )


def preview_lines(*, cycle: Cycle, wanted: PreviewFilter) -> list[Outcome]:
    """The lines to show, with their player and character (one query): a page of the chosen
    step, or the first `OVERVIEW_SIZE` of each step (a window function numbers them per step)."""
    outcomes = _filtered(cycle, wanted).select_related("player", "character")
    if wanted.step:
        start = (wanted.page - 1) * PAGE_SIZE
        return list(
            outcomes.filter(step=wanted.step).order_by("position", "subject")[
                start : start + PAGE_SIZE
            ]
        )
    return list(
        outcomes.annotate(
            rank=Window(RowNumber(), partition_by=[F("step")], order_by=[F("subject").asc()])
        )
        .filter(rank__lte=OVERVIEW_SIZE)
        .order_by("position", "subject")
    )
