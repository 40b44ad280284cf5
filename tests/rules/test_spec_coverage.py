"""Every rule ID SPEC.md defines is cited by at least one test and at least one place in the
app's code (issue 14, "Measured"), so a reader can go from a rule to its code and tests and
back (SPEC, Conventions). The IDs come from the copy `spec_ids.txt` (see `spec_ids.py`), checked
against SPEC.md itself where the storytellers' folder is present.

A failure lists what is missing: cite the ID where the code implements the rule (a docstring or
a comment) and in the test that exercises it (its id= or its name); a rule with no code yet is
an issue, not a citation."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rules import spec_ids

ROOT = spec_ids.ROOT
APP_DIRS = ["characters", "chronicle", "havens", "downtimes", "templates"]
CODE_SUFFIXES = {".py", ".html", ".txt"}
# The copy of the IDs and its tools cite every ID by construction: they prove nothing.
NOT_A_CITATION = {
    Path(spec_ids.__file__).resolve(),
    spec_ids.COPY.resolve(),
    Path(__file__).resolve(),
}


# Rules SPEC defines that the app has nothing to store, compute or check for: played live, at
# the game. Listed with why, so the gap is in plain sight rather than papered over with a
# citation; the checks fail if one of them gets cited (take it off the list) or if any other
# ID goes missing.
# Rules played live with nothing to compute: none left. CTL-03 (control lost in play) and SEW-05
# (lost in the sewers) are printed on the sheet a player carries at the game.
PLAYED_LIVE: dict[str, str] = {}


def app_files() -> list[Path]:
    """The app's code and templates: not its migrations (generated), nor its catalogs."""
    return sorted(
        path
        for folder in APP_DIRS
        for path in (ROOT / folder).rglob("*")
        if path.suffix in CODE_SUFFIXES
        and path.is_file()
        and "migrations" not in path.parts
        and "locale" not in path.parts
    )


def _test_sources() -> list[Path]:
    return sorted(
        path for path in (ROOT / "tests").rglob("*.py") if path.resolve() not in NOT_A_CITATION
    )


def missing(ids: list[str], files: list[Path]) -> list[str]:
    cited = spec_ids.cited_in(files)
    return [rule_id for rule_id in ids if rule_id not in cited]


def test_the_copy_of_the_ids_is_current() -> None:
    ids = spec_ids.read_copy()
    assert len(ids) == len(set(ids)) and len(ids) > 100, "spec_ids.txt looks damaged"
    if not spec_ids.SPEC.exists():
        pytest.skip("../shared/SPEC.md is absent (a clean clone): the copy is what we have")
    assert ids == spec_ids.defined_ids(spec_ids.SPEC.read_text(encoding="utf-8")), (
        "SPEC.md changed: run `.venv/bin/python tests/rules/spec_ids.py` and commit spec_ids.txt"
    )


def _check(absent: list[str], where: str) -> None:
    print(f"Rule IDs not cited by {where}:", " ".join(absent) or "none")
    print(
        "Played live, so not in the app:", ", ".join(f"{k} ({v})" for k, v in PLAYED_LIVE.items())
    )
    unexplained = [rule_id for rule_id in absent if rule_id not in PLAYED_LIVE]
    assert not unexplained, f"Not cited by {where}: " + ", ".join(unexplained)
    cited_now = sorted(set(PLAYED_LIVE) - set(absent))
    assert not cited_now, f"Cited by {where} now: {cited_now}; take them off PLAYED_LIVE"


def test_every_rule_id_is_cited_by_a_test() -> None:
    _check(missing(spec_ids.read_copy(), _test_sources()), "the tests")


def test_every_rule_id_is_cited_in_the_code() -> None:
    _check(missing(spec_ids.read_copy(), app_files()), "the app's code")


# The reading of citations itself, so the checks above cannot pass by a loose pattern.
@pytest.mark.parametrize(
    ("text", "ids"),
    [
        pytest.param("HAV-25b: search", {"HAV-25b"}, id="one-id-with-letter"),
        pytest.param("see HAV-25 only", {"HAV-25"}, id="no-letter-is-not-25b"),
        pytest.param("DIS-03..06", {"DIS-03", "DIS-04", "DIS-05", "DIS-06"}, id="range"),
        pytest.param("GEN-03/04", {"GEN-03", "GEN-04"}, id="list"),
        pytest.param('id="CTL-02-below-1-npc"', {"CTL-02"}, id="test-id-suffix"),
        pytest.param("XP-4 and HAV-250", set(), id="not-two-digits"),
        pytest.param("HAV-25-ish", {"HAV-25"}, id="hyphen-after"),
    ],
)
def test_citations_are_read_as_spec_writes_them(text: str, ids: set[str]) -> None:
    assert spec_ids.cited_ids(text) == ids


def test_definitions_are_read_from_bullets_and_attribute_rows() -> None:
    spec = "- **GEN-01.** Players…\n| HAV-10 | Alarm | 5 |\nsee GEN-02 in passing\n"
    assert spec_ids.defined_ids(spec) == ["GEN-01", "HAV-10"]
