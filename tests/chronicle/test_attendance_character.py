"""Issue 14 on the sign-in sheet: which character each player played (HAV-06; by default their
only active PC, never another player's), and black veins kept out of the game without a
storyteller's permission for that game (XP-04). Through the service, the page and the API."""

from __future__ import annotations

import datetime as dt
import json
import re
import zoneinfo
from collections.abc import Callable
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError

from characters.models import Character, Diablerie
from characters.rules import add_months, black_veins_show
from chronicle import services
from chronicle.models import Attendance
from chronicle.services import SignIn
from tests.conftest import World

pytestmark = pytest.mark.django_db

NY = zoneinfo.ZoneInfo("America/New_York")
GAME_DAY = dt.date(2024, 3, 9)  # the world's game 1
AT_THE_DOOR = dt.datetime(2024, 3, 9, 19, 0, tzinfo=NY)
URL = "/c/nightfall/games/1/sign-in/"
API = "/api/chronicles/nightfall/games/1/attendance/"


def _record(world: World, *lines: SignIn, game: Any = None) -> list[Attendance]:
    return services.attendance_record(
        game=game or world.game, lines=lines, by=world.users["storyteller"], now=AT_THE_DOOR
    )


def _diablerie(character: Character, world: World, occurred_on: dt.date) -> Diablerie:
    return Diablerie.objects.create(
        diablerist=character,
        victim_name="A Sabbat spy",
        victim_generation=9,
        occurred_on=occurred_on,
        black_veins_until=add_months(occurred_on, 6),
        recorded_by=world.users["storyteller"],
        recorded_at=AT_THE_DOOR,
    )


@pytest.fixture
def cast(world: World, make_character: Callable[..., Character]) -> dict[str, Any]:
    return {
        "alice": world.users["player_alice"].pk,
        "bob": world.users["player_bob"].pk,
        "lucien": make_character("Lucien", player="player_alice"),
        "bastien": make_character("Bastien", player="player_bob", clan="brujah"),
    }


# --- HAV-06: the character column -----------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "chosen", "outcome"),
    [
        pytest.param("", None, "lucien", id="HAV-06-defaults-to-the-only-active-pc"),
        pytest.param("", "lucien", "lucien", id="HAV-06-own-pc-chosen"),
        pytest.param("", "bastien", "own active", id="HAV-06-refuses-another-players-pc"),
        pytest.param("retired", "odile", "own active", id="HAV-06-refuses-a-retired-pc"),
        pytest.param("torpor", "odile", "own active", id="HAV-06-refuses-a-pc-in-torpor"),
        pytest.param("draft", "odile", "own active", id="HAV-06-refuses-a-draft"),
        pytest.param("npc", "odile", "own active", id="HAV-06-refuses-an-npc"),
    ],
)
def test_the_character_played(
    world: World,
    cast: dict[str, Any],
    make_character: Callable[..., Character],
    setup: str,
    chosen: str | None,
    outcome: str,
) -> None:
    if setup:
        # One active PC per player (XP-07): Alice's other character is out of play.
        odile = make_character("Odile", player="player_alice", status="retired")
        if setup == "draft":
            odile.approval, odile.status = "draft", "active"
        else:
            odile.status = setup
        odile.save(update_fields=["approval", "status"])
        cast["odile"] = odile
    line = SignIn(cast["alice"], True, True, character_id=cast[chosen].pk if chosen else None)
    if outcome in cast:
        _record(world, line)
        assert Attendance.objects.get().character == cast[outcome]
    else:
        with pytest.raises(ValidationError, match=f"player_alice .*{outcome}"):
            _record(world, line)
        assert not Attendance.objects.exists()


def test_a_player_without_a_character_signs_in_without_one(world: World) -> None:
    """GEN-01 / DT-04 still hold for a player with no PC (an NPC volunteer, say)."""
    _record(world, SignIn(world.users["player_alice"].pk, True, True))
    assert Attendance.objects.get().character is None


def test_a_new_character_is_signed_in_from_then_on(
    world: World, cast: dict[str, Any], make_character: Callable[..., Character]
) -> None:
    """HAV-06: Lucien falls into torpor and Alice plays Odile: the next sheet names Odile, and
    changing only the character of a saved line rewrites it."""
    _record(world, SignIn(cast["alice"], True, True))
    assert Attendance.objects.get().character == cast["lucien"]
    cast["lucien"].status = "torpor"
    cast["lucien"].save(update_fields=["status"])
    odile = make_character("Odile", player="player_alice")
    # The line names no character and the saved one is out of play: her only active one.
    _record(world, SignIn(cast["alice"], True, False))
    row = Attendance.objects.get()
    assert (row.character, row.waiver_signed) == (odile, False)


# --- XP-04: black veins at the door ---------------------------------------------------------


@pytest.mark.parametrize(
    ("diablerie_on", "shows"),
    [
        pytest.param(dt.date(2024, 1, 20), True, id="XP-04-diablerie-7-weeks-before-shows"),
        pytest.param(GAME_DAY, True, id="XP-04-diablerie-that-day-shows"),
        pytest.param(dt.date(2023, 9, 10), True, id="XP-04-last-day-before-fading-shows"),
        pytest.param(dt.date(2023, 9, 9), False, id="XP-04-faded-after-six-months"),
        pytest.param(dt.date(2024, 3, 10), False, id="XP-04-diablerie-after-the-game"),
    ],
)
def test_black_veins_show(diablerie_on: dt.date, shows: bool) -> None:
    until = add_months(diablerie_on, 6)
    assert black_veins_show([(diablerie_on, until)], on=GAME_DAY) is shows


@pytest.mark.parametrize(
    ("diablerie_on", "permit", "signed_in"),
    [
        pytest.param(dt.date(2024, 1, 20), None, False, id="XP-04-black-veins-refused"),
        pytest.param(dt.date(2024, 1, 20), False, False, id="XP-04-black-veins-not-permitted"),
        pytest.param(dt.date(2024, 1, 20), True, True, id="XP-04-storyteller-permits"),
        pytest.param(dt.date(2023, 9, 9), None, True, id="XP-04-faded-veins-need-nothing"),
    ],
)
def test_black_veins_at_the_sign_in(
    world: World,
    cast: dict[str, Any],
    diablerie_on: dt.date,
    permit: bool | None,
    signed_in: bool,
) -> None:
    _diablerie(cast["lucien"], world, diablerie_on)
    line = SignIn(cast["alice"], True, True, permit_black_veins=permit)
    if not signed_in:
        with pytest.raises(ValidationError) as refused:
            _record(world, line)
        (message,) = refused.value.messages
        assert "Lucien" in message and "black veins" in message and "XP-04" in message
        assert "Permit black veins" in message  # says how to let them in
        assert not Attendance.objects.exists()
        return
    _record(world, line)
    row = Attendance.objects.get()
    assert row.character == cast["lucien"]
    expected = world.users["storyteller"] if permit else None
    assert row.black_veins_permitted_by == expected


def test_permission_is_for_that_game_only(world: World, cast: dict[str, Any]) -> None:
    """XP-04: a permission given at game 1 does not let the veins into game 2."""
    _diablerie(cast["lucien"], world, dt.date(2024, 3, 1))
    _record(world, SignIn(cast["alice"], True, True, permit_black_veins=True))
    game2 = services.game_create(chronicle=world.chronicle, date=dt.date(2024, 3, 9))
    with pytest.raises(ValidationError, match="Lucien"):
        _record(world, SignIn(cast["alice"], True, True), game=game2)
    # On game 1, a line that says nothing of it keeps the permission; withdrawing refuses.
    _record(world, SignIn(cast["alice"], True, False))
    assert Attendance.objects.get(game=world.game).black_veins_permitted_by is not None
    with pytest.raises(ValidationError, match="Lucien"):
        _record(world, SignIn(cast["alice"], True, True, permit_black_veins=False))


def test_every_refusal_at_once_and_nothing_written(
    world: World, cast: dict[str, Any], make_character: Callable[..., Character]
) -> None:
    _diablerie(cast["bastien"], world, dt.date(2024, 2, 1))
    with pytest.raises(ValidationError) as refused:
        _record(
            world,
            SignIn(cast["alice"], True, True, character_id=cast["bastien"].pk),
            SignIn(cast["bob"], True, True),
        )
    assert len(refused.value.messages) == 2
    assert not Attendance.objects.exists()


# --- The page -------------------------------------------------------------------------------


def _form(page: str) -> dict[str, str]:
    """The inputs a browser sends from the drawn sheet: hidden fields, ticked boxes and each
    select's selected option."""
    fields = dict(re.findall(r'type="hidden" name="(was-[\w-]+)" value="([^"]*)"', page))
    fields |= {
        name: "on"
        for name in re.findall(r'name="((?:attended|waiver|permit)-\d+)"[^>]*checked', page)
    }
    for name, options in re.findall(
        r'<select name="(character-\d+)"[^>]*>(.*?)</select>', page, re.S
    ):
        chosen = re.search(r'<option value="(\d*)" selected', options)
        fields[name] = chosen.group(1) if chosen else ""
    return fields


def test_the_page_has_a_character_column_and_a_permit_box(
    world: World, cast: dict[str, Any]
) -> None:
    _diablerie(cast["bastien"], world, dt.date(2024, 2, 1))
    alice, bob = cast["alice"], cast["bob"]
    with time_machine.travel(AT_THE_DOOR, tick=False):
        client = world.client("storyteller")
        page = client.get(URL).content.decode()
        assert "Lucien" in page and "Bastien (black veins)" in page
        assert f'name="permit-{bob}"' in page and f'name="permit-{alice}"' not in page
        sheet = _form(page)
        assert sheet[f"character-{alice}"] == str(cast["lucien"].pk)  # the only PC, chosen
        ticks = {f"attended-{alice}": "on", f"attended-{bob}": "on", f"waiver-{bob}": "on"}
        refused = client.post(URL, sheet | ticks)
        assert refused.status_code == 400
        text = refused.content.decode()
        assert "Bastien (player_bob) has black veins showing" in text
        assert _form(text)[f"attended-{bob}"] == "on"  # the ticks are kept
        assert not Attendance.objects.exists()
        saved = client.post(URL, sheet | ticks | {f"permit-{bob}": "on"})
        assert saved.status_code == 302
        again = _form(client.get(URL).content.decode())
    rows = {a.player_id: a for a in Attendance.objects.all()}
    assert rows[alice].character == cast["lucien"] and rows[bob].character == cast["bastien"]
    assert rows[bob].black_veins_permitted_by == world.users["storyteller"]
    assert rows[alice].black_veins_permitted_by is None
    assert again[f"permit-{bob}"] == "on" and again[f"was-permit-{bob}"] == "1"


def test_the_page_names_no_character_for_a_player_without_one(world: World) -> None:
    alice = world.users["player_alice"].pk
    with time_machine.travel(AT_THE_DOOR, tick=False):
        client = world.client("storyteller")
        page = client.get(URL).content.decode()
        assert "No active character" in page and f'name="character-{alice}"' not in page
        sheet = _form(page)
        assert client.post(URL, sheet | {f"attended-{alice}": "on"}).status_code == 302
    assert Attendance.objects.get().character is None


# --- The API --------------------------------------------------------------------------------


def test_the_api_names_the_character_and_refuses_another_players(
    world: World, cast: dict[str, Any]
) -> None:
    _diablerie(cast["lucien"], world, dt.date(2024, 2, 1))
    client = world.client("storyteller")

    def put(*lines: dict[str, Any]) -> Any:
        with time_machine.travel(AT_THE_DOOR, tick=False):
            return client.put(
                API, data=json.dumps({"lines": list(lines)}), content_type="application/json"
            )

    theirs = put({"player_id": cast["alice"], "attended": True, "character_id": cast["bastien"].pk})
    assert theirs.status_code == 400
    error = theirs.json()["error"]
    assert error["code"] and "own active characters" in json.dumps(error)
    veins = put({"player_id": cast["alice"], "attended": True, "waiver_signed": True})
    assert veins.status_code == 400 and "Lucien" in json.dumps(veins.json())
    ok = put(
        {"player_id": cast["alice"], "attended": True, "permit_black_veins": True},
        {"player_id": cast["bob"], "attended": True, "waiver_signed": True},
    )
    assert ok.status_code == 200, ok.content
    lines = {line["username"]: line for line in ok.json()}
    assert lines["player_alice"]["character_id"] == cast["lucien"].pk
    assert lines["player_alice"]["black_veins_permitted"] is True
    assert lines["player_bob"]["character_id"] == cast["bastien"].pk
    assert lines["player_bob"]["black_veins_permitted"] is False


def test_the_door_pdf_marks_black_veins(world: World, cast: dict[str, Any]) -> None:
    """XP-04 on paper: the door sheet marks a character whose black veins show that day."""
    from tests.pdfs import text_of

    _diablerie(cast["bastien"], world, dt.date(2024, 2, 1))
    text = text_of(world.client("storyteller").get("/c/nightfall/games/1/sign-in.pdf"))
    assert "Bastien (black veins: enters only with permission)" in text
    assert "Lucien (black" not in text
