"""The downtimes' cards on the dashboard (chronicle.dashboard finds `cards`).

A player: the current downtime's countdown with each character's downtime status, and the
latest released results. A storyteller: the cycle's stage with its next action, and the desk's
counts by status. An admin also: the vote tally's state. Each card is a fixed number of
queries (aggregates and subqueries), whatever the number of characters, items or votes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from characters.models import Approval, Character, Status
from chronicle.dashboard import Card, Situation
from chronicle.models import Attendance, Cycle, CycleStatus

from .models import (
    DeskItem,
    DeskStatus,
    OutcomeReader,
    ResolutionRun,
    RunStatus,
    Submission,
    SubmissionStatus,
    Vote,
)

# Results released this recently carry a "New" badge: a plain, checkable definition of "new".
NEW_RESULTS_DAYS = 7


# --- A player's downtime ----------------------------------------------------------------------


@dataclass(frozen=True)
class DowntimeState:
    """One character's downtime in the current cycle, as the player reads it."""

    key: str  # not_started | draft | submitted | changed
    label: str | Promise
    badge: str


STATES = {
    "not_started": DowntimeState("not_started", _("Not started"), "badge-danger"),
    "draft": DowntimeState("draft", _("Draft, not submitted"), "badge-warn"),
    "submitted": DowntimeState("submitted", _("Submitted"), "badge-ok"),
    "changed": DowntimeState("changed", _("Changed since submitted"), "badge-warn"),
}


def downtime_state(
    status: str | None, submitted_at: dt.datetime | None, updated_at: dt.datetime | None
) -> DowntimeState:
    """DT-01: a submission may be submitted again after changes until the deadline; it is
    "changed" when saved after its last submission (as `submission_submit` reads it)."""
    if status is None:
        return STATES["not_started"]
    if status != SubmissionStatus.SUBMITTED or submitted_at is None:
        return STATES["draft"]
    if updated_at is not None and updated_at > submitted_at:
        return STATES["changed"]
    return STATES["submitted"]


def _own_downtimes(situation: Situation) -> list[dict[str, Any]]:
    """One query: the player's playable characters, each with its submission of the current
    downtime (three scalar subqueries of one row each). Run even without a current downtime,
    so the dashboard's cost does not depend on the cycle's state."""
    membership = situation.membership
    cycle_id = situation.current.pk if situation.current else 0  # 0: no cycle, no submission
    submission = Submission.objects.filter(cycle_id=cycle_id, character=OuterRef("pk"))
    characters = (
        Character.objects.filter(
            chronicle_id=membership.chronicle_id,
            player_id=membership.user_id,
            status=Status.ACTIVE,
            approval=Approval.APPROVED,
        )
        .annotate(
            dt_status=Subquery(submission.values("status")[:1]),
            dt_submitted_at=Subquery(submission.values("submitted_at")[:1]),
            dt_updated_at=Subquery(submission.values("updated_at")[:1]),
        )
        .order_by("name", "pk")
    )
    return [
        {
            "character": character,
            "state": downtime_state(
                character.dt_status,  # type: ignore[attr-defined]
                character.dt_submitted_at,  # type: ignore[attr-defined]
                character.dt_updated_at,  # type: ignore[attr-defined]
            ),
        }
        for character in characters
    ]


def _player_downtime(situation: Situation) -> Card:
    cycle = situation.current
    rows = _own_downtimes(situation)
    remaining = None
    is_open = cycle is not None and cycle.status == CycleStatus.OPEN
    if is_open and cycle is not None and cycle.deadline_at > situation.now:
        remaining = cycle.deadline_at - situation.now
    # Told truly: a downtime the storytellers closed before its deadline says so.
    closed_early = bool(
        cycle is not None
        and not is_open
        and cycle.closed_at is not None
        and cycle.closed_at < cycle.deadline_at
    )
    return Card(
        "downtimes/cards/player_downtime.html",
        order=10,
        context={
            "cycle": cycle,
            "rows": rows if cycle is not None else [],
            "has_characters": bool(rows),
            "is_open": is_open,
            "closed_early": closed_early,
            "remaining": remaining,
            "days_left": remaining.days if remaining else None,
            "to_do": sum(1 for row in rows if row["state"].key != "submitted"),
            "now": situation.now,
        },
    )


def _player_results(situation: Situation) -> Card:
    """One query: the latest released cycle with anything for this player (an outcome they
    read, or a downtime they filed), with the number of outcomes they read in it."""
    membership = situation.membership
    reads = OutcomeReader.objects.filter(
        outcome__cycle=OuterRef("pk"), player_id=membership.user_id
    )
    filed = Submission.objects.filter(cycle=OuterRef("pk"), player_id=membership.user_id)
    counted = reads.order_by().values("player_id").annotate(n=Count("pk")).values("n")
    cycle = (
        Cycle.objects.filter(chronicle_id=membership.chronicle_id, status=CycleStatus.RELEASED)
        .filter(Exists(reads) | Exists(filed))
        .annotate(lines=Coalesce(Subquery(counted[:1]), Value(0), output_field=IntegerField()))
        .select_related("game")
        .order_by(F("released_at").desc(nulls_last=True), "-game__date", "-game__number")
        .first()
    )
    new = bool(
        cycle is not None
        and cycle.released_at is not None
        and situation.now - cycle.released_at <= dt.timedelta(days=NEW_RESULTS_DAYS)
    )
    return Card(
        "downtimes/cards/player_results.html",
        order=30,
        context={"cycle": cycle, "new": new, "new_days": NEW_RESULTS_DAYS},
    )


# --- The storytellers' cycle and desk ---------------------------------------------------------


@dataclass(frozen=True)
class NextAction:
    label: str
    url: str
    explanation: str


def next_action(cycle: Cycle, *, running: bool, now: dt.datetime, slug: str) -> NextAction | None:
    """DT-10's order: close (at the deadline, or earlier by hand), resolve, review and release.
    None once released: nothing is left to do on this cycle."""
    number = cycle.game.number
    page = reverse("cycle_resolution", args=[slug, number])
    if cycle.status == CycleStatus.OPEN:
        if cycle.deadline_at > now:
            why = gettext(
                "Players can still file and change their downtimes. The deadline closes it; "
                "close it earlier only if every downtime is in."
            )
        else:
            why = gettext("The deadline has passed: close it to lock every downtime.")
        return NextAction(gettext("Close the downtime"), page, why)
    if running:
        return NextAction(
            gettext("Follow the resolution"),
            f"{page}#progress",
            gettext("A resolution is running; its preview appears when every step is done."),
        )
    if cycle.status == CycleStatus.CLOSED:
        return NextAction(
            gettext("Resolve"),
            page,
            gettext("Every downtime is locked: resolve the cycle to see what each step will do."),
        )
    if cycle.status == CycleStatus.RESOLVED:
        return NextAction(
            gettext("Review and release"),
            reverse("cycle_release", args=[slug, number]),
            gettext("The preview is ready: review it, then release the results to the players."),
        )
    return None


def _stage(situation: Situation) -> Card:
    """One query (is a resolution running?) on top of the shared working cycle."""
    cycle = situation.working
    running = bool(
        cycle is not None
        and ResolutionRun.objects.filter(cycle=cycle, status=RunStatus.RUNNING).exists()
    )
    action = (
        next_action(cycle, running=running, now=situation.now, slug=situation.chronicle.slug)
        if cycle is not None
        else None
    )
    return Card(
        "downtimes/cards/staff_stage.html",
        order=10,
        context={
            "cycle": cycle,
            "action": action,
            "running": running,
            "also_waiting": situation.also_waiting,
            "now": situation.now,
        },
    )


def _desk(situation: Situation) -> Card:
    """One aggregate: the working cycle's desk items per status (as the desk counts them)."""
    cycle = situation.working
    counts: dict[str, int] = {}
    if cycle is not None:
        counts = DeskItem.objects.filter(cycle=cycle).aggregate(
            **{status: Count("pk", filter=Q(status=status)) for status in DeskStatus.values}
        )
    rows = [
        {"status": value, "label": label, "count": counts.get(value, 0)}
        for value, label in DeskStatus.choices
    ]
    return Card(
        "downtimes/cards/staff_desk.html",
        order=20,
        context={"cycle": cycle, "rows": rows, "total": sum(counts.values())},
    )


def _tally(situation: Situation) -> Card:
    """Admins: one aggregate over the working cycle's counted votes (DT-06: submitted
    downtimes of players who attended its game, as the tally counts them)."""
    cycle = situation.working
    votes = {"votes": 0, "ballots": 0}
    if cycle is not None:
        attended = Attendance.objects.filter(game_id=cycle.game_id).values("player_id")
        votes = Vote.objects.filter(
            submission__cycle=cycle,
            submission__status=SubmissionStatus.SUBMITTED,
            submission__player_id__in=attended,
        ).aggregate(votes=Count("pk"), ballots=Count("submission", distinct=True))
    return Card(
        "downtimes/cards/admin_tally.html",
        order=40,
        context={
            "cycle": cycle,
            "votes": votes["votes"],
            "ballots": votes["ballots"],
            "open": cycle is not None and cycle.status == CycleStatus.OPEN,
        },
    )


def cards(situation: Situation) -> list[Card]:
    if not situation.is_staff:
        return [_player_downtime(situation), _player_results(situation)]
    found = [_stage(situation), _desk(situation)]
    if situation.is_admin:
        found.append(_tally(situation))
    return found
