"""A realistic month of downtime for the pipeline's fault tests, its statement counts and the
benchmark: one chronicle, one game (Saturday 9 March 2024, New York), its open cycle, and a
month's worth of play filed through the same services the pages call.

Everything is named, and every time is passed in, so two builds on two fresh databases (or one
database flushed in between) make the same world up to ids; `digest` compares them by name.

The month (the game's downtime is due Tuesday 19 March 2024, 23:59 EDT):

| player | character        | game               | downtime                                      |
|--------|------------------|--------------------|-----------------------------------------------|
| alice  | Isabella Moreau  | attended, waiver   | submitted: herd action (resolved on the desk), |
|        |                  |                    | report (picked), votes, Mental +1 (approved)  |
| bob    | Marcus Steel     | attended, waiver   | submitted: searches Isabella (underworld 6),  |
|        |                  |                    | votes; holds Gina in torpor (TOR-01)          |
| carmen | Carmen Vasquez   | attended, waiver   | submitted: joins Marcus's search (occult 5),  |
|        |                  |                    | builds a camera in her new haven, report      |
|        |                  |                    | (picked), votes, Social +1 (waiting)          |
| dmitri | Old Dmitri       | attended, waiver   | draft only: no downtime (DT-03)               |
| esme   | Esme Hart        | attended, no waiver| submitted: attacks Dmitri's haven (business  |
|        |                  |                    | 2), searches Dmitri (government 1), votes;    |
|        |                  |                    | has drunk Marcus's blood once                 |
| felix  | Felix Grant      | absent             | nothing: no downtime (DT-03)                  |
| gina   | Gina Lark        | attended, waiver   | nothing (DT-03): in torpor, held by Marcus    |
| extraNNN | Extra NNN      | attended; waiver on even numbers; submitted on even numbers |   |

Hand figures: Isabella's Velvet Loft hides at (Mental 3 after her purchase + influences 2) × 2
= 10 points, and Marcus and Carmen search with 6 + 5 = 11 > 10: found (HAV-25b). Dmitri's Pump
Station hides at (5 + 3) × 2 = 16 against Esme's 1: not found. Esme's 2 influence take the Pump
Station's resistance of 3 down to 1 (HAV-25c).
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model

from characters.models import Approval, Character, Status, XpKind
from characters.services import bonds, ledger, purchases, records
from chronicle import services as chronicle_services
from chronicle.models import Chronicle, Cycle, Game, Role
from downtimes.models import ActionKind, DeskStatus, Submission
from downtimes.services import desk, submissions, votes
from havens.models import (
    Attribute,
    Find,
    Ownership,
    OwnershipHow,
    Structure,
    StructureKind,
    StructureStatus,
)
from havens.services import ownership as haven_ownership
from havens.services import searches as haven_searches

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
GAME_DAY = dt.date(2024, 3, 9)
BEFORE_GAME = dt.datetime(2024, 2, 20, 20, 0, tzinfo=NEW_YORK)
DURING = dt.datetime(2024, 3, 15, 12, 0, tzinfo=NEW_YORK)
AFTER_DEADLINE = dt.datetime(2024, 3, 20, 0, 59, tzinfo=NEW_YORK)


@dataclass
class DemoMonth:
    chronicle: Chronicle
    game: Game
    cycle: Cycle
    st: Any
    users: dict[str, Any] = field(default_factory=dict)
    characters: dict[str, Character] = field(default_factory=dict)


# username, character name, clan, fields (the sheet's numbers that matter here)
PLAYERS: list[tuple[str, str, str, dict[str, int]]] = [
    ("alice", "Isabella Moreau", "toreador", {"mental": 2, "business": 1, "herd": 1}),
    ("bob", "Marcus Steel", "brujah", {"mental": 3, "underworld": 6, "government": 1}),
    ("carmen", "Carmen Vasquez", "tremere", {"mental": 5, "occult": 5, "business": 2}),
    ("dmitri", "Old Dmitri", "nosferatu", {"mental": 5, "underworld": 2, "herd": 1}),
    ("esme", "Esme Hart", "ventrue", {"mental": 3, "business": 2, "government": 1}),
    ("felix", "Felix Grant", "gangrel", {"mental": 3, "herd": 3}),
    ("gina", "Gina Lark", "malkavian", {"mental": 4, "occult": 1}),
]
# attended, waiver signed
SIGN_IN = {
    "alice": (True, True),
    "bob": (True, True),
    "carmen": (True, True),
    "dmitri": (True, True),
    "esme": (True, False),
    "felix": (False, False),
    "gina": (True, True),
}


def _user(username: str) -> Any:
    # No password: hashing one is slow on the production hasher, and nobody logs in here.
    user = get_user_model()(username=username, email=f"{username}@example.com")
    user.set_unusable_password()
    user.save()
    return user


def _character(chronicle: Chronicle, player: Any, name: str, clan: str, **fields: int) -> Character:
    """An approved, active PC built from the sheet's numbers (the creation wizard has its own
    tests, as in tests/conftest.py's make_character)."""
    sheet: dict[str, Any] = {
        "physical": 6,
        "social": 5,
        "mental": 3,
        "willpower": 2,
        "abilities": {"investigation": 1},
    }
    sheet.update(fields)
    return Character.objects.create(
        chronicle=chronicle,
        player=player,
        name=name,
        creature="kindred",
        clan=clan,
        approval=Approval.APPROVED,
        background_questionnaire="Who sired you? A stranger in the rain.",
        background_approved_at=BEFORE_GAME,
        **sheet,
    )


def _haven(owner: Character, name: str, location: str, resistance: int = 0) -> Structure:
    """A haven built in an earlier downtime (construction has its own tests)."""
    structure = Structure.objects.create(
        chronicle=owner.chronicle,
        kind=StructureKind.OUTER,
        name=name,
        location=location,
        status=StructureStatus.STANDING,
        designed_by=owner,
        created_at=BEFORE_GAME,
    )
    Ownership.objects.create(
        structure=structure, character=owner, how=OwnershipHow.BUILT, started_at=BEFORE_GAME
    )
    if resistance:
        Attribute.objects.create(
            structure=structure,
            kind="influence_resistance",
            quantity=resistance,
            cost=resistance,
            created_at=BEFORE_GAME,
        )
    return structure


def _downtime(month: DemoMonth, username: str) -> Submission:
    return submissions.submission_for_edit(
        character=month.characters[username],
        cycle=month.cycle,
        by=month.users[username],
        now=DURING,
    )


def _submit(month: DemoMonth, username: str, submission: Submission) -> None:
    submissions.submission_submit(
        submission=submission, by=month.users[username], key="month", now=DURING
    )


def build_month(*, extra_players: int = 0, prefix: str = "") -> DemoMonth:
    """Build the month above, with `extra_players` more players (extra000, ...), each with one
    PC; they attended, those of even number signed the waiver and submitted an empty downtime.
    The cycle is left open: the caller closes it.

    `prefix` goes before every username and the chronicle's slug, so that several months fit
    in one database (usernames are unique across chronicles)."""
    chronicle = chronicle_services.chronicle_create(
        name="Nightfall", slug=f"{prefix}nightfall", timezone_name="America/New_York"
    )
    st = _user(f"{prefix}st_lucia")
    chronicle_services.membership_add(chronicle=chronicle, user=st, role=Role.STORYTELLER)
    game = chronicle_services.game_create(chronicle=chronicle, date=GAME_DAY, place="Elysium")
    cycle = Cycle.objects.get(game=game)
    month = DemoMonth(chronicle=chronicle, game=game, cycle=cycle, st=st)

    for username, name, clan, fields in PLAYERS:
        user = _user(prefix + username)
        chronicle_services.membership_add(chronicle=chronicle, user=user, role=Role.PLAYER)
        month.users[username] = user
        month.characters[username] = _character(chronicle, user, name, clan, **fields)
    extras = [f"extra{i:03d}" for i in range(extra_players)]
    for i, username in enumerate(extras):
        user = _user(prefix + username)
        chronicle_services.membership_add(chronicle=chronicle, user=user, role=Role.PLAYER)
        month.users[username] = user
        month.characters[username] = _character(
            chronicle, user, f"Extra {i:03d}", "brujah", business=1 + i % 3, herd=i % 2
        )
    prince = Character.objects.create(
        chronicle=chronicle,
        player=None,
        name="Prince Aldric",
        creature="kindred",
        clan="ventrue",
        generation=8,
        status=Status.NPC,
        approval=Approval.APPROVED,
        mental=8,
        business=4,
    )
    month.characters["prince"] = prince

    sign_in = [
        chronicle_services.SignIn(month.users[u].pk, attended, waiver)
        for u, (attended, waiver) in SIGN_IN.items()
    ] + [
        chronicle_services.SignIn(month.users[u].pk, True, i % 2 == 0) for i, u in enumerate(extras)
    ]
    chronicle_services.attendance_record(game=game, lines=sign_in, by=st, now=DURING)

    isabella, marcus, carmen = (month.characters[u] for u in ("alice", "bob", "carmen"))
    dmitri, esme, gina = (month.characters[u] for u in ("dmitri", "esme", "gina"))
    loft = _haven(isabella, "The Velvet Loft", "Top floor above the Moreau gallery")
    pump = _haven(dmitri, "The Pump Station", "Sewer level 1, behind the pumps", resistance=3)
    # Esme found the Pump Station at an earlier game (a released find: no search result).
    Find.objects.create(
        structure=pump, character=esme, cycle=cycle, found_at=DURING - dt.timedelta(days=5)
    )
    for username, amount in (("alice", 5), ("carmen", 3)):
        ledger.xp_entry_add(
            chronicle=chronicle,
            player_id=month.users[username].pk,
            amount=Decimal(amount),
            kind=XpKind.OPENING,
            reason="XP carried over from the paper records",
            key="month:opening",
            actor=st,
            now=BEFORE_GAME,
        )

    # Isabella: a herd action the STs resolve on the desk, a report, votes, Mental +1.
    alice = month.users["alice"]
    sub = _downtime(month, "alice")
    herd = submissions.influence_action_add(
        submission=sub,
        by=alice,
        influence="herd",
        points=1,
        action=ActionKind.HERD,
        key="herd",
        description="Feed at the gallery opening.",
        now=DURING,
    )
    sub = submissions.submission_save(
        submission=Submission.objects.get(pk=sub.pk),
        by=alice,
        game_report="Isabella charmed the Harpies and the Prince frowned.",
        version=Submission.objects.get(pk=sub.pk).version,
        now=DURING,
    )
    votes_of = {
        "alice": {
            "feared": "Marcus Steel",
            "liked": "Carmen Vasquez",
            "roleplaying": f"{prefix}carmen",
        },
        "bob": {"feared": "Old Dmitri", "respected": "Carmen Vasquez", "costume": f"{prefix}alice"},
        "carmen": {"feared": "Marcus Steel", "liked": "Isabella Moreau", "costume": f"{prefix}bob"},
        "esme": {"feared": "Marcus Steel", "roleplaying": f"{prefix}carmen"},
    }
    submissions.votes_save(submission=sub, by=alice, picks=votes_of["alice"], now=DURING)
    item = submissions.purchase_add(
        submission=sub, by=alice, kind="trait", target="mental", now=DURING
    )
    assert item.purchase is not None
    purchases.purchase_approve(purchase=item.purchase, by=st, now=DURING)
    _submit(month, "alice", sub)
    herd.refresh_from_db()
    desk.desk_item_update(
        item=herd,
        by=st,
        version=herd.version,
        status=DeskStatus.RESOLVED,
        result="Two new vessels join your herd.",
        now=DURING,
    )

    # Marcus searches for Isabella's havens; Carmen joins the search; he holds Gina in torpor.
    bob = month.users["bob"]
    sub = _downtime(month, "bob")
    search_item = submissions.influence_action_add(
        submission=sub,
        by=bob,
        influence="underworld",
        points=6,
        action=ActionKind.SEARCH,
        key="search-isabella",
        target_name="Isabella Moreau",
        now=DURING,
    )
    submissions.votes_save(submission=sub, by=bob, picks=votes_of["bob"], now=DURING)
    _submit(month, "bob", sub)
    records.torpor_hold_record(holder=marcus, captive=gina, cycle=cycle, by=st, now=DURING)

    carmen_user = month.users["carmen"]
    assert search_item.haven_search is not None
    haven_searches.search_join(
        party_code=search_item.haven_search.party_code,
        character=carmen,
        influence="occult",
        points=5,
        by=carmen_user,
        key="join-isabella",
        now=DURING,
    )
    sub = _downtime(month, "carmen")
    annex = haven_ownership.structure_design(
        character=carmen,
        by=carmen_user,
        kind=StructureKind.OUTER,
        name="The Chantry Annex",
        location="Behind the old library, Copley Square",
        attributes=[haven_ownership.AttributeRequest("camera")],
        key="annex",
        now=DURING,
    )
    project = annex.projects.get()
    submissions.influence_action_add(
        submission=sub,
        by=carmen_user,
        influence="business",
        points=project.cost,
        action=ActionKind.BUILD,
        key="annex-camera",
        target_structure=annex,
        now=DURING,
    )
    sub = submissions.submission_save(
        submission=Submission.objects.get(pk=sub.pk),
        by=carmen_user,
        game_report="The chantry's wards held; Marcus glowered all night.",
        version=Submission.objects.get(pk=sub.pk).version,
        now=DURING,
    )
    submissions.votes_save(submission=sub, by=carmen_user, picks=votes_of["carmen"], now=DURING)
    submissions.purchase_add(
        submission=sub, by=carmen_user, kind="trait", target="social", now=DURING
    )
    _submit(month, "carmen", sub)

    # Dmitri writes a draft and never submits it (DT-01: it counts as no downtime).
    _downtime(month, "dmitri")

    # Esme attacks the Pump Station she found, searches for Dmitri, votes; she drank Marcus's
    # blood at the game.
    esme_user = month.users["esme"]
    sub = _downtime(month, "esme")
    submissions.influence_action_add(
        submission=sub,
        by=esme_user,
        influence="business",
        points=2,
        action=ActionKind.ATTACK_HAVEN,
        key="attack-pump",
        target_structure=pump,
        now=DURING,
    )
    submissions.influence_action_add(
        submission=sub,
        by=esme_user,
        influence="government",
        points=1,
        action=ActionKind.SEARCH,
        key="search-dmitri",
        target_name="Old Dmitri",
        now=DURING,
    )
    submissions.votes_save(submission=sub, by=esme_user, picks=votes_of["esme"], now=DURING)
    _submit(month, "esme", sub)
    bonds.drink_record(
        drinker=esme, donors=[marcus], mixed=False, night=GAME_DAY, by=st, now=DURING
    )

    for i, username in enumerate(extras):
        if i % 2 == 0:
            _submit(month, username, _downtime(month, username))

    for username in ("alice", "carmen"):
        picked = Submission.objects.get(cycle=cycle, character=month.characters[username])
        votes.report_pick(submission=picked, by=st, now=DURING)
    assert loft.pk and month.cycle.pk
    return month
