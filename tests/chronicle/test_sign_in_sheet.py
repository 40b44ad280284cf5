"""The sign-in sheet page on game night: two storytellers at the door, and a refused save."""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Callable
from typing import Any

import time_machine

from chronicle import services
from chronicle.models import Attendance, Role
from tests.conftest import World

NY = zoneinfo.ZoneInfo("America/New_York")


def _form(page: str) -> dict[str, str]:
    """The hidden and ticked inputs of the drawn sheet, as a browser would send them."""
    fields = dict(re.findall(r'name="(was-\d+)" value="(\d\d)"', page))
    fields |= {
        name: "on" for name in re.findall(r'name="((?:attended|waiver)-\d+)"[^>]*checked', page)
    }
    return fields


def test_two_storytellers_at_the_door_keep_each_others_ticks(world: World) -> None:
    alice, bob = world.users["player_alice"].pk, world.users["player_bob"].pk
    url = "/c/nightfall/games/1/sign-in/"
    with time_machine.travel(dt.datetime(2024, 3, 9, 19, 0, tzinfo=NY), tick=False):
        door_a, door_b = world.client("storyteller"), world.client("admin")
        sheet_a = _form(door_a.get(url).content.decode())
        sheet_b = _form(door_b.get(url).content.decode())
        assert sheet_a == sheet_b == {f"was-{alice}": "00", f"was-{bob}": "00"}

        door_a.post(url, sheet_a | {f"attended-{alice}": "on", f"waiver-{alice}": "on"})
        # B's page still shows Alice absent; B ticks only Bob.
        door_b.post(url, sheet_b | {f"attended-{bob}": "on"})

    sheet = dict(
        Attendance.objects.filter(game=world.game).values_list("player_id", "waiver_signed")
    )
    assert sheet == {alice: True, bob: False}


def test_a_refused_save_keeps_the_ticks(world: World) -> None:
    alice = world.users["player_alice"].pk
    url = "/c/nightfall/games/1/sign-in/"
    # The day before the game: the service refuses, the page says why and keeps the boxes.
    with time_machine.travel(dt.datetime(2024, 3, 8, 19, 0, tzinfo=NY), tick=False):
        client = world.client("storyteller")
        sheet = _form(client.get(url).content.decode())
        response = client.post(url, sheet | {f"attended-{alice}": "on", f"waiver-{alice}": "on"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "attendance can be recorded from that day on" in page
    assert _form(page) == sheet | {f"attended-{alice}": "on", f"waiver-{alice}": "on"}
    assert not Attendance.objects.exists()


def test_a_player_added_after_the_page_was_drawn_is_left_alone(
    world: World, make_user: Callable[..., Any]
) -> None:
    url = "/c/nightfall/games/1/sign-in/"
    with time_machine.travel(dt.datetime(2024, 3, 9, 19, 0, tzinfo=NY), tick=False):
        door_a, door_b = world.client("storyteller"), world.client("admin")
        sheet_a = _form(door_a.get(url).content.decode())
        late = make_user("late_player")
        services.membership_add(chronicle=world.chronicle, user=late, role=Role.PLAYER)
        door_b.post(url, _form(door_b.get(url).content.decode()) | {f"attended-{late.pk}": "on"})
        door_a.post(url, sheet_a)  # A's page never showed the late player
    assert Attendance.objects.filter(game=world.game, player=late).exists()
