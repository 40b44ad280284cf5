"""PDFs for the table (issue 17): a page's template rendered to paper by WeasyPrint on the server.

One way for every app: `pdf_response` renders a template the way `chronicle_page` does (the
membership, the chronicle, whether the reader is staff, every moment in the chronicle's zone,
the request's language) and answers the PDF inline, with a file name people can keep.

WeasyPrint never goes to the network: its fetcher (`StaticFilesOnly`) serves the project's own
static files, through Django's static files finders (or the collected storage in production),
and refuses every other address. A template that named an outside image or font would render
without it, never fetch it, so a PDF cannot be made to call out from the server.
"""

from __future__ import annotations

import mimetypes
import posixpath
import re
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import staticfiles_storage
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.utils.translation import gettext as _
from weasyprint import HTML
from weasyprint.urls import URLFetcher, URLFetcherResponse

from . import access
from .models import Membership

# The address the HTML is rendered at. It names no real host (".invalid" never resolves), so a
# relative link can only resolve under it, and only STATIC_URL under it is ever served.
PDF_ORIGIN = "https://chronicle.invalid/"


class Refused(ValueError):
    """An address the PDF may not load (WeasyPrint logs it and renders without the resource)."""


def static_name(url: str) -> str | None:
    """The static file name an address means ("characters/print.css"), or None when it is not
    under STATIC_URL of the PDF's origin or tries to climb out of it."""
    prefix = urljoin(PDF_ORIGIN, settings.STATIC_URL)
    if not url.startswith(prefix):
        return None
    name = unquote(urlsplit(url).path[len(urlsplit(prefix).path) :])
    if not name or "\0" in name or "\\" in name:
        return None
    normal = posixpath.normpath(name)
    if normal.startswith(("/", "..")) or normal != name:
        return None
    return name


def static_path(name: str) -> str | None:
    """Where a static file is on disk: found by the finders (development, tests), else in the
    collected storage (production, where `{% static %}` names the hashed copies)."""
    found = finders.find(name)
    if found:
        return str(found)
    try:
        if staticfiles_storage.exists(name):
            return str(staticfiles_storage.path(name))
    except NotImplementedError:  # a storage without local paths (S3 …): not for PDFs
        return None
    return None


class StaticFilesOnly(URLFetcher):
    """WeasyPrint's fetcher, cut down to our static files: nothing else is ever fetched."""

    def fetch(self, url: str, headers: Any = None) -> URLFetcherResponse:
        name = static_name(url)
        path = static_path(name) if name else None
        if path is None:
            raise Refused(f"A PDF loads only the site's own static files, not {url!r}.")
        with open(path, "rb") as source:
            body = source.read()
        content_type = mimetypes.guess_type(name or "")[0] or "application/octet-stream"
        return URLFetcherResponse(url, body, {"Content-Type": content_type})


def css_string(text: str) -> str:
    """A CSS string literal of `text`: anything but letters, digits and plain punctuation is a
    hex escape, so no text can end the string or the <style> element it is written in."""
    safe = " .,:;-·()'"
    return '"' + "".join(c if c.isalnum() or c in safe else f"\\{ord(c):x} " for c in text) + '"'


PAGE_MARK, PAGES_MARK = "\x01page\x01", "\x01pages\x01"


def page_number_css() -> str:
    """The footer's "Page 2 of 5" as CSS `content`, in the active language: the sentence is
    translated whole, then its two numbers become WeasyPrint's page counters (wherever the
    translation puts them)."""
    text = _("Page %(page)s of %(pages)s") % {"page": PAGE_MARK, "pages": PAGES_MARK}
    parts = []
    for part in re.split(f"({re.escape(PAGE_MARK)}|{re.escape(PAGES_MARK)})", text):
        if part == PAGE_MARK:
            parts.append("counter(page)")
        elif part == PAGES_MARK:
            parts.append("counter(pages)")
        elif part:
            parts.append(css_string(part))
    return " ".join(parts)


def pdf_filename(*parts: Any) -> str:
    """A file name such as nightfall-lucien-sheet.pdf: each part in plain letters, a part
    with none left out."""
    words = [slugify(str(part)) for part in parts]
    return "-".join(word for word in words if word) + ".pdf"


def render_pdf(template: str, context: dict[str, Any], request: HttpRequest | None = None) -> bytes:
    """A tagged PDF (headings, tables and reading order for screen readers, as the pages have;
    it costs no measurable time here)."""
    html = render_to_string(template, context, request=request)
    document = HTML(string=html, base_url=PDF_ORIGIN, url_fetcher=StaticFilesOnly())
    return bytes(document.write_pdf(pdf_tags=True))


def pdf_response(
    request: HttpRequest, template: str, membership: Membership, *, filename: str, **context: Any
) -> HttpResponse:
    """A chronicle's page as a PDF, opened in the browser (inline) under `filename`. The
    template sees what `chronicle_page` gives a page, plus `page_number_css`."""
    context |= {
        "membership": membership,
        "chronicle": membership.chronicle,
        "is_staff": access.is_staff(membership),
        "page_number_css": page_number_css(),
    }
    with timezone.override(membership.chronicle.tz):
        pdf = render_pdf(template, context, request)
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = content_disposition_header(False, filename) or "inline"
    # A sheet can hold what only its reader may see: no shared cache keeps a copy.
    add_never_cache_headers(response)
    return response
