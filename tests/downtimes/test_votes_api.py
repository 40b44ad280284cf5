"""The vote-tally and report-pick endpoints for every persona (DT-05..09), with the one JSON
error shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from downtimes.models import ReportPick
from tests.conftest import World
from tests.downtimes import test_votes_services as shared
from tests.downtimes.test_votes_services import Voting

pytestmark = pytest.mark.django_db

TALLY = "/api/chronicles/nightfall/vote-tally/"
PICKS = "/api/chronicles/nightfall/report-picks/"

# SPEC DT-08's worked example, shared with the services' tests.
worked_example = shared.worked_example


@pytest.fixture
def voting(world: World, make_user: Callable[..., Any]) -> Voting:
    return Voting(world, make_user)


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        pytest.param("admin", 200, id="DT-09-admin"),
        pytest.param("storyteller", 403, id="DT-06-storyteller-403"),
        pytest.param("player_alice", 403, id="DT-06-player-403"),
        pytest.param("outsider", 404, id="outsider-404"),
        pytest.param("other_storyteller", 404, id="other-chronicle-404"),
        pytest.param(None, 403, id="anonymous"),
    ],
)
def test_vote_tally_api_personas(
    world: World, voting: Voting, worked_example: dict[str, Any], persona: str | None, status: int
) -> None:
    response = world.client(persona).get(TALLY, {"cycle": world.game.number})
    assert response.status_code in ((401, 403) if persona is None else (status,))
    if status != 200:
        assert set(response.json()) == {"error"}
        assert "p4" not in response.content.decode()


def test_vote_tally_api_worked_example(
    world: World, voting: Voting, worked_example: dict[str, Any]
) -> None:
    body = world.client("admin").get(TALLY, {"cycle": world.game.number}).json()
    assert body["game"] == world.game.number and body["count_error"] == ""
    assert sorted((a["name"], a["xp"]) for a in body["awards"]) == [
        ("p1", "3.0"),
        ("p4", "3.0"),
        ("p5", "3.0"),
        ("p7", "3.0"),
        ("p8", "3.0"),
    ]
    roleplay = next(c for c in body["categories"] if c["category"] == "roleplaying")
    assert [(r["name"], r["votes"], r["winner"]) for r in roleplay["rows"]] == [
        ("p1", 7, True),
        ("p5", 4, True),
        ("p6", 2, False),
    ]


@pytest.mark.parametrize("bad", ["999", "x", "0"])
def test_vote_tally_api_unknown_cycle(world: World, bad: str) -> None:
    response = world.client("admin").get(TALLY, {"cycle": bad})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def _reports(voting: Voting, count: int) -> list[Any]:
    return [
        voting.downtime(
            voting.character(f"Writer {i}", voting.user(f"writer{i}")), {}, report=f"Report {i}."
        )
        for i in range(count)
    ]


def test_report_picks_api_flow(world: World, voting: Voting) -> None:
    reports = _reports(voting, 5)
    client = world.client("storyteller")
    ids = []
    for submission in reports[:4]:
        response = client.post(
            PICKS, {"submission": submission.pk}, content_type="application/json"
        )
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    again = client.post(PICKS, {"submission": reports[0].pk}, content_type="application/json")
    # The same report again: the first pick, 200 (issue 16).
    assert again.status_code == 200 and again.json()["id"] == ids[0]
    fifth = client.post(PICKS, {"submission": reports[4].pk}, content_type="application/json")
    assert fifth.status_code == 400
    assert "(DT-05)" in fifth.json()["error"]["message"]
    assert ReportPick.objects.count() == 4

    refused = client.patch(
        f"{PICKS}{ids[0]}/", {"published": True}, content_type="application/json"
    )
    assert refused.status_code == 400
    assert "published" in refused.json()["error"]["fields"]
    done = client.patch(
        f"{PICKS}{ids[0]}/",
        {"sanitized_text": "Clean.", "published": True},
        content_type="application/json",
    )
    assert done.status_code == 200 and done.json()["published"] is True

    listed = client.get(PICKS, {"cycle": world.game.number}).json()
    assert len(listed) == 4
    assert client.delete(f"{PICKS}{ids[1]}/").status_code == 204
    assert ReportPick.objects.count() == 3


@pytest.mark.parametrize(
    ("persona", "status"),
    [("player_alice", 403), ("outsider", 404), ("other_storyteller", 404)],
)
def test_report_picks_api_personas(world: World, voting: Voting, persona: str, status: int) -> None:
    (submission,) = _reports(voting, 1)
    client = world.client(persona)
    assert client.get(PICKS).status_code == status
    response = client.post(PICKS, {"submission": submission.pk}, content_type="application/json")
    assert response.status_code == status
    assert not ReportPick.objects.exists()


def test_report_picks_api_unknown_submission(world: World, voting: Voting) -> None:
    draft = voting.downtime(
        voting.character("Drafty", voting.user("drafty")), {}, submitted=False, report="x"
    )
    for ident in (draft.pk, 999999):
        response = world.client("storyteller").post(
            PICKS, {"submission": ident}, content_type="application/json"
        )
        assert response.status_code == 400
        assert "submission" in response.json()["error"]["fields"]


def test_vote_tally_api_awards_keep_a_decimal_setting(
    world: World, voting: Voting, worked_example: dict[str, Any]
) -> None:
    world.chronicle.house_rule_overrides = {"vote_award_xp": "2.5"}
    world.chronicle.save(update_fields=["house_rule_overrides"])
    body = world.client("admin").get(TALLY, {"cycle": world.game.number}).json()
    assert {a["xp"] for a in body["awards"]} == {"2.5"}


@pytest.mark.parametrize("url", [TALLY, PICKS])
@pytest.mark.parametrize("bad", ["²", "١٢", "9" * 30])
def test_odd_cycle_numbers_are_404_never_500(world: World, url: str, bad: str) -> None:
    client = world.client("admin")
    client.raise_request_exception = False
    response = client.get(url, {"cycle": bad})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
