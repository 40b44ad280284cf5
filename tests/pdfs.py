"""Reading the PDFs the server renders (issue 17), as a person would: their text, page by page,
and the language the document declares. pypdf is in the test extra."""

from __future__ import annotations

import io
from typing import Any

from pypdf import PdfReader


def reader_of(response: Any) -> PdfReader:
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"] == "application/pdf", response["Content-Type"]
    assert response.content.startswith(b"%PDF-")
    return PdfReader(io.BytesIO(response.content))


def pages_of(response: Any) -> list[str]:
    """Each page's text with its white space folded (a table cell may wrap on paper)."""
    return [" ".join((page.extract_text() or "").split()) for page in reader_of(response).pages]


def text_of(response: Any) -> str:
    return " ".join(pages_of(response))


def language_of(response: Any) -> str:
    """The document's language (the catalog's /Lang, which WeasyPrint takes from <html lang>)."""
    return str(reader_of(response).trailer["/Root"].get("/Lang", ""))


def fonts_of(response: Any) -> set[str]:
    """The base names of the fonts the PDF embeds ("ABCDEF+DejaVuSans-Bold")."""
    fonts: set[str] = set()
    for page in reader_of(response).pages:
        resources = page["/Resources"].get_object()
        for font in resources.get("/Font", {}).get_object().values():
            fonts.add(str(font.get_object().get("/BaseFont", "")))
    return fonts
