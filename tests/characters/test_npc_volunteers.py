"""MSC-03 NPC volunteers: the first-come list, decline to the end, idempotent join, and the
published page for every persona."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from characters.models import NpcVolunteer
from characters.services.records import (
    npc_volunteer_decline,
    npc_volunteer_join,
    npc_volunteer_leave,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

URL = reverse("npc_volunteers", args=["nightfall"])


def order(world: Any) -> list[str]:
    return [
        v.player.username
        for v in NpcVolunteer.objects.filter(chronicle=world.chronicle).select_related("player")
    ]


def join(world: Any, *personas: str) -> None:
    for persona in personas:
        npc_volunteer_join(chronicle=world.chronicle, player=world.users[persona])


# --- Services -----------------------------------------------------------------------------------


def test_first_come_first_listed(world: Any) -> None:
    join(world, "player_bob", "player_alice", "storyteller")
    assert order(world) == ["player_bob", "player_alice", "storyteller"]


def test_joining_twice_keeps_the_place(world: Any) -> None:
    join(world, "player_bob", "player_alice", "player_bob")
    assert order(world) == ["player_bob", "player_alice"]
    assert NpcVolunteer.objects.count() == 2


def test_declining_moves_to_the_end_and_again_changes_nothing(world: Any) -> None:
    join(world, "player_bob", "player_alice", "storyteller")
    npc_volunteer_decline(chronicle=world.chronicle, player=world.users["player_bob"])
    assert order(world) == ["player_alice", "storyteller", "player_bob"]
    position = NpcVolunteer.objects.get(player=world.users["player_bob"]).position
    npc_volunteer_decline(chronicle=world.chronicle, player=world.users["player_bob"])
    assert NpcVolunteer.objects.get(player=world.users["player_bob"]).position == position
    assert order(world) == ["player_alice", "storyteller", "player_bob"]


def test_leaving_then_joining_goes_to_the_end(world: Any) -> None:
    join(world, "player_bob", "player_alice")
    assert npc_volunteer_leave(chronicle=world.chronicle, player=world.users["player_bob"])
    assert not npc_volunteer_leave(chronicle=world.chronicle, player=world.users["player_bob"])
    join(world, "player_bob")
    assert order(world) == ["player_alice", "player_bob"]


def test_declining_off_the_list_is_refused_and_writes_nothing(world: Any) -> None:
    with pytest.raises(ValidationError, match="MSC-03"):
        npc_volunteer_decline(chronicle=world.chronicle, player=world.users["player_alice"])
    assert not NpcVolunteer.objects.exists()


def test_a_non_member_cannot_join(world: Any) -> None:
    with pytest.raises(ValidationError, match="MSC-03"):
        npc_volunteer_join(chronicle=world.chronicle, player=world.users["outsider"])
    assert not NpcVolunteer.objects.exists()


def test_the_lists_of_two_chronicles_are_separate(world: Any) -> None:
    join(world, "player_alice")
    npc_volunteer_join(chronicle=world.other, player=world.users["other_storyteller"])
    assert order(world) == ["player_alice"]
    assert NpcVolunteer.objects.get(chronicle=world.other).position == 1


# --- The page -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 200),
        ("player_bob", 200),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_page_personas(world: Any, persona: str | None, status: int) -> None:
    join(world, "player_bob")
    response = world.client(persona).get(URL)
    assert response.status_code == status
    if status == 200:
        assert "player_bob" in response.content.decode()  # the list is published


@pytest.mark.parametrize("persona", ["outsider", "other_storyteller", None])
def test_strangers_cannot_join(world: Any, persona: str | None) -> None:
    assert world.client(persona).post(URL, {"action": "join"}).status_code in (302, 404)
    assert not NpcVolunteer.objects.exists()


def test_a_player_joins_declines_and_leaves_from_the_page(world: Any) -> None:
    join(world, "player_bob")
    alice = world.client("player_alice")
    page = alice.post(URL, {"action": "join"}, follow=True).content.decode()
    assert "You are on the NPC volunteer list." in page
    assert page.index("player_bob") < page.index("player_alice (you)")
    alice.post(URL, {"action": "join"})  # a double click keeps one place
    assert order(world) == ["player_bob", "player_alice"]
    world.client("player_bob").post(URL, {"action": "decline"})
    assert order(world) == ["player_alice", "player_bob"]
    alice.post(URL, {"action": "leave"})
    assert order(world) == ["player_bob"]


def test_a_player_cannot_move_someone_else(world: Any) -> None:
    join(world, "player_bob", "player_alice")
    response = world.client("player_alice").post(
        URL, {"action": "decline", "volunteer": world.users["player_bob"].pk}
    )
    assert response.status_code == 403
    assert order(world) == ["player_bob", "player_alice"]


def test_a_storyteller_records_a_decline_for_a_volunteer(world: Any) -> None:
    join(world, "player_bob", "player_alice")
    st = world.client("storyteller")
    response = st.post(URL, {"action": "decline", "volunteer": world.users["player_bob"].pk})
    assert response.status_code == 302
    assert order(world) == ["player_alice", "player_bob"]
    # Nobody is joined by someone else, and a stranger to the list cannot be moved.
    refused = st.post(URL, {"action": "join", "volunteer": world.users["player_alice"].pk})
    assert refused.status_code == 400
    absent = st.post(URL, {"action": "leave", "volunteer": world.users["admin"].pk})
    assert absent.status_code == 400
    assert "Choose someone on the list" in absent.content.decode()
    assert order(world) == ["player_alice", "player_bob"]


def test_decline_off_the_list_shows_the_refusal(world: Any) -> None:
    response = world.client("player_alice").post(URL, {"action": "decline"})
    assert response.status_code == 400
    assert "(MSC-03)" in response.content.decode()
    assert not NpcVolunteer.objects.exists()


def test_an_unknown_action_is_a_400_not_a_500(world: Any) -> None:
    assert world.client("player_alice").post(URL, {"action": "vanish"}).status_code == 400


def test_the_roster_links_to_the_list(world: Any) -> None:
    page = world.client("player_alice").get(reverse("character_list", args=["nightfall"]))
    assert URL in page.content.decode()


@pytest.mark.parametrize("volunteers", [1, 30])
def test_page_query_count_is_constant(
    world: Any, make_user: Any, django_assert_num_queries: Any, volunteers: int
) -> None:
    from chronicle import services

    for i in range(volunteers):
        user = make_user(f"volunteer{i}")
        services.membership_add(chronicle=world.chronicle, user=user, role="player")
        npc_volunteer_join(chronicle=world.chronicle, player=user)
    client = world.client("player_alice")
    # session, user, membership with chronicle, volunteers with players, memberships for the
    # header switcher
    with django_assert_num_queries(5):
        assert client.get(URL).status_code == 200
