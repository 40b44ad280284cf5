"""What the player's downtime sends by e-mail (DT-01): the receipt of a submission and the
reminder 48 hours before the deadline. Every moment in the chronicle's zone, saying which."""

from __future__ import annotations

import datetime as dt

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from characters.models import Approval, Character, Status
from characters.services.notify import notify
from chronicle.models import Cycle, CycleStatus
from chronicle.moments import moment_text

from ..models import ItemKind, Submission, SubmissionStatus

REMINDER_WINDOW = dt.timedelta(hours=48)


def deadline_text(cycle: Cycle) -> str:
    """The deadline in the chronicle's zone, saying which ("Tue 19 Mar 2024, 23:59 EDT")."""
    return moment_text(cycle.deadline_at, cycle.chronicle)


def submission_summary(submission: Submission) -> str:
    """The receipt's body: what the player sent, their own words only; its moments in the
    chronicle's zone."""
    items = list(submission.items.filter(withdrawn_at__isnull=True))
    assert submission.submitted_at is not None
    lines = [
        gettext("Downtime of %(character)s after game %(number)s.")
        % {"character": submission.character.name, "number": submission.cycle.game.number},
        gettext("Submitted %(submitted)s; you may change it until %(deadline)s.")
        % {
            "submitted": moment_text(submission.submitted_at, submission.cycle.chronicle),
            "deadline": deadline_text(submission.cycle),
        },
        "",
    ]
    for item in items:
        if item.kind == ItemKind.INFLUENCE:
            lines.append(
                f"- {gettext('Influence')}: {item.points} {item.get_influence_display()}, "
                f"{item.get_action_display()} {item.target_name or item.target_text}".rstrip()
            )
        elif item.kind == ItemKind.PURCHASE:
            lines.append(f"- {gettext('XP purchase')}: {item.description}")
        elif item.kind == ItemKind.POWER:
            lines.append(
                f"- {gettext('Special power')}: {item.get_power_display()} "
                f"{item.target_name}".rstrip()
            )
    report = gettext("yes") if submission.game_report else gettext("none")
    lines.append(f"- {gettext('Game report')}: {report}")
    lines.append(f"- {gettext('Votes cast')}: {submission.votes.count()}")
    return "\n".join(lines)


def reminders_send(*, now: dt.datetime | None = None) -> int:
    """DT-01: 48 hours before a deadline, one e-mail per active character of a player who has
    not submitted yet (keyed: an hourly re-run sends nothing twice). Returns how many were
    queued."""
    now = now or timezone.now()
    cycles = Cycle.objects.filter(
        status=CycleStatus.OPEN, deadline_at__gt=now, deadline_at__lte=now + REMINDER_WINDOW
    ).select_related("chronicle", "game")
    sent = 0
    for cycle in cycles:
        characters = (
            Character.objects.filter(
                chronicle=cycle.chronicle,
                status=Status.ACTIVE,
                approval=Approval.APPROVED,
                player__isnull=False,
            )
            .exclude(
                pk__in=Submission.objects.filter(
                    cycle=cycle, status=SubmissionStatus.SUBMITTED
                ).values("character_id")
            )
            .select_related("player")
        )
        reminded: list[int] = []
        for character in characters:
            queued = notify(
                character=character,
                key=f"downtime-reminder:{cycle.pk}:{character.pk}",
                subject=gettext("Downtime due soon: %(name)s") % {"name": character.name},
                body=gettext(
                    "The downtime of %(name)s after game %(number)s is due by %(deadline)s. "
                    "Drafts are not counted: remember to submit it."
                )
                % {
                    "name": character.name,
                    "number": cycle.game.number,
                    "deadline": deadline_text(cycle),
                },
                now=now,
            )
            if queued:
                sent += 1
                reminded.append(character.pk)
        Submission.objects.filter(
            Q(reminder_sent_at__isnull=True), cycle=cycle, character_id__in=reminded
        ).update(reminder_sent_at=now)
    return sent
