"""The Grapevine importer's pure parts, by table: the mapping table, NPC names, dates, the XP
entry types, and the refusals of damaged, binary and hostile files."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from characters.importers import grapevine as gv


@pytest.mark.parametrize(
    ("what", "value", "expected"),
    [
        pytest.param("clan", "Assamites", "assamite", id="clan-assamites"),
        pytest.param("clan", "Followers of Set", "setite", id="clan-followers-of-set"),
        pytest.param("clan", "Lasombra Antitribu", "lasombra", id="clan-lasombra-antitribu"),
        pytest.param("clan", "Brujah antitribu", "brujah", id="clan-any-antitribu"),
        pytest.param("clan", "  toreador ", "toreador", id="clan-spaces-and-case"),
        pytest.param("clan", "Giovanni", None, id="clan-unknown"),
        pytest.param("sect", "Camarilla", "camarilla", id="sect-camarilla"),
        pytest.param("sect", "Anarchs", "anarch", id="sect-anarchs"),
        pytest.param("sect", "Nihilist", None, id="sect-nihilist-unmapped"),
        pytest.param("discipline", "Auspex", "auspex", id="discipline-auspex"),
        pytest.param(
            "discipline", "Thaumaturgy: Path of Blood", "thaumaturgy_blood", id="thaum-blood"
        ),
        pytest.param(
            "discipline", "Thaumaturgy: Lure of Flames", "thaumaturgy_fire", id="thaum-fire"
        ),
        pytest.param("discipline", "Thaumaturgy: Green Path", None, id="thaum-green-unmapped"),
        pytest.param("discipline", "Necromancy: Ash Path", None, id="necromancy-unmapped"),
        pytest.param("influence", "Industry", "business", id="influence-industry"),
        pytest.param("influence", "Street", None, id="influence-street-unmapped"),
        pytest.param("status", "Inactive", "retired", id="status-inactive"),
        pytest.param("status", "Withering", None, id="status-unknown"),
        pytest.param("kind", "mortal", "kine", id="kind-mortal"),
        pytest.param("kind", "werewolf", None, id="kind-werewolf-unmapped"),
    ],
)
def test_mapping_table(what: str, value: str, expected: str | None) -> None:
    assert gv.map_value(what, value) == expected


def test_every_mapping_target_is_a_house_rules_name() -> None:
    for what, table in gv.MAPPINGS.items():
        for target in table.values():
            assert target in gv.TARGETS[what], (what, target)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("Amber Bradbury (NPC)", ("Amber Bradbury", True), id="npc-suffix"),
        pytest.param("(npc) Old Man", ("Old Man", True), id="npc-prefix-lowercase"),
        pytest.param("Adam St. Charles", ("Adam St. Charles", False), id="plain"),
    ],
)
def test_npc_in_a_name(name: str, expected: tuple[str, bool]) -> None:
    assert gv.npc_name(name) == expected


D = dt.datetime


@pytest.mark.parametrize(
    ("text", "day_first", "value"),
    [
        pytest.param("8/5/2003 5:53:01 PM", False, D(2003, 8, 5, 17, 53, 1), id="us-pm"),
        pytest.param("8/7/2003 12:36:32 AM", False, D(2003, 8, 7, 0, 36, 32), id="us-midnight"),
        pytest.param("12/23/2010", False, D(2010, 12, 23), id="us-date-only"),
        pytest.param("29/10/2008 00:26:48", True, D(2008, 10, 29, 0, 26, 48), id="day-first-24h"),
        pytest.param("04/05/2009 16:26:27", True, D(2009, 5, 4, 16, 26, 27), id="day-first-amb"),
        pytest.param("04/05/2009", False, D(2009, 4, 5), id="us-ambiguous"),
        pytest.param("29/10/2008", False, D(2008, 10, 29), id="us-file-day-first-date"),
        pytest.param("07/15/2010 18:21:12 PM", False, D(2010, 7, 15, 18, 21, 12), id="24h-pm"),
        pytest.param("2009-05-04", False, D(2009, 5, 4), id="iso"),
        pytest.param("12:00:00 AM", False, None, id="time-alone"),
        pytest.param("00:00:00", False, None, id="time-alone-24h"),
        pytest.param("", False, None, id="empty"),
        pytest.param("12/30/1899", False, None, id="visual-basic-day-zero"),
        pytest.param("31/31/2009", False, None, id="impossible"),
        pytest.param("next tuesday", False, None, id="words"),
    ],
)
def test_dates(text: str, day_first: bool, value: dt.datetime | None) -> None:
    parsed = gv.parse_date(text, day_first=day_first)
    assert parsed.value == value
    if value is None:
        assert parsed.note  # kept with a reason, never an exception


@pytest.mark.parametrize(
    ("texts", "day_first"),
    [
        pytest.param(["08/08/2008", "20/10/2008", "31/10/2008 22:15:37"], True, id="israeli"),
        pytest.param(["8/5/2003 5:53:01 PM", "3/21/2004"], False, id="us"),
        pytest.param(["04/05/2009"], False, id="ambiguous-is-us"),
        pytest.param(["12:00:00 AM", ""], False, id="no-dates"),
    ],
)
def test_guess_day_first(texts: list[str], day_first: bool) -> None:
    assert gv.guess_day_first(texts) is day_first


@pytest.mark.parametrize(
    ("entry_type", "change", "balance", "effect"),
    [
        pytest.param(gv.EARN, "5", "0", "5", id="earn"),
        pytest.param(gv.SPEND, "4", "10", "-4", id="spend"),
        pytest.param(gv.LOSE, "2", "10", "-2", id="lose"),
        pytest.param(gv.UNSPEND, "3", "0", "3", id="unspend"),
        pytest.param(gv.SET_UNSPENT, "29", "31", "-2", id="set-unspent"),
        pytest.param(gv.SET_EARNED, "390", "29", "0", id="set-earned-moves-nothing"),
        pytest.param(gv.COMMENT, "1", "29", "0", id="comment"),
    ],
)
def test_xp_effect(entry_type: int, change: str, balance: str, effect: str) -> None:
    assert gv.xp_effect(entry_type, Decimal(change), Decimal(balance)) == Decimal(effect)


def _refusal(data: bytes) -> gv.GrapevineRefused:
    with pytest.raises(gv.GrapevineRefused) as caught:
        gv.read_file(data, filename="f.gex")
    return caught.value


def test_entity_expansion_is_refused() -> None:
    bomb = (
        b'<?xml version="1.0"?>\n<!DOCTYPE g [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n'
        b'<grapevine version="3"><vampire name="&b;"/></grapevine>'
    )
    refusal = _refusal(bomb)
    assert "entities" in refusal.message and refusal.line == 2


def test_external_entities_are_refused() -> None:
    data = (
        b'<?xml version="1.0"?>\n<!DOCTYPE g [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        b'<grapevine version="3"><vampire name="&x;"/></grapevine>'
    )
    assert "entities" in _refusal(data).message


@pytest.mark.parametrize(
    ("data", "words"),
    [
        pytest.param(b"", "empty", id="empty"),
        pytest.param(b"\x8d\x01GVBE\x03\x00\x00", "export", id="binary"),
        pytest.param(b"Name,Clan\nAdam,Toreador\n", "not a Grapevine", id="csv"),
        pytest.param(b'<?xml version="1.0"?><html/>', "not a Grapevine", id="other-xml"),
        pytest.param(
            b'<grapevine version="3"><vampire clan="Brujah"/></grapevine>', "no name", id="no-name"
        ),
        pytest.param(
            b'<grapevine version="3">\n<vampire name="A">\n<experience>\n'
            b'<entry date="1/1/2001" change="lots" type="0"/>\n</experience></vampire></grapevine>',
            "not a number",
            id="xp-not-a-number",
        ),
    ],
)
def test_refusals(data: bytes, words: str) -> None:
    assert words in str(_refusal(data))


def test_a_bad_entry_is_refused_at_its_line() -> None:
    data = (
        b'<grapevine version="3">\n<vampire name="A">\n<experience>\n'
        b'<entry date="1/1/2001" change="2" type="9"/>\n</experience></vampire></grapevine>'
    )
    refusal = _refusal(data)
    assert refusal.line == 4 and refusal.column == 1


def test_windows_1252_text_is_read() -> None:
    data = '<grapevine version="3"><vampire name="Ren\u00e9e"/></grapevine>'.encode("cp1252")
    parsed = gv.read_file(data, filename="f.gex")
    assert parsed.characters[0].name == "Ren\u00e9e"
    assert any("Windows-1252" in w for w in parsed.warnings)
