"""The import_grapevine and export_grapevine commands: --json on standard output and nothing
else, exit status 0 and 2, --dry-run, and the round trip (export, import into an empty
chronicle, same characters and ledgers). Counts were read off the files with grep (see
test_grapevine_services.py)."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from characters.models import Character, Disadvantage, DisciplineLevel, Ritual, XpEntry
from characters.services.ledger import xp_correction_add
from chronicle import services
from chronicle.models import Role
from tests.characters.test_grapevine_services import DATA
from tests.conftest import World

pytestmark = pytest.mark.django_db


def command(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_json_import_of_chronicle_00(world: World) -> None:
    code, out, _err = command(
        "import_grapevine", str(DATA / "chronicle_00.gex"), "--chronicle", "nightfall", "--json"
    )
    assert code == 0
    report = json.loads(out)  # the whole of standard output is one JSON object
    assert set(report) >= {
        "files",
        "characters",
        "created",
        "updated",
        "xp_entries",
        "unmapped",
        "warnings",
        "errors",
    }
    assert report["files"] == ["chronicle_00.gex"]
    assert (report["created"], report["updated"], report["xp_entries"]) == (3, 0, 299)
    by_name = {c["name"]: c for c in report["characters"]}
    mcmillan = by_name["Charles McMillan"]
    assert mcmillan["kind"] == "vampire" and mcmillan["clan"] == "Ventrue"
    assert mcmillan["sect"] == "Camarilla" and mcmillan["generation"] == 9
    assert mcmillan["player"] == "Andrew Sayman" and mcmillan["npc"] is False
    assert (mcmillan["xp_unspent"], mcmillan["xp_entries"], mcmillan["xp_earned"]) == (29, 299, 390)
    assert mcmillan["status"] == "active"
    value = by_name["ValueForEverything"]
    assert value["npc"] is True and value["xp_entries"] == 0
    assert {
        "what": "sect",
        "value": "Nihilist",
        "where": "chronicle_00.gex: ValueForEverything",
    } in (report["unmapped"])
    assert report["errors"] == []
    assert Character.objects.filter(chronicle=world.chronicle).count() == 3


def test_dry_run_says_and_writes_nothing(world: World) -> None:
    code, out, _err = command(
        "import_grapevine",
        str(DATA / "mcmillan.gex"),
        "--chronicle",
        "nightfall",
        "--dry-run",
        "--json",
    )
    assert code == 0 and json.loads(out)["created"] == 1
    assert not Character.objects.filter(chronicle=world.chronicle).exists()
    assert not XpEntry.objects.exists()


def test_damaged_file_exits_2_with_line_and_column(world: World) -> None:
    code, out, _err = command(
        "import_grapevine",
        str(DATA / "mcmillan.gex"),
        str(DATA / "adamstcharles_broken_xml.gex"),
        "--chronicle",
        "nightfall",
        "--json",
    )
    assert code == 2
    report = json.loads(out)
    [error] = report["errors"]
    assert "adamstcharles_broken_xml.gex, line 68, column" in error
    assert report["created"] == 0 and report["characters"] == []
    assert not Character.objects.filter(chronicle=world.chronicle).exists()


def test_binary_file_exits_2_and_says_export_as_xml(world: World) -> None:
    code, out, err = command(
        "import_grapevine",
        str(DATA / "chronicle_camarilla_large_bin.gex"),
        "--chronicle",
        "nightfall",
    )
    assert code == 2
    assert "export the characters as XML" in err and "Nothing was imported" in err
    assert not Character.objects.filter(chronicle=world.chronicle).exists()


def test_choose_maps_an_unmapped_value(world: World) -> None:
    code, out, _err = command(
        "import_grapevine",
        str(DATA / "value_for_everything.gex"),
        "--chronicle",
        "nightfall",
        "--choose",
        "sect:Nihilist=sabbat",
        "--json",
    )
    assert code == 0
    assert json.loads(out)["characters"][0]["sect"] == "Sabbat"
    assert Character.objects.get(name="ValueForEverything").sect == "sabbat"


def _world_of(chronicle: Any) -> dict[str, Any]:
    """Characters and ledgers, independent of ids."""
    result: dict[str, Any] = {}
    for c in Character.objects.filter(chronicle=chronicle).select_related("player"):
        result[c.name] = {
            "columns": {
                f: getattr(c, f)
                for f in (
                    "creature",
                    "clan",
                    "sect",
                    "generation",
                    "status",
                    "physical",
                    "social",
                    "mental",
                    "willpower",
                    "abilities",
                    "business",
                    "government",
                    "herd",
                    "occult",
                    "underworld",
                    "background_story",
                    "grapevine_key",
                )
            },
            "player": c.player.get_full_name() if c.player else None,
            "levels": sorted(
                DisciplineLevel.objects.filter(character=c).values_list("discipline", "level")
            ),
            "rituals": sorted(Ritual.objects.filter(character=c).values_list("name", flat=True)),
            "disadvantages": sorted(
                Disadvantage.objects.filter(character=c).values_list("name", "major", "derangement")
            ),
            "ledger": list(
                XpEntry.objects.filter(character=c)
                .order_by("created_at", "pk")
                .values_list("created_at", "amount", "reason", "kind")
            ),
        }
    return result


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(["chronicle_00.gex"], id="chronicle_00"),
        pytest.param(["israeli_datetime_xml.gex", "sandra_weird_dates.gex"], id="dates"),
        pytest.param(["chronicle_camarilla_large_xml.gex"], id="large"),
        pytest.param(["chronicle_camarilla_five_xml.gex"], id="five-with-npc-xp"),
    ],
)
def test_round_trip(world: World, tmp_path: Path, files: list[str]) -> None:
    code, _out, _err = command(
        "import_grapevine", *(str(DATA / f) for f in files), "--chronicle", "nightfall"
    )
    assert code == 0
    exported = tmp_path / "export.gex"
    code, out, _err = command("export_grapevine", "--chronicle", "nightfall")
    assert code == 0 and out.startswith('<?xml version="1.0"?>\n<grapevine version="3"')
    exported.write_text(out, encoding="utf-8")

    empty = services.chronicle_create(name="Empty", slug="empty")
    services.membership_add(chronicle=empty, user=world.users["storyteller"], role=Role.STORYTELLER)
    code, out, _err = command("import_grapevine", str(exported), "--chronicle", "empty", "--json")
    assert code == 0, out
    before, after = _world_of(world.chronicle), _world_of(empty)
    assert before.keys() == after.keys() and len(before) > 0
    for name in before:
        assert after[name] == before[name], name
    # And the ledger entries are there at all (the round trip compares something).
    assert (
        XpEntry.objects.filter(chronicle=empty).count()
        == XpEntry.objects.filter(chronicle=world.chronicle).count()
    )


def test_export_includes_entries_made_in_chronicle(world: World, make_character: Any) -> None:
    lucien = make_character("Lucien", player="player_alice")
    xp_correction_add(
        chronicle=world.chronicle,
        player_id=lucien.player_id,
        amount=Decimal("2.5"),
        reason="Game 3 costume",
        by=world.users["storyteller"],
        character=lucien,
    )
    _code, out, _err = command("export_grapevine", "--chronicle", "nightfall")
    assert 'name="Lucien"' in out and 'change="2.5"' in out and 'reason="Game 3 costume"' in out
