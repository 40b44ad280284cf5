"""The dashboard: "what to do next", per role (issue 12).

The world's first game was on Saturday 9 March 2024 in New York; its downtime is due on
Tuesday 19 March 2024, 23:59 EDT. Each test freezes the clock where its story needs it.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from characters.models import Character, PurchaseStatus, XpKind, XpPurchase
from chronicle import services
from chronicle.models import Cycle, CycleStatus
from downtimes.models import DeskItem, DeskStatus, ItemKind, ResolutionRun, RunStatus
from downtimes.services import pipeline, submissions
from tests.conftest import World

NY = zoneinfo.ZoneInfo("America/New_York")
DURING = dt.datetime(2024, 3, 12, 12, 0, tzinfo=NY)  # a Tuesday, a week before the deadline
DEADLINE = dt.datetime(2024, 3, 19, 23, 59, tzinfo=NY)
AFTER = dt.datetime(2024, 3, 20, 9, 0, tzinfo=NY)
SLUG = "nightfall"


@pytest.fixture
def during() -> Iterator[None]:
    with time_machine.travel(DURING, tick=False):
        yield


def page(world: World, persona: str) -> str:
    response = world.client(persona).get(reverse("dashboard", args=[SLUG]))
    assert response.status_code == 200
    return response.content.decode()


def card(html: str, card_id: str) -> str:
    """The HTML of one card (its <section> labelled by `card_id`)."""
    match = re.search(
        rf'<section class="card" aria-labelledby="{card_id}">(.*?)</section>', html, re.S
    )
    assert match, f"no card {card_id}"
    return match.group(1)


def states(html: str) -> dict[str, str]:
    """Character name -> the downtime state shown beside it."""
    found = re.findall(
        r'<li><a href="[^"]+">([^<]+)</a>\s*<span class="badge [^"]+" data-state="([a-z_]+)"',
        card(html, "card-downtime"),
    )
    return dict(found)


def alice_and_bob(world: World) -> tuple[Any, Any, Any]:
    return world.users["player_alice"], world.users["player_bob"], world.users["storyteller"]


def sign_in(world: World, *personas: str) -> None:
    services.attendance_record(
        game=world.game,
        lines=[services.SignIn(world.users[p].pk, True, True) for p in personas],
        by=world.users["storyteller"],
        now=DURING,
    )


def buy(world: World, character: Character, persona: str, kind: str = "willpower") -> Any:
    """A purchase waiting for sign-off, paid for by an opening balance (XP-01)."""
    from characters.services.ledger import xp_entry_add
    from characters.services.purchases import purchase_request

    user = world.users[persona]
    xp_entry_add(
        chronicle=world.chronicle,
        player_id=user.pk,
        amount=Decimal(20),
        kind=XpKind.OPENING,
        reason="Opening balance",
        key=f"opening:{user.pk}:{kind}",
        now=DURING,
    )
    target = "physical" if kind == "trait" else ""
    return purchase_request(character=character, by=user, kind=kind, target=target, now=DURING)


def submitted(world: World, character: Character, persona: str = "player_alice") -> Any:
    user = world.users[persona]
    draft = submissions.submission_for_edit(character=character, cycle=world.game.cycle, by=user)
    draft = submissions.submission_save(
        submission=draft, by=user, notes="A quiet month.", version=draft.version
    )
    return submissions.submission_submit(submission=draft, by=user)


# --- A player --------------------------------------------------------------------------------


def test_the_player_sees_the_deadline_count_down(world: World, during: None) -> None:
    html = card(page(world, "player_alice"), "card-downtime")
    # A week and almost twelve hours before 23:59 EDT on the 19th.
    assert "7 days left" in html
    assert "closes in 1\xa0week" in html
    assert '<time datetime="2024-03-19T23:59:00-04:00">Tue 19 Mar 2024, 23:59 EDT</time>' in html


def test_one_day_left_is_singular(world: World) -> None:
    with time_machine.travel(DEADLINE - dt.timedelta(hours=30), tick=False):
        html = card(page(world, "player_alice"), "card-downtime")
    assert "1 day left" in html


def test_each_character_shows_its_downtime_state(
    world: World, make_character: Callable[..., Character], during: None
) -> None:
    alice = world.users["player_alice"]
    lucien = make_character("Lucien")
    make_character("Marguerite", player="player_bob")
    assert states(page(world, "player_alice")) == {"Lucien": "not_started"}
    draft = submissions.submission_for_edit(character=lucien, cycle=world.game.cycle, by=alice)
    assert states(page(world, "player_alice")) == {"Lucien": "draft"}
    sent = submissions.submission_submit(submission=draft, by=alice)
    assert states(page(world, "player_alice")) == {"Lucien": "submitted"}
    with time_machine.travel(DURING + dt.timedelta(hours=1), tick=False):
        submissions.submission_save(
            submission=sent, by=alice, notes="One more thing.", version=sent.version
        )
    html = page(world, "player_alice")
    assert states(html) == {"Lucien": "changed"}
    assert "Changed since submitted" in html
    assert reverse("downtime_character", args=[SLUG, lucien.pk]) in html
    # Bob reads only his own.
    assert states(page(world, "player_bob")) == {"Marguerite": "not_started"}


def test_a_player_without_a_character_is_told_to_make_one(world: World, during: None) -> None:
    html = card(page(world, "player_alice"), "card-downtime")
    assert "no approved character" in html
    assert reverse("character_create", args=[SLUG]) in html


def test_a_downtime_closed_early_says_so(world: World, during: None) -> None:
    services.cycle_close(cycle=world.game.cycle, by=world.users["storyteller"], now=DURING)
    html = card(page(world, "player_alice"), "card-downtime")
    assert "Closed early" in html and "before its deadline" in html
    assert "days left" not in html and "Deadline passed" not in html


def test_no_downtime_before_the_first_game(world: World) -> None:
    with time_machine.travel(dt.datetime(2024, 3, 1, 12, tzinfo=NY), tick=False):
        html = card(page(world, "player_alice"), "card-downtime")
    assert "No downtime is open right now" in html
    assert reverse("game_list", args=[SLUG]) in html


def test_purchases_waiting_are_listed_for_their_player(
    world: World, make_character: Callable[..., Character], during: None
) -> None:
    lucien = make_character("Lucien")
    make_character("Marguerite", player="player_bob")
    buy(world, lucien, "player_alice")
    html = card(page(world, "player_alice"), "card-purchases")
    assert "1 purchase waits for a storyteller" in html
    assert "Lucien" in html and "Willpower" in html
    bob = card(page(world, "player_bob"), "card-purchases")
    assert "Nothing is waiting for a storyteller" in bob
    assert reverse("character_list", args=[SLUG]) in bob


def _release(world: World, lucien: Character, at: dt.datetime) -> Cycle:
    sign_in(world, "player_alice", "player_bob")
    with time_machine.travel(DURING, tick=False):
        submitted(world, lucien)
    st = world.users["storyteller"]
    cycle = world.game.cycle
    services.cycle_close(cycle=cycle, by=st, now=AFTER)
    pipeline.cycle_resolve_inline(cycle=cycle, by=st, now=AFTER)
    cycle.refresh_from_db()
    pipeline.cycle_release(cycle=cycle, by=st, now=at)
    cycle.refresh_from_db()
    return cycle


def test_released_results_are_new_for_a_week(
    world: World, make_character: Callable[..., Character]
) -> None:
    lucien = make_character("Lucien")
    released_at = AFTER + dt.timedelta(days=1)
    cycle = _release(world, lucien, released_at)
    assert cycle.status == CycleStatus.RELEASED
    with time_machine.travel(released_at + dt.timedelta(days=6), tick=False):
        fresh = card(page(world, "player_alice"), "card-results")
    assert '<span class="badge badge-info">New</span>' in fresh
    assert f"{reverse('results', args=[SLUG])}#results-1" in fresh
    assert "The results of the downtime after game 1 are out" in fresh
    with time_machine.travel(released_at + dt.timedelta(days=8), tick=False):
        older = card(page(world, "player_alice"), "card-results")
    assert "badge-info" not in older and "are out" in older


def test_no_results_yet_says_when_they_come(world: World, during: None) -> None:
    html = card(page(world, "player_alice"), "card-results")
    assert "No results yet" in html


# --- The storytellers ------------------------------------------------------------------------


def next_action(html: str) -> tuple[str, str]:
    match = re.search(r'<a class="button" href="([^"]+)" data-next-action>([^<]+)</a>', html)
    assert match, "no next action"
    return match.group(1), match.group(2)


def test_the_stage_card_names_the_next_step(
    world: World, make_character: Callable[..., Character]
) -> None:
    st = world.users["storyteller"]
    cycle = world.game.cycle
    resolution = reverse("cycle_resolution", args=[SLUG, 1])
    with time_machine.travel(DURING, tick=False):
        html = card(page(world, "storyteller"), "card-stage")
        assert next_action(html) == (resolution, "Close the downtime")
        assert "Open" in html
    with time_machine.travel(AFTER, tick=False):
        html = card(page(world, "storyteller"), "card-stage")
        assert next_action(html) == (resolution, "Close the downtime")
        assert "The deadline has passed" in html
        services.cycle_close(cycle=cycle, by=st, now=AFTER)
        assert next_action(card(page(world, "storyteller"), "card-stage")) == (
            resolution,
            "Resolve",
        )
        pipeline.cycle_resolve_inline(cycle=cycle, by=st, now=AFTER)
        assert next_action(card(page(world, "admin"), "card-stage")) == (
            reverse("cycle_release", args=[SLUG, 1]),
            "Review and release",
        )
        ResolutionRun.objects.filter(cycle=cycle).update(status=RunStatus.RUNNING)
        assert next_action(card(page(world, "storyteller"), "card-stage")) == (
            f"{resolution}#progress",
            "Follow the resolution",
        )
        ResolutionRun.objects.filter(cycle=cycle).update(status=RunStatus.DONE)
        cycle.refresh_from_db()
        pipeline.cycle_release(cycle=cycle, by=st, now=AFTER)
        html = card(page(world, "storyteller"), "card-stage")
    assert "data-next-action" not in html
    assert "nothing is left to do on it" in html


def test_the_oldest_unreleased_cycle_comes_first(world: World) -> None:
    services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    with time_machine.travel(dt.datetime(2024, 4, 8, 12, tzinfo=NY), tick=False):
        html = card(page(world, "storyteller"), "card-stage")
    assert "Downtime after game 1" in html
    assert "1 more cycle waits for its release." in html


def test_the_desk_card_counts_items_by_status(
    world: World, make_character: Callable[..., Character], during: None
) -> None:
    lucien = make_character("Lucien")
    wanted = {DeskStatus.NEW: 3, DeskStatus.IN_PROGRESS: 2, DeskStatus.RESOLVED: 1}
    n = 0
    for status, count in wanted.items():
        for _ in range(count):
            n += 1
            DeskItem.objects.create(
                cycle=world.game.cycle,
                kind=ItemKind.INFLUENCE,
                character=lucien,
                status=status,
                key=f"item-{n}",
                created_at=DURING,
                updated_at=DURING,
            )
    html = card(page(world, "storyteller"), "card-desk")
    shown = dict(re.findall(r'<strong data-status="([a-z_]+)">(\d+)</strong>', html))
    assert shown == {
        "new": "3",
        "in_progress": "2",
        "needs_info": "0",
        "approved": "0",
        "rejected": "0",
        "resolved": "1",
    }
    assert "6 items in the downtime after game 1" in html
    assert f"{reverse('desk', args=[SLUG])}?game=1&amp;status=new" in html


def test_an_empty_desk_says_what_comes(world: World, during: None) -> None:
    html = card(page(world, "storyteller"), "card-desk")
    assert "No items yet" in html and reverse("desk", args=[SLUG]) in html


def test_purchases_to_sign_off_are_counted(
    world: World, make_character: Callable[..., Character], during: None
) -> None:
    lucien = make_character("Lucien")
    marguerite = make_character("Marguerite", player="player_bob")
    buy(world, lucien, "player_alice")
    buy(world, marguerite, "player_bob")
    gone = buy(world, marguerite, "player_bob", kind="trait")
    XpPurchase.objects.filter(pk=gone.pk).update(status=PurchaseStatus.WITHDRAWN)
    html = card(page(world, "storyteller"), "card-sign-off")
    assert 'data-count="2"' in html and "purchases wait for your sign-off" in html
    assert reverse("purchase_queue", args=[SLUG]) in html


def test_storytellers_do_not_see_the_tally(world: World, during: None) -> None:
    assert 'aria-labelledby="card-tally"' not in page(world, "storyteller")
    assert 'aria-labelledby="card-tally"' in page(world, "admin")


def test_the_admin_sees_the_votes_counted_and_when_voting_closes(
    world: World, make_character: Callable[..., Character], during: None
) -> None:
    alice, bob, _ = alice_and_bob(world)
    lucien = make_character("Lucien")
    marguerite = make_character("Marguerite", player="player_bob")
    sign_in(world, "player_alice", "player_bob")
    for character, user, pick in ((lucien, alice, "Marguerite"), (marguerite, bob, "Lucien")):
        draft = submissions.submission_for_edit(
            character=character, cycle=world.game.cycle, by=user
        )
        submissions.votes_save(submission=draft, by=user, picks={"feared": pick, "liked": pick})
        if user == alice:
            submissions.submission_submit(submission=draft, by=user)
    # Bob's draft does not count (DT-06): two votes from one submitted downtime.
    html = card(page(world, "admin"), "card-tally")
    assert 'data-votes="2"' in html
    assert "counted from 1 submitted downtime after game 1" in html
    assert "Voting open" in html and "2024-03-19T23:59:00-04:00" in html
    services.cycle_close(cycle=world.game.cycle, by=world.users["storyteller"], now=DURING)
    html = card(page(world, "admin"), "card-tally")
    assert "Voting closed" in html
    assert f"{reverse('vote_tally', args=[SLUG])}?cycle=1" in html


# --- Every role --------------------------------------------------------------------------------


def test_the_next_game_or_what_to_do_without_one(world: World, during: None) -> None:
    staff = card(page(world, "storyteller"), "card-next-game")
    assert "No game is scheduled yet" in staff
    assert reverse("game_create", args=[SLUG]) in staff
    player = card(page(world, "player_alice"), "card-next-game")
    assert "No game is scheduled yet" in player
    assert reverse("game_create", args=[SLUG]) not in player
    services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6), place="Crypt")
    player = card(page(world, "player_alice"), "card-next-game")
    assert "Sat 6 Apr 2024" in player and "Crypt" in player


def test_a_chronicle_with_no_game_yet_says_what_to_do(world: World) -> None:
    world.game.cycle.delete()
    world.game.delete()
    staff = page(world, "storyteller")
    assert "No game has been played yet" in card(staff, "card-stage")
    assert "Nothing to work on yet" in card(staff, "card-desk")
    admin = page(world, "admin")
    assert "No votes yet" in card(admin, "card-tally")


# --- Constant cost -----------------------------------------------------------------------------


def _fill(
    world: World, make_user: Callable[..., Any], make_character: Callable[..., Character], n: int
) -> None:
    """`n` more players at the game, each with a character, a submitted downtime with a vote,
    a desk item and a purchase waiting; Alice's own character has all of these too."""
    start = len(world.users)
    for i in range(start, start + n):
        name = f"player_{i}"
        world.users[name] = make_user(name)
        services.membership_add(chronicle=world.chronicle, user=world.users[name], role="player")
    names = [name for name in world.users if name.startswith("player_")][-n:]
    sign_in(world, "player_alice", "player_bob", *names)
    for name in names:
        user = world.users[name]
        character = make_character(f"PC of {name}", player=name)
        draft = submissions.submission_for_edit(
            character=character, cycle=world.game.cycle, by=user
        )
        submissions.votes_save(submission=draft, by=user, picks={"costume": "player_bob"})
        submissions.submission_submit(submission=draft, by=user)
        buy(world, character, name)
        DeskItem.objects.create(
            cycle=world.game.cycle,
            kind=ItemKind.INFLUENCE,
            character=character,
            status=DeskStatus.IN_PROGRESS if len(name) % 2 else DeskStatus.NEW,
            key=f"fill-{name}",
            created_at=DURING,
            updated_at=DURING,
        )


def _queries(world: World, persona: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        page(world, persona)
    return len(queries)


@pytest.mark.parametrize("persona", ["player_alice", "storyteller", "admin"])
def test_the_dashboard_costs_the_same_with_more_data(
    world: World,
    make_user: Callable[..., Any],
    make_character: Callable[..., Character],
    during: None,
    persona: str,
) -> None:
    lucien = make_character("Lucien")
    submitted(world, lucien)
    buy(world, lucien, "player_alice")
    _fill(world, make_user, make_character, 1)
    few = _queries(world, persona)
    _fill(world, make_user, make_character, 20)
    buy(world, lucien, "player_alice", kind="trait")
    assert XpPurchase.objects.filter(status=PurchaseStatus.REQUESTED).count() == 23
    assert _queries(world, persona) == few
