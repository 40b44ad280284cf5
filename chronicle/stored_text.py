"""Sentences Chronicle stores in English and people read later, each in their own language: the
reasons of the XP and influence ledgers, which a player and the storytellers read side by side.

A writer composes the stored text from an English sentence marked with `gettext_noop` and
registered here (`stored_sentences`), never from `gettext`: what a ledger keeps must not depend
on the language of the request or worker that wrote it. A reader shows it through
`stored_text` (in templates, the `stored` filter of chronicle_ui), which finds the sentence the
text was made from and gives it in the active language, its placeholders filled with what the
stored text held there (a part that is itself a known sentence is translated too). A text that
matches no sentence (a reason a storyteller typed) is shown as it was typed, and rows written
before their sentence was registered are translated as well: the English is what they hold.

Ground floor: every app registers its own sentences from the module that writes them.
"""

from __future__ import annotations

import functools
import re
from contextlib import AbstractContextManager

from django.utils import translation
from django.utils.translation import gettext

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_SENTENCES: dict[str, re.Pattern[str]] = {}
# A part inside a part inside a sentence is as deep as any stored text goes.
_DEPTH = 3


def _pattern(msgid: str) -> re.Pattern[str]:
    """The English sentence as a pattern: its words literally, each placeholder any text (the
    same placeholder twice must hold the same text twice)."""
    parts: list[str] = []
    seen: set[str] = set()
    last = 0
    for match in _PLACEHOLDER.finditer(msgid):
        name = match.group(1)
        parts.append(re.escape(msgid[last : match.start()]))
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        last = match.end()
    parts.append(re.escape(msgid[last:]))
    return re.compile("".join(parts), re.DOTALL)


def in_english() -> AbstractContextManager[None]:
    """Compose a text to be stored inside this: the registered sentences, and any words built
    with gettext into them, come out in English whatever language the request or task has."""
    return translation.override("en")


def stored_sentences(*msgids: str) -> None:
    """Register English sentences (marked with gettext_noop where they are written) whose
    stored texts `stored_text` translates. Registering one twice does nothing."""
    for msgid in msgids:
        if "%%" in msgid or "%" in _PLACEHOLDER.sub("", msgid):
            raise ValueError(f"A stored sentence takes %(name)s placeholders only: {msgid!r}")
        if msgid not in _SENTENCES:
            _SENTENCES[msgid] = _pattern(msgid)
    _ordered.cache_clear()


@functools.cache
def _ordered() -> list[tuple[str, re.Pattern[str]]]:
    # The sentence with the most words of its own first: "Reversal: %(reason)s" wins over
    # "%(character)s: %(purchase)s" for "Reversal: …".
    return sorted(_SENTENCES.items(), key=lambda item: -len(_PLACEHOLDER.sub("", item[0]).strip()))


def stored_parse(text: str) -> tuple[str, dict[str, str]] | None:
    """The registered sentence `text` was made from and what fills its placeholders, or None
    (typed text, or a sentence nobody registered)."""
    for msgid, pattern in _ordered():
        match = pattern.fullmatch(text)
        if match is not None:
            return msgid, match.groupdict()
    return None


def stored_text(text: str, *, _depth: int = 0) -> str:
    """`text`, as stored in English, in the active language (unchanged if it is no known
    sentence)."""
    if not text or _depth > _DEPTH:
        return text
    parsed = stored_parse(text)
    if parsed is None:
        return text
    msgid, parts = parsed
    return gettext(msgid) % {
        name: stored_text(value, _depth=_depth + 1) for name, value in parts.items()
    }


def registered_sentences() -> list[str]:
    """Every registered sentence."""
    return list(_SENTENCES)
