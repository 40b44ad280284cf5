"""The design system's shared parts: the one time-zone filter, the role-grouped navigation and
the staff-only style guide (issue 12)."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
import time_machine
from django.template import Context, Template
from django.utils import timezone

from chronicle.templatetags.chronicle_ui import moment_text
from tests.conftest import World

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
ROME = zoneinfo.ZoneInfo("Europe/Rome")


@pytest.mark.parametrize(
    ("moment", "zone", "text", "offset"),
    [
        # 04:59 UTC on 9 Dec is 23:59 the evening before in New York, in winter time.
        (
            dt.datetime(2026, 12, 9, 4, 59, tzinfo=dt.UTC),
            NEW_YORK,
            "Tue 8 Dec 2026, 23:59 EST",
            "-05:00",
        ),
        # In summer New York is four hours behind and says EDT.
        (
            dt.datetime(2024, 3, 20, 3, 59, tzinfo=dt.UTC),
            NEW_YORK,
            "Tue 19 Mar 2024, 23:59 EDT",
            "-04:00",
        ),
        # Rome, the same instant as the first row: already the 9th.
        (
            dt.datetime(2026, 12, 9, 4, 59, tzinfo=dt.UTC),
            ROME,
            "Wed 9 Dec 2026, 05:59 CET",
            "+01:00",
        ),
    ],
)
def test_when_shows_a_moment_in_the_given_zone_and_says_which(
    moment: dt.datetime, zone: zoneinfo.ZoneInfo, text: str, offset: str
) -> None:
    html = Template("{% load chronicle_ui %}{{ m|when:z }}").render(
        Context({"m": moment, "z": zone})
    )
    assert f">{text}</time>" in html
    assert f'datetime="{moment.astimezone(zone).isoformat()}"' in html
    assert offset in html
    assert moment_text(moment, zone) == text


def test_when_without_a_zone_uses_the_active_one() -> None:
    moment = dt.datetime(2026, 12, 9, 4, 59, tzinfo=dt.UTC)
    with timezone.override(ROME):
        html = Template("{% load chronicle_ui %}{{ m|when }}").render(Context({"m": moment}))
    assert "Wed 9 Dec 2026, 05:59 CET" in html


def test_day_shows_the_local_day_of_a_moment_and_a_date_as_it_is() -> None:
    late = dt.datetime(2026, 12, 9, 4, 59, tzinfo=dt.UTC)
    html = Template("{% load chronicle_ui %}{{ m|day:z }} / {{ d|day }}").render(
        Context({"m": late, "z": NEW_YORK, "d": dt.date(2026, 12, 12)})
    )
    assert "Tue 8 Dec 2026</time> / " in html
    assert '<time datetime="2026-12-12">Sat 12 Dec 2026</time>' in html


def test_a_chronicle_page_shows_moments_in_the_chronicles_zone(world: World) -> None:
    """The style guide's sample moment is rendered by chronicle_page, which activates the
    chronicle's zone: its offset is New York's, whatever the server's zone."""
    response = world.client("storyteller").get(f"/c/{world.chronicle.slug}/style-guide/")
    assert response.status_code == 200
    body = response.content.decode()
    offset = timezone.now().astimezone(world.chronicle.tz).strftime("%z")
    assert f'{offset[:3]}:{offset[3:]}">' in body


@pytest.mark.parametrize(
    ("persona", "present", "absent"),
    [
        ("player_alice", ["My characters", "Downtime", "Results", "Games"], ["Desk", "Settings"]),
        (
            "storyteller",
            ["Desk", "Resolution", "Characters", "Havens and searches", "Purchases", "Reports"],
            ["Settings", "Votes and XP", "My characters"],
        ),
        (
            "admin",
            ["Desk", "Resolution", "Games", "Votes and XP", "People", "Settings"],
            ["My characters"],
        ),
    ],
)
def test_the_navigation_is_grouped_by_role(
    world: World, persona: str, present: list[str], absent: list[str]
) -> None:
    body = world.client(persona).get(f"/c/{world.chronicle.slug}/").content.decode()
    nav = body.split('class="site-nav"', 1)[1].split("</nav>", 1)[0]
    for label in present:
        assert f">{label}</a>" in nav, label
    for label in absent:
        assert f">{label}</a>" not in nav, label


def test_the_current_page_is_marked_in_the_navigation(world: World) -> None:
    body = world.client("storyteller").get(f"/c/{world.chronicle.slug}/desk/").content.decode()
    assert 'aria-current="page">Desk</a>' in body


@pytest.mark.parametrize(
    ("persona", "status"), [("storyteller", 200), ("admin", 200), ("player_alice", 403)]
)
def test_the_style_guide_is_for_staff(world: World, persona: str, status: int) -> None:
    response = world.client(persona).get(f"/c/{world.chronicle.slug}/style-guide/")
    assert response.status_code == status
    if status == 200:
        for part in (
            'class="cards"',
            'class="tabs"',
            'class="toast',
            'class="empty"',
            "<kbd>",
            'class="split"',
        ):
            assert part.encode() in response.content


def test_every_page_has_the_favicon_and_a_skip_link(world: World) -> None:
    body = world.client("player_alice").get(f"/c/{world.chronicle.slug}/").content.decode()
    assert 'rel="icon"' in body and "favicon.svg" in body
    assert 'href="#main"' in body and 'id="main"' in body


def test_a_toast_reads_as_its_message_alone(world: World) -> None:
    """The dismiss button has a name for screen readers but no text in the message."""
    client = world.client("storyteller")
    response = client.post(
        f"/c/{world.chronicle.slug}/games/new/", {"date": "2030-05-04"}, follow=True
    )
    body = response.content.decode()
    toast = body.split('class="toast success"', 1)[1].split("</li>", 1)[0]
    assert 'aria-label="Dismiss"></button>' in toast


@pytest.mark.parametrize(
    ("game_day", "says", "never"),
    [
        # A game scheduled ahead: its cycle exists, its downtime has not begun (DT-01).
        (
            "2030-05-04",
            "Game 2 created for Sat 4 May 2030; its downtime opens on game day.",
            "is open",
        ),
        # A game already played (entered afterwards): its downtime is open until its deadline.
        (
            "2024-03-16",
            "Game 2 created; its downtime is open until Tue 26 Mar 2024, 23:59 EDT.",
            "opens on",
        ),
    ],
)
def test_creating_a_game_says_truly_whether_its_downtime_is_open(
    world: World, game_day: str, says: str, never: str
) -> None:

    with time_machine.travel(dt.datetime(2024, 3, 20, 12, tzinfo=NEW_YORK), tick=False):
        response = world.client("storyteller").post(
            f"/c/{world.chronicle.slug}/games/new/", {"date": game_day}, follow=True
        )
    body = response.content.decode()
    assert says in body
    toast = body.split('class="toast success"', 1)[1].split("</li>", 1)[0]
    assert never not in toast


def test_a_scheduled_games_cycle_reads_not_started_not_open(world: World) -> None:

    client = world.client("storyteller")
    with time_machine.travel(dt.datetime(2024, 3, 20, 12, tzinfo=NEW_YORK), tick=False):
        client.post(f"/c/{world.chronicle.slug}/games/new/", {"date": "2030-05-04"})
        body = client.get(f"/c/{world.chronicle.slug}/games/").content.decode()
    rows = {row.split("</td>", 1)[0]: row for row in body.split("<tr")[1:]}
    future = next(row for row in rows.values() if "2030" in row)
    past = next(row for row in rows.values() if "2024" in row and "Mar" in row)
    assert "Not started" in future and ">Open<" not in future
    assert "Not started" not in past
