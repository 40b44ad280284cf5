"""Every page and endpoint of the chronicle app, as every persona (DESIGN.md "Who may see what").

Members of a chronicle read it; only its storytellers and admins change it (403 for players);
anyone outside it, including another chronicle's storyteller, gets 404: they may not learn that
the chronicle or its objects exist.
"""

from __future__ import annotations

import datetime as dt
import json
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import time_machine

from chronicle.models import Attendance, CycleStatus, Game, MailKind, Membership
from chronicle.services import SignIn, attendance_record, calendar, mail
from tests.conftest import PERSONAS, World

NY = zoneinfo.ZoneInfo("America/New_York")
GAME_NIGHT = dt.datetime(2024, 3, 9, 22, 0, tzinfo=NY)

MEMBERS = {"admin": 200, "storyteller": 200, "player_alice": 200, "player_bob": 200}
STRANGERS = {"outsider": 404, "other_storyteller": 404}
ANYONE = {"outsider": 200, "other_storyteller": 200}


def staff_only(ok: int) -> dict[str, int]:
    return {"admin": ok, "storyteller": ok, "player_alice": 403, "player_bob": 403, **STRANGERS}


def admin_only(ok: int) -> dict[str, int]:
    return {**staff_only(ok), "storyteller": 403}


def members(ok: int = 200) -> dict[str, int]:
    return {name: ok for name in MEMBERS} | STRANGERS


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    url: str
    expected: dict[str, int]
    anonymous: int
    body: dict[str, Any] = field(default_factory=dict)


GAME_FORM = {"date": "2024-04-06", "start_time": "19:30", "place": "Crypt", "notes": ""}

PAGES = [
    Case(
        "home",
        "get",
        "/",
        {name: 302 for name in PERSONAS} | {"outsider": 200},
        302,
    ),
    Case("dashboard", "get", "/c/nightfall/", members(), 302),
    Case("games", "get", "/c/nightfall/games/", members(), 302),
    Case("game", "get", "/c/nightfall/games/1/", members(), 302),
    Case("missing-game", "get", "/c/nightfall/games/99/", members(404), 302),
    Case("game-new-form", "get", "/c/nightfall/games/new/", staff_only(200), 302),
    Case("game-new", "post", "/c/nightfall/games/new/", staff_only(302), 302, GAME_FORM),
    Case("game-edit-form", "get", "/c/nightfall/games/1/edit/", staff_only(200), 302),
    Case("game-edit", "post", "/c/nightfall/games/1/edit/", staff_only(302), 302, GAME_FORM),
    Case("sign-in-sheet", "get", "/c/nightfall/games/1/sign-in/", staff_only(200), 302),
    Case("sign-in-save", "post", "/c/nightfall/games/1/sign-in/", staff_only(302), 302),
    # GEN-05: every member reads the settings and the changes announced; admins change them.
    Case("house-rules", "get", "/c/nightfall/settings/", members(), 302),
    Case("house-rules-save", "post", "/c/nightfall/settings/", admin_only(400), 302, {"x": "1"}),
    Case("cycles", "get", "/c/nightfall/cycles/", members(), 302),
    Case("cycle", "get", "/c/nightfall/cycles/1/", members(), 302),
    Case("cycle-close", "post", "/c/nightfall/cycles/1/close/", staff_only(302), 302),
    Case("people", "get", "/c/nightfall/people/", staff_only(200), 302),
    Case("invitations", "get", "/c/nightfall/invitations/", staff_only(200), 302),
    Case(
        "invitations-empty",
        "post",
        "/c/nightfall/invitations/",
        staff_only(400),
        302,
        {"addresses": "", "role": "player"},
    ),
    Case("member-remove-form", "get", "/c/nightfall/people/{alice}/remove/", staff_only(200), 302),
    Case(
        "member-role",
        "post",
        "/c/nightfall/people/{alice}/role/",
        admin_only(302),
        302,
        {"role": "player"},
    ),
    Case("leave-form", "get", "/c/nightfall/leave/", members(), 302),
    # Decisions (GEN-03 / GEN-04): every member lists them and may propose to their own body.
    Case("decisions", "get", "/c/nightfall/decisions/", members(), 302),
    Case("decision-new-form", "get", "/c/nightfall/decisions/new/", members(), 302),
    Case("decision-new-empty", "post", "/c/nightfall/decisions/new/", members(400), 302),
    Case("decision-missing", "get", "/c/nightfall/decisions/999999/", members(404), 302),
    Case("account", "get", "/account/", {name: 200 for name in PERSONAS}, 302),
    Case("birth-date-ask", "get", "/account/birth-date/", {name: 200 for name in PERSONAS}, 302),
    # Mail (issue 17): everyone's own inbox and choices; a message is its recipient's alone;
    # the chronicle's mail log is its admins'.
    Case("inbox", "get", "/inbox/", {name: 200 for name in PERSONAS}, 302),
    Case(
        "message-of-alice",
        "get",
        "/inbox/{message}/",
        {name: 404 for name in PERSONAS} | {"player_alice": 200},
        302,
    ),
    Case("inbox-read-all", "post", "/inbox/read-all/", {name: 302 for name in PERSONAS}, 302),
    Case("mail-preferences", "get", "/account/mail/", {name: 200 for name in PERSONAS}, 302),
    Case("mail-preferences-empty", "post", "/account/mail/", {n: 400 for n in PERSONAS}, 302),
    Case("mail-log", "get", "/c/nightfall/mail/", admin_only(200), 302),
    Case("mail-log-retry-missing", "post", "/c/nightfall/mail/999999/retry/", admin_only(404), 302),
    Case("calendar", "get", "/c/nightfall/calendar.ics", members(), 302),
    Case("calendar-renew", "post", "/c/nightfall/calendar/renew/", members(302), 302),
    # The private address is the key: it answers whoever holds it, logged in or not.
    Case("calendar-feed", "get", "/c/nightfall/calendar/{feed}.ics", MEMBERS | ANYONE, 200),
    Case(
        "calendar-feed-unknown",
        "get",
        "/c/nightfall/calendar/not-a-token.ics",
        {name: 404 for name in PERSONAS},
        404,
    ),
    Case("chronicle-new", "get", "/chronicles/new/", {name: 200 for name in PERSONAS}, 302),
    Case(
        "other-chronicle-game",
        "get",
        "/c/other-city/games/1/",
        {name: 404 for name in PERSONAS} | {"other_storyteller": 200},
        302,
    ),
]

API_GAME = {"date": "2024-04-06", "place": "Crypt"}
API_SHEET = {"lines": [{"player_id": 0, "attended": True, "waiver_signed": True}]}

ENDPOINTS = [
    Case("chronicles", "get", "/api/chronicles/", {name: 200 for name in PERSONAS}, 401),
    Case("chronicle", "get", "/api/chronicles/nightfall/", members(), 401),
    Case(
        "member-alice",
        "get",
        "/api/chronicles/nightfall/memberships/{alice}/",
        {**members(), "player_bob": 404},
        401,
    ),
    Case("memberships", "get", "/api/chronicles/nightfall/memberships/", members(), 401),
    Case("games", "get", "/api/chronicles/nightfall/games/", members(), 401),
    Case("game", "get", "/api/chronicles/nightfall/games/1/", members(), 401),
    Case("missing-game", "get", "/api/chronicles/nightfall/games/99/", members(404), 401),
    Case("game-create", "post", "/api/chronicles/nightfall/games/", staff_only(201), 401, API_GAME),
    Case(
        "game-create-invalid",
        "post",
        "/api/chronicles/nightfall/games/",
        staff_only(400),
        401,
        {"date": "next tuesday"},
    ),
    Case(
        "game-patch",
        "patch",
        "/api/chronicles/nightfall/games/1/",
        staff_only(200),
        401,
        {"place": "Crypt"},
    ),
    Case(
        "game-put",
        "put",
        "/api/chronicles/nightfall/games/1/",
        {name: 405 for name in MEMBERS} | STRANGERS,
        401,
        API_GAME,
    ),
    Case("attendance", "get", "/api/chronicles/nightfall/games/1/attendance/", members(), 401),
    Case(
        "attendance-put",
        "put",
        "/api/chronicles/nightfall/games/1/attendance/",
        staff_only(200),
        401,
        API_SHEET,
    ),
    Case("cycles", "get", "/api/chronicles/nightfall/cycles/", members(), 401),
    Case("cycle", "get", "/api/chronicles/nightfall/cycles/1/", members(), 401),
    Case("cycle-close", "post", "/api/chronicles/nightfall/cycles/1/close/", staff_only(200), 401),
    Case("invitations", "get", "/api/chronicles/nightfall/invitations/", staff_only(200), 401),
    Case(
        "invitations-empty",
        "post",
        "/api/chronicles/nightfall/invitations/",
        staff_only(400),
        401,
        {"invitees": []},
    ),
    Case(
        "member-role",
        "patch",
        "/api/chronicles/nightfall/memberships/{alice}/",
        admin_only(200),
        401,
        {"role": "player"},
    ),
    Case(
        "chronicle-create-invalid",
        "post",
        "/api/chronicles/",
        {name: 400 for name in PERSONAS},
        401,
        {"name": ""},
    ),
    Case(
        "invitation-accept-unknown",
        "post",
        "/api/invitations/accept/",
        {name: 400 for name in PERSONAS},
        401,
        {"token": "not-a-token"},
    ),
    Case(
        "other-chronicle",
        "get",
        "/api/chronicles/other-city/games/",
        {name: 404 for name in PERSONAS} | {"other_storyteller": 200},
        401,
    ),
]


@pytest.fixture(autouse=True)
def game_night() -> Iterator[None]:
    with time_machine.travel(GAME_NIGHT, tick=False):
        yield


def _grid(cases: list[Case]) -> list[Any]:
    return [
        pytest.param(case, persona, id=f"{case.name}-{persona or 'anonymous'}")
        for case in cases
        for persona in [*PERSONAS, None]
    ]


def _message_for_alice(world: World) -> int:
    delivery = mail.deliver(
        kind=MailKind.RECEIPT,
        user=world.users["player_alice"],
        chronicle=world.chronicle,
        key="personas:receipt",
        subject="Downtime received",
        body="Lucien's downtime is in.",
    )
    assert delivery.message is not None
    return delivery.message.pk


def _send(world: World, case: Case, persona: str | None, api: bool) -> Any:
    client = world.client(persona)
    body = dict(case.body)
    alice = world.users["player_alice"].pk
    feed = "{feed}"
    if "{feed}" in case.url:
        alice_membership = Membership.objects.get(user_id=alice, chronicle=world.chronicle)
        feed = calendar.calendar_feed_renew(membership=alice_membership)[0].token
    message = "{message}"
    if "{message}" in case.url:
        message = str(_message_for_alice(world))
    url = case.url.format(alice=alice, feed=feed, message=message)
    if case.name.startswith("sign-in-save"):
        body = {f"was-{alice}": "00", f"attended-{alice}": "on", f"waiver-{alice}": "on"}
    if case.name == "attendance-put":
        body = {"lines": [{**API_SHEET["lines"][0], "player_id": world.users["player_bob"].pk}]}
    call = getattr(client, case.method)
    if api and case.method != "get":
        return call(url, data=json.dumps(body), content_type="application/json")
    return call(url, data=body) if body or case.method == "post" else call(url)


@pytest.mark.parametrize(("case", "persona"), _grid(PAGES))
def test_pages(world: World, case: Case, persona: str | None) -> None:
    response = _send(world, case, persona, api=False)
    expected = case.expected[persona] if persona else case.anonymous
    assert response.status_code == expected, response.content[:300]
    if persona is None and expected == 302:
        assert response["Location"].startswith("/accounts/login/?next=")
    if expected == 302 and case.name == "sign-in-save" and persona:
        assert Attendance.objects.filter(game=world.game).count() == 1


@pytest.mark.parametrize(("case", "persona"), _grid(ENDPOINTS))
def test_endpoints(world: World, case: Case, persona: str | None) -> None:
    response = _send(world, case, persona, api=True)
    expected = case.expected[persona] if persona else case.anonymous
    assert response.status_code == expected, response.content[:300]
    if expected >= 400:
        error = response.json()["error"]
        assert error["code"] and error["message"]
        # A stranger is stopped at the chronicle, with the body a missing chronicle gets.
        if expected == 404 and persona in STRANGERS:
            assert error == {"code": "not_found", "message": "No such chronicle."}


def test_writes_by_players_change_nothing(world: World) -> None:
    client = world.client("player_alice")
    client.post("/c/nightfall/games/new/", GAME_FORM)
    client.post("/api/chronicles/nightfall/games/", API_GAME, content_type="application/json")
    client.post("/c/nightfall/cycles/1/close/")
    assert Game.objects.filter(chronicle=world.chronicle).count() == 1
    world.game.cycle.refresh_from_db()
    assert world.game.cycle.status == CycleStatus.OPEN


def test_a_player_sees_only_their_own_line_of_the_sheet(world: World) -> None:
    attendance_record(
        game=world.game,
        lines=[
            SignIn(world.users["player_alice"].pk, True, True),
            SignIn(world.users["player_bob"].pk, True, False),
        ],
        by=world.users["storyteller"],
    )
    page = world.client("player_alice").get("/c/nightfall/games/1/").content.decode()
    assert "player_alice" in page and "player_bob" not in page
    rows = world.client("player_alice").get("/api/chronicles/nightfall/games/1/attendance/").json()
    assert [row["username"] for row in rows] == ["player_alice"]
    staff_rows = (
        world.client("storyteller").get("/api/chronicles/nightfall/games/1/attendance/").json()
    )
    assert sorted(row["username"] for row in staff_rows) == ["player_alice", "player_bob"]


def test_roster_is_staff_only(world: World) -> None:
    players_view = world.client("player_bob").get("/api/chronicles/nightfall/memberships/").json()
    assert [m["username"] for m in players_view["results"]] == ["player_bob"]
    staff_view = world.client("admin").get("/api/chronicles/nightfall/memberships/").json()
    assert {m["username"] for m in staff_view["results"]} == {
        "admin",
        "storyteller",
        "player_alice",
        "player_bob",
    }


def test_no_chronicle_sees_anothers_data(world: World) -> None:
    mine = world.client("storyteller").get("/api/chronicles/").json()
    assert [c["slug"] for c in mine["results"]] == ["nightfall"]
    theirs = world.client("other_storyteller").get("/api/chronicles/").json()
    assert [c["slug"] for c in theirs["results"]] == ["other-city"]
    assert world.client("outsider").get("/api/chronicles/").json()["results"] == []
    dashboard = world.client("storyteller").get("/c/nightfall/").content.decode()
    assert "other_storyteller" not in dashboard and "Other City" not in dashboard
    # A stranger's sign-in sheet write is refused before its input is even read.
    response = world.client("other_storyteller").put(
        "/api/chronicles/nightfall/games/1/attendance/",
        data=json.dumps({"lines": "garbage"}),
        content_type="application/json",
    )
    assert response.status_code == 404
    assert not Attendance.objects.filter(game=world.game).exists()


@time_machine.travel(dt.datetime(2024, 3, 20, 12, 0, tzinfo=NY), tick=False)
def test_admin_changes_a_house_rule(world: World) -> None:
    """GEN-05: game 1 has been played and game 2 is next, so the change is published for
    game 3; today's settings stay."""
    from chronicle.services import game_create

    game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    game_create(chronicle=world.chronicle, date=dt.date(2024, 5, 4))
    client = world.client("admin")
    form = client.get("/c/nightfall/settings/").context["form"]
    data = {name: value for name, value in form.initial.items()}
    data.update({name: field.initial for name, field in form.fields.items()})
    data = {k: v for k, v in data.items() if v is not False and v is not None}  # unticked
    data["willpower_cost"] = "4"
    data["ventrue_herd_mode"] = "half_yield"
    data["effective_game"] = "3"
    response = client.post("/c/nightfall/settings/", data)
    assert response.status_code == 302
    world.chronicle.refresh_from_db()
    assert world.chronicle.house_rule_overrides == {}
    assert world.chronicle.house_rules.willpower_cost == 3
    in_force = world.chronicle.house_rules_for(3)
    assert (in_force.willpower_cost, in_force.ventrue_herd_mode) == (4, "half_yield")

    data["willpower_cost"] = "-2"
    response = client.post("/c/nightfall/settings/", data)
    assert response.status_code == 400
    assert "greater than or equal to 0" in response.content.decode()
    world.chronicle.refresh_from_db()
    assert world.chronicle.house_rules_for(3).willpower_cost == 4
