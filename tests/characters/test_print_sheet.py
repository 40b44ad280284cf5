"""The print sheet is styled for paper (issue 12): its own stylesheet, black on white, no
navigation or buttons on paper, tables with borders and sensible page breaks. The browser test
(tests/browser/test_print_sheet.py) checks the computed styles under print media."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.staticfiles import finders

from characters.models import Character

pytestmark = pytest.mark.django_db


def _css() -> str:
    path = finders.find("characters/print.css")
    assert path, "characters/print.css is not found by the static files finders"
    with open(str(path)) as css:
        return css.read()


def test_the_print_page_loads_the_print_stylesheet(
    world: Any, make_character: Callable[..., Character]
) -> None:
    mole = make_character("Mole")
    response = world.client("player_alice").get(
        f"/c/{world.chronicle.slug}/characters/{mole.pk}/print/"
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert re.search(r'<link rel="stylesheet" href="[^"]*characters/print\.css"', page)
    assert "data-print" in page and "onclick" not in page and "<script>" not in page
    assert 'aria-label="Chronicle"' not in page  # no site navigation


def test_the_print_stylesheet_is_for_paper() -> None:
    css = _css()
    print_block = css[css.index("@media print") :]
    # No navigation or buttons on paper.
    for hidden in ("nav", "button", "form", ".print-toolbar"):
        assert re.search(rf"(^|[\s,]){re.escape(hidden)}[\s,{{]", print_block), hidden
    assert "display: none" in print_block
    # Black on white, bordered tables, page breaks that keep sections and rows together.
    assert re.search(r"color:\s*#000", css) and re.search(r"background:\s*#fff", css)
    assert re.search(r"\.print-sheet td \{[^}]*border: 1pt solid #000", css) or re.search(
        r"\.print-sheet th, \.print-sheet td \{[^}]*border: 1pt solid #000", css
    )
    assert "border-collapse: collapse" in css
    assert "break-inside: avoid" in css and "page-break-inside: avoid" in css
    assert "@page" in css
