"""/health, the demo chronicle, the schema, and the API's one error shape."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client

from chronicle.celery import app as celery_app
from chronicle.management.commands.seed_demo import DEMO_PASSWORD, DEMO_USERS
from chronicle.models import Attendance, Chronicle, Cycle, CycleStatus, Game, Membership, Role
from tests.conftest import World

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_health_reports_database_and_broker() -> None:
    response = Client().get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok"}


@pytest.mark.django_db
def test_health_says_which_part_is_down(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(celery_app, "connection_for_write", refuse)
    response = Client().get("/health")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok"
    assert body["broker"].startswith("error")


@pytest.mark.django_db
def test_seed_demo_is_idempotent() -> None:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    call_command("seed_demo", stdout=out)
    chronicle = Chronicle.objects.get(slug="elysium-nights")
    roles = list(Membership.objects.filter(chronicle=chronicle).values_list("role", flat=True))
    assert roles.count(Role.ADMIN) == 1
    assert roles.count(Role.STORYTELLER) == 2
    assert roles.count(Role.PLAYER) == 6
    assert Game.objects.filter(chronicle=chronicle).count() == 3
    assert Attendance.objects.filter(game__chronicle=chronicle).count() == 15
    statuses = list(
        Cycle.objects.filter(chronicle=chronicle)
        .order_by("deadline_at")
        .values_list("status", flat=True)
    )
    # The older games' cycles were settled on paper (downtimes/demo.py): released, unpaid.
    assert statuses == [CycleStatus.RELEASED, CycleStatus.RELEASED, CycleStatus.OPEN]
    printed = out.getvalue()
    assert "st_lucia" in printed and "nightfall-demo-2026" in printed
    login = Client().post(
        "/accounts/login/", {"username": "st_lucia", "password": "nightfall-demo-2026"}
    )
    assert login.status_code == 302 and login["Location"] == "/"


@pytest.mark.django_db(transaction=True)
def test_seeding_is_a_few_lines_ending_with_the_logins(settings: Any, tmp_path: Path) -> None:
    """The demo's e-mails go to files under var/mail/, counted in one line, and the logins
    are the last lines, so `make run` shows them just before the server starts. (Committed
    for real: the mails leave after commit.)"""
    settings.VAR_DIR = tmp_path
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    lines = out.getvalue().splitlines()
    logins = [f"  {username:<10} {role}" for username, role in DEMO_USERS]
    assert lines[-len(logins) :] == logins
    assert lines[-len(logins) - 1] == f"Demo logins (password {DEMO_PASSWORD}):"
    told = lines[: -len(logins) - 1]
    assert len(told) <= 3, told
    assert told[0] == "Created the demo chronicle 'Elysium Nights Theater'."
    # Each written message ends with a line of 79 dashes (Django's file backend).
    written = [path.read_text() for path in (tmp_path / "mail").iterdir()]
    messages = sum(text.count("\n" + "-" * 79 + "\n") for text in written)
    assert messages > 0 and "Subject: " in written[0]
    assert f"{messages} demo e-mails were written to {tmp_path / 'mail'}/ (not sent)." in told
    assert mail.outbox == []  # none reached the (test) mail backend itself
    assert "Subject:" not in out.getvalue()

    again = io.StringIO()
    call_command("seed_demo", stdout=again)
    lines = again.getvalue().splitlines()
    assert lines[0] == "Found the demo chronicle 'Elysium Nights Theater'."
    assert lines[1] == f"Demo logins (password {DEMO_PASSWORD}):"  # no mail this time
    assert lines[2:] == logins


def _make_run(*args: str) -> list[str]:
    """What `make run` would do, in order (`make -n` prints the recipe without running it)."""
    done = subprocess.run(
        ["make", "-n", "run", *args], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


@pytest.mark.parametrize(("args", "port"), [((), "8000"), (("PORT=8001",), "8001")])
def test_make_run_serves_on_the_asked_port_and_ends_with_the_logins(
    args: tuple[str, ...], port: str
) -> None:
    steps = _make_run(*args)

    def first(words: str) -> int:
        return next(i for i, line in enumerate(steps) if words in line)

    url = first(f"http://127.0.0.1:{port}/")
    seed = first("manage.py seed_demo")
    server = first(f"runserver 127.0.0.1:{port}")
    assert url < seed < server
    # Nothing between the demo's logins and the server's own lines: the worker logs to a file.
    worker = first("celery -A chronicle worker")
    assert ">>var/worker.log 2>&1" in " ".join(steps[worker : server + 1])
    assert not any(f"127.0.0.1:{other}" in " ".join(steps) for other in {"8000", "8001"} - {port})


def test_schema_and_docs_are_served(world: World) -> None:
    client = world.client("player_alice")
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/chronicles/{slug}/games/{number}/attendance/" in paths
    assert client.get("/api/docs/").status_code == 200
    # Outside DEBUG (as here) the schema is behind a login unless API_SCHEMA_PUBLIC=1.
    assert Client().get("/api/schema/").status_code == 401


def test_schema_validates_without_warnings() -> None:
    out = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    assert "openapi" in out.getvalue()


def test_not_found_looks_the_same_for_missing_and_forbidden(world: World) -> None:
    stranger = world.client("outsider").get("/api/chronicles/nightfall/games/1/")
    member_missing = world.client("player_alice").get("/api/chronicles/no-such-city/games/1/")
    assert stranger.status_code == member_missing.status_code == 404
    assert (
        stranger.json()
        == member_missing.json()
        == {"error": {"code": "not_found", "message": "No such chronicle."}}
    )


def test_unknown_api_path_answers_json(world: World) -> None:
    response = world.client("player_alice").get("/api/no-such-thing/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_validation_errors_name_the_field(world: World) -> None:
    response = world.client("storyteller").post(
        "/api/chronicles/nightfall/games/",
        {"date": "2024-03-09", "number": 1},
        content_type="application/json",
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "already a game 1" in error["fields"]["number"][0]


def test_malformed_json_is_a_clear_400(world: World) -> None:
    response = world.client("storyteller").post(
        "/api/chronicles/nightfall/games/", "{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("/c/nightfall/games/99999999999999999999/", id="page-huge-game"),
        pytest.param("/c/nightfall/cycles/99999999999999999999/", id="page-huge-cycle"),
        pytest.param("/api/chronicles/nightfall/games/99999999999999999999/", id="api-huge-game"),
        pytest.param("/api/chronicles/nightfall/cycles/2147483648/", id="api-huge-cycle"),
        pytest.param(f"/api/chronicles/nightfall/memberships/{2**63}/", id="api-huge-member"),
    ],
)
def test_numbers_beyond_the_database_are_404(world: World, url: str) -> None:
    assert world.client("storyteller").get(url).status_code == 404


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        pytest.param({"date": "2024-04-06", "number": 2**40}, "number", "less than", id="huge"),
        pytest.param({"date": "9999-12-30"}, "date", "between 1970 and 2199", id="far-date"),
        pytest.param({"date": "0001-01-01"}, "date", "between 1970 and 2199", id="year-one"),
        pytest.param({"date": "2024-02-30"}, "date", "Date has wrong format", id="no-such-day"),
        pytest.param({"date": "2024-04-06", "place": "x" * 201}, "place", "200", id="long"),
    ],
)
def test_bad_game_input_is_a_400_naming_the_field(
    world: World, body: dict[str, Any], field: str, words: str
) -> None:
    response = world.client("storyteller").post(
        "/api/chronicles/nightfall/games/", body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert words in " ".join(response.json()["error"]["fields"][field])


def test_bad_game_form_keeps_what_was_typed(world: World) -> None:
    response = world.client("storyteller").post(
        "/c/nightfall/games/new/",
        {"date": "9999-12-30", "place": "The Old Theater", "notes": "bring capes"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "between 1970 and 2199" in page
    assert 'value="The Old Theater"' in page and "bring capes" in page


def test_attendance_api_refuses_strangers_by_name(world: World) -> None:
    response = world.client("storyteller").put(
        "/api/chronicles/nightfall/games/1/attendance/",
        {"lines": [{"player_id": world.users["outsider"].pk, "attended": True}]},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "Only players of this chronicle" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("query", "status"),
    [
        pytest.param("limit=99999999999999999999999", 200, id="huge-limit-capped"),
        pytest.param("offset=99999999999999999999", 400, id="huge-offset"),
        pytest.param(f"offset={2**63}", 400, id="offset-past-bigint"),
        # Issue 16: an invalid value answers 400, never a silent default.
        pytest.param("limit=abc", 400, id="nonsense-limit-refused"),
    ],
)
def test_paging_numbers_never_reach_the_database_unchecked(
    world: World, query: str, status: int
) -> None:
    response = world.client("storyteller").get(f"/api/chronicles/nightfall/games/?{query}")
    assert response.status_code == status, response.content
    if status == 400:
        assert query.split("=")[0] in response.json()["error"]["fields"]


def test_a_games_number_cannot_change(world: World) -> None:
    client = world.client("storyteller")
    url = "/api/chronicles/nightfall/games/1/"
    response = client.patch(url, {"number": 7}, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["number"] == ["A game's number cannot change."]
    same = client.patch(url, {"number": 1, "place": "Crypt"}, content_type="application/json")
    assert same.status_code == 200 and same.json()["place"] == "Crypt"


@pytest.mark.django_db
def test_a_bad_host_header_is_a_400_not_a_crash(settings: Any) -> None:
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["chronicle.example.org"]
    response = Client(raise_request_exception=False).get("/c/x/", HTTP_HOST="evil.example.com")
    assert response.status_code == 400
