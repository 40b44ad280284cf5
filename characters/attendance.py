"""The characters a player may be signed in as at a game (issue 14), for the chronicle app's
sign-in sheet (`chronicle.services.sign_in`, which finds this module by its name): HAV-06
counts the games a character was played, and XP-04 keeps black veins out without a
storyteller's permission.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence

from chronicle.models import Chronicle
from chronicle.services.sign_in import Playable

from . import rules
from .models import Approval, Character, Diablerie, Status


def playable(
    *, chronicle: Chronicle, player_ids: Sequence[int], day: dt.date
) -> dict[int, list[Playable]]:
    """Each player's own active, approved characters (by name), and whether a diablerie's
    black veins show on `day` (XP-04). Two queries, whatever the number of players."""
    characters = list(
        Character.objects.filter(
            chronicle=chronicle,
            player_id__in=player_ids,
            status=Status.ACTIVE,
            approval=Approval.APPROVED,
        )
        .order_by("name", "pk")
        .values_list("pk", "player_id", "name")
    )
    veins: dict[int, list[tuple[dt.date, dt.date]]] = defaultdict(list)
    for diablerist_id, occurred_on, until in Diablerie.objects.filter(
        diablerist_id__in=[pk for pk, _, _ in characters], black_veins_until__gt=day
    ).values_list("diablerist_id", "occurred_on", "black_veins_until"):
        veins[diablerist_id].append((occurred_on, until))
    found: dict[int, list[Playable]] = defaultdict(list)
    for pk, player_id, name in characters:
        found[player_id].append(
            Playable(id=pk, name=name, black_veins=rules.black_veins_show(veins[pk], on=day))
        )
    return dict(found)
