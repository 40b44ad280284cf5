"""The periodic timers (DESIGN: timers as due-date columns swept by one periodic task each).

Every sweeper is one transaction that:

1. reads the chronicles' time zones once, so "today" is each chronicle's own local date for one
   `now` (a blood record due on 15 April is not due at 23:00 on 14 April in New York, even though
   it is already the 15th in UTC);
2. locks the due rows (only them: not the joined character or chronicle rows, which pages and
   services keep writing) with `SKIP LOCKED`, so a second worker running at the same moment
   takes nothing the first one holds, and a re-run finds the rows already marked done;
3. marks them done with one conditional UPDATE (`... WHERE <done column> IS NULL`);
4. notifies each player concerned through `notify`, keyed by the row, so even a re-run that got
   past the guards would send nothing twice.

Set-based: a sweep costs the same handful of queries for one due row or a thousand, apart from
the one notification insert per row, and, for a captive who dies (TOR-02), the death service's
own work (XP-06 credit, thralls told, BND-03).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from chronicle.models import Chronicle, CycleStatus
from chronicle.services import chronicle_today
from chronicle.stored_text import stored_text

from ..models import (
    Approval,
    CaptiveOutcome,
    Captivity,
    Character,
    Diablerie,
    Status,
    StoredBlood,
    TorporHold,
)
from .common import in_reader_language
from .notify import notify
from .records import character_death_record


def _long_day(day: dt.date) -> str:
    """A day as the mails write it ("15 April 2025"), in the language active (the reader's)."""
    return date_format(day, "d F Y")


def _due_by_local_date(now: dt.datetime, *, chronicle_field: str, date_lookup: str) -> Q:
    """A condition "the row's date has come in its chronicle's time zone", in one query.

    Chronicles are grouped by their local date (at any instant there are at most three), so the
    condition has a clause per distinct date, not one per chronicle."""
    by_day: dict[dt.date, list[int]] = defaultdict(list)
    for chronicle in Chronicle.objects.only("pk", "timezone"):
        by_day[chronicle_today(chronicle, now)].append(chronicle.pk)
    due = Q(pk__in=[])  # matches nothing: no chronicle, nothing due
    for day, chronicle_ids in by_day.items():
        due |= Q(**{f"{chronicle_field}__in": chronicle_ids, date_lookup: day})
    return due


@transaction.atomic
def stored_blood_expire_sweep(*, now: dt.datetime | None = None) -> int:
    """BLD-03: kine blood is unusable from its `unusable_from` day (3 months after collection,
    computed by `rules.stored_blood_unusable_from` when it was stored). Marks every record whose
    day has come, in its chronicle's time zone, and tells the holder's player. Returns how many
    records expired in this run."""
    now = now or timezone.now()
    due = _due_by_local_date(
        now, chronicle_field="holder__chronicle_id", date_lookup="unusable_from__lte"
    )
    records = list(
        StoredBlood.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("holder__player__chronicle_profile")
        .filter(due, expired_at__isnull=True)
        .order_by("pk")
    )
    if not records:
        return 0
    StoredBlood.objects.filter(pk__in=[r.pk for r in records], expired_at__isnull=True).update(
        expired_at=now
    )
    for record in records:
        # Each player reads their mail in their own language.
        with in_reader_language(record.holder.player):
            subject = _("%(holder)s: stored blood has expired") % {"holder": record.holder.name}
            body = _(
                "The %(points)s blood stored at %(location)s by %(holder)s, collected on "
                "%(day)s, can no longer be used: kine blood keeps for three months (BLD-03)."
            ) % {
                "points": record.points,
                "location": stored_text(record.location),
                "holder": record.holder.name,
                "day": _long_day(record.collected_on),
            }
        notify(
            character=record.holder,
            key=f"blood-expired:{record.pk}",
            subject=subject,
            body=body,
            now=now,
        )
    return len(records)


@transaction.atomic
def torpor_holds_sweep(*, now: dt.datetime | None = None) -> int:
    """TOR-01: a torpor hold lasts one downtime. Ends every live hold whose cycle is no longer
    open or whose deadline has passed; the captive recovers overnight (torpor → active) unless
    another live hold or an unresolved captivity (TOR-02) still keeps them, or their player
    already has another active PC (XP-07: an ST decides; they are told so). Returns how many
    holds ended in this run."""
    now = now or timezone.now()
    holds = list(
        TorporHold.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(ended_at__isnull=True)
        .filter(~Q(cycle__status=CycleStatus.OPEN) | Q(cycle__deadline_at__lte=now))
        .order_by("pk")
        .values_list("pk", "captive_id")
    )
    if not holds:
        return 0
    hold_ids = [pk for pk, _ in holds]
    TorporHold.objects.filter(pk__in=hold_ids, ended_at__isnull=True).update(ended_at=now)
    # After the UPDATE above, the holds just ended no longer count as live.
    still_held = TorporHold.objects.filter(captive=OuterRef("pk"), ended_at__isnull=True)
    still_captive = Captivity.objects.filter(captive=OuterRef("pk"), resolved_at__isnull=True)
    other_in_play = Character.objects.filter(
        chronicle=OuterRef("chronicle"),
        player=OuterRef("player"),
        status=Status.ACTIVE,
        approval=Approval.APPROVED,
    ).exclude(pk=OuterRef("pk"))
    free = list(
        Character.objects.filter(
            pk__in={captive_id for _, captive_id in holds}, status=Status.TORPOR
        )
        .filter(~Exists(still_held), ~Exists(still_captive))
        .annotate(other_in_play=Exists(other_in_play))
        .order_by("pk")
        .values_list("pk", "chronicle_id", "player_id", "approval", "other_in_play")
    )
    # XP-07: waking a PC whose player already has another active one would break
    # `one_active_pc_per_player` and fail the whole sweep, every hour, for every captive. Such a
    # captive stays in torpor until an ST decides; so does the second of two of one player's PCs
    # waking in the same run.
    recovering: list[int] = []
    undecided: set[int] = set()
    waking_pcs: set[tuple[int, int]] = set()
    for pk, chronicle_id, player_id, approval, blocked in free:
        if player_id is not None and approval == Approval.APPROVED:
            if blocked or (chronicle_id, player_id) in waking_pcs:
                undecided.add(pk)
                continue
            waking_pcs.add((chronicle_id, player_id))
        recovering.append(pk)
    # The conditions again, so a PC activated since the read above still blocks the wake-up.
    Character.objects.filter(pk__in=recovering, status=Status.TORPOR).filter(
        ~Exists(other_in_play)
    ).update(status=Status.ACTIVE)
    for hold in TorporHold.objects.filter(pk__in=hold_ids).select_related(
        "captive__player__chronicle_profile", "holder"
    ):
        captive = hold.captive
        with in_reader_language(captive.player):
            names = {"captive": captive.name, "holder": hold.holder.name}
            if captive.status == Status.ACTIVE:
                recovery = (
                    _("%(captive)s recovers overnight and may take downtime actions again.") % names
                )
            elif captive.pk in undecided:
                recovery = (
                    _(
                        "%(captive)s would recover overnight, but their player already has another "
                        "character in play, and a player has one at a time (XP-07): a storyteller "
                        "must decide which one plays. Until then %(captive)s stays in torpor."
                    )
                    % names
                )
            elif captive.status == Status.TORPOR:
                recovery = (
                    _("%(captive)s stays in torpor: another hold or a captivity still keeps them.")
                    % names
                )
            else:
                recovery = _("%(captive)s remains %(status)s.") % {
                    **names,
                    "status": captive.get_status_display().lower(),
                }
            subject = _("%(captive)s: the torpor hold has ended") % names
            body = _(
                "%(holder)s's hold on %(captive)s has ended: a torpor hold lasts one downtime "
                "(TOR-01). %(recovery)s"
            ) % {**names, "recovery": recovery}
        notify(
            character=captive,
            key=f"torpor-hold-ended:{hold.pk}",
            subject=subject,
            body=body,
            now=now,
        )
    return len(holds)


@transaction.atomic
def captives_sweep(*, now: dt.datetime | None = None) -> int:
    """TOR-02: a captive not released or killed before the end of the next game dies. Every
    unresolved captivity whose deadline game's date is before today (the game has ended), in its
    chronicle's time zone, ends as "died"; the captive is dead from that game's date, recorded
    by `character_death_record` (XP-06 credit, thralls told, BND-03). Returns how many
    captivities ended in this run."""
    now = now or timezone.now()
    due = _due_by_local_date(
        now, chronicle_field="deadline_game__chronicle_id", date_lookup="deadline_game__date__lt"
    )
    captivities = list(
        Captivity.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(due, resolved_at__isnull=True)
        .order_by("pk")
        .values_list("pk", "captive_id")
    )
    if not captivities:
        return 0
    ids = [pk for pk, _ in captivities]
    Captivity.objects.filter(pk__in=ids, resolved_at__isnull=True).update(
        outcome=CaptiveOutcome.DIED, resolved_at=now
    )
    for captivity in Captivity.objects.filter(pk__in=ids).select_related(
        "captive__chronicle",
        "captive__player__chronicle_profile",
        "captor",
        "deadline_game",
    ):
        captive = captivity.captive
        game = captivity.deadline_game
        assert game is not None  # the due condition selects only captivities with a game
        # Each death goes through the death service, not a bulk UPDATE: a death is its own
        # story (the player's XP-06 credit, the thralls told at once and their bonds ending a
        # month later, BND-03), and deaths are rare. A captive already dead keeps its date.
        character_death_record(character=captive, died_on=game.date, by=None, now=now)
        with in_reader_language(captive.player):
            subject = _("%(captive)s has died in captivity") % {"captive": captive.name}
            body = _(
                "%(captive)s was not released or killed by %(captor)s before the end of game "
                "%(number)s (%(day)s), and so has died (TOR-02)."
            ) % {
                "captive": captive.name,
                "captor": captivity.captor.name,
                "number": game.number,
                "day": _long_day(game.date),
            }
        notify(
            character=captive,
            key=f"captive-died:{captivity.pk}",
            subject=subject,
            body=body,
            now=now,
        )
    return len(captivities)


@transaction.atomic
def black_veins_sweep(*, now: dt.datetime | None = None) -> int:
    """XP-04: black veins last six months after a diablerie (`black_veins_until`, set when it was
    recorded). Marks every diablerie whose day has come, in its chronicle's time zone, and tells
    the diablerist's player. Returns how many diableries' veins faded in this run."""
    now = now or timezone.now()
    due = _due_by_local_date(
        now, chronicle_field="diablerist__chronicle_id", date_lookup="black_veins_until__lte"
    )
    diableries = list(
        Diablerie.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("diablerist__player__chronicle_profile")
        .filter(due, veins_faded_at__isnull=True)
        .order_by("pk")
    )
    if not diableries:
        return 0
    Diablerie.objects.filter(pk__in=[d.pk for d in diableries], veins_faded_at__isnull=True).update(
        veins_faded_at=now
    )
    for diablerie in diableries:
        diablerist = diablerie.diablerist
        with in_reader_language(diablerist.player):
            subject = _("%(diablerist)s: the black veins have faded") % {
                "diablerist": diablerist.name
            }
            body = _(
                "Six months have passed since %(diablerist)s diablerized %(victim)s on "
                "%(day)s: the black veins no longer show (XP-04). Aura Perception still shows "
                "a diablerie of the last year."
            ) % {
                "diablerist": diablerist.name,
                "victim": diablerie.victim_name,
                "day": _long_day(diablerie.occurred_on),
            }
        notify(
            character=diablerist,
            key=f"black-veins-faded:{diablerie.pk}",
            subject=subject,
            body=body,
            now=now,
        )
    return len(diableries)
