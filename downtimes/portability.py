"""How the downtimes app's rows leave a chronicle and come back (see `chronicle.portability`):
its models in dependency order, each with one chronicle's rows, and a player's own data."""

from __future__ import annotations

from typing import Any

from django.db import models

from chronicle.models import Chronicle, CycleStatus
from chronicle.portability import OwnRows, Portable

from .models import (
    DeskItem,
    Outcome,
    OutcomeOverride,
    OutcomeReader,
    ReportPick,
    ResolutionRun,
    StepChunk,
    Submission,
    Vote,
)

PORTABLE: list[Portable] = [
    Portable(Submission, lambda c: Submission.objects.filter(cycle__chronicle=c)),
    Portable(DeskItem, lambda c: DeskItem.objects.filter(cycle__chronicle=c)),
    Portable(Vote, lambda c: Vote.objects.filter(submission__cycle__chronicle=c)),
    Portable(ReportPick, lambda c: ReportPick.objects.filter(cycle__chronicle=c)),
    Portable(ResolutionRun, lambda c: ResolutionRun.objects.filter(cycle__chronicle=c)),
    Portable(StepChunk, lambda c: StepChunk.objects.filter(run__cycle__chronicle=c)),
    Portable(Outcome, lambda c: Outcome.objects.filter(cycle__chronicle=c)),
    Portable(OutcomeOverride, lambda c: OutcomeOverride.objects.filter(cycle__chronicle=c)),
    Portable(OutcomeReader, lambda c: OutcomeReader.objects.filter(outcome__cycle__chronicle=c)),
]
NOT_EXPORTED: dict[type[models.Model], str] = {}


def own_data(user: Any, chronicle: Chronicle) -> OwnRows:
    """The player's downtimes (their words, and each item's result once released), their votes
    and the released results they read. Never the storytellers' notes, statuses or previews."""
    submissions = Submission.objects.filter(
        cycle__chronicle=chronicle, player=user, character__player=user
    )
    items = []
    for item in (
        DeskItem.objects.filter(
            cycle__chronicle=chronicle, character__player=user, character__chronicle=chronicle
        )
        .select_related("character", "cycle__game")
        .order_by("created_at", "pk")
    ):
        released = item.released_at is not None
        items.append(
            {
                "game": item.cycle.game.number,
                "character": item.character.name,
                "kind": item.kind,
                "influence": item.influence,
                "points": item.points,
                "action": item.action,
                "power": item.power,
                "target_name": item.target_name,
                "target_text": item.target_text,
                "description": item.description,
                "created_at": item.created_at,
                "withdrawn_at": item.withdrawn_at,
                "result": item.result if released else "",
                "released_at": item.released_at,
            }
        )
    votes = [
        {
            "game": vote.submission.cycle.game.number,
            "category": vote.category,
            "nominee": vote.nominee_character.name
            if vote.nominee_character
            else vote.nominee_player.get_username()
            if vote.nominee_player
            else "",
        }
        for vote in Vote.objects.filter(submission__in=submissions)
        .select_related("submission__cycle__game", "nominee_character", "nominee_player")
        .order_by("submission__cycle__deadline_at", "category")
    ]
    return {
        "downtimes": list(
            submissions.order_by("cycle__deadline_at", "pk").values(
                "cycle__game__number",
                "character__name",
                "status",
                "notes",
                "game_report",
                "created_at",
                "updated_at",
                "submitted_at",
            )
        ),
        "downtime_items": items,
        "votes": votes,
        "results": list(
            Outcome.objects.filter(
                cycle__chronicle=chronicle,
                cycle__status=CycleStatus.RELEASED,
                reader_rows__player=user,
            )
            .order_by("cycle__deadline_at", "position", "subject")
            .values("cycle__game__number", "character__name", "title", "public_text", "xp")
        ),
    }
