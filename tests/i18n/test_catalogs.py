"""The Italian and Catalan catalogs are complete and sound (issue 17), as CI checks them:

- `msgfmt --check --statistics` finds no error, 0 untranslated and 0 fuzzy messages;
- the committed django.mo is the compiled django.po, byte for byte (a fresh `make run` machine
  may lack msgfmt, so the .mo files are committed and must not lag behind);
- every translation keeps its message's placeholders and HTML tags, and a plural has the two
  forms Italian and Catalan have;
- the clans' and disciplines' names stay as the house rules name them (proper nouns), and the
  glossary that keeps the games' words consistent is beside the catalogs.

Each check is a function over a catalog; the tests at the end prove each on a tiny catalog with
the fault it is for.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from characters.rules import CLANS, DISCIPLINE_TITLES
from tests.conftest import service_missing
from tests.i18n import catalog
from tests.i18n.catalog import Entry, placeholders, tags

PLURAL_FORMS = 2  # Italian and Catalan: one, other (nplurals=2)
PROPER_NOUNS = {clan.title for clan in CLANS.values()} | set(DISCIPLINE_TITLES.values())


def _po(language: str, root: Path = catalog.LOCALE) -> Path:
    return root / language / "LC_MESSAGES" / "django.po"


@pytest.fixture
def msgfmt() -> str:
    found = shutil.which("msgfmt")
    if found is None:
        service_missing("msgfmt is not installed (apt-get install gettext)")
    assert found is not None
    return found


def msgfmt_problems(po: Path, msgfmt: str = "msgfmt") -> list[str]:
    """What `msgfmt --check --statistics` says is wrong: its errors, and any untranslated or
    fuzzy message in its count ("12 translated messages, 1 fuzzy translation, 2 untranslated
    messages.")."""
    run = subprocess.run(
        [msgfmt, "--check", "--statistics", "-o", "/dev/null", str(po)],
        capture_output=True,
        text=True,
        env={"LC_ALL": "C"},
        check=False,
    )
    lines = run.stderr.strip().splitlines()
    counts = {
        kind: int(number)
        for number, kind in re.findall(r"(\d+) (translated|fuzzy|untranslated)", run.stderr)
    }
    problems = [] if run.returncode == 0 else [f"msgfmt exits {run.returncode}", *lines[:-1]]
    if not counts.get("translated"):
        problems.append(f"no translated message: {lines[-1:]}")
    problems += [f"{counts[kind]} {kind}" for kind in ("untranslated", "fuzzy") if counts.get(kind)]
    return problems


def mo_problems(po: Path, tmp_path: Path, msgfmt: str = "msgfmt") -> list[str]:
    mo = po.with_suffix(".mo")
    if not mo.exists():
        return [f"{mo.relative_to(po.parents[3])} is missing: run `make messages`"]
    fresh = tmp_path / f"{po.parent.parent.name}.mo"
    subprocess.run([msgfmt, "-o", str(fresh), str(po)], check=True, capture_output=True)
    if fresh.read_bytes() != mo.read_bytes():
        return [f"{mo.name} is not {po.name} compiled: run `make messages` (compilemessages)"]
    return []


def entry_problems(entries: list[Entry]) -> list[str]:
    """Placeholders and tags kept, the plural forms all there, the proper nouns untouched."""
    problems = []
    for entry in entries:
        where = f"line {entry.line} {entry.msgid[:60]!r}"
        if not entry.translated:
            continue  # msgfmt counts it
        if entry.msgid_plural:
            if len(entry.msgstr) != PLURAL_FORMS:
                problems.append(f"{where}: {len(entry.msgstr)} plural forms, not {PLURAL_FORMS}")
            wanted = placeholders(entry.msgid_plural)
            # The singular may say "one" instead of its count; it adds no placeholder.
            for form in entry.msgstr[:-1]:
                if not set(placeholders(form)) <= set(wanted) | set(placeholders(entry.msgid)):
                    problems.append(f"{where}: placeholders {dict(placeholders(form))}")
            pairs = [(entry.msgid_plural, entry.msgstr[-1])]
        else:
            pairs = [(entry.msgid, entry.msgstr[0])]
        for english, translated in pairs:
            # gettext never formats a no-python-format message, so "20% de" there is words.
            formatted = "no-python-format" not in entry.flags
            if formatted and placeholders(english) != placeholders(translated):
                problems.append(
                    f"{where}: placeholders {dict(placeholders(english))} "
                    f"became {dict(placeholders(translated))}"
                )
            if tags(english) != tags(translated):
                problems.append(
                    f"{where}: HTML tags {sorted(tags(english))} became {sorted(tags(translated))}"
                )
        if entry.msgid in PROPER_NOUNS and entry.msgstr != [entry.msgid]:
            problems.append(f"{where}: a clan's or discipline's name, translated {entry.msgstr}")
    return problems


# --- The catalogs ------------------------------------------------------------------------


@pytest.mark.parametrize("language", catalog.LANGUAGES)
def test_the_catalog_is_complete(language: str, msgfmt: str) -> None:
    assert msgfmt_problems(_po(language), msgfmt) == []


@pytest.mark.parametrize("language", catalog.LANGUAGES)
def test_the_committed_mo_is_the_compiled_po(language: str, msgfmt: str, tmp_path: Path) -> None:
    assert mo_problems(_po(language), tmp_path, msgfmt) == []


@pytest.mark.parametrize("language", catalog.LANGUAGES)
def test_translations_keep_placeholders_tags_plurals_and_names(language: str) -> None:
    entries = catalog.read(language)
    assert len(entries) > 100, "the catalog holds the project's messages"
    assert entry_problems(entries) == []


def test_the_glossary_is_beside_the_catalogs() -> None:
    glossary = catalog.LOCALE / "GLOSSARY.md"
    assert glossary.is_file(), "locale/GLOSSARY.md keeps the games' words consistent"
    text = glossary.read_text(encoding="utf-8")
    # It settles at least the proper nouns: clans and disciplines keep their names.
    assert any(name in text for name in PROPER_NOUNS), "the glossary names the clans"


# --- The checks catch what they are for -------------------------------------------------

HEADER = r"""msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Language: it\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"
"""
GOOD = (
    HEADER
    + r"""
#: a.py
#, python-format
msgid "Saved %(name)s at %(when)s."
msgstr "Salvato %(name)s alle %(when)s."

msgid "Read <a href=\"%(url)s\">the rules</a>"
msgstr "Leggi <a href=\"%(url)s\">le regole</a>"

msgid ""
"A long message "
"on two lines"
msgstr "Un messaggio lungo su due righe"

#, python-format
msgid "one day left"
msgid_plural "%(n)s days left"
msgstr[0] "un giorno"
msgstr[1] "%(n)s giorni"

msgctxt "XP report kind"
msgid "Award"
msgstr "Premio"

msgid "Ventrue"
msgstr "Ventrue"

#~ msgid "Gone"
#~ msgstr "Andato"
"""
)


def _write(tmp_path: Path, text: str) -> Path:
    po = _po("it", tmp_path)
    po.parent.mkdir(parents=True, exist_ok=True)
    po.write_text(text, encoding="utf-8")
    return po


def test_the_reader_reads_a_catalog() -> None:
    entries = {e.msgid: e for e in catalog.parse(GOOD)}
    assert set(entries) == {
        "Saved %(name)s at %(when)s.",
        'Read <a href="%(url)s">the rules</a>',
        "A long message on two lines",
        "one day left",
        "Award",
        "Ventrue",
    }
    assert entries["one day left"].msgstr == ["un giorno", "%(n)s giorni"]
    assert entries["one day left"].msgid_plural == "%(n)s days left"
    assert entries["Award"].context == "XP report kind"
    assert "python-format" in entries["Saved %(name)s at %(when)s."].flags
    assert entry_problems(list(entries.values())) == []


def test_msgfmt_counts_are_read(tmp_path: Path, msgfmt: str) -> None:
    assert msgfmt_problems(_write(tmp_path, GOOD), msgfmt) == []
    missing = GOOD + '\nmsgid "Not yet translated"\nmsgstr ""\n'
    fuzzy = GOOD + '\n#, fuzzy\nmsgid "Guessed"\nmsgstr "Indovinato"\n'
    broken = GOOD + '\n#, python-format\nmsgid "Hello %(name)s"\nmsgstr "Ciao %(nome)s"\n'
    assert msgfmt_problems(_write(tmp_path, missing), msgfmt) == ["1 untranslated"]
    assert msgfmt_problems(_write(tmp_path, fuzzy), msgfmt) == ["1 fuzzy"]
    assert msgfmt_problems(_write(tmp_path, broken), msgfmt)[0].startswith("msgfmt exits")


def test_a_stale_mo_is_found(tmp_path: Path, msgfmt: str) -> None:
    po = _write(tmp_path, GOOD)
    assert mo_problems(po, tmp_path, msgfmt)[0].endswith("is missing: run `make messages`")
    subprocess.run([msgfmt, "-o", str(po.with_suffix(".mo")), str(po)], check=True)
    assert mo_problems(po, tmp_path, msgfmt) == []
    _write(tmp_path, GOOD.replace("Premio", "Ricompensa"))
    assert mo_problems(po, tmp_path, msgfmt) == [
        "django.mo is not django.po compiled: run `make messages` (compilemessages)"
    ]


@pytest.mark.parametrize(
    ("msgid", "msgstr", "wrong"),
    [
        # No python-format flag: msgfmt would not look.
        ("Saved %(name)s.", "Salvato %(nome)s.", "placeholders"),
        ("Saved %(name)s.", "Salvato.", "placeholders"),
        ("%s of %s", "%s", "placeholders"),
        ("Read <strong>this</strong>", "Leggi questo", "HTML tags"),
        ('Read <a href="/rules/">the rules</a>', "Leggi <a>le regole</a>", "HTML tags"),
        ("Tremere", "Tremeri", "a clan's or discipline's name"),
        ("Thaumaturgy: Blood", "Taumaturgia: Sangue", "a clan's or discipline's name"),
    ],
)
def test_a_translation_that_loses_a_placeholder_a_tag_or_a_name_is_found(
    msgid: str, msgstr: str, wrong: str
) -> None:
    problems = entry_problems([Entry(msgid=msgid, msgstr=[msgstr])])
    assert problems and wrong in problems[0], problems


def test_a_plural_with_a_missing_form_is_found() -> None:
    entry = Entry(msgid="%(n)s day", msgid_plural="%(n)s days", msgstr=["%(n)s giorno"])
    assert "1 plural forms, not 2" in entry_problems([entry])[0]
    wrong = Entry(msgid="%(n)s day", msgid_plural="%(n)s days", msgstr=["x", "%(m)s giorni"])
    assert any("placeholders" in p for p in entry_problems([wrong]))
