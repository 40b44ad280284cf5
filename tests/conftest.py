"""Shared fixtures: the personas, and the services a test may need.

A test that needs PostgreSQL, Redis or Chromium skips when it is absent, unless
CHRONICLE_REQUIRE_SERVICES=1 (as in CI), where it fails: CI can never pass by skipping.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.utils import timezone

from characters.models import Acquired, Approval, Character, DisciplineLevel
from characters.rules import LEVEL_NUMBERS
from chronicle import services
from chronicle.models import Chronicle, Game, Role

REQUIRE_SERVICES = os.environ.get("CHRONICLE_REQUIRE_SERVICES") == "1"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def service_missing(reason: str) -> None:
    """Skip the test, or fail it when services are required."""
    if REQUIRE_SERVICES:
        pytest.fail(f"CHRONICLE_REQUIRE_SERVICES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    """Each test starts with an empty cache: the password-reset throttle counts in it, and every
    test client comes from 127.0.0.1."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def postgres() -> None:
    if connection.vendor != "postgresql":
        service_missing("this test needs PostgreSQL (set DATABASE_URL=postgres://...)")


@pytest.fixture
def redis_broker() -> str:
    url = settings.CELERY_BROKER_URL
    if not url.startswith("redis://"):
        service_missing("this test needs a Redis broker (set CELERY_BROKER_URL=redis://...)")
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        service_missing(f"Redis at {url} does not answer: {exc}")
    return url


@pytest.fixture
def chromium() -> str:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        service_missing(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    return CHROMIUM


# --- Personas ---------------------------------------------------------------------------------

PASSWORD = "correct-horse-battery-staple"


@dataclass
class World:
    """Two chronicles and one user per persona. `other` has its own storyteller and game."""

    chronicle: Chronicle
    other: Chronicle
    users: dict[str, Any]
    game: Game
    other_game: Game

    def client(self, persona: str | None) -> Client:
        client = Client()
        if persona is not None:
            client.force_login(self.users[persona])
        return client


PERSONAS = ["admin", "storyteller", "player_alice", "player_bob", "outsider", "other_storyteller"]


@pytest.fixture
def make_user(db: None) -> Callable[..., Any]:
    def make(username: str, **extra: Any) -> Any:
        return get_user_model().objects.create_user(
            username=username, email=f"{username}@example.com", password=PASSWORD, **extra
        )

    return make


@pytest.fixture
def world(db: None, make_user: Callable[..., Any]) -> World:
    chronicle = services.chronicle_create(
        name="Nightfall", slug="nightfall", timezone_name="America/New_York"
    )
    other = services.chronicle_create(
        name="Other City", slug="other-city", timezone_name="Europe/Berlin"
    )
    users = {name: make_user(name) for name in PERSONAS}
    roles = {
        "admin": Role.ADMIN,
        "storyteller": Role.STORYTELLER,
        "player_alice": Role.PLAYER,
        "player_bob": Role.PLAYER,
    }
    for name, role in roles.items():
        services.membership_add(chronicle=chronicle, user=users[name], role=role)
    services.membership_add(chronicle=other, user=users["other_storyteller"], role=Role.STORYTELLER)
    game = services.game_create(
        chronicle=chronicle, date=dt.date(2024, 3, 9), place="Elysium", notes="first game"
    )
    other_game = services.game_create(chronicle=other, date=dt.date(2024, 3, 9), place="Berlin")
    return World(chronicle=chronicle, other=other, users=users, game=game, other_game=other_game)


def give_birth_dates(users: Any) -> None:
    """GEN-01 (issue 14): these accounts gave an adult's date of birth already, so logging in
    through the form goes straight where it went before the one question an account without
    it is asked (tests/chronicle/test_birth_date.py tests the question itself)."""
    from chronicle.services.account import birth_date_record

    for user in users:
        birth_date_record(user=user, birth_date=dt.date(1990, 1, 1), now=timezone.now())


# Approved sheets built straight from the package numbers (the creation wizard has its own
# tests), so every other test starts from a playable PC.
@pytest.fixture
def make_character(world: Any) -> Callable[..., Character]:
    """make_character("Lucien", player="player_alice", clan="toreador",
    disciplines={"auspex": "1b", "celerity": "1a"}) -> an approved, active character."""

    def make(
        name: str,
        *,
        player: str | None = "player_alice",
        chronicle: Any = None,
        clan: str = "toreador",
        creature: str = "kindred",
        disciplines: dict[str, str] | None = None,
        background_approved: bool = True,
        **fields: Any,
    ) -> Character:
        defaults: dict[str, Any] = {
            "physical": 7,
            "social": 5,
            "mental": 3,
            "willpower": 2,
            "abilities": {"investigation": 2, "brawl": 2, "etiquette": 1},
            "herd": 1,
            "business": 1,
            "occult": 1,
        }
        defaults.update(fields)
        character = Character.objects.create(
            chronicle=chronicle or world.chronicle,
            player=world.users[player] if player else None,
            name=name,
            creature=creature,
            clan=clan if creature == "kindred" else "",
            approval=Approval.APPROVED,
            background_questionnaire="Who sired you? A stranger in the rain.",
            background_approved_at=timezone.now() if background_approved else None,
            **defaults,
        )
        for discipline, top in (disciplines or {}).items():
            DisciplineLevel.objects.bulk_create(
                DisciplineLevel(
                    character=character,
                    discipline=discipline,
                    level=number,
                    acquired=Acquired.CREATION,
                    free=True,
                )
                for number in range(1, LEVEL_NUMBERS[top] + 1)
            )
        return character

    return make
