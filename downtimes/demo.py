"""The demo's downtimes (run by `seed_demo`): the older games' cycles settled on paper, and the
open downtime, where Isabella and Marcus submitted theirs, with game reports and votes, and
Carmen left a draft. An ST can close it, resolve, review and release it
from the cycle page. Made through the services; running it again changes nothing."""

from __future__ import annotations

from typing import Any

from characters.models import Character
from chronicle.models import Chronicle, Cycle, CycleStatus
from chronicle.services import current_downtime

from .models import Submission
from .services import pipeline, submissions

REPORTS = {
    "Isabella Moreau": "The Harpy's salon went quiet when the Baron walked in uninvited.",
    "Marcus Steel": "Dorchester held. The Sabbat scouts did not come back for their van.",
}
VOTES = {
    "Isabella Moreau": {
        "feared": "Marcus Steel",
        "liked": "Felix Grant",
        "respected": "Old Dmitri",
        "roleplaying": "carmen",
        "costume": "felix",
    },
    "Marcus Steel": {
        "feared": "Old Dmitri",
        "liked": "Isabella Moreau",
        "respected": "Old Dmitri",
        "roleplaying": "carmen",
        "costume": "alice",
    },
}


def seed(*, chronicle: Chronicle, users: dict[str, Any], stdout: Any = None) -> None:
    # The older games were settled on paper (characters/demo.py enters their XP): released
    # here without paying, so the Resolution page does not offer to pay them again.
    for closed in Cycle.objects.filter(chronicle=chronicle, status=CycleStatus.CLOSED):
        pipeline.cycle_settle_on_paper(cycle=closed, by=users["st_lucia"])
    cycle = current_downtime(chronicle)
    if cycle is None or Submission.objects.filter(cycle=cycle).exists():
        return
    pcs = {c.name: c for c in Character.objects.filter(chronicle=chronicle)}
    for name, report in REPORTS.items():
        character = pcs[name]
        player = character.player
        assert player is not None
        draft = submissions.submission_for_edit(character=character, cycle=cycle, by=player)
        draft = submissions.submission_save(
            submission=draft,
            by=player,
            notes=f"{name} keeps to the usual haunts this month.",
            game_report=report,
            version=draft.version,
        )
        submissions.votes_save(submission=draft, by=player, picks=VOTES[name])
        submissions.submission_submit(submission=draft, by=player)
    carmen = pcs["Carmen Vasquez"]
    assert carmen.player is not None
    draft = submissions.submission_for_edit(character=carmen, cycle=cycle, by=carmen.player)
    submissions.submission_save(
        submission=draft,
        by=carmen.player,
        notes="Still writing: the Tremere want an answer by Friday.",
        version=draft.version,
    )
