"""Havens' ownership and construction in the downtime resolution (DT-10): each step
idempotent and set-based, returning counts."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import translation

from characters.models import Approval, Character
from characters.models import Status as CharacterStatus
from chronicle.models import Attendance, Cycle, Game
from chronicle.rules import settings_for

from ... import rules, words
from ...models import (
    Attribute,
    AttributeState,
    ChangeKind,
    ChangeStatus,
    CryptVote,
    DestroyedBy,
    Ownership,
    OwnershipChange,
    OwnershipHow,
    Project,
    ProjectKind,
    ProjectStatus,
    Structure,
    StructureKind,
    StructureStatus,
    TheftControl,
)
from .common import (
    BREACHED_HELD,
    COUNTABLE_KINDS,
    CRYPT_BUILD_HELD,
    CRYPT_DESTRUCTION,
    CRYPT_REFUSES_MOBILITY,
    THEFT_CANCELS,
    _cited,
    _now,
)
from .rulings import (
    _forget,
)

# --- Resolution (DT-10): each step idempotent, set-based, returns counts ----------------------


class _OwnerBook:
    """The owner lists of many structures, changed in memory in the order the changes were
    asked for, then written in a few bulk statements. Changes of one structure depend on each
    other (two partial owners forsaking in one downtime), so they are applied in order, but
    nothing is queried per change."""

    def __init__(self, *, cycle: Cycle, now: dt.datetime, structure_ids: Iterable[int]) -> None:
        self.cycle = cycle
        self.now = now
        ids = set(structure_ids)
        # Crypts follow their outer haven when it is destroyed (HAV-06).
        self.structures = {
            s.pk: s
            for s in Structure.objects.select_for_update().filter(
                Q(pk__in=ids) | Q(outer_id__in=ids)
            )
        }
        self.owners: dict[int, dict[int, int]] = defaultdict(dict)  # structure → char → row
        for row in Ownership.objects.filter(
            structure_id__in=self.structures, ended_at__isnull=True
        ).values("pk", "structure_id", "character_id"):
            self.owners[row["structure_id"]][row["character_id"]] = row["pk"]
        self.ended: dict[str, list[int]] = defaultdict(list)  # why → ownership ids
        self.started: list[Ownership] = []
        self.unwritten: dict[tuple[int, int], Ownership] = {}
        self.destroyed: dict[int, tuple[str, str]] = {}

    def standing(self, structure_id: int) -> bool:
        structure = self.structures.get(structure_id)
        return (
            structure is not None
            and structure.status != StructureStatus.DESTROYED
            and structure_id not in self.destroyed
        )

    def end(self, structure_id: int, character_id: int, why: str) -> None:
        row = self.owners[structure_id].pop(character_id, None)
        if row == 0:
            # Gained and lost in this same downtime (a transfer, then the haven destroyed):
            # the history keeps both.
            unwritten = self.unwritten.pop((structure_id, character_id))
            unwritten.ended_at, unwritten.ended_cycle = self.now, self.cycle
            unwritten.ended_why = why[:200]
        elif row is not None:
            self.ended[why[:200]].append(row)

    def start(self, structure_id: int, character_id: int, how: str) -> None:
        if character_id in self.owners[structure_id]:
            return
        self.owners[structure_id][character_id] = 0  # written by flush
        row = Ownership(
            structure_id=structure_id,
            character_id=character_id,
            how=how,
            started_at=self.now,
            started_cycle=self.cycle,
        )
        self.started.append(row)
        self.unwritten[(structure_id, character_id)] = row

    def destroy(self, structure_id: int, how: str, note: str) -> None:
        self.destroyed[structure_id] = (how, note)
        for character_id in list(self.owners[structure_id]):
            self.end(structure_id, character_id, words.HAVEN_DESTROYED)

    def forsake(self, structure_id: int, character_id: int, why: str) -> str:
        """HAV-06: one owner forsakes; returns the outcome sentence."""
        structure = self.structures[structure_id]
        # Its refusal is kept as the change's outcome: in English, like every stored sentence
        # (havens.words translates it for each reader).
        with translation.override("en"):
            outcome = rules.forsake_outcome(
                structure=structure.kind, owners=max(len(self.owners[structure_id]), 1)
            )
        if outcome == "destroy_with_crypts":
            self.destroy(structure_id, DestroyedBy.FORSAKEN, why)
            crypts = [s.pk for s in self.structures.values() if s.outer_id == structure_id]
            for crypt_id in crypts:
                if self.standing(crypt_id):
                    self.destroy(crypt_id, DestroyedBy.OUTER_FORSAKEN, why)
            return words.FORSAKEN_OUTER % {"crypts": len(crypts)}
        if outcome == "destroy":
            self.destroy(structure_id, DestroyedBy.FORSAKEN, why)
            return words.FORSAKEN_CRYPT
        self.end(structure_id, character_id, why)
        if outcome == "remaining_owner_becomes_exclusive":
            return words.FORSAKEN_ONE_LEFT
        return words.FORSAKEN_OTHERS_KEEP

    def flush(self) -> None:
        for why, rows in self.ended.items():
            Ownership.objects.filter(pk__in=rows, ended_at__isnull=True).update(
                ended_at=self.now, ended_cycle=self.cycle, ended_why=why
            )
        Ownership.objects.bulk_create(self.started)
        by_cause: dict[tuple[str, str], list[int]] = defaultdict(list)
        for pk, cause in self.destroyed.items():
            by_cause[cause].append(pk)
        for (how, note), ids in by_cause.items():
            Structure.objects.filter(pk__in=ids).exclude(status=StructureStatus.DESTROYED).update(
                status=StructureStatus.DESTROYED,
                destroyed_at=self.now,
                destroyed_cycle=self.cycle,
                destroyed_by=how,
                destroyed_note=note,
            )
        if self.destroyed:
            _forget(list(self.destroyed), self.now)


def _dead(character: Character) -> bool:
    return character.status == CharacterStatus.DEAD or character.died_on is not None


@transaction.atomic
def ownership_changes_apply(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-03/05/06: apply the pending transfers, forsakings and crypt destructions of this
    cycle or earlier, and the wills of owners who have died; owners who died without a will
    forsake. Each change is marked applied (with the outcome the STs read) or void."""
    now = _now(now)
    chronicle_id = cycle.chronicle_id
    # Structures before their changes, in the order every owner's service locks them (a will
    # set while this runs must wait, not deadlock).
    list(
        Structure.objects.select_for_update()
        .filter(chronicle_id=chronicle_id)
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", flat=True)
    )
    pending = list(
        OwnershipChange.objects.select_for_update(of=("self",))
        .filter(structure__chronicle_id=chronicle_id, status=ChangeStatus.PENDING)
        .filter(
            Q(
                kind__in=[ChangeKind.TRANSFER, ChangeKind.FORSAKE, ChangeKind.DESTROY_CRYPT],
                cycle__deadline_at__lte=cycle.deadline_at,
            )
            | Q(kind=ChangeKind.WILL)
        )
        .select_related("from_character", "to_character")
        .order_by("requested_at", "pk")
    )
    wills = [c for c in pending if c.kind == ChangeKind.WILL]
    pending = [c for c in pending if c.kind != ChangeKind.WILL]
    # Wills apply only once their owner has died, before that owner would forsake.
    due_wills = [c for c in wills if c.from_character and _dead(c.from_character)]
    dead_owner_rows = list(
        Ownership.objects.filter(structure__chronicle_id=chronicle_id, ended_at__isnull=True)
        .filter(Q(character__status=CharacterStatus.DEAD) | Q(character__died_on__isnull=False))
        .values_list("structure_id", "character_id")
    )
    crypt_votes = [c for c in pending if c.kind == ChangeKind.DESTROY_CRYPT]
    outers = dict(
        Structure.objects.filter(pk__in=[c.structure_id for c in crypt_votes]).values_list(
            "pk", "outer_id"
        )
    )
    votes: dict[tuple[int, int], set[int]] = defaultdict(set)  # (crypt, cycle) → voters
    for crypt_id, cycle_id, voter_id in CryptVote.objects.filter(
        crypt_id__in=list(outers)
    ).values_list("crypt_id", "cycle_id", "voter_id"):
        votes[(crypt_id, cycle_id)].add(voter_id)
    book = _OwnerBook(
        cycle=cycle,
        now=now,
        structure_ids={c.structure_id for c in [*pending, *due_wills]}
        | {s for s, _ in dead_owner_rows}
        | {o for o in outers.values() if o},
    )
    counts = {"applied": 0, "void": 0, "died_without_will": 0}
    done: list[OwnershipChange] = []

    def close(change: OwnershipChange, status: str, outcome: str) -> None:
        change.status = status
        change.outcome = outcome
        change.applied_at = now
        done.append(change)
        counts["applied" if status == ChangeStatus.APPLIED else "void"] += 1

    def hand_over(change: OwnershipChange, how: str, sentence: str) -> None:
        """`sentence`: the stored words (havens.words) of a handover to the heir."""
        sid, giver, heir = change.structure_id, change.from_character_id, change.to_character
        if heir is None:
            close(change, ChangeStatus.VOID, words.NO_RECIPIENT)
        elif _dead(heir) or heir.status != CharacterStatus.ACTIVE:
            close(change, ChangeStatus.VOID, words.CANNOT_RECEIVE % {"name": heir.name})
        elif book.structures[sid].kind == StructureKind.CRYPT and (
            set(book.owners[sid]) - {giver, heir.pk}
        ):
            # A crypt goes whole, never shared (HAV-01, HAV-05).
            close(change, ChangeStatus.VOID, words.CRYPT_ONE_OWNER)
        else:
            book.end(sid, giver or 0, sentence % {"name": heir.name})
            book.start(sid, heir.pk, how)
            close(change, ChangeStatus.APPLIED, sentence % {"name": heir.name})

    for change in [*due_wills, *pending]:
        sid = change.structure_id
        if not book.standing(sid):
            close(change, ChangeStatus.VOID, words.NO_LONGER_STANDS)
            continue
        if change.kind == ChangeKind.DESTROY_CRYPT:
            # HAV-03 holds when it takes effect: the outer haven's owners may have changed
            # since the vote (a transfer or a forsaking applied just before).
            outer_owners = set(book.owners[outers.get(sid) or 0])
            in_favour = len(votes[(sid, change.cycle_id)] & outer_owners)
            if not outer_owners or not rules.crypt_destruction_allowed(
                outer_owners=len(outer_owners), in_favour=in_favour
            ):
                close(change, ChangeStatus.VOID, words.MAJORITY_LOST)
                continue
            book.destroy(sid, DestroyedBy.CRYPT_VOTE, CRYPT_DESTRUCTION)
            close(
                change,
                ChangeStatus.APPLIED,
                words.DESTROYED_BY_OWNERS_TALLY % {"tally": change.outcome}
                if change.outcome
                else words.DESTROYED_BY_OWNERS,
            )
            continue
        if change.from_character_id not in book.owners[sid]:
            close(change, ChangeStatus.VOID, words.NO_LONGER_OWNS)
            continue
        if change.kind == ChangeKind.TRANSFER:
            hand_over(change, OwnershipHow.TRANSFER, words.TRANSFERRED_TO)
        elif change.kind == ChangeKind.WILL:
            hand_over(change, OwnershipHow.WILL, words.LEFT_BY_WILL_TO)
        else:
            try:
                outcome = book.forsake(sid, change.from_character_id or 0, words.FORSAKEN)
            except ValueError as exc:  # bad data (a crypt with two owners): an ST decides
                close(change, ChangeStatus.VOID, _cited(str(exc), "HAV-01"))
                continue
            close(change, ChangeStatus.APPLIED, outcome)
    # HAV-06: an owner who died without a (working) will forsakes.
    for sid, character_id in dead_owner_rows:
        if book.standing(sid) and character_id in book.owners[sid]:
            try:
                outcome = book.forsake(sid, character_id, words.DIED_WITHOUT_WILL)
            except ValueError:  # bad data (a crypt with two owners): left for an ST
                continue
            done.append(
                OwnershipChange(
                    structure_id=sid,
                    kind=ChangeKind.FORSAKE,
                    cycle=cycle,
                    from_character_id=character_id,
                    status=ChangeStatus.APPLIED,
                    note=words.NOTE_DIED_WITHOUT_WILL,
                    requested_at=now,
                    applied_at=now,
                    outcome=outcome,
                )
            )
            counts["died_without_will"] += 1
    book.flush()
    _void_changes_of_destroyed(book, now)
    OwnershipChange.objects.bulk_update(
        [c for c in done if c.pk], ["status", "outcome", "applied_at"]
    )
    OwnershipChange.objects.bulk_create([c for c in done if not c.pk])
    counts["destroyed"] = len(book.destroyed)
    return counts


def _void_changes_of_destroyed(book: _OwnerBook, now: dt.datetime) -> None:
    if book.destroyed:
        OwnershipChange.objects.filter(
            structure_id__in=list(book.destroyed), status=ChangeStatus.PENDING
        ).update(
            status=ChangeStatus.VOID,
            outcome=words.NO_LONGER_STANDS,
            applied_at=now,
        )


def _games_up_to(cycle: Cycle) -> list[Game]:
    game = cycle.game
    return list(
        Game.objects.filter(chronicle_id=cycle.chronicle_id)
        .filter(Q(date__lt=game.date) | Q(date=game.date, number__lte=game.number))
        .order_by("date", "number")
    )


def _games_played(
    chronicle_id: int, players: set[int], games: Sequence[Game]
) -> dict[int, set[int]]:
    """HAV-06 (issue 14): the games each character was in play, by character id: the games its
    player was signed in as that character. Two queries, whatever the number of owners.

    Sign-in lines recorded before the sheet named the character have none. Such a line counts
    for the player's only active character when they have exactly one; with none or several,
    it counts for each of their characters, the older reading (the player's attendance), so no
    haven is forsaken on a guess."""
    played: dict[int, set[int]] = defaultdict(set)
    unnamed: dict[int, set[int]] = defaultdict(set)
    for player_id, character_id, game_id in Attendance.objects.filter(
        player_id__in=players, game__in=games
    ).values_list("player_id", "character_id", "game_id"):
        (played[character_id] if character_id else unnamed[player_id]).add(game_id)
    if not unnamed:
        return played
    mine: dict[int, list[tuple[int, bool]]] = defaultdict(list)
    for character_id, player_id, status, approval in Character.objects.filter(
        chronicle_id=chronicle_id, player_id__in=list(unnamed)
    ).values_list("pk", "player_id", "status", "approval"):
        in_play = status == CharacterStatus.ACTIVE and approval == Approval.APPROVED
        mine[player_id].append((character_id, in_play))
    for player_id, game_ids in unnamed.items():
        only = [c for c, in_play in mine[player_id] if in_play]
        for character_id in only if len(only) == 1 else [c for c, _ in mine[player_id]]:
            played[character_id] |= game_ids
    return played


@transaction.atomic
def forsaking_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-06: owners who were not in play for the last `forsake_after_absent_games` games of
    the chronicle in a row, up to this cycle's game and since they became owners, forsake what
    they own (applied at once). "If the character is not in-game for six games in a row": the
    character counts, not its player (issue 14): a player who comes with another character
    leaves this one absent (`_games_played`)."""
    now = _now(now)
    games = _games_up_to(cycle)
    house = cycle.chronicle.house_rules_for(cycle)
    owned = list(
        Ownership.objects.filter(
            structure__chronicle_id=cycle.chronicle_id,
            ended_at__isnull=True,
            character__player__isnull=False,
        )
        .exclude(structure__status=StructureStatus.DESTROYED)
        .values_list("structure_id", "character_id", "character__player_id", "started_at")
    )
    played = _games_played(cycle.chronicle_id, {player for _, _, player, _ in owned}, games)
    tz = cycle.chronicle.tz
    forsake_settings = settings_for(rules.forsaken_by_absence, house)
    # Only the games since the ownership began count: games a character missed before it
    # owned the haven (or joined the chronicle) say nothing about forsaking it.
    leaving = [
        (sid, character_id)
        for sid, character_id, _player, started_at in owned
        if rules.forsaken_by_absence(
            [
                g.pk in played[character_id]
                for g in games
                if g.date >= started_at.astimezone(tz).date()
            ],
            **forsake_settings,
        )
    ]
    book = _OwnerBook(cycle=cycle, now=now, structure_ids={s for s, _ in leaving})
    changes = []
    for sid, character_id in sorted(leaving):
        if not (book.standing(sid) and character_id in book.owners[sid]):
            continue
        try:
            outcome = book.forsake(sid, character_id, words.FORSAKEN_AFTER_ABSENCE)
        except ValueError:  # bad data (a crypt with two owners): left for an ST
            continue
        changes.append(
            OwnershipChange(
                structure_id=sid,
                kind=ChangeKind.ABSENCE,
                cycle=cycle,
                from_character_id=character_id,
                status=ChangeStatus.APPLIED,
                note=words.NOTE_ABSENT,
                requested_at=now,
                applied_at=now,
                outcome=outcome,
            )
        )
    book.flush()
    _void_changes_of_destroyed(book, now)
    OwnershipChange.objects.bulk_create(changes)
    return {"forsaken": len(changes), "destroyed": len(book.destroyed)}


@transaction.atomic
def theft_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-07: thieves who controlled a structure for the last `theft_control_games` games up
    to this cycle's game own it; the previous owners lose it and every alarm and lock becomes
    inoperative. Once per structure and theft: a structure its thieves already own is skipped."""
    now = _now(now)
    games = _games_up_to(cycle)
    house = cycle.chronicle.house_rules_for(cycle)
    controls = list(
        TheftControl.objects.filter(structure__chronicle_id=cycle.chronicle_id, game__in=games)
        .exclude(structure__status=StructureStatus.DESTROYED)
        .prefetch_related("thieves")
    )
    by_structure: dict[int, dict[int, TheftControl]] = defaultdict(dict)
    for control in controls:
        by_structure[control.structure_id][control.game_id] = control
    latest_game = games[-1].pk if games else None
    taken: dict[int, set[int]] = {}
    for sid, per_game in by_structure.items():
        if latest_game not in per_game:
            continue
        if rules.theft_completes(
            [g.pk in per_game for g in games], **settings_for(rules.theft_completes, house)
        ):
            taken[sid] = {t.pk for t in per_game[latest_game].thieves.all()}
    book = _OwnerBook(cycle=cycle, now=now, structure_ids=taken)
    already_void = set(
        OwnershipChange.objects.filter(
            structure_id__in=list(taken),
            kind=ChangeKind.THEFT,
            cycle=cycle,
            status=ChangeStatus.VOID,
        ).values_list("structure_id", flat=True)
    )
    changes = []
    stolen = []
    void = 0
    for sid, thieves in sorted(taken.items()):
        if not book.standing(sid) or set(book.owners[sid]) == thieves or not thieves:
            continue
        if book.structures[sid].kind == StructureKind.CRYPT and len(thieves) != 1:
            # HAV-01: a crypt is never divided. Recorded controls predating that check; once
            # per cycle, so a re-run adds nothing.
            if sid not in already_void:
                void += 1
                changes.append(
                    OwnershipChange(
                        structure_id=sid,
                        kind=ChangeKind.THEFT,
                        cycle=cycle,
                        status=ChangeStatus.VOID,
                        note=words.NOTE_THIEVES,
                        requested_at=now,
                        applied_at=now,
                        outcome=words.THIEVES_OF_CRYPT % {"thieves": len(thieves)},
                    )
                )
            continue
        for owner in list(book.owners[sid]):
            if owner not in thieves:
                book.end(sid, owner, words.TAKEN_BY_THEFT)
        for thief in sorted(thieves):
            book.start(sid, thief, OwnershipHow.THEFT)
        stolen.append(sid)
        changes.append(
            OwnershipChange(
                structure_id=sid,
                kind=ChangeKind.THEFT,
                cycle=cycle,
                status=ChangeStatus.APPLIED,
                note=words.NOTE_THIEVES,
                requested_at=now,
                applied_at=now,
                outcome=words.TAKEN_BY_THIEVES % {"thieves": len(thieves)},
            )
        )
    book.flush()
    disabled = (
        Attribute.objects.filter(
            structure_id__in=stolen, kind__in=sorted(rules.ATTRIBUTES_DISABLED_BY_THEFT)
        )
        .exclude(state=AttributeState.INOPERATIVE)
        .update(state=AttributeState.INOPERATIVE)
    )
    # HAV-07: the thieves replace alarms and locks; what the old owners ordered of them (or a
    # lock's repair) is not built for the thieves.
    Project.objects.filter(
        Q(kind=ProjectKind.ATTRIBUTE, attribute_kind__in=sorted(rules.ATTRIBUTES_DISABLED_BY_THEFT))
        | Q(
            kind=ProjectKind.REPAIR, repair_of__kind__in=sorted(rules.ATTRIBUTES_DISABLED_BY_THEFT)
        ),
        structure_id__in=stolen,
        status__in=[ProjectStatus.OPEN, ProjectStatus.PAID],
    ).update(status=ProjectStatus.CANCELLED, held_reason=THEFT_CANCELS)
    OwnershipChange.objects.bulk_create(changes)
    return {"stolen": len(stolen), "attributes_disabled": disabled, "void": void}


def _held_builds(builds: Sequence[Project], cycle: Cycle) -> dict[int, str]:
    """Paid builds that must not take effect as things now stand (project pk → the reason its
    structure's owners read); they wait for the storytellers (`project_release_held`).

    - HAV-24: reinforcement points bought before a breach would be breached with it.
    - HAV-23: two designs each valid when ordered can clash once both are built, since a
      crypt's owner never learns of the outer haven's orders (HAV-04). Existing and crypt-side
      builds win: a crypt build inside an outer haven already mobile, and a Mobility build
      over a crypt whose built-plus-new design a mobile haven forbids, are held. The rules
      decide what clashes."""
    settings = settings_for(rules.design_problems, cycle.chronicle.house_rules_for(cycle))

    def clashes(design: Mapping[str, int]) -> bool:
        alone = rules.design_problems(structure=StructureKind.CRYPT, attributes=design, **settings)
        inside = rules.design_problems(
            structure=StructureKind.CRYPT, attributes=design, inside_mobile_haven=True, **settings
        )
        return bool(set(inside) - set(alone))

    structures = Structure.objects.in_bulk({p.structure_id for p in builds})
    outers = {s.outer_id for s in structures.values() if s.outer_id}
    mobile_now = set(
        Attribute.objects.filter(
            structure_id__in=outers, kind="mobility", state=AttributeState.ACTIVE
        ).values_list("structure_id", flat=True)
    )
    held: dict[int, str] = {}
    # HAV-24: new points on a breached reinforcement would be breached with it.
    breached = set(
        Attribute.objects.filter(
            structure_id__in=list(structures),
            kind="reinforcement",
            state=AttributeState.BREACHED,
        ).values_list("structure_id", flat=True)
    )
    for p in builds:
        if p.attribute_kind == "reinforcement" and p.structure_id in breached:
            held[p.pk] = BREACHED_HELD
    for p in builds:
        outer_id = structures[p.structure_id].outer_id
        if outer_id in mobile_now and clashes({p.attribute_kind: p.quantity}):
            held[p.pk] = CRYPT_BUILD_HELD
    gaining = [p for p in builds if p.attribute_kind == "mobility" and p.pk not in held]
    if not gaining:
        return held
    crypts = dict(
        Structure.objects.filter(outer_id__in={p.structure_id for p in gaining})
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", "outer_id")
    )
    designs: dict[int, dict[str, int]] = {pk: defaultdict(int) for pk in crypts}
    for attribute in Attribute.objects.filter(structure_id__in=list(crypts)):
        designs[attribute.structure_id][attribute.kind] += attribute.quantity
    for p in builds:
        if p.structure_id in designs and p.pk not in held:
            designs[p.structure_id][p.attribute_kind] += p.quantity
    refusing = {crypts[pk] for pk, design in designs.items() if clashes(design)}
    for p in gaining:
        if p.structure_id in refusing:
            held[p.pk] = CRYPT_REFUSES_MOBILITY
    return held


@transaction.atomic
def construction_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-02/HAV-10..24: every fully paid project takes effect in this downtime: attributes
    are built (one row per unit of a countable kind; points added to the structure's one
    resistance or reinforcement row), repairs make their attribute work again, and planned
    structures that have an owner stand. A build that would clash with a crypt or its outer
    haven (HAV-23) is held with its reason instead."""
    now = _now(now)
    # Paid in this downtime or an earlier one: a project paid in a later cycle (a late
    # resolution) takes effect in its own downtime.
    projects = list(
        Project.objects.select_for_update()
        .filter(
            structure__chronicle_id=cycle.chronicle_id,
            status=ProjectStatus.PAID,
            paid_cycle__deadline_at__lte=cycle.deadline_at,
            held_reason="",  # held once, it waits for the storytellers
        )
        .exclude(structure__status=StructureStatus.DESTROYED)
        .order_by("pk")
    )
    held = _held_builds([p for p in projects if p.kind == ProjectKind.ATTRIBUTE], cycle)
    for reason in set(held.values()):
        Project.objects.filter(pk__in=[pk for pk, why in held.items() if why == reason]).update(
            held_reason=reason
        )
    projects = [p for p in projects if p.pk not in held]
    builds = [p for p in projects if p.kind == ProjectKind.ATTRIBUTE]
    repairs = [p for p in projects if p.kind == ProjectKind.REPAIR]
    new_rows: list[Attribute] = []
    points_rows = {
        (a.structure_id, a.kind): a
        for a in Attribute.objects.filter(
            structure_id__in={p.structure_id for p in builds},
            kind__in=list(rules.POINTS_PER_UNIT),
        ).order_by("pk")
    }
    grown: dict[int, Attribute] = {}
    for project in builds:
        kind = project.attribute_kind
        if kind in COUNTABLE_KINDS:
            unit = rules.attribute_cost(kind, 1)
            new_rows.extend(
                Attribute(
                    structure_id=project.structure_id,
                    kind=kind,
                    quantity=1,
                    cost=unit,
                    trigger=project.trigger,
                    effect=project.effect,
                    built_cycle=cycle,
                    created_at=now,
                )
                for _ in range(project.quantity)
            )
            continue
        row = points_rows.get((project.structure_id, kind))
        if row is None:
            row = Attribute(
                structure_id=project.structure_id,
                kind=kind,
                quantity=0,
                cost=0,
                built_cycle=cycle,
                created_at=now,
            )
            points_rows[(project.structure_id, kind)] = row
            new_rows.append(row)
        row.quantity += project.quantity
        row.cost += project.cost
        if row.pk:
            grown[row.pk] = row
    Attribute.objects.bulk_create(new_rows)
    Attribute.objects.bulk_update(list(grown.values()), ["quantity", "cost"])
    repaired = Attribute.objects.filter(pk__in=[p.repair_of_id for p in repairs]).update(
        state=AttributeState.ACTIVE
    )
    done = Project.objects.filter(
        pk__in=[p.pk for p in projects], status=ProjectStatus.PAID
    ).update(status=ProjectStatus.DONE, done_at=now, done_cycle=cycle, held_reason="")
    owned = Ownership.objects.filter(structure=OuterRef("pk"), ended_at__isnull=True)
    standing = Structure.objects.filter(
        Exists(owned), chronicle_id=cycle.chronicle_id, status=StructureStatus.PLANNED
    ).update(status=StructureStatus.STANDING, built_cycle=cycle)
    return {
        "projects_done": done,
        "attributes_built": len(new_rows) + len(grown),
        "repaired": repaired,
        "structures_built": standing,
        "held": len(held),
    }
