"""A player's own data (`/account/data/`): their user, memberships, characters, ledger,
downtimes and released results, and nothing of anyone else's. Every secret of another player,
of the storytellers, and of the player's own sheet that only storytellers read carries a
marker; the download must hold the player's markers and none of the others."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest
from django.urls import reverse

from characters.models import Status, XpKind, XpPurchase
from characters.services import ledger
from chronicle import services
from chronicle.models import CycleStatus, MailChoice, MailKind, MailPreference
from chronicle.services import mail
from downtimes.models import (
    DeskItem,
    Outcome,
    OutcomeOverride,
    OutcomeReader,
    ResolutionRun,
    Submission,
)

pytestmark = pytest.mark.django_db

AT = dt.datetime(2024, 3, 20, 12, 0, tzinfo=dt.UTC)

OWN = {
    "MARKOWNLEDGER",
    "MARKOWNNOTES",
    "MARKOWNREPORT",
    "MARKOWNITEM",
    "MARKRELEASEDRESULT",
    "MARKPUBLICTEXT",
    "MARKOWNPURCHASE",
}
SECRET = {
    "MARKSTNOTEALICE",  # the storytellers' notes on Alice's own character
    "MARKDESKSTNOTE",  # the storytellers' notes on Alice's desk item
    "MARKUNRELEASED",  # a result not released yet
    "MARKEXPLANATION",  # the storytellers' explanation of a released outcome
    "MARKPREVIEW",  # an outcome of a cycle not released
    "MARKOVERRIDE",  # an ST's override note
    "MARKBOBNAME",  # another player's character
    "MARKBOBLEDGER",
    "MARKBOBNOTES",
    "MARKBOBPURCHASE",
    "MARKNPCNOTE",  # a storyteller's NPC
}


def _submission(world: Any, character: Any, player: Any, cycle: Any, notes: str) -> Submission:
    return Submission.objects.create(
        cycle=cycle,
        character=character,
        player=player,
        notes=notes,
        game_report="MARKOWNREPORT" if player == world.users["player_alice"] else "",
        created_at=AT,
        updated_at=AT,
    )


def _item(cycle: Any, character: Any, key: str, **fields: Any) -> DeskItem:
    return DeskItem.objects.create(
        cycle=cycle,
        kind="influence",
        character=character,
        key=key,
        created_at=AT,
        updated_at=AT,
        **fields,
    )


def _outcome(cycle: Any, subject: str, player: Any, **fields: Any) -> Outcome:
    run, _ = ResolutionRun.objects.get_or_create(
        cycle=cycle, number=1, defaults={"chunk_size": 100, "started_at": AT}
    )
    outcome = Outcome.objects.create(
        cycle=cycle, run=run, step="awards", subject=subject, player=player, **fields
    )
    OutcomeReader.objects.create(outcome=outcome, player=player)
    return outcome


@pytest.fixture
def marked(world: Any, make_character: Any) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    released = world.game.cycle
    lucien = make_character("Lucien", player="player_alice", st_notes="MARKSTNOTEALICE")
    bastien = make_character("Bastien MARKBOBNAME", player="player_bob", st_notes="x")
    npc = make_character("Lord", player=None, st_notes="MARKNPCNOTE")
    npc.status = Status.NPC
    npc.save(update_fields=["status"])
    for player, reason in ((alice, "MARKOWNLEDGER"), (bob, "MARKBOBLEDGER")):
        ledger.xp_entry_add(
            chronicle=world.chronicle,
            player_id=player.pk,
            amount=Decimal(10),
            kind=XpKind.AWARD,
            reason=reason,
            key="award:seed",
        )
    for character, by, note in (
        (lucien, alice, "MARKOWNPURCHASE"),
        (bastien, bob, "MARKBOBPURCHASE"),
    ):
        XpPurchase.objects.create(
            character=character,
            kind="discipline",
            discipline="potence",
            levels=["1a"],
            cost=Decimal(3),
            note=note,
            requested_by=by,
            requested_at=AT,
        )
    own = _submission(world, lucien, alice, released, "MARKOWNNOTES")
    _submission(world, bastien, bob, released, "MARKBOBNOTES")
    _item(
        released,
        lucien,
        "a",
        submission=own,
        description="MARKOWNITEM",
        st_notes="MARKDESKSTNOTE",
        result="MARKUNRELEASED",
    )
    _item(released, lucien, "b", submission=own, result="MARKRELEASEDRESULT", released_at=AT)
    _item(released, bastien, "c", description="MARKBOBNOTES")
    _outcome(
        released,
        "base:alice",
        alice,
        title="Base XP",
        public_text="MARKPUBLICTEXT",
        explanation="MARKEXPLANATION",
        xp=Decimal(1),
    )
    _outcome(
        released, "base:bob", bob, title="Base XP", public_text="MARKBOBNOTES", explanation="x"
    )
    OutcomeOverride.objects.create(
        cycle=released,
        step="awards",
        subject="base:alice",
        xp=Decimal(2),
        note="MARKOVERRIDE",
        by=world.users["storyteller"],
        at=AT,
    )
    released.status = CycleStatus.RELEASED
    released.closed_at = released.resolved_at = released.released_at = AT
    released.save()
    later = services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 13)).cycle
    _outcome(
        later, "base:alice", alice, title="Preview", public_text="MARKPREVIEW", explanation="x"
    )


def _download(world: Any, persona: str) -> str:
    response = world.client(persona).get(reverse("account_data_export"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"].startswith("attachment")
    return response.content.decode()


def test_a_player_downloads_their_own_data_and_nothing_else(world: Any, marked: None) -> None:
    body = _download(world, "player_alice")
    data = json.loads(body)
    assert data["format"] == "chronicle-account-data"
    assert data["user"]["username"] == "player_alice"
    assert [c["slug"] for c in data["chronicles"]] == ["nightfall"]
    chronicle = data["chronicles"][0]
    assert chronicle["memberships"] == [
        {"role": "player", "joined_at": chronicle["memberships"][0]["joined_at"]}
    ]
    assert [c["name"] for c in chronicle["characters"]] == ["Lucien"]
    assert [r["public_text"] for r in chronicle["results"]] == ["MARKPUBLICTEXT"]
    assert {m for m in OWN if m in body} == OWN
    assert {m for m in SECRET if m in body} == set()


def test_another_player_gets_none_of_hers(world: Any, marked: None) -> None:
    body = _download(world, "player_bob")
    assert "MARKBOBLEDGER" in body and "MARKBOBNAME" in body
    assert {
        m
        for m in OWN | SECRET - {"MARKBOBNAME", "MARKBOBLEDGER", "MARKBOBNOTES", "MARKBOBPURCHASE"}
        if m in body
    } == set()


def test_a_storyteller_gets_only_their_membership(world: Any, marked: None) -> None:
    body = _download(world, "storyteller")
    data = json.loads(body)
    assert data["chronicles"][0]["characters"] == []
    assert {m for m in OWN | SECRET if m in body} == set()


def test_a_visitor_must_log_in(world: Any) -> None:
    response = world.client(None).get(reverse("account_data_export"))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
    assert world.client("outsider").get(reverse("account_data_export")).status_code == 200
    assert world.client("player_alice").post(reverse("account_data_export")).status_code == 405


def test_the_download_holds_her_inbox_and_mail_choices_and_no_one_elses(world: Any) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    for user, mark in ((alice, "MARKALICEINBOX"), (bob, "MARKBOBINBOX")):
        mail.deliver(
            kind=MailKind.BOND,
            user=user,
            key=f"test:{mark}",
            subject=mark,
            body=f"{mark} body",
            chronicle=world.chronicle,
        )
    mail.deliver(
        kind=MailKind.BOND, user=alice, key="test:nochronicle", subject="MARKNOCHRONICLE", body="x"
    )
    MailPreference.objects.create(user=alice, kind=MailKind.BOND, choice=MailChoice.DIGEST)

    data = json.loads(_download(world, "player_alice"))

    [inbox] = data["chronicles"][0]["messages"]
    assert (inbox["subject"], inbox["body"]) == ("MARKALICEINBOX", "MARKALICEINBOX body")
    assert [m["subject"] for m in data["messages"]] == ["MARKNOCHRONICLE"]
    assert data["user"]["mail_choices"] == [{"kind": "bond", "choice": "digest"}]
    assert "MARKBOBINBOX" not in json.dumps(data)
