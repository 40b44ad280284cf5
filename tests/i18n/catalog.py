"""A small reader of gettext catalogs (.po) and the checks the i18n tests share: placeholders,
HTML tags, and the fixed English fragments of a message that must not show on a translated page.

Our own reader rather than polib: it is forty lines, and the tests then need no new dependency.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
LANGUAGES = ("it", "ca")

# %(name)s, %s, %d, %.1f ... ("%%" is a literal percent sign, not a placeholder).
PLACEHOLDER = re.compile(r"%(?:\((?P<name>\w+)\))?[#0 +-]*\d*(?:\.\d+)?[sdifrxXeEgGc]")
TAG = re.compile(r"</?[A-Za-z][^<>]*>")
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


@dataclass
class Entry:
    msgid: str
    msgid_plural: str = ""
    msgstr: list[str] = field(default_factory=list)
    context: str = ""
    flags: set[str] = field(default_factory=set)
    line: int = 0

    @property
    def translated(self) -> bool:
        return bool(self.msgstr) and all(self.msgstr)

    @property
    def english(self) -> list[str]:
        return [self.msgid, self.msgid_plural] if self.msgid_plural else [self.msgid]

    def differs(self) -> bool:
        """Translated into something else than its English (a clan's name stays as it is)."""
        return self.translated and any(s not in self.english for s in self.msgstr)


def _unquote(text: str) -> str:
    text = text.strip()
    assert text.startswith('"') and text.endswith('"'), text
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), text[1:-1])


def parse(text: str) -> list[Entry]:
    """The entries of a catalog, the header (msgid "") and obsolete (#~) entries left out."""
    entries: list[Entry] = []
    current: Entry | None = None
    target: tuple[str, int] | None = None  # the field a continuation line adds to
    flags: set[str] = set()

    def finish() -> None:
        nonlocal current
        if current is not None and current.msgid:
            entries.append(current)
        current = None

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            finish()
            target = None
            continue
        if line.startswith("#~"):
            continue
        if line.startswith("#,"):
            flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            continue
        if line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            assert current is not None and target is not None, f"line {number}: {raw!r}"
            _add(current, target, _unquote(line))
            continue
        if keyword in ("msgctxt", "msgid") and current is not None and current.msgstr:
            finish()
        if current is None:
            current = Entry(msgid="", flags=flags, line=number)
            flags = set()
        index = re.fullmatch(r"msgstr\[(\d+)\]", keyword)
        if keyword == "msgctxt":
            target = ("context", 0)
        elif keyword == "msgid":
            target = ("msgid", 0)
        elif keyword == "msgid_plural":
            target = ("msgid_plural", 0)
        elif keyword == "msgstr" or index:
            target = ("msgstr", int(index.group(1)) if index else 0)
        else:
            raise ValueError(f"line {number}: cannot read {raw!r}")
        _add(current, target, _unquote(rest), start=True)
    finish()
    return entries


def _add(entry: Entry, target: tuple[str, int], text: str, *, start: bool = False) -> None:
    name, index = target
    if name == "msgstr":
        while len(entry.msgstr) <= index:
            entry.msgstr.append("")
        entry.msgstr[index] += text
    else:
        setattr(entry, name, ("" if start else getattr(entry, name)) + text)


def read(language: str, root: Path = LOCALE) -> list[Entry]:
    return parse((root / language / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8"))


# --- What a message is made of -----------------------------------------------------------


def placeholders(text: str) -> Counter[str]:
    """Each placeholder by name (%(name)s) or, unnamed, by its conversion (%s, %d)."""
    return Counter(m.group("name") or m.group(0)[-1] for m in PLACEHOLDER.finditer(text))


VOID = {"br", "hr", "img", "input", "wbr"}


def tags(text: str) -> Counter[str]:
    """The HTML tags of a message. "Name <address>" is words in angle brackets, not a tag: an
    opening tag counts when the message closes it too, or when it never has a closing one."""
    found = [re.sub(r"\s+", " ", t) for t in TAG.findall(text)]
    closed = {t[2:-1].strip().lower() for t in found if t.startswith("</")}

    def name(tag: str) -> str:
        return re.split(r"[\s/>]", tag[1:], maxsplit=1)[0].lower()

    return Counter(t for t in found if t.startswith("</") or name(t) in closed | VOID)


def normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def fragments(english: str) -> list[str]:
    """The fixed parts of a message between its placeholders and tags, each trimmed to start
    and end on a letter or digit ("Cost: %(n)s XP" -> ["Cost", "XP"])."""
    parts = re.split(f"{PLACEHOLDER.pattern}|{TAG.pattern}", english.replace("%%", "%"))
    trimmed = (re.sub(r"^[\W_]+|[\W_]+$", "", normal(p or "")) for p in parts)
    return [p for p in trimmed if p]


def words(text: str) -> int:
    return len(re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)*", text))


def telltales(entries: list[Entry], minimum_words: int = 3) -> tuple[set[str], set[str]]:
    """What on a page gives away an untranslated message: (whole texts, fragments). A message
    without placeholders or tags is given away when a piece of text on the page is exactly it;
    any message, by one of its fixed fragments of `minimum_words` words or more found anywhere
    in the page's text. Only messages translated into something else count."""
    whole: set[str] = set()
    parts: set[str] = set()
    # A word that is also a translation is no telltale: Italian "Discipline" and "Note" are the
    # plurals of "Disciplina" and "Nota", and "Due" is "Two".
    translations = {normal(s).strip(" .:") for entry in entries for s in entry.msgstr}
    for entry in entries:
        if not entry.differs():
            continue
        for english in entry.english:
            pieces = fragments(english)
            alone = pieces[0].strip(" .:") if len(pieces) == 1 else None
            if alone == normal(english).strip(" .:") and alone not in translations:
                whole.add(pieces[0])
            parts.update(p for p in pieces if words(p) >= minimum_words)
    return whole, parts
