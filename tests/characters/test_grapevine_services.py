"""Grapevine 3 imports through the service, against the real sample files in
/work/shared/data/grapevine (shared/data/grapevine beside the project).

Every count below was read off the files with grep, not computed by the importer:

- mcmillan.gex: `grep -c '<vampire ' ` = 1; `grep -c '<entry '` = 314, of which
  `grep -c 'type="6"\\|change="0"'` = 15 are comments or changes of 0, which move no balance,
  so 299 ledger entries; `<experience unspent="29" earned="390">`; player="Andrew Sayman".
- israeli_datetime_xml.gex: 1 vampire, `grep -c '<entry '` = 17 (none of type 6 or change 0),
  unspent="11" earned="47", player="Nobody", status="Inactive", dates day first (29/10/2008).
- chronicle_camarilla_large_xml.gex: `grep -c '<vampire '` = 50, `grep -c '<entry '` = 0,
  `grep -c 'npc="yes"'` = 50.
- chronicle_camarilla_five_xml.gex: 5 vampires, all npc="yes", no player; 2 entries, both of
  Adam St. Charles (unspent="-2").
- chronicle_camarilla_five_xml_many_settings.gex and .gv2 (XML despite the name): 5 vampires,
  `grep -c '<player '` = 2.
- chronicle_00.gex: 3 vampires, `grep -c '<entry '` = 316: McMillan's 314 (299 in the ledger,
  as above) and ValueForEverything's 2 (an NPC: no ledger).
- value_for_everything.gex: 1 vampire, npc="yes", player="MoufPlayer", sect="Nihilist",
  status="Withering", unspent="-131".
- sandra_weird_dates.gex: 1 vampire, player="drgnsyr", `<experience />`, dates like
  "07/15/2010 18:21:12 PM".
- adamstcharles.gex: 1 vampire, npc="yes"; adamstcharles_broken_xml.gex lacks the
  `</traitlist>` of line 15 (`diff`), so the parser stops at line 68.
"""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.db.models import Sum
from django.test.utils import CaptureQueriesContext

from characters.models import (
    Approval,
    Character,
    Disadvantage,
    DisciplineLevel,
    Ritual,
    Status,
    XpEntry,
    XpKind,
)
from characters.services.imports import grapevine_import, grapevine_plan
from chronicle import services
from chronicle.models import Invitation, Membership, Role
from tests.conftest import World

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "grapevine"
if not DATA.exists():  # the checkout's shared/ sits beside it, as on the build machines
    DATA = Path("/work/shared/data/grapevine")

XML_SAMPLES = {
    # file: (characters, ledger entries)
    "adamstcharles.gex": (1, 0),
    "chronicle_00.gex": (3, 299),
    "chronicle_camarilla_five_xml.gex": (5, 0),
    "chronicle_camarilla_five_xml_many_settings.gex": (5, 0),
    "chronicle_camarilla_five_xml_many_settings.gv2": (5, 0),
    "chronicle_camarilla_large_xml.gex": (50, 0),
    "chronicle_camarilla_large_xml_many_settings.gex": (50, 0),
    "chronicle_camarilla_large_xml_many_settings.gv2": (50, 0),
    "israeli_datetime_xml.gex": (1, 17),
    "mcmillan.gex": (1, 299),
    "sandra_weird_dates.gex": (1, 0),
    "value_for_everything.gex": (1, 0),
}
BINARY_SAMPLES = [
    "chronicle_camarilla_five_bin.gex",
    "chronicle_camarilla_five_bin_many_settings.gex",
    "chronicle_camarilla_five_bin_many_settings.gv2",
    "chronicle_camarilla_large_bin.gex",
    "chronicle_camarilla_large_bin_many_settings.gex",
    "chronicle_camarilla_large_bin_many_settings.gv2",
]


def sample(name: str) -> tuple[str, bytes]:
    return name, (DATA / name).read_bytes()


def run(world: World, *names: str, **options: Any) -> Any:
    return grapevine_import(
        chronicle=world.chronicle,
        files=[sample(n) for n in names],
        by=world.users["storyteller"],
        **options,
    )


def counts(world: World) -> tuple[int, int, int]:
    return (
        Character.objects.filter(chronicle=world.chronicle).count(),
        XpEntry.objects.filter(chronicle=world.chronicle).count(),
        Membership.objects.filter(chronicle=world.chronicle).count(),
    )


@pytest.mark.parametrize(("name", "expected"), list(XML_SAMPLES.items()), ids=list(XML_SAMPLES))
def test_every_xml_sample_imports_with_its_counts(
    world: World, name: str, expected: tuple[int, int]
) -> None:
    characters, entries = expected
    report = run(world, name)
    assert not report.errors
    assert report.created == characters and report.updated == 0
    assert Character.objects.filter(chronicle=world.chronicle, imported_from=name).count() == (
        characters
    )
    assert XpEntry.objects.filter(chronicle=world.chronicle).count() == entries
    assert report.xp_entries == entries


def test_mcmillan_ledger_matches_the_file(world: World) -> None:
    run(world, "mcmillan.gex")
    mcmillan = Character.objects.get(chronicle=world.chronicle, name="Charles McMillan")
    assert mcmillan.player is not None
    assert mcmillan.player.get_full_name() == "Andrew Sayman"
    assert mcmillan.status == Status.ACTIVE and mcmillan.approval == Approval.APPROVED
    assert (mcmillan.clan, mcmillan.sect, mcmillan.generation) == ("ventrue", "camarilla", 9)
    ledger = XpEntry.objects.filter(character=mcmillan)
    assert ledger.count() == 299
    # unspent="29" in the file.
    assert ledger.aggregate(total=Sum("amount"))["total"] == Decimal(29)
    # earned="390": the sum of the Earn entries (type 0).
    earned = ledger.filter(kind=XpKind.AWARD).aggregate(total=Sum("amount"))["total"]
    assert earned == Decimal(390)
    assert mcmillan.imported_at is not None and mcmillan.grapevine_key == "name:charles mcmillan"


def test_israeli_dates_are_read_day_first(world: World) -> None:
    report = run(world, "israeli_datetime_xml.gex")
    rand = Character.objects.get(chronicle=world.chronicle, name="Rand McDom")
    # status="Inactive" is retired in Chronicle.
    assert rand.status == Status.RETIRED
    entries = list(XpEntry.objects.filter(character=rand).order_by("created_at", "pk"))
    assert len(entries) == 17
    assert sum(e.amount for e in entries) == Decimal(11)
    # The first entry: date="08/08/2008" change="5"; the last: "04/05/2009 16:26:27" (4 May).
    tz = world.chronicle.tz
    assert entries[0].created_at.astimezone(tz).date() == dt.date(2008, 8, 8)
    assert entries[-1].created_at.astimezone(tz).replace(tzinfo=None) == dt.datetime(
        2009, 5, 4, 16, 26, 27
    )
    assert not any("unspent" in w for w in report.all_warnings())


def test_npc_history_is_kept_as_text_with_a_warning(world: World) -> None:
    report = run(world, "chronicle_camarilla_five_xml.gex")
    adam = Character.objects.get(chronicle=world.chronicle, name="Adam St. Charles")
    assert adam.player is None and adam.status == Status.NPC
    assert "XP entries kept as text" in adam.imported_notes
    assert any("Adam St. Charles" in w and "-2" in w for w in report.all_warnings())
    # "Amber Bradbury (NPC)" in the file is the NPC Amber Bradbury.
    assert Character.objects.filter(chronicle=world.chronicle, name="Amber Bradbury").exists()


def test_sheet_columns_disciplines_and_text(world: World) -> None:
    run(world, "adamstcharles.gex")
    adam = Character.objects.get(chronicle=world.chronicle, name="Adam St. Charles")
    # Physical: Energetic, Stalwart x3, Tough x2 = 6; Social 2+3+3+2 = 10; Mental 3+1 = 4.
    assert (adam.physical, adam.social, adam.mental, adam.willpower) == (6, 10, 4, 5)
    assert adam.abilities == {"dodge": 2, "firearms": 2, "subterfuge": 2}
    # Auspex: 3 powers, Celerity 2, Presence 2 -> levels 1a..2a, 1a..1b, 1a..1b.
    tops = {
        d: max(
            DisciplineLevel.objects.filter(character=adam, discipline=d).values_list(
                "level", flat=True
            )
        )
        for d in ("auspex", "celerity", "presence")
    }
    assert tops == {"auspex": 3, "celerity": 2, "presence": 2}
    assert "Negative Mental: Ignorant x2, Impatient" in adam.imported_notes
    assert "Heavy Pistol" in adam.imported_notes
    assert "nature: Elitist" in adam.imported_notes


def test_unmapped_values_are_listed_and_choices_apply(world: World) -> None:
    report = grapevine_plan(chronicle=world.chronicle, files=[sample("value_for_everything.gex")])
    unmapped = {(r["what"], r["value"]) for r in report.unmapped()}
    assert ("sect", "Nihilist") in unmapped
    assert ("status", "Withering") in unmapped
    assert ("discipline", "Necromancy: Ash Path") in unmapped
    run(world, "value_for_everything.gex", choices={"sect:nihilist": "anarch"})
    value = Character.objects.get(chronicle=world.chronicle, name="ValueForEverything")
    assert value.sect == "anarch"
    assert "Necromancy: Ash Path: Shroudsight" in value.imported_notes
    assert Disadvantage.objects.filter(character=value, derangement=True).count() == 7
    assert Ritual.objects.filter(character=value).count() == 7


def test_the_damaged_file_is_refused_with_line_and_column_and_nothing_written(
    world: World,
) -> None:
    before = counts(world)
    # A good file with it: all or nothing.
    report = run(world, "mcmillan.gex", "adamstcharles_broken_xml.gex")
    assert report.refused and not report.written
    [error] = report.errors
    assert (error.file, error.line) == ("adamstcharles_broken_xml.gex", 68)
    assert error.column is not None and "damaged" in str(error)
    assert counts(world) == before


@pytest.mark.parametrize("name", BINARY_SAMPLES)
def test_binary_files_are_refused_with_the_export_message(world: World, name: str) -> None:
    before = counts(world)
    report = run(world, name)
    [error] = report.errors
    assert "export" in str(error) and "XML" in str(error)
    assert counts(world) == before


def test_reimport_updates_rather_than_duplicates(world: World) -> None:
    first = run(world, "chronicle_00.gex")
    assert first.created == 3
    again = run(world, "chronicle_00.gex")
    assert (again.created, again.updated, again.xp_entries) == (0, 3, 0)
    assert Character.objects.filter(chronicle=world.chronicle).count() == 3
    assert XpEntry.objects.filter(chronicle=world.chronicle).count() == 299
    assert all(line.changed_since == [] for line in again.characters)
    # The same placeholder for Andrew Sayman: one invitation, one membership.
    assert Invitation.objects.filter(chronicle=world.chronicle, name="Andrew Sayman").count() == 1


def test_storyteller_changes_show_in_the_preview(world: World) -> None:
    run(world, "mcmillan.gex")
    Character.objects.filter(name="Charles McMillan").update(physical=1, clan="brujah")
    report = grapevine_plan(chronicle=world.chronicle, files=[sample("mcmillan.gex")])
    [line] = report.characters
    assert line.action == "update"
    assert set(line.changed_since) == {"physical", "clan"}
    # A preview confirmed before that change is refused, not applied over it.
    confirmed = report.digest()
    Character.objects.filter(name="Charles McMillan").update(mental=2)
    with pytest.raises(Exception, match="changed since the preview"):
        run(world, "mcmillan.gex", expect_digest=confirmed)


def test_an_entry_gone_from_the_file_is_reversed_not_deleted(world: World) -> None:
    run(world, "israeli_datetime_xml.gex")
    text = (DATA / "israeli_datetime_xml.gex").read_text()
    shorter = text.replace(
        '<entry date="04/05/2009 16:26:27" change="4" type="0" reason="" earned="47" '
        'unspent="11"/>',
        "",
    )
    assert shorter != text
    report = grapevine_import(
        chronicle=world.chronicle,
        files=[("israeli_datetime_xml.gex", shorter.encode())],
        by=world.users["storyteller"],
    )
    assert report.updated == 1
    rand = Character.objects.get(name="Rand McDom")
    entries = XpEntry.objects.filter(character=rand)
    assert entries.count() == 18
    assert entries.filter(kind=XpKind.REVERSAL, amount=Decimal(-4)).count() == 1
    assert entries.aggregate(total=Sum("amount"))["total"] == Decimal(7)


def test_players_match_members_before_invitations(world: World) -> None:
    alice = world.users["player_alice"]
    alice.first_name, alice.last_name = "Andrew", "Sayman"
    alice.save()
    report = run(world, "mcmillan.gex", "sandra_weird_dates.gex")
    players = {p.name: p for p in report.players}
    assert players["Andrew Sayman"].user_id == alice.pk
    assert players["drgnsyr"].invitation
    placeholder = Membership.objects.get(chronicle=world.chronicle, user__first_name="drgnsyr").user
    assert not placeholder.is_active and not placeholder.has_usable_password()
    assert Invitation.objects.filter(placeholder=placeholder, role=Role.PLAYER).exists()
    assert Character.objects.get(name="Another Sandra").player == placeholder


def test_second_pc_of_a_player_comes_in_retired(world: World, make_character: Any) -> None:
    make_character("Lucien", player="player_alice")
    alice = world.users["player_alice"]
    alice.first_name, alice.last_name = "Andrew", "Sayman"
    alice.save()
    report = run(world, "mcmillan.gex")
    assert Character.objects.get(name="Charles McMillan").status == Status.RETIRED
    assert any("XP-07" in w for w in report.all_warnings())


def test_dry_run_writes_nothing(world: World) -> None:
    before = counts(world)
    report = run(world, "chronicle_00.gex", dry_run=True)
    assert report.created == 3 and not report.written
    assert counts(world) == before


def _subset(name: str, *, vampires: int | None = None, entries: int | None = None) -> bytes:
    """A smaller file cut from a sample with the standard library's parser (not the
    importer's): its first vampires, keeping one with rituals so every kind of row is there,
    or its first XP entries."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring((DATA / name).read_bytes())
    if vampires is not None:
        everyone = root.findall("vampire")
        with_rituals = [
            v for v in everyone if v.find("traitlist[@name='Rituals']/trait") is not None
        ]
        keep = [with_rituals[0], *[v for v in everyone if v is not with_rituals[0]][: vampires - 1]]
        for vampire in everyone:
            if vampire not in keep:
                root.remove(vampire)
    if entries is not None:
        for experience in root.iter("experience"):
            for entry in experience.findall("entry")[entries:]:
                experience.remove(entry)
    return b'<?xml version="1.0"?>\n' + ET.tostring(root)


def _queries_for_new(world: World, slug: str, name: str, data: bytes) -> int:
    chronicle = services.chronicle_create(name=slug, slug=slug)
    services.membership_add(
        chronicle=chronicle, user=world.users["storyteller"], role=Role.STORYTELLER
    )
    with CaptureQueriesContext(connection) as queries:
        report = grapevine_import(
            chronicle=chronicle, files=[(name, data)], by=world.users["storyteller"]
        )
    assert report.written
    return len(queries.captured_queries)


def test_statements_per_batch_not_per_trait(world: World, postgres: None) -> None:
    """Five characters against the 50 of the largest sample (3,143 traits,
    `grep -c '<trait '`), each imported into an empty chronicle: one batch of characters
    each, so the same number of statements (PostgreSQL: SQLite's limit of 999 parameters
    splits bulk inserts by rows)."""
    name = "chronicle_camarilla_large_xml.gex"
    five = _subset(name, vampires=5)
    assert five.count(b"<vampire ") == 5
    small = _queries_for_new(world, "small", name, five)
    large = _queries_for_new(world, "large", name, (DATA / name).read_bytes())
    assert small == large


def test_ledger_statements_do_not_grow_with_entries(world: World, postgres: None) -> None:
    """McMillan with 10 XP entries and with all 314."""
    name = "mcmillan.gex"
    few = _queries_for_new(world, "few", name, _subset(name, entries=10))
    many = _queries_for_new(world, "many", name, (DATA / name).read_bytes())
    assert few == many


def test_reimport_statements_do_not_grow_with_characters(world: World, postgres: None) -> None:
    name = "chronicle_camarilla_large_xml.gex"
    counts_by_file = {}
    for slug, data in (("s", _subset(name, vampires=5)), ("l", (DATA / name).read_bytes())):
        chronicle = services.chronicle_create(name=slug, slug=slug)
        services.membership_add(
            chronicle=chronicle, user=world.users["storyteller"], role=Role.STORYTELLER
        )
        grapevine_import(chronicle=chronicle, files=[(name, data)], by=world.users["storyteller"])
        with CaptureQueriesContext(connection) as queries:
            report = grapevine_import(
                chronicle=chronicle, files=[(name, data)], by=world.users["storyteller"]
            )
        assert report.created == 0 and report.updated > 0
        counts_by_file[slug] = len(queries.captured_queries)
    assert counts_by_file["s"] == counts_by_file["l"]


def test_largest_sample_imports_in_a_few_seconds(world: World) -> None:
    started = time.perf_counter()
    report = run(world, "chronicle_camarilla_large_xml_many_settings.gex")
    elapsed = time.perf_counter() - started
    assert report.created == 50
    assert elapsed < 3.0, f"{elapsed:.2f} s"
