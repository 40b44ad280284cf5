"""Haven searches (HAV-25b), their resolution and mobile havens moving."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from characters.models import Character, InfluenceSpend, SpendMoment
from characters.services.influence import influence_refund, influence_spend
from chronicle.models import Cycle, CycleStatus, Game
from chronicle.rules import HouseRules

from ... import rules, selectors, words
from ...models import (
    AttackStatus,
    Find,
    InfluenceAttack,
    Ownership,
    Search,
    Searcher,
    SearchMoment,
    SearchResult,
    SearchStatus,
    Structure,
    StructureStatus,
)
from .common import (
    CLOSED_CYCLE,
    UNKNOWN_CODE,
    _active_target,
    _current_cycle,
    _new_party_code,
    _require_active,
    _require_player,
    _require_staff,
    _target_name,
)

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
        raise ValidationError({"moment": _("Search in downtime or at the game (HAV-25b).")})
    cycle = _current_cycle(character.chronicle_id)
    spend, created = influence_spend(
        character=character,
        cycle=cycle,
        influence=influence,
        points=points,
        reason=words.SPEND_SEARCH % {"name": name},
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
        raise ValidationError(_("That search request was withdrawn; file a new one (HAV-25b)."))
    return searcher.search


@transaction.atomic
def search_target_link(*, search: Search, target: Character, by: User) -> Search:
    """An ST links the target a player named in words (HAV-25b), before resolution."""
    search = Search.objects.select_for_update().select_related("cycle").get(pk=search.pk)
    _require_staff(by, search.cycle.chronicle_id)
    if target.chronicle_id != search.cycle.chronicle_id:
        raise ValidationError({"target": _("Pick a character of this chronicle (HAV-25b).")})
    if search.status != SearchStatus.SUBMITTED:
        raise ValidationError(_("Only a search not yet resolved can be linked (HAV-25b)."))
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
        raise ValidationError({"party_code": _(UNKNOWN_CODE)})
    if search.cycle.status != CycleStatus.OPEN:
        raise ValidationError(
            {
                "party_code": _(
                    "That search's downtime is closed; it can no longer be joined (DT-01)."
                )
            }
        )
    previous = _spend_for_key(character, f"haven-search-join:{key}")
    if previous is not None:
        return _search_of_spend(previous)
    if Searcher.objects.filter(search=search, character=character).exists():
        raise ValidationError(
            {
                "character": _("%(name)s is already in this search (HAV-25b).")
                % {"name": character.name}
            }
        )
    spend, _created = influence_spend(
        character=character,
        cycle=search.cycle,
        influence=influence,
        points=points,
        reason=words.SPEND_SEARCH % {"name": search.target_name},
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
        raise ValidationError(
            _("This search is already resolved; it cannot be withdrawn (HAV-25b).")
        )
    if search.cycle.status != CycleStatus.OPEN:
        raise ValidationError(_(CLOSED_CYCLE))
    influence_refund(spend=searcher.spend, reason=words.REFUND_SEARCH, actor=by, now=now)
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
        """In English, as `SearchResult.explanation` keeps it (`havens.words.translated`)."""
        sentence = words.SEARCH_FOUND if self.found else words.SEARCH_NOT_FOUND
        return sentence % {"spent": self.spent, "hiding_points": self.hiding_points}


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
        (unlinked, words.SEARCH_UNLINKED),
        (homeless, words.SEARCH_HOMELESS),
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
        raise ValidationError({"searchers": _("Name at least one searcher (HAV-25b).")})
    if target.chronicle_id != game.chronicle_id or any(
        c.chronicle_id != game.chronicle_id for c, _points, _influence in searchers
    ):
        raise ValidationError(_("Every character must belong to this chronicle (HAV-25b)."))
    if len({c.pk for c, _points, _influence in searchers}) != len(searchers):
        raise ValidationError({"searchers": _("Name each searcher once (HAV-25b).")})
    cycle = Cycle.objects.filter(game=game).first()
    if cycle is None:
        raise ValidationError({"game": _("That game has no downtime cycle (DT-01).")})
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
        spend, _created = influence_spend(
            character=character,
            cycle=cycle,
            influence=influence,
            points=points,
            reason=words.SPEND_SEARCH_AT_GAME % {"name": target.name, "game": game},
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
    _resolve([search], house_rules=game.chronicle.house_rules_for(game), now=now)
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
    found = _resolve(searches, house_rules=cycle.chronicle.house_rules_for(cycle), now=now)
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
        sentence = words.RULED_FOUND if ruling.found else words.RULED_NOT_FOUND
        result.found = ruling.found
        result.explanation = (sentence % {"explanation": result.explanation, "note": ruling.note})[
            :300
        ]
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
    mobile = selectors.mobile_structures(
        structures, house_rules=cycle.chronicle.house_rules_for(cycle)
    )
    moved = [pk for pk, is_mobile in mobile.items() if is_mobile]
    cleared = stale.filter(structure_id__in=moved).update(cleared_at=now) if moved else 0
    return {"moved": len(moved), "finds_cleared": cleared}
