"""The authorization matrix (issue 16): one table, tests/authz_matrix.txt, says for every URL
pattern and every API operation, method by method, what each of six personas gets.

- Every URL pattern (tests/crawl.py walks them) with every method its view accepts, and every
  operation of the served schema (path + method), has exactly one row; a row whose route is gone
  fails too. Adding a route means adding its line.
- Every cell runs against two chronicles, each built as the secrecy crawls' world
  (tests/crawl_world.py): the path's parameters are that chronicle's objects, the owner's first
  (Lucien, his Loft, his open draft...), asked for by that chronicle's personas. The outsider is a
  member of the OTHER chronicle (chronicle A's: one of B's storytellers; B's: A's admin).
  A route outside any chronicle (the account, the admin site) runs once, as A's personas.
- Writes send an empty body (a form post, or `{}` to the API; BODIES holds the few minimal
  bodies needed where a view validates before it looks for the owner) inside a savepoint rolled
  back after the request, so no cell changes what the next one sees. Never a 500.

Table cells are a status or alternatives ("400/409"); a refusal (401/403/404) and an allowance
(200/302/400...) must differ between personas where the table says so.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.db import transaction
from django.http import HttpResponse
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls import path as url
from django.urls.resolvers import RegexPattern
from django.views.decorators.http import require_GET

from characters.forms.staff import ACTION_FORMS
from chronicle import services as chronicle_services
from chronicle.models import Role
from downtimes.models import ReportPick
from havens.models import ReinforcementAttack, Search
from tests import crawl, crawl_world
from tests.conftest import World

TABLE = Path(__file__).with_name("authz_matrix.txt")
PERSONAS = ("anon", "owner", "player", "st", "admin", "outsider")
WRITES = ("POST", "PUT", "PATCH", "DELETE")
HTTP = ("GET", *WRITES)


# --- The routes and the table -----------------------------------------------------------------


def key(route: str) -> str:
    """A URL pattern's route as the table writes it: "/c/{slug}/havens/{pk}/", DRF's regex
    routes ("api/^chronicles/(?P<slug>[-\\w]+)/$") the same way."""
    route = route.replace("^", "").replace("$", "")
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", route)
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def _declared(view: Any) -> list[str]:
    """The methods `require_http_methods` (or `require_POST`...) allow, found in a wrapper's
    closure (as tests/crawl_world.py finds them); [] when the view does not say."""
    for _ in range(10):
        for cell in getattr(view, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if (
                isinstance(value, list | tuple)
                and value
                and all(isinstance(m, str) and m in crawl_world.HTTP_METHODS for m in value)
            ):
                return [m for m in HTTP if m in value]
        view = getattr(view, "__wrapped__", None)
        if view is None:
            break
    return []


def methods(pattern: URLPattern) -> list[str]:
    """The methods a route's view answers: a viewset's actions, a class's handlers, a function's
    declared methods; a function that declares none is tried with GET and POST."""
    view = pattern.callback
    actions = getattr(view, "actions", None)
    if actions:
        return [m for m in HTTP if m.lower() in actions]
    cls = getattr(view, "view_class", None) or getattr(view, "cls", None)
    if cls is not None:
        return [m for m in HTTP if m.lower() in cls.http_method_names and hasattr(cls, m.lower())]
    return _declared(view) or ["GET", "POST"]


def endpoints(resolver: URLResolver | None = None) -> dict[tuple[str, str], URLPattern]:
    """(route, method) -> pattern for every URL pattern; a route listed twice is served by its
    first pattern, as the resolver does."""
    found: dict[tuple[str, str], URLPattern] = {}
    for route, pattern in crawl.patterns(resolver):
        for method in methods(pattern):
            found.setdefault((key(route), method), pattern)
    return found


@dataclass(frozen=True)
class Row:
    route: str
    method: str
    expected: dict[str, frozenset[int]]
    line: int


def table() -> dict[tuple[str, str], Row]:
    rows: dict[tuple[str, str], Row] = {}
    for number, text in enumerate(TABLE.read_text().splitlines(), start=1):
        text = text.split("#", 1)[0].strip()
        if not text:
            continue
        route, method, *cells = text.split()
        assert len(cells) == len(PERSONAS), f"authz_matrix.txt:{number}: {len(cells)} cells"
        assert (route, method) not in rows, f"authz_matrix.txt:{number}: a second row"
        expected = {
            p: frozenset(int(c) for c in cell.split("/"))
            for p, cell in zip(PERSONAS, cells, strict=True)
        }
        rows[route, method] = Row(route, method, expected, number)
    return rows


def schema_operations() -> set[tuple[str, str]]:
    """(route without parameter names, METHOD) for every operation of the served schema."""
    from drf_spectacular.generators import SchemaGenerator

    with contextlib.redirect_stderr(io.StringIO()):  # its warnings are not this test's
        schema = SchemaGenerator().get_schema(request=None, public=True)
    return {
        (re.sub(r"\{\w+\}", "{}", path), method.upper())
        for path, operations in schema["paths"].items()
        for method in operations
        if method.upper() in HTTP
    }


def _unnamed(route: str) -> str:
    return re.sub(r"\{\w+\}", "{}", route)


def uncovered(
    resolver: URLResolver | None = None,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(routes and methods without a row, rows without a route)."""
    rows, served = table(), endpoints(resolver)
    return sorted(set(served) - set(rows)), sorted(set(rows) - set(served))


def test_every_route_and_method_has_a_row() -> None:
    rows = table()
    missing, stale = uncovered()
    assert not missing, "routes without a row in tests/authz_matrix.txt:\n" + "\n".join(
        f"{route} {method}" for route, method in missing
    )
    assert not stale, "rows in tests/authz_matrix.txt with no route:\n" + "\n".join(
        f"{route} {method} (line {rows[route, method].line})" for route, method in stale
    )


def test_a_route_added_without_its_row_fails() -> None:
    """The check above, on the project's URLs plus one page nobody wrote a row for, and minus
    the home page whose rows stay."""

    def unlisted(request: Any, slug: str) -> HttpResponse:
        return HttpResponse()

    urls = [p for p in get_resolver().url_patterns if getattr(p, "name", None) != "home"]
    urls.append(url("c/<slug:slug>/unlisted/", require_GET(unlisted)))
    missing, stale = uncovered(URLResolver(RegexPattern(r"^/"), urls))
    before_missing, before_stale = uncovered()
    assert set(missing) - set(before_missing) == {("/c/{slug}/unlisted/", "GET")}
    assert set(stale) - set(before_stale) == {("/", "GET"), ("/", "POST")}


def test_every_api_operation_has_a_row() -> None:
    rows = {(_unnamed(route), method) for route, method in table()}
    missing = sorted(schema_operations() - rows)
    assert not missing, "API operations without a row in tests/authz_matrix.txt:\n" + "\n".join(
        f"{route} {method}" for route, method in missing
    )


# --- The two chronicles and their personas ----------------------------------------------------


@dataclass
class Side:
    """One chronicle's world, its path values and its six personas' clients."""

    rich: crawl_world.Rich
    clients: dict[str, Client]
    cookies: dict[str, Any]

    def values(self, route: str) -> dict[str, str]:
        ids = self.rich.ids
        # The open cycle's game, but the released one's where outcomes are asked for.
        cycle = self.rich.first if "/outcomes/" in route else self.rich.second
        numbers = {"number": cycle.game.number}
        values: dict[str, str] = {"slug": self.rich.world.chronicle.slug}
        for name in crawl.params(route.replace("{", "<").replace("}", ">")):
            if name in values:
                continue
            before = _segment(route, name)
            if name in ("number", "game_number") or before in crawl_world.NUMBERS:
                values[name] = str(numbers["number"])
            elif name == "token":
                values[name] = self.rich.token
            elif name == "action":
                values[name] = "transfer"
            elif name == "kind":
                values[name] = sorted(ACTION_FORMS)[0]
            elif name in SPECIAL:
                values[name] = SPECIAL[name]
            else:
                known = ids.get(before) or ids.get(FIRST_OF.get(name, ""), [])
                values[name] = str(known[0]) if known else "0"
        return values


# Parameters that name no object of the world: a value that answers its "not found".
SPECIAL = {
    "uidb64": "MQ",
    "job": "no-such-job",
    "rest": "no/such/endpoint/",
    "app_label": "auth",
    "object_id": "1",
    "content_type_id": "1",
}
# A parameter whose segment names nothing in the world: the kind of object it is.
FIRST_OF = {"user_id": "people", "character_id": "characters", "message_id": "inbox"}


def _segment(route: str, name: str) -> str:
    match = re.search(rf"([\w-]+)/\{{{name}\}}", route)
    return match.group(1) if match else ""


def _client(user: Any) -> Client:
    client = Client(raise_request_exception=False)
    if user is not None:
        client.force_login(user)
    return client


def _second_world(world: World, make_character: Callable[..., Any], make_user: Any) -> World:
    """Chronicle B ("other-city") with its own admin, storyteller and two players, built with
    the same objects as chronicle A."""
    names = {"admin": Role.ADMIN, "storyteller": Role.STORYTELLER}
    names |= {"player_alice": Role.PLAYER, "player_bob": Role.PLAYER}
    users = {}
    for name, role in names.items():
        users[name] = world.users[f"b_{name}"] = make_user(f"b_{name}")
        chronicle_services.membership_add(chronicle=world.other, user=users[name], role=role)
    return World(
        chronicle=world.other,
        other=world.chronicle,
        users=users,
        game=world.other_game,
        other_game=world.game,
    )


def _side(world: World, rich: crawl_world.Rich, outsider: Any) -> Side:
    users = {
        "anon": None,
        "owner": world.users["player_alice"],
        "player": world.users["player_bob"],
        "st": world.users["storyteller"],
        "admin": world.users["admin"],
        "outsider": outsider,
    }
    # The open draft first: the owner's writes land on something still writable.
    submissions = rich.ids["submissions"]
    submissions.insert(0, submissions.pop(1))
    rich.add("report-picks", *ReportPick.objects.filter(cycle=rich.first))
    clients = {persona: _client(user) for persona, user in users.items()}
    cookies = {persona: copy.deepcopy(c.cookies) for persona, c in clients.items()}
    return Side(rich=rich, clients=clients, cookies=cookies)


@pytest.fixture
def sides(world: World, make_character: Callable[..., Any], make_user: Any) -> Iterator[list[Side]]:
    rich_a = crawl_world.build(world, make_character)
    # What is unique across chronicles gets A's own value before B is built.
    Search.objects.filter(party_code="CRAWL1").update(party_code="CRAWLA")
    ReinforcementAttack.objects.filter(key="crawl").update(key="crawl-a")
    other = _second_world(world, make_character, make_user)

    def make_b(name: str, *, player: str | None = "player_alice", **fields: Any) -> Any:
        return make_character(
            name, player=player and f"b_{player}", chronicle=world.other, **fields
        )

    rich_b = crawl_world.build(other, make_b)
    with time_machine.travel(crawl_world.NOW, tick=True):
        yield [
            _side(world, rich_a, world.users["other_storyteller"]),
            _side(other, rich_b, world.users["admin"]),
        ]


# Operations that check their body before the object's owner: a minimal valid body, so that the
# owner (past the check) and the others (404) differ.
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("/api/chronicles/{slug}/submissions/{pk}/save/", "POST"): {"version": 1},
    ("/api/chronicles/{slug}/submissions/{pk}/powers/", "POST"): {
        "key": "authz",
        "power": "authz",
        "description": "A minimal body",
    },
    ("/api/chronicles/{slug}/submissions/{pk}/loans/", "POST"): {
        "lender_name": "Nobody",
        "influence": "business",
        "points": 1,
    },
}


def _send(side: Side, persona: str, method: str, route: str) -> tuple[str, int]:
    path = crawl.fill(route[1:].replace("{", "<").replace("}", ">"), side.values(route))
    assert path is not None, route
    client = side.clients[persona]
    client.cookies = copy.deepcopy(side.cookies[persona])
    with transaction.atomic():
        if method == "GET":
            response = client.get(path)
        elif route.startswith("/api/"):
            body = json.dumps(BODIES.get((route, method), {}))
            response = client.generic(method, path, body, content_type="application/json")
        elif method == "POST":
            response = client.post(path, {})
        else:
            response = client.generic(method, path, b"")
        transaction.set_rollback(True)
    return path, response.status_code


def _sides(sides: list[Side], route: str) -> list[Side]:
    """Both chronicles for a route inside one; a route outside any chronicle (the account, the
    admin site...) names none of their objects: chronicle A's personas ask for it."""
    return sides if "{slug}" in route else sides[:1]


# AUTHZ_MATRIX_DRAFT=<file> writes what every route answers today, as rows to read (never to
# paste unread) when adding a route: each cell the statuses seen in chronicles A and B.
DRAFT = os.environ.get("AUTHZ_MATRIX_DRAFT")


def _draft(sides: list[Side]) -> None:
    lines = []
    for route, method in sorted(endpoints()):
        cells = []
        for persona in PERSONAS:
            seen = {_send(side, persona, method, route)[1] for side in _sides(sides, route)}
            cells.append("/".join(map(str, sorted(seen))))
        lines.append(f"{route:<76} {method:<6} " + " ".join(f"{c:<7}" for c in cells).rstrip())
    Path(DRAFT or "").write_text("\n".join(lines) + "\n")


@pytest.mark.django_db
def test_every_cell_of_the_matrix(sides: list[Side]) -> None:
    if DRAFT:
        _draft(sides)
    rows = table()
    wrong: list[str] = []
    for (route, method), row in sorted(rows.items()):
        for name, side in zip("AB", _sides(sides, route), strict=False):
            for persona in PERSONAS:
                path, status = _send(side, persona, method, route)
                if status not in row.expected[persona] or status >= 500:
                    wrong.append(
                        f"line {row.line}: {method} {path} as {persona} ({name}): {status},"
                        f" expected {'/'.join(map(str, sorted(row.expected[persona])))}"
                    )
    assert not wrong, f"{len(wrong)} cells differ from tests/authz_matrix.txt:\n" + "\n".join(wrong)
