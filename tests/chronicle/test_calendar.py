"""Calendar feeds (issue 17, "Calendars"): the games and downtime deadlines of a chronicle as
iCalendar, parsed back with icalendar, at local times of zones far from UTC (and across a change
to summer time); stable UIDs when a game moves; the private address's token, its renewal and
who it answers; constant queries; the account page and the games page."""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import time_machine
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from icalendar import Calendar, Event

from chronicle import services
from chronicle.models import CalendarFeed, Chronicle, Cycle, Game, Membership, Profile, Role
from chronicle.services import calendar
from chronicle.services.people import membership_end
from tests.conftest import World

NOW = dt.datetime(2024, 2, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[time_machine.Traveller]:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


def parse(response: Any) -> Calendar:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "text/calendar; charset=utf-8"
    return Calendar.from_ical(response.content)


def events(cal: Calendar) -> dict[str, Event]:
    return {str(event.uid): event for event in cal.walk("VEVENT")}


def game_uid(game: Game) -> str:
    return f"game-{game.pk}@{calendar._host()}"


def deadline_uid(game: Game) -> str:
    return f"deadline-{game.cycle.pk}@{calendar._host()}"


def chronicle_in(zone: str, world: World, slug: str) -> Chronicle:
    chronicle = services.chronicle_create(name=f"Nights of {zone}", slug=slug, timezone_name=zone)
    services.membership_add(chronicle=chronicle, user=world.users["player_alice"], role=Role.PLAYER)
    return chronicle


def membership(world: World, persona: str, chronicle: Chronicle | None = None) -> Membership:
    return Membership.objects.select_related("chronicle", "user").get(
        user=world.users[persona], chronicle=chronicle or world.chronicle
    )


# --- The feed: events at the right local times -------------------------------------------------

# A game the evening before the change to summer time: five hours of real time end an hour
# "later" on the clock (22:00 standard time + 5 h = 04:00 summer time).
ZONES = [
    pytest.param(
        "America/Los_Angeles", dt.date(2024, 3, 9), dt.time(22, 0), dt.time(4, 0), id="los-angeles"
    ),
    pytest.param("Europe/Rome", dt.date(2024, 3, 30), dt.time(23, 0), dt.time(5, 0), id="rome"),
]


@pytest.mark.parametrize(("zone", "dst_eve", "start", "end"), ZONES)
def test_every_game_and_deadline_at_its_local_time(
    world: World, zone: str, dst_eve: dt.date, start: dt.time, end: dt.time
) -> None:
    tz = zoneinfo.ZoneInfo(zone)
    chronicle = chronicle_in(zone, world, "far")
    crossing = services.game_create(
        chronicle=chronicle, date=dst_eve, start_time=start, place="Elysium", notes="Masks on."
    )
    summer = services.game_create(
        chronicle=chronicle, date=dt.date(2024, 7, 13), start_time=dt.time(19, 30)
    )
    undated = services.game_create(chronicle=chronicle, date=dt.date(2024, 12, 14))

    cal = parse(world.client("player_alice").get("/c/far/calendar.ics"))
    found = events(cal)
    games = [crossing, summer, undated]
    assert set(found) == {game_uid(g) for g in games} | {deadline_uid(g) for g in games}

    # A timed game starts at its local time, named by the zone, and lasts five real hours.
    event = found[game_uid(crossing)]
    assert event.start == dt.datetime.combine(dst_eve, start, tzinfo=tz)
    assert event["DTSTART"].params["TZID"] == zone
    assert event.end.astimezone(tz).time() == end
    assert event.end.astimezone(tz).date() == dst_eve + dt.timedelta(days=1)
    assert event.end.astimezone(dt.UTC) - event.start.astimezone(dt.UTC) == dt.timedelta(hours=5)
    assert str(event["SUMMARY"]) == "Game 1 — Elysium"
    assert str(event["LOCATION"]) == "Elysium"
    assert str(event["DESCRIPTION"]) == "Masks on."
    assert str(event["URL"]) == f"{settings.CHRONICLE_BASE_URL}/c/far/games/1/"
    assert event.stamp == NOW
    assert event.last_modified == crossing.updated_at

    event = found[game_uid(summer)]
    assert event.start == dt.datetime(2024, 7, 13, 19, 30, tzinfo=tz)
    assert event.start.utcoffset() == dt.datetime(2024, 7, 13, 12, tzinfo=tz).utcoffset()
    assert str(event["SUMMARY"]) == "Game 2"
    assert "LOCATION" not in event

    # A game without a start time is a day.
    event = found[game_uid(undated)]
    assert event.start == dt.date(2024, 12, 14)
    assert event.end == dt.date(2024, 12, 15)

    # Each deadline: an all-day event on its day in the chronicle's zone, the moment in words.
    for game in games:
        event = found[deadline_uid(game)]
        day = game.cycle.deadline_at.astimezone(tz).date()
        assert event.start == day and event.end == day + dt.timedelta(days=1)
        assert str(event["SUMMARY"]) == f"Downtime deadline for game {game.number}"
        assert "23:59" in str(event["DESCRIPTION"])
        assert str(event["TRANSP"]) == "TRANSPARENT"

    # The calendar names its zone and carries it as a VTIMEZONE covering the summer offset.
    [vtimezone] = cal.walk("VTIMEZONE")
    assert str(vtimezone["TZID"]) == zone
    assert vtimezone.daylight and vtimezone.standard
    assert str(cal["X-WR-TIMEZONE"]) == zone
    assert str(cal["X-WR-CALNAME"]) == f"Nights of {zone}"
    assert str(cal["METHOD"]) == "PUBLISH"


def test_an_empty_chronicle_still_names_its_zone(world: World) -> None:
    chronicle_in("Europe/Rome", world, "empty")
    cal = parse(world.client("player_alice").get("/c/empty/calendar.ics"))
    assert not cal.walk("VEVENT")
    assert [str(tz["TZID"]) for tz in cal.walk("VTIMEZONE")] == ["Europe/Rome"]


def test_a_game_without_a_cycle_still_gives_a_feed(world: World) -> None:
    """Every game is made with its cycle; a row put in by hand without one is no 500."""
    Cycle.objects.filter(game=world.game).delete()
    found = events(parse(world.client("player_alice").get("/c/nightfall/calendar.ics")))
    assert list(found) == [game_uid(world.game)]


def test_a_moved_game_keeps_its_uid(world: World, frozen: time_machine.Traveller) -> None:
    chronicle = chronicle_in("America/Los_Angeles", world, "moving")
    game = services.game_create(
        chronicle=chronicle, date=dt.date(2024, 4, 6), start_time=dt.time(19, 0), place="Crypt"
    )
    client = world.client("player_alice")
    before = events(parse(client.get("/c/moving/calendar.ics")))
    old_deadline = before[deadline_uid(game)].start

    frozen.shift(dt.timedelta(hours=2))
    services.game_update(
        game=game, date=dt.date(2024, 4, 13), start_time=dt.time(20, 30), place="Rack"
    )
    after = events(parse(client.get("/c/moving/calendar.ics")))

    assert set(after) == set(before)
    event = after[game_uid(game)]
    la = zoneinfo.ZoneInfo("America/Los_Angeles")
    assert event.start == dt.datetime(2024, 4, 13, 20, 30, tzinfo=la)
    assert str(event["LOCATION"]) == "Rack"
    assert event.last_modified > before[game_uid(game)].last_modified
    # The deadline follows the game, under the same UID.
    assert after[deadline_uid(game)].start == old_deadline + dt.timedelta(days=7)


def test_uids_name_the_sites_host(world: World) -> None:
    found = events(parse(world.client("admin").get("/c/nightfall/calendar.ics")))
    host = calendar._host()
    assert host and host in settings.CHRONICLE_BASE_URL
    assert set(found) == {f"game-{world.game.pk}@{host}", f"deadline-{world.game.cycle.pk}@{host}"}


def test_the_logged_in_feed_is_a_named_file(world: World) -> None:
    response = world.client("player_bob").get("/c/nightfall/calendar.ics")
    parse(response)
    assert response["Content-Disposition"] == 'attachment; filename="nightfall.ics"'
    assert "no-store" in response["Cache-Control"]


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 200),
        ("outsider", 404),
        ("other_storyteller", 404),
    ],
)
def test_the_logged_in_feed_is_for_members(world: World, persona: str, status: int) -> None:
    response = world.client(persona).get("/c/nightfall/calendar.ics")
    assert response.status_code == status
    if status == 404:
        assert b"BEGIN:VCALENDAR" not in response.content


def test_an_anonymous_visitor_is_sent_to_log_in(world: World) -> None:
    response = Client().get("/c/nightfall/calendar.ics")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_a_member_who_left_gets_no_logged_in_feed(world: World) -> None:
    bob = membership(world, "player_bob")
    membership_end(membership=bob, target=bob)
    assert world.client("player_bob").get("/c/nightfall/calendar.ics").status_code == 404


# --- The private address --------------------------------------------------------------------


def token_path(feed: CalendarFeed, slug: str = "nightfall") -> str:
    return f"/c/{slug}/calendar/{feed.token}.ics"


def test_the_private_address_needs_no_login(world: World) -> None:
    feed, renewed = calendar.calendar_feed_renew(membership=membership(world, "player_alice"))
    assert not renewed
    response = Client().get(token_path(feed))
    found = events(parse(response))
    assert game_uid(world.game) in found
    assert response["X-Robots-Tag"] == "noindex"
    assert calendar.feed_url(feed) == settings.CHRONICLE_BASE_URL + token_path(feed)
    # Whoever holds it reads it, logged in as someone else or not.
    assert world.client("outsider").get(token_path(feed)).status_code == 200


def test_a_new_address_stops_the_old_one_at_once(world: World) -> None:
    alice = membership(world, "player_alice")
    old, _ = calendar.calendar_feed_renew(membership=alice)
    old_path = token_path(old)
    assert Client().get(old_path).status_code == 200
    new, renewed = calendar.calendar_feed_renew(membership=alice)
    assert renewed and new.pk == old.pk and new.token != old_path.split("/")[-1][:-4]
    assert Client().get(old_path).status_code == 404
    assert Client().get(token_path(new)).status_code == 200
    assert CalendarFeed.objects.filter(membership=alice).count() == 1


def test_unknown_tokens_do_not_tell_whether_a_chronicle_exists(world: World) -> None:
    feed, _ = calendar.calendar_feed_renew(membership=membership(world, "player_alice"))
    client = Client()
    unknown_token = client.get("/c/nightfall/calendar/not-a-token.ics")
    other_chronicle = client.get(token_path(feed, "other-city"))
    no_chronicle = client.get(token_path(feed, "no-such-city"))
    for response in (unknown_token, other_chronicle, no_chronicle):
        assert response.status_code == 404
    bodies = {
        _scrub(response.content, path)
        for response, path in [
            (unknown_token, "/c/nightfall/calendar/not-a-token.ics"),
            (other_chronicle, token_path(feed, "other-city")),
            (no_chronicle, token_path(feed, "no-such-city")),
        ]
    }
    assert len(bodies) == 1, bodies


def _scrub(body: bytes, path: str) -> str:
    """A page without its per-response CSRF token and the path that was asked for (the
    language switcher comes back to it)."""
    text = re.sub(r'"X-CSRFToken": "[^"]*"', "", body.decode())
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", text)
    # The CSP nonce, new on every response (its attributes and htmx's config).
    text = re.sub(r'(nonce="|Nonce": ")[^"]*"', "", text)
    return text.replace(path, "PATH")


def test_a_member_who_left_has_no_address(world: World) -> None:
    bob = membership(world, "player_bob")
    feed, _ = calendar.calendar_feed_renew(membership=bob)
    membership_end(membership=bob, target=bob)
    assert Client().get(token_path(feed)).status_code == 404
    assert not CalendarFeed.objects.filter(token=feed.token).exists()
    # Invited back, they find no old address working: they make a new one.
    services.membership_add(
        chronicle=world.chronicle, user=world.users["player_bob"], role=Role.PLAYER
    )
    assert Client().get(token_path(feed)).status_code == 404


def test_a_deactivated_account_has_no_address(world: World) -> None:
    feed, _ = calendar.calendar_feed_renew(membership=membership(world, "player_bob"))
    world.users["player_bob"].is_active = False
    world.users["player_bob"].save()
    assert Client().get(token_path(feed)).status_code == 404


def test_the_private_feed_speaks_its_owners_language(world: World) -> None:
    """The phone fetching it sends no one's preference: the owner's saved language decides
    (Django's own catalogs name the days, so this holds before ours are translated)."""
    alice = membership(world, "player_alice")
    feed, _ = calendar.calendar_feed_renew(membership=alice)
    english = events(parse(Client().get(token_path(feed))))[deadline_uid(world.game)]
    Profile.objects.create(user=world.users["player_alice"], language="it")
    italian = events(parse(Client(HTTP_ACCEPT_LANGUAGE="en").get(token_path(feed))))[
        deadline_uid(world.game)
    ]
    moment = "19 Mar 2024, 23:59 EDT"
    assert world.game.cycle.deadline_at.astimezone(world.chronicle.tz).strftime("%a") == "Tue"
    assert f"Tue {moment}" in str(english["DESCRIPTION"])
    assert f"Mar {moment.replace('Mar', 'mar')}" in str(italian["DESCRIPTION"])


# --- Renewing from the account page ---------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "status"),
    [("player_alice", 302), ("storyteller", 302), ("outsider", 404), ("other_storyteller", 404)],
)
def test_renewing_is_for_members(world: World, persona: str, status: int) -> None:
    response = world.client(persona).post("/c/nightfall/calendar/renew/")
    assert response.status_code == status
    made = CalendarFeed.objects.filter(membership__chronicle=world.chronicle).exists()
    assert made == (status == 302)
    if status == 302:
        assert response["Location"] == "/account/#calendars"


def test_renewing_takes_a_post(world: World) -> None:
    assert world.client("player_alice").get("/c/nightfall/calendar/renew/").status_code == 405
    response = Client().post("/c/nightfall/calendar/renew/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not CalendarFeed.objects.exists()


def test_the_account_page_shows_the_address_and_the_button(world: World) -> None:
    client = world.client("player_alice")
    page = client.get("/account/").content.decode()
    assert 'id="calendars"' in page
    assert 'action="/c/nightfall/calendar/renew/"' in page
    assert "Make a calendar address for Nightfall" in page
    assert "/calendar/" not in page.replace("/calendar/renew/", "")

    response = client.post("/c/nightfall/calendar/renew/", follow=True)
    page = response.content.decode()
    feed = CalendarFeed.objects.get(membership__user=world.users["player_alice"])
    url = settings.CHRONICLE_BASE_URL + token_path(feed)
    assert f'value="{url}" readonly' in page
    assert "webcal://" + url.split("://", 1)[1] in page
    assert "Make a new address for Nightfall" in page
    assert "data-confirm=" in page
    assert "is ready" in page  # the message after the first address

    client.post("/c/nightfall/calendar/renew/")
    page = client.get("/account/").content.decode()
    assert url not in page
    assert settings.CHRONICLE_BASE_URL + token_path(CalendarFeed.objects.get(pk=feed.pk)) in page


def test_one_members_address_is_not_shown_to_another(world: World) -> None:
    feed, _ = calendar.calendar_feed_renew(membership=membership(world, "player_alice"))
    for persona in ("player_bob", "storyteller", "admin", "outsider"):
        assert feed.token not in world.client(persona).get("/account/").content.decode()


def test_the_games_page_links_the_calendar(world: World) -> None:
    for persona in ("player_alice", "storyteller"):
        page = world.client(persona).get("/c/nightfall/games/").content.decode()
        assert 'href="/c/nightfall/calendar.ics"' in page
        assert 'href="/account/#calendars"' in page


# --- Constant queries -------------------------------------------------------------------------


def _games(chronicle: Chronicle, count: int) -> None:
    start = dt.date(2024, 3, 16)
    for i in range(count):
        services.game_create(
            chronicle=chronicle,
            date=start + dt.timedelta(weeks=2 * i),
            start_time=dt.time(19, 30) if i % 2 else None,
            place=f"Place {i}",
        )


def _count(fetch: Callable[[], Any]) -> tuple[int, int]:
    with CaptureQueriesContext(connection) as ctx:
        response = fetch()
    return len(ctx.captured_queries), len(Calendar.from_ical(response.content).walk("VEVENT"))


def test_the_feeds_cost_the_same_for_2_and_20_games(world: World) -> None:
    chronicle = chronicle_in("Europe/Rome", world, "busy")
    feed, _ = calendar.calendar_feed_renew(membership=membership(world, "player_alice", chronicle))
    member = world.client("player_alice")

    def both() -> tuple[tuple[int, int], tuple[int, int]]:
        return (
            _count(lambda: member.get("/c/busy/calendar.ics")),
            _count(lambda: Client().get(token_path(feed, "busy"))),
        )

    _games(chronicle, 2)
    (small_member, events_2), (small_token, _) = both()
    Game.objects.filter(chronicle=chronicle).delete()
    _games(chronicle, 20)
    (large_member, events_20), (large_token, _) = both()

    assert (events_2, events_20) == (4, 40)
    # Logged in: session, user, membership with its chronicle, games with cycles.
    assert small_member == large_member <= 4, (small_member, large_member)
    # Private address: the feed with membership, user and chronicle; the owner's language;
    # games with cycles.
    assert small_token == large_token <= 3, (small_token, large_token)


def test_the_account_page_costs_the_same_for_1_and_4_chronicles(world: World) -> None:
    client = world.client("player_alice")
    calendar.calendar_feed_renew(membership=membership(world, "player_alice"))

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get("/account/").status_code == 200
        return len(ctx.captured_queries)

    small = count()
    for zone, slug in [("Europe/Rome", "a"), ("America/Los_Angeles", "b"), ("Asia/Tokyo", "c")]:
        chronicle = chronicle_in(zone, world, slug)
        calendar.calendar_feed_renew(membership=membership(world, "player_alice", chronicle))
    assert count() == small
