"""The only code that writes the chronicle app's state. Every page, endpoint and task calls these.

Each service reads "now" once, validates with `ValidationError` (a message per field where the
input has fields), and locks a contested row once, late.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

from .. import rules
from ..models import (
    Attendance,
    Chronicle,
    Cycle,
    CycleStatus,
    CycleTransition,
    Game,
    Membership,
    Role,
)
from ..moments import day_text, moment_text
from .sign_in import sign_in_characters

MAX_GAME_NUMBER = 100_000


EARLIEST_GAME = dt.date(1970, 1, 1)
LATEST_GAME = dt.date(2199, 12, 31)


def _cycle_deadline(chronicle: Chronicle, game_date: dt.date, number: int) -> dt.datetime:
    """DT-01, in the chronicle's time zone, with the weeks-after-game setting in force for
    game `number` (GEN-05: a change published for a later game leaves this one's alone)."""
    if not EARLIEST_GAME <= game_date <= LATEST_GAME:
        raise ValidationError(
            {
                "date": gettext("Pick a date between %(first)s and %(last)s.")
                % {"first": EARLIEST_GAME.year, "last": LATEST_GAME.year}
            }
        )
    try:
        day = rules.downtime_deadline(
            game_date, weeks_after=chronicle.house_rules_for(number).deadline_weeks_after_game
        )
    except ValueError as exc:
        raise ValidationError({"date": str(exc)}) from exc
    return rules.deadline_moment(day, chronicle.tz)


def chronicle_today(chronicle: Chronicle, now: dt.datetime) -> dt.date:
    return now.astimezone(chronicle.tz).date()


def current_downtime(
    chronicle: Chronicle | int, *, now: dt.datetime | None = None, open_only: bool = True
) -> Cycle | None:
    """DT-01: "the current downtime", the one definition every app uses: the downtime after
    the latest game already played (today included, in the chronicle's time).

    A game scheduled ahead has its cycle already, but its downtime has not begun: nobody acts
    in it, and no page calls it open, before that game's day. Once a later game has been
    played, an earlier game's downtime is never current again, even if the later one was
    closed first (nobody acts in two downtimes).

    By default, the downtime only while it is open at `now` (not closed yet, or closed after
    `now`: a record written for a past moment finds the downtime of that moment): what players
    act in (spends, searches, XP purchases in downtime), None otherwise. `open_only=False`
    returns it whatever its stage, for the pages that show it (the downtime page and the
    dashboard's Downtime box show a closed one read-only and say why it closed)."""
    if not isinstance(chronicle, Chronicle):
        chronicle = Chronicle.objects.get(pk=chronicle)
    now = now or timezone.now()
    cycle = (
        Cycle.objects.filter(chronicle=chronicle, game__date__lte=chronicle_today(chronicle, now))
        .select_related("game", "chronicle")
        .order_by("-game__date", "-game__number")
        .first()
    )
    if cycle is None:
        return None
    if open_only and cycle.closed_at is not None and cycle.closed_at <= now:
        return None
    return cycle


def game_created_text(game: Game, now: dt.datetime) -> str:
    """What a storyteller is told on creating a game: a game scheduled ahead has its cycle, but
    its downtime begins only on game day (DT-01), so nothing announces it open before then."""
    if game.date > chronicle_today(game.chronicle, now):
        return gettext("Game %(number)s created for %(day)s; its downtime opens on game day.") % {
            "number": game.number,
            "day": day_text(game.date),
        }
    return gettext("Game %(number)s created; its downtime is open until %(deadline)s.") % {
        "number": game.number,
        "deadline": moment_text(game.cycle.deadline_at, game.chronicle),
    }


@transaction.atomic
def game_create(
    *,
    chronicle: Chronicle,
    date: dt.date,
    number: int | None = None,
    start_time: dt.time | None = None,
    place: str = "",
    notes: str = "",
) -> Game:
    """Create a game and the downtime cycle that follows it (DT-01)."""
    # Lock the chronicle row so two STs adding a game at once get consecutive numbers.
    Chronicle.objects.select_for_update().filter(pk=chronicle.pk).first()
    if number is None:
        number = (Game.objects.filter(chronicle=chronicle).aggregate(m=Max("number"))["m"] or 0) + 1
    elif not 1 <= number <= MAX_GAME_NUMBER:
        raise ValidationError(
            {
                "number": gettext("A game number is from 1 to %(highest)s.")
                % {"highest": MAX_GAME_NUMBER}
            }
        )
    if Game.objects.filter(chronicle=chronicle, number=number).exists():
        raise ValidationError(
            {
                "number": gettext("There is already a game %(number)s in this chronicle.")
                % {"number": number}
            }
        )
    game = Game.objects.create(
        chronicle=chronicle,
        number=number,
        date=date,
        start_time=start_time,
        place=place,
        notes=notes,
    )
    Cycle.objects.create(
        chronicle=chronicle, game=game, deadline_at=_cycle_deadline(chronicle, date, number)
    )
    return game


_UNSET = object()


@transaction.atomic
def game_update(
    *,
    game: Game,
    date: dt.date | None = None,
    start_time: dt.time | None | object = _UNSET,
    place: str | None = None,
    notes: str | None = None,
) -> Game:
    """Change a game's details. Its date moves the cycle's deadline while the cycle is open;
    once the downtime has closed, the date is part of the record and stays."""
    game = Game.objects.select_for_update().select_related("chronicle").get(pk=game.pk)
    cycle = Cycle.objects.select_for_update().get(game=game)
    if date is not None and date != game.date:
        if cycle.status != CycleStatus.OPEN:
            raise ValidationError(
                {
                    "date": gettext(
                        "The downtime after this game has already closed, so its date "
                        "can no longer change."
                    )
                }
            )
        game.date = date
        cycle.deadline_at = _cycle_deadline(game.chronicle, date, game.number)
        cycle.save(update_fields=["deadline_at"])
        _schedule_follow_game(game)
    if start_time is not _UNSET:
        game.start_time = start_time  # type: ignore[assignment]
    if place is not None:
        game.place = place
    if notes is not None:
        game.notes = notes
    game.save()
    return game


@dataclass(frozen=True)
class SignIn:
    """One line of a game's sign-in sheet as an ST fills it in."""

    player_id: int
    attended: bool
    waiver_signed: bool
    # HAV-06: the character played; None: the player's only active character, if they have one.
    character_id: int | None = None
    # XP-04: the storyteller lets this character in with black veins showing, for this game.
    # None (the API's default) keeps what the sheet holds for the same character.
    permit_black_veins: bool | None = None


@transaction.atomic
def attendance_record(
    *,
    game: Game,
    lines: Iterable[SignIn],
    by: User,
    now: dt.datetime | None = None,
) -> list[Attendance]:
    """GEN-01 / DT-04: record who attended a game and who signed its waiver; HAV-06: which
    character each played (by default their only active one, see `sign_in.sign_in_characters`);
    XP-04: refuse a character whose black veins show unless a storyteller permits it.

    Set-based: one read of the sheet, then bulk writes, whatever the number of players. A line
    with `attended=False` removes the player from the sheet.
    """
    now = now or timezone.now()
    lines = list(lines)
    chronicle = game.chronicle
    if chronicle_today(chronicle, now) < game.date:
        raise ValidationError(
            gettext("Game %(number)s is on %(day)s; attendance can be recorded from that day on.")
            % {"number": game.number, "day": day_text(game.date)}
        )
    cycle = Cycle.objects.select_for_update().get(game=game)
    if cycle.status in (CycleStatus.RESOLVED, CycleStatus.RELEASED):
        raise ValidationError(
            gettext(
                "This game's downtime has already been resolved; attendance decides its XP "
                "awards (DT-04), so the sheet can no longer change."
            )
        )
    player_ids = {line.player_id for line in lines}
    if len(player_ids) != len(lines):
        raise ValidationError(gettext("Each player may appear only once on the sign-in sheet."))
    known = set(
        Membership.objects.filter(
            chronicle=chronicle, role=Role.PLAYER, user_id__in=player_ids
        ).values_list("user_id", flat=True)
    )
    strangers = player_ids - known
    if strangers:
        raise ValidationError(
            gettext("Only players of this chronicle can be signed in (not a player here: %(ids)s).")
            % {"ids": ", ".join(map(str, sorted(strangers)))}
        )
    # GEN-01: nobody under the minimum age (18) on the game's date plays. One query for the
    # whole sheet. A player who gave no date of birth is signed in as today: they are asked for
    # it once, and the sheet shows the storytellers "age not given" to check at the door.
    minors = [
        first_name or username
        for first_name, username, born in User.objects.filter(
            pk__in={line.player_id for line in lines if line.attended},
            chronicle_profile__birth_date__isnull=False,
        )
        .order_by("username")
        .values_list("first_name", "username", "chronicle_profile__birth_date")
        if not rules.adult_on(
            born, game.date, **rules.settings_for(rules.adult_on, chronicle.house_rules)
        )
    ]
    if minors:
        raise ValidationError(
            gettext(
                "%(names)s cannot be signed in: players must be %(age)s or older on the "
                "game's date (GEN-01)."
            )
            % {"names": ", ".join(minors), "age": chronicle.house_rules.minimum_player_age}
        )
    for line in lines:
        if line.waiver_signed and not line.attended:
            raise ValidationError(
                gettext("A waiver can only be recorded for a player who attended.")
            )

    existing = {a.player_id: a for a in Attendance.objects.filter(game=game)}
    # HAV-06 / XP-04: the character each attendee played, and black veins let in or refused.
    played = sign_in_characters(game=game, lines=lines, saved=existing, by_id=by.pk)
    absent = [line.player_id for line in lines if not line.attended and line.player_id in existing]
    Attendance.objects.filter(game=game, player_id__in=absent).delete()
    changed = []
    for line in lines:
        attendance = existing.get(line.player_id)
        if not line.attended or attendance is None:
            continue
        sheet = (
            line.waiver_signed,
            played[line.player_id].character_id,
            played[line.player_id].permitted_by_id,
        )
        saved = (
            attendance.waiver_signed,
            attendance.character_id,
            attendance.black_veins_permitted_by_id,
        )
        if sheet != saved:
            (
                attendance.waiver_signed,
                attendance.character_id,
                attendance.black_veins_permitted_by_id,
            ) = sheet
            attendance.recorded_by_id = by.pk
            attendance.recorded_at = now
            changed.append(attendance)
    Attendance.objects.bulk_update(
        changed,
        ["waiver_signed", "character", "black_veins_permitted_by", "recorded_by", "recorded_at"],
    )
    Attendance.objects.bulk_create(
        [
            Attendance(
                game=game,
                player_id=line.player_id,
                waiver_signed=line.waiver_signed,
                character_id=played[line.player_id].character_id,
                black_veins_permitted_by_id=played[line.player_id].permitted_by_id,
                recorded_by_id=by.pk,
                recorded_at=now,
            )
            for line in lines
            if line.attended and line.player_id not in existing
        ]
    )
    return list(Attendance.objects.filter(game=game).select_related("player"))


def _record_transitions(
    cycle_ids: Iterable[int], status: str, now: dt.datetime, by: User | None
) -> None:
    CycleTransition.objects.bulk_create(
        [
            CycleTransition(cycle_id=cid, status=status, at=now, by_id=by.pk if by else None)
            for cid in cycle_ids
        ]
    )


@transaction.atomic
def cycles_close_due(*, now: dt.datetime | None = None) -> list[int]:
    """Close every open cycle whose deadline has passed (DT-01), returning the ids it closed.

    Idempotent and safe to run concurrently: the rows are locked and re-checked in one
    conditional UPDATE, so a second run (or a second worker) finds nothing left to close.
    """
    now = now or timezone.now()
    due = list(
        Cycle.objects.select_for_update(skip_locked=True)
        .filter(status=CycleStatus.OPEN, deadline_at__lte=now)
        .values_list("id", flat=True)
    )
    if not due:
        return []
    Cycle.objects.filter(id__in=due, status=CycleStatus.OPEN).update(
        status=CycleStatus.CLOSED, closed_at=now
    )
    _record_transitions(due, CycleStatus.CLOSED, now, None)
    return due


def cycle_close(*, cycle: Cycle, by: User | None, now: dt.datetime | None = None) -> bool:
    """An ST closes a cycle before its deadline. Returns False when it was already closed."""
    now = now or timezone.now()
    try:
        with transaction.atomic():
            touched = Cycle.objects.filter(pk=cycle.pk, status=CycleStatus.OPEN).update(
                status=CycleStatus.CLOSED, closed_at=now
            )
            if touched:
                _record_transitions([cycle.pk], CycleStatus.CLOSED, now, by)
    except IntegrityError:
        # The deadline task closed it in the same instant; one closing is all there is.
        return False
    return bool(touched)


@transaction.atomic
def membership_add(*, chronicle: Chronicle, user: User, role: str) -> Membership:
    if role not in Role.values:
        raise ValidationError({"role": gettext("Unknown role %(role)s.") % {"role": repr(role)}})
    membership, _ = Membership.objects.update_or_create(
        chronicle=chronicle, user=user, defaults={"role": role}
    )
    return membership


@transaction.atomic
def chronicle_create(*, name: str, slug: str, timezone_name: str = "America/New_York") -> Chronicle:
    chronicle = Chronicle(name=name, slug=slug, timezone=timezone_name)
    chronicle.full_clean()
    chronicle.save()
    return chronicle


@transaction.atomic
def chronicle_house_rules_update(
    *,
    chronicle: Chronicle,
    overrides: dict[str, object],
    effective_game: int | None = None,
    by: User | None = None,
    now: dt.datetime | None = None,
) -> Chronicle:
    """Change house-rule settings (GEN-05): published with the game from which they take
    effect, which must come after the next game to be played. Before any game has been played
    nothing is in force yet, so the change applies at once (`effective_game` is then ignored).
    Settings whose value in force for that game is already the one asked are left out; the
    deadlines of open cycles follow the settings in force for their own game."""
    from .settings import house_rules_publish

    house_rules_publish(
        chronicle=chronicle,
        changes=dict(overrides),
        effective_game=effective_game,
        by=by,
        now=now,
    )
    chronicle.refresh_from_db(fields=["house_rule_overrides", "house_rule_schedule"])
    return chronicle


def _reschedule_open_cycles(chronicle: Chronicle) -> None:
    """Every open cycle's deadline, from the settings in force for its own game (GEN-05)."""
    cycles = list(
        Cycle.objects.select_for_update()
        .filter(chronicle=chronicle, status=CycleStatus.OPEN)
        .select_related("game")
    )
    for cycle in cycles:
        cycle.deadline_at = _cycle_deadline(chronicle, cycle.game.date, cycle.game.number)
    Cycle.objects.bulk_update(cycles, ["deadline_at"])


def _schedule_follow_game(game: Game) -> None:
    """GEN-05: a change published for `game` takes effect on its (new) date."""
    if not any(
        change["effective_game"] == game.number
        for change in game.chronicle.house_rule_schedule or []
    ):
        return
    chronicle = Chronicle.objects.select_for_update().get(pk=game.chronicle_id)
    for change in chronicle.house_rule_schedule:
        if change["effective_game"] == game.number:
            change["effective_on"] = game.date.isoformat()
    chronicle.save(update_fields=["house_rule_schedule"])
    game.chronicle.house_rule_schedule = chronicle.house_rule_schedule


# People (starting a chronicle, invitations, roles, leaving) live in their own module; the
# names other apps call are re-exported here.
from .people import (  # noqa: E402, F401
    Invitee,
    chronicle_start,
    invitation_accept,
    invitation_accept_new,
    invitations_create,
    member_placeholder_create,
    membership_end,
    membership_role_change,
)
