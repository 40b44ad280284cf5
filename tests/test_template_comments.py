"""Django's `{# … #}` comment ends at the end of its line: one spread over two lines is printed
on the page (the settings page showed one to every member, in English, until the Catalan crawl
caught it). Longer comments use `{% comment %}`."""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def unclosed_comments(text: str) -> list[int]:
    return [
        number
        for number, line in enumerate(text.splitlines(), start=1)
        if "{#" in line and "#}" not in line[line.index("{#") :]
    ]


def test_a_two_line_comment_is_caught() -> None:
    assert unclosed_comments("<p>\n{# starts here\n   ends here #}\n</p>") == [2]
    assert unclosed_comments("{# one line #}\n{% comment %}two\nlines{% endcomment %}") == []


def test_no_template_has_a_comment_spread_over_lines() -> None:
    found = {
        str(path.relative_to(TEMPLATES)): lines
        for path in sorted(TEMPLATES.rglob("*.html"))
        if (lines := unclosed_comments(path.read_text(encoding="utf-8")))
    }
    assert found == {}, f"use {{% comment %}} for these (file: lines): {found}"
