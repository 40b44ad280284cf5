"""Pages under load and the deadline rush (issue 15), against a real gunicorn.

- `pages_section(dataset)`: the same concurrent load (4 clients for 15 s) on `/health` and on
  each page, signed in as a storyteller or a player; requests per second and the page's share
  of `/health`'s, measured in the same run. Every response must be a 200 with the page's own
  content (a login redirect or an error page counts as an error).
- `rush_section(dataset)`: locust, headless: 50 players and 5 storytellers sign in (the
  warm-up, reported apart: until all are in, the login's p50/p95), then for 2 minutes the
  players save and submit their downtimes while the storytellers work the desk
  (bench/locustfile.py); requests, errors, p50 and p95 per kind of request and overall in
  that window, from locust's CSV stats (reset when the last one signed in).

Both run on a copy of the dataset's database whose open cycle's deadline is moved two days
ahead (the generator dates its month in the past; a live server would show it closed). The
server runs as in production (DEBUG=0, whitenoise's manifest, HTTPS-only cookies); the clients
play the TLS proxy in front of it: `X-Forwarded-Proto: https`, which the settings trust.

`python bench/load.py [pages|rush|all] [--runs 3] [--rush-runs 1] [--database NAME]` builds
(or reuses) M through generate.py, or copies an already generated NAME, and prints the
figures. The pages' clients use only the standard library; the rush needs locust (the `bench`
extra). The measured server queues its mail on BENCH_LOAD_BROKER_URL (Redis db 10), never
on the pipeline worker's broker.
"""

from __future__ import annotations

import csv
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

if TYPE_CHECKING:
    from bench.report import Figure

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The measured server's own broker: the receipts its submits queue must never reach the
# pipeline benchmark's worker (CELERY_BROKER_URL), which reads another database. No worker
# listens here; the queues are emptied when the server stops.
BROKER = os.environ.get("BENCH_LOAD_BROKER_URL", "redis://127.0.0.1:6379/10")
SECTION_PAGES = "pages under load"
SECTION_RUSH = "deadline rush"
# The goals: a page's requests per second as a share of /health's.
DESK_GOAL = 15
PAGE_GOAL = 10
P95_GOAL_MS = 500


# --- A browser without a browser ---------------------------------------------------------------


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    path: str

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class Browser:
    """One person's cookies over plain HTTP to gunicorn, sent as the TLS proxy forwards them:
    the settings mark cookies Secure and trust X-Forwarded-Proto, so nothing is weakened."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.origin = f"https://{self.host}:{self.port}"
        self.cookies: dict[str, str] = {}

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {
            "Host": f"{self.host}:{self.port}",
            "X-Forwarded-Proto": "https",
            "Accept-Language": "en",
            "Connection": "close",
        }
        cookies = self.cookies
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        headers.update(extra or {})
        return headers

    def request(
        self,
        method: str,
        path: str,
        data: dict[str, str] | list[tuple[str, str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        body = urlencode(data).encode() if data is not None else None
        extra = dict(headers or {})
        if method != "GET":
            # CSRF on HTTPS: the Origin must be this site's.
            extra.setdefault("Origin", self.origin)
            extra.setdefault("Referer", self.origin + path)
            extra.setdefault("Content-Type", "application/x-www-form-urlencoded")
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=self.headers(extra))
            raw = conn.getresponse()
            content = raw.read()
            for header in raw.headers.get_all("Set-Cookie") or []:
                self._keep(header)
            return Response(raw.status, dict(raw.headers.items()), content, path)
        finally:
            conn.close()

    def _keep(self, header: str) -> None:
        jar: SimpleCookie = SimpleCookie()
        jar.load(header)
        # A new dict swapped in whole: the load's threads share one Browser and read it.
        cookies = dict(self.cookies)
        for name, morsel in jar.items():
            if morsel["max-age"] == "0" or morsel.value == "":
                cookies.pop(name, None)
            else:
                cookies[name] = morsel.value
        self.cookies = cookies

    def get(self, path: str, *, follow: bool = True) -> Response:
        response = self.request("GET", path)
        for _hop in range(5):
            if not follow or response.status not in (301, 302, 303):
                break
            response = self.request("GET", local(response.headers["Location"], response.path))
        return response

    def post(self, path: str, data: dict[str, str] | list[tuple[str, str]]) -> Response:
        return self.request("POST", path, data)

    def log_in(self, username: str, password: str) -> Response:
        """The login form with its CSRF token; an account never asked for its date of birth
        gets that one question first (GEN-01), which it skips."""
        page = self.get("/accounts/login/")
        form = forms_of(page.text).by_field("username")
        answer = self.post(
            "/accounts/login/",
            {**form.fields, "username": username, "password": password},
        )
        if answer.status != 302:
            raise RuntimeError(f"login of {username} answered {answer.status}")
        landing = local(answer.headers["Location"], "/accounts/login/")
        if landing.startswith("/account/birth-date/"):
            ask = self.get(landing)
            skip = forms_of(ask.text).by_field("csrfmiddlewaretoken")
            self.post(landing, {**skip.fields, "skip": "1"})
        return answer


def local(location: str, current: str) -> str:
    """A redirect's target as a path on this server."""
    parts = urlsplit(location)
    path = parts.path or current
    return f"{path}?{parts.query}" if parts.query else path


# --- Forms as a browser reads them -------------------------------------------------------------


@dataclass
class Form:
    id: str
    action: str
    method: str
    # Where htmx sends it (a fragment back), when the page enhances the form.
    hx_post: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    # A select's options, so a change can pick among what the page offers.
    options: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


class Forms(list[Form]):
    def by_id(self, form_id: str) -> Form:
        for form in self:
            if form.id == form_id:
                return form
        raise LookupError(f"no form #{form_id} on the page")

    def by_field(self, name: str) -> Form:
        for form in self:
            if name in form.fields:
                return form
        raise LookupError(f"no form with a {name!r} field on the page")


class _FormParser(HTMLParser):
    """Every form's successful fields with their initial values (hidden inputs, text, checked
    boxes, selected options, textareas), including fields outside a form that name it with
    `form="..."`."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms = Forms()
        self._current: Form | None = None
        self._select: tuple[Form, str] | None = None
        self._selected = False
        self._option: str | None = None
        self._option_text = ""
        self._textarea: tuple[Form, str] | None = None

    def _owner(self, attrs: dict[str, str | None]) -> Form | None:
        named = attrs.get("form")
        if named:
            for form in self.forms:
                if form.id == named:
                    return form
        return self._current

    def handle_starttag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        attrs = dict(attrs_list)
        if tag == "form":
            self._current = Form(
                id=attrs.get("id") or "",
                action=attrs.get("action") or "",
                method=(attrs.get("method") or "get").lower(),
                hx_post=attrs.get("hx-post") or "",
            )
            self.forms.append(self._current)
            return
        name = attrs.get("name")
        owner = self._owner(attrs)
        if owner is None or not name:
            if tag == "option" and self._select is not None:
                self._start_option(attrs)
            return
        if tag == "input":
            kind = (attrs.get("type") or "text").lower()
            if kind in ("submit", "button", "image", "reset", "file"):
                return
            if kind in ("checkbox", "radio") and "checked" not in attrs:
                return
            owner.fields[name] = attrs.get("value") or ("on" if kind == "checkbox" else "")
        elif tag == "select":
            self._select = (owner, name)
            self._selected = False
            owner.options[name] = []
        elif tag == "textarea":
            self._textarea = (owner, name)
            owner.fields[name] = ""

    def _start_option(self, attrs: dict[str, str | None]) -> None:
        self._option = attrs.get("value")
        self._option_text = ""
        if self._select is None:
            return
        form, name = self._select
        if "selected" in attrs or (not self._selected and name not in form.fields):
            self._selected = "selected" in attrs
            form.fields[name] = self._option or ""

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            form, name = self._textarea
            form.fields[name] += data
        if self._option is not None or self._select is not None:
            self._option_text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._current = None
        elif tag == "textarea":
            if self._textarea is not None:
                # As browsers do: the newline right after <textarea> is not part of the value.
                form, name = self._textarea
                if form.fields[name].startswith("\n"):
                    form.fields[name] = form.fields[name][1:]
            self._textarea = None
        elif tag == "option" and self._select is not None:
            form, name = self._select
            value = self._option if self._option is not None else self._option_text.strip()
            form.options[name].append((value, self._option_text.strip()))
            if form.fields.get(name) is None:
                form.fields[name] = value
            self._option = None
        elif tag == "select":
            self._select = None


def forms_of(html: str) -> Forms:
    parser = _FormParser()
    parser.feed(html)
    parser.close()
    return parser.forms


# --- The server --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _production_env(database_url: str, var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.update(
        DJANGO_SETTINGS_MODULE="chronicle.settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=BROKER,
        CHRONICLE_VAR_DIR=str(var_dir),
        STATIC_ROOT=str(var_dir / "staticfiles"),
        # Receipts and notices are not what is measured.
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    return env


def _collect_static(var_dir: Path, env: dict[str, str]) -> None:
    """whitenoise's manifest, without which DEBUG=0 pages cannot render; kept between runs
    (compressing every file takes minutes here) until a project static file changes."""
    manifest = var_dir / "staticfiles" / "staticfiles.json"
    if manifest.exists():
        built = manifest.stat().st_mtime
        sources = (p for p in ROOT.glob("*/static/**/*") if p.is_file())
        if all(p.stat().st_mtime < built for p in sources):
            return
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )


@dataclass
class Server:
    base: str
    log: Path
    process: subprocess.Popen[bytes]

    def errors(self) -> str:
        """What the server wrote to its log (tracebacks of failed requests)."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@contextmanager
def server(database: str, *, workers: int = 2) -> Iterator[Server]:
    """gunicorn on a free port against `database`, as in production; stopped on the way out.
    Waits until /health answers 200."""
    from bench.generate import database_url

    var_dir = Path(tempfile.gettempdir()) / "chronicle-bench-load"
    var_dir.mkdir(exist_ok=True)
    env = _production_env(database_url(database), var_dir)
    _collect_static(var_dir, env)
    port = free_port()
    log = var_dir / f"gunicorn-{port}.log"
    gunicorn = Path(sys.executable).with_name("gunicorn")
    command = [str(gunicorn)] if gunicorn.exists() else [sys.executable, "-m", "gunicorn"]
    process = subprocess.Popen(
        [
            *command,
            "chronicle.wsgi:application",
            "--workers",
            str(workers),
            "--bind",
            f"127.0.0.1:{port}",
            "--timeout",
            "120",
            "--error-logfile",
            str(log),
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    running = Server(base=f"http://127.0.0.1:{port}", log=log, process=process)
    try:
        _wait_healthy(running)
        yield running
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        _empty_queues()


def _empty_queues() -> None:
    """Drop the tasks the server queued (mail for a copy that is about to go)."""
    import redis

    if not BROKER.startswith("redis://"):
        return
    client = redis.Redis.from_url(BROKER)
    queues = [key for key in client.keys("*") if not key.startswith(b"_kombu")]
    if queues:
        client.delete(*queues)


def _wait_healthy(running: Server, timeout: float = 90) -> None:
    browser = Browser(running.base)
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            raise RuntimeError(f"gunicorn stopped at start:\n{running.errors()[-3000:]}")
        try:
            answer = browser.get("/health")
            if answer.status == 200:
                return
            last = f"{answer.status} {answer.text[:200]}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.3)
    raise RuntimeError(f"/health never answered 200 ({last})")


# --- The dataset's copy ------------------------------------------------------------------------


def _connect(database: str) -> Any:
    import psycopg

    from bench.generate import database_url

    return psycopg.connect(
        database_url(database).replace("postgres://", "postgresql://", 1), autocommit=True
    )


COPY_SUFFIXES = ("_load_pages", "_load_rush")


def prepare_copy(dataset: Any, name: str) -> str:
    """A copy of the dataset's database with the open cycle's deadline two days from now, as
    on the night before a real deadline."""
    drop_copy(name)
    with _connect("postgres") as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{dataset.database}"')
    cycles = [c.cycle_id for c in dataset.chronicles]
    with _connect(name) as conn:
        conn.execute(
            "UPDATE chronicle_cycle SET deadline_at = now() + interval '2 days' "
            "WHERE id = ANY(%s) AND closed_at IS NULL",
            [cycles],
        )
    return name


def drop_copy(name: str) -> None:
    """Only the copies made here."""
    assert name.endswith(COPY_SUFFIXES), name
    with _connect("postgres") as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def players_without_submission(database: str, slug: str, cycle_id: int, n: int) -> list[str]:
    """Players with one active, approved character and no submission in the cycle yet: the
    ones a deadline rush is about."""
    return _players(database, slug, cycle_id, n, "NOT EXISTS")


def players_who_submitted(database: str, slug: str, cycle_id: int, n: int) -> list[str]:
    """Players with one active, approved character whose downtime is submitted, with its
    actions and votes: the fuller downtime page."""
    return _players(database, slug, cycle_id, n, "EXISTS")


def _players(database: str, slug: str, cycle_id: int, n: int, exists: str) -> list[str]:
    assert exists in ("EXISTS", "NOT EXISTS")
    with _connect(database) as conn:
        rows = conn.execute(
            f"""
            SELECT u.username FROM auth_user u
            JOIN characters_character c ON c.player_id = u.id
            JOIN chronicle_chronicle ch ON ch.id = c.chronicle_id
            WHERE ch.slug = %s AND c.status = 'active' AND c.approval = 'approved'
              AND {exists} (
                SELECT 1 FROM downtimes_submission s
                WHERE s.cycle_id = %s AND s.character_id = c.id)
              AND (SELECT count(*) FROM characters_character o
                   WHERE o.player_id = u.id AND o.chronicle_id = ch.id
                     AND o.status = 'active' AND o.approval = 'approved') = 1
            ORDER BY u.username LIMIT %s
            """,
            [slug, cycle_id, n],
        ).fetchall()
    return [row[0] for row in rows]


# --- Pages under load --------------------------------------------------------------------------


@dataclass
class Page:
    label: str
    browser: Browser
    path: str
    check: Callable[[bytes], bool]
    goal: int = PAGE_GOAL


@dataclass
class Load:
    rps: float
    ok: int
    errors: int
    first_error: str = ""


def hammer(page: Page, *, clients: int, seconds: float) -> Load:
    """`clients` threads asking for the page back to back for `seconds`; each answer must be
    a 200 that passes the page's check."""
    lock = threading.Lock()
    counts = {"ok": 0, "errors": 0}
    first_error: list[str] = []
    start = time.perf_counter()
    stop = start + seconds
    finished: list[float] = []

    def run() -> None:
        while time.perf_counter() < stop:
            try:
                answer = page.browser.request("GET", page.path)
                good = answer.status == 200 and page.check(answer.body)
                problem = "" if good else f"{answer.status}: {answer.text[:300]!r}"
            except (OSError, ValueError) as exc:  # no answer, or JSON that is not
                good, problem = False, f"{type(exc).__name__}: {exc}"
            with lock:
                counts["ok" if good else "errors"] += 1
                if problem and not first_error:
                    first_error.append(problem)
        with lock:
            finished.append(time.perf_counter())

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = max(finished) - start
    return Load(
        rps=counts["ok"] / elapsed,
        ok=counts["ok"],
        errors=counts["errors"],
        first_error=first_error[0] if first_error else "",
    )


def _has(*markers: str) -> Callable[[bytes], bool]:
    wanted = [m.encode() for m in markers]
    return lambda body: all(m in body for m in wanted)


def _links(pattern: str, at_least: int) -> Callable[[bytes], bool]:
    found = re.compile(pattern.encode())
    return lambda body: len(set(found.findall(body))) >= at_least


def _desk_json(body: bytes) -> bool:
    data = json.loads(body)
    return bool(data.get("results")) and "status" in data["results"][0]


def _health_json(body: bytes) -> bool:
    return bool(json.loads(body).get("database") == "ok")


def discover_pages(
    base: str, slug: str, storyteller: str, player: str, password: str
) -> list[Page]:
    """Sign in, find the player's character, and say what each page must contain."""
    st = Browser(base)
    st.log_in(storyteller, password)
    you = Browser(base)
    you.log_in(player, password)
    downtime = you.get(f"/c/{slug}/downtime/")
    found = re.match(rf"/c/{re.escape(slug)}/downtime/(\d+)/", downtime.path)
    if downtime.status != 200 or not found:
        raise RuntimeError(f"{player}'s downtime page: {downtime.status} at {downtime.path}")
    character = found.group(1)
    if 'id="texts"' not in downtime.text:
        raise RuntimeError(f"{player}'s downtime page shows no open form: is the cycle open?")
    sheet = f"/c/{slug}/characters/{character}/"
    anyone = Browser(base)
    return [
        Page("/health", anyone, "/health", _health_json, goal=1),
        Page(
            "desk page",
            st,
            f"/c/{slug}/desk/",
            _has(f"/c/{slug}/desk/items/", 'id="desk-detail"'),
            goal=DESK_GOAL,
        ),
        Page("desk API", st, f"/api/chronicles/{slug}/desk-items/", _desk_json),
        Page(
            "downtime page",
            you,
            f"/c/{slug}/downtime/{character}/",
            _has(f"/c/{slug}/downtime/{character}/save/", 'id="texts"'),
        ),
        # A player's roster lists only their own characters; the storytellers' lists all.
        Page(
            "roster (storyteller)",
            st,
            f"/c/{slug}/characters/",
            _links(rf"/c/{re.escape(slug)}/characters/\d+/", at_least=20),
        ),
        Page("character sheet", you, sheet, _has(f"{sheet}print/")),
    ]


def pages_section(
    dataset: Any, runs: int = 3, *, clients: int = 4, seconds: float = 15
) -> list[Figure]:
    """Requests per second of each page and its share of /health's, `runs` times."""
    from bench.report import Figure

    chronicle = dataset.chronicles[0]
    copy = prepare_copy(dataset, f"{dataset.database}_load_pages")
    player = players_who_submitted(copy, chronicle.slug, chronicle.cycle_id, 1)[0]
    rps: dict[str, list[float]] = {}
    shares: dict[str, list[float]] = {}
    errors: dict[str, list[float]] = {}
    samples: dict[str, str] = {}
    started = time.perf_counter()
    try:
        with server(copy) as running:
            pages = discover_pages(
                running.base, chronicle.slug, chronicle.storytellers[0], player, dataset.password
            )
            for page in pages:
                # Both workers import and warm their caches before anything is timed.
                hammer(page, clients=clients, seconds=1)
            for _run in range(runs):
                health: float | None = None
                for page in pages:
                    load = hammer(page, clients=clients, seconds=seconds)
                    health = load.rps if health is None else health
                    rps.setdefault(page.label, []).append(load.rps)
                    errors.setdefault(page.label, []).append(load.errors)
                    if page.goal > 1:
                        shares.setdefault(page.label, []).append(
                            health / load.rps if load.rps else float("inf")
                        )
                    if load.first_error and page.label not in samples:
                        samples[page.label] = load.first_error
            log = running.errors()
    finally:
        drop_copy(copy)
    seconds_taken = time.perf_counter() - started
    setup = f"{clients} clients × {seconds:g} s, gunicorn 2 workers, DEBUG=0"
    figures = [
        Figure(SECTION_PAGES, "/health", "req/s", rps["/health"], setup),
    ]
    for page in pages[1:]:
        figures.append(Figure(SECTION_PAGES, page.label, "req/s", rps[page.label]))
        figures.append(
            Figure(
                SECTION_PAGES,
                f"{page.label}: /health ÷ page",
                "×",
                shares[page.label],
                f"goal ≤ {page.goal} (≥ 1/{page.goal} of /health)",
            )
        )
    for page in pages:
        note = "goal 0"
        if page.label in samples:
            note += f"; first: {samples[page.label][:120]}"
        figures.append(
            Figure(SECTION_PAGES, f"{page.label}: errors", "responses", errors[page.label], note)
        )
    figures.append(
        Figure(
            SECTION_PAGES,
            "section time",
            "s",
            [seconds_taken],
            f"{runs} runs, copy and start included",
        )
    )
    if "Traceback" in log:
        print(f"server errors during the pages section:\n{log[-4000:]}", file=sys.stderr)
    return figures


# --- The deadline rush -------------------------------------------------------------------------


def rush_section(
    dataset: Any,
    runs: int = 1,
    *,
    players: int = 50,
    storytellers: int = 5,
    measured_seconds: int = 120,
    warmup_limit: int = 300,
    spawn_rate: int = 10,
) -> list[Figure]:
    """locust against a fresh copy per run: everyone signs in (the warm-up, its own figures),
    then `measured_seconds` of saving, submitting and desk work, the figures from locust's
    CSV stats, reset when the last person got in."""
    from bench.report import Figure

    chronicle = dataset.chronicles[0]
    stats: list[dict[str, dict[str, str]]] = []
    phases: list[dict[str, Any]] = []
    logs: list[str] = []
    load_average = os.getloadavg()
    started = time.perf_counter()
    for run in range(runs):
        copy = prepare_copy(dataset, f"{dataset.database}_load_rush")
        try:
            chosen = players_without_submission(copy, chronicle.slug, chronicle.cycle_id, players)
            if len(chosen) < players:
                raise RuntimeError(
                    f"only {len(chosen)} players without a submission; the rush needs {players}"
                )
            with server(copy) as running:
                rows, summary = _locust(
                    running.base,
                    slug=chronicle.slug,
                    players=chosen,
                    storytellers=chronicle.storytellers[:storytellers],
                    password=dataset.password,
                    measured_seconds=measured_seconds,
                    warmup_limit=warmup_limit,
                    spawn_rate=spawn_rate,
                    tag=f"run{run + 1}",
                )
                stats.append(rows)
                phases.append(summary)
                logs.append(running.errors())
        finally:
            drop_copy(copy)
    seconds_taken = time.perf_counter() - started
    load_peak = [max(a, b) for a, b in zip(load_average, os.getloadavg(), strict=True)]
    # The reset keeps the sign-in requests' rows, empty: they are the warm-up's figures.
    names = [
        name
        for name in stats[0]
        if name != "Aggregated" and any(int(s.get(name, {}).get("Request Count", 0)) for s in stats)
    ] + ["Aggregated"]
    window = (
        f"the {measured_seconds} s after all {players + storytellers} signed in; "
        "sign-in requests not included (stats reset then); each person's first step "
        "after a random share of their pause"
    )
    figures: list[Figure] = []
    for name in names:
        rows_ = [s[name] for s in stats if name in s]
        overall = name == "Aggregated"
        label = "overall" if overall else name
        figures += [
            Figure(
                SECTION_RUSH,
                f"{label}: requests",
                "",
                [float(r["Request Count"]) for r in rows_],
                window if overall else "",
            ),
            Figure(
                SECTION_RUSH,
                f"{label}: errors",
                "",
                [float(r["Failure Count"]) for r in rows_],
                "goal 0" if overall else "",
            ),
            Figure(SECTION_RUSH, f"{label}: p50", "ms", [_ms(r["50%"]) for r in rows_]),
            Figure(
                SECTION_RUSH,
                f"{label}: p95",
                "ms",
                [_ms(r["95%"]) for r in rows_],
                f"goal < {P95_GOAL_MS} ms" if overall else "",
            ),
        ]
    figures += _warmup_figures(phases, spawn_rate)
    figures.append(
        Figure(
            SECTION_RUSH,
            "section time",
            "s",
            [seconds_taken],
            f"{players} players + {storytellers} storytellers, warm-up + {measured_seconds} s "
            f"per run, {runs} run(s); load average (max of start, end) "
            + " / ".join(f"{a:.1f}" for a in load_peak),
        )
    )
    if any("Traceback" in log for log in logs):
        print("server errors during the rush:\n" + "\n".join(logs)[-6000:], file=sys.stderr)
    return figures


def _ms(value: str) -> float:
    """A percentile of locust's CSV: "N/A" for a name without requests in that run."""
    return float(value) if value != "N/A" else float("nan")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def _warmup_figures(phases: list[dict[str, Any]], spawn_rate: int) -> list[Figure]:
    """The sign-ins before the measured window: how long until everyone was in, and the
    login POSTs' own times (PBKDF2, a quarter of a CPU-second each)."""
    from bench.report import Figure as figure

    logins = [[ms for name, ms, _bad in p["warmup"] if name.endswith(": log in")] for p in phases]
    signed_in = [
        f"{p['signed_in']} of {p['everyone']} signed in"
        + ("" if p["complete"] else ", the window started at the warm-up limit")
        for p in phases
    ]
    return [
        figure(
            SECTION_RUSH,
            "warm-up: until all signed in",
            "s",
            [p["warmup_seconds"] for p in phases],
            "; ".join(signed_in) + f"; spawned {spawn_rate}/s",
        ),
        figure(SECTION_RUSH, "warm-up: log in p50", "ms", [_percentile(t, 0.5) for t in logins]),
        figure(SECTION_RUSH, "warm-up: log in p95", "ms", [_percentile(t, 0.95) for t in logins]),
        figure(
            SECTION_RUSH,
            "warm-up: sign-in errors",
            "",
            [float(sum(bad for _n, _ms, bad in p["warmup"])) for p in phases],
            "login page, log in, birth-date question and skip",
        ),
        figure(
            SECTION_RUSH,
            "measured window",
            "s",
            [p["measured_seconds"] for p in phases],
            "from the stats reset to locust's stop",
        ),
    ]


def _locust(
    base: str,
    *,
    slug: str,
    players: list[str],
    storytellers: list[str],
    password: str,
    measured_seconds: int,
    warmup_limit: int,
    spawn_rate: int,
    tag: str,
) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
    """One headless locust run: its stats CSV by request name (the measured window) and the
    locustfile's phases (bench/locustfile.py's Phases.summary)."""
    out = Path(tempfile.mkdtemp(prefix="chronicle-rush-"))
    config = out / "rush.json"
    config.write_text(
        json.dumps(
            {
                "slug": slug,
                "players": players,
                "storytellers": storytellers,
                "password": password,
                "measured_seconds": measured_seconds,
                "warmup_limit": warmup_limit,
            }
        )
    )
    users = len(players) + len(storytellers)
    command = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(ROOT / "bench" / "locustfile.py"),
        "--headless",
        "-u",
        str(users),
        "-r",
        str(spawn_rate),
        # The locustfile ends the run after the measured window; this only bounds a warm-up
        # that never completes.
        "-t",
        f"{warmup_limit + measured_seconds + 30}s",
        "--host",
        base,
        "--csv",
        str(out / tag),
        "--only-summary",
        "--stop-timeout",
        "10",
        "--loglevel",
        "WARNING",
    ]
    result = subprocess.run(
        command,
        cwd=ROOT,
        env={
            **os.environ,
            "BENCH_RUSH": str(config),
            "BENCH_RUSH_TIMES": str(out / "times.json"),
            "PYTHONPATH": str(ROOT),
        },
        capture_output=True,
        text=True,
    )
    stats_file = out / f"{tag}_stats.csv"
    times_file = out / "times.json"
    if not stats_file.exists() or not times_file.exists():
        raise RuntimeError(
            f"locust wrote no stats:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    with stats_file.open() as handle:
        rows = {row["Name"]: row for row in csv.DictReader(handle)}
    summary = json.loads(times_file.read_text())
    failures = out / f"{tag}_failures.csv"
    if failures.exists() and failures.read_text().count("\n") > 1:
        print(f"rush failures ({failures}):\n{failures.read_text()[:3000]}", file=sys.stderr)
    else:
        shutil.rmtree(out, ignore_errors=True)
    return rows, summary


# --- Entry point -------------------------------------------------------------------------------


def main(argv: list[str]) -> None:
    import argparse

    from bench.generate import dataset_of, template_database

    parser = argparse.ArgumentParser(description="Pages under load and the deadline rush on M.")
    parser.add_argument("what", nargs="?", choices=["pages", "rush", "all"], default="all")
    parser.add_argument("--runs", type=int, default=3, help="runs of the pages (default 3)")
    parser.add_argument("--rush-runs", type=int, default=1, help="2-minute rushes (default 1)")
    parser.add_argument(
        "--database", help="an already generated database to copy instead of chronicle_bench_m"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    dataset = dataset_of(args.database or template_database("M"))
    print(f"dataset ready in {time.perf_counter() - started:.0f} s ({dataset.database})")
    figures = []
    if args.what in ("pages", "all"):
        figures += pages_section(dataset, runs=args.runs)
    if args.what in ("rush", "all"):
        figures += rush_section(dataset, runs=args.rush_runs)
    print(f"{'figure':<58} {'min':>9} {'median':>9} {'max':>9} unit")
    for figure in figures:
        values = sorted(figure.values)
        middle = values[len(values) // 2]
        print(
            f"{figure.section[:16]:<16} {figure.name:<41} {values[0]:>9.2f} {middle:>9.2f} "
            f"{values[-1]:>9.2f} {figure.unit:<9} {figure.note}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
