"""Finds English on a page that should be in Italian or Catalan (issue 17).

Three kinds of evidence, read from what a person sees (text, and the attributes a reader sees or
hears: a title, a label, a placeholder, a button's value, a confirmation):
- a message of the catalog, translated there, shown in English: a piece of text that is
  exactly the message, or a fixed fragment of three words or more of it (tests/i18n/catalog.py);
- common English words ("the", "your", "with" ...) that no Italian or Catalan sentence has: they
  catch text nobody marked for translation, which no catalog knows of;
- a number written the English way ("2.5 XP") where the language writes "2,5".
What people typed (names, notes, descriptions: the `user_data`) is theirs and stays as written;
it is cut out of the text first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from typing import Any

from tests.i18n.catalog import Entry, normal, telltales, words

# Whole words that are English in any sentence and in no Italian or Catalan one.
ENGLISH = re.compile(r"\b(?:the|your|with|and|you|this|not yet)\b", re.IGNORECASE)
# The product's name is a name (it also is the English of the word "chronicle", a message of
# its own that Italian translates): the brand in the top bar and the tab's title keep it.
NAMES = {"Chronicle"}
SHOWN_ATTRIBUTES = {
    "title",
    "aria-label",
    "aria-description",
    "placeholder",
    "alt",
    "label",
    "data-confirm",
    "data-over",
    "data-left",
}
BUTTON_INPUTS = {"submit", "button", "reset"}
WORD_START = re.compile(r"[^\W\d_]+")
# 2.5 or 34.50, but not a date (2024-03-20), a time, a version (1.2.3), nor a rule (HAV-10..24).
DECIMAL = re.compile(r"(?<![\w.:/-])\d+\.\d+(?![\w.:/-])")
EDGES = " .,:;!?()[]{}'\"…·–—-«»“”"


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        # <code> holds rule IDs and keys, the same in every language.
        if tag in ("script", "style", "code"):
            self._hidden += 1
        for name, value in values.items():
            if name in SHOWN_ATTRIBUTES:
                self.texts.append(value)
        if tag == "input" and values.get("type") in BUTTON_INPUTS:
            self.texts.append(values.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "code"):
            self._hidden = max(0, self._hidden - 1)

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.texts.append(data)


def visible_texts(html: str) -> list[str]:
    """The pieces of text a reader sees or hears on a page, whitespace made single."""
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return [text for text in (normal(t) for t in parser.texts) if text]


class Checker:
    """Reads pages against one catalog. Each distinct piece of text is judged once, however
    many pages show it (the header, a table's headings), which keeps a crawl quick."""

    def __init__(
        self, entries: list[Entry], user_data: Iterable[str] = (), decimal_separator: str = "."
    ) -> None:
        self.whole, parts = telltales(entries)
        self.decimals = decimal_separator != "."
        self.parts: dict[str, list[str]] = {}
        for part in parts:
            first = WORD_START.match(part)
            if first:
                self.parts.setdefault(first.group(0), []).append(part)
        # Longest first, so a name is cut out before a shorter name inside it.
        kept = {normal(u) for u in user_data} | NAMES
        self.user_data = sorted(
            (u for u in kept if len(u) >= 3 and re.search(r"[^\W\d_]", u)), key=len, reverse=True
        )
        self._judged: dict[str, list[str]] = {}

    def page(self, html: str) -> list[str]:
        """The problems of one page, each "message in English: '...'" or "English: '...'"."""
        found: list[str] = []
        for text in visible_texts(html):
            if text not in self._judged:
                self._judged[text] = list(self._judge(text))
            found += self._judged[text]
        return list(dict.fromkeys(found))

    def text(self, text: str) -> list[str]:
        """The problems of a text shown as it is (an API's message)."""
        return list(self._judge(normal(text)))

    def _judge(self, text: str) -> Iterator[str]:
        for piece in self._without_user_data(text):
            if piece.strip(EDGES) in self.whole:
                yield f"message in English: {piece.strip(EDGES)!r}"
            for start in WORD_START.finditer(piece):
                for part in self.parts.get(start.group(0), ()):
                    if piece.startswith(part, start.start()):
                        yield f"message in English: {part!r}"
            for word in ENGLISH.findall(piece):
                yield f"English {word!r} in {piece[:100]!r}"
            if self.decimals:
                for number in DECIMAL.findall(piece):
                    yield f"a number the English way {number!r} in {piece[:100]!r}"

    def _without_user_data(self, text: str) -> list[str]:
        """The text with what people typed cut out: the pieces left between."""
        pieces = [text]
        sentence = words(text) >= 3
        for data in self.user_data:
            if data in text:
                pieces = [p for piece in pieces for p in _split_words(piece, data)]
            elif sentence and text in data:
                return []  # a piece of something someone typed (a line of an imported file)
        return [p for p in (normal(piece) for piece in pieces) if p.strip(EDGES)]


def _split_words(text: str, data: str) -> list[str]:
    """`text` split where `data` stands as words of its own: a username "storyteller" is cut out
    of "by storyteller", not out of "storytellers"."""
    pattern = (r"\b" if data[0].isalnum() else "") + re.escape(data)
    pattern += r"\b" if data[-1].isalnum() else ""
    return re.split(pattern, text)


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value (the world's JSON fields, an API's answer)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)
