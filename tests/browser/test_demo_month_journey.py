"""The issue's "done means", on the demo chronicle: a storyteller runs the demo's month of
downtime from close to release in the browser, a real Celery worker (on Redis, in this process)
computing the preview, and every XP a player receives is the rules' number, explained on the
preview, reviewed (one override), applied once, and read by the players.

The demo is `manage.py seed_demo` (chronicle elysium-nights). Its dates hang on "now": the latest
game is the last Saturday strictly before today in New York, and its downtime (the open cycle,
after game 3) is due the second Tuesday after it (DT-01), so it is open on every weekday. The
test runs at two frozen instants on different weekdays (game night a week after the game, and
just after midnight following it), and no expectation below names a date or a weekday.

The demo's month, from chronicle/management/commands/seed_demo.py, characters/demo.py and
downtimes/demo.py:
- Game 3's sign-in sheet (`_games`, index 3: player i attended unless (i + 3) % 6 == 0, and
  every one who attended signed the waiver): alice, bob, carmen, esme and felix attended with a
  waiver; dmitri (i = 3) was absent.
- Downtimes: Isabella Moreau (alice) and Marcus Steel (bob) submitted, with game reports and
  votes; Carmen left a draft, which is no downtime (DT-01); Dmitri, Esme and Felix filed none.
- Votes (both voters attended, so both ballots count, DT-06; Isabella is Toreador, so her
  in-character votes count twice):
    feared:      Marcus Steel 2 (Isabella), Old Dmitri 1 (Marcus)   → Marcus Steel, bob
    liked:       Felix Grant 2 (Isabella), Isabella Moreau 1         → Felix Grant, felix
    respected:   Old Dmitri 2 + 1 = 3                                 → Old Dmitri, dmitri
    roleplaying: carmen 1 + 1 = 2 (rank 1; top two win, DT-07)       → carmen
    costume:     felix 1, alice 1: both rank 1 (ties, DT-07)          → felix, alice
  DT-08: felix tops two lists and gets +3 once.

By hand, what each player gets from this cycle (DT-03 2.5 base, submitted downtime or not;
DT-04 nothing without attendance and a waiver; DT-07/08 +3 per winning player; DT-05 no report
picked, so no +3 for reports):
    alice  2.5 base + 3 costume                      = 5.5
    bob    2.5 base + 3 feared                       = 5.5
    carmen 2.5 base (no downtime) + 3 roleplaying    = 5.5
    dmitri 0 (absent, DT-04), his respected win 0    = 0
    esme   2.5 base (no downtime)                    = 2.5
    felix  2.5 base (no downtime) + 3 liked/costume  = 5.5
The storyteller then overrides one award: Dmitri's no-downtime base XP, 0 → 2.5 ("the sign-in
sheet missed him"). The release pays 10 entries (every award above but Dmitri's vote win, which
stays 0) totalling 5.5 × 4 + 2.5 (esme) + 2.5 (dmitri's override) = 27.0 XP.

Waiting for the worker (the resolution, the summary e-mails) is the one wait on the wall clock,
polled with a deadline.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import time
import zoneinfo
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.db import connections
from django.db.models import Sum
from playwright.sync_api import Browser, Locator, Page, expect

from characters.models import Character, XpEntry, XpKind
from chronicle.celery import app
from chronicle.management.commands.seed_demo import DEMO_PASSWORD, DEMO_SLUG
from chronicle.models import Chronicle, Cycle, CycleStatus, CycleTransition
from downtimes.models import OutcomeOverride, ResolutionRun, RunStatus
from tests.browser.conftest import TIMEOUT_MS

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.redis]

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
# Two weekdays (see the docstring): a Saturday's game night, and the first minutes of a Sunday.
INSTANTS = [
    pytest.param(dt.datetime(2025, 3, 15, 21, 0, tzinfo=NEW_YORK), id="saturday-game-night"),
    pytest.param(dt.datetime(2025, 3, 9, 0, 30, tzinfo=NEW_YORK), id="sunday-after-midnight"),
]

PLAYERS = ["alice", "bob", "carmen", "dmitri", "esme", "felix"]
GAME = 3  # the demo's third game opens the cycle the storyteller works
# The hand derivation of the docstring, before the override.
BY_RULES = {
    "alice": Decimal("5.5"),
    "bob": Decimal("5.5"),
    "carmen": Decimal("5.5"),
    "dmitri": Decimal("0"),
    "esme": Decimal("2.5"),
    "felix": Decimal("5.5"),
}
OVERRIDE_TITLE = "Old Dmitri: base XP, no downtime (DT-03)"
OVERRIDE_XP = Decimal("2.5")
OVERRIDE_NOTE = "He was there: the sign-in sheet missed him."
EXPECTED = BY_RULES | {"dmitri": BY_RULES["dmitri"] + OVERRIDE_XP}
PAID_ENTRIES = 10  # alice 2, bob 2, carmen 2, dmitri 1 (the override), esme 1, felix 2
SUMMARY_SUBJECT = f"Elysium Nights Theater: your downtime results after game {GAME}"
WORKER_MS = 60_000
# The done-means says "in minutes": close → release, with the worker, well under two.
JOURNEY_BOUND_S = 120


@pytest.fixture(params=INSTANTS)
def clock(request: pytest.FixtureRequest) -> Iterator[time_machine.Traveller]:
    with time_machine.travel(request.param, tick=True) as traveller:
        yield traveller


@pytest.fixture
def worker(postgres: None, redis_broker: str, clock: time_machine.Traveller) -> Iterator[None]:
    """A real worker on the Redis broker, in a thread of this process (so it runs on this
    test's database and clock, and its e-mails land in `mail.outbox`)."""
    # A message left by an interrupted run names ids that may exist again in this database.
    app.control.purge()

    def close_connections(**kwargs: Any) -> None:
        # The worker thread's own connections: closed, so the test database can be dropped.
        connections.close_all()

    task_postrun.connect(close_connections, weak=False)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            yield
    finally:
        task_postrun.disconnect(close_connections)


def as_user(browser: Browser, base_url: str, username: str) -> Page:
    context = browser.new_context(base_url=base_url, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(rf"/c/{DEMO_SLUG}/$"))
    expect(page.locator("header .who")).to_have_text(username)
    return page


def nav(page: Page, name: str) -> None:
    page.get_by_role("navigation", name="Chronicle").get_by_role("link", name=name).click()


def outcome(page: Page, title: str) -> Locator:
    return page.locator("article.outcome").filter(
        has=page.get_by_role("heading", name=title, exact=True)
    )


def balances() -> dict[str, Decimal]:
    rows = (
        XpEntry.objects.filter(chronicle__slug=DEMO_SLUG, player__username__in=PLAYERS)
        .values_list("player__username")
        .annotate(total=Sum("amount"))
    )
    return {name: Decimal(0) for name in PLAYERS} | dict(rows)


def summaries_sent(count: int) -> list[Any]:
    deadline = time.monotonic() + WORKER_MS / 1000
    while time.monotonic() < deadline:
        sent = [m for m in mail.outbox if m.subject == SUMMARY_SUBJECT]
        if len(sent) >= count:
            return sent
        time.sleep(0.1)
    return [m for m in mail.outbox if m.subject == SUMMARY_SUBJECT]


def test_storyteller_runs_the_demo_month_and_every_xp_is_the_rules(
    worker: None, browser: Browser, live_server: Any
) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    chronicle = Chronicle.objects.get(slug=DEMO_SLUG)
    cycle = Cycle.objects.select_related("game").get(chronicle=chronicle, game__number=GAME)
    assert cycle.status == CycleStatus.OPEN  # whatever the weekday (DT-01)
    before = balances()
    assert not XpEntry.objects.filter(cycle=cycle, kind=XpKind.AWARD).exists()
    pcs = dict(
        Character.objects.filter(chronicle=chronicle, player__username__in=PLAYERS)
        .exclude(status="retired")
        .values_list("player__username", "pk")
    )
    assert set(pcs) == set(PLAYERS)

    # --- 1. Close and resolve, watching the progress to the end. ---------------------------
    st = as_user(browser, live_server.url, "st_lucia")
    started = time.perf_counter()
    nav(st, "Resolution")
    row = st.locator(f"#cycle-{GAME}")
    expect(row).to_contain_text("Open")
    row.get_by_role("link", name=f"Game {GAME}").click()
    expect(st.locator("#no-preview")).to_contain_text("close the cycle, then resolve it")
    st.get_by_role("button", name="Close this downtime now").click()
    expect(st.get_by_role("status")).to_have_text(
        "The cycle is closed; submissions are locked (DT-10)."
    )
    st.get_by_role("button", name="Resolve").click()
    expect(st.get_by_role("status")).to_contain_text("Resolution 1 started")
    progress = st.locator("#progress")
    # The last poll reloads the page (HX-Refresh) with the preview the worker computed.
    expect(progress.locator("[data-run-status]")).to_have_text("done", timeout=WORKER_MS)
    expect(progress).to_contain_text("(100%)")
    status = st.locator("#cycle-status dt:text-is('Status') + dd")
    expect(status).to_have_text("Resolved (preview)")
    expect(st.locator("#before-release")).to_contain_text("pick up to 4 game reports")

    # --- 2. Read the preview: every award with its number and its reason. -------------------
    expect(outcome(st, "Submissions locked").locator(".explanation")).to_have_text(
        "Downtimes submitted before the deadline, which count: 2. Drafts never submitted, which "
        "count as no downtime: 1 (DT-01)."
    )
    preview = {
        "Isabella Moreau: base XP, submitted downtime (DT-03)": (
            "2.5",
            "2.5 XP for a submitted downtime (DT-03).",
        ),
        "Marcus Steel: base XP, submitted downtime (DT-03)": (
            "2.5",
            "2.5 XP for a submitted downtime (DT-03).",
        ),
        "Carmen Vasquez: base XP, no downtime (DT-03)": (
            "2.5",
            "2.5 XP for a cycle without a downtime (DT-03).",
        ),
        "Esme Hart: base XP, no downtime (DT-03)": (
            "2.5",
            "2.5 XP for a cycle without a downtime (DT-03).",
        ),
        "Felix Grant: base XP, no downtime (DT-03)": (
            "2.5",
            "2.5 XP for a cycle without a downtime (DT-03).",
        ),
        OVERRIDE_TITLE: ("0.0", "not paid: the player did not attend the game (DT-04)"),
        "alice: votes won: Best costume (DT-07)": ("3.0", "3 XP for winning Best costume"),
        "bob: votes won: Most feared (DT-07)": ("3.0", "3 XP for winning Most feared"),
        "carmen: votes won: Excellent roleplaying (DT-07)": (
            "3.0",
            "3 XP for winning Excellent roleplaying",
        ),
        "dmitri: votes won: Most respected (DT-07)": (
            "0.0",
            "not paid: the player did not attend the game (DT-04)",
        ),
        # DT-08: two lists topped, one +3.
        "felix: votes won: Most liked, Best costume (DT-07)": (
            "3.0",
            "3 XP for winning Most liked, Best costume, once per player (DT-07/08).",
        ),
    }
    for title, (xp, why) in preview.items():
        found = outcome(st, title)
        expect(found).to_have_count(1)
        expect(found).to_contain_text(f"XP: {xp}")
        expect(found.locator(".explanation")).to_contain_text(why)
    # Every XP-paying outcome of the preview is one of those: nothing else pays (no report
    # picked, DT-05).
    expect(st.locator("article.outcome", has_text="XP: ")).to_have_count(len(preview))
    expect(st.get_by_text("game report picked")).to_have_count(0)

    # --- 3. Override one award, with a note. ---------------------------------------------------
    dmitri = outcome(st, OVERRIDE_TITLE)
    dmitri.get_by_text("Override", exact=True).click()
    dmitri.get_by_label("XP to pay").fill(str(OVERRIDE_XP))
    dmitri.get_by_label("Why (kept with the change)").fill(OVERRIDE_NOTE)
    dmitri.get_by_role("button", name="Save the override").click()
    expect(st.get_by_role("status")).to_have_text(f"Override saved: {OVERRIDE_TITLE}.")
    dmitri = outcome(st, OVERRIDE_TITLE)
    expect(dmitri.locator("s")).to_have_text("0.0")
    expect(dmitri.locator("p", has_text="XP:").locator("strong")).to_have_text("2.5")
    expect(dmitri.locator(".override")).to_contain_text(f"Note: {OVERRIDE_NOTE}")

    # --- 4. Release, through the confirmation; a second confirmation does nothing. -------------
    st.get_by_role("link", name="Release the results…").click()
    plan = st.locator("#release-plan li")
    total = sum(EXPECTED.values(), Decimal(0))
    assert total == Decimal("27.0")
    expect(plan.nth(0)).to_contain_text(
        f"{PAID_ENTRIES} XP entries totalling {total} XP go into the ledger"
    )
    expect(plan.nth(2)).to_have_text(
        "1 storyteller override is applied in place of what was computed."
    )
    expect(plan.nth(4)).to_contain_text(
        f"each of the {len(PLAYERS)} players gets one summary e-mail"
    )
    stale = st.context.new_page()  # the same confirmation, left open in a second tab
    stale.goto(st.url)
    assert not XpEntry.objects.filter(cycle=cycle, kind=XpKind.AWARD).exists()
    # The demo leaves a purchase waiting: the release plan asks to confirm each unfinished group.
    confirm_unfinished(st)
    st.get_by_role("button", name="Release now").click()
    expect(st.get_by_role("status")).to_contain_text("Released: the XP is in the ledger")
    expect(status).to_have_text("Released")
    journey_s = time.perf_counter() - started
    confirm_unfinished(stale)
    stale.get_by_role("button", name="Release now").click()
    expect(stale.get_by_role("status")).to_have_text(
        "The results of this cycle are already released."
    )
    stale.close()
    assert journey_s < JOURNEY_BOUND_S, f"close → release took {journey_s:.1f} s"

    # --- 5. The ledger: the rules' numbers, once. ------------------------------------------------
    after = balances()
    assert {name: after[name] - before[name] for name in PLAYERS} == EXPECTED
    awards = XpEntry.objects.filter(cycle=cycle, kind=XpKind.AWARD)
    per_player = dict(
        awards.values_list("player__username").annotate(total=Sum("amount")).order_by()
    )
    assert per_player == {name: xp for name, xp in EXPECTED.items() if xp}
    assert awards.count() == PAID_ENTRIES
    dmitri_id = get_user_model().objects.get(username="dmitri").pk
    overridden = awards.get(key=f"cycle:{cycle.pk}:no_downtime:base:{dmitri_id}")
    assert overridden.amount == OVERRIDE_XP
    cycle.refresh_from_db()
    assert cycle.status == CycleStatus.RELEASED
    assert CycleTransition.objects.filter(cycle=cycle, status=CycleStatus.RELEASED).count() == 1
    assert list(ResolutionRun.objects.filter(cycle=cycle).values_list("status", flat=True)) == [
        RunStatus.DONE
    ]
    assert OutcomeOverride.objects.get(cycle=cycle).xp == OVERRIDE_XP

    # --- 6. Alice and Bob read their results, and the XP on their sheets. ----------------------
    lines = {
        "alice": ["Base XP: 2.5.", "Votes: Best costume: 3.0 XP."],
        "bob": [
            "The search for Isabella Moreau's havens is resolved",
            "Base XP: 2.5.",
            "Votes: Most feared: 3.0 XP.",
        ],
    }
    sheet_names = {"alice": "Isabella Moreau", "bob": "Marcus Steel"}
    for name, expected_lines in lines.items():
        player = as_user(browser, live_server.url, name)
        nav(player, "Results")
        results = player.locator(f"#results-{GAME}")
        for line in expected_lines:
            expect(results).to_contain_text(line)
        expect(results.locator("li")).to_have_count(len(expected_lines))
        expect(results).not_to_contain_text(OVERRIDE_NOTE)
        player.goto(f"/c/{DEMO_SLUG}/characters/{pcs[name]}/")
        expect(player.get_by_role("heading", name=sheet_names[name])).to_be_visible()
        balance = f"{after[name].normalize():f}"
        expect(player.locator(".xp")).to_have_text(f"XP balance: {balance}")
        history = player.locator("table", has=player.get_by_role("columnheader", name="Balance"))
        # This cycle's two awards, each once, and no other award for this game.
        expect(history.locator("tr", has_text=re.compile(r"(base XP|votes won)"))).to_have_count(2)
        expect(history).not_to_contain_text(f"Game {GAME}:")
        player.context.close()

    # --- 7. One summary e-mail per player, sent by the worker. ---------------------------------
    sent = summaries_sent(len(PLAYERS))
    emails = set(
        get_user_model().objects.filter(username__in=PLAYERS).values_list("email", flat=True)
    )
    assert sorted(m.to[0] for m in sent) == sorted(emails)
    to_alice = next(m for m in sent if m.to == ["alice@example.com"])
    assert "- Base XP: 2.5." in to_alice.body and "- Votes: Best costume: 3.0 XP." in to_alice.body
    st.context.close()


def confirm_unfinished(page: Page) -> None:
    """Tick the release plan's confirmation of every unfinished group it lists."""
    boxes = page.locator(".release-confirmation input[type=checkbox]")
    for i in range(boxes.count()):
        boxes.nth(i).check()
