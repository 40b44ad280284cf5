"""A digest of a chronicle's final state after a downtime: what the players and the STs would
see, with every database id replaced by a natural name and every time left out, so that the
same month resolved twice (by a worker or inline, on two databases, or with faults in between)
gives the same sha256 exactly when it had the same effects.

`dump(chronicle)` returns the canonical lines (sorted, one per row) for reading a difference;
`digest(chronicle)` hashes them.

Ids hide in text too: ledger and outcome keys such as `cycle:12:awards:base:7`. `Names.key`
walks a key's `:`-separated parts and names each number by the word before it (`base` → the
player's username, `cash-in` → the character's name, ...); a number after an unknown word
becomes `#`, so a key format not listed here still compares equal between runs, only less
sharply.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model

from characters.models import (
    Bond,
    Character,
    Diablerie,
    InfluenceSpend,
    Notification,
    StoredBlood,
    TorporHold,
    XpEntry,
    XpPurchase,
)
from characters.services.purchases import describe
from chronicle.models import Chronicle, Cycle
from downtimes.models import (
    DeskItem,
    Outcome,
    OutcomeOverride,
    OutcomeReader,
    ReportPick,
    Submission,
)
from havens.models import (
    Attribute,
    Find,
    InfluenceAttack,
    Ownership,
    OwnershipChange,
    Project,
    Search,
    SearchResult,
    Structure,
)


class Names:
    """Every id of the chronicle that a dump may meet, with its natural name (a few queries)."""

    def __init__(self, chronicle: Chronicle) -> None:
        c = chronicle
        self.user = dict(get_user_model().objects.values_list("pk", "username"))
        self.character = dict(Character.objects.filter(chronicle=c).values_list("pk", "name"))
        self.cycle = {
            pk: f"game{number}"
            for pk, number in Cycle.objects.filter(chronicle=c).values_list("pk", "game__number")
        }
        self.structure = dict(Structure.objects.filter(chronicle=c).values_list("pk", "name"))
        self.search = {
            s.pk: f"search({s.created_by.name}→{s.target_name}@{self.cycle.get(s.cycle_id)})"
            for s in Search.objects.filter(cycle__chronicle=c).select_related("created_by")
        }
        self.purchase = {
            p.pk: f"purchase({p.character.name}: {describe(p)})"
            for p in XpPurchase.objects.filter(character__chronicle=c).select_related("character")
        }
        self.hold = {
            pk: f"hold({self.character[holder]}→{self.character[captive]})"
            for pk, holder, captive in TorporHold.objects.filter(captive__chronicle=c).values_list(
                "pk", "holder_id", "captive_id"
            )
        }
        self.pick = {
            pk: f"pick({self.character[character]})"
            for pk, character in ReportPick.objects.filter(cycle__chronicle=c).values_list(
                "pk", "submission__character_id"
            )
        }
        self.submission = {
            pk: f"submission({self.character[character]}@{self.cycle[cycle]})"
            for pk, character, cycle in Submission.objects.filter(cycle__chronicle=c).values_list(
                "pk", "character_id", "cycle_id"
            )
        }
        self.diablerie = {
            pk: f"diablerie({self.character[diablerist]}→{victim})"
            for pk, diablerist, victim in Diablerie.objects.filter(
                diablerist__chronicle=c
            ).values_list("pk", "diablerist_id", "victim_name")
        }
        self.project = {
            p.pk: f"project({self.structure[p.structure_id]}: {p.kind} {p.attribute_kind})"
            for p in Project.objects.filter(structure__chronicle=c)
        }
        self.change = {
            ch.pk: f"change({self.structure[ch.structure_id]}: {ch.kind})"
            for ch in OwnershipChange.objects.filter(structure__chronicle=c)
        }
        self.attack = {
            a.pk: f"attack({self.character[a.attacker_id]}→{self.structure[a.structure_id]})"
            for a in InfluenceAttack.objects.filter(cycle__chronicle=c)
        }
        self.result = {
            r.pk: f"{self.search[r.search_id]}:{self.structure[r.structure_id]}"
            for r in SearchResult.objects.filter(search__cycle__chronicle=c)
        }
        # A desk item by its character and its key without the cycle's id ("influence:herd").
        self.desk = {
            pk: f"desk({self.character[character]}: {key.split(':', 1)[-1]})"
            for pk, character, key in DeskItem.objects.filter(cycle__chronicle=c).values_list(
                "pk", "character_id", "key"
            )
        }
        # The word before a number in a key → what the number names. Several numbers in a row
        # after one word ("search:<search>:<structure>") take the names in turn.
        self.by_word: dict[str, list[dict[int, str]]] = {
            "cycle": [self.cycle],
            "downtime": [self.cycle],
            "base": [self.user],
            "votes": [self.user],
            "summary": [self.user],
            "player": [self.user],
            "cash-in": [self.character],
            "character": [self.character],
            "captive": [self.character],
            "hold": [self.hold],
            "purchase": [self.purchase],
            "report": [self.pick],
            "diablerie": [self.diablerie],
            "downtime-receipt": [self.submission],
            "submission": [self.submission],
            "torpor-hold-ended": [self.hold],
            # The havens' outcome subjects (downtimes/services/haven_steps.py).
            "search": [self.search, self.structure],
            "structure": [self.structure],
            "haven": [self.structure],
            "attacked": [self.structure],
            "theft": [self.structure],
            "owner": [self.structure, self.character],
            "lost": [self.structure, self.character],
            "absence": [self.structure, self.character],
            "died": [self.structure, self.character],
            "project": [self.project],
            "change": [self.change],
            "attack": [self.attack],
            "result": [self.result],
            # The Herd blood step's subjects (downtimes/services/herd_blood.py, BLD-04).
            "herd": [self.desk],
        }
        # Ids inside outcome values, by the value's key (lists name each member).
        self.by_field: dict[str, dict[int, str]] = {
            "structure": self.structure,
            "from": self.character,
            "to": self.character,
            "owners": self.character,
            "owners_before": self.character,
            "finders": self.character,
            "searchers": self.character,
            "character": self.character,
            "player": self.user,
        }

    def key(self, key: str) -> str:
        parts = key.split(":")
        out: list[str] = []
        word, run = "", 0
        for part in parts:
            if part.isdigit():
                maps = self.by_word.get(word, [])
                names = maps[run] if run < len(maps) else {}
                out.append(names.get(int(part), "#"))
                run += 1
            else:
                out.append(part)
                word, run = part, 0
        return ":".join(out)

    def of(self, table: dict[int, str], pk: int | None) -> str:
        return "" if pk is None else table.get(pk, "?")

    def value(self, value: Any, names: dict[int, str] | None = None) -> Any:
        """An outcome's value with the ids it holds (by `by_field`) replaced by names; lists of
        names are sorted, as ids were."""
        if isinstance(value, dict):
            return {k: self.value(v, self.by_field.get(k)) for k, v in value.items()}
        if isinstance(value, list):
            items = [self.value(v, names) for v in value]
            return sorted(items, key=str) if names is not None else items
        if names is not None and isinstance(value, int) and not isinstance(value, bool):
            return names.get(value, "?")
        return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def _amount(value: Decimal | None) -> str:
    return "" if value is None else str(Decimal(value).normalize())


def _section(name: str, rows: Iterable[Iterable[Any]]) -> list[str]:
    return sorted(f"{name}|" + "|".join(str(v) for v in row) for row in rows)


def dump(chronicle: Chronicle) -> list[str]:
    """The chronicle's state, one canonical line per row, with names for ids and no times."""
    n = Names(chronicle)
    c = chronicle
    u, ch, cy, st = n.user, n.character, n.cycle, n.structure
    of: Callable[[dict[int, str], int | None], str] = n.of
    lines: list[str] = []
    lines += _section(
        "xp",
        (
            (of(u, e.player_id), of(ch, e.character_id), _amount(e.amount), e.kind)
            + (n.key(e.key), e.reason, of(cy, e.cycle_id), bool(e.reverses_id))
            for e in XpEntry.objects.filter(chronicle=c)
        ),
    )
    lines += _section(
        "influence",
        (
            (of(ch, s.character_id), of(cy, s.cycle_id), s.influence, s.points, s.moment)
            + (n.key(s.key), s.reason, bool(s.reverses_id))
            for s in InfluenceSpend.objects.filter(character__chronicle=c)
        ),
    )
    lines += _section(
        "character",
        (
            (x.name, x.status, x.approval, x.generation, x.physical, x.social, x.mental)
            + (x.willpower, _canonical(x.influences))
            for x in Character.objects.filter(chronicle=c)
        ),
    )
    lines += _section(
        "purchase",
        (
            (n.purchase[p.pk], p.status, _amount(p.cost), of(cy, p.cycle_id))
            for p in XpPurchase.objects.filter(character__chronicle=c)
        ),
    )
    lines += _section(
        "structure",
        (
            (s.name, s.kind, of(st, s.outer_id), s.status, s.location, of(ch, s.designed_by_id))
            + (of(cy, s.built_cycle_id), of(cy, s.destroyed_cycle_id), s.destroyed_by)
            for s in Structure.objects.filter(chronicle=c)
        ),
    )
    lines += _section(
        "ownership",
        (
            (of(st, o.structure_id), of(ch, o.character_id), o.how, o.ended_at is not None)
            + (of(cy, o.started_cycle_id), of(cy, o.ended_cycle_id), o.ended_why)
            for o in Ownership.objects.filter(structure__chronicle=c)
        ),
    )
    lines += _section(
        "change",
        (
            (n.change[x.pk], of(ch, x.from_character_id), of(ch, x.to_character_id), x.status)
            + (x.outcome,)
            for x in OwnershipChange.objects.filter(structure__chronicle=c)
        ),
    )
    lines += _section(
        "attribute",
        (
            (of(st, a.structure_id), a.kind, a.quantity, a.cost, a.state, a.trigger, a.effect)
            + (of(cy, a.built_cycle_id),)
            for a in Attribute.objects.filter(structure__chronicle=c)
        ),
    )
    lines += _section(
        "project",
        (
            (n.project[p.pk], p.quantity, p.cost, p.paid, p.status, of(cy, p.paid_cycle_id))
            + (of(cy, p.done_cycle_id), p.held_reason)
            for p in Project.objects.filter(structure__chronicle=c)
        ),
    )
    lines += _section(
        "search",
        (
            (n.search[s.pk], of(ch, s.target_id), s.moment, s.status, s.explanation)
            + (s.released_at is not None,)
            for s in Search.objects.filter(cycle__chronicle=c)
        ),
    )
    lines += _section(
        "search-result",
        (
            (n.result[r.pk], r.spent, r.hiding_points, r.found, r.explanation)
            for r in SearchResult.objects.filter(search__cycle__chronicle=c)
        ),
    )
    lines += _section(
        "find",
        (
            (of(st, f.structure_id), of(ch, f.character_id), of(n.result, f.result_id))
            + (of(cy, f.cycle_id), f.cleared_at is not None)
            for f in Find.objects.filter(structure__chronicle=c)
        ),
    )
    lines += _section(
        "attack",
        (
            (n.attack[a.pk], a.influence, a.points, a.status, a.resistance_before)
            + (a.resistance_after, a.destroyed, a.explanation, a.released_at is not None)
            for a in InfluenceAttack.objects.filter(cycle__chronicle=c)
        ),
    )
    lines += _section(
        "bond",
        (
            (of(ch, b.thrall_id), of(ch, b.regnant_id), b.kind, b.level, b.bound, b.since)
            + (b.due_on, b.ended_on, b.end_reason)
            for b in Bond.objects.filter(thrall__chronicle=c)
        ),
    )
    lines += _section(
        "torpor-hold",
        (
            (n.hold[h.pk], of(cy, h.cycle_id), h.ended_at is not None)
            for h in TorporHold.objects.filter(captive__chronicle=c)
        ),
    )
    lines += _section(
        "outcome",
        (
            (o.step, n.key(o.subject), of(ch, o.character_id), of(u, o.player_id))
            + (_amount(o.xp), _canonical(n.value(o.value)), o.overridable, o.title, o.public_text)
            + (_canonical(sorted(of(ch, r) for r in o.readers)),)
            for o in Outcome.objects.filter(cycle__chronicle=c)
        ),
    )
    lines += _section(
        "outcome-reader",
        (
            (r.outcome.step, n.key(r.outcome.subject), of(u, r.player_id))
            for r in OutcomeReader.objects.filter(outcome__cycle__chronicle=c).select_related(
                "outcome"
            )
        ),
    )
    lines += _section(
        "override",
        (
            # The STs' changes to the preview, kept through re-resolving and applied by the
            # release: the subject is an outcome's, named the same way; `at` is a time.
            (of(cy, x.cycle_id), x.step, n.key(x.subject), _amount(x.xp), x.found, x.note)
            + (of(u, x.by_id),)
            for x in OutcomeOverride.objects.filter(cycle__chronicle=c)
        ),
    )
    lines += _section(
        "desk",
        (
            # A desk item's key starts with its cycle's id: "<cycle>:influence:<form key>".
            (of(ch, d.character_id), d.kind, n.key(f"cycle:{d.key}"), d.status, d.result)
            + (d.released_at is not None, d.withdrawn_at is not None)
            for d in DeskItem.objects.filter(cycle__chronicle=c)
        ),
    )
    lines += _section(
        "stored-blood",
        (
            # BLD-04: what the release's Herd blood stored (its days are the release's: left out
            # like every time).
            (of(ch, b.holder_id), b.location, b.on_body, b.points, b.donor_type, b.donor_note)
            for b in StoredBlood.objects.filter(holder__chronicle=c)
        ),
    )
    lines += _section(
        "notification",
        (
            (of(ch, x.character_id), n.key(x.key), x.subject, x.body)
            for x in Notification.objects.filter(character__chronicle=c)
        ),
    )
    return lines


def digest(chronicle: Chronicle) -> str:
    """sha256 of `dump(chronicle)`."""
    return hashlib.sha256("\n".join(dump(chronicle)).encode()).hexdigest()
