"""The resolution's Herd blood step (BLD-04, INF-02): each downtime spend of Herd for blood
gives points × the chronicle's `herd_yield` (3, lowered by the storytellers after masquerade
breaches) as stored blood, above the normal pool, once the cycle is released.

`herd_blood` computes the preview (one query per chunk); `herd_blood_release` applies the
previewed outcomes in the release (a read and an INSERT per page of outcomes). The release runs
once per cycle (its row lock and status guard), and checks again before it applies that the
preview still matches the desk and the settings (`pipeline.RECHECKED_STEPS`), so each spend
gives its blood exactly once and exactly as the storytellers reviewed it.

Which spends count: the influence actions "Herd blood" of a submitted downtime (DT-01: a draft
never submitted counts as no downtime), not withdrawn and not rejected by the storytellers. A
Herd request made at the game is handed out at the game, as cards, and is not counted here.
"""

from __future__ import annotations

import datetime as dt

from django.utils.translation import gettext_noop

from characters import rules as character_rules
from characters.services.herd import herd_blood_store
from chronicle.models import Cycle
from chronicle.rules import settings_for

from ..models import (
    ActionKind,
    DeskItem,
    DeskStatus,
    ItemKind,
    Outcome,
    SubmissionStatus,
)
from ..wording import phrase, worded

STEP = "herd_blood"


def herd_blood(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
    """BLD-04: one outcome per counted Herd spend of the chunk's characters: the blood it gives
    (`herd_blood_yield`, Ventrue's half yield included) and what of it is stored
    (`herd_blood_stored`)."""
    house = cycle.chronicle.house_rules_for(cycle)
    items = (
        DeskItem.objects.filter(
            cycle=cycle,
            kind=ItemKind.INFLUENCE,
            action=ActionKind.HERD,
            influence="herd",
            points__gte=1,
            withdrawn_at__isnull=True,
            submission__status=SubmissionStatus.SUBMITTED,
            character_id__gte=lo,
            character_id__lte=hi,
        )
        .exclude(status=DeskStatus.REJECTED)
        .select_related("character")
        .order_by("character_id", "created_at", "pk")
    )
    # Once per chunk, not per spend.
    yield_settings = settings_for(character_rules.herd_blood_yield, house)
    stored_settings = settings_for(character_rules.herd_blood_stored, house)
    outcomes = []
    for item in items:
        character = item.character
        clan = character.clan or None
        blood = character_rules.herd_blood_yield(item.points, clan=clan, **yield_settings)
        kept = character_rules.herd_blood_stored(item.points, clan=clan, **stored_settings)
        names = {"name": character.name, "points": item.points, "blood": blood}
        if kept:
            explanation = phrase(
                gettext_noop(
                    "%(name)s spent %(points)s Herd for blood: %(blood)s blood at %(per_point)s "
                    "per point, stored off the body as kine blood on release, above the normal "
                    "pool (BLD-04, INF-02)."
                ),
                per_point=house.herd_yield,
                **names,
            )
            public_text = phrase(
                gettext_noop(
                    "Your Herd gave %(blood)s blood (%(points)s Herd spent): it is kept as "
                    "stored blood off your body, above your normal blood pool."
                ),
                **names,
            )
        else:
            explanation = phrase(
                gettext_noop(
                    "%(name)s spent %(points)s Herd for blood: %(blood)s blood at %(per_point)s "
                    "per point; the house rule stores none of it, so a storyteller hands it out "
                    "at the next game, up to the blood pool (BLD-04)."
                ),
                per_point=house.herd_yield,
                **names,
            )
            public_text = phrase(
                gettext_noop(
                    "Your Herd gave %(blood)s blood (%(points)s Herd spent): a storyteller "
                    "hands it to you at the next game, up to your blood pool."
                ),
                **names,
            )
        outcomes.append(
            Outcome(
                step=STEP,
                subject=f"herd:{item.pk}",
                character=character,
                player_id=character.player_id,
                **worded(
                    title=phrase(
                        gettext_noop("%(name)s: %(blood)s blood from Herd (BLD-04)"), **names
                    ),
                    explanation=explanation,
                    public_text=public_text,
                ),
                value={"herd": item.points, "blood": blood, "stored": kept},
                readers=[character.pk],
            )
        )
    return outcomes


def herd_blood_release(*, cycle: Cycle, now: dt.datetime, page: int = 500) -> int:
    """BLD-04: store the blood of the previewed Herd outcomes (called by the release, once per
    cycle), `page` outcomes at a time in the preview's order, reading only the two columns it
    needs. Returns the points stored."""
    stored = 0
    after = ""
    while True:
        rows = list(
            Outcome.objects.filter(
                cycle=cycle, step=STEP, character_id__isnull=False, subject__gt=after
            )
            .order_by("subject")
            .values_list("subject", "character_id", "value")[:page]
        )
        if not rows:
            return stored
        after = rows[-1][0]
        blood = [(character_id, int(value.get("stored", 0))) for _, character_id, value in rows]
        herd_blood_store(cycle=cycle, chronicle=cycle.chronicle, blood=blood, now=now)
        stored += sum(points for _, points in blood)
        if len(rows) < page:
            return stored
