"""Every list page and list endpoint runs the same number of SQL statements with 1 game or 50
(and 2 players or 40), so a chronicle's tenth year costs what its first month did."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chronicle import services
from chronicle.models import Role
from chronicle.services import SignIn
from tests.conftest import World

# Every page, as a logged-in user, starts with:
#   1. the session, 2. the user, 3. the membership joined with its chronicle (access.membership_for)
# and ends with the header's chronicle switcher (the user's memberships). API calls have no
# switcher; a paginated list adds its COUNT.
LIST_VIEWS: list[tuple[str, str, int]] = [
    # 4. switcher, 5. games (cycle and chronicle joined)
    ("/c/nightfall/games/", "storyteller", 5),
    # 4. switcher, 5. cycles (game and chronicle joined)
    ("/c/nightfall/cycles/", "storyteller", 5),
    # The dashboard (chronicle.dashboard and each app's dashboard.py). Staff: 4. the working
    # cycle (game joined, a window count of the cycles waiting), 5. next game, 6. decision
    # votes open to them not cast yet (GEN-03/04), 7. purchases to sign off (count and oldest),
    # 8. is a resolution running, 9. desk items per status (one aggregate), 10. switcher
    ("/c/nightfall/", "storyteller", 10),
    # ... and for an admin 10. the counted votes (one aggregate), 11. switcher
    ("/c/nightfall/", "admin", 11),
    # Player: 4. the current downtime (game joined), 5. next game, 6. decision votes open to
    # them not cast yet (GEN-04), 7. own characters being rebuilt (XP-07 / CRE-04), 8. own
    # purchases waiting (character joined), 9. own characters with their submission
    # (subqueries), 10. the latest released results (subqueries), 11. switcher
    ("/c/nightfall/", "player_alice", 11),
    # 4. game, 5. players, 6. the sheet, 7. the players' characters (HAV-06; with characters,
    # one more: their diableries, XP-04), 8. switcher
    ("/c/nightfall/games/1/sign-in/", "storyteller", 8),
    # 4. game (cycle and chronicle joined), 5. the sheet, 6. switcher
    ("/c/nightfall/games/1/", "storyteller", 6),
    # 3. count, 4. the page of chronicles (the top list needs no membership lookup)
    ("/api/chronicles/", "storyteller", 4),
    # 4. count, 5. the page
    ("/api/chronicles/nightfall/games/", "storyteller", 5),
    ("/api/chronicles/nightfall/cycles/", "storyteller", 5),
    ("/api/chronicles/nightfall/memberships/", "storyteller", 5),
    # 4. game, 5. the sheet (a single game's sheet is not paginated)
    ("/api/chronicles/nightfall/games/1/attendance/", "storyteller", 5),
]


def _grow(world: World, make_user: Callable[..., Any], games: int, players: int) -> None:
    storyteller = world.users["storyteller"]
    player_ids = [world.users["player_alice"].pk, world.users["player_bob"].pk]
    for i in range(players - 2):
        user = make_user(f"extra_player_{i}")
        services.membership_add(chronicle=world.chronicle, user=user, role=Role.PLAYER)
        player_ids.append(user.pk)
    for i in range(games - 1):
        services.game_create(
            chronicle=world.chronicle, date=dt.date(2024, 3, 16) + dt.timedelta(weeks=i)
        )
    lines = [SignIn(pid, True, pid % 2 == 0) for pid in player_ids]
    services.attendance_record(
        game=world.game, lines=lines, by=storyteller, now=dt.datetime(2024, 3, 10, tzinfo=dt.UTC)
    )


def _count(world: World, url: str, persona: str) -> int:
    client = world.client(persona)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    return len(queries)


@pytest.mark.parametrize(
    ("url", "persona", "expected"), LIST_VIEWS, ids=[f"{u}-{p}" for u, p, _ in LIST_VIEWS]
)
@pytest.mark.parametrize(("games", "players"), [(1, 2), (50, 40)], ids=["small", "large"])
def test_constant_queries(
    world: World,
    make_user: Callable[..., Any],
    url: str,
    persona: str,
    expected: int,
    games: int,
    players: int,
) -> None:
    _grow(world, make_user, games, players)
    assert _count(world, url, persona) == expected


@pytest.mark.parametrize("chronicles", [2, 12], ids=["two", "twelve"])
def test_switcher_costs_the_same_for_any_number_of_chronicles(
    world: World, chronicles: int
) -> None:
    user = world.users["storyteller"]
    for i in range(chronicles - 1):
        extra = services.chronicle_create(name=f"City {i}", slug=f"city-{i}")
        services.membership_add(chronicle=extra, user=user, role=Role.PLAYER)
    # 1. session, 2. user, 3. memberships (chronicle joined), 4. the header's switcher
    assert _count(world, "/", "storyteller") == 4
