"""Every page, as every persona, in a real browser (issue 12, "Measured, in tests"):

- accessibility: axe-core's WCAG 2.1 A and AA rules (tags wcag2a, wcag2aa, wcag21a, wcag21aa)
  find no serious or critical violation;
- phone: at 390 px no page's document is wider than the viewport;
- the top bar: at 1280 px it is one row, at most 64 px high, whatever the role.

The pages are those of tests/crawl_world.py (a released cycle, an open one, a desk, havens,
purchases...), walked as tests/crawl.py walks every URL pattern: one page per route, game and
persona, plus each persona's first 403 and 404 pages. One browser, one tab: the persona changes
by its session cookie, the viewport by resizing the same page. The crawl runs once; its three
findings are three tests (each reruns the crawl when run alone). Screenshots of the pages that
overflow a phone are saved under var/screenshots/a11y/ (not committed).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import time_machine
from axe_playwright_python.base import AXE_FILE_PATH
from django.conf import settings
from django.test import Client
from playwright.sync_api import Browser, Page
from playwright.sync_api import Error as PlaywrightError

from characters.models import Character
from tests import crawl_world
from tests.browser.conftest import TIMEOUT_MS
from tests.conftest import PERSONAS, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(os.environ.get("CHRONICLE_SCREENSHOTS", Path(settings.VAR_DIR) / "screenshots"))
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = ("serious", "critical")
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
BAR_MAX_PX = 64
EVERYONE: list[str | None] = [*PERSONAS, None]

# The top bar at the current size: its height, and whether every control shown in it sits on one
# row (each one's vertical span overlaps every other's, and none hangs below the bar).
TOP_BAR = """() => {
  const bar = document.querySelector('[data-topbar]');
  if (!bar) return null;
  const box = bar.getBoundingClientRect();
  const shown = [...bar.querySelectorAll('a, button, summary, .who, .brand')]
    .filter((e) => e.checkVisibility({ contentVisibilityAuto: true, visibilityProperty: true }))
    .map((e) => e.getBoundingClientRect())
    .filter((r) => r.width > 0 && r.height > 0);
  const lowestTop = Math.max(...shown.map((r) => r.top));
  const highestBottom = Math.min(...shown.map((r) => r.bottom));
  return {
    height: Math.round(box.height),
    oneRow: shown.length === 0 || lowestTop < highestBottom,
    below: shown.filter((r) => r.bottom > box.bottom + 0.5).length,
  };
}"""
HTMX_SETTLED = "() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')"


@dataclass
class Findings:
    pages: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    too_wide: list[str] = field(default_factory=list)
    bar: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


_findings: Findings | None = None


class Tab:
    """The one browser tab of the crawl, logged in as one persona at a time."""

    def __init__(self, browser: Browser, live_server_url: str, world: World) -> None:
        self.url = live_server_url
        self.context = browser.new_context(
            base_url=live_server_url, locale="en-US", viewport=DESKTOP, bypass_csp=True
        )
        self.context.set_default_timeout(TIMEOUT_MS)
        self.context.add_init_script(path=AXE_FILE_PATH)
        self.page: Page = self.context.new_page()
        self.world = world
        self.sessions: dict[str, str] = {}
        self.persona: str | None = "nobody yet"

    def as_persona(self, persona: str | None) -> None:
        if persona == self.persona:
            return
        self.context.clear_cookies()
        if persona is not None:
            if persona not in self.sessions:
                client = Client()
                client.force_login(self.world.users[persona])
                self.sessions[persona] = client.cookies[settings.SESSION_COOKIE_NAME].value
            cookie = {"name": settings.SESSION_COOKIE_NAME, "value": self.sessions[persona]}
            self.context.add_cookies([{**cookie, "url": self.url}])  # type: ignore[list-item]
        self.persona = persona

    def get(self, persona: str | None, path: str) -> tuple[int, str]:
        """The page's status and content type; a download (a CSV, an export) is no page."""
        self.as_persona(persona)
        try:
            response = self.page.goto(path, wait_until="load")
        except PlaywrightError as exc:
            if "Download is starting" in str(exc):
                return 200, "download"
            # An answer without a body (a 405 to a GET, an empty fragment) is no page to
            # Chromium: asked again, for its status.
            answer = self.context.request.get(path)
            return answer.status, "empty"
        if response is None:
            return 0, ""
        return response.status, response.header_value("content-type") or ""


def _status(answer: tuple[int, str]) -> int:
    return answer[0]


def _violations(page: Page, where: str) -> list[str]:
    # axe-core is in every page of the tab already (an init script: sent to the browser once).
    options = {"runOnly": {"type": "tag", "values": WCAG_21_AA}, "resultTypes": ["violations"]}
    results = page.evaluate("(options) => axe.run(document, options)", options)
    found = []
    for rule in results["violations"]:
        if rule.get("impact") not in BLOCKING:
            continue
        nodes = "; ".join(" ".join(map(str, node["target"])) for node in rule["nodes"][:6])
        more = f" (+{len(rule['nodes']) - 6} more)" if len(rule["nodes"]) > 6 else ""
        found.append(f"{where}: {rule['id']} ({rule['impact']}: {rule['help']}) at {nodes}{more}")
    return found


def _crawl(browser: Browser, live_server_url: str, rich: crawl_world.Rich) -> Findings:
    findings = Findings()
    tab = Tab(browser, live_server_url, rich.world)
    page = tab.page
    errors_seen: set[tuple[str | None, int]] = set()
    for persona, path, (status, content_type) in crawl_world.walk(rich, EVERYONE, tab.get, _status):
        where = f"{persona or 'anonymous'} {path}"
        if status >= 500:
            findings.errors.append(f"{where}: {status}")
            continue
        if not content_type.startswith("text/html"):
            continue
        if status != 200:
            # The error pages are pages too: each persona's first 403 and first 404.
            if (persona, status) in errors_seen or status not in (403, 404):
                continue
            errors_seen.add((persona, status))
        if not page.evaluate("document.doctype !== null && !!document.querySelector('body')"):
            continue  # a fragment for htmx, not a page
        page.wait_for_function(HTMX_SETTLED)
        _check(page, where, findings)
    tab.context.close()
    return findings


def _check(page: Page, where: str, findings: Findings) -> None:
    """The three checks on the page shown, at 1280 px: axe-core, the top bar, then at 390 px
    the document's width (a screenshot of an overflowing page is saved)."""
    findings.pages.append(where)
    findings.violations += _violations(page, where)
    bar = page.evaluate(TOP_BAR)
    if bar is not None and not (bar["oneRow"] and not bar["below"]):
        findings.bar.append(f"{where}: the top bar wraps at 1280 px ({bar})")
    elif bar is not None and bar["height"] > BAR_MAX_PX:
        findings.bar.append(f"{where}: the top bar is {bar['height']} px high at 1280 px")
    page.set_viewport_size(PHONE)
    width = page.evaluate("document.documentElement.scrollWidth")
    if width > PHONE["width"]:
        findings.too_wide.append(f"{where}: {width} px wide on a 390 px phone")
        SHOTS.joinpath("a11y").mkdir(parents=True, exist_ok=True)
        name = where.replace(" ", "").replace("/", "_").replace("?", "_")
        page.screenshot(path=str(SHOTS / "a11y" / f"{name}-390.png"), full_page=True)
    page.set_viewport_size(DESKTOP)


@pytest.fixture
def findings(
    browser: Browser, live_server: Any, world: World, make_character: Callable[..., Character]
) -> Findings:
    """The crawl's findings, crawled once for the three tests below."""
    global _findings
    if _findings is None:
        rich = crawl_world.build(world, make_character)
        with time_machine.travel(crawl_world.NOW, tick=True):
            try:
                _findings = _crawl(browser, live_server.url, rich)
            except Exception as exc:  # reported by each test, not crawled again by each
                _findings = Findings(errors=[f"The crawl stopped: {exc!r}"])
    _fail_with(_findings.errors, "The crawl could not read every page")
    # It read pages with content, as every persona, or it would pass on nothing.
    assert len(_findings.pages) >= 150, _findings.pages
    assert {p.split(" ")[0] for p in _findings.pages} == {p or "anonymous" for p in EVERYONE}
    return _findings


def _fail_with(lines: list[str], title: str) -> None:
    if lines:
        pytest.fail(f"{title}:\n" + "\n".join(lines), pytrace=False)


def test_every_page_passes_wcag_21_aa(findings: Findings) -> None:
    title = (
        f"{len(findings.violations)} serious or critical axe-core violations (WCAG 2.1 A/AA) "
        f"on {len(findings.pages)} pages"
    )
    _fail_with(findings.violations, title)


def test_no_page_is_wider_than_a_phone(findings: Findings) -> None:
    _fail_with(findings.too_wide, "Wider than a 390 px phone")


def test_the_top_bar_is_one_row_at_1280_px_for_every_role(findings: Findings) -> None:
    _fail_with(findings.bar, "The top bar at 1280 px")


# --- The checks catch what they are for -------------------------------------------------------

BAD_PAGE = """<!doctype html><html lang="en"><head><title>Bad</title></head><body>
<header data-topbar style="display:flex;flex-wrap:wrap;width:300px;max-height:64px">
  <a href="#a">First link of the bar</a><a href="#b">Second link of the bar</a>
  <a href="#c">Third link of the bar</a><a href="#d">Fourth link of the bar</a>
</header>
<main><h1>Bad</h1><img src="data:," width="10" height="10">
<p style="color:#bbb;background:#fff">Too pale to read</p>
<div style="width:600px">A row wider than a phone</div></main></body></html>"""
GOOD_PAGE = """<!doctype html><html lang="en"><head><title>Good</title></head><body>
<header data-topbar style="display:flex;gap:8px;height:56px;align-items:center">
  <a href="#a">Home</a><a href="#b">Desk</a></header>
<main><h1>Good</h1><img src="data:," alt="A dot" width="10" height="10"><p>Readable.</p></main>
</body></html>"""


def test_the_checks_catch_what_they_are_for(browser: Browser) -> None:
    """Without a server: a page with a missing alt, pale text, a wrapping bar and a 600 px row
    fails each check, and a plain page passes them all."""
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    found = {}
    for name, html in (("bad", BAD_PAGE), ("good", GOOD_PAGE)):
        page.set_content(html)
        page.add_script_tag(path=AXE_FILE_PATH)
        found[name] = Findings()
        _check(page, name, found[name])
    context.close()
    bad, good = found["bad"], found["good"]
    rules = {line.split(": ")[1].split(" ")[0] for line in bad.violations}
    assert {"image-alt", "color-contrast"} <= rules, bad.violations
    assert bad.bar and "wraps" in bad.bar[0], bad.bar
    assert bad.too_wide and "px wide on a 390 px phone" in bad.too_wide[0], bad.too_wide
    assert (good.violations, good.bar, good.too_wide) == ([], [], []), good
