"""Calendar feeds (issue 17): the chronicle's games and downtime deadlines as iCalendar, for a
logged-in member (`/c/<slug>/calendar.ics`) and for phone calendars, which cannot log in, at a
private address with a per-member token (`/c/<slug>/calendar/<token>.ics`).

The feed is written in the language that is active when it is built: the request's for the
logged-in feed, the owner's (`chronicle.languages.in_language_of`) for the token feed.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from icalendar import Calendar, Event, Timezone, vDuration
from icalendar.enums import TRANSP

from .. import access
from ..models import CalendarFeed, Chronicle, Cycle, Game, Membership
from ..moments import moment_text

# The model has no end time; a LARP evening runs about this long.
GAME_LENGTH = dt.timedelta(hours=5)
# How often a phone calendar should fetch the feed again (clients treat it as a hint).
REFRESH = dt.timedelta(hours=6)
PRODID = "-//Chronicle//Calendar feed//EN"


# --- The private address -----------------------------------------------------------------------


@transaction.atomic
def calendar_feed_renew(
    *, membership: Membership, now: dt.datetime | None = None
) -> tuple[CalendarFeed, bool]:
    """Make the member's private address, or replace it: the token changes in the same row, so
    the old address answers 404 from the moment this commits. Returns the feed and whether it
    replaced an address (False: the member's first)."""
    now = now or timezone.now()
    feed, created = CalendarFeed.objects.update_or_create(
        membership=membership,
        defaults={"token": secrets.token_urlsafe(32), "created_at": now},
    )
    return feed, not created


def feed_for_token(slug: str, token: str) -> CalendarFeed | None:
    """The feed a private address names, with its membership, user and chronicle: None when the
    token is unknown or old, names another chronicle, or its member left (the membership and
    its feed are gone) or was deactivated. One answer for all of these, so an address tells
    nobody whether the chronicle exists."""
    return (
        CalendarFeed.objects.filter(
            token=token, membership__chronicle__slug=slug, membership__user__is_active=True
        )
        .select_related("membership__chronicle", "membership__user")
        .first()
    )


def feed_url(feed: CalendarFeed) -> str:
    slug = feed.membership.chronicle.slug
    return settings.CHRONICLE_BASE_URL + reverse("calendar_feed", args=[slug, feed.token])


def subscribe_url(url: str) -> str:
    """The same address as `webcal://`, which phones and desktop calendars open as a
    subscription rather than a download."""
    return "webcal://" + url.split("://", 1)[1]


@dataclass(frozen=True)
class FeedRow:
    """One chronicle on the account page: its private address, if the member made one."""

    chronicle: Chronicle
    url: str
    subscribe_url: str


def feeds_of(user: User) -> list[FeedRow]:
    """The user's chronicles with their private addresses (an empty url where none was made
    yet), in one query."""
    memberships = (
        access.memberships_of(user).select_related("calendar_feed").order_by("chronicle__name")
    )
    rows = []
    for membership in memberships:
        feed = getattr(membership, "calendar_feed", None)
        url = feed_url(feed) if feed is not None else ""
        rows.append(FeedRow(membership.chronicle, url, subscribe_url(url) if url else ""))
    return rows


# --- The feed ----------------------------------------------------------------------------------


def _host() -> str:
    return urlsplit(settings.CHRONICLE_BASE_URL).hostname or "chronicle.invalid"


def _absolute(name: str, *args: object) -> str:
    return settings.CHRONICLE_BASE_URL + reverse(name, args=args)


def game_start(game: Game) -> dt.datetime | dt.date:
    """When a game starts in its chronicle's zone: a day alone when it has no start time."""
    if game.start_time is None:
        return game.date
    return dt.datetime.combine(game.date, game.start_time, tzinfo=game.chronicle.tz)


def _game_event(game: Game, host: str, now: dt.datetime) -> Event:
    start = game_start(game)
    if isinstance(start, dt.datetime):
        # Five hours of real time, counted in UTC: a game across a change to summer time ends
        # at the right hour, not an hour late.
        end: dt.date = (start.astimezone(dt.UTC) + GAME_LENGTH).astimezone(game.chronicle.tz)
    else:
        end = start + dt.timedelta(days=1)
    if game.place:
        summary = _("Game %(number)s — %(place)s") % {"number": game.number, "place": game.place}
    else:
        summary = _("Game %(number)s") % {"number": game.number}
    return Event.new(
        uid=f"game-{game.pk}@{host}",
        stamp=now,
        last_modified=game.updated_at,
        summary=summary,
        start=start,
        end=end,
        location=game.place or None,
        description=game.notes or None,
        url=_absolute("game_detail", game.chronicle.slug, game.number),
    )


def _deadline_event(game: Game, cycle: Cycle, host: str, now: dt.datetime) -> Event:
    """A downtime deadline as an all-day event on its day in the chronicle's zone: a phone
    shows an all-day event as a banner on top of the day, in the month view too, where a
    timed event at 23:59 sits at the bottom of the day, off screen, and shows as a dot at
    most. The exact moment is in the description. Transparent: it does not make anyone busy."""
    day = cycle.deadline_at.astimezone(game.chronicle.tz).date()
    return Event.new(
        uid=f"deadline-{cycle.pk}@{host}",
        stamp=now,
        summary=_("Downtime deadline for game %(number)s") % {"number": game.number},
        start=day,
        end=day + dt.timedelta(days=1),
        transparency=TRANSP.TRANSPARENT,
        description=_("Submit your downtime for game %(number)s before %(moment)s.")
        % {"number": game.number, "moment": moment_text(cycle.deadline_at, game.chronicle)},
        url=_absolute("cycle_detail", game.chronicle.slug, game.number),
    )


def _cycle_of(game: Game) -> Cycle | None:
    """Every game is made with its cycle (DT-01); a row put in by hand without one still gives
    a feed, with the game alone."""
    return getattr(game, "cycle", None)


def _zone_span(
    chronicle: Chronicle, games: list[Game], now: dt.datetime
) -> tuple[dt.date, dt.date]:
    """The days the VTIMEZONE must cover: every event, and a year around today for a feed with
    none yet (an empty feed still names its zone)."""
    today = now.astimezone(chronicle.tz).date()
    days = [today]
    for game in games:
        days.append(game.date)
        if cycle := _cycle_of(game):
            days.append(cycle.deadline_at.astimezone(chronicle.tz).date())
    return min(days) - dt.timedelta(days=366), max(days) + dt.timedelta(days=366)


def feed_ics(membership: Membership, *, now: dt.datetime | None = None) -> bytes:
    """The chronicle's calendar as a member sees it: one event per game and one per downtime
    deadline, with UIDs that stay when a game moves (the phone updates the same event). One
    query whatever the number of games: the games with their chronicle and cycles."""
    now = now or timezone.now()
    chronicle = membership.chronicle
    games = list(
        access.games_visible_to(membership).select_related("chronicle").order_by("date", "number")
    )
    return build_calendar(chronicle, games, now=now).to_ical()


def build_calendar(chronicle: Chronicle, games: Iterable[Game], *, now: dt.datetime) -> Calendar:
    games = list(games)
    host = _host()
    calendar = Calendar.new(
        prodid=PRODID,
        uid=f"chronicle-{chronicle.pk}@{host}",
        name=chronicle.name,
        description=_("Games and downtime deadlines of %(name)s") % {"name": chronicle.name},
        method="PUBLISH",
        refresh_interval=REFRESH,
        url=_absolute("game_list", chronicle.slug),
    )
    calendar.add("X-WR-TIMEZONE", chronicle.timezone)
    calendar.add("X-PUBLISHED-TTL", vDuration(REFRESH))
    first, last = _zone_span(chronicle, games, now)
    calendar.add_component(Timezone.from_tzid(chronicle.timezone, first_date=first, last_date=last))
    for game in games:
        calendar.add_component(_game_event(game, host, now))
        if cycle := _cycle_of(game):
            calendar.add_component(_deadline_event(game, cycle, host, now))
    return calendar
