"""The downtimes app's invariants (issue 16, `chronicle.services.invariants`): a released
cycle wrote every ledger entry its outcomes award (DT-10), a released outcome is read only by
the players it names, and a desk item belongs to a character of its cycle's chronicle."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import (
    CharField,
    DecimalField,
    Exists,
    F,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Concat, Substr

from characters.models import Character, XpEntry
from chronicle.models import Chronicle, CycleStatus
from chronicle.services.invariants import Invariant

from .models import DeskItem, Outcome, OutcomeOverride, OutcomeReader

CHUNK = 2000


def _ids(queryset: QuerySet[Any]) -> list[object]:
    return list(queryset.order_by("pk").values_list("pk", flat=True))


def released_cycle_xp(chronicle: Chronicle) -> list[object]:
    """DT-10: every outcome of a released cycle that awards its player XP (the ST's override
    first, as the release reads it) has its ledger entry, key `release_entry_key`, for that
    amount. Ids of the outcomes."""
    override = OutcomeOverride.objects.filter(
        cycle=OuterRef("cycle"), step=OuterRef("step"), subject=OuterRef("subject")
    ).values("xp")[:1]
    outcomes = (
        Outcome.objects.filter(
            cycle__chronicle=chronicle,
            cycle__status=CycleStatus.RELEASED,
            player__isnull=False,
        )
        .annotate(
            awarded=Coalesce(
                Subquery(override, output_field=DecimalField(max_digits=6, decimal_places=1)),
                F("xp"),
            ),
            entry_key=Substr(
                Concat(
                    Value("cycle:"),
                    Cast("cycle_id", CharField()),
                    Value(":"),
                    "step",
                    Value(":"),
                    "subject",
                    output_field=CharField(),
                ),
                1,
                120,
            ),
        )
        .filter(awarded__isnull=False)
        .exclude(awarded=0)
    )
    entry = XpEntry.objects.filter(
        chronicle=chronicle,
        player=OuterRef("player"),
        key=OuterRef("entry_key"),
        amount=OuterRef("awarded"),
    )
    return _ids(outcomes.exclude(Exists(entry)))


def _players_of(chronicle: Chronicle, character_ids: Iterable[int]) -> dict[int, int | None]:
    """{character id: player id} for those of `character_ids` in the chronicle."""
    wanted = sorted(set(character_ids))
    found: dict[int, int | None] = {}
    for start in range(0, len(wanted), CHUNK):
        found.update(
            Character.objects.filter(
                chronicle=chronicle, pk__in=wanted[start : start + CHUNK]
            ).values_list("pk", "player_id")
        )
    return found


def _character_ids(readers: object) -> list[int]:
    if not isinstance(readers, list):
        return [-1]  # not a list of ids at all: no character of the chronicle.
    ids = []
    for value in readers:
        try:
            ids.append(int(value))
        except (TypeError, ValueError):
            ids.append(-1)
    return ids


def outcome_readers(chronicle: Chronicle) -> list[object]:
    """An outcome is read by its own player and the players of the characters it names as
    readers (searchers, owners, the captive), all of its chronicle: ids of the reader rows
    beyond them. Rows of the outcome's own player are left out in SQL; the few others are
    checked against their outcome's reader characters, chunk by chunk."""
    rows = (
        OutcomeReader.objects.filter(outcome__cycle__chronicle=chronicle)
        .exclude(player=F("outcome__player"))
        .order_by("pk")
        .values_list("pk", "player_id", "outcome__readers")
    )
    bad: list[object] = []
    chunk: list[tuple[int, int, list[int]]] = []

    def flush() -> None:
        players = _players_of(chronicle, (c for _pk, _player, ids in chunk for c in ids))
        for pk, player, ids in chunk:
            if player not in {players.get(c) for c in ids if c in players}:
                bad.append(pk)
        chunk.clear()

    for pk, player, readers in rows.iterator(chunk_size=CHUNK):
        chunk.append((pk, player, _character_ids(readers)))
        if len(chunk) >= CHUNK:
            flush()
    flush()
    return bad


def outcome_reader_characters(chronicle: Chronicle) -> list[object]:
    """The reader characters an outcome names are of its chronicle: ids of the outcomes."""
    rows = (
        Outcome.objects.filter(cycle__chronicle=chronicle)
        .exclude(readers=[])
        .order_by("pk")
        .values_list("pk", "readers")
    )
    bad: list[object] = []
    chunk: list[tuple[int, list[int]]] = []

    def flush() -> None:
        known = _players_of(chronicle, (c for _pk, ids in chunk for c in ids))
        bad.extend(pk for pk, ids in chunk if any(c not in known for c in ids))
        chunk.clear()

    for pk, readers in rows.iterator(chunk_size=CHUNK):
        chunk.append((pk, _character_ids(readers)))
        if len(chunk) >= CHUNK:
            flush()
    flush()
    return bad


def desk_items(chronicle: Chronicle) -> list[object]:
    """A desk item (read by its character's player) is a character of the cycle's chronicle."""
    return _ids(
        DeskItem.objects.filter(cycle__chronicle=chronicle).exclude(character__chronicle=chronicle)
    )


CHECKS = [
    Invariant("released_cycle_xp", "Outcome", released_cycle_xp),
    Invariant("outcome_readers", "OutcomeReader", outcome_readers),
    Invariant("outcome_reader_characters", "Outcome", outcome_reader_characters),
    Invariant("desk_items", "DeskItem", desk_items),
]
