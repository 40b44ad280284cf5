"""HID-01 / HID-02 through the services: registering, the Auspex search and its tests."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from havens.models import HiddenObject, HiddenObjectSearch
from havens.services import searches as svc
from tests.havens.test_search_services import race

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(world: Any, make_character: Any, make_npc: Any) -> dict[str, Any]:
    hider = make_npc("Shade")
    seer = make_character("Lucien", player="player_alice", disciplines={"auspex": "2a"}, mental=7)
    weak = make_character("Marta", player="player_bob", disciplines={"auspex": "1b"})
    st = world.users["storyteller"]
    objects = [
        svc.hidden_object_register(
            chronicle=world.chronicle,
            hider=hider,
            description=f"Dagger {bid}",
            place="behind the bar",
            obfuscate_bid=bid,
            number=4,
            by=st,
        )
        for bid in (5, 12, 60)
    ]
    return {"world": world, "seer": seer, "weak": weak, "st": st, "objects": objects}


def test_register_refusals(setup: dict[str, Any]) -> None:
    world = setup["world"]
    with pytest.raises(ValidationError) as exc:
        svc.hidden_object_register(
            chronicle=world.chronicle,
            hider=setup["seer"],
            description="x",
            place="",
            obfuscate_bid=3,
            number=11,
            by=setup["st"],
        )
    assert "HID-01" in exc.value.message_dict["number"][0]
    with pytest.raises(PermissionDenied):
        svc.hidden_object_register(
            chronicle=world.chronicle,
            hider=setup["seer"],
            description="x",
            place="",
            obfuscate_bid=3,
            number=1,
            by=world.users["player_alice"],
        )


def test_auspex_1b_refused(setup: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as exc:
        svc.hidden_object_search(searcher=setup["weak"], number=4, by=setup["st"], key="h1")
    assert "HID-02" in exc.value.message_dict["searcher"][0]
    assert not HiddenObjectSearch.objects.exists()


def test_number_11_refused(setup: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as exc:
        svc.hidden_object_search(searcher=setup["seer"], number=11, by=setup["st"], key="h1")
    assert "number" in exc.value.message_dict


def test_search_lists_tests_then_records_wins(setup: dict[str, Any]) -> None:
    # Bid: mental 7 + investigation 2 + Auspex 2a (3) = 12.
    record = svc.hidden_object_search(searcher=setup["seer"], number=4, by=setup["st"], key="h1")
    assert record.bid == 12
    rows = {row["obfuscate_bid"]: row for row in record.results}
    assert rows[5]["class"] == "wins_ties_retest" and rows[5]["higher"] == "searcher"
    assert rows[12]["class"] == "even" and rows[12]["higher"] == "even"
    assert rows[60]["class"] == "automatic" and rows[60]["higher"] == "hider"
    dagger5, dagger12, _ = setup["objects"]
    won = {dagger5.pk: True, dagger12.pk: False}
    svc.hidden_object_search(searcher=setup["seer"], number=4, by=setup["st"], key="h1", won=won)
    again = svc.hidden_object_search(
        searcher=setup["seer"], number=4, by=setup["st"], key="h1", won={dagger5.pk: False}
    )
    assert HiddenObjectSearch.objects.count() == 1
    assert {r["object"]: r["won"] for r in again.results}[dagger5.pk] is True
    dagger5.refresh_from_db()
    dagger12.refresh_from_db()
    assert dagger5.found_by == setup["seer"] and dagger12.found_by is None
    # A found object is no longer tested.
    later = svc.hidden_object_search(searcher=setup["seer"], number=4, by=setup["st"], key="h2")
    assert len(later.results) == 2


def test_remove(setup: dict[str, Any]) -> None:
    obj = setup["objects"][0]
    svc.hidden_object_remove(obj=obj, by=setup["st"])
    first = HiddenObject.objects.get(pk=obj.pk).removed_at
    svc.hidden_object_remove(obj=obj, by=setup["st"])
    assert HiddenObject.objects.get(pk=obj.pk).removed_at == first


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_auspex_search_double_submit_racing_gives_one_record(
    postgres: None, world: Any, make_character: Any
) -> None:
    """HID-02 (review I4): two racing submits of one search form: one record, no 500."""
    st = world.users["storyteller"]
    seer = make_character("Seer", player="player_alice", disciplines={"auspex": "2a"})
    svc.hidden_object_register(
        chronicle=world.chronicle,
        hider=seer,
        description="ring",
        place="",
        obfuscate_bid=3,
        number=4,
        by=st,
    )

    def search() -> HiddenObjectSearch:
        return svc.hidden_object_search(searcher=seer, number=4, by=st, key="page:same")

    out = race(search, search)
    assert isinstance(out["a"], HiddenObjectSearch), out
    assert isinstance(out["b"], HiddenObjectSearch), out
    assert out["a"].pk == out["b"].pk
    assert HiddenObjectSearch.objects.count() == 1


def test_auspex_search_keys_are_per_chronicle(setup: dict[str, Any], make_character: Any) -> None:
    """HID-02: the same key in another chronicle is another search, never this one's."""
    world = setup["world"]
    theirs = make_character(
        "Seer abroad", player=None, chronicle=world.other, disciplines={"auspex": "2a"}
    )
    mine = svc.hidden_object_search(searcher=setup["seer"], number=4, by=setup["st"], key="k")
    other_st = world.users["other_storyteller"]
    abroad = svc.hidden_object_search(searcher=theirs, number=4, by=other_st, key="k")
    assert abroad.pk != mine.pk and abroad.chronicle_id == world.other.pk
    assert abroad.results == []


def test_long_keys_are_hashed_not_cut(setup: dict[str, Any]) -> None:
    """Two different keys longer than the column never become one record."""
    long = "k" * 130
    first = svc.hidden_object_search(
        searcher=setup["seer"], number=4, by=setup["st"], key=long + "1"
    )
    second = svc.hidden_object_search(
        searcher=setup["seer"], number=4, by=setup["st"], key=long + "2"
    )
    assert first.pk != second.pk
    assert len(first.key) <= 120
    again = svc.hidden_object_search(
        searcher=setup["seer"], number=4, by=setup["st"], key=long + "1"
    )
    assert again.pk == first.pk
