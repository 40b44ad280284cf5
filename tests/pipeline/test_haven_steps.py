"""The havens' part of the preview and the release (DT-10; HAV-05/06, HAV-25, HAV-25b, HAV-25c):
`havens_preview` describes what the havens' steps would do and changes nothing; `havens_apply`
does it, with the storytellers' "found" overrides; the pipeline refuses a release whose world
changed since the preview. On PostgreSQL, with time frozen in the downtime (the havens services
read the clock)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import time_machine
from django.apps import apps
from django.core import mail
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from characters.models import Character, InfluenceSpend, Notification
from characters.services.notify import notify
from chronicle.models import Cycle, CycleStatus
from chronicle.services import cycle_close
from downtimes.models import Outcome, OutcomeOverride
from downtimes.services import pipeline
from downtimes.services.haven_steps import havens_apply, havens_preview
from havens.models import (
    Find,
    Project,
    ProjectKind,
    ProjectStatus,
    Search,
    SearchResult,
    Structure,
    StructureStatus,
)
from havens.services import ownership, resolution
from havens.services import searches as svc

from ..downtimes.conftest import DURING
from ..havens import conftest as havens_conftest
from .conftest import AFTER_DEADLINE, Month

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

# The havens' builders (a standing haven, an NPC), shared as fixtures of this module.
make_haven = havens_conftest.make_haven
make_npc = havens_conftest.make_npc

RELEASE = AFTER_DEADLINE + dt.timedelta(days=2)


@pytest.fixture(autouse=True)
def during() -> Iterator[None]:
    with time_machine.travel(DURING, tick=False):
        yield


def havens_digest() -> tuple[str, dict[str, int]]:
    """Every havens table (the M2M ones too), plus the ledgers and e-mails a step could touch,
    row by row: a hash, and each table's row count (so a test can see it hashed something)."""
    models = [
        *apps.get_app_config("havens").get_models(include_auto_created=True),
        InfluenceSpend,
        Notification,
    ]
    h = hashlib.sha256()
    counts = {}
    for model in sorted(models, key=lambda m: m._meta.db_table):
        rows = list(model.objects.order_by("pk").values())
        counts[model._meta.db_table] = len(rows)
        h.update(model._meta.db_table.encode())
        h.update(json.dumps(rows, default=str, sort_keys=True).encode())
    return h.hexdigest(), counts


def by_key(outcomes: list[Outcome]) -> dict[tuple[str, str], Outcome]:
    keyed = {(o.step, o.subject): o for o in outcomes}
    assert len(keyed) == len(outcomes), "two outcomes share a (step, subject) key"
    return keyed


def values(outcomes: list[Outcome]) -> dict[tuple[str, str], Any]:
    return {(o.step, o.subject): o.value for o in outcomes}


# --- A town: one downtime's searches, attacks, a mobile haven and a build -----------------------


@dataclass
class Town:
    world: Any
    cycle: Cycle
    seeker: Character  # Alice's PC, the searcher and attacker
    victor: Character  # Bob's PC: mental 7 + influences 3 → 20 hiding points (HAV-25)
    hunter: Character  # an NPC searcher
    otto: Character  # an NPC owner
    loft: Structure  # Victor's
    cellar: Structure  # Otto's, resistance 3: a 4-point attack destroys it (HAV-25c)
    garret: Structure  # Otto's, resistance 9: a 2-point attack leaves 7
    wagon: Structure  # Otto's, mobile: moves this downtime (HAV-25b)
    s21: Search  # the seeker's, 21 influence
    s20: Search  # the hunter's, 20 influence
    project: Project


@pytest.fixture
def town(world: Any, make_character: Callable[..., Character], make_haven: Any) -> Town:
    alice, st = world.users["player_alice"], world.users["storyteller"]
    cycle = world.game.cycle
    seeker = make_character("Séverine", player="player_alice", business=60)
    victor = make_character("Victor", player="player_bob", mental=7)
    hunter = make_character("Hunter", player=None, underworld=30)
    otto = make_character("Otto", player=None)
    loft = make_haven(victor, name="The Loft", location="Above the gallery")
    cellar = make_haven(
        otto,
        name="The Cellar",
        location="Under the fish market",
        attributes={"influence_resistance": 3},
    )
    garret = make_haven(
        otto, name="The Garret", location="Behind the opera", attributes={"influence_resistance": 9}
    )
    wagon = make_haven(otto, name="The Wagon", location="Fairground", attributes={"mobility": 1})
    earlier = DURING - dt.timedelta(days=1)
    for place in (cellar, garret, wagon):
        Find.objects.create(structure=place, character=seeker, cycle=cycle, found_at=earlier)
    project = Project.objects.create(
        structure=loft,
        kind=ProjectKind.ATTRIBUTE,
        attribute_kind="influence_resistance",
        quantity=3,
        cost=1,
        paid=1,
        status=ProjectStatus.PAID,
        paid_cycle=cycle,
        requested_by=victor,
        created_at=earlier,
    )
    s21 = svc.search_submit(
        character=seeker, target_name="Victor", influence="business", points=21, by=alice, key="s21"
    )
    s20 = svc.search_submit(
        character=hunter, target_name="Victor", influence="underworld", points=20, by=st, key="s20"
    )
    for place, points in ((cellar, 4), (garret, 2)):
        svc.influence_attack_submit(
            attacker=seeker,
            structure=place,
            influence="business",
            points=points,
            by=alice,
            key=f"attack-{place.pk}",
        )
    cycle_close(cycle=cycle, by=st, now=AFTER_DEADLINE)
    cycle.refresh_from_db()
    return Town(
        world=world,
        cycle=cycle,
        seeker=seeker,
        victor=victor,
        hunter=hunter,
        otto=otto,
        loft=loft,
        cellar=cellar,
        garret=garret,
        wagon=wagon,
        s21=s21,
        s20=s20,
        project=project,
    )


def test_preview_describes_every_step_and_changes_nothing(town: Town) -> None:
    before, counts = havens_digest()
    outcomes = havens_preview(cycle=town.cycle, now=AFTER_DEADLINE)
    assert havens_digest() == (before, counts)
    # The digest saw the rows the steps would change.
    assert counts["havens_structure"] == 4 and counts["havens_search"] == 2
    rows = by_key(outcomes)
    loft, cellar, garret, wagon = (p.pk for p in (town.loft, town.cellar, town.garret, town.wagon))
    seeker = town.seeker.pk
    assert {step for step, _ in rows} == {
        "construction",
        "mobile_havens",
        "searches",
        "influence_attacks",
    }
    assert rows["construction", f"project:{town.project.pk}"].value == {
        "status": "done",
        "held_reason": "",
    }
    assert rows["mobile_havens", f"lost:{wagon}:{seeker}"].readers == [seeker]
    assert rows["searches", f"search:{town.s21.pk}:{loft}"].value["found"] is True
    assert rows["influence_attacks", f"haven:{cellar}"].value["status"] == "destroyed"
    assert rows["influence_attacks", f"attacked:{garret}"].value == {
        "resistance_before": 9,
        "resistance_after": 7,
    }
    # Nothing of it happened.
    assert not SearchResult.objects.exists()
    assert Structure.objects.get(pk=cellar).status == StructureStatus.STANDING
    assert Find.objects.filter(structure_id=wagon, cleared_at__isnull=True).exists()


@pytest.mark.parametrize(
    ("search", "spent", "found"),
    [
        pytest.param("s21", 21, True, id="HAV-25b-21-against-20-found"),
        pytest.param("s20", 20, False, id="HAV-25b-tie-not-found"),
    ],
)
def test_search_outcome_with_the_numbers(town: Town, search: str, spent: int, found: bool) -> None:
    """HAV-25: Victor's mental 7 + influences 3 → 20 hiding points; HAV-25b: found only when
    the spend is strictly greater."""
    search_id = getattr(town, search).pk
    rows = by_key(havens_preview(cycle=town.cycle, now=AFTER_DEADLINE))
    outcome = rows["searches", f"search:{search_id}:{town.loft.pk}"]
    verdict = "found" if found else "not found"
    assert f"search of {spent} influence against 20 hiding points: {verdict}" in outcome.explanation
    assert outcome.value["spent"] == spent
    assert outcome.value["hiding_points"] == 20
    assert outcome.value["found"] is found
    assert outcome.overridable == "found"
    # HAV-04/HAV-25b: no line per tested haven reaches the searcher (it would count the
    # target's havens); their one line says where to read the places, nothing more.
    assert outcome.public_text == "" and outcome.readers == []
    summary = rows["searches", f"search:{search_id}"]
    assert summary.public_text and summary.readers
    for secret in ("20", "hiding", "The Loft", "Above the gallery", "Séverine", "Hunter"):
        assert secret not in summary.public_text


def test_apply_gives_the_preview_values_and_does_it(town: Town) -> None:
    previewed = havens_preview(cycle=town.cycle, now=AFTER_DEADLINE)
    applied = havens_apply(cycle=town.cycle, now=RELEASE, overrides={})
    assert values(applied) == values(previewed)
    assert len(applied) == 11
    town.cellar.refresh_from_db()
    assert town.cellar.status == StructureStatus.DESTROYED
    result = SearchResult.objects.get(search=town.s21, structure=town.loft)
    assert result.found is True
    assert Find.objects.get(structure=town.loft, cleared_at__isnull=True).character == town.seeker
    # Released with the results (HAV-25b: at the next game).
    assert set(Search.objects.values_list("released_at", flat=True)) == {RELEASE}
    # The release's comparison runs on values read back from the database.
    stored = [Outcome(step=o.step, subject=o.subject, value=o.value) for o in previewed]
    assert values(stored) == values(applied)


def test_applying_twice_resolves_nothing_more(town: Town) -> None:
    havens_apply(cycle=town.cycle, now=RELEASE, overrides={})
    state = havens_digest()
    again = havens_apply(cycle=town.cycle, now=RELEASE + dt.timedelta(hours=1), overrides={})
    assert again == []
    assert havens_digest() == state


def _override(town: Town, search: Search, found: bool, note: str) -> OutcomeOverride:
    return OutcomeOverride(
        cycle=town.cycle,
        step="searches",
        subject=f"search:{search.pk}:{town.loft.pk}",
        found=found,
        note=note,
        by=town.world.users["storyteller"],
        at=AFTER_DEADLINE,
    )


def test_overrides_flip_found_and_not_found_at_apply(town: Town) -> None:
    overrides = {
        ("searches", o.subject): o
        for o in (
            _override(town, town.s20, True, "The hunter knows the district"),
            _override(town, town.s21, False, "Séverine was followed and lost the trail"),
        )
    }
    previewed = havens_preview(cycle=town.cycle, now=AFTER_DEADLINE)
    applied = havens_apply(cycle=town.cycle, now=RELEASE, overrides=overrides)
    # The values compared are the computed ones, before the rulings.
    assert values(applied) == values(previewed)
    hunter = SearchResult.objects.get(search=town.s20, structure=town.loft)
    seeker = SearchResult.objects.get(search=town.s21, structure=town.loft)
    assert (hunter.found, seeker.found) == (True, False)
    assert "a storyteller ruled it found: The hunter knows the district" in hunter.explanation
    assert "ruled it not found" in seeker.explanation
    # Exactly as a found result: the hunter's find, linked to the result; the seeker has none.
    find = Find.objects.get(structure=town.loft, cleared_at__isnull=True)
    assert (find.character, find.result, find.cycle) == (town.hunter, hunter, town.cycle)
    assert not Find.objects.filter(structure=town.loft, character=town.seeker).exists()


def test_ruled_not_found_keeps_an_earlier_find(town: Town) -> None:
    """A searcher who knew the place before keeps that find when their search is ruled not
    found: the ruling undoes only what the search gave."""
    Find.objects.create(
        structure=town.loft, character=town.seeker, cycle=town.cycle, found_at=DURING
    )
    overrides = {("searches", o.subject): o for o in [_override(town, town.s21, False, "no")]}
    havens_apply(cycle=town.cycle, now=RELEASE, overrides=overrides)
    kept = Find.objects.get(structure=town.loft, character=town.seeker, cleared_at__isnull=True)
    assert kept.result is None


def test_a_released_result_is_not_ruled_again(town: Town) -> None:
    """Results reach the searchers with the release (HAV-25b); a ruling after that changes
    nothing: a correction is the storytellers' own, not the release's."""
    havens_apply(cycle=town.cycle, now=RELEASE, overrides={})
    late = {(town.s21.pk, town.loft.pk): svc.SearchRuling(found=False, note="too late")}
    assert svc.search_results_override(cycle=town.cycle, rulings=late, now=RELEASE) == 0
    assert SearchResult.objects.get(search=town.s21, structure=town.loft).found is True
    assert Find.objects.filter(structure=town.loft, character=town.seeker).exists()


def test_a_world_changed_since_the_preview_gives_other_values(town: Town) -> None:
    previewed = havens_preview(cycle=town.cycle, now=AFTER_DEADLINE)
    # An ST raises Victor's mental traits: (8 + 3) × 2 = 22 hiding points now.
    Character.objects.filter(pk=town.victor.pk).update(mental=8)
    applied = havens_apply(cycle=town.cycle, now=RELEASE, overrides={})
    changed = {
        key
        for key in values(previewed).keys() | values(applied).keys()
        if values(previewed).get(key) != values(applied).get(key)
    }
    loft = town.loft.pk
    assert changed == {
        ("searches", f"search:{town.s21.pk}:{loft}"),
        ("searches", f"search:{town.s20.pk}:{loft}"),
        ("searches", f"search:{town.s21.pk}"),
    }


def test_mail_queued_by_a_step_leaves_with_the_rollback(
    town: Town, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    """A step that queues an e-mail after commit (an alarm mail, HAV-10): the preview drops it
    with its rollback. With a bare savepoint the mail would still leave: Django forgets on-commit
    callbacks only for the savepoints of atomic blocks (shown last)."""

    def alarm_mail(*, cycle: Cycle, now: dt.datetime) -> dict[str, int]:
        sent = notify(character=town.victor, key="alarm:test", subject="Alarm", body="!", now=now)
        return {"sent": int(sent)}

    monkeypatch.setattr(
        resolution, "HAVEN_STEPS", (*resolution.HAVEN_STEPS, ("alarm_mail", alarm_mail))
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        havens_preview(cycle=town.cycle, now=AFTER_DEADLINE)
    assert callbacks == []
    assert mail.outbox == []
    assert not Notification.objects.exists()
    # The trap the preview avoids.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        sid = transaction.savepoint()
        alarm_mail(cycle=town.cycle, now=AFTER_DEADLINE)
        transaction.savepoint_rollback(sid)
    assert len(callbacks) == 1


# --- Ownership: each owner reads their own part ---------------------------------------------------


def test_ownership_outcomes_name_no_one_to_the_wrong_reader(
    world: Any, make_character: Callable[..., Character], make_haven: Any
) -> None:
    """HAV-05: Ines transfers the Loft to Lucien; HAV-06: she forsakes the Manor she owns alone,
    which destroys it and the crypt Otto holds inside. Each reads their part; the heir never
    reads who owned the Loft before (HAV-04)."""
    st = world.users["storyteller"]
    cycle = world.game.cycle
    ines = make_character("Ines", player="player_bob")
    lucien = make_character("Lucien", player="player_alice")
    otto = make_character("Otto", player=None)
    loft = make_haven(ines, name="The Loft")
    manor = make_haven(ines, name="The Manor")
    vault = make_haven(otto, name="The Vault", outer=manor)
    transfer = ownership.structure_transfer_request(
        structure=loft, from_character=ines, to_character=lucien, by=st
    )
    forsake = ownership.structure_forsake_request(structure=manor, character=ines, by=st)
    cycle_close(cycle=cycle, by=st, now=AFTER_DEADLINE)
    previewed = havens_preview(cycle=cycle, now=AFTER_DEADLINE)
    rows = by_key(previewed)
    assert set(rows) == {
        ("ownership", f"change:{transfer.pk}"),
        ("ownership", f"change:{forsake.pk}"),
        ("ownership", f"owner:{loft.pk}:{lucien.pk}"),
        ("ownership", f"owner:{loft.pk}:{ines.pk}"),
        ("ownership", f"haven:{manor.pk}"),
        ("ownership", f"haven:{vault.pk}"),
    }
    assert rows["ownership", f"change:{transfer.pk}"].readers == [ines.pk]
    assert rows["ownership", f"change:{transfer.pk}"].value["status"] == "applied"
    gained = rows["ownership", f"owner:{loft.pk}:{lucien.pk}"]
    assert (gained.readers, gained.value) == ([lucien.pk], {"owner": True, "how": "transfer"})
    assert gained.public_text == "Lucien now owns The Loft (Transfer (HAV-05))."
    lost = rows["ownership", f"owner:{loft.pk}:{ines.pk}"]
    assert lost.readers == [ines.pk] and lost.value["owner"] is False
    vault_row = rows["ownership", f"haven:{vault.pk}"]
    assert vault_row.readers == [otto.pk]
    assert vault_row.value == {
        "status": "destroyed",
        "destroyed_by": "outer_forsaken",
        "owners_before": ["Otto"],
        "owners": [],
    }
    assert "Ines" not in vault_row.public_text
    for outcome in previewed:
        if lucien.pk in outcome.readers:
            assert "Ines" not in outcome.public_text
    applied = havens_apply(cycle=cycle, now=RELEASE, overrides={})
    assert values(applied) == values(previewed)
    assert Structure.objects.get(pk=vault.pk).status == StructureStatus.DESTROYED


# --- Query counts -------------------------------------------------------------------------------


def _hunted(world: Any, make_npc: Any, make_haven: Any, count: int, tag: str) -> None:
    """`count` NPC havens, each searched by its own NPC hunter and attacked by them: every
    other search finds (21 against 20) and every other attack destroys (4 against 3)."""
    st = world.users["storyteller"]
    cycle = world.game.cycle
    for i in range(count):
        owner = make_npc(f"Owner {tag}{i}", mental=7)
        hunter = make_npc(f"Hunter {tag}{i}", underworld=40)
        haven = make_haven(owner, name=f"Haven {tag}{i}", attributes={"influence_resistance": 3})
        Find.objects.create(
            structure=haven, character=hunter, cycle=cycle, found_at=DURING - dt.timedelta(days=1)
        )
        svc.search_submit(
            character=hunter,
            target_name=f"Owner {tag}{i}",
            influence="underworld",
            points=21 if i % 2 == 0 else 5,
            by=st,
            key=f"search-{tag}{i}",
        )
        svc.influence_attack_submit(
            attacker=hunter,
            structure=haven,
            influence="underworld",
            points=4 if i % 2 == 0 else 1,
            by=st,
            key=f"attack-{tag}{i}",
        )


def _preview_queries(cycle: Cycle) -> tuple[int, list[Outcome]]:
    with CaptureQueriesContext(connection) as queries:
        outcomes = havens_preview(cycle=cycle, now=AFTER_DEADLINE)
    return len(queries), outcomes


def test_preview_queries_do_not_grow_with_the_havens(
    world: Any, make_npc: Any, make_haven: Any
) -> None:
    """Set-based: the preview of 2 havens searched and attacked runs as many statements as
    that of 10 (the steps', and one read of the havens after each step)."""
    _hunted(world, make_npc, make_haven, 2, "a")
    small, outcomes = _preview_queries(world.game.cycle)
    # Per haven: the search, its tested haven, the attack; per destroyed one: the haven and the
    # hunter's lost find; per one still standing: what its owners lost.
    assert len(outcomes) == 2 * 3 + 2 + 1
    _hunted(world, make_npc, make_haven, 8, "b")
    large, outcomes = _preview_queries(world.game.cycle)
    assert len(outcomes) == 10 * 3 + 2 * 5 + 5
    assert large == small


# --- The whole pipeline -------------------------------------------------------------------------


@dataclass
class HavenMonth:
    month: Month
    loft: Structure
    cellar: Structure
    found: Search  # Lucien's, 17 against 16: found
    missed: Search  # the hunter's, 16 against 16: not found, ruled found


@pytest.fixture
def haven_month(month: Month, make_npc: Any, make_haven: Any) -> HavenMonth:
    """The month, with Marguerite's two havens: (mental 3 + influences 5) × 2 = 16 hiding
    points (HAV-25). Lucien searches with 17, an NPC hunter with 16; Lucien attacks the Cellar,
    which he found at the game, with 4 against its resistance of 3 (HAV-25c)."""
    world, cycle = month.world, month.cycle
    alice, st = world.users["player_alice"], world.users["storyteller"]
    Character.objects.filter(pk=month.lucien.pk).update(business=30)
    month.lucien.refresh_from_db()
    hunter = make_npc("Hunter", underworld=30)
    loft = make_haven(month.marguerite, name="The Loft", location="Above the gallery")
    cellar = make_haven(
        month.marguerite,
        name="The Cellar",
        location="Under the fish market",
        attributes={"influence_resistance": 3},
    )
    Find.objects.create(
        structure=cellar,
        character=month.lucien,
        cycle=cycle,
        found_at=DURING - dt.timedelta(days=1),
    )
    found = svc.search_submit(
        character=month.lucien,
        target_name="Marguerite",
        influence="business",
        points=17,
        by=alice,
        key="found",
    )
    missed = svc.search_submit(
        character=hunter,
        target_name="Marguerite",
        influence="underworld",
        points=16,
        by=st,
        key="missed",
    )
    svc.influence_attack_submit(
        attacker=month.lucien,
        structure=cellar,
        influence="business",
        points=4,
        by=alice,
        key="attack",
    )
    cycle_close(cycle=cycle, by=st, now=AFTER_DEADLINE)
    return HavenMonth(month=month, loft=loft, cellar=cellar, found=found, missed=missed)


def _resolve(hm: HavenMonth) -> dict[tuple[str, str], Outcome]:
    st = hm.month.world.users["storyteller"]
    pipeline.cycle_resolve_inline(cycle=hm.month.cycle, by=st, now=AFTER_DEADLINE)
    hm.month.cycle.refresh_from_db()
    assert hm.month.cycle.status == CycleStatus.RESOLVED
    return {(o.step, o.subject): o for o in Outcome.objects.filter(cycle=hm.month.cycle)}


def test_pipeline_resolves_overrides_and_releases_the_havens(haven_month: HavenMonth) -> None:
    hm, month = haven_month, haven_month.month
    world = month.world
    st, alice, bob = (world.users[n] for n in ("storyteller", "player_alice", "player_bob"))
    before = havens_digest()
    rows = _resolve(hm)
    assert havens_digest() == before  # the preview changed no haven
    missed = rows["searches", f"search:{hm.missed.pk}:{hm.loft.pk}"]
    assert "search of 16 influence against 16 hiding points: not found" in missed.explanation
    assert rows["searches", f"search:{hm.found.pk}:{hm.loft.pk}"].value["found"] is True
    assert rows["influence_attacks", f"haven:{hm.cellar.pk}"].value["status"] == "destroyed"
    pipeline.outcome_override(outcome=missed, by=st, note="The hunter knows the market", found=True)

    assert pipeline.cycle_release(cycle=month.cycle, by=st, now=RELEASE) is True
    assert pipeline.cycle_release(cycle=month.cycle, by=st, now=RELEASE) is False
    # The ruling gave the hunter the Loft, as a found result would.
    assert Find.objects.filter(
        structure=hm.loft, result__search=hm.missed, cleared_at__isnull=True
    ).exists()
    assert Search.objects.filter(released_at=RELEASE).count() == 2
    assert Structure.objects.get(pk=hm.cellar.pk).status == StructureStatus.DESTROYED

    # What each player reads: Alice her search and attack, Bob his havens' fate; neither the
    # numbers, nor the other side's name.
    alice_reads = [o.public_text for o in pipeline.results_for(user=alice, cycle=month.cycle)]
    bob_reads = [o.public_text for o in pipeline.results_for(user=bob, cycle=month.cycle)]
    assert any("search for Marguerite's havens is resolved" in t for t in alice_reads)
    assert any("Under the fish market: the haven was destroyed" in t for t in alice_reads)
    assert any(t.startswith("The Cellar was destroyed") for t in bob_reads)
    assert not any("16" in t or "hiding" in t for t in alice_reads)
    assert not any("Lucien" in t or "search" in t.lower() for t in bob_reads)
    pipeline.summaries_send(cycle_id=month.cycle.pk)
    to = {m.to[0]: m.body for m in mail.outbox}
    assert "Marguerite's havens" in to[alice.email]
    assert "The Cellar was destroyed" in to[bob.email]
    assert "Lucien" not in to[bob.email]


def test_pipeline_refuses_a_release_after_the_havens_changed(haven_month: HavenMonth) -> None:
    hm, month = haven_month, haven_month.month
    st = month.world.users["storyteller"]
    _resolve(hm)
    # An ST raises Marguerite's mental traits after the preview: 18 hiding points now.
    Character.objects.filter(pk=month.marguerite.pk).update(mental=4)
    with pytest.raises(ValidationError, match="Something changed since the preview"):
        pipeline.cycle_release(cycle=month.cycle, by=st, now=RELEASE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED
    assert not SearchResult.objects.exists()
    assert Structure.objects.get(pk=hm.cellar.pk).status == StructureStatus.STANDING
