"""Haven searches (HAV-25b), influence attacks (HAV-25c), reinforcement attacks and alarms
(HAV-26, HAV-10), mobile havens moving, and objects hidden on site (HID-01..02).

Secrecy (HAV-04) shapes every refusal here: a player's search names its target in words and
gets the same answer whether or not the name matches anyone; an attack on a structure the
attacker has not found is refused exactly like one on a structure that does not exist.

Influence is spent through `characters.services.influence.influence_spend`, one keyed spend per
Searcher and InfluenceAttack row, so a double click spends once. Resolution steps take a cycle,
run a fixed number of queries whatever the number of searches, and are guarded by a status, so
a re-run after a crash gives the effects of one run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from characters.models import Character, DisciplineLevel, InfluenceSpend, SpendMoment, Status
from characters.services.common import refusal
from characters.services.influence import influence_refund, influence_spend
from characters.services.notify import notify
from chronicle.access import STAFF_ROLES
from chronicle.models import Chronicle, Cycle, CycleStatus, Game, Membership
from chronicle.rules import HouseRules, ratio_class, settings_for
from chronicle.services import current_downtime

from .. import rules, selectors
from ..models import (
    AlarmFiring,
    AlarmTrigger,
    AttackStatus,
    Attribute,
    AttributeState,
    ChangeStatus,
    DestroyedBy,
    Find,
    HiddenObject,
    HiddenObjectSearch,
    InfluenceAttack,
    LockTest,
    Ownership,
    OwnershipChange,
    ReinforcementAttack,
    Search,
    Searcher,
    SearchMoment,
    SearchResult,
    SearchStatus,
    Structure,
    StructureStatus,
)
from .ownership import _destroy as destroy_structures

TARGET_NAME_MAX = 120
KEY_MAX = 120  # HiddenObject.key, HiddenObjectSearch.key, LockTest.key
PARTY_CODE_BYTES = 12  # token_urlsafe(12) is 16 characters, the column's length
# One answer for a code that is unknown, of another chronicle, or of a search no longer open:
# a code reveals nothing but that it can be joined.
UNKNOWN_CODE = "No open search has that code; ask the searcher who shared it (HAV-25b)."
# One answer for a structure that does not exist and one the attacker has not found.
UNKNOWN_HAVEN = "You know of no haven with that id; attack only a haven you found (HAV-25c)."
NO_OPEN_CYCLE = "No downtime is open right now to spend influence in (DT-01)."
CLOSED_CYCLE = "This downtime's deadline has passed; it can no longer be withdrawn (DT-01)."


# --- Glue --------------------------------------------------------------------------------------


def _is_staff(user: User, chronicle: Chronicle | int) -> bool:
    return Membership.objects.filter(chronicle=chronicle, user=user, role__in=STAFF_ROLES).exists()


def _require_staff(user: User, chronicle: Chronicle | int) -> None:
    if not _is_staff(user, chronicle):
        raise PermissionDenied("Only the chronicle's storytellers may do this.")


def _require_player(user: User, character: Character) -> None:
    """A player acts for their own characters; storytellers for anyone's."""
    if character.player_id != user.pk and not _is_staff(user, character.chronicle_id):
        raise PermissionDenied("You may act only for your own characters.")


def _current_cycle(chronicle: Chronicle | int) -> Cycle:
    cycle = current_downtime(chronicle)
    if cycle is None:
        raise ValidationError(NO_OPEN_CYCLE)
    return cycle


def _active_target(chronicle: Chronicle | int, name: str) -> Character | None:
    """The one active character of exactly this name (case-insensitive), or None when no one
    or several have it; an ST links it then."""
    matches = list(
        Character.objects.filter(
            chronicle=chronicle, status=Status.ACTIVE, name__iexact=name.strip()
        )[:2]
    )
    return matches[0] if len(matches) == 1 else None


def _require_active(character: Character, rule: str, field: str = "character") -> None:
    if character.status != Status.ACTIVE:
        raise ValidationError(
            {field: f"{character.name} is not active and cannot act now ({rule})."}
        )


def _target_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ValidationError(
            {"target_name": "Name the character whose havens you seek (HAV-25b)."}
        )
    if len(name) > TARGET_NAME_MAX:
        raise ValidationError(
            {"target_name": f"Give the name in at most {TARGET_NAME_MAX} letters (HAV-25b)."}
        )
    return name


def _short_key(key: str) -> str:
    """A key fits its 120-letter column: a longer one is hashed, never cut, so two different
    keys never become one."""
    if len(key) <= KEY_MAX:
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def _new_party_code() -> str:
    return secrets.token_urlsafe(PARTY_CODE_BYTES)[:16]


# --- Searches (HAV-25b) ------------------------------------------------------------------------


@transaction.atomic
def search_submit(
    *,
    character: Character,
    target_name: str,
    influence: str,
    points: int,
    by: User,
    key: str,
    moment: str = SearchMoment.DOWNTIME,
    now: dt.datetime | None = None,
) -> Search:
    """HAV-25b: a search for the havens of the character named `target_name`, with this
    character's influence as its first spend. The target is linked when exactly one active
    character has that name; otherwise an ST links it. Either way the answer is the same.
    Keyed: the same `key` gives the same search."""
    now = now or timezone.now()
    _require_player(by, character)
    _require_active(character, "HAV-25b")
    name = _target_name(target_name)
    if moment not in SearchMoment.values:
        raise ValidationError({"moment": "Search in downtime or at the game (HAV-25b)."})
    cycle = _current_cycle(character.chronicle_id)
    spend, created = influence_spend(
        character=character,
        cycle=cycle,
        influence=influence,
        points=points,
        reason=f"Haven search for {name}",
        key=f"haven-search:{key}",
        actor=by,
        moment=moment,
        now=now,
    )
    if not created:
        return _search_of_spend(spend.pk)
    search = Search.objects.create(
        cycle=cycle,
        target_name=name,
        target=_active_target(character.chronicle_id, name),
        moment=moment,
        party_code=_new_party_code(),
        created_by=character,
        created_at=now,
    )
    Searcher.objects.create(
        search=search,
        character=character,
        influence=influence,
        points=points,
        spend=spend,
        joined_at=now,
    )
    return search


def _search_of_spend(spend_id: int) -> Search:
    searcher = Searcher.objects.filter(spend_id=spend_id).select_related("search").first()
    if searcher is None:
        # The same request, replayed after its searcher withdrew.
        raise ValidationError("That search request was withdrawn; file a new one (HAV-25b).")
    return searcher.search


@transaction.atomic
def search_target_link(*, search: Search, target: Character, by: User) -> Search:
    """An ST links the target a player named in words (HAV-25b), before resolution."""
    search = Search.objects.select_for_update().select_related("cycle").get(pk=search.pk)
    _require_staff(by, search.cycle.chronicle_id)
    if target.chronicle_id != search.cycle.chronicle_id:
        raise ValidationError({"target": "Pick a character of this chronicle (HAV-25b)."})
    if search.status != SearchStatus.SUBMITTED:
        raise ValidationError("Only a search not yet resolved can be linked (HAV-25b).")
    search.target = target
    search.save(update_fields=["target"])
    return search


@transaction.atomic
def search_join(
    *,
    party_code: str,
    character: Character,
    influence: str,
    points: int,
    by: User,
    key: str,
    now: dt.datetime | None = None,
) -> Search:
    """HAV-25b: a cooperating searcher joins a search by the code its first searcher shared;
    their spends add up. Keyed like `search_submit`."""
    now = now or timezone.now()
    _require_player(by, character)
    _require_active(character, "HAV-25b")
    code = (party_code or "").strip()
    search = (
        Search.objects.select_for_update()
        .select_related("cycle")
        .filter(
            party_code=code,
            cycle__chronicle_id=character.chronicle_id,
            moment=SearchMoment.DOWNTIME,
        )
        .first()
        if code
        else None
    )
    if search is None or search.status != SearchStatus.SUBMITTED:
        raise ValidationError({"party_code": UNKNOWN_CODE})
    if search.cycle.status != CycleStatus.OPEN:
        raise ValidationError(
            {"party_code": "That search's downtime is closed; it can no longer be joined (DT-01)."}
        )
    previous = _spend_for_key(character, f"haven-search-join:{key}")
    if previous is not None:
        return _search_of_spend(previous)
    if Searcher.objects.filter(search=search, character=character).exists():
        raise ValidationError(
            {"character": f"{character.name} is already in this search (HAV-25b)."}
        )
    spend, _ = influence_spend(
        character=character,
        cycle=search.cycle,
        influence=influence,
        points=points,
        reason=f"Haven search for {search.target_name}",
        key=f"haven-search-join:{key}",
        actor=by,
        now=now,
    )
    Searcher.objects.create(
        search=search,
        character=character,
        influence=influence,
        points=points,
        spend=spend,
        joined_at=now,
    )
    return search


def _spend_for_key(character: Character, key: str) -> int | None:
    return (
        InfluenceSpend.objects.filter(character=character, key=key)
        .values_list("pk", flat=True)
        .first()
    )


@transaction.atomic
def search_withdraw(
    *, search: Search, character: Character, by: User, now: dt.datetime | None = None
) -> Search:
    """HAV-25b: a searcher leaves a search before it is resolved, and gets their influence
    back; the search is withdrawn when nobody remains. Withdrawing twice changes nothing.
    Only while its downtime is open (DT-01): after the deadline the ST's preview counts it."""
    now = now or timezone.now()
    _require_player(by, character)
    search = (
        Search.objects.select_for_update(of=("self",)).select_related("cycle").get(pk=search.pk)
    )
    searcher = (
        Searcher.objects.filter(search=search, character=character).select_related("spend").first()
    )
    if searcher is None:
        return search
    if search.status != SearchStatus.SUBMITTED:
        raise ValidationError("This search is already resolved; it cannot be withdrawn (HAV-25b).")
    if search.cycle.status != CycleStatus.OPEN:
        raise ValidationError(CLOSED_CYCLE)
    influence_refund(spend=searcher.spend, reason="Withdrew from a haven search", actor=by, now=now)
    searcher.delete()
    if not Searcher.objects.filter(search=search).exists():
        search.status = SearchStatus.WITHDRAWN
        search.save(update_fields=["status"])
    return search


@dataclass(frozen=True)
class Outcome:
    """One structure a search tests (HAV-25b): staff only."""

    structure: Structure
    spent: int
    hiding_points: int
    found: bool

    @property
    def explanation(self) -> str:
        verdict = "found" if self.found else "not found"
        return (
            f"search of {self.spent} influence against {self.hiding_points} hiding points: "
            f"{verdict}"
        )


def _target_structures(target_ids: Iterable[int]) -> dict[int, list[Structure]]:
    """HAV-25b: each target's standing havens: those it owns, and the outer havens it holds a
    crypt in (one query)."""
    found: dict[int, dict[int, Structure]] = defaultdict(dict)
    rows = Ownership.objects.filter(
        character_id__in=list(target_ids),
        ended_at__isnull=True,
        structure__status=StructureStatus.STANDING,
    ).select_related("structure", "structure__outer")
    for row in rows:
        structure = row.structure
        found[row.character_id][structure.pk] = structure
        outer = structure.outer
        if outer is not None and outer.status == StructureStatus.STANDING:
            found[row.character_id][outer.pk] = outer
    return {pk: sorted(s.values(), key=lambda s: s.pk) for pk, s in found.items()}


def search_outcomes(
    searches: Sequence[Search], *, house_rules: HouseRules
) -> dict[int, list[Outcome]]:
    """HAV-25b: what each search finds with the hiding points now, writing nothing (the desk's
    preview and the resolution). Four queries whatever the number of searches: searchers'
    spends, the targets' structures, and two for hiding points."""
    ids = [s.pk for s in searches]
    spends: dict[int, list[int]] = defaultdict(list)
    for search_id, points in Searcher.objects.filter(search_id__in=ids).values_list(
        "search_id", "points"
    ):
        spends[search_id].append(points)
    structures = _target_structures({s.target_id for s in searches if s.target_id})
    everything = {s.pk: s for group in structures.values() for s in group}
    hiding = selectors.hiding_points_for(everything.values(), house_rules=house_rules)
    outcomes: dict[int, list[Outcome]] = {}
    for search in searches:
        outcomes[search.pk] = []
        if not search.target_id or not spends[search.pk]:
            continue
        for structure in structures.get(search.target_id, []):
            hiding_now = hiding[structure.pk]
            if hiding_now is None:
                continue
            outcomes[search.pk].append(
                Outcome(
                    structure=structure,
                    spent=sum(spends[search.pk]),
                    hiding_points=hiding_now,
                    found=rules.cooperative_search_finds(
                        spends[search.pk], hiding_points=hiding_now
                    ),
                )
            )
    return outcomes


def _resolve(searches: Sequence[Search], *, house_rules: HouseRules, now: dt.datetime) -> int:
    """Write the results and finds of `searches` (locked by the caller) and mark them
    resolved; returns the number of structures found. A fixed number of queries."""
    if not searches:
        return 0
    outcomes = search_outcomes(searches, house_rules=house_rules)
    SearchResult.objects.bulk_create(
        [
            SearchResult(
                search_id=search_id,
                structure=o.structure,
                spent=o.spent,
                hiding_points=o.hiding_points,
                found=o.found,
                explanation=o.explanation,
                created_at=now,
            )
            for search_id, group in outcomes.items()
            for o in group
        ],
        ignore_conflicts=True,
    )
    ids = [s.pk for s in searches]
    found = list(
        SearchResult.objects.filter(search_id__in=ids, found=True).values_list(
            "pk", "search_id", "structure_id", "search__cycle_id"
        )
    )
    by_search: dict[int, list[int]] = defaultdict(list)
    for character_id, search_id in Searcher.objects.filter(search_id__in=ids).values_list(
        "character_id", "search_id"
    ):
        by_search[search_id].append(character_id)
    # A searcher who already knows the place keeps their earlier find (one current find each).
    Find.objects.bulk_create(
        [
            Find(
                structure_id=structure_id,
                character_id=character_id,
                result_id=result_id,
                cycle_id=cycle_id,
                found_at=now,
            )
            for result_id, search_id, structure_id, cycle_id in found
            for character_id in by_search[search_id]
        ],
        ignore_conflicts=True,
    )
    Search.objects.filter(pk__in=ids, status=SearchStatus.SUBMITTED).update(
        status=SearchStatus.RESOLVED, resolved_at=now
    )
    # Why a search tested nothing, for the desk; one UPDATE per kind of reason, not per search.
    unlinked = [s.pk for s in searches if s.target_id is None]
    homeless = [s.pk for s in searches if s.target_id is not None and not outcomes[s.pk]]
    for reasons, sentence in (
        (unlinked, "No target was linked to this search: it found nothing (HAV-25b)."),
        (homeless, "The target had no standing haven: nothing to find (HAV-25b)."),
    ):
        if reasons:
            Search.objects.filter(pk__in=reasons, explanation="").update(explanation=sentence)
    return len(found)


@transaction.atomic
def search_at_game_record(
    *,
    game: Game,
    target: Character,
    searchers: Sequence[tuple[Character, str, int]],
    by: User,
    key: str,
    now: dt.datetime | None = None,
) -> Search:
    """HAV-25b: a search made at a game, recorded by an ST: resolved and released at once. Its
    spends count in the cycle after that game, as spent at the game (INF-03)."""
    now = now or timezone.now()
    _require_staff(by, game.chronicle_id)
    if not searchers:
        raise ValidationError({"searchers": "Name at least one searcher (HAV-25b)."})
    if target.chronicle_id != game.chronicle_id or any(
        c.chronicle_id != game.chronicle_id for c, _, _ in searchers
    ):
        raise ValidationError("Every character must belong to this chronicle (HAV-25b).")
    if len({c.pk for c, _, _ in searchers}) != len(searchers):
        raise ValidationError({"searchers": "Name each searcher once (HAV-25b)."})
    cycle = Cycle.objects.filter(game=game).first()
    if cycle is None:
        raise ValidationError({"game": "That game has no downtime cycle (DT-01)."})
    # A double submit races here: both requests would miss the key and the second would fail
    # on the spend's unique key. The searchers' rows (in id order, so two records naming the
    # same characters never deadlock) queue the second behind the first, which it then finds.
    list(
        Character.objects.select_for_update()
        .filter(pk__in=[c.pk for c, _, _ in searchers])
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    first_key = f"haven-search-game:{key}:{searchers[0][0].pk}"
    previous = _spend_for_key(searchers[0][0], first_key)
    if previous is not None:
        return _search_of_spend(previous)
    search = Search.objects.create(
        cycle=cycle,
        target_name=target.name,
        target=target,
        moment=SearchMoment.GAME,
        party_code=_new_party_code(),
        created_by=searchers[0][0],
        created_at=now,
    )
    for character, influence, points in searchers:
        spend, _ = influence_spend(
            character=character,
            cycle=cycle,
            influence=influence,
            points=points,
            reason=f"Haven search for {target.name} at {game}",
            key=f"haven-search-game:{key}:{character.pk}",
            actor=by,
            moment=SpendMoment.GAME,
            field="searchers",
            now=now,
        )
        Searcher.objects.create(
            search=search,
            character=character,
            influence=influence,
            points=points,
            spend=spend,
            joined_at=now,
        )
    _resolve([search], house_rules=game.chronicle.house_rules, now=now)
    Search.objects.filter(pk=search.pk).update(released_at=now)
    search.refresh_from_db()
    return search


@transaction.atomic
def searches_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-25b (DT-10 "searches"): resolve every submitted downtime search of the cycle. Each
    standing haven of the linked target is found iff the searchers' summed spend is strictly
    greater than its hiding points now. A search without a linked target finds nothing.
    Idempotent: resolved searches are not touched again."""
    now = now or timezone.now()
    searches = list(
        Search.objects.select_for_update()
        .filter(cycle=cycle, status=SearchStatus.SUBMITTED, moment=SearchMoment.DOWNTIME)
        .order_by("pk")
    )
    found = _resolve(searches, house_rules=cycle.chronicle.house_rules, now=now)
    return {
        "searches": len(searches),
        "unlinked": sum(1 for s in searches if s.target_id is None),
        "found": found,
    }


@dataclass(frozen=True)
class SearchRuling:
    """A storyteller's ruling on one resolved search result: found or not, and why."""

    found: bool
    note: str


@transaction.atomic
def search_results_override(
    *,
    cycle: Cycle,
    rulings: Mapping[tuple[int, int], SearchRuling],
    now: dt.datetime | None = None,
) -> int:
    """HAV-25b: the storytellers' rulings on this cycle's resolved downtime search results,
    (search id, structure id) → found or not, applied by the release before the results reach
    the searchers (the pipeline's "found" overrides; its caller checked the storytellers).

    Ruled found, the searchers get a find of the structure exactly as a found result gives one
    (linked to the result, so this downtime's mobile move spares it; a searcher who already
    knows the place keeps their earlier find), unless the structure no longer stands. Ruled not
    found, the finds the result gave are deleted: no player has seen them, since results are
    released only after this. A result already released, or one ruled as it already is, is left
    alone. Returns how many results changed. A fixed number of queries."""
    now = now or timezone.now()
    if not rulings:
        return 0
    results = [
        r
        for r in SearchResult.objects.select_for_update(of=("self",))
        .filter(
            search__cycle=cycle,
            search__moment=SearchMoment.DOWNTIME,
            search__status=SearchStatus.RESOLVED,
            search__released_at__isnull=True,
            search_id__in=sorted({s for s, _ in rulings}),
            structure_id__in=sorted({t for _, t in rulings}),
        )
        .select_related("structure")
        .order_by("pk")
        if (r.search_id, r.structure_id) in rulings
        and rulings[(r.search_id, r.structure_id)].found != r.found
    ]
    if not results:
        return 0
    for result in results:
        ruling = rulings[(result.search_id, result.structure_id)]
        verdict = "found" if ruling.found else "not found"
        result.found = ruling.found
        result.explanation = (
            f"{result.explanation}; a storyteller ruled it {verdict}: {ruling.note}"
        )[:300]
    SearchResult.objects.bulk_update(results, ["found", "explanation"])
    now_found = [r for r in results if r.found and r.structure.status == StructureStatus.STANDING]
    not_found = [r.pk for r in results if not r.found]
    if not_found:
        Find.objects.filter(result_id__in=not_found).delete()
    if now_found:
        searchers: dict[int, list[int]] = defaultdict(list)
        for search_id, character_id in Searcher.objects.filter(
            search_id__in={r.search_id for r in now_found}
        ).values_list("search_id", "character_id"):
            searchers[search_id].append(character_id)
        Find.objects.bulk_create(
            [
                Find(
                    structure_id=r.structure_id,
                    character_id=character_id,
                    result=r,
                    cycle=cycle,
                    found_at=now,
                )
                for r in now_found
                for character_id in searchers[r.search_id]
            ],
            ignore_conflicts=True,
        )
    return len(results)


@transaction.atomic
def search_results_release(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-25b: downtime results reach the searchers at the next game; the cycle's influence
    attacks' outcomes reach their attackers with them (HAV-25c). Releasing twice changes
    nothing."""
    now = now or timezone.now()
    searches = Search.objects.filter(
        cycle=cycle, status=SearchStatus.RESOLVED, released_at__isnull=True
    ).update(released_at=now)
    attacks = InfluenceAttack.objects.filter(
        cycle=cycle, status=AttackStatus.RESOLVED, released_at__isnull=True
    ).update(released_at=now)
    return {"searches": searches, "attacks": attacks}


@transaction.atomic
def mobile_havens_move(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-25b (DT-10 "mobile havens move", before searches): every downtime a mobile haven
    moves for free and whoever found it loses it, including finds made at this cycle's game
    (those could be used at that game only). Spared: finds by this downtime's own searches
    (they run after the move, so a re-run of the step must not clear them) and finds of later
    cycles (made after the move, when an old cycle's step is run late)."""
    now = now or timezone.now()
    stale = (
        Find.objects.filter(structure__chronicle_id=cycle.chronicle_id, cleared_at__isnull=True)
        .exclude(cycle=cycle, result__search__moment=SearchMoment.DOWNTIME)
        .exclude(cycle__deadline_at__gt=cycle.deadline_at)
    )
    structure_ids = set(stale.values_list("structure_id", flat=True))
    structures = Structure.objects.filter(pk__in=structure_ids).only("pk", "outer_id")
    mobile = selectors.mobile_structures(structures, house_rules=cycle.chronicle.house_rules)
    moved = [pk for pk, is_mobile in mobile.items() if is_mobile]
    cleared = stale.filter(structure_id__in=moved).update(cleared_at=now) if moved else 0
    return {"moved": len(moved), "finds_cleared": cleared}


# --- Influence attacks (HAV-25c) ---------------------------------------------------------------


def _current_find(attacker: Character, structure_id: int) -> Find | None:
    """The attacker's current find of a standing structure, on the condition
    `access.finds_visible_to` shows it: a downtime search's find only once released (HAV-25b).
    Before that the attacker must not learn what the search found, so an unreleased find is
    no find at all."""
    return (
        Find.objects.filter(
            Q(result__isnull=True) | Q(result__search__released_at__isnull=False),
            character=attacker,
            structure_id=structure_id,
            cleared_at__isnull=True,
            structure__status=StructureStatus.STANDING,
        )
        .select_related("result__search")
        .first()
    )


@transaction.atomic
def influence_attack_submit(
    *,
    attacker: Character,
    structure: Structure | int,
    influence: str,
    points: int,
    by: User,
    key: str,
    now: dt.datetime | None = None,
) -> InfluenceAttack:
    """HAV-25c: a downtime influence attack on a haven the attacker found. The find must be
    current and released (HAV-25b); setting `attack_needs_earlier_find`: made before this
    submission. Mobile havens are immune. A haven not found, or found by a search whose
    results are not yet released, is refused exactly like an unknown one (HAV-04)."""
    now = now or timezone.now()
    _require_player(by, attacker)
    _require_active(attacker, "HAV-25c")
    structure_id = structure if isinstance(structure, int) else structure.pk
    find = _current_find(attacker, structure_id)
    if find is None:
        raise ValidationError({"structure": UNKNOWN_HAVEN})
    target = Structure.objects.get(pk=structure_id)
    house = attacker.chronicle.house_rules
    mobile = selectors.mobile_structures([target], house_rules=house)[target.pk]
    try:
        rules.check_influence_attack_target(
            mobile=mobile,
            found_before_submission=find.found_at <= now,
            **settings_for(rules.check_influence_attack_target, house),
        )
    except ValueError as exc:
        raise refusal(exc, "structure") from None
    cycle = _current_cycle(attacker.chronicle_id)
    spend, created = influence_spend(
        character=attacker,
        cycle=cycle,
        influence=influence,
        points=points,
        reason="Influence attack on a haven",
        key=f"haven-attack:{key}",
        actor=by,
        now=now,
    )
    if not created:
        attack = InfluenceAttack.objects.filter(spend=spend).first()
        if attack is None:
            raise ValidationError("That attack request was withdrawn; file a new one (HAV-25c).")
        return attack
    return InfluenceAttack.objects.create(
        cycle=cycle,
        attacker=attacker,
        structure=target,
        influence=influence,
        points=points,
        spend=spend,
        created_at=now,
    )


@transaction.atomic
def influence_attack_withdraw(
    *, attack: InfluenceAttack, by: User, now: dt.datetime | None = None
) -> InfluenceAttack:
    """HAV-25c: withdraw an attack before resolution, refunding its influence; twice is once.
    Only while its downtime is open (DT-01)."""
    now = now or timezone.now()
    attack = (
        # The cycle is read, not locked: withdrawals of one downtime don't queue on it.
        InfluenceAttack.objects.select_for_update(of=("self", "attacker", "spend"))
        .select_related("attacker", "spend", "cycle")
        .get(pk=attack.pk)
    )
    _require_player(by, attack.attacker)
    if attack.status == AttackStatus.WITHDRAWN:
        return attack
    if attack.status != AttackStatus.SUBMITTED:
        raise ValidationError("This attack is already resolved; it cannot be withdrawn (HAV-25c).")
    if attack.cycle.status != CycleStatus.OPEN:
        raise ValidationError(CLOSED_CYCLE)
    influence_refund(spend=attack.spend, reason="Withdrew an influence attack", actor=by, now=now)
    attack.status = AttackStatus.WITHDRAWN
    attack.save(update_fields=["status"])
    return attack


def attack_outcome_for_attacker(attack: InfluenceAttack) -> str:
    """HAV-25c: what an attacker learns once the outcome is released: whether the haven fell,
    never its resistance (HAV-04)."""
    if attack.status == AttackStatus.WITHDRAWN:
        return "Withdrawn; the influence was given back."
    if attack.released_at is None:
        return "The outcome comes at the next game."
    if attack.destroyed:
        return "The haven was destroyed."
    return "The haven still stands."


def _resistance(attributes: Iterable[Attribute]) -> int:
    return sum(
        a.quantity
        for a in attributes
        if a.kind == "influence_resistance" and a.state == AttributeState.ACTIVE
    )


def influence_attack_preview(
    attacks: Sequence[InfluenceAttack], *, house_rules: HouseRules
) -> dict[int, str]:
    """The desk's arithmetic for submitted attacks, in order per structure, writing nothing
    (HAV-25c)."""
    structure_ids = {a.structure_id for a in attacks}
    attributes = selectors.built_attributes(structure_ids)
    left = {pk: _resistance(attributes[pk]) for pk in structure_ids}
    lines: dict[int, str] = {}
    for attack in sorted(attacks, key=lambda a: (a.created_at, a.pk)):
        before = left[attack.structure_id]
        if before < 0:
            lines[attack.pk] = "the haven would already be destroyed"
            continue
        after, destroyed = rules.influence_attack(resistance=before, spent=attack.points)
        left[attack.structure_id] = -1 if destroyed else after
        lines[attack.pk] = f"{attack.points} influence against {before} resistance: " + (
            "would destroy the haven" if destroyed else f"{after} left"
        )
    return lines


@transaction.atomic
def influence_attacks_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-25c (DT-10 "influence attacks"): each submitted attack of the cycle, oldest first
    per structure, permanently removes its points of influence resistance; below zero the
    haven is destroyed, with the crypts inside it (they stand within it), and every find of
    them is cleared. A mobile haven is immune. Idempotent: resolved attacks are skipped."""
    now = now or timezone.now()
    attacks = list(
        InfluenceAttack.objects.select_for_update()
        .filter(cycle=cycle, status=AttackStatus.SUBMITTED)
        .order_by("created_at", "pk")
    )
    if not attacks:
        return {"attacks": 0, "destroyed": 0}
    structure_ids = sorted({a.structure_id for a in attacks})
    structures = {
        s.pk: s for s in Structure.objects.select_for_update().filter(pk__in=structure_ids)
    }
    resistance_rows = {
        a.structure_id: a
        for a in Attribute.objects.select_for_update().filter(
            structure_id__in=structure_ids,
            kind="influence_resistance",
            state=AttributeState.ACTIVE,
        )
    }
    mobile = selectors.mobile_structures(
        structures.values(), house_rules=cycle.chronicle.house_rules
    )
    left = {pk: (r.quantity if (r := resistance_rows.get(pk)) else 0) for pk in structure_ids}
    destroyed: set[int] = set()
    for attack in attacks:
        structure = structures[attack.structure_id]
        before = left[structure.pk]
        attack.status = AttackStatus.RESOLVED
        attack.resolved_at = now
        attack.resistance_before = before
        if structure.status != StructureStatus.STANDING or structure.pk in destroyed:
            attack.resistance_after, attack.destroyed = 0, False
            attack.explanation = (
                "The haven was already destroyed; the attack did nothing (HAV-25c)."
            )
            continue
        if mobile[structure.pk]:
            attack.resistance_after, attack.destroyed = before, False
            attack.explanation = "A mobile haven is immune to influence attacks (HAV-25c)."
            continue
        after, gone = rules.influence_attack(resistance=before, spent=attack.points)
        left[structure.pk] = after
        attack.resistance_after, attack.destroyed = after, gone
        if gone:
            destroyed.add(structure.pk)
            attack.explanation = (
                f"{attack.points} influence against {before} resistance: below zero, the haven "
                "is destroyed, and any crypt inside it with it (HAV-25c)."
            )
        else:
            attack.explanation = (
                f"{attack.points} influence against {before} resistance: {after} left, the "
                "haven stands (HAV-25c)."
            )
    InfluenceAttack.objects.bulk_update(
        attacks,
        [
            "status",
            "resolved_at",
            "resistance_before",
            "resistance_after",
            "destroyed",
            "explanation",
        ],
    )
    changed = [
        row for pk, row in resistance_rows.items() if row.quantity != left[pk] and pk in left
    ]
    for row in changed:
        row.quantity = left[row.structure_id]
    if changed:
        Attribute.objects.bulk_update(changed, ["quantity"])
    if destroyed:
        _destroy_havens(destroyed, cycle=cycle, now=now)
    return {"attacks": len(attacks), "destroyed": len(destroyed)}


def _destroy_havens(destroyed: set[int], *, cycle: Cycle, now: dt.datetime) -> None:
    """HAV-25c: like every other destruction, the havens and the crypts inside them end their
    current ownerships and void their pending ownership changes; every find of them is
    cleared (by `destroy_structures`). Set-based: a fixed number of statements."""
    destroy_structures(
        destroyed,
        how=DestroyedBy.INFLUENCE_ATTACK,
        note="Influence resistance fell below zero (HAV-25c).",
        cycle=cycle,
        now=now,
    )
    crypts = list(
        Structure.objects.filter(outer_id__in=destroyed)
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", flat=True)
    )
    destroy_structures(
        crypts,
        how=DestroyedBy.OUTER_DESTROYED,
        note="Its outer haven was destroyed by an influence attack (HAV-25c).",
        cycle=cycle,
        now=now,
    )
    gone = [*destroyed, *crypts]
    OwnershipChange.objects.filter(structure_id__in=gone, status=ChangeStatus.PENDING).update(
        status=ChangeStatus.VOID, outcome="The haven no longer stands.", applied_at=now
    )


# --- Reinforcement attacks and alarms (HAV-26, HAV-10) -----------------------------------------


@dataclass(frozen=True)
class AttackerEntry:
    """One attacker of a reinforcement attack: a character (or None for an NPC named in
    words), and their Potence level 0 (none) .. 5 (3a)."""

    character: Character | None
    name: str
    potence: int


def _reinforcement(structure: Structure | int) -> int:
    return sum(
        Attribute.objects.filter(
            structure=structure, kind="reinforcement", state=AttributeState.ACTIVE
        ).values_list("quantity", flat=True)
    )


def _bid(potence_levels: Sequence[int], house_rules: HouseRules) -> int:
    try:
        return rules.reinforcement_attack_bid(
            list(potence_levels), potence_zero_adds=int(house_rules.no_potence_attacker_adds)
        )
    except ValueError as exc:
        raise refusal(exc, "attackers") from None


def reinforcement_attack_preview(
    *, structure: Structure, potence_levels: Sequence[int], house_rules: HouseRules
) -> dict[str, Any]:
    """HAV-26, writing nothing: the attackers' bid, the structure's reinforcement now, the
    influences (and points) it would need to win ties, who wins ties, and the TST-01 class.
    3a + 2a + 2a bids 99; holding on ties takes 10 influences, 100 points."""
    bid = _bid(potence_levels, house_rules)
    reinforcement = _reinforcement(structure)
    influences = rules.min_influences_to_win_ties(bid)
    high, low = max(bid, reinforcement), min(bid, reinforcement)
    return {
        "bid": bid,
        "reinforcement": reinforcement,
        "influences_to_hold": influences,
        "points_to_hold": influences * rules.REINFORCEMENT_POINTS_PER_INFLUENCE,
        "tie_winner": rules.reinforcement_tie_winner(reinforcement=reinforcement, attack_bid=bid),
        "ratio_class": ratio_class(high, low, **settings_for(ratio_class, house_rules)),
        "any_potence_3a": any(level == rules.MAX_LEVEL for level in potence_levels),
    }


def _alarm_mail(structure: Structure, firings: Sequence[AlarmFiring], *, now: dt.datetime) -> int:
    """HAV-10: each owner's player hears of each firing once (keyed per firing and owner)."""
    owners = selectors.current_owners([structure])[structure.pk]
    sent = 0
    for firing in firings:
        for owner in owners:
            sent += notify(
                character=owner,
                key=f"alarm-firing:{firing.pk}:{owner.pk}",
                subject=f"An alarm went off at {structure.name}",
                body=(
                    f"An alarm of {structure.name} ({firing.alarm.get_effect_display()}) went off: "
                    f"{firing.get_cause_display().lower()}."
                ),
                now=now,
            )
    return sent


def _fire(
    structure: Structure,
    causes: Sequence[str],
    *,
    game: Game,
    attack: ReinforcementAttack | None,
    note: str,
    now: dt.datetime,
    key: str = "",
) -> list[AlarmFiring]:
    alarms = Attribute.objects.filter(
        structure=structure, kind="alarm", state=AttributeState.ACTIVE, trigger__in=list(causes)
    ).order_by("pk")
    firings = AlarmFiring.objects.bulk_create(
        [
            AlarmFiring(
                alarm=alarm,
                game=game,
                cause=alarm.trigger,
                reinforcement_attack=attack,
                note=note[:300],
                fired_at=now,
                key=key,
            )
            for alarm in alarms
        ]
    )
    _alarm_mail(structure, firings, now=now)
    return firings


@transaction.atomic
def reinforcement_attack_record(
    *,
    structure: Structure,
    game: Game,
    attackers: Sequence[AttackerEntry],
    results: Sequence[bool],
    by: User,
    key: str,
    note: str = "",
    now: dt.datetime | None = None,
) -> ReinforcementAttack:
    """HAV-26, recorded by an ST at a game: the bid, the reinforcement then, each 5-minute
    test's result (oldest first, True when the attackers won). Winning once penetrates; with an
    attacker at Potence 3a it is breached after `potence_3a_breach_after_tests` failed tests.
    Penetration breaches the reinforcement (repair, HAV-24). Alarms set off by attack fire;
    those set off by penetration fire when it is penetrated (HAV-10). Keyed."""
    now = now or timezone.now()
    _require_staff(by, structure.chronicle_id)
    structure = Structure.objects.select_for_update().get(pk=structure.pk)
    existing = ReinforcementAttack.objects.filter(key=key).first()
    if existing is not None:
        return existing
    if structure.status != StructureStatus.STANDING:
        raise ValidationError({"structure": "Only a standing structure can be attacked (HAV-26)."})
    if game.chronicle_id != structure.chronicle_id:
        raise ValidationError({"game": "Pick a game of this chronicle."})
    if not attackers:
        raise ValidationError({"attackers": "Give at least one attacker (HAV-26)."})
    house = structure.chronicle.house_rules
    levels = [a.potence for a in attackers]
    bid = _bid(levels, house)
    try:
        penetrated = rules.structure_breached(
            list(results),
            any_attacker_has_potence_3a=any(level == rules.MAX_LEVEL for level in levels),
            **settings_for(rules.structure_breached, house),
        )
    except ValueError as exc:
        raise refusal(exc, "results") from None
    attack = ReinforcementAttack.objects.create(
        structure=structure,
        game=game,
        attackers=[
            {
                "character": a.character.pk if a.character else None,
                "name": a.name or (a.character.name if a.character else ""),
                "potence": a.potence,
            }
            for a in attackers
        ],
        bid=bid,
        reinforcement=_reinforcement(structure),
        results=list(results),
        penetrated=penetrated,
        note=note,
        recorded_by=by,
        recorded_at=now,
        key=key,
    )
    if penetrated:
        Attribute.objects.filter(
            structure=structure, kind="reinforcement", state=AttributeState.ACTIVE
        ).update(state=AttributeState.BREACHED)
    causes = [AlarmTrigger.ATTACK] + ([AlarmTrigger.PENETRATION] if penetrated else [])
    _fire(structure, causes, game=game, attack=attack, note=f"Attack at {game}", now=now)
    return attack


LOCK_OUTCOMES: tuple[str, ...] = ("bypass", "destroy")
# A two-way lock that keeps people out; a bypassed one stays so (HAV-16), only LockTest says so.
WORKING_LOCK: tuple[str, ...] = (AttributeState.ACTIVE,)


@transaction.atomic
def lock_test_record(
    *,
    lock: Attribute,
    game: Game,
    attacker_won: bool,
    outcome: str | None,
    by: User,
    key: str,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """HAV-16, recorded by an ST: one static test against a two-way lock (the attacker wins
    ties; the app records the result). A failed opening fires the alarms set off by failed
    locks. A beaten lock is bypassed or destroyed: a destroyed one lets anyone in until it is
    repaired (HAV-24); a bypassed one stays intact and working (`rules.needs_repair`), so the
    bypass lives only in the LockTest row and the lock can be tested again. Once every working
    two-way lock of the structure is beaten at this game (destroyed, or bypassed in a test of
    this game) it is penetrated and its penetration alarms fire, once per game (HAV-10).
    Keyed: a second call with the same key does nothing."""
    now = now or timezone.now()
    structure = Structure.objects.select_for_update().get(pk=lock.structure_id)
    _require_staff(by, structure.chronicle_id)
    lock = Attribute.objects.select_for_update().get(pk=lock.pk)
    earlier = LockTest.objects.filter(key=key).first()
    if earlier is not None:
        return {"fired": 0, "penetrated": earlier.penetrated, "repeat": True}
    if lock.kind != "two_way_lock":
        raise ValidationError({"lock": "Only a two-way lock is tested (HAV-16)."})
    if game.chronicle_id != structure.chronicle_id:
        raise ValidationError({"game": "Pick a game of this chronicle."})
    if lock.state not in WORKING_LOCK:
        raise ValidationError({"lock": "This lock is not working; it needs no test (HAV-16)."})
    fired: list[AlarmFiring] = []
    penetrated = False
    if not attacker_won:
        fired = _fire(
            structure,
            [AlarmTrigger.FAILED_LOCK],
            game=game,
            attack=None,
            note=f"Failed opening at {game}",
            now=now,
            key=key,
        )
    else:
        if outcome not in LOCK_OUTCOMES:
            raise ValidationError(
                {"outcome": "The attacker chooses to bypass or destroy the lock (HAV-16)."}
            )
        if outcome == "destroy":
            lock.state = AttributeState.DESTROYED
            lock.save(update_fields=["state"])
        tests_here = LockTest.objects.filter(lock__structure=structure, game=game)
        penetrated = (
            not Attribute.objects.filter(
                structure=structure, kind="two_way_lock", state__in=WORKING_LOCK
            )
            .exclude(pk=lock.pk)
            .exclude(pk__in=tests_here.filter(attacker_won=True).values("lock_id"))
            .exists()
        )
        if penetrated and not tests_here.filter(penetrated=True).exists():
            fired = _fire(
                structure,
                [AlarmTrigger.PENETRATION],
                game=game,
                attack=None,
                note=f"Every two-way lock beaten at {game}",
                now=now,
                key=key,
            )
    LockTest.objects.create(
        lock=lock,
        game=game,
        attacker_won=attacker_won,
        outcome=outcome or "",
        penetrated=penetrated,
        recorded_by=by,
        recorded_at=now,
        key=key,
    )
    return {"fired": len(fired), "penetrated": penetrated, "repeat": False}


def alarm_firings_of(attack: ReinforcementAttack) -> list[AlarmFiring]:
    return list(AlarmFiring.objects.filter(reinforcement_attack=attack).select_related("alarm"))


# --- Objects hidden on site (HID-01, HID-02) ---------------------------------------------------


@transaction.atomic
def hidden_object_register(
    *,
    chronicle: Chronicle,
    hider: Character,
    description: str,
    place: str,
    obfuscate_bid: int,
    number: int,
    by: User,
    game: Game | None = None,
    key: str = "",
    now: dt.datetime | None = None,
) -> HiddenObject:
    """HID-01: register an object hidden on site: flavour, the hider's Obfuscate bid and a
    number 1..10 (at the influence desk: staff). `key` (the form's token) makes a double
    submit register one object."""
    now = now or timezone.now()
    _require_staff(by, chronicle)
    key = _short_key(key)
    if key:
        # Two racing submits of one form queue on the hider's row; the second finds the first.
        Character.objects.select_for_update().filter(pk=hider.pk).values_list("pk").first()
        earlier = HiddenObject.objects.filter(chronicle=chronicle, key=key).first()
        if earlier is not None:
            return earlier
    if hider.chronicle_id != chronicle.pk or (game and game.chronicle_id != chronicle.pk):
        raise ValidationError("Pick a character and a game of this chronicle.")
    if not (description or "").strip():
        raise ValidationError({"description": "Describe the object (HID-01)."})
    try:
        rules.check_hidden_object_registration(obfuscate_bid=obfuscate_bid, number=number)
    except ValueError as exc:
        field = "number" if "number" in str(exc) else "obfuscate_bid"
        raise refusal(exc, field) from None
    return HiddenObject.objects.create(
        chronicle=chronicle,
        game=game,
        hider=hider,
        description=description.strip()[:300],
        place=(place or "").strip()[:300],
        obfuscate_bid=obfuscate_bid,
        number=number,
        registered_by=by,
        registered_at=now,
        key=key,
    )


@transaction.atomic
def hidden_object_remove(
    *, obj: HiddenObject, by: User, now: dt.datetime | None = None
) -> HiddenObject:
    """The hider takes the object back (or an ST clears it); removing twice is once."""
    now = now or timezone.now()
    _require_staff(by, obj.chronicle_id)
    HiddenObject.objects.filter(pk=obj.pk, removed_at__isnull=True).update(removed_at=now)
    obj.refresh_from_db()
    return obj


def auspex_level(character: Character) -> int:
    return max(
        DisciplineLevel.objects.filter(character=character, discipline="auspex").values_list(
            "level", flat=True
        ),
        default=0,
    )


def _investigate(character: Character) -> int:
    abilities = character.abilities or {}
    value = abilities.get("investigation", 0) or abilities.get("investigate", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@transaction.atomic
def hidden_object_search(
    *,
    searcher: Character,
    number: int,
    by: User,
    key: str,
    game: Game | None = None,
    won: Mapping[int, bool] | None = None,
    now: dt.datetime | None = None,
) -> HiddenObjectSearch:
    """HID-02: an Auspex search of one number. The first call lists each registered object
    still hidden under it, with both bids and the TST-01 class; a later call with the same
    `key` and `won` (object id → the searcher won its test) records the tests, and a win
    reveals the object. Recording the same wins twice changes nothing."""
    now = now or timezone.now()
    chronicle_id = searcher.chronicle_id
    _require_staff(by, chronicle_id)
    key = _short_key(key)
    # A double submit races here: both requests would miss the key and the second would fail
    # on the unique (chronicle, key). The searcher's row queues the second behind the first.
    Character.objects.select_for_update().filter(pk=searcher.pk).values_list("pk").first()
    record = (
        HiddenObjectSearch.objects.select_for_update()
        .filter(chronicle_id=chronicle_id, key=key)
        .first()
    )
    if record is None:
        level = auspex_level(searcher)
        try:
            rules.check_hidden_object_search(auspex_level=level, number=number)
        except ValueError as exc:
            raise refusal(exc, "searcher" if "Auspex" in str(exc) else "number") from None
        bid = rules.hidden_object_search_bid(
            mental_traits=searcher.mental, investigate=_investigate(searcher), auspex_level=level
        )
        house = searcher.chronicle.house_rules
        objects = HiddenObject.objects.filter(
            chronicle_id=chronicle_id, number=number, found_by__isnull=True, removed_at__isnull=True
        ).order_by("registered_at", "pk")
        results = []
        for obj in objects:
            high, low = max(bid, obj.obfuscate_bid), min(bid, obj.obfuscate_bid)
            results.append(
                {
                    "object": obj.pk,
                    "obfuscate_bid": obj.obfuscate_bid,
                    "class": ratio_class(high, low, **settings_for(ratio_class, house)),
                    "higher": (
                        "even"
                        if bid == obj.obfuscate_bid
                        else "searcher"
                        if bid > obj.obfuscate_bid
                        else "hider"
                    ),
                    "won": None,
                }
            )
        record = HiddenObjectSearch.objects.create(
            chronicle_id=chronicle_id,
            game=game,
            searcher=searcher,
            number=number,
            bid=bid,
            results=results,
            recorded_by=by,
            recorded_at=now,
            key=key,
        )
    if won:
        wins: list[int] = []
        for row in record.results:
            if row["won"] is None and row["object"] in won:
                row["won"] = bool(won[row["object"]])
                if row["won"]:
                    wins.append(row["object"])
        record.save(update_fields=["results"])
        if wins:
            HiddenObject.objects.filter(
                pk__in=wins, found_by__isnull=True, removed_at__isnull=True
            ).update(found_by=record.searcher_id, found_at=now)
    return record
