"""How the characters app's rows leave a chronicle and come back (see `chronicle.portability`):
its models in dependency order, each with one chronicle's rows, and a player's own data."""

from __future__ import annotations

from typing import Any

from django.db import models

from chronicle.models import Attendance, Chronicle
from chronicle.portability import OwnRows, Portable

from .models import (
    BloodDrink,
    Bond,
    BondBreak,
    Captivity,
    Character,
    CheatingOffense,
    Conditioning,
    Diablerie,
    Disadvantage,
    DisciplineLevel,
    ImportJob,
    InfluenceLoan,
    InfluenceSpend,
    Item,
    KnownSewerLocation,
    Notification,
    NpcVolunteer,
    RegnantRequest,
    RespendGrant,
    Ritual,
    SewerLocation,
    StoredBlood,
    SummonsLock,
    Title,
    TorporHold,
    XpEntry,
    XpPurchase,
)

PORTABLE: list[Portable] = [
    Portable(Character, lambda c: Character.objects.filter(chronicle=c)),
    # The chronicle app's sign-in lines name the character played (HAV-06), so they come here.
    Portable(Attendance, lambda c: Attendance.objects.filter(game__chronicle=c)),
    Portable(Title, lambda c: Title.objects.filter(character__chronicle=c)),
    Portable(Ritual, lambda c: Ritual.objects.filter(character__chronicle=c)),
    Portable(Disadvantage, lambda c: Disadvantage.objects.filter(character__chronicle=c)),
    Portable(XpEntry, lambda c: XpEntry.objects.filter(chronicle=c)),
    Portable(Diablerie, lambda c: Diablerie.objects.filter(diablerist__chronicle=c)),
    Portable(XpPurchase, lambda c: XpPurchase.objects.filter(character__chronicle=c)),
    Portable(DisciplineLevel, lambda c: DisciplineLevel.objects.filter(character__chronicle=c)),
    Portable(StoredBlood, lambda c: StoredBlood.objects.filter(holder__chronicle=c)),
    Portable(BloodDrink, lambda c: BloodDrink.objects.filter(drinker__chronicle=c)),
    Portable(BondBreak, lambda c: BondBreak.objects.filter(thrall__chronicle=c)),
    Portable(Bond, lambda c: Bond.objects.filter(thrall__chronicle=c)),
    Portable(RegnantRequest, lambda c: RegnantRequest.objects.filter(thrall__chronicle=c)),
    Portable(Item, lambda c: Item.objects.filter(character__chronicle=c)),
    Portable(SewerLocation, lambda c: SewerLocation.objects.filter(chronicle=c)),
    Portable(
        KnownSewerLocation, lambda c: KnownSewerLocation.objects.filter(character__chronicle=c)
    ),
    Portable(SummonsLock, lambda c: SummonsLock.objects.filter(holder__chronicle=c)),
    Portable(Conditioning, lambda c: Conditioning.objects.filter(subject__chronicle=c)),
    Portable(TorporHold, lambda c: TorporHold.objects.filter(captive__chronicle=c)),
    Portable(Captivity, lambda c: Captivity.objects.filter(captive__chronicle=c)),
    Portable(NpcVolunteer, lambda c: NpcVolunteer.objects.filter(chronicle=c)),
    Portable(Notification, lambda c: Notification.objects.filter(character__chronicle=c)),
    Portable(CheatingOffense, lambda c: CheatingOffense.objects.filter(chronicle=c)),
    Portable(RespendGrant, lambda c: RespendGrant.objects.filter(character__chronicle=c)),
    Portable(InfluenceSpend, lambda c: InfluenceSpend.objects.filter(character__chronicle=c)),
    Portable(InfluenceLoan, lambda c: InfluenceLoan.objects.filter(cycle__chronicle=c)),
    Portable(ImportJob, lambda c: ImportJob.objects.filter(chronicle=c)),
]
NOT_EXPORTED: dict[type[models.Model], str] = {}

# What a player reads of their own sheet: everything but the storytellers' notes and the
# creation wizard's working state.
CHARACTER_FIELDS = [
    "name",
    "creature",
    "clan",
    "chosen_disciplines",
    "clan_bonus",
    "sect",
    "generation",
    "physical",
    "social",
    "mental",
    "abilities",
    "willpower",
    "extra_control",
    "childer",
    "sewer_lore",
    "business",
    "government",
    "herd",
    "occult",
    "underworld",
    "protean_form",
    "feeding_demographic",
    "embrace_earth",
    "status",
    "approval",
    "approval_note",
    "approved_at",
    "submitted_at",
    "background_questionnaire",
    "background_story",
    "background_approved_at",
    "died_on",
    "retired_on",
    "embraced_on",
    "npc_since",
    "npc_reason",
    "created_at",
    "updated_at",
]


def own_data(user: Any, chronicle: Chronicle) -> OwnRows:
    """The player's characters (with their traits, purchases and influence spends) and their XP
    ledger in the chronicle. Nothing of another player's, no storytellers' notes."""
    mine = Character.objects.filter(chronicle=chronicle, player=user)
    characters = []
    for character in mine.order_by("created_at", "pk").prefetch_related(
        "titles", "disciplines", "rituals", "disadvantages", "items"
    ):
        row = {name: getattr(character, name) for name in CHARACTER_FIELDS}
        row["titles"] = [{"name": t.name, "city": t.city} for t in character.titles.all()]
        row["disciplines"] = [
            {"discipline": d.discipline, "level": d.code, "acquired": d.acquired, "free": d.free}
            for d in character.disciplines.all()
        ]
        row["rituals"] = [
            {"name": r.name, "learned_on": r.learned_on} for r in character.rituals.all()
        ]
        row["disadvantages"] = [
            {"name": d.name, "major": d.major} for d in character.disadvantages.all()
        ]
        row["items"] = [
            {"name": i.name, "concealability": i.concealability, "expires_on": i.expires_on}
            for i in character.items.all()
        ]
        characters.append(row)
    return {
        "characters": characters,
        "xp_ledger": list(
            XpEntry.objects.filter(chronicle=chronicle, player=user)
            .order_by("created_at", "pk")
            .values(
                "created_at", "amount", "kind", "reason", "character__name", "cycle__game__number"
            )
        ),
        "xp_purchases": list(
            XpPurchase.objects.filter(character__in=mine)
            .order_by("requested_at", "pk")
            .values(
                "character__name",
                "kind",
                "discipline",
                "levels",
                "target",
                "quantity",
                "teacher_name",
                "moment",
                "cost",
                "status",
                "note",
                "decision_note",
                "requested_at",
                "decided_at",
            )
        ),
        "influence_spends": list(
            InfluenceSpend.objects.filter(character__in=mine)
            .order_by("created_at", "pk")
            .values(
                "character__name",
                "cycle__game__number",
                "influence",
                "points",
                "moment",
                "reason",
                "created_at",
            )
        ),
    }
