"""Issue 16, "the schema is the contract": each finding reproduced, against the served schema
and the API's behaviour (tests/api/test_schemathesis.py fuzzes the whole of it)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.conftest import World

pytestmark = pytest.mark.django_db

API = "/api/chronicles/nightfall"


@pytest.fixture
def schema(world: World) -> dict[str, Any]:
    response = world.client("admin").get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return dict(response.json())


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]


def _error(response: Any, field: str) -> None:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["fields"]


def test_every_operation_documents_its_errors_in_the_one_shape(schema: dict[str, Any]) -> None:
    error = {"$ref": "#/components/schemas/Error"}
    assert schema["components"]["schemas"]["Error"]["required"] == ["error"]
    for method, path, operation in _operations(schema):
        responses = operation["responses"]
        expected = {"403"}
        if path != "/api/auth/token/":
            expected.add("401")
        if "{" in path:
            expected.add("404")
        if method != "get" or any(p["in"] == "query" for p in operation.get("parameters", [])):
            expected.add("400")
        assert expected <= set(responses), (method, path, sorted(responses))
        for status in expected - {"400"}:  # a 400 an operation documents itself is kept
            assert responses[status]["content"]["application/json"]["schema"] == error, (
                method,
                path,
                status,
            )
    assert "429" in schema["paths"]["/api/auth/token/"]["post"]["responses"]


@pytest.mark.parametrize(
    "query",
    ["offset=null", "offset=-1", "limit=-1", "limit=0", "limit=many", "limit=", "offset="],
)
def test_an_invalid_page_parameter_answers_400(world: World, query: str) -> None:
    response = world.client("player_alice").get(f"{API}/games/?{query}")
    _error(response, query.split("=")[0])


def test_a_valid_page_still_pages(world: World) -> None:
    response = world.client("player_alice").get(f"{API}/games/?limit=1&offset=0")
    assert response.status_code == 200
    assert response.json()["count"] == 1
    # Above the most a page holds: a page of that most, as documented.
    assert world.client("player_alice").get(f"{API}/games/?limit=100000").status_code == 200


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("purchases/", "status="),
        ("purchases/", "status=bogus"),
        ("characters/", "sect="),
        ("characters/", "status=undead"),
    ],
)
def test_a_blank_or_unknown_filter_answers_400(world: World, path: str, query: str) -> None:
    response = world.client("storyteller").get(f"{API}/{path}?{query}")
    _error(response, query.split("=")[0])


def test_lists_are_documented_as_what_they_answer(
    world: World, schema: dict[str, Any], make_character: Any
) -> None:
    paths = schema["paths"]

    def ok(path: str, method: str = "get") -> Any:
        return paths[path][method]["responses"]["200"]["content"]["application/json"]["schema"]

    # Bare arrays, documented as arrays (no page envelope, no limit/offset).
    for path in (
        "/api/chronicles/{slug}/havens/",
        "/api/chronicles/{slug}/games/{number}/attendance/",
    ):
        assert ok(path)["type"] == "array", path
        names = {p["name"] for p in paths[path]["get"].get("parameters", [])}
        assert not names & {"limit", "offset"}, path
    client = world.client("storyteller")
    assert isinstance(client.get(f"{API}/havens/").json(), list)
    assert isinstance(client.get(f"{API}/games/{world.game.number}/attendance/").json(), list)
    # One object, documented as one object.
    records = "/api/chronicles/{slug}/characters/{character_id}/records/"
    assert ok(records) == {"$ref": "#/components/schemas/BondState"}
    lucien = make_character("Lucien")
    body = client.get(f"{API}/characters/{lucien.pk}/records/").json()
    assert set(body) == {"bonds", "requests"}


def test_players_and_storytellers_read_characters_of_two_schemas(
    world: World, schema: dict[str, Any], make_character: Any
) -> None:
    components = schema["components"]["schemas"]
    player, staff = components["Character"], components["StaffCharacter"]
    assert "st_notes" not in player["properties"] and player["additionalProperties"] is False
    assert "st_notes" in staff["required"]
    one = schema["paths"]["/api/chronicles/{slug}/characters/{id}/"]["get"]["responses"]["200"]
    reader = one["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert components[reader]["oneOf"] == [
        {"$ref": "#/components/schemas/Character"},
        {"$ref": "#/components/schemas/StaffCharacter"},
    ]
    lucien = make_character("Lucien")
    mine = world.client("player_alice").get(f"{API}/characters/{lucien.pk}/").json()
    theirs = world.client("storyteller").get(f"{API}/characters/{lucien.pk}/").json()
    assert set(mine) == set(player["properties"])
    assert set(theirs) == set(staff["properties"])


def test_a_blank_sect_is_in_the_schema(
    world: World, schema: dict[str, Any], make_character: Any
) -> None:
    sect = schema["components"]["schemas"]["Character"]["properties"]["sect"]
    assert {"$ref": "#/components/schemas/BlankEnum"} in sect["oneOf"]
    assert schema["components"]["schemas"]["BlankEnum"]["enum"] == [""]


def test_a_post_to_an_unknown_api_path_is_the_apis_json_404(world: World) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["player_alice"])
    response = client.post(f"{API}/characters/1/diableries/x/decline/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "not_found"


def test_a_game_is_changed_by_patch_only_and_allow_says_so(world: World) -> None:
    client = world.client("storyteller")
    url = f"{API}/games/{world.game.number}/"
    response = client.put(url, {"place": "Elsewhere"}, content_type="application/json")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert "PUT" not in client.options(url)["Allow"]
    patched = client.patch(url, {"place": "Elsewhere"}, content_type="application/json")
    assert patched.status_code == 200 and patched.json()["place"] == "Elsewhere"


def test_an_undeclared_method_is_405_whatever_the_query(world: World) -> None:
    response = world.client("storyteller").generic("TRACE", f"{API}/purchases/?status=")
    assert response.status_code == 405


def test_a_start_time_is_documented_as_the_wall_clock_time_it_is(schema: dict[str, Any]) -> None:
    start_time = schema["components"]["schemas"]["Game"]["properties"]["start_time"]
    times = [branch for branch in start_time.get("anyOf", [start_time]) if "pattern" in branch]
    assert times and "format" not in times[0]


# Schemathesis's coverage phase (issue 16): a JSON body keeps its JSON types.


def test_a_json_string_field_refuses_a_number(world: World) -> None:
    from chronicle.models import Invitation

    response = world.client("storyteller").post(
        f"{API}/invitations/",
        {"invitees": [{"email": "new@example.com", "name": 0, "role": "player"}]},
        content_type="application/json",
    )
    _error(response, "invitees")
    assert not Invitation.objects.filter(email="new@example.com").exists()


def test_a_json_boolean_field_refuses_0_and_a_form_keeps_drfs_reading() -> None:
    from django.http import QueryDict
    from rest_framework import serializers

    class Body(serializers.Serializer):
        name = serializers.CharField()
        published = serializers.BooleanField()

    assert Body(data={"name": "Ana", "published": True}).is_valid()
    for bad in ({"name": "Ana", "published": 0}, {"name": "Ana", "published": "true"}):
        assert not Body(data=bad).is_valid()
    numbers = Body(data={"name": 7, "published": 0})
    assert not numbers.is_valid() and set(numbers.errors) == {"name", "published"}
    form = Body(data=QueryDict("name=7&published=true"))
    assert form.is_valid() and form.validated_data == {"name": "7", "published": True}


@pytest.mark.usefixtures("postgres")
def test_bulk_approval_by_ids_still_refuses_an_invalid_filter(world: World) -> None:
    response = world.client("storyteller").post(
        f"{API}/desk-items/bulk-approve/?character=null",
        {"game": world.game.number, "ids": []},
        content_type="application/json",
    )
    _error(response, "character")
