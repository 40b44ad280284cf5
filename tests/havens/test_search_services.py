"""HAV-25b through the services: searching, joining, withdrawing, at-game searches, mobile
havens moving, releasing; every SPEC example, INF-03 refusals, idempotence."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction

from characters.models import InfluenceSpend
from characters.services.influence import influence_left
from chronicle.models import CycleStatus
from havens import access
from havens.models import Find, Search, Searcher, SearchMoment, SearchResult, SearchStatus
from havens.services import searches as svc

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(world: Any, make_character: Any, make_npc: Any, make_haven: Any) -> dict[str, Any]:
    # Hiding points 20: (mental 7 + influences 3) x 2 (HAV-25 example).
    target = make_npc("Victor Kane", mental=7)
    haven = make_haven(target, name="Kane's loft", location="Warehouse 9")
    alice = make_character("Lucien", player="player_alice", business=25)
    bob = make_character("Marta", player="player_bob", business=25)
    return {"target": target, "haven": haven, "alice": alice, "bob": bob, "world": world}


def _submit(cast: dict[str, Any], who: str, points: int, *, key: str, name: str = "Victor Kane"):
    character = cast[who]
    user = cast["world"].users["player_alice" if who == "alice" else "player_bob"]
    return svc.search_submit(
        character=character,
        target_name=name,
        influence="business",
        points=points,
        by=user,
        key=key,
    )


def _resolve_release(world: Any) -> None:
    svc.searches_resolve(cycle=world.game.cycle)
    svc.search_results_release(cycle=world.game.cycle)


@pytest.mark.parametrize(
    ("points", "found"),
    [
        pytest.param(20, False, id="HAV-25b-20-vs-20-not-found"),
        pytest.param(21, True, id="HAV-25b-21-found"),
    ],
)
def test_single_search(cast: dict[str, Any], points: int, found: bool) -> None:
    search = _submit(cast, "alice", points, key="k1")
    assert search.target == cast["target"]
    summary = svc.searches_resolve(cycle=cast["world"].game.cycle)
    assert summary == {"searches": 1, "unlinked": 0, "found": int(found)}
    result = SearchResult.objects.get(search=search)
    assert result.found is found
    assert result.hiding_points == 20
    assert result.explanation == (
        f"search of {points} influence against 20 hiding points: "
        + ("found" if found else "not found")
    )
    assert Find.objects.filter(character=cast["alice"]).exists() is found


def test_cooperating_12_plus_9_finds(cast: dict[str, Any]) -> None:
    search = _submit(cast, "alice", 12, key="k1")
    joined = svc.search_join(
        party_code=search.party_code,
        character=cast["bob"],
        influence="business",
        points=9,
        by=cast["world"].users["player_bob"],
        key="j1",
    )
    assert joined.pk == search.pk
    svc.searches_resolve(cycle=cast["world"].game.cycle)
    assert SearchResult.objects.get(search=search).found
    assert set(Find.objects.values_list("character_id", flat=True)) == {
        cast["alice"].pk,
        cast["bob"].pk,
    }


def test_not_cooperating_both_fail(cast: dict[str, Any]) -> None:
    _submit(cast, "alice", 12, key="k1")
    _submit(cast, "bob", 9, key="k2")
    summary = svc.searches_resolve(cycle=cast["world"].game.cycle)
    assert summary["found"] == 0
    assert not Find.objects.exists()


def test_unknown_name_gives_the_same_answer_and_finds_nothing(cast: dict[str, Any]) -> None:
    known = _submit(cast, "alice", 3, key="k1", name="  victor KANE ")
    unknown = _submit(cast, "bob", 3, key="k2", name="Nobody At All")
    assert known.status == unknown.status == SearchStatus.SUBMITTED
    assert known.target_name == "victor KANE"
    assert unknown.target is None
    summary = svc.searches_resolve(cycle=cast["world"].game.cycle)
    assert summary["unlinked"] == 1
    assert not SearchResult.objects.filter(search=unknown).exists()
    unknown.refresh_from_db()
    assert unknown.status == SearchStatus.RESOLVED
    assert unknown.explanation == (
        "No target was linked to this search: it found nothing (HAV-25b)."
    )


def test_staff_link_then_resolve(cast: dict[str, Any]) -> None:
    search = _submit(cast, "alice", 21, key="k1", name="The Prince's man")
    with pytest.raises(PermissionDenied):
        svc.search_target_link(
            search=search, target=cast["target"], by=cast["world"].users["player_alice"]
        )
    svc.search_target_link(
        search=search, target=cast["target"], by=cast["world"].users["storyteller"]
    )
    svc.searches_resolve(cycle=cast["world"].game.cycle)
    assert SearchResult.objects.get(search=search).found


def test_inf03_refusal_names_the_field_and_writes_nothing(cast: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as exc:
        _submit(cast, "alice", 26, key="k1")
    assert "points" in exc.value.message_dict
    assert "INF-03" in exc.value.message_dict["points"][0]
    assert not Search.objects.exists()
    assert not InfluenceSpend.objects.exists()


def test_same_key_same_search_one_spend(cast: dict[str, Any]) -> None:
    first = _submit(cast, "alice", 5, key="k1")
    again = _submit(cast, "alice", 5, key="k1")
    assert first.pk == again.pk
    assert InfluenceSpend.objects.count() == 1
    assert len(first.party_code) <= 16


def test_join_refusals_reveal_nothing(cast: dict[str, Any]) -> None:
    search = _submit(cast, "alice", 5, key="k1")
    bob_user = cast["world"].users["player_bob"]
    with pytest.raises(ValidationError) as exc:
        svc.search_join(
            party_code="nope",
            character=cast["bob"],
            influence="business",
            points=1,
            by=bob_user,
            key="j0",
        )
    assert exc.value.message_dict["party_code"] == [svc.UNKNOWN_CODE]
    with pytest.raises(ValidationError) as exc:
        svc.search_join(
            party_code=search.party_code,
            character=cast["alice"],
            influence="business",
            points=1,
            by=cast["world"].users["player_alice"],
            key="j1",
        )
    assert "already in this search" in exc.value.message_dict["character"][0]
    svc.searches_resolve(cycle=cast["world"].game.cycle)
    with pytest.raises(ValidationError) as exc:
        svc.search_join(
            party_code=search.party_code,
            character=cast["bob"],
            influence="business",
            points=1,
            by=bob_user,
            key="j2",
        )
    assert exc.value.message_dict["party_code"] == [svc.UNKNOWN_CODE]


def test_join_after_the_cycle_closed(cast: dict[str, Any]) -> None:
    search = _submit(cast, "alice", 5, key="k1")
    cycle = cast["world"].game.cycle
    cycle.status = CycleStatus.CLOSED
    cycle.closed_at = cycle.deadline_at
    cycle.save()
    with pytest.raises(ValidationError) as exc:
        svc.search_join(
            party_code=search.party_code,
            character=cast["bob"],
            influence="business",
            points=1,
            by=cast["world"].users["player_bob"],
            key="j1",
        )
    assert "closed" in exc.value.message_dict["party_code"][0]
    assert "DT-01" in exc.value.message_dict["party_code"][0]


def test_withdraw_refunds_and_empties(cast: dict[str, Any]) -> None:
    search = _submit(cast, "alice", 5, key="k1")
    cycle = cast["world"].game.cycle
    assert influence_left(character=cast["alice"], cycle=cycle)["business"] == 20
    svc.search_withdraw(
        search=search, character=cast["alice"], by=cast["world"].users["player_alice"]
    )
    svc.search_withdraw(
        search=search, character=cast["alice"], by=cast["world"].users["player_alice"]
    )
    search.refresh_from_db()
    assert search.status == SearchStatus.WITHDRAWN
    assert influence_left(character=cast["alice"], cycle=cycle)["business"] == 25
    assert InfluenceSpend.objects.count() == 2  # the spend and one refund


def test_resolve_twice_same_rows(cast: dict[str, Any]) -> None:
    _submit(cast, "alice", 21, key="k1")
    cycle = cast["world"].game.cycle
    svc.searches_resolve(cycle=cycle)
    again = svc.searches_resolve(cycle=cycle)
    assert again == {"searches": 0, "unlinked": 0, "found": 0}
    assert SearchResult.objects.count() == 1
    assert Find.objects.count() == 1
    assert svc.search_results_release(cycle=cycle)["searches"] == 1
    assert svc.search_results_release(cycle=cycle)["searches"] == 0


def test_finds_visible_only_after_release(cast: dict[str, Any]) -> None:
    from chronicle.models import Membership

    _submit(cast, "alice", 21, key="k1")
    cycle = cast["world"].game.cycle
    membership = Membership.objects.get(
        user=cast["world"].users["player_alice"], chronicle=cast["world"].chronicle
    )
    svc.searches_resolve(cycle=cycle)
    assert not access.finds_visible_to(membership).exists()
    svc.search_results_release(cycle=cycle)
    locations = access.finds_visible_to(membership).values_list("structure__location", flat=True)
    assert list(locations) == ["Warehouse 9"]


def test_crypt_found_through_its_outer_haven(cast: dict[str, Any], make_npc: Any, make_haven: Any):
    # The outer haven's owner hides it with 40 (mental 10 + 10 influences) x 2; the target's
    # own numbers would give only 20.
    landlord = make_npc("Landlord", mental=10, business=8)
    outer = make_haven(landlord, name="Chantry", location="Chantry cellar")
    crypt = make_haven(
        cast["target"], name="Kane's crypt", location="Chantry, east vault", outer=outer
    )
    search = _submit(cast, "alice", 25, key="k1")
    svc.searches_resolve(cycle=cast["world"].game.cycle)
    results = {r.structure_id: r for r in SearchResult.objects.filter(search=search)}
    assert results[cast["haven"].pk].found
    assert not results[crypt.pk].found and results[crypt.pk].hiding_points == 40
    # HAV-25b "each haven that character owns, or holds a crypt in": the outer haven too.
    assert not results[outer.pk].found


def test_at_game_search_is_resolved_and_released_at_once(cast: dict[str, Any]) -> None:
    world = cast["world"]
    search = svc.search_at_game_record(
        game=world.game,
        target=cast["target"],
        searchers=[(cast["alice"], "business", 12), (cast["bob"], "business", 9)],
        by=world.users["storyteller"],
        key="g1",
    )
    assert search.status == SearchStatus.RESOLVED and search.released_at is not None
    assert search.moment == "game"
    assert set(InfluenceSpend.objects.values_list("moment", flat=True)) == {"game"}
    again = svc.search_at_game_record(
        game=world.game,
        target=cast["target"],
        searchers=[(cast["alice"], "business", 12), (cast["bob"], "business", 9)],
        by=world.users["storyteller"],
        key="g1",
    )
    assert again.pk == search.pk
    assert Find.objects.count() == 2
    with pytest.raises(PermissionDenied):
        svc.search_at_game_record(
            game=world.game,
            target=cast["target"],
            searchers=[(cast["alice"], "business", 1)],
            by=world.users["player_alice"],
            key="g2",
        )


def _downtime_find(world: Any, structure: Any, character: Any, cycle: Any) -> Find:
    """A find by a resolved downtime search of `cycle` (as `searches_resolve` writes it)."""
    search = Search.objects.create(
        cycle=cycle,
        target_name="Nomad",
        moment=SearchMoment.DOWNTIME,
        party_code=uuid.uuid4().hex[:16],  # the column holds 16; ids grow on a reused DB
        status=SearchStatus.RESOLVED,
        created_by=character,
        created_at=structure.created_at,
        resolved_at=structure.created_at,
    )
    result = SearchResult.objects.create(
        search=search,
        structure=structure,
        spent=1,
        hiding_points=0,
        found=True,
        explanation="found",
        created_at=structure.created_at,
    )
    return Find.objects.create(
        structure=structure,
        character=character,
        result=result,
        cycle=cycle,
        found_at=structure.created_at,
    )


def test_mobile_havens_move_clears_older_and_at_game_finds(
    cast: dict[str, Any], make_character: Any, make_npc: Any, make_haven: Any
) -> None:
    """HAV-25b: every downtime a mobile haven moves and its found status is cleared, finds made
    at that downtime's own game included; only the finds of this downtime's own searches (run
    after the move) and of later cycles stay."""
    from chronicle import services as chronicle_services

    world = cast["world"]
    carla = make_character("Carla", player=None)
    dora = make_character("Dora", player=None)
    wagon = make_haven(make_npc("Nomad"), name="Wagon", attributes={"mobility": 1})
    still = cast["haven"]
    game2 = chronicle_services.game_create(
        chronicle=world.chronicle, date=world.game.date.replace(day=23)
    )
    game3 = chronicle_services.game_create(
        chronicle=world.chronicle, date=world.game.date.replace(month=5)
    )
    old = [
        Find.objects.create(
            structure=s, character=cast["alice"], cycle=world.game.cycle, found_at=s.created_at
        )
        for s in (wagon, still)
    ]
    at_game = Find.objects.create(
        structure=wagon, character=cast["bob"], cycle=game2.cycle, found_at=wagon.created_at
    )
    by_search = _downtime_find(world, wagon, carla, game2.cycle)
    later = Find.objects.create(
        structure=wagon, character=dora, cycle=game3.cycle, found_at=wagon.created_at
    )
    summary = svc.mobile_havens_move(cycle=game2.cycle)
    assert summary == {"moved": 1, "finds_cleared": 2}
    assert svc.mobile_havens_move(cycle=game2.cycle)["finds_cleared"] == 0
    for find in (*old, at_game, by_search, later):
        find.refresh_from_db()
    assert old[0].cleared_at is not None
    assert old[1].cleared_at is None  # not mobile
    assert at_game.cleared_at is not None  # found at game 2, the wagon moved since
    assert by_search.cleared_at is None
    assert later.cleared_at is None


def test_at_game_find_cleared_by_that_cycles_move(
    world: Any, make_character: Any, make_npc: Any, make_haven: Any
) -> None:
    """HAV-25b (review R2): a find made at game G is gone after the downtime after G."""
    owner = make_npc("Nomad", mental=1, business=0, herd=0, occult=0)
    alice = make_character("Lucien", player="player_alice", business=10)
    van = make_haven(owner, name="Van", attributes={"mobility": 1})
    svc.search_at_game_record(
        game=world.game,
        target=owner,
        searchers=[(alice, "business", 9)],
        by=world.users["storyteller"],
        key="g1",
    )
    find = Find.objects.get(character=alice, structure=van)
    assert svc.mobile_havens_move(cycle=world.game.cycle) == {"moved": 1, "finds_cleared": 1}
    find.refresh_from_db()
    assert find.cleared_at is not None


def test_withdraw_refused_once_the_cycle_is_closed(cast: dict[str, Any]) -> None:
    """DT-01 (review I5): after the deadline a search can't be withdrawn; nothing changes."""
    from chronicle import services as chronicle_services

    world = cast["world"]
    search = _submit(cast, "alice", 3, key="k1")
    cycle = world.game.cycle
    chronicle_services.cycle_close(cycle=cycle, by=world.users["storyteller"])
    with pytest.raises(ValidationError) as exc:
        svc.search_withdraw(search=search, character=cast["alice"], by=world.users["player_alice"])
    assert "DT-01" in exc.value.messages[0]
    search.refresh_from_db()
    assert search.status == SearchStatus.SUBMITTED
    assert Searcher.objects.filter(search=search).count() == 1
    assert not InfluenceSpend.objects.filter(points__lt=0).exists()


def test_refusals_cite_their_rule(cast: dict[str, Any]) -> None:
    for name in ("", "x" * (svc.TARGET_NAME_MAX + 1)):
        with pytest.raises(ValidationError) as exc:
            _submit(cast, "alice", 1, key=f"n{len(name)}", name=name)
        assert "HAV-25b" in exc.value.message_dict["target_name"][0]
    search = _submit(cast, "alice", 1, key="k1")
    with pytest.raises(ValidationError) as exc:
        svc.search_join(
            party_code=search.party_code,
            character=cast["alice"],
            influence="business",
            points=1,
            by=cast["world"].users["player_alice"],
            key="j1",
        )
    assert "HAV-25b" in exc.value.message_dict["character"][0]


def test_player_cannot_search_for_someone_elses_character(cast: dict[str, Any]) -> None:
    with pytest.raises(PermissionDenied):
        svc.search_submit(
            character=cast["bob"],
            target_name="Victor Kane",
            influence="business",
            points=1,
            by=cast["world"].users["player_alice"],
            key="x",
        )


def race(first: Callable[[], Any], second: Callable[[], Any]) -> dict[str, Any]:
    """`first` runs in a transaction kept open until `second` has started (and blocks on
    `first`'s locks), then commits: a double click's two requests, in the worst order.
    Returns what each gave or raised."""
    out: dict[str, Any] = {}
    started, release = threading.Event(), threading.Event()

    def a() -> None:
        try:
            with transaction.atomic():
                out["a"] = first()
                started.set()
                release.wait(5)
        except Exception as exc:  # surfaced to the test
            out["a"] = exc
            started.set()
        finally:
            connection.close()

    def b() -> None:
        started.wait(5)
        try:
            out["b"] = second()
        except Exception as exc:  # surfaced to the test
            out["b"] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    started.wait(5)
    time.sleep(0.5)  # let `second` reach the lock `first` holds
    release.set()
    for thread in threads:
        thread.join(10)
    return out


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_at_game_search_double_submit_racing_gives_one_search(
    postgres: None, world: Any, make_character: Any, make_npc: Any
) -> None:
    """HAV-25b (review I3): two racing submits of one at-game form: one search, no 500."""
    target = make_npc("Victor")
    alice = make_character("Lucien", player="player_alice", business=5)

    def record() -> Search:
        return svc.search_at_game_record(
            game=world.game,
            target=target,
            searchers=[(alice, "business", 2)],
            by=world.users["storyteller"],
            key="page:k",
        )

    out = race(record, record)
    assert isinstance(out["a"], Search) and isinstance(out["b"], Search), out
    assert out["a"].pk == out["b"].pk
    assert Search.objects.count() == 1
    assert InfluenceSpend.objects.count() == 1
