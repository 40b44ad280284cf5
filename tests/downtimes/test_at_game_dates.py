"""Issue 16: an at-game request accepted the year 1. A moment typed for a game's request
(INF-04) must fall between the start of the previous game's day (four weeks before a first
game) and that game's downtime deadline; refused next to the field on the desk page, and with
400 naming `requested_at` in the API. The world's first game was on Saturday 9 March 2024 in
New York; its downtime is due by Tuesday 19 March 2024, 23:59 EDT."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from characters.models import Character, InfluenceSpend
from chronicle import rules
from chronicle import services as chronicle_services
from downtimes.models import DeskItem
from downtimes.services import desk as services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
YEAR_ONE = dt.datetime(1, 1, 1, 0, 0, tzinfo=dt.UTC)
BASE = "/api/chronicles/nightfall/desk-items/"


@pytest.fixture
def alice(make_character: Any) -> Character:
    return make_character("Lucien", player="player_alice", business=3)


def record(world: Any, alice: Character, requested_at: dt.datetime, key: str = "k") -> DeskItem:
    item, _created = services.at_game_request_record(
        cycle=world.game.cycle,
        character=alice,
        by=world.users["storyteller"],
        action="leave_city",
        influence="business",
        points=1,
        description="Drives to Chicago",
        requested_at=requested_at,
        key=key,
    )
    return item


GAME_DAY = dt.date(2024, 3, 9)
DEADLINE = dt.datetime(2024, 3, 19, 23, 59, tzinfo=NEW_YORK)


@pytest.mark.parametrize(
    ("moment", "previous", "ok"),
    [
        pytest.param(
            dt.datetime(2024, 3, 9, 22, 15, tzinfo=NEW_YORK), None, True, id="INF-04-game"
        ),
        pytest.param(DEADLINE, None, True, id="INF-04-deadline"),
        pytest.param(DEADLINE + dt.timedelta(minutes=1), None, False, id="INF-04-after"),
        pytest.param(dt.datetime(2024, 2, 10, 0, 0, tzinfo=NEW_YORK), None, True, id="INF-04-told"),
        pytest.param(dt.datetime(2024, 2, 9, 23, 59, tzinfo=NEW_YORK), None, False, id="INF-04-4w"),
        pytest.param(
            dt.datetime(2024, 2, 28, 12, 0, tzinfo=NEW_YORK),
            dt.date(2024, 3, 1),
            False,
            id="INF-04-before-previous",
        ),
        pytest.param(YEAR_ONE, None, False, id="INF-04-year-1"),
    ],
)
def test_rule(moment: dt.datetime, previous: dt.date | None, ok: bool) -> None:
    opens, closes = rules.at_game_window(GAME_DAY, previous, DEADLINE, NEW_YORK)
    if ok:
        rules.check_moment_in_window(moment, opens=opens, closes=closes, tz=NEW_YORK)
    else:
        with pytest.raises(ValueError, match="INF-04"):
            rules.check_moment_in_window(moment, opens=opens, closes=closes, tz=NEW_YORK)


def test_the_service_refuses_the_year_1_next_to_the_field(world: Any, alice: Character) -> None:
    with pytest.raises(ValidationError) as caught:
        record(world, alice, YEAR_ONE)
    assert "2024-02-10 00:00" in caught.value.message_dict["requested_at"][0]
    assert "2024-03-19 23:59" in caught.value.message_dict["requested_at"][0]
    assert not DeskItem.objects.exists()
    assert not InfluenceSpend.objects.exists()
    # A moment of the next cycle is refused too; one at the game is recorded.
    with pytest.raises(ValidationError):
        record(world, alice, DEADLINE + dt.timedelta(days=1))
    record(world, alice, dt.datetime(2024, 3, 9, 22, 15, tzinfo=NEW_YORK))
    assert DeskItem.objects.count() == 1


def test_the_window_starts_at_the_previous_game(world: Any, alice: Character) -> None:
    second = chronicle_services.game_create(
        chronicle=world.chronicle, date=dt.date(2024, 4, 13), place="Elysium"
    )
    _item, _created = services.at_game_request_record(
        cycle=second.cycle,
        character=alice,
        by=world.users["storyteller"],
        action="leave_city",
        description="Told before the game",
        requested_at=dt.datetime(2024, 3, 30, 20, 0, tzinfo=NEW_YORK),
        key="told",
    )
    with pytest.raises(ValidationError) as caught:
        services.at_game_request_record(
            cycle=second.cycle,
            character=alice,
            by=world.users["storyteller"],
            action="leave_city",
            description="Before the previous game",
            requested_at=dt.datetime(2024, 3, 8, 20, 0, tzinfo=NEW_YORK),
            key="early",
        )
    assert "requested_at" in caught.value.message_dict


def test_the_desk_page_shows_the_refusal_next_to_the_field(world: Any, alice: Character) -> None:
    client = world.client("storyteller")
    url = reverse("desk_at_game", args=[world.chronicle.slug])
    data = {
        "game": 1,
        "character": alice.pk,
        "action": "leave_city",
        "influence": "business",
        "points": 1,
        "description": "Drives to Chicago",
        "requested_at": "0001-01-01T00:00",
        "key": "abc",
    }
    refused = client.post(url, data)
    assert refused.status_code == 400
    html = refused.content.decode()
    # Next to the field: its input is marked invalid and the message follows it.
    before, field = html.split('name="requested_at"', 1)
    assert 'aria-invalid="true"' in field.split(">", 1)[0] + before[-300:]
    assert "Pick a moment of this game&#x27;s downtime" in field.split("</div>", 1)[0]
    assert not DeskItem.objects.exists()
    assert client.post(url, data | {"requested_at": "2024-03-09T22:15"}).status_code == 302


def test_the_api_answers_400_naming_the_field(world: Any, alice: Character) -> None:
    client = world.client("storyteller")
    body = {
        "game": 1,
        "character": alice.pk,
        "action": "leave_city",
        "description": "Drives to Chicago",
        "requested_at": "0001-01-01T00:00:00Z",
        "key": "k1",
    }
    refused = client.post(f"{BASE}at-game/", body, content_type="application/json")
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "invalid"
    assert "INF-04" in error["fields"]["requested_at"][0]
    assert not DeskItem.objects.exists()
    done = client.post(
        f"{BASE}at-game/",
        body | {"requested_at": "2024-03-09T22:15:00-05:00"},
        content_type="application/json",
    )
    assert done.status_code == 201


def test_a_record_dated_the_year_1_is_refused(world: Any, make_character: Any) -> None:
    """The storytellers' records (a drink's night, a death, ...) take dates too: page and API
    share the action forms, which refuse a date outside 1900-2199 next to the field."""
    from characters.models import BloodDrink

    pc = make_character("Lucien", player="player_alice")
    regnant = make_character("Regnant", player="player_bob")
    response = world.client("storyteller").post(
        f"/api/chronicles/nightfall/characters/{pc.pk}/records/drink/",
        {"night": "0001-01-01", "donors": [regnant.pk]},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "1900" in response.json()["error"]["fields"]["night"][0]
    assert not BloodDrink.objects.exists()
