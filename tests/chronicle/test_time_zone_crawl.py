"""One time zone (issue 12): every page and every API answer, for every persona, with Nightfall
moved to Tokyo (nine hours ahead of UTC, fourteen of New York where it was founded), shows
every moment in Tokyo's time and says so.

On a page: each `<time datetime="…">` with a time of day carries Tokyo's offset (+09:00); no
text a reader sees (text, title, label, placeholder, a field's value, an option) says "UTC",
shows "+00:00" or a bare ISO timestamp ("2024-04-16T14:59"), or names another zone after a
time ("23:59 EDT") or by its name ("America/New_York"). In the API, a text field that embeds a
moment (a message, a state) follows the same rules; a machine field that is one ISO 8601
timestamp is left to the client.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import zoneinfo
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
import time_machine

from characters.models import Character
from chronicle.models import Chronicle
from tests import crawl_world
from tests.conftest import PERSONAS, World

pytestmark = pytest.mark.django_db

TOKYO = "Asia/Tokyo"
EVERYONE: list[str | None] = [*PERSONAS, None]

ISO_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
WHOLE_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
ZONE_AFTER_TIME = re.compile(
    r"\b\d{1,2}:\d{2}(?::\d{2})?\s*\(?([A-Z]{2,5}|[+-]\d{2}(?::?\d{2})?)\b"
)
ZONE_NAME = re.compile(
    r"\b(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)"
    r"/[A-Za-z_]+(?:/[A-Za-z_]+)?"
)
NOT_ZONES = {"AM", "PM", "XP"}
# Attributes a reader sees or hears; a hidden input's or a date field's value is for machines.
SHOWN = ("title", "aria-label", "placeholder", "alt", "value", "label", "aria-description")
MACHINE_INPUTS = {"hidden", "date", "time", "datetime-local", "month", "week"}


def text_problems(text: str, zone: str | None) -> list[str]:
    """What in one piece of text a reader sees shows a moment outside the chronicle's `zone`
    (None: a page of no chronicle, where only UTC and bare timestamps are wrong)."""
    problems = []
    if re.search(r"\bUTC\b", text):
        problems.append("says UTC")
    if "+00:00" in text:
        problems.append("shows +00:00")
    if ISO_MOMENT.search(text):
        problems.append("shows a bare ISO timestamp")
    if zone is not None:
        here = _abbreviations(zone)
        for named in ZONE_AFTER_TIME.findall(text):
            if named not in NOT_ZONES and named not in here:
                problems.append(f"a time in {named}, not {'/'.join(sorted(here))}")
        for name in ZONE_NAME.findall(text):
            if name != zone:
                problems.append(f"names the zone {name}")
    return problems


def _abbreviations(zone: str) -> set[str]:
    """The names a zone goes by in a year (EST and EDT; JST), and its offsets written out."""
    tz = zoneinfo.ZoneInfo(zone)
    names: set[str] = set()
    for month in range(1, 13):
        moment = dt.datetime(2024, month, 1, 12, tzinfo=tz)
        names.add(moment.strftime("%Z"))
        offset = moment.strftime("%z")
        names |= {offset, f"{offset[:3]}:{offset[3:]}", offset[:3]}
    return names


class _Page(HTMLParser):
    """The moments of a page: its <time> elements' datetime attributes, and the text and
    attribute values a reader sees (with where each is)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.times: list[str] = []
        self.shown: list[tuple[str, str]] = []
        self._skip = 0
        self._zone_select = False
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag in ("script", "style", "template"):
            self._skip += 1
        if tag == "select":
            # The zone picker lists every zone by name: that is its job.
            self._zone_select = "zone" in values.get("name", "")
        if tag == "time" and "datetime" in values:
            self.times.append(values["datetime"])
        machine = tag == "input" and values.get("type", "text") in MACHINE_INPUTS
        for name in SHOWN:
            if values.get(name) and not (name == "value" and (machine or self._zone_select)):
                self.shown.append((f"<{tag} {name}>", values[name]))
        if tag not in ("input", "meta", "link", "br", "img", "hr", "source"):
            self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template"):
            self._skip = max(0, self._skip - 1)
        if tag == "select":
            self._zone_select = False
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self._skip or not data.strip() or self._zone_select:
            return
        where = self._stack[-1] if self._stack else "text"
        self.shown.append((f"<{where}>", data.strip()))


def page_problems(html: str, zone: str | None) -> tuple[list[str], int]:
    """The moments of a page shown outside `zone`, and how many <time> moments it has."""
    page = _Page()
    page.feed(html)
    problems = []
    moments = 0
    for value in page.times:
        if "T" not in value and " " not in value.strip():
            continue  # a day alone has no zone
        moments += 1
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            problems.append(f'<time datetime="{value}"> is not ISO 8601')
            continue
        if moment.tzinfo is None:
            problems.append(f'<time datetime="{value}"> has no offset')
        elif zone is not None:
            expected = moment.astimezone(zoneinfo.ZoneInfo(zone)).utcoffset()
            if moment.utcoffset() != expected:
                problems.append(f'<time datetime="{value}"> is not at {zone}\'s offset {expected}')
    for where, text in page.shown:
        problems += [f"{where} {text[:80]!r} {p}" for p in text_problems(text, zone)]
    return problems, moments


def api_problems(body: Any, zone: str | None) -> list[str]:
    """The text fields of an API answer that show a moment outside `zone`."""
    problems = []
    for path, value in _strings(body, "$"):
        if WHOLE_ISO.match(value.strip()):
            continue  # a machine timestamp, read by a program
        problems += [f"{path} {value[:80]!r} {p}" for p in text_problems(value, zone)]
    return problems


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


# --- The checks catch what they are for ----------------------------------------------------


@pytest.mark.parametrize(
    ("html", "wrong"),
    [
        ('<time datetime="2024-04-16T14:59:00+00:00">Tue 16 Apr, 14:59</time>', "offset"),
        ('<time datetime="2024-04-16T10:59:00-04:00">x</time>', "offset"),
        ('<time datetime="2024-04-16T14:59:00">x</time>', "no offset"),
        ("<p>Due Tue 16 Apr 2024, 14:59 UTC</p>", "UTC"),
        ("<p>Due Tue 16 Apr 2024, 10:59 EDT</p>", "EDT"),
        ("<p>Submitted 2024-04-16 14:59</p>", "ISO"),
        ('<abbr title="2024-04-16T14:59:00+00:00">soon</abbr>', "+00:00"),
        ("<select name=cycle><option>deadline Wed 9 Dec 2026, 04:59 UTC</option></select>", "UTC"),
        ("<p>(America/New_York)</p>", "America/New_York"),
    ],
)
def test_the_page_check_finds_a_moment_outside_the_zone(html: str, wrong: str) -> None:
    problems, _ = page_problems(html, TOKYO)
    assert problems and any(wrong in p for p in problems), problems


def test_the_page_check_passes_moments_in_the_zone() -> None:
    html = (
        '<time datetime="2024-04-17T12:59:00+09:00">Wed 17 Apr 2024, 12:59 JST</time>'
        '<time datetime="2024-04-06">Sat 6 Apr 2024</time><p>Game at 19:30, XP 2.5</p>'
        '<input type="hidden" value="2024-04-17T12:59"><input type="date" value="2024-04-06">'
        '<select name="timezone"><option>UTC</option><option>America/New_York</option></select>'
    )
    assert page_problems(html, TOKYO) == ([], 1)


def test_the_api_check_reads_text_not_timestamps() -> None:
    body = {
        "deadline_local": "2024-04-17T12:59:00+09:00",
        "created_at": "2024-04-10T16:00:00Z",
        "state": {"text": "Closed early by the storytellers on Wed 10 Apr 2024, 16:00 UTC."},
    }
    problems = api_problems(body, TOKYO)
    assert problems and all(p.startswith("$.state.text ") for p in problems), problems
    assert any("says UTC" in p for p in problems)


# --- The crawl -------------------------------------------------------------------------------


@pytest.fixture
def tokyo(world: World, make_character: Callable[..., Character]) -> Iterator[crawl_world.Rich]:
    rich = crawl_world.build(world, make_character)
    Chronicle.objects.filter(pk=world.chronicle.pk).update(timezone=TOKYO)
    world.chronicle.refresh_from_db()
    with time_machine.travel(crawl_world.NOW, tick=True):
        yield rich


def _zone(persona: str | None, path: str, world: World) -> str | None:
    """The zone a page's moments belong in: its chronicle's, or for a page of no chronicle
    (the account, the list of chronicles) the one chronicle of the persona's, if one."""
    if path.startswith(f"/c/{world.chronicle.slug}/") or "/nightfall/" in path:
        return TOKYO
    chronicles = (
        {m.chronicle.timezone for m in world.users[persona].memberships.select_related("chronicle")}
        if persona
        else set()
    )
    return chronicles.pop() if len(chronicles) == 1 else None


def _clients(world: World) -> Callable[[str | None, str], Any]:
    clients: dict[str | None, Any] = {}

    def get(persona: str | None, path: str) -> Any:
        if persona not in clients:
            clients[persona] = crawl_world.client(world, persona)
        return clients[persona].get(path)

    return get


def test_every_page_shows_moments_in_the_chronicles_zone(
    world: World, tokyo: crawl_world.Rich
) -> None:
    problems: list[str] = []
    errors: list[str] = []
    pages = moments = 0
    for persona, path, response in crawl_world.walk(
        tokyo, EVERYONE, _clients(world), lambda r: r.status_code
    ):
        if response.status_code >= 500:
            errors.append(f"{persona} {path}: {response.status_code}")
        if not response["Content-Type"].startswith("text/html"):
            continue
        pages += response.status_code == 200
        found, count = page_problems(response.content.decode(), _zone(persona, path, world))
        moments += count
        problems += [f"{persona} {path}: {p}" for p in found]
    assert not errors, "Server errors:\n" + "\n".join(errors)
    assert not problems, "Moments outside Asia/Tokyo:\n" + "\n".join(sorted(set(problems)))
    # The crawl read pages with moments on them, or it would pass on empty pages.
    assert pages >= 100 and moments >= 50, (pages, moments)


def test_every_api_answer_shows_moments_in_the_chronicles_zone(
    world: World, tokyo: crawl_world.Rich
) -> None:
    problems: list[str] = []
    errors: list[str] = []
    answers = 0
    for persona, path, response in crawl_world.walk(
        tokyo, EVERYONE, _clients(world), lambda r: r.status_code, api=True
    ):
        if response.status_code >= 500:
            errors.append(f"{persona} {path}: {response.status_code}")
        if not response["Content-Type"].startswith("application/json"):
            continue
        answers += response.status_code == 200
        body = json.loads(response.content)
        problems += [
            f"{persona} {path}: {p}" for p in api_problems(body, _zone(persona, path, world))
        ]
    assert not errors, "Server errors:\n" + "\n".join(errors)
    assert not problems, "Moments outside Asia/Tokyo:\n" + "\n".join(sorted(set(problems)))
    assert answers >= 50, answers
