"""The havens' part of the between-games preview and release (DT-10; HAV-02..07, HAV-10..25c).

The havens app resolves a downtime with seven steps (`havens.services.resolution.HAVEN_STEPS`,
in DT-10 order) that write haven state as they go. Here:

- `havens_preview` runs every step inside a savepoint that it rolls back, describing after each
  step what it did as unsaved `Outcome` rows: the world is left as it was, and the e-mails a
  step queued for after commit are dropped with the savepoint.
- `havens_apply` (the release) runs the steps for real, describes them the same way, then applies
  the storytellers' "found" overrides of search results and releases the results.

`pipeline.cycle_release` compares the two descriptions' `value`s and refuses a preview that no
longer matches the world, so a value holds only what the step computed: no time, and no id of a
row the step made (PostgreSQL does not give back sequence numbers on rollback, so such an id
differs between the preview and the release).

Subjects, each stable between the preview and the release:
- `change:<change>` a change of owners asked for before the downtime (transfer, will,
  forsaking, crypt destruction); `absence:<structure>:<character>`,
  `died:<structure>:<character>` and `theft:<structure>` for the changes the steps make;
- `haven:<structure>` a structure built or destroyed; `owner:<structure>:<character>` a
  character gaining or losing a structure that still stands;
- `project:<project>` an attribute built, a repair done, a build held or cancelled;
- `lost:<structure>:<character>` a find cleared (a mobile haven moved, a haven destroyed);
- `search:<search>` a downtime search resolved; `search:<search>:<structure>` one structure it
  tested (overridable: "found");
- `attack:<attack>` an influence attack; `attacked:<structure>` what its owners lost.

Secrecy (HAV-04, HAV-25b): `explanation` is for the storytellers and has the numbers; a
`public_text` tells its readers only what the havens pages already show them. A searcher never
reads hiding points, owners, or how many havens the target has (a "not found" line per structure
would count them); an owner never reads who searched or attacked; a new owner never reads who
owned the haven before.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext_noop

from characters.models import Character
from chronicle.models import Cycle
from havens import rules as haven_rules
from havens.models import (
    AttackStatus,
    ChangeKind,
    ChangeStatus,
    DestroyedBy,
    Find,
    InfluenceAttack,
    Ownership,
    OwnershipChange,
    OwnershipHow,
    Project,
    ProjectKind,
    ProjectStatus,
    Search,
    Searcher,
    SearchMoment,
    SearchResult,
    SearchStatus,
    Structure,
    StructureStatus,
)
from havens.services import resolution
from havens.services.searches import (
    SearchRuling,
    search_results_override,
    search_results_release,
)

from ..models import Outcome, OutcomeOverride
from ..wording import Phrase, joined, label, phrase, stored, worded

# Changes a player asked for themselves: they read how it went.
REQUESTED_CHANGES = {ChangeKind.TRANSFER, ChangeKind.WILL, ChangeKind.FORSAKE, ChangeKind.ABSENCE}


def havens_preview(*, cycle: Cycle, now: dt.datetime) -> list[Outcome]:
    """DT-10: what the havens' steps would do now, as unsaved outcomes, changing nothing.

    The steps run inside an atomic block left by an exception, which rolls back its savepoint.
    A bare `transaction.savepoint()` / `savepoint_rollback()` pair would roll the rows back
    too, but not the on-commit callbacks registered after it: Django drops a callback on
    rollback only for the savepoints of `atomic` blocks (`connection.savepoint_ids`), so an
    alarm e-mail queued by a step would still leave once the caller commits. Called outside a
    transaction, the block is the transaction itself and is rolled back whole."""
    outcomes: list[Outcome] = []
    with contextlib.suppress(_Discard), transaction.atomic():
        outcomes = _resolve_and_describe(cycle, now)
        raise _Discard
    return outcomes


@transaction.atomic
def havens_apply(
    *, cycle: Cycle, now: dt.datetime, overrides: Mapping[tuple[str, str], OutcomeOverride]
) -> list[Outcome]:
    """DT-10, at the release: run the havens' steps for real and describe them as the preview
    did; then apply the storytellers' "found" overrides of search results (HAV-25b) and release
    the results to the searchers and attackers. Returns the outcomes as computed, before the
    overrides: the release compares their values with the preview's."""
    outcomes = _resolve_and_describe(cycle, now)
    rulings: dict[tuple[int, int], SearchRuling] = {}
    for outcome in outcomes:
        override = overrides.get((outcome.step, outcome.subject))
        if outcome.overridable != "found" or override is None or override.found is None:
            continue
        _, search_id, structure_id = outcome.subject.split(":")
        rulings[(int(search_id), int(structure_id))] = SearchRuling(
            found=override.found, note=override.note
        )
    search_results_override(cycle=cycle, rulings=rulings, now=now)
    search_results_release(cycle=cycle, now=now)
    return outcomes


class _Discard(Exception):
    """Leaves the preview's atomic block, so that it rolls back."""


# --- What the havens look like between two steps -------------------------------------------------


class _Haven(NamedTuple):
    name: str
    kind: str
    status: str
    destroyed_by: str
    destroyed_note: str
    location: str


class _Project(NamedTuple):
    structure_id: int
    kind: str
    attribute_kind: str
    quantity: int
    repair_kind: str | None
    requested_by: int
    status: str
    held_reason: str


@dataclass
class _State:
    havens: dict[int, _Haven]
    owners: dict[int, dict[int, str]]  # structure → current owner → how they became one
    projects: dict[int, _Project]
    finds: set[tuple[int, int]]  # (structure, character) current finds


def _state(cycle: Cycle, now: dt.datetime, project_ids: list[int] | None) -> _State:
    """The chronicle's havens as the steps leave them: four queries, whatever their number.
    Structures destroyed earlier are left out (no step touches them again); those destroyed by
    this run carry `now`. Projects: the open and paid ones at the start (`project_ids` None),
    then those same ones, whatever became of them."""
    chronicle_id = cycle.chronicle_id
    havens = {
        pk: _Haven(*rest)
        for pk, *rest in Structure.objects.filter(chronicle_id=chronicle_id)
        .filter(~Q(status=StructureStatus.DESTROYED) | Q(destroyed_at=now))
        .values_list("pk", "name", "kind", "status", "destroyed_by", "destroyed_note", "location")
    }
    owners: dict[int, dict[int, str]] = defaultdict(dict)
    for structure_id, character_id, how in Ownership.objects.filter(
        structure__chronicle_id=chronicle_id, ended_at__isnull=True
    ).values_list("structure_id", "character_id", "how"):
        owners[structure_id][character_id] = how
    projects = Project.objects.all()
    projects = (
        projects.filter(
            structure__chronicle_id=chronicle_id,
            status__in=[ProjectStatus.OPEN, ProjectStatus.PAID],
        )
        if project_ids is None
        else projects.filter(pk__in=project_ids)
    )
    finds = set(
        Find.objects.filter(
            structure__chronicle_id=chronicle_id, cleared_at__isnull=True
        ).values_list("structure_id", "character_id")
    )
    return _State(
        havens=havens,
        owners=owners,
        projects={
            row[0]: _Project(*row[1:])
            for row in projects.values_list(
                "pk",
                "structure_id",
                "kind",
                "attribute_kind",
                "quantity",
                "repair_of__kind",
                "requested_by_id",
                "status",
                "held_reason",
            )
        },
        finds=finds,
    )


# --- The run and its outcomes ------------------------------------------------------------------


def _canon(value: Mapping[str, Any]) -> dict[str, Any]:
    """The value as the database will give it back (JSON: lists, string keys), so that the
    preview's stored value and the release's fresh one are equal exactly when the results are."""
    loaded: dict[str, Any] = json.loads(json.dumps(value, sort_keys=True))
    return loaded


@dataclass
class _Run:
    cycle: Cycle
    now: dt.datetime
    names: dict[int, str]
    players: dict[int, int | None]
    start: _State
    pending: set[int]  # changes pending before the first step
    seen: set[int]  # changes already described, or closed at `now` before this run
    lost_seen: set[tuple[int, int]] = field(default_factory=set)  # finds described as lost
    outcomes: list[Outcome] = field(default_factory=list)

    @classmethod
    def begin(cls, cycle: Cycle, now: dt.datetime) -> _Run:
        characters = Character.objects.filter(chronicle_id=cycle.chronicle_id).values_list(
            "pk", "name", "player_id"
        )
        changes = list(
            OwnershipChange.objects.filter(structure__chronicle_id=cycle.chronicle_id)
            .filter(Q(status=ChangeStatus.PENDING) | Q(applied_at=now))
            .values_list("pk", "status")
        )
        return cls(
            cycle=cycle,
            now=now,
            names={pk: name for pk, name, _ in characters},
            players={pk: player for pk, _, player in characters},
            start=_state(cycle, now, None),
            pending={pk for pk, status in changes if status == ChangeStatus.PENDING},
            seen={pk for pk, status in changes if status != ChangeStatus.PENDING},
        )

    def name(self, character_id: int | None) -> str:
        return self.names.get(character_id or 0, "someone")

    def said(self, character_id: int | None) -> str | Phrase:
        """A character's name in a text: "someone" (in the reader's words) when unknown."""
        return self.names.get(character_id or 0) or phrase(gettext_noop("someone"))

    def named(self, character_ids: Iterable[int]) -> list[str]:
        """Characters in a value by name, not id: the same month played on two databases (the
        fault tests' digests) gives the same values."""
        return sorted(self.name(pk) for pk in character_ids)

    def who(self, character_ids: Iterable[int]) -> str | Phrase:
        return ", ".join(sorted(self.name(pk) for pk in character_ids)) or phrase(
            gettext_noop("nobody")
        )

    def add(
        self,
        step: str,
        subject: str,
        *,
        title: Phrase,
        explanation: Phrase,
        value: Mapping[str, Any],
        character: int | None = None,
        public_text: Phrase | None = None,
        readers: Iterable[int] = (),
        overridable: str = "",
    ) -> None:
        """One outcome; its texts are phrases (downtimes.wording), kept in English too."""
        texts = {"title": title, "explanation": explanation}
        if public_text is not None:
            texts["public_text"] = public_text
        fields = worded(**texts)
        fields["title"] = fields["title"][:200]
        self.outcomes.append(
            Outcome(
                step=step,
                subject=subject,
                character_id=character,
                player_id=self.players.get(character) if character else None,
                value=_canon(value),
                readers=sorted(set(readers)),
                overridable=overridable,
                **fields,
            )
        )


def _resolve_and_describe(cycle: Cycle, now: dt.datetime) -> list[Outcome]:
    """Run every haven step in DT-10 order and describe what each did. A fixed number of
    queries whatever the number of havens, searches and attacks: the steps are set-based, and
    each description reads the state once after its step."""
    run = _Run.begin(cycle, now)
    before = run.start
    project_ids = sorted(run.start.projects)
    for name, step in resolution.HAVEN_STEPS:
        searches: list[int] = []
        attacks: list[int] = []
        if name == "searches":
            searches = list(
                Search.objects.filter(
                    cycle=cycle, status=SearchStatus.SUBMITTED, moment=SearchMoment.DOWNTIME
                ).values_list("pk", flat=True)
            )
        elif name == "influence_attacks":
            attacks = list(
                InfluenceAttack.objects.filter(
                    cycle=cycle, status=AttackStatus.SUBMITTED
                ).values_list("pk", flat=True)
            )
        step(cycle=cycle, now=now)
        after = _state(cycle, now, project_ids)
        _changes(run, name)
        _havens(run, name, before, after)
        _projects(run, name, before, after)
        _lost_finds(run, name, after)
        if searches:
            _searches(run, searches, before, after)
        if attacks:
            _attacks(run, attacks, before, after)
        before = after
    return run.outcomes


# --- Ownership changes (HAV-03, HAV-05..07) ----------------------------------------------------


def _change_subject(run: _Run, change: OwnershipChange) -> str:
    if change.pk in run.pending:
        return f"change:{change.pk}"
    # Made by the step itself: named by what it is about, never by its new id.
    if change.kind == ChangeKind.THEFT:
        return f"theft:{change.structure_id}"
    if change.kind == ChangeKind.ABSENCE:
        return f"absence:{change.structure_id}:{change.from_character_id}"
    if change.kind == ChangeKind.FORSAKE:  # an owner who died without a will (HAV-06)
        return f"died:{change.structure_id}:{change.from_character_id}"
    return f"{change.kind}:{change.structure_id}:{change.from_character_id or 0}"


def _changes(run: _Run, step: str) -> None:
    """The changes the step closed (applied or void) or made."""
    rows = list(
        OwnershipChange.objects.filter(
            structure__chronicle_id=run.cycle.chronicle_id, applied_at=run.now
        )
        .exclude(status=ChangeStatus.PENDING)
        .exclude(pk__in=sorted(run.seen))
        .select_related("structure")
        .order_by("pk")
    )
    for change in rows:
        run.seen.add(change.pk)
        words: dict[str, Any] = {
            "haven": change.structure.name,
            "kind": label("change_kind", change.kind),
            "status": label("change_status", change.status, lower=True),
            "outcome": stored(change.outcome),
        }
        public: Phrase | None = None
        readers: list[int] = []
        if change.kind in REQUESTED_CHANGES and change.from_character_id:
            # The owner who asked (or forsook by absence) reads the outcome, which names only
            # the recipient they named themselves.
            public = phrase(gettext_noop("%(kind)s of %(haven)s: %(status)s. %(outcome)s"), **words)
            readers = [change.from_character_id]
        run.add(
            step,
            _change_subject(run, change),
            title=phrase(gettext_noop("%(haven)s: %(kind)s — %(status)s"), **words),
            explanation=_change_explanation(run, change, words),
            value={
                "kind": change.kind,
                "status": change.status,
                "outcome": change.outcome,
                "from": run.name(change.from_character_id) if change.from_character_id else "",
                "to": run.name(change.to_character_id) if change.to_character_id else "",
            },
            character=change.from_character_id,
            public_text=public,
            readers=readers,
        )


def _change_explanation(run: _Run, change: OwnershipChange, words: dict[str, Any]) -> Phrase:
    """Who gave to whom, as far as the change says: one whole sentence per case."""
    by = run.said(change.from_character_id) if change.from_character_id else None
    to = run.said(change.to_character_id) if change.to_character_id else None
    named = change.to_name if to is None and change.to_name else None
    if by is not None and to is not None:
        return phrase(
            gettext_noop("%(kind)s of %(haven)s by %(by)s to %(to)s: %(status)s. %(outcome)s"),
            by=by,
            to=to,
            **words,
        )
    if by is not None and named is not None:
        return phrase(
            gettext_noop("%(kind)s of %(haven)s by %(by)s to “%(to)s”: %(status)s. %(outcome)s"),
            by=by,
            to=named,
            **words,
        )
    if by is not None:
        return phrase(
            gettext_noop("%(kind)s of %(haven)s by %(by)s: %(status)s. %(outcome)s"), by=by, **words
        )
    if to is not None:
        return phrase(
            gettext_noop("%(kind)s of %(haven)s to %(to)s: %(status)s. %(outcome)s"), to=to, **words
        )
    if named is not None:
        return phrase(
            gettext_noop("%(kind)s of %(haven)s to “%(to)s”: %(status)s. %(outcome)s"),
            to=named,
            **words,
        )
    return phrase(gettext_noop("%(kind)s of %(haven)s: %(status)s. %(outcome)s"), **words)


def _havens(run: _Run, step: str, before: _State, after: _State) -> None:
    """Structures built or destroyed by the step, and owners gained or lost by one still
    standing."""
    gained: list[tuple[int, int]] = []
    lost: list[tuple[int, int]] = []
    for sid, haven in sorted(after.havens.items()):
        was = before.havens.get(sid)
        owners_before, owners_after = (
            set(before.owners.get(sid, {})),
            set(after.owners.get(sid, {})),
        )
        if was is not None and was.status != haven.status:
            _haven_status(run, step, sid, was, haven, owners_before, owners_after)
        if haven.status == StructureStatus.DESTROYED:
            continue  # its owners read of the destruction above
        gained.extend((sid, pk) for pk in sorted(owners_after - owners_before))
        lost.extend((sid, pk) for pk in sorted(owners_before - owners_after))
    for sid, pk in gained:
        haven = after.havens[sid]
        how = after.owners[sid][pk]
        line = phrase(
            gettext_noop("%(name)s now owns %(haven)s (%(how)s)."),
            name=run.said(pk),
            haven=haven.name,
            how=label("ownership_how", OwnershipHow(how).value),
        )
        run.add(
            step,
            f"owner:{sid}:{pk}",
            title=phrase(
                gettext_noop("%(name)s now owns %(haven)s"), name=run.said(pk), haven=haven.name
            ),
            explanation=line,
            value={"owner": True, "how": how},
            character=pk,
            public_text=line,
            readers=[pk],
        )
    if not lost:
        return
    why = {
        (sid, pk): reason
        for sid, pk, reason in Ownership.objects.filter(
            structure_id__in={sid for sid, _ in lost}, ended_at=run.now
        )
        .order_by("pk")
        .values_list("structure_id", "character_id", "ended_why")
    }
    for sid, pk in lost:
        haven = after.havens[sid]
        reason = why.get((sid, pk), "")
        line = (
            phrase(
                gettext_noop("%(name)s no longer owns %(haven)s: %(why)s"),
                name=run.said(pk),
                haven=haven.name,
                why=stored(reason),
            )
            if reason
            else phrase(
                gettext_noop("%(name)s no longer owns %(haven)s: ownership ended."),
                name=run.said(pk),
                haven=haven.name,
            )
        )
        run.add(
            step,
            f"owner:{sid}:{pk}",
            title=phrase(
                gettext_noop("%(name)s no longer owns %(haven)s"),
                name=run.said(pk),
                haven=haven.name,
            ),
            explanation=line,
            value={"owner": False, "why": reason},
            character=pk,
            public_text=line,
            readers=[pk],
        )


def _haven_status(
    run: _Run,
    step: str,
    sid: int,
    was: _Haven,
    haven: _Haven,
    owners_before: set[int],
    owners_after: set[int],
) -> None:
    words: dict[str, Any] = {
        "haven": haven.name,
        "kind": label("structure_kind", haven.kind),
        "was": label("structure_status", was.status, lower=True),
        "status": label("structure_status", haven.status, lower=True),
        "owners": run.who(owners_before),
    }
    if haven.status == StructureStatus.DESTROYED:
        words["cause"] = (
            label("destroyed_by", haven.destroyed_by)
            if haven.destroyed_by
            else phrase(gettext_noop("destroyed"))
        )
        explanation = phrase(
            gettext_noop(
                "%(kind)s %(haven)s: %(was)s → %(status)s (%(cause)s: %(note)s); owners before: "
                "%(owners)s."
            ),
            note=stored(haven.destroyed_note),
            **words,
        )
        public = (
            phrase(
                gettext_noop(
                    "%(haven)s was destroyed: %(cause)s. What was inside survives; its owners "
                    "must find or build a new haven."
                ),
                **words,
            )
            if haven.destroyed_by == DestroyedBy.INFLUENCE_ATTACK
            else phrase(gettext_noop("%(haven)s was destroyed: %(cause)s."), **words)
        )
    else:
        explanation = phrase(
            gettext_noop("%(kind)s %(haven)s: %(was)s → %(status)s; owners before: %(owners)s."),
            **words,
        )
        public = (
            phrase(gettext_noop("%(haven)s is built and now stands (HAV-02)."), **words)
            if haven.status == StructureStatus.STANDING
            else phrase(gettext_noop("%(haven)s: %(status)s."), **words)
        )
    run.add(
        step,
        f"haven:{sid}",
        title=phrase(gettext_noop("%(haven)s: %(status)s"), **words),
        explanation=explanation,
        value={
            "status": haven.status,
            "destroyed_by": haven.destroyed_by,
            "owners_before": run.named(owners_before),
            "owners": run.named(owners_after),
        },
        public_text=public,
        readers=owners_before | owners_after,
    )


# --- Construction and repairs (HAV-02, HAV-10..24) ---------------------------------------------


def _what(project: _Project) -> Phrase | dict[str, Any]:
    """What a project builds, as a part of a sentence."""
    if project.kind == ProjectKind.REPAIR:
        if not project.repair_kind:
            return phrase(gettext_noop("the repair of an attribute"))
        return phrase(
            gettext_noop("the repair of a %(attribute)s"),
            attribute=label("attribute", project.repair_kind, lower=True),
        )
    name = label("attribute", project.attribute_kind)
    if project.attribute_kind in haven_rules.POINTS_PER_UNIT:
        return phrase(
            gettext_noop("%(attribute)s (%(quantity)s points)"),
            attribute=name,
            quantity=project.quantity,
        )
    if project.quantity > 1:
        return phrase(
            gettext_noop("%(attribute)s × %(quantity)s"), attribute=name, quantity=project.quantity
        )
    return name


def _projects(run: _Run, step: str, before: _State, after: _State) -> None:
    """Projects the step built, held or cancelled; the structure's owners read it (a cancelled
    one, its orderer: after a theft they own it no more)."""
    for pk, project in sorted(after.projects.items()):
        was = before.projects.get(pk)
        if was is None or (was.status, was.held_reason) == (project.status, project.held_reason):
            continue
        haven = after.havens.get(project.structure_id)
        words: dict[str, Any] = {
            "haven": haven.name if haven else phrase(gettext_noop("a haven")),
            "what": _what(project),
            "status": label("project_status", project.status, lower=True),
            "reason": stored(project.held_reason),
            "rule": (
                "HAV-24"
                if project.kind == ProjectKind.REPAIR
                else haven_rules.ATTRIBUTE_RULE_IDS.get(project.attribute_kind, "HAV-02")
            ),
        }
        readers: Iterable[int] = after.owners.get(project.structure_id, {})
        if project.status == ProjectStatus.DONE:
            line = phrase(gettext_noop("%(haven)s: %(what)s is done (%(rule)s)."), **words)
        elif project.status == ProjectStatus.CANCELLED:
            line = (
                phrase(gettext_noop("%(haven)s: %(what)s is cancelled. %(reason)s"), **words)
                if project.held_reason
                else phrase(gettext_noop("%(haven)s: %(what)s is cancelled."), **words)
            )
            readers = [project.requested_by]
        elif project.held_reason:
            line = phrase(
                gettext_noop(
                    "%(haven)s: %(what)s is paid for but waits for the storytellers. %(reason)s"
                ),
                **words,
            )
        else:
            line = phrase(gettext_noop("%(haven)s: %(what)s is %(status)s."), **words)
        run.add(
            step,
            f"project:{pk}",
            title=phrase(gettext_noop("%(haven)s: %(what)s — %(status)s"), **words),
            explanation=line,
            value={
                "status": project.status,
                "held_reason": project.held_reason,
            },
            public_text=line,
            readers=readers,
        )


# --- Finds lost (HAV-25b) ----------------------------------------------------------------------


def _lost_finds(run: _Run, step: str, after: _State) -> None:
    """Finds held before this run and cleared by the step: a mobile haven moved, or a haven was
    destroyed. A find made in this run and cleared in it is left out: the searcher never had it,
    and the storytellers may yet rule the search not found. The finder reads only that the place
    is no longer theirs to know (the havens page shows no more); never why, which would tell a
    mobile haven (an attribute, HAV-04)."""
    for sid, pk in sorted(run.start.finds - after.finds):
        haven = after.havens.get(sid)
        if haven is None or (sid, pk) in run.lost_seen:
            continue
        run.lost_seen.add((sid, pk))
        words = {"name": run.said(pk), "haven": haven.name, "location": haven.location}
        if step == "mobile_havens":
            explanation = phrase(
                gettext_noop(
                    "%(name)s no longer knows where %(haven)s is: the haven is mobile and moved "
                    "(HAV-25b)."
                ),
                **words,
            )
        elif haven.status == StructureStatus.DESTROYED:
            explanation = phrase(
                gettext_noop(
                    "%(name)s no longer knows where %(haven)s is: the haven was destroyed."
                ),
                **words,
            )
        else:
            explanation = phrase(
                gettext_noop("%(name)s no longer knows where %(haven)s is: the find was cleared."),
                **words,
            )
        run.add(
            step,
            f"lost:{sid}:{pk}",
            title=phrase(gettext_noop("%(name)s loses the find of %(haven)s"), **words),
            explanation=explanation,
            value={"find": False},
            character=pk,
            public_text=phrase(
                gettext_noop(
                    "%(name)s no longer knows where the haven at %(location)s is (HAV-25b)."
                ),
                **words,
            ),
            readers=[pk],
        )


# --- Searches (HAV-25, HAV-25b) -----------------------------------------------------------------


def _searches(run: _Run, search_ids: list[int], before: _State, after: _State) -> None:
    """Each structure a search tested (for the storytellers, with the numbers; overridable),
    and the search itself (its searchers read that it is resolved, not what it found: the
    havens page lists the places once released, with the storytellers' rulings)."""
    searches = {
        s.pk: s
        for s in Search.objects.filter(pk__in=search_ids, status=SearchStatus.RESOLVED).order_by(
            "pk"
        )
    }
    crews: dict[int, list[tuple[int, str, int]]] = defaultdict(list)
    for search_id, character_id, influence, points in (
        Searcher.objects.filter(search_id__in=list(searches))
        .order_by("search_id", "character_id")
        .values_list("search_id", "character_id", "influence", "points")
    ):
        crews[search_id].append((character_id, influence, points))
    results: dict[int, list[SearchResult]] = defaultdict(list)
    for result in (
        SearchResult.objects.filter(search_id__in=list(searches))
        .select_related("structure")
        .order_by("search_id", "structure_id")
    ):
        results[result.search_id].append(result)
    for search_id, search in searches.items():
        crew = crews[search_id]
        members = [pk for pk, _, _ in crew]
        who: Phrase | dict[str, Any] = (
            joined(
                [
                    phrase(
                        gettext_noop("%(name)s (%(points)s %(influence)s)"),
                        name=run.said(pk),
                        points=points,
                        influence=label("influence", influence, lower=True),
                    )
                    for pk, influence, points in crew
                ]
            )
            if crew
            else phrase(gettext_noop("Nobody"))
        )
        for result in results[search_id]:
            sid = result.structure_id
            finders = (
                [pk for pk in members if (sid, pk) in after.finds and (sid, pk) not in before.finds]
                if result.found
                else []
            )
            words = {
                "who": who,
                "target": search.target_name,
                "haven": result.structure.name,
                "result": stored(result.explanation),
            }
            run.add(
                "searches",
                f"search:{search_id}:{sid}",
                title=phrase(
                    gettext_noop("Search for %(target)s: %(haven)s found")
                    if result.found
                    else gettext_noop("Search for %(target)s: %(haven)s not found"),
                    **words,
                ),
                explanation=phrase(
                    gettext_noop(
                        "%(who)s searched for %(target)s's havens. %(haven)s: %(result)s (HAV-25b)."
                    ),
                    **words,
                ),
                value={
                    "spent": result.spent,
                    "hiding_points": result.hiding_points,
                    "found": result.found,
                    "finders": run.named(finders),
                },
                character=search.created_by_id,
                overridable="found",
            )
        tested = results[search_id]
        found = sum(1 for r in tested if r.found)
        run.add(
            "searches",
            f"search:{search_id}",
            title=phrase(
                gettext_noop("Search for %(target)s: resolved"), target=search.target_name
            ),
            explanation=(
                phrase(
                    gettext_noop("%(who)s searched for %(target)s's havens: %(reason)s"),
                    who=who,
                    target=search.target_name,
                    reason=stored(search.explanation),
                )
                if search.explanation
                else phrase(
                    gettext_noop(
                        "%(who)s searched for %(target)s's havens: %(tested)s tested, %(found)s "
                        "found (HAV-25b)."
                    ),
                    who=who,
                    target=search.target_name,
                    tested=len(tested),
                    found=found,
                )
            ),
            value={
                "tested": len(tested),
                "found": found,
                "spent": sum(points for _, _, points in crew),
                "searchers": run.named(members),
                "explanation": search.explanation,
            },
            character=search.created_by_id,
            public_text=phrase(
                gettext_noop(
                    "The search for %(target)s's havens is resolved: the places it found, if "
                    "any, are listed on your searches page (HAV-25b)."
                ),
                target=search.target_name,
            ),
            readers=members,
        )


# --- Influence attacks (HAV-25c) ----------------------------------------------------------------


def _attacks(run: _Run, attack_ids: list[int], before: _State, after: _State) -> None:
    """Each attack (its attacker reads whether the haven fell, never its resistance), and what
    each attacked haven that still stands lost (its owners read it from the haven's state
    anyway, never who attacked)."""
    attacks = list(
        InfluenceAttack.objects.filter(pk__in=attack_ids, status=AttackStatus.RESOLVED)
        .select_related("structure")
        .order_by("created_at", "pk")
    )
    gone: set[int] = set()
    lowered: dict[int, list[int]] = {}  # structure → [resistance before, after]
    for attack in attacks:
        sid, structure = attack.structure_id, attack.structure
        was = before.havens.get(sid)
        words = {
            "name": run.said(attack.attacker_id),
            "haven": structure.name,
            "location": structure.location,
            "points": attack.points,
            "influence": label("influence", attack.influence, lower=True),
            "result": stored(attack.explanation),
        }
        if was is None or was.status != StructureStatus.STANDING or sid in gone:
            public = phrase(
                gettext_noop(
                    "The influence attack (%(points)s %(influence)s) on the haven at "
                    "%(location)s: the haven no longer stood (HAV-25c)."
                ),
                **words,
            )
        elif attack.destroyed:
            gone.add(sid)
            public = phrase(
                gettext_noop(
                    "The influence attack (%(points)s %(influence)s) on the haven at "
                    "%(location)s: the haven was destroyed (HAV-25c)."
                ),
                **words,
            )
        else:
            public = phrase(
                gettext_noop(
                    "The influence attack (%(points)s %(influence)s) on the haven at "
                    "%(location)s: the haven still stands (HAV-25c)."
                ),
                **words,
            )
            if attack.resistance_after != attack.resistance_before:  # a mobile haven is immune
                span = lowered.setdefault(sid, [attack.resistance_before or 0, 0])
                span[1] = attack.resistance_after or 0
        run.add(
            "influence_attacks",
            f"attack:{attack.pk}",
            title=phrase(gettext_noop("%(name)s's influence attack on %(haven)s"), **words),
            explanation=phrase(
                gettext_noop(
                    "%(name)s attacked %(haven)s with %(points)s %(influence)s: %(result)s"
                ),
                **words,
            ),
            value={
                "points": attack.points,
                "resistance_before": attack.resistance_before,
                "resistance_after": attack.resistance_after,
                "destroyed": attack.destroyed,
            },
            character=attack.attacker_id,
            public_text=public,
            readers=[attack.attacker_id],
        )
    for sid, (high, low) in sorted(lowered.items()):
        haven = after.havens.get(sid)
        if haven is None or sid in gone or haven.status != StructureStatus.STANDING:
            continue
        owners = set(before.owners.get(sid, {}))
        figures = {"haven": haven.name, "high": high, "low": low, "owners": run.who(owners)}
        run.add(
            "influence_attacks",
            f"attacked:{sid}",
            title=phrase(
                gettext_noop("%(haven)s: influence resistance %(high)s → %(low)s"), **figures
            ),
            explanation=phrase(
                gettext_noop(
                    "%(haven)s was the target of influence attacks: its influence resistance fell "
                    "from %(high)s to %(low)s (HAV-25c). Owners: %(owners)s."
                ),
                **figures,
            ),
            value={"resistance_before": high, "resistance_after": low},
            public_text=phrase(
                gettext_noop(
                    "%(haven)s was the target of influence attacks: its influence resistance fell "
                    "from %(high)s to %(low)s (HAV-25c)."
                ),
                **figures,
            ),
            readers=owners,
        )
