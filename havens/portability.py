"""How the havens app's rows leave a chronicle and come back (see `chronicle.portability`):
its models in dependency order, each with one chronicle's rows, and a player's own data."""

from __future__ import annotations

from typing import Any

from django.db import models

from chronicle.models import Chronicle
from chronicle.portability import OwnRows, Portable

from .models import (
    AlarmFiring,
    Attribute,
    Contribution,
    CryptVote,
    Find,
    HiddenObject,
    HiddenObjectSearch,
    InfluenceAttack,
    LockTest,
    Ownership,
    OwnershipChange,
    Project,
    ReinforcementAttack,
    Search,
    Searcher,
    SearchResult,
    Structure,
    TheftControl,
)

PORTABLE: list[Portable] = [
    Portable(Structure, lambda c: Structure.objects.filter(chronicle=c)),
    Portable(Ownership, lambda c: Ownership.objects.filter(structure__chronicle=c)),
    Portable(OwnershipChange, lambda c: OwnershipChange.objects.filter(structure__chronicle=c)),
    Portable(CryptVote, lambda c: CryptVote.objects.filter(crypt__chronicle=c)),
    Portable(Attribute, lambda c: Attribute.objects.filter(structure__chronicle=c)),
    Portable(Project, lambda c: Project.objects.filter(structure__chronicle=c)),
    Portable(Contribution, lambda c: Contribution.objects.filter(project__structure__chronicle=c)),
    Portable(Search, lambda c: Search.objects.filter(cycle__chronicle=c)),
    Portable(Searcher, lambda c: Searcher.objects.filter(search__cycle__chronicle=c)),
    Portable(SearchResult, lambda c: SearchResult.objects.filter(search__cycle__chronicle=c)),
    Portable(Find, lambda c: Find.objects.filter(structure__chronicle=c)),
    Portable(InfluenceAttack, lambda c: InfluenceAttack.objects.filter(cycle__chronicle=c)),
    Portable(
        ReinforcementAttack, lambda c: ReinforcementAttack.objects.filter(structure__chronicle=c)
    ),
    Portable(AlarmFiring, lambda c: AlarmFiring.objects.filter(alarm__structure__chronicle=c)),
    Portable(LockTest, lambda c: LockTest.objects.filter(lock__structure__chronicle=c)),
    Portable(TheftControl, lambda c: TheftControl.objects.filter(structure__chronicle=c)),
    Portable(HiddenObject, lambda c: HiddenObject.objects.filter(chronicle=c)),
    Portable(HiddenObjectSearch, lambda c: HiddenObjectSearch.objects.filter(chronicle=c)),
]
NOT_EXPORTED: dict[type[models.Model], str] = {}


def own_data(user: Any, chronicle: Chronicle) -> OwnRows:
    """The havens the player's characters own or owned: their own ownership rows only (a
    structure's other owners and its attributes stay with the havens pages)."""
    return {
        "haven_ownerships": list(
            Ownership.objects.filter(
                character__player=user,
                character__chronicle=chronicle,
                structure__chronicle=chronicle,
            )
            .order_by("started_at", "pk")
            .values(
                "character__name",
                "structure__name",
                "structure__kind",
                "structure__location",
                "how",
                "started_at",
                "ended_at",
                "ended_why",
            )
        ),
    }
