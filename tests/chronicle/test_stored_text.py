"""chronicle.stored_text: sentences kept in English in the database (ledger reasons) and read in
each reader's language, with a small Italian catalog compiled here (the project's catalogs are
the lead's to fill)."""

from __future__ import annotations

import array
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.template import Context, Template
from django.test import override_settings
from django.utils import translation

from characters.models import XpPurchase
from characters.services.ledger import REVERSAL_REASON
from characters.services.purchases import PURCHASE_REASON, describe
from chronicle.stored_text import (
    in_english,
    registered_sentences,
    stored_parse,
    stored_sentences,
    stored_text,
)

ITALIAN = {
    "Reversal: %(reason)s": "Storno: %(reason)s",
    "%(character)s: %(purchase)s": "%(character)s: %(purchase)s",
    "Trait social +%(quantity)s": "Tratto sociale +%(quantity)s",
    "Influence spent": "Influenza spesa",
}


def _write_mo(path: Path, messages: dict[str, str]) -> None:
    """A GNU .mo file (the format msgfmt writes), so the test needs no gettext tools."""
    header = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n"
    entries = sorted({"": header, **messages}.items())
    ids = strs = b""
    offsets = []
    for key, value in entries:
        k, v = key.encode(), value.encode()
        offsets.append((len(ids), len(k), len(strs), len(v)))
        ids += k + b"\0"
        strs += v + b"\0"
    key_start = 7 * 4 + 16 * len(entries)
    value_start = key_start + len(ids)
    table: list[int] = []
    for id_at, id_len, _str_at, _str_len in offsets:
        table += [id_len, id_at + key_start]
    for _id_at, _id_len, str_at, str_len in offsets:
        table += [str_len, str_at + value_start]
    head = struct.pack(
        "Iiiiiii", 0x950412DE, 0, len(entries), 7 * 4, 7 * 4 + len(entries) * 8, 0, 0
    )
    path.write_bytes(head + array.array("i", table).tobytes() + ids + strs)


@pytest.fixture
def italian(tmp_path: Path) -> Iterator[None]:
    folder = tmp_path / "it" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    _write_mo(folder / "django.mo", ITALIAN)
    with override_settings(LOCALE_PATHS=[str(tmp_path)]), translation.override("it"):
        yield


def test_every_registered_sentence_reads_back_unchanged_in_english() -> None:
    with translation.override("en"):
        for msgid in registered_sentences():
            filled = msgid.replace("%(", "<").replace(")s", ">")
            assert stored_text(filled) == filled, msgid


def test_a_sentence_inside_a_sentence_is_found() -> None:
    stored = REVERSAL_REASON % {
        "reason": PURCHASE_REASON % {"character": "Lucien", "purchase": "Trait social +1"}
    }
    assert stored_parse(stored) == (REVERSAL_REASON, {"reason": "Lucien: Trait social +1"})
    assert stored_parse("Lucien: Trait social +1") == (
        PURCHASE_REASON,
        {"character": "Lucien", "purchase": "Trait social +1"},
    )


def test_typed_text_matches_nothing_and_stays_as_typed(italian: None) -> None:
    assert stored_parse("Best costume of the night") is None
    assert stored_text("Best costume of the night") == "Best costume of the night"


def test_each_reader_reads_the_stored_english_in_their_language(italian: None) -> None:
    assert stored_text("Influence spent") == "Influenza spesa"
    assert stored_text("Reversal: Lucien: Trait social +1") == "Storno: Lucien: Tratto sociale +1"
    page = Template("{% load chronicle_ui %}{{ reason|stored }}").render(
        Context({"reason": "Reversal: typed by an ST"})
    )
    assert page == "Storno: typed by an ST"


def test_a_purchase_is_written_in_english_whatever_language_is_active(italian: None) -> None:
    purchase = XpPurchase(kind="trait", target="social", quantity=1)
    assert describe(purchase) == "Tratto sociale +1"  # what the Italian reader sees
    with in_english():
        stored = PURCHASE_REASON % {"character": "Lucien", "purchase": describe(purchase)}
    assert stored == "Lucien: Trait social +1"


def test_a_sentence_with_a_bare_percent_is_refused() -> None:
    with pytest.raises(ValueError):
        stored_sentences("Half (50%) of %(what)s")
