"""The vote tally page (admins), the report picks page (staff) and the published reports
(members), for every persona; the tally page's query count does not grow with ballots."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.urls import reverse

from chronicle.models import Cycle
from downtimes.models import ReportPick
from tests.conftest import World
from tests.downtimes import test_votes_services as shared
from tests.downtimes.test_votes_services import NOW, Voting

pytestmark = pytest.mark.django_db

SLUG = "nightfall"

# SPEC DT-08's worked example, shared with the services' tests.
worked_example = shared.worked_example


@pytest.fixture
def voting(world: World, make_user: Callable[..., Any]) -> Voting:
    return Voting(world, make_user)


def url(name: str, *args: Any) -> str:
    return reverse(name, args=[SLUG, *args])


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        pytest.param("admin", 200, id="DT-09-admin-reads"),
        pytest.param("storyteller", 403, id="DT-09-storyteller-403"),
        pytest.param("player_alice", 403, id="DT-06-player-never-sees-votes"),
        pytest.param("player_bob", 403, id="DT-06-other-player-403"),
        pytest.param("outsider", 404, id="outsider-404"),
        pytest.param("other_storyteller", 404, id="other-chronicle-404"),
    ],
)
def test_vote_tally_personas(
    world: World, voting: Voting, worked_example: dict[str, Any], persona: str, status: int
) -> None:
    response = world.client(persona).get(url("vote_tally"))
    assert response.status_code == status
    body = response.content.decode()
    if status == 200:
        assert "Most feared" in body and "<td>p4</td>" in body
    else:
        # (Not a bare "p4": the page's random CSRF token may contain it.)
        assert "Most feared" not in body and "<td>p4</td>" not in body


def test_vote_tally_needs_login(world: World) -> None:
    response = world.client(None).get(url("vote_tally"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_vote_tally_shows_winners_awards_and_announcement(
    world: World, voting: Voting, worked_example: dict[str, Any]
) -> None:
    response = world.client("admin").get(url("vote_tally"), {"cycle": world.game.number})
    assert response.status_code == 200
    tally = response.context["tally"]
    assert sorted(a.name for a in tally.awards) == ["p1", "p4", "p5", "p7", "p8"]
    body = response.content.decode()
    assert "<svg" in body and "Excellent roleplaying" in body
    assert "Announce (DT-09)" in body


@pytest.mark.parametrize("bad", ["999", "0", "abc", "99999999999"])
def test_vote_tally_unknown_cycle_is_404(world: World, bad: str) -> None:
    assert world.client("admin").get(url("vote_tally"), {"cycle": bad}).status_code == 404


def test_vote_tally_marks_toreador_votes(world: World, voting: Voting) -> None:
    a = voting.character("Adored", voting.user("adoredp"))
    rose = voting.character("Rose", voting.user("rose"), clan="toreador")
    voting.downtime(rose, {"liked": a})
    body = world.client("admin").get(url("vote_tally")).content.decode()
    assert "1 Toreador ×2" in body


def _tally_page_queries(world: World, voting: Voting, count: int) -> Any:
    nominees = [voting.character(f"N{i}", voting.user(f"n{i}")) for i in range(3)]
    for i, voter in enumerate(voting.voters(count)):
        voting.downtime(
            voter,
            {
                "feared": nominees[i % 3],
                "liked": nominees[(i + 1) % 3],
                "roleplaying": nominees[i % 2].player,
            },
        )
    return world.client("admin")


@pytest.mark.parametrize("count", [10, 200])
def test_vote_tally_page_query_count(
    world: World, voting: Voting, count: int, django_assert_num_queries: Any
) -> None:
    client = _tally_page_queries(world, voting, count)
    # 1 session, 2 user, 3 membership + chronicle, 4 the chronicle's cycles (picker),
    # 5 the counted votes with names, 6 the award winners' attendance (DT-04),
    # 7 the header's memberships (chronicle switcher).
    with django_assert_num_queries(7):
        response = client.get(url("vote_tally"))
    assert response.context["tally"].ballots == 3 * count


# --- Report picks ------------------------------------------------------------------------------


def _reports(voting: Voting, count: int) -> list[Any]:
    return [
        voting.downtime(
            voting.character(f"Writer {i}", voting.user(f"writer{i}")),
            {},
            report=f"Report number {i}: the Prince frowned.",
        )
        for i in range(count)
    ]


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("outsider", 404),
        ("other_storyteller", 404),
    ],
)
def test_report_picks_personas(world: World, voting: Voting, persona: str, status: int) -> None:
    _reports(voting, 1)
    response = world.client(persona).get(url("report_picks"))
    assert response.status_code == status
    assert ("Report number 0" in response.content.decode()) is (status == 200)


@pytest.mark.parametrize("persona", ["player_alice", "outsider"])
def test_players_cannot_pick(world: World, voting: Voting, persona: str) -> None:
    (submission,) = _reports(voting, 1)
    response = world.client(persona).post(url("report_pick", submission.pk))
    assert response.status_code in (403, 404)
    assert not ReportPick.objects.exists()


def test_st_picks_up_to_four_and_the_fifth_is_refused(world: World, voting: Voting) -> None:
    reports = _reports(voting, 5)
    client = world.client("storyteller")
    for submission in reports[:4]:
        response = client.post(url("report_pick", submission.pk))
        assert response.status_code == 302
    response = client.post(url("report_pick", reports[4].pk), follow=True)
    assert "(DT-05)" in response.content.decode()
    assert ReportPick.objects.count() == 4
    client.post(url("report_unpick", reports[0].pk))
    assert ReportPick.objects.count() == 3


def test_st_publishes_sanitized_text_and_members_read_it(world: World, voting: Voting) -> None:
    (submission,) = _reports(voting, 1)
    client = world.client("storyteller")
    client.post(url("report_pick", submission.pk))
    prefix = f"s{submission.pk}"
    # Publishing without a text is refused beside the field, the choice kept.
    response = client.post(url("report_pick_edit", submission.pk), {f"{prefix}-published": "on"})
    assert response.status_code == 400
    assert "(DT-05)" in response.content.decode()
    assert not ReportPick.objects.get().published
    response = client.post(
        url("report_pick_edit", submission.pk),
        {f"{prefix}-sanitized_text": "The court gathered in silence.", f"{prefix}-published": "on"},
    )
    assert response.status_code == 302
    for persona in ("player_alice", "player_bob", "storyteller"):
        body = world.client(persona).get(url("report_list")).content.decode()
        assert "The court gathered in silence." in body
        # Only the sanitized text: never the raw report nor its author.
        assert "Prince frowned" not in body and "Writer 0" not in body
    assert world.client("outsider").get(url("report_list")).status_code == 404


def test_unpublished_picks_are_not_listed(world: World, voting: Voting) -> None:
    (submission,) = _reports(voting, 1)
    client = world.client("storyteller")
    client.post(url("report_pick", submission.pk))
    prefix = f"s{submission.pk}"
    client.post(url("report_pick_edit", submission.pk), {f"{prefix}-sanitized_text": "Draft."})
    body = world.client("player_alice").get(url("report_list")).content.decode()
    assert "Draft." not in body


def test_foreign_submission_ids_are_404(world: World, voting: Voting) -> None:
    client = world.client("storyteller")
    assert client.post(url("report_pick", 999999)).status_code == 404
    assert client.post(url("report_pick", 99999999999)).status_code == 404


def test_picks_page_cycle_default_and_picker(world: World, voting: Voting) -> None:
    _reports(voting, 2)
    response = world.client("admin").get(url("report_picks"), {"cycle": world.game.number})
    assert response.status_code == 200
    assert response.context["cycle"] == Cycle.objects.get(game=world.game)
    assert len(response.context["rows"]) == 2
    assert NOW  # the shared clock of the helpers
