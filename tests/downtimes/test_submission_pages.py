"""The downtime page (DT-01/02) and its personas: a player sees only their own downtime."""

from __future__ import annotations

from typing import Any

import pytest
import time_machine
from django.urls import reverse

from characters.models import Character
from chronicle import services as chronicle_services
from downtimes.models import DeskItem, Submission, SubmissionStatus, Vote
from downtimes.services import submissions as services

from .conftest import AT_DEADLINE, DURING

pytestmark = pytest.mark.django_db


def _url(name: str, character: Character, **kw: Any) -> str:
    return reverse(name, kwargs={"slug": "nightfall", "character_id": character.pk, **kw})


def test_the_six_sections(world: Any, lucien: Character, during: None) -> None:
    response = world.client("player_alice").get(reverse("downtime_home", args=["nightfall"]))
    assert response.status_code == 302
    page = world.client("player_alice").get(response["Location"]).content.decode()
    for heading in (
        "1. Who you are",
        "2. Influence use",
        "3. Spending XP",
        "4. Special powers",
        "5. Game report",
        "6. Voting",
    ):
        assert heading in page
    assert "Tue 19 Mar 2024, 23:59 EDT" in page  # the deadline, in the chronicle's zone


@pytest.mark.parametrize("persona", ["player_bob", "storyteller", "outsider"])
def test_nobody_else_opens_alices_page(
    world: Any, lucien: Character, during: None, persona: str
) -> None:
    client = world.client(persona)
    assert client.get(_url("downtime_character", lucien)).status_code == 404
    response = client.post(_url("downtime_save", lucien), {"notes": "x", "version": 1})
    assert response.status_code == 404
    assert not Submission.objects.exists()


@pytest.mark.parametrize(
    ("persona", "status"),
    [("player_bob", 404), ("outsider", 404), ("storyteller", 200), ("player_alice", 200)],
)
def test_reading_a_submission(world: Any, draft: Submission, persona: str, status: int) -> None:
    url = reverse("downtime_submission", args=["nightfall", draft.pk])
    assert world.client(persona).get(url).status_code == status


def test_autosave_htmx_and_stale_tab(world: Any, lucien: Character, during: None) -> None:
    client = world.client("player_alice")
    url = _url("downtime_save", lucien)
    response = client.post(
        url, {"notes": "First", "game_report": "", "version": 1}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200 and 'value="2"' in response.content.decode()
    stale = client.post(
        url, {"notes": "Other tab", "game_report": "", "version": 1}, HTTP_HX_REQUEST="true"
    )
    # 200: htmx swaps no 4xx answer, so the refusal is what #save-status shows.
    body = stale.content.decode()
    assert stale.status_code == 200 and "another tab" in body and 'id="save-status"' in body
    assert Submission.objects.get().notes == "First"


def test_refused_action_keeps_what_was_typed(world: Any, lucien: Character, during: None) -> None:
    response = world.client("player_alice").post(
        _url("downtime_action_add", lucien),
        {
            "key": "k1",
            "action": "other",
            "influence": "business",
            "points": 9,
            "description": "Buy the docks",
        },
    )
    page = response.content.decode()
    assert response.status_code == 400 and "INF-03" in page and "Buy the docks" in page
    assert not DeskItem.objects.exists()


def test_double_submit_gives_one_submission(world: Any, lucien: Character, during: None) -> None:
    client = world.client("player_alice")
    data = {"notes": "Done", "game_report": "Fun", "version": 1}
    for _ in range(2):
        assert client.post(_url("downtime_submit", lucien), data).status_code == 302
    sub = Submission.objects.get()
    assert (sub.status, sub.notes, sub.game_report) == (SubmissionStatus.SUBMITTED, "Done", "Fun")


def test_after_the_deadline_read_only(world: Any, draft: Submission, lucien: Character) -> None:
    client = world.client("player_alice")
    with time_machine.travel(AT_DEADLINE, tick=False):
        page = client.get(_url("downtime_character", lucien)).content.decode()
        assert "can no longer be changed" in page and "Submit downtime" not in page
        response = client.post(
            _url("downtime_save", lucien), {"notes": "late", "version": 1}, follow=True
        )
    assert "The deadline (Tue 19 Mar 2024, 23:59 EDT) has passed" in response.content.decode()
    draft.refresh_from_db()
    assert draft.notes == ""


def test_power_on_another_refused_beside_the_field(
    world: Any, lucien: Character, marguerite: Character, during: None
) -> None:
    response = world.client("player_alice").post(
        _url("downtime_power_add", lucien),
        {"key": "p", "power": "ritual", "target_name": "Marguerite", "description": "Curse"},
    )
    assert response.status_code == 400 and "DIS-09" in response.content.decode()


def test_self_vote_refused_on_the_page(world: Any, lucien: Character, during: None) -> None:
    """Alice is not offered to herself; a forged POST naming her is refused, nothing saved."""
    alice = world.users["player_alice"]
    chronicle_services.attendance_record(
        game=world.game,
        lines=[chronicle_services.SignIn(alice.pk, attended=True, waiver_signed=True)],
        by=world.users["storyteller"],
        now=DURING,
    )
    page = world.client("player_alice").get(_url("downtime_character", lucien)).content.decode()
    assert f'<option value="{alice.pk}"' not in page
    response = world.client("player_alice").post(
        _url("downtime_votes_save", lucien), {"costume": str(alice.pk)}
    )
    assert response.status_code == 400 and not Vote.objects.exists()


# --- Review fixes (issue 5) --------------------------------------------------------------------


def test_autosave_after_the_deadline_tells_the_player(
    world: Any, draft: Submission, lucien: Character
) -> None:
    client = world.client("player_alice")
    with time_machine.travel(AT_DEADLINE, tick=False):
        response = client.post(
            _url("downtime_save", lucien),
            {"notes": "late", "game_report": "", "version": draft.version},
            HTTP_HX_REQUEST="true",
        )
    body = response.content.decode()
    assert response.status_code == 200 and 'id="save-status"' in body
    assert "deadline" in body and "has passed" in body and 'class="error"' in body
    draft.refresh_from_db()
    assert draft.notes == ""


def test_a_found_haven_is_no_building_site_on_the_page(
    world: Any, lucien: Character, marguerite: Character, make_haven: Any, during: None
) -> None:
    loft = make_haven(marguerite, project=True, found_by=lucien)
    response = world.client("player_alice").post(
        _url("downtime_action_add", lucien),
        {
            "key": "b1",
            "action": "build",
            "influence": "business",
            "points": 1,
            "target_structure": loft.pk,
        },
    )
    page = response.content.decode()
    assert response.status_code == 400 and "No such haven." in page
    assert "open building project" not in page and not DeskItem.objects.exists()


# session, user, membership, character, cycle, submission, its votes (with nominees, one
# prefetch), its items (with structure, lender, purchase), the game's cast (players who
# attended with their characters, one join), spends, the loans it borrows or lends (one read for the
# counts, the loans asked and those to confirm), the player's XP balance, the purchases
# waiting, the haven choices (own and found havens as subqueries), the lender choices, the
# nav's memberships: the same for 1 and 20 items.
PAGE_QUERIES = 16


def test_the_page_has_no_per_item_query(
    world: Any,
    draft: Submission,
    lucien: Character,
    marguerite: Character,
    make_haven: Any,
    django_assert_num_queries: Any,
) -> None:
    alice = world.users["player_alice"]
    own = make_haven(lucien, name="Own", project=True)
    services.influence_action_add(
        submission=draft,
        by=alice,
        influence="business",
        points=1,
        action="build",
        target_structure=own,
        key="b",
    )
    client = world.client("player_alice")
    url = _url("downtime_character", lucien)
    with django_assert_num_queries(PAGE_QUERIES):
        assert client.get(url).status_code == 200
    services.influence_action_add(
        submission=draft,
        by=alice,
        influence="occult",
        points=1,
        action="research",
        key="o",
    )
    services.votes_save(submission=draft, by=alice, picks={"feared": "Marguerite"})
    for i in range(17):
        services.power_add(
            submission=draft,
            by=alice,
            power="conditioning",
            target_name="Marguerite",
            key=f"p{i}",
            description="Obey",
        )
    withdrawn = services.power_add(
        submission=draft, by=alice, power="ritual", key="w", description="Ward"
    )
    services.item_withdraw(item=withdrawn, by=alice)
    assert draft.items.count() == 20
    with django_assert_num_queries(PAGE_QUERIES):
        page = client.get(url).content.decode()
    assert page.count("Obey") == 17 and "Withdrawn" in page


@pytest.mark.parametrize("param", ["game", "cycle"])
def test_superscript_digits_never_500(
    world: Any, draft: Submission, lucien: Character, param: str
) -> None:
    client = world.client("player_alice")
    client.raise_request_exception = False
    for url in (
        reverse("downtime_home", args=["nightfall"]),
        _url("downtime_character", lucien),
        reverse("downtime_submission", args=["nightfall", draft.pk]),
        _url("downtime_purchase_preview", lucien),
    ):
        assert client.get(f"{url}?{param}=%C2%B2&level=%C2%B2").status_code < 500, url
    assert client.get("/c/nightfall/downtime/%C2%B2/").status_code == 404
    response = client.post(_url("downtime_save", lucien), {"notes": "x", "version": "²"})
    assert response.status_code == 400
