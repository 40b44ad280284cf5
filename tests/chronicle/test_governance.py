"""GEN-03 / GEN-04 (issue 14): decisions by two thirds of all current voters. Proposing, voting
(secret while open), the close at the deadline (by the beat task, twice = once, or lazily by a
page), each effect applied once through the people and settings services, the players' removal
vote, who may see what, and the pages by persona."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
import time_machine
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chronicle import services, tasks
from chronicle.models import (
    Ballot,
    DecisionEffect,
    DecisionStatus,
    HouseRuleChange,
    MailKind,
    Membership,
    MembershipEvent,
    MembershipEventKind,
    Message,
    Proposal,
    Role,
)
from chronicle.services import governance, people
from tests.conftest import World

NOW = dt.datetime(2026, 12, 1, 20, 0, tzinfo=dt.UTC)
AFTER = NOW + dt.timedelta(days=8)  # past the default 7-day vote


def member(world: World, name: str) -> Membership:
    return Membership.objects.select_related("chronicle", "user").get(
        chronicle=world.chronicle, user=world.users[name]
    )


def add_member(world: World, make_user: Callable[..., Any], name: str, role: str) -> Membership:
    user = make_user(name)
    world.users[name] = user
    services.membership_add(chronicle=world.chronicle, user=user, role=role)
    return member(world, name)


def propose(world: World, who: str, kind: str, target: str | None = None, **extra: Any) -> Proposal:
    return governance.proposal_open(
        membership=member(world, who),
        kind=kind,
        target_user_id=world.users[target].pk if target else None,
        now=NOW,
        **extra,
    )


def vote(world: World, who: str, proposal: Proposal, yes: bool) -> Ballot:
    return governance.ballot_cast(
        membership=member(world, who), proposal=proposal, yes=yes, now=NOW + dt.timedelta(hours=1)
    )


def close(proposal: Proposal) -> Proposal:
    closed = governance.proposal_close(proposal_id=proposal.pk, now=AFTER)
    assert closed is not None
    return closed


def decision_messages(user: Any) -> list[Message]:
    return list(Message.objects.filter(recipient=user, kind=MailKind.DECISION).order_by("pk"))


# --- Proposing -----------------------------------------------------------------------------------


def test_a_storyteller_proposes_and_every_other_storyteller_is_told(world: World) -> None:
    proposal = propose(world, "storyteller", "add_storyteller", "player_alice", text="She is ready")
    assert proposal.body == "storytellers" and proposal.status == DecisionStatus.OPEN
    assert proposal.closes_at == NOW + dt.timedelta(days=7)  # decision_vote_days, default 7
    [told] = decision_messages(world.users["admin"])
    assert "Make player_alice a storyteller" in told.subject
    # The proposer knows; the players never hear of a storytellers' decision.
    assert decision_messages(world.users["storyteller"]) == []
    assert decision_messages(world.users["player_alice"]) == []


def test_the_vote_lasts_the_chronicles_setting(world: World) -> None:
    world.chronicle.house_rule_overrides = {"decision_vote_days": 3}
    world.chronicle.save()
    proposal = propose(world, "storyteller", "other", text="Run a Sabbat weekend")
    assert proposal.closes_at == NOW + dt.timedelta(days=3)
    longer = propose(world, "storyteller", "other", text="Another", days=14)
    assert longer.closes_at == NOW + dt.timedelta(days=14)


@pytest.mark.parametrize(
    ("who", "body", "kind", "error"),
    [
        pytest.param(
            "player_alice", "storytellers", "other", PermissionDenied, id="GEN-03-player-refused"
        ),
        pytest.param(
            "storyteller", "players", "remove_player", PermissionDenied, id="GEN-04-ST-refused"
        ),
        pytest.param(
            "player_alice", "players", "add_storyteller", ValidationError, id="GEN-04-no-adding"
        ),
        pytest.param(
            "player_alice", "players", "setting_now", ValidationError, id="GEN-04-no-settings"
        ),
    ],
)
def test_who_may_propose_what(
    world: World, who: str, body: str, kind: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        governance.proposal_open(
            membership=member(world, who),
            body=body,
            kind=kind,
            target_user_id=world.users["player_bob"].pk,
            text="x",
            now=NOW,
        )
    assert not Proposal.objects.exists()


@pytest.mark.parametrize(
    ("kind", "target", "extra", "field"),
    [
        pytest.param("add_storyteller", "admin", {}, "target", id="GEN-03-add-an-admin"),
        pytest.param("remove_storyteller", "player_bob", {}, "target", id="GEN-03-not-an-ST"),
        pytest.param("remove_player", "storyteller", {}, "target", id="GEN-03-not-a-player"),
        pytest.param("remove_player", None, {}, "target", id="GEN-03-nobody-named"),
        pytest.param(
            "setting_now",
            None,
            {"setting_name": "willpower_cost", "setting_value": "-2"},
            "setting_value",
            id="GEN-03-setting-out-of-bounds",
        ),
        pytest.param(
            "setting_now",
            None,
            {"setting_name": "no_such_setting", "setting_value": "1"},
            "setting_name",
            id="GEN-03-unknown-setting",
        ),
        pytest.param(
            "setting_now",
            None,
            {"setting_name": "background_blocks_freebies", "setting_value": "maybe"},
            "setting_value",
            id="GEN-03-yes-or-no-setting",
        ),
        pytest.param("other", None, {"text": "  "}, "text", id="GEN-03-other-needs-words"),
        pytest.param("other", None, {"text": "x", "days": 0}, "days", id="GEN-03-zero-days"),
    ],
)
def test_bad_proposals_are_refused_next_to_the_field(
    world: World, kind: str, target: str | None, extra: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        propose(world, "storyteller", kind, target, **extra)
    assert field in refused.value.message_dict


def test_the_same_question_is_not_put_twice(world: World) -> None:
    propose(world, "storyteller", "remove_player", "player_bob")
    with pytest.raises(ValidationError, match="already open"):
        propose(world, "admin", "remove_player", "player_bob")


# --- Voting and secrecy --------------------------------------------------------------------------


def test_a_voter_may_change_their_vote_until_the_close(world: World) -> None:
    proposal = propose(world, "storyteller", "other", text="Open a second city")
    vote(world, "admin", proposal, True)
    vote(world, "admin", proposal, False)
    [ballot] = Ballot.objects.filter(proposal=proposal)
    assert ballot.yes is False
    with pytest.raises(ValidationError, match="closed"):
        governance.ballot_cast(
            membership=member(world, "admin"), proposal=proposal, yes=True, now=AFTER
        )


def test_only_the_body_votes(world: World) -> None:
    st_vote = propose(world, "storyteller", "other", text="x")
    with pytest.raises(PermissionDenied):
        vote(world, "player_alice", st_vote, True)
    players_vote = propose(world, "player_alice", "remove_player", "player_bob")
    with pytest.raises(PermissionDenied):
        vote(world, "storyteller", players_vote, True)
    assert not Ballot.objects.exists()


def test_ballots_are_secret_while_open_and_who_voted_is_shown_after(world: World) -> None:
    proposal = propose(world, "storyteller", "other", text="Move games to Fridays")
    vote(world, "admin", proposal, True)
    url = f"/c/nightfall/decisions/{proposal.pk}/"
    with time_machine.travel(NOW + dt.timedelta(hours=2), tick=False):
        admin_page = world.client("admin").get(url).content.decode()
        st_page = world.client("storyteller").get(url).content.decode()
    assert "You voted yes." in admin_page
    # The other voter learns nothing of it: no vote, no count, no name.
    assert "You voted" not in st_page and "Who voted" not in st_page
    assert "admin</li>" not in st_page
    with time_machine.travel(AFTER, tick=False):
        closed_page = world.client("storyteller").get(url).content.decode()
    proposal.refresh_from_db()
    assert proposal.status == DecisionStatus.FAILED  # 1 yes of 2: a lazy close by the page
    assert "Who voted" in closed_page and "<li>admin</li>" in closed_page
    assert "<li>storyteller</li>" not in closed_page
    # How each voted is stored, not shown.
    assert Ballot.objects.get(proposal=proposal).yes is True
    assert "admin voted yes" not in closed_page


# --- Counting over all current voters ------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra_storytellers", "yes", "no", "passes"),
    [
        # 3 voters (admin, storyteller, one more): 2 yes pass, whoever else stays silent.
        pytest.param(1, 2, 0, True, id="GEN-03-three-STs-two-yes-pass"),
        # 5 voters: 3 yes with 2 silent fail; the 3 who voted all said yes, yet 3 < 4.
        pytest.param(3, 3, 0, False, id="GEN-03-five-STs-three-yes-fail"),
        pytest.param(3, 4, 1, True, id="GEN-03-five-STs-four-yes-pass"),
        # 6 voters: 4 yes pass.
        pytest.param(4, 4, 0, True, id="GEN-03-six-STs-four-yes-pass"),
    ],
)
def test_passes_over_all_current_voters_not_those_who_voted(
    world: World,
    make_user: Callable[..., Any],
    extra_storytellers: int,
    yes: int,
    no: int,
    passes: bool,
) -> None:
    for i in range(extra_storytellers):
        add_member(world, make_user, f"st_{i}", Role.STORYTELLER)
    voters = ["admin", "storyteller", *[f"st_{i}" for i in range(extra_storytellers)]]
    proposal = propose(world, "storyteller", "other", text="Ban cell phones in play")
    for name in voters[:yes]:
        vote(world, name, proposal, True)
    for name in voters[yes : yes + no]:
        vote(world, name, proposal, False)
    closed = close(proposal)
    assert closed.eligible_count == len(voters)
    assert (closed.yes_count, closed.no_count) == (yes, no)
    assert closed.status == (DecisionStatus.PASSED if passes else DecisionStatus.FAILED)


def test_a_voter_who_left_before_the_close_is_not_counted(
    world: World, make_user: Callable[..., Any]
) -> None:
    add_member(world, make_user, "st_0", Role.STORYTELLER)
    proposal = propose(world, "storyteller", "other", text="x")
    vote(world, "st_0", proposal, True)
    vote(world, "storyteller", proposal, True)
    # st_0 steps down to player before the close: 1 yes of the 2 storytellers left fails.
    people.membership_role_set(target=member(world, "st_0"), role=Role.PLAYER, by=None, now=NOW)
    closed = close(proposal)
    assert (closed.yes_count, closed.eligible_count, closed.status) == (1, 2, "failed")
    assert Ballot.objects.get(proposal=proposal, voter=world.users["st_0"]).counted is False


# --- The close: once, by the beat task or a page -------------------------------------------------


def test_the_task_closing_twice_applies_the_decision_once(world: World) -> None:
    proposal = propose(world, "storyteller", "add_storyteller", "player_alice")
    vote(world, "admin", proposal, True)
    vote(world, "storyteller", proposal, True)
    with time_machine.travel(NOW + dt.timedelta(days=6), tick=False):
        assert tasks.proposals_close_due() == []  # not due yet
    with time_machine.travel(AFTER, tick=False):
        assert tasks.proposals_close_due() == [proposal.pk]
        assert tasks.proposals_close_due() == []
        assert governance.proposal_close(proposal_id=proposal.pk) is None
    proposal.refresh_from_db()
    assert proposal.status == DecisionStatus.PASSED
    assert proposal.effect == DecisionEffect.APPLIED and proposal.applied_at == AFTER
    assert member(world, "player_alice").role == Role.STORYTELLER
    events = MembershipEvent.objects.filter(
        user=world.users["player_alice"], kind=MembershipEventKind.ROLE_CHANGED
    )
    assert [(e.role_after, e.by, e.note) for e in events] == [
        ("storyteller", None, f"GEN-03 decision {proposal.pk}")
    ]
    # Everyone concerned hears the result once: the voters, and the member it is about.
    for name in ("admin", "storyteller", "player_alice"):
        results = [m for m in decision_messages(world.users[name]) if "passed" in m.subject]
        assert len(results) == 1, name
    assert decision_messages(world.users["player_bob"]) == []


def test_the_beat_schedule_closes_due_proposals_every_minute() -> None:
    from chronicle.celery import app

    entry = app.conf.beat_schedule["chronicle-close-due-proposals"]
    assert entry["task"] == "chronicle.tasks.proposals_close_due"
    assert entry["schedule"] == 60.0


# --- Each effect ---------------------------------------------------------------------------------


def _passed(world: World, proposal: Proposal) -> Proposal:
    vote(world, "admin", proposal, True)
    vote(world, "storyteller", proposal, True)
    return close(proposal)


def test_adding_a_storyteller(world: World) -> None:
    closed = _passed(world, propose(world, "admin", "add_storyteller", "player_bob"))
    assert closed.effect == DecisionEffect.APPLIED
    assert member(world, "player_bob").role == Role.STORYTELLER


def test_removing_a_storyteller_makes_them_a_player(world: World) -> None:
    closed = _passed(world, propose(world, "admin", "remove_storyteller", "storyteller"))
    assert closed.effect == DecisionEffect.APPLIED
    assert member(world, "storyteller").role == Role.PLAYER


def test_removing_a_player_ends_their_membership(world: World) -> None:
    closed = _passed(world, propose(world, "admin", "remove_player", "player_bob"))
    assert closed.effect == DecisionEffect.APPLIED
    assert not Membership.objects.filter(user=world.users["player_bob"]).exists()
    event = MembershipEvent.objects.get(
        user=world.users["player_bob"], kind=MembershipEventKind.REMOVED
    )
    assert event.by is None
    # The removed player is told the result (they are concerned).
    assert any("passed" in m.subject for m in decision_messages(world.users["player_bob"]))


def test_correcting_a_setting_now(world: World) -> None:
    proposal = propose(
        world,
        "storyteller",
        "setting_now",
        setting_name="willpower_cost",
        setting_value="4",
        text="Typo in the book",
    )
    assert proposal.setting_value == 4
    assert proposal.summary == "Set “Cost of one willpower” to 4 now"
    closed = _passed(world, proposal)
    assert closed.effect == DecisionEffect.APPLIED, closed.effect_note
    world.chronicle.refresh_from_db()
    assert world.chronicle.house_rules_for(None).willpower_cost == 4
    change = HouseRuleChange.objects.get(chronicle=world.chronicle, name="willpower_cost")
    assert change.reason.startswith(f"GEN-03 decision {proposal.pk}")


def test_another_decision_is_recorded_with_no_effect(world: World) -> None:
    closed = _passed(world, propose(world, "storyteller", "other", text="A new ST rota"))
    assert closed.status == DecisionStatus.PASSED
    assert (closed.effect, closed.applied_at) == (DecisionEffect.NONE, None)


def test_a_failed_decision_changes_nothing(world: World) -> None:
    proposal = propose(world, "storyteller", "remove_player", "player_bob")
    vote(world, "storyteller", proposal, True)
    closed = close(proposal)  # 1 of 2
    assert closed.status == DecisionStatus.FAILED and closed.effect == DecisionEffect.NONE
    assert member(world, "player_bob").role == Role.PLAYER


def test_an_effect_that_can_no_longer_apply_is_recorded(world: World) -> None:
    proposal = propose(world, "storyteller", "remove_player", "player_bob")
    vote(world, "admin", proposal, True)
    vote(world, "storyteller", proposal, True)
    bob = member(world, "player_bob")
    people.membership_end(membership=bob, target=bob, now=NOW)
    closed = close(proposal)
    assert closed.status == DecisionStatus.PASSED
    assert closed.effect == DecisionEffect.NOT_APPLIED
    assert "no longer a member" in closed.effect_note


def test_removing_the_last_admin_as_storyteller_is_recorded_not_applied(world: World) -> None:
    closed = _passed(world, propose(world, "storyteller", "remove_storyteller", "admin"))
    assert closed.effect == DecisionEffect.NOT_APPLIED
    assert "last admin" in closed.effect_note
    assert member(world, "admin").role == Role.ADMIN


# --- GEN-04: the players' removal vote -----------------------------------------------------------


@pytest.mark.parametrize(
    ("yes_voters", "passes"),
    [
        pytest.param(("player_alice", "player_carol"), True, id="GEN-04-two-of-three-remove"),
        pytest.param(("player_alice",), False, id="GEN-04-one-of-three-keeps"),
    ],
)
def test_players_vote_to_remove_a_storyteller(
    world: World, make_user: Callable[..., Any], yes_voters: tuple[str, ...], passes: bool
) -> None:
    add_member(world, make_user, "player_carol", Role.PLAYER)
    proposal = propose(world, "player_alice", "remove_storyteller", "storyteller")
    assert proposal.body == "players"
    # Every other player is told; the storytellers are not asked to vote.
    assert len(decision_messages(world.users["player_bob"])) == 1
    assert decision_messages(world.users["admin"]) == []
    for name in yes_voters:
        vote(world, name, proposal, True)
    closed = close(proposal)
    assert closed.eligible_count == 3
    assert member(world, "storyteller").role == (Role.PLAYER if passes else Role.STORYTELLER)
    # The storytellers hear the players' result.
    assert len(decision_messages(world.users["admin"])) == 1


# --- Who sees what -------------------------------------------------------------------------------


def test_players_never_see_storytellers_decisions(world: World) -> None:
    secret = propose(world, "storyteller", "remove_player", "player_bob", text="Secret")
    public = propose(world, "player_alice", "remove_player", "player_bob", text="Public")
    with time_machine.travel(NOW + dt.timedelta(hours=2), tick=False):
        alice = world.client("player_alice")
        listing = alice.get("/c/nightfall/decisions/").content.decode()
        assert alice.get(f"/c/nightfall/decisions/{secret.pk}/").status_code == 404
        assert alice.get(f"/c/nightfall/decisions/{public.pk}/").status_code == 200
        staff_listing = world.client("storyteller").get("/c/nightfall/decisions/").content.decode()
        staff_view = world.client("storyteller").get(f"/c/nightfall/decisions/{public.pk}/")
        assert staff_view.status_code == 200
    assert f"/decisions/{secret.pk}/" not in listing
    assert f"/decisions/{public.pk}/" in listing
    assert (
        f"/decisions/{secret.pk}/" in staff_listing and f"/decisions/{public.pk}/" in staff_listing
    )


def test_strangers_get_404(world: World) -> None:
    proposal = propose(world, "storyteller", "other", text="x")
    response = world.client("other_storyteller").get(f"/c/nightfall/decisions/{proposal.pk}/")
    assert response.status_code == 404
    response = world.client("other_storyteller").get(f"/c/other-city/decisions/{proposal.pk}/")
    assert response.status_code == 404


# --- Pages ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        pytest.param("admin", 200, id="admin"),
        pytest.param("storyteller", 200, id="storyteller"),
        pytest.param("player_alice", 200, id="player"),
        pytest.param("outsider", 404, id="outsider"),
        pytest.param(None, 302, id="anonymous"),
    ],
)
def test_pages_by_persona(world: World, persona: str | None, expected: int) -> None:
    client = world.client(persona)
    for url in ("/c/nightfall/decisions/", "/c/nightfall/decisions/new/"):
        assert client.get(url).status_code == expected, url


def test_a_storyteller_proposes_and_votes_through_the_pages(world: World) -> None:
    client = world.client("storyteller")
    with time_machine.travel(NOW, tick=False):
        form = client.get("/c/nightfall/decisions/new/")
        assert 'name="setting_name"' in form.content.decode()
        response = client.post(
            "/c/nightfall/decisions/new/",
            {"kind": "add_storyteller", "target": world.users["player_alice"].pk, "days": 7},
        )
        assert response.status_code == 302
        proposal = Proposal.objects.get()
        assert response["Location"] == f"/c/nightfall/decisions/{proposal.pk}/"
        response = client.post(response["Location"], {"vote": "yes"})
        assert response.status_code == 302
        assert Ballot.objects.get(proposal=proposal).yes is True
        missing = client.post(f"/c/nightfall/decisions/{proposal.pk}/", {})
        assert missing.status_code == 400
        # The dashboard's card: the admin has a vote waiting, the storyteller has cast theirs.
        assert (
            "Votes waiting for you" in world.client("admin").get("/c/nightfall/").content.decode()
        )
        assert "Votes waiting for you" not in client.get("/c/nightfall/").content.decode()


def test_a_player_cannot_propose_a_storytellers_decision_through_the_page(world: World) -> None:
    client = world.client("player_alice")
    with time_machine.travel(NOW, tick=False):
        page = client.get("/c/nightfall/decisions/new/").content.decode()
        assert 'name="setting_name"' not in page and "add_storyteller" not in page
        response = client.post(
            "/c/nightfall/decisions/new/",
            {"kind": "add_storyteller", "target": world.users["player_bob"].pk, "days": 7},
        )
    assert response.status_code == 400
    assert not Proposal.objects.exists()


def test_a_bad_proposal_shows_the_error_next_to_the_field(world: World) -> None:
    client = world.client("storyteller")
    with time_machine.travel(NOW, tick=False):
        response = client.post(
            "/c/nightfall/decisions/new/",
            {"kind": "remove_player", "target": world.users["admin"].pk, "days": 7},
        )
    assert response.status_code == 400
    assert "admin is not a player." in response.content.decode()


def test_a_vote_after_the_deadline_is_refused_and_the_page_closes_it(world: World) -> None:
    proposal = propose(world, "storyteller", "other", text="x")
    client = world.client("admin")
    with time_machine.travel(AFTER, tick=False):
        response = client.post(f"/c/nightfall/decisions/{proposal.pk}/", {"vote": "yes"})
        assert response.status_code == 302  # back to the page, which shows the result
        page = client.get(response["Location"]).content.decode()
    assert "votes are no longer taken" in page and "The result" in page
    proposal.refresh_from_db()
    assert proposal.status == DecisionStatus.FAILED
    assert not Ballot.objects.exists()


@pytest.mark.parametrize("proposals", [1, 15], ids=["one", "fifteen"])
def test_the_list_costs_the_same_with_any_number_of_decisions(world: World, proposals: int) -> None:
    propose(world, "player_alice", "remove_player", "player_bob")
    for i in range(proposals):
        propose(world, "storyteller", "other", text=f"Decision {i}")
    client = world.client("storyteller")
    with time_machine.travel(NOW + dt.timedelta(hours=1), tick=False):
        client.get("/c/nightfall/decisions/")
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/c/nightfall/decisions/")
    assert response.status_code == 200
    # 1. session, 2. user, 3. membership, 4. due proposals to close (none), 5. open ones
    # (target and proposer joined), 6. closed ones, 7. own ballots among the open, 8. switcher
    assert len(queries) == 8
