"""The demo chronicle's characters, with real histories made by the same services the pages call:
created in the wizard, approved by an ST, awarded XP game by game, buying levels, drinking the
Prince's blood, carrying items and stored blood, one retired and one diablerist.

`chronicle`'s `seed_demo` command calls `seed` (each app seeds its own part). Idempotent: a
chronicle that already has characters is left as it is.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.utils import timezone

from chronicle.models import Chronicle, CycleStatus, Game

from .models import Character, Creature, Sect, Status, XpKind
from .services import bonds, ledger, purchases, records
from .services.creation import (
    DisadvantagePick,
    DisciplinePick,
    Draft,
    background_approve,
    character_approve,
    character_draft_create,
    character_submit,
)

QUESTIONNAIRE = "Sire, embrace, what they want from the city: answered with the STs."

# name, player, draft fields, sect
PCS: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "Isabella Moreau",
        "alice",
        {
            "clan": "toreador",
            "clan_bonus": "herd",
            "physical": 3,
            "social": 7,
            "mental": 5,
            "abilities": {"etiquette": 2, "performance": 2, "investigation": 1},
            "influences": {"business": 1, "herd": 1, "occult": 1},
            "disciplines": (
                DisciplinePick("auspex", free="1b"),
                DisciplinePick("presence", free="1a"),
            ),
            "disadvantages": (DisadvantagePick("Vain"), DisadvantagePick("Overconfident")),
            "extra_social": 3,
            "extra_abilities": {"subterfuge": 2},
            "extra_willpower": 1,
            "extra_influences": {},
        },
        Sect.CAMARILLA,
    ),
    (
        "Marcus Steel",
        "bob",
        {
            "clan": "brujah",
            "physical": 7,
            "social": 5,
            "mental": 3,
            "abilities": {"brawl": 2, "streetwise": 2, "intimidation": 1},
            "influences": {"underworld": 2, "government": 1},
            "disciplines": (
                DisciplinePick("potence", free="1b"),
                DisciplinePick("celerity", free="1a"),
            ),
            "disadvantages": (DisadvantagePick("Short fuse", major=True),),
            "extra_physical": 4,
            "extra_abilities": {"brawl": 1},
            "extra_influences": {"underworld": 1},
            "generation": 12,
        },
        Sect.ANARCH,
    ),
    (
        "Carmen Vasquez",
        "carmen",
        {
            "clan": "tremere",
            "chosen_disciplines": ("thaumaturgy_blood",),
            "physical": 3,
            "social": 5,
            "mental": 7,
            "abilities": {"occult": 3, "academics": 1, "investigation": 1},
            "influences": {"occult": 2},
            "disciplines": (
                DisciplinePick("thaumaturgy_blood", free="1b"),
                DisciplinePick("auspex", free="1a"),
            ),
            "disadvantages": (DisadvantagePick("Arrogant"), DisadvantagePick("Bookish")),
            "extra_mental": 3,
            "extra_influences": {"occult": 1},
            "extra_willpower": 2,
        },
        Sect.CAMARILLA,
    ),
    (
        "Old Dmitri",
        "dmitri",
        {
            "clan": "nosferatu",
            "clan_bonus": "sewer_lore",
            "physical": 5,
            "social": 3,
            "mental": 7,
            "abilities": {"stealth": 2, "investigation": 2, "survival": 1},
            "influences": {"underworld": 2, "herd": 1},
            "disciplines": (
                DisciplinePick("obfuscate", free="1b"),
                DisciplinePick("animalism", free="1a"),
            ),
            "disadvantages": (
                DisadvantagePick("Hideously ugly", major=True, physical=True, hideously_ugly=True),
                DisadvantagePick("Hunched", major=True, physical=True),
            ),
            "extra_mental": 3,
            "extra_abilities": {"stealth": 2},
            "sewer_lore": 1,
        },
        Sect.CAMARILLA,
    ),
    (
        "Esme Hart",
        "esme",
        {
            "creature": Creature.GHOUL,
            "physical": 7,
            "social": 3,
            "mental": 5,
            "abilities": {"drive": 2, "firearms": 2, "security": 1},
            "willpower": 1,
            "influences": {"business": 2, "government": 1},
            "disciplines": (DisciplinePick("potence", top="1a"),),
            "disadvantages": (DisadvantagePick("Addicted to vitae", major=True),),
            "extra_physical": 3,
            "extra_abilities": {"firearms": 1},
        },
        Sect.INDEPENDENT,
    ),
    (
        "Felix Grant",
        "felix",
        {
            "creature": Creature.KINE,
            "physical": 5,
            "social": 7,
            "mental": 3,
            "abilities": {"investigation": 2, "computer": 2, "law": 1},
            "willpower": 1,
            "influences": {"government": 2, "business": 1},
            "disadvantages": (DisadvantagePick("Nosy"), DisadvantagePick("Insomniac")),
            "extra_social": 3,
            "extra_mental": 4,
            "extra_influences": {"government": 2},
            "extra_willpower": 1,
        },
        Sect.INDEPENDENT,
    ),
]


def _npc(chronicle: Chronicle, name: str, clan: str, generation: int, **fields: Any) -> Character:
    # NPCs are the STs' own: no player, no creation wizard, no ledger.
    return Character.objects.create(
        chronicle=chronicle,
        player=None,
        name=name,
        creature=Creature.KINDRED,
        clan=clan,
        generation=generation,
        status=fields.pop("status", Status.NPC),
        approval="approved",
        physical=8,
        social=8,
        mental=8,
        willpower=4,
        **fields,
    )


def _create(
    chronicle: Chronicle,
    user: Any,
    st: Any,
    name: str,
    fields: dict[str, Any],
    sect: str,
    when: dt.datetime,
) -> Character:
    fields = dict(fields)
    fields.setdefault("willpower", 2)
    draft = Draft(name=name, background_questionnaire=QUESTIONNAIRE, sect=sect, **fields)
    character = character_draft_create(chronicle=chronicle, player=user, draft=draft, now=when)
    character_submit(character=character, by=user, now=when)
    character_approve(character=character, by=st, now=when)
    background_approve(character=character, by=st, now=when)
    character.refresh_from_db()
    return character


def seed(*, chronicle: Chronicle, users: dict[str, Any], stdout: Any = None) -> None:
    if Character.objects.filter(chronicle=chronicle).exists():
        return
    st = users["st_lucia"]
    games = list(Game.objects.filter(chronicle=chronicle).order_by("date"))
    first_night = games[0].date if games else timezone.localdate()
    tz = chronicle.tz

    def evening(day: dt.date, hour: int = 23) -> dt.datetime:
        return dt.datetime.combine(day, dt.time(hour), tzinfo=tz)

    start = evening(first_night - dt.timedelta(days=14), 20)
    prince = _npc(chronicle, "Prince Aldric", "ventrue", 8, business=4, government=5)
    records.title_add(character=prince, name="Prince", city="Boston", by=st)
    _npc(chronicle, "Sister Agnes", "malkavian", 10, st_notes="Knows who embraced Esme's domitor.")

    # Felix first played a Gangrel who retired: his XP-06 credit carries over to the new PC.
    wolf = _create(
        chronicle,
        users["felix"],
        st,
        "Rowan the Wolf",
        {
            "clan": "gangrel",
            "protean_form": "wolf",
            "physical": 7,
            "social": 3,
            "mental": 5,
            "abilities": {"survival": 2, "brawl": 2, "stealth": 1},
            "influences": {"herd": 3},
            "disciplines": (
                DisciplinePick("protean", free="1b"),
                DisciplinePick("animalism", free="1a"),
            ),
            "disadvantages": (DisadvantagePick("Feral", major=True),),
            "extra_physical": 3,
            "extra_abilities": {"survival": 1, "stealth": 1},
            "extra_willpower": 1,
        },
        Sect.INDEPENDENT,
        start - dt.timedelta(days=120),
    )
    ledger.xp_entry_add(
        chronicle=chronicle,
        player_id=users["felix"].pk,
        amount=Decimal(12),
        kind=XpKind.OPENING,
        reason="XP carried over from the paper records",
        key="demo:opening",
        actor=st,
        now=start - dt.timedelta(days=100),
    )
    # Rowan bought Protean 2a in the downtime after the first game, then retired. (A purchase
    # counts in the downtime it is made in: `chronicle.services.current_downtime`; before the
    # first game there is none to buy in.)
    bought = evening(first_night + dt.timedelta(days=2), 21)
    buy = purchases.purchase_request(
        character=wolf,
        by=users["felix"],
        kind="discipline",
        discipline="protean",
        levels=["2a"],
        now=bought,
    )
    purchases.purchase_approve(purchase=buy, by=st, now=bought + dt.timedelta(hours=1))
    records.character_retire(
        character=wolf,
        on=(bought + dt.timedelta(days=5)).date(),
        by=st,
        now=bought + dt.timedelta(days=5),
    )

    pcs = {}
    for name, username, fields, sect in PCS:
        pcs[username] = _create(chronicle, users[username], st, name, fields, sect, start)
    records.title_add(character=pcs["alice"], name="Harpy", city="Boston", by=st)
    records.title_add(character=pcs["bob"], name="Baron", city="Dorchester", by=st)

    # XP game by game, from the paper records. Not for the game whose downtime is still open:
    # the between-games pipeline awards that one at its release (DT-03..08), and an entry here
    # too would pay the game twice.
    for number, game in enumerate(games, start=1):
        if game.cycle.status == CycleStatus.OPEN:
            continue
        for username in ("alice", "bob", "carmen", "dmitri", "esme", "felix"):
            ledger.xp_entry_add(
                chronicle=chronicle,
                player_id=users[username].pk,
                amount=Decimal("5.5") if username in ("alice", "carmen") else Decimal("2.5"),
                kind=XpKind.AWARD,
                reason=f"Game {number}: downtime and attendance",
                key=f"demo:award:{game.pk}",
                actor=st,
                now=evening(game.date + dt.timedelta(days=10)),
            )
    last = games[-1].date if games else first_night
    if len(games) >= 2:
        # Isabella learned Aura Perception's successor, Senses of the Enlightened (in-clan).
        mid = evening(games[1].date + dt.timedelta(days=3), 21)
        buy = purchases.purchase_request(
            character=pcs["alice"],
            by=users["alice"],
            kind="discipline",
            discipline="auspex",
            levels=["2a"],
            now=mid,
        )
        purchases.purchase_approve(purchase=buy, by=st, now=mid + dt.timedelta(hours=1))
    # Waiting for sign-off on the desk: Carmen's Dominate 1a (in-clan).
    purchases.purchase_request(
        character=pcs["carmen"],
        by=users["carmen"],
        kind="discipline",
        discipline="dominate",
        levels=["1a"],
        note="Learned from my regent's notes.",
        now=evening(last, 22),
    )

    # Isabella has tasted the Prince twice: a bond is beginning, and she only feels it.
    for days in (20, 6):
        bonds.drink_record(
            drinker=pcs["alice"],
            donors=[prince],
            mixed=False,
            night=last - dt.timedelta(days=days),
            by=st,
            now=evening(last),
        )
    # Esme's domitor is Marcus: three nights of his blood.
    for days in (40, 30, 2):
        bonds.drink_record(
            drinker=pcs["esme"],
            donors=[pcs["bob"]],
            mixed=False,
            night=last - dt.timedelta(days=days),
            by=st,
            now=evening(last),
        )
    records.stored_blood_add(
        holder=pcs["dmitri"],
        location="Cooler in the pump station (sewer level 1)",
        on_body=False,
        points=4,
        donor_type="kine",
        donors=[],
        donor_note="Blood bank bags",
        collected_on=last - dt.timedelta(days=10),
        by=st,
        now=evening(last),
    )
    records.stored_blood_add(
        holder=pcs["carmen"],
        location="Chantry vault",
        on_body=False,
        points=2,
        donor_type="kindred",
        donors=[prince],
        donor_note="",
        collected_on=last - dt.timedelta(days=5),
        by=st,
        now=evening(last),
    )
    records.item_add(
        character=pcs["bob"],
        name="Sawed-off shotgun",
        concealability="yellow",
        armor=0,
        purchase_cost=3,
        potence_reinforced=False,
        by=st,
        now=evening(last),
    )
    records.item_add(
        character=pcs["alice"],
        name="Silver compact mirror",
        concealability="blue",
        armor=0,
        purchase_cost=1,
        potence_reinforced=False,
        by=st,
        now=evening(last),
    )
    records.item_add(
        character=pcs["esme"],
        name="Kevlar vest",
        concealability="yellow",
        armor=2,
        purchase_cost=4,
        potence_reinforced=False,
        by=st,
        now=evening(last),
    )
    location = records.sewer_location_add(
        chronicle=chronicle,
        number=3,
        level=1,
        description="Old pump station",
        defenders=[pcs["dmitri"]],
        by=st,
    )
    records.sewer_location_learn(
        character=pcs["dmitri"], location=location, on=last - dt.timedelta(days=7), by=st
    )
    # Marcus diablerized a torpid Sabbat spy of a lower generation: black veins, and a
    # generation step waiting for his downtime (XP-05).
    spy = _npc(chronicle, "Brother Kasimir", "lasombra", 10, status=Status.TORPOR)
    records.diablerie_record(
        diablerist=pcs["bob"],
        victim=spy,
        victim_name=spy.name,
        victim_generation=10,
        occurred_on=last - dt.timedelta(days=1),
        victim_in_torpor=True,
        killed_by_aggravated_or_coup=False,
        by=st,
        now=evening(last),
    )
    if stdout is not None:
        stdout.write(f"  {len(pcs) + 1} player characters and 4 NPCs with their histories")
