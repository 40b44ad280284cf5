"""The downtime API: own submissions only, the one error shape, rule IDs in refusals."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from characters.models import Character
from chronicle import services as chronicle_services
from downtimes.models import DeskItem, ItemKind, Submission, SubmissionStatus, Vote

from .conftest import DURING

pytestmark = pytest.mark.django_db

BASE = "/api/chronicles/nightfall/submissions/"


def _sign_in(world: Any) -> None:
    """Alice and Bob on game 1's sign-in sheet: votes pick among who attended (DT-06)."""
    chronicle_services.attendance_record(
        game=world.game,
        lines=[
            chronicle_services.SignIn(world.users[p].pk, attended=True, waiver_signed=True)
            for p in ("player_alice", "player_bob")
        ],
        by=world.users["storyteller"],
        now=DURING,
    )


def _start(world: Any, persona: str, character: Character) -> dict[str, Any]:
    response = world.client(persona).post(
        BASE, {"character": character.pk}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    return response.json()


def test_player_flow(world: Any, lucien: Character, marguerite: Character, during: None) -> None:
    client = world.client("player_alice")
    sub = _start(world, "player_alice", lucien)
    url = f"{BASE}{sub['id']}/"
    r = client.post(
        f"{url}save/", {"notes": "Hello", "version": 1}, content_type="application/json"
    )
    assert r.status_code == 200 and r.json()["version"] == 2
    r = client.post(
        f"{url}actions/",
        {"key": "a1", "action": "investigate", "influence": "business", "points": 1},
        content_type="application/json",
    )
    assert r.status_code == 201 and "st_notes" not in r.json()
    _sign_in(world)
    r = client.post(
        f"{url}votes/", {"picks": {"feared": marguerite.pk}}, content_type="application/json"
    )
    assert r.json()["votes"] == {"feared": "Marguerite"}
    r = client.post(f"{url}submit/", content_type="application/json")
    assert r.json()["status"] == SubmissionStatus.SUBMITTED


def test_refusal_is_plain_and_has_one_shape(world: Any, lucien: Character, during: None) -> None:
    sub = _start(world, "player_alice", lucien)
    _sign_in(world)
    r = world.client("player_alice").post(
        f"{BASE}{sub['id']}/votes/",
        {"picks": {"costume": world.users["player_alice"].pk}},
        content_type="application/json",
    )
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == "invalid"
    assert error["fields"]["costume"] == [
        "You may not vote for yourself or for a character you play."
    ]


def test_bob_never_sees_alices_submission(
    world: Any, lucien: Character, marguerite: Character, during: None
) -> None:
    sub = _start(world, "player_alice", lucien)
    bob = world.client("player_bob")
    listed = bob.get(BASE).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert rows == []
    assert bob.get(f"{BASE}{sub['id']}/").status_code == 404
    r = bob.post(
        f"{BASE}{sub['id']}/save/", {"notes": "x", "version": 1}, content_type="application/json"
    )
    assert r.status_code == 404
    r = bob.post(BASE, {"character": lucien.pk}, content_type="application/json")
    assert r.status_code == 400
    assert Submission.objects.get().notes == ""


def test_staff_read_but_do_not_write(world: Any, lucien: Character, during: None) -> None:
    sub = _start(world, "player_alice", lucien)
    st = world.client("storyteller")
    assert st.get(f"{BASE}{sub['id']}/").status_code == 200
    r = st.post(f"{BASE}{sub['id']}/submit/", content_type="application/json")
    assert r.status_code == 404


# --- Review fixes (issue 5) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "project", "found"),
    [
        ("build", False, True),
        ("build", True, True),
        ("repair", True, True),
        ("build", True, False),
        ("attack_haven", True, False),
    ],
)
def test_anothers_haven_answers_like_an_unknown_one(
    world: Any,
    lucien: Character,
    marguerite: Character,
    make_haven: Any,
    during: None,
    action: str,
    project: bool,
    found: bool,
) -> None:
    loft = make_haven(marguerite, project=project, found_by=lucien if found else None)
    sub = _start(world, "player_alice", lucien)
    client = world.client("player_alice")
    answers = []
    for target in (loft.pk, 999_999):
        r = client.post(
            f"{BASE}{sub['id']}/actions/",
            {
                "key": "b1",
                "action": action,
                "influence": "business",
                "points": 1,
                "target_structure": target,
            },
            content_type="application/json",
        )
        assert r.status_code == 400
        answers.append(r.json())
    assert answers[0] == answers[1] and "No such haven" in str(answers[0])
    assert "project" not in str(answers[0])
    assert not DeskItem.objects.exists()


def test_attack_on_a_found_haven_is_accepted(
    world: Any, lucien: Character, marguerite: Character, make_haven: Any, during: None
) -> None:
    loft = make_haven(marguerite, found_by=lucien)
    sub = _start(world, "player_alice", lucien)
    r = world.client("player_alice").post(
        f"{BASE}{sub['id']}/actions/",
        {
            "key": "a1",
            "action": "attack_haven",
            "influence": "business",
            "points": 1,
            "target_structure": loft.pk,
        },
        content_type="application/json",
    )
    assert r.status_code == 201, r.content
    assert DeskItem.objects.get().haven_attack is not None


def _fill(world: Any, character: Character, cycle: Any, nominee: Character) -> None:
    """A downtime (straight in the tables: one PC per player, so a list of 20 needs NPC-ish
    characters or 20 cycles) with a power and votes of both kinds."""
    sub = Submission.objects.create(
        cycle=cycle,
        character=character,
        player=world.users["player_alice"],
        created_at=DURING,
        updated_at=DURING,
    )
    DeskItem.objects.create(
        cycle=cycle,
        kind=ItemKind.POWER,
        power="ritual",
        character=character,
        submission=sub,
        description="Ward",
        created_at=DURING,
        updated_at=DURING,
        key=f"{cycle.pk}:power:p",
    )
    Vote.objects.bulk_create(
        [
            Vote(submission=sub, category="feared", nominee_character=nominee),
            Vote(submission=sub, category="costume", nominee_player=world.users["player_bob"]),
        ]
    )


# session, user, membership, the page's count, the submissions (with cycle and character),
# all their items, all their votes (with nominees): the same for 1 and 20 submissions.
LIST_QUERIES = 7


@pytest.mark.parametrize("persona", ["player_alice", "storyteller"])
def test_list_has_no_per_row_query(
    world: Any,
    make_character: Any,
    lucien: Character,
    marguerite: Character,
    during: None,
    django_assert_num_queries: Any,
    persona: str,
) -> None:
    if persona == "storyteller":
        # Twenty characters' downtimes of one cycle.
        characters = [lucien] + [make_character(f"Childe {i:02}", player=None) for i in range(19)]
        cycles = [world.game.cycle] * 20
    else:
        # The player's own: one character's downtimes of twenty cycles.
        characters = [lucien] * 20
        cycles = [world.game.cycle] + [
            chronicle_services.game_create(
                chronicle=world.chronicle, date=dt.date(2024, 3, 9) + dt.timedelta(weeks=i)
            ).cycle
            for i in range(1, 20)
        ]
    _fill(world, characters[0], cycles[0], marguerite)
    client = world.client(persona)
    with django_assert_num_queries(LIST_QUERIES):
        assert len(_rows(client.get(BASE).json())) == 1
    for character, cycle in zip(characters[1:], cycles[1:], strict=True):
        _fill(world, character, cycle, marguerite)
    with django_assert_num_queries(LIST_QUERIES):
        rows = _rows(client.get(BASE).json())
    assert len(rows) == 20
    assert all(row["votes"] == {"feared": "Marguerite", "costume": "player_bob"} for row in rows)
    assert all(len(row["items"]) == 1 for row in rows)


def _rows(body: Any) -> list[dict[str, Any]]:
    return body["results"] if isinstance(body, dict) else body


@pytest.mark.parametrize("param", ["cycle", "game"])
def test_superscript_digits_never_500(
    world: Any, lucien: Character, during: None, param: str
) -> None:
    client = world.client("player_alice")
    client.raise_request_exception = False
    sub = _start(world, "player_alice", lucien)
    assert client.get(f"{BASE}?{param}=%C2%B2").status_code == 200
    assert client.get(f"{BASE}{sub['id']}/?{param}=%C2%B2").status_code == 200
    assert client.get(f"{BASE}%C2%B2/").status_code == 404
    r = client.post(BASE, {"character": "²"}, content_type="application/json")
    assert r.status_code == 400
    r = client.post(f"{BASE}{sub['id']}/withdraw/", {"item": "²"}, content_type="application/json")
    assert r.status_code == 400
