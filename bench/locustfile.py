"""The deadline rush (issue 15): players saving and submitting their downtimes while the
storytellers work the desk, through the real forms with their CSRF tokens, as a browser with
htmx sends them. Run by bench/load.py's `rush_section`, which writes the accounts to the JSON
file named by BENCH_RUSH:

    locust -f bench/locustfile.py --headless -u 55 -r 10 -t 7m --host http://127.0.0.1:PORT

It measures the rush, not a storm of sign-ins: each person signs in (on_start), then waits
until all of them have; the last one in resets locust's stats and starts the measured window
(CONFIG["measured_seconds"], 120 by default), at whose end the run quits. `-t` only bounds a
warm-up that never completes (CONFIG["warmup_limit"] seconds, after which the window starts
with whoever got in). Each person's first step comes a random share of their pause after the
window opens, as with people already at work. The sign-in requests are thus not in locust's
stats; their times go to BENCH_RUSH_TIMES with the measured requests', each phase apart.

Request names say who and what ("player: save (htmx)"); every answer is checked for its status
and its content, so a refusal or an error page counts as a failure.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
from http.cookiejar import Cookie
from pathlib import Path
from typing import Any

import gevent
from gevent.event import Event
from locust import HttpUser, between, events, task
from locust.env import Environment
from requests.cookies import RequestsCookieJar

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.load import Form, forms_of  # noqa: E402

CONFIG = json.loads(Path(os.environ["BENCH_RUSH"]).read_text())
SLUG: str = CONFIG["slug"]
PASSWORD: str = CONFIG["password"]
# Each simulated person takes the next account of their kind.
PLAYERS = iter(CONFIG["players"])
STORYTELLERS = iter(enumerate(CONFIG["storytellers"]))
STORYTELLER_COUNT = len(CONFIG["storytellers"])
HTMX = {"HX-Request": "true"}
VERSION = re.compile(rb'name="version"[^>]*value="(\d+)"')
ITEM_ROW = re.compile(rb'data-pk="(\d+)"')
LEFT = re.compile(r"Left this downtime(?:</\w+>)?:\s*(.*?)</p>", re.S)
EVERYONE = len(CONFIG["players"]) + STORYTELLER_COUNT
MEASURED_SECONDS = float(CONFIG.get("measured_seconds", 120))
WARMUP_LIMIT = float(CONFIG.get("warmup_limit", 300))


class Phases:
    """The warm-up (everyone signs in) and the measured window after it: each request's
    (name, milliseconds, failed) by phase, and when each phase began and ended."""

    def __init__(self) -> None:
        self.times: dict[str, list[tuple[str, float, bool]]] = {"warmup": [], "measured": []}
        self.phase = "warmup"
        self.arrived = 0
        self.signed_in = 0
        self.everyone_in = Event()
        self.marks: dict[str, float] = {}
        self.environment: Environment | None = None

    def arrive(self, signed_in: bool) -> None:
        """One person is through their sign-in (or failed it: they must not hold the rest)."""
        self.arrived += 1
        self.signed_in += signed_in
        if self.arrived >= EVERYONE:
            self.start_window()

    def start_window(self) -> None:
        if self.everyone_in.is_set():
            return
        self.marks["warmup_end"] = time.monotonic()
        self.phase = "measured"
        assert self.environment is not None and self.environment.runner is not None
        runner = self.environment.runner
        # Every person is waiting on the event: no request is in flight across the reset.
        runner.stats.reset_all()
        gevent.spawn_later(MEASURED_SECONDS, runner.quit)
        self.everyone_in.set()

    def summary(self) -> dict[str, Any]:
        end = self.marks.get("measured_end", time.monotonic())
        start = self.marks.get("warmup_start", end)
        window = self.marks.get("warmup_end")
        return {
            **self.times,
            "everyone": EVERYONE,
            "signed_in": self.signed_in,
            "complete": self.arrived >= EVERYONE,
            "warmup_seconds": (window or end) - start,
            "measured_seconds": end - window if window else 0.0,
        }


PHASES = Phases()


@events.test_start.add_listener
def _warmup_starts(environment: Environment, **_kw: Any) -> None:
    PHASES.environment = environment
    PHASES.marks["warmup_start"] = time.monotonic()
    # A warm-up that never completes (a person stuck signing in) still gets its window.
    gevent.spawn_later(WARMUP_LIMIT, PHASES.start_window)


@events.request.add_listener
def _record(name: str, response_time: float, exception: Any, **_kw: Any) -> None:
    PHASES.times[PHASES.phase].append((name, response_time, exception is not None))


@events.test_stop.add_listener
def _write_times(**_kw: Any) -> None:
    PHASES.marks.setdefault("measured_end", time.monotonic())
    target = os.environ.get("BENCH_RUSH_TIMES")
    if target:
        Path(target).write_text(json.dumps(PHASES.summary()))


class ProxiedJar(RequestsCookieJar):
    """Keeps the server's Secure cookies for the plain-HTTP hop behind the (played) proxy:
    requests copies the session's cookies into a fresh jar per request, so a cookie policy
    would not travel with them; the flag itself must go."""

    def set_cookie(self, cookie: Cookie, *args: Any, **kwargs: Any) -> None:
        cookie.secure = False
        super().set_cookie(cookie, *args, **kwargs)


class Person(HttpUser):
    abstract = True
    # The longest pause between two steps: the first step comes after a share of it.
    first_pause = 6.0

    def on_start(self) -> None:
        # The server sets Secure cookies (production settings) and trusts X-Forwarded-Proto
        # from its TLS proxy, which these clients play over plain HTTP.
        self.client.cookies = ProxiedJar()
        self.client.headers.update({"X-Forwarded-Proto": "https", "Accept-Language": "en"})
        self.origin = "https://" + self.host.split("://", 1)[1].rstrip("/")

    def post(self, path: str, data: dict[str, str], *, name: str, htmx: str = "", **kw: Any) -> Any:
        headers = {"Origin": self.origin, "Referer": self.origin + path}
        if htmx:
            headers.update({**HTMX, "HX-Target": htmx, "X-CSRFToken": data["csrfmiddlewaretoken"]})
        return self.client.post(
            path,
            data=data,
            headers=headers,
            name=name,
            allow_redirects=False,
            catch_response=True,
            **kw,
        )

    def get(self, path: str, *, name: str, htmx: str = "") -> Any:
        headers = {**HTMX, "HX-Target": htmx} if htmx else {}
        return self.client.get(
            path, headers=headers, name=name, allow_redirects=False, catch_response=True
        )

    def sign_in_and_wait(self, username: str, who: str) -> None:
        """Sign in, then wait for everyone else to have: the measured window starts after."""
        signed_in = False
        try:
            signed_in = self.log_in(username, who)
        finally:
            PHASES.arrive(signed_in)
            PHASES.everyone_in.wait()
        # People already at work are each somewhere in their pause, not all starting at once:
        # without this, the window would open with 55 simultaneous first requests.
        gevent.sleep(random.uniform(0, self.first_pause))

    def log_in(self, username: str, who: str) -> bool:
        with self.get("/accounts/login/", name=f"{who}: login page") as page:
            form = forms_of(page.text).by_field("username")
            page.success()
        with self.post(
            "/accounts/login/",
            {**form.fields, "username": username, "password": PASSWORD},
            name=f"{who}: log in",
        ) as answer:
            if not expect(answer, 302):
                return False
            landing = answer.headers.get("Location", "")
        if landing.startswith("/account/birth-date/"):
            # GEN-01: asked once for a date of birth; "Not now".
            with self.get(landing, name=f"{who}: birth date question") as ask:
                skip = forms_of(ask.text).by_field("csrfmiddlewaretoken")
                expect(ask, 200)
            with self.post(landing, {**skip.fields, "skip": "1"}, name=f"{who}: skip") as done:
                return expect(done, 302)
        return True


def expect(response: Any, status: int, *markers: str, absent: str = "") -> bool:
    """Mark the answer failed unless it has `status`, every marker and not `absent`."""
    if response.status_code != status:
        response.failure(f"{response.status_code} (expected {status}): {response.text[:200]!r}")
        return False
    missing = [m for m in markers if m not in response.text]
    if missing:
        response.failure(f"missing {missing!r}")
        return False
    if absent and absent in response.text:
        response.failure(f"shows {absent!r}: {response.text[:200]!r}")
        return False
    response.success()
    return True


class Player(Person):
    """Logs in, opens the downtime, saves the texts a few times (autosave), adds a special
    power and an influence action, submits once, then comes back to read the page."""

    fixed_count = len(CONFIG["players"])
    # The autosave fires 800 ms after typing stops: a player writing sentences pauses every
    # few seconds, and reads the page between sections.
    wait_time = between(2, 8)
    first_pause = 8.0

    def on_start(self) -> None:
        super().on_start()
        self.username = next(PLAYERS)
        self.sign_in_and_wait(self.username, "player")
        with self.get(f"/c/{SLUG}/downtime/", name="player: downtime home") as home:
            expect(home, 302)
            self.page = home.headers.get("Location", "")
        found = re.match(rf"/c/{re.escape(SLUG)}/downtime/(\d+)/", self.page)
        if not found:
            raise RuntimeError(f"{self.username}: no downtime page ({self.page!r})")
        self.submitted = False
        self.read()
        self.saves_left = random.randint(2, 4)
        self.extras = ["power", "action"]

    def read(self) -> bool:
        # Open (the texts form); once submitted, it says so and stays editable until the deadline.
        markers = ['id="state"', 'id="texts"']
        if self.submitted:
            markers.append('id="submission-status">Submitted<')
        with self.get(self.page, name="player: downtime page") as page:
            if not expect(page, 200, *markers):
                return False
            html = page.text
        forms = forms_of(html)
        self.texts: Form = forms.by_id("texts")
        self.power: Form = forms.by_id("power-form")
        self.action: Form = forms.by_id("action-form")
        self.left = influence_left(html, self.action)
        return True

    @task
    def step(self) -> None:
        if self.saves_left > 0:
            self.saves_left -= 1
            self.save()
            if self.extras and random.random() < 0.5:
                getattr(self, f"add_{self.extras.pop(0)}")()
        elif self.extras:
            getattr(self, f"add_{self.extras.pop(0)}")()
        elif not self.submitted:
            self.submit()
        else:
            self.read()

    def save(self) -> None:
        """What the autosave sends while typing: the texts form, with htmx."""
        data = {
            **self.texts.fields,
            "notes": f"Night {random.randint(1, 999)}: {self.username} watches the docks.",
        }
        with self.post(
            f"{self.page}save/", data, name="player: save (htmx)", htmx="save-status"
        ) as answer:
            if expect(answer, 200, 'id="save-status"', absent='class="error"'):
                found = VERSION.search(answer.content)
                if found:
                    self.texts.fields["version"] = found.group(1).decode()

    def add_power(self) -> None:
        data = {
            **self.power.fields,
            "power": "ritual",
            "target_name": "",
            "description": "Ward the haven before dawn.",
        }
        with self.post(f"{self.page}powers/", data, name="player: add power") as answer:
            expect(answer, 302)
        self.read()

    def add_action(self) -> None:
        if not self.left:
            return
        data = {
            **self.action.fields,
            "action": "investigate",
            "influence": self.left[0],
            "points": "1",
            "target_name": "",
            "target_text": "The warehouse on Pier 9",
            "description": "Who owns the warehouse?",
        }
        with self.post(f"{self.page}actions/", data, name="player: add influence action") as a:
            expect(a, 302)
        self.read()

    def submit(self) -> None:
        with self.post(f"{self.page}submit/", self.texts.fields, name="player: submit") as answer:
            if expect(answer, 302):
                self.submitted = True
        self.read()


def influence_left(html: str, action: Form) -> list[str]:
    """The influence types the page says have points left, as the action form's values."""
    found = LEFT.search(html)
    if not found:
        return []
    by_label = {label: value for value, label in action.options.get("influence", [])}
    left = []
    for part in found.group(1).split(","):
        label, _, points = part.strip().rpartition(" ")
        if points.isdecimal() and int(points) > 0 and label in by_label:
            left.append(by_label[label])
    return left


class Storyteller(Person):
    """Works the desk: the list and its pages, a filter, opens items, changes a status and
    assigns, each on their own share of the items (two storytellers on one item is a
    conflict the desk reports, not what is measured here)."""

    fixed_count = STORYTELLER_COUNT
    # Reading an item or a list takes a storyteller a few seconds.
    wait_time = between(2, 6)

    def on_start(self) -> None:
        super().on_start()
        self.index, self.username = next(STORYTELLERS)
        self.sign_in_and_wait(self.username, "storyteller")
        self.pks: list[int] = []
        self.desk()

    def _rows(self, body: bytes) -> None:
        pks = [int(pk) for pk in ITEM_ROW.findall(body)]
        mine = [pk for pk in pks if pk % STORYTELLER_COUNT == self.index]
        if mine:
            self.pks = mine

    @task(2)
    def desk(self) -> None:
        with self.get(f"/c/{SLUG}/desk/", name="storyteller: desk page") as page:
            if expect(page, 200, f"/c/{SLUG}/desk/items/", 'id="desk-detail"'):
                self._rows(page.content)

    @task(2)
    def browse(self) -> None:
        """Another page of the list, as its Next link loads it."""
        path = f"/c/{SLUG}/desk/?page={random.randint(1, 20)}"
        with self.get(path, name="storyteller: list page (htmx)", htmx="desk-results") as page:
            if expect(page, 200, f"/c/{SLUG}/desk/items/"):
                self._rows(page.content)

    @task(2)
    def filter(self) -> None:
        status = random.choice(["new", "in_progress", "needs_info"])
        path = f"/c/{SLUG}/desk/?status={status}&assignee={random.choice(['', 'me', 'none'])}"
        with self.get(path, name="storyteller: filter (htmx)", htmx="desk-results") as page:
            if expect(page, 200, 'id="desk-total"'):
                self._rows(page.content)

    def open(self) -> tuple[str, Any] | None:
        if not self.pks:
            return None
        path = f"/c/{SLUG}/desk/items/{random.choice(self.pks)}/"
        with self.get(path, name="storyteller: open item (htmx)", htmx="desk-detail") as pane:
            if not expect(pane, 200, 'id="desk-item-form"'):
                return None
            return path, forms_of(pane.text)

    @task(3)
    def read_item(self) -> None:
        self.open()

    @task(2)
    def change_status(self) -> None:
        opened = self.open()
        if opened is None:
            return
        _path, forms = opened
        form = forms.by_id("desk-item-form")
        statuses = [v for v, _label in form.options.get("status", []) if v != form.fields["status"]]
        usable = [s for s in statuses if s in ("new", "in_progress", "needs_info")]
        data = {
            **form.fields,
            "status": random.choice(usable or statuses),
            "st_notes": f"Looked at by {self.username}.",
            "then": "stay",
        }
        with self.post(
            form.hx_post or form.action,
            data,
            name="storyteller: save item (htmx)",
            htmx="desk-detail",
        ) as answer:
            expect(answer, 200, 'id="desk-item-form"')

    @task(1)
    def assign(self) -> None:
        opened = self.open()
        if opened is None:
            return
        _path, forms = opened
        take = [f for f in forms if "/assign/" in f.hx_post and "assignee" in f.fields]
        if not take:
            return  # already theirs
        with self.post(
            take[0].hx_post,
            take[0].fields,
            name="storyteller: assign to me (htmx)",
            htmx="desk-detail",
        ) as answer:
            expect(answer, 200, 'id="desk-item-form"')
