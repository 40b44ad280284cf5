"""The between-games pipeline in a real browser (issue 6, DT-10): a storyteller closes a cycle
with the Close button, resolves it and watches the progress bar move and finish while a real
Celery worker (on Redis, in this process) runs the steps; she overrides a search result with a
note, releases through the confirmation that says what will happen, and the searcher's player
reads his results, and finds the haven on his searches page.

Issue 12: the preview is browsed by step (tabs with counts) and filtered by character, the
override made in the filtered view returns to it, "Re-resolve" is disabled while the run is in
flight, and the release asks for a confirmation of each group of unfinished work (an at-game
request still New on the desk, an XP purchase still waiting), refusing beside the checkbox left
unticked. Screenshots at 1280 and 390 px go to var/screenshots/ (not committed), and the
resolution and release pages fit a 390 px phone.

The month, built with the services before the browser opens (the world's first game, Saturday
9 March 2024 in New York; the downtime is due on Tuesday 19 March at 23:59, DT-01):
- Alice's Marguerite owns The Glasshouse and submitted her downtime; Bob's Victor did not, and
  searched for Marguerite's havens with 10 Business. Both attended and signed the waiver.
- HAV-25: Marguerite's hiding points are (mental 5 + influences 3) x 2 = 16; HAV-25b: 10 is
  not more than 16, so the search finds nothing. The storyteller rules it found.
- Unfinished: Victor's request to leave the city, recorded at the game and still New on the
  desk, and Marguerite's Social +1, still waiting for sign-off (the preview says so in its XP
  purchases step; the release does not charge it).
- Three NPCs beside the two PCs, so that with one subject per task every step has several
  chunks (DT-10 order, by hand): lock 1 (whole), no-downtime 5 (characters), havens 1 (whole),
  Herd blood 5, torpor holds 5, diablerie 5, XP purchases 5 (characters), awards 4 and
  notifications 4 (the chronicle's four members): 35 chunks.
- The preview (by hand): lock 1; no-downtime 2 (Victor's cash-in and Bob's base XP, DT-03);
  searches 2 (the Glasshouse tested, the search resolved); XP purchases 1 (Marguerite's, waiting);
  awards 1 (Alice's base XP for a submitted downtime); notifications 2 (one summary per player
  who reads a result): 9.
- The release: 2 XP entries of 2.5 (DT-03, both eligible under DT-04) = 5.0 XP to 2 players.

To see the bar move rather than race the worker, the worker gets the pipeline's test hook
(CHRONICLE_PIPELINE_TEST_HOLD): a chunk of the no-downtime step, then one of the awards step,
waits while a file of this test exists. The page shows 1 of 35 chunks done, then (polled in
place by htmx, the same document) 27 of 35, then reloads itself when the run is done.

Time is the clock of the world's downtime, ticking (the live server and the worker read it).
Waiting for the worker's e-mails is the one wait on the wall clock, polled with a deadline.
"""

from __future__ import annotations

import datetime as dt
import os
import time
import zoneinfo
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import time_machine
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.conf import settings
from django.core import mail
from django.db import connections
from playwright.sync_api import Browser, Locator, Page, expect

from characters.models import Character, PurchaseStatus, XpEntry, XpPurchase
from chronicle import services as chronicle_services
from chronicle.celery import app
from chronicle.models import CycleStatus
from downtimes.models import (
    ActionKind,
    ChunkStatus,
    Outcome,
    OutcomeOverride,
    ResolutionRun,
    RunStatus,
    StepChunk,
)
from downtimes.services import desk, submissions
from havens.models import Find, Structure
from havens.services import searches
from tests.browser.conftest import TIMEOUT_MS, log_in
from tests.conftest import World
from tests.havens import conftest as havens_conftest

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.redis]

make_haven = havens_conftest.make_haven

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
NOW = dt.datetime(2024, 3, 15, 12, 0, tzinfo=NEW_YORK)  # in the downtime after game 1

ALICE_PC = "Marguerite Delacroix"
BOB_PC = "Victor Crane"
NPCS = ["Old Tom", "The Harbourmaster", "Sister Agnes"]
HAVEN = "The Glasshouse"
LOCATION = "Behind the old conservatory, Elm Park"
MENTAL, BUSINESS = 5, 3
HIDING_POINTS = (MENTAL + BUSINESS) * 2  # HAV-25: herd, occult, government, underworld are 0
SEARCH_SPEND = 10  # HAV-25b: 10 is not more than 16
NOTE = "Victor's ghoul followed her car home on Thursday."

# Chunks per step with one subject per task: 5 characters, 4 members (see the docstring).
CHUNKS = {
    "lock": 1,
    "no_downtime": 5,
    "havens": 1,
    "herd_blood": 5,
    "torpor_holds": 5,
    "diablerie_steps": 5,
    "xp_purchases": 5,
    "awards": 4,
    "notifications": 4,
}
TOTAL = sum(CHUNKS.values())  # 35
BEFORE_AWARDS = TOTAL - CHUNKS["awards"] - CHUNKS["notifications"]  # 27
# Waits on the real worker: a resolution, or PostgreSQL coming back after another test's fault.
WORKER_MS = 60_000
SHOTS = Path(os.environ.get("CHRONICLE_SCREENSHOTS", Path(settings.VAR_DIR) / "screenshots"))


def shoot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"pipeline-{name}.png"), full_page=True)


def fits_a_phone(page: Page, name: str) -> None:
    """The page the storyteller is on, in the same session at 390 px: shot, and nothing wider
    than the screen."""
    assert page.context.browser is not None
    phone = page.context.browser.new_context(
        viewport={"width": 390, "height": 844},
        locale="en-US",
        storage_state=page.context.storage_state(),
    )
    try:
        phone_page = phone.new_page()
        phone_page.goto(page.url)
        width = phone_page.evaluate("document.documentElement.scrollWidth")
        shoot(phone_page, f"{name}-390")
    finally:
        phone.close()
    assert width <= 390, f"{name} is {width}px wide on a 390px phone"


@pytest.fixture
def clock() -> Iterator[time_machine.Traveller]:
    with time_machine.travel(NOW, tick=True) as traveller:
        yield traveller


@pytest.fixture
def worker(postgres: None, redis_broker: str, clock: time_machine.Traveller) -> Iterator[None]:
    """A real worker on the Redis broker, in a thread of this process (so it runs on this
    test's database and clock, and its e-mails land in `mail.outbox`)."""
    # A message left by an earlier, interrupted run names a chunk id that may exist again in
    # this database: it would run that chunk out of DT-10 order.
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


@pytest.fixture
def holds(worker: None, settings: Any, tmp_path: Path) -> Iterator[dict[str, Path]]:
    """The pipeline's test hook: a chunk of each step named here waits while its file exists.
    Depends on the worker so that, when the test fails half-way, the files go before the
    worker is stopped (else it would wait out its chunk)."""
    files = {step: tmp_path / f"hold-{step}" for step in ("no_downtime", "awards")}
    for path in files.values():
        path.touch()
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = 1
    settings.CHRONICLE_PIPELINE_TEST_HOLD = {step: str(path) for step, path in files.items()}
    try:
        yield files
    finally:
        for path in files.values():
            path.unlink(missing_ok=True)


def as_user(browser: Browser, live_server_url: str, username: str) -> Page:
    context = browser.new_context(base_url=live_server_url, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    log_in(page, username)
    return page


def nav(page: Page, name: str) -> None:
    page.get_by_role("navigation", name="Chronicle").get_by_role("link", name=name).click()


def section(page: Page, heading: str) -> Locator:
    return page.locator("section").filter(has=page.get_by_role("heading", name=heading))


def outcome(page: Page, title: str) -> Locator:
    """One outcome of the preview, by its title."""
    return page.locator("article.outcome").filter(
        has=page.get_by_role("heading", name=title, exact=True)
    )


SUMMARY_SUBJECT = "Nightfall: your downtime results after game 1"


def summaries_sent(count: int, deadline_s: float = WORKER_MS / 1000) -> list[Any]:
    """The summary e-mails the worker sends after the release (a task of its own); the
    outbox also holds the receipt of Alice's submission."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        sent = [m for m in mail.outbox if m.subject == SUMMARY_SUBJECT]
        if len(sent) >= count:
            return sent
        time.sleep(0.1)
    return [m for m in mail.outbox if m.subject == SUMMARY_SUBJECT]


def build_month(world: World, make_character: Callable[..., Any], make_haven: Any) -> Structure:
    alice, bob, st = (world.users[n] for n in ("player_alice", "player_bob", "storyteller"))
    marguerite = make_character(
        ALICE_PC,
        player="player_alice",
        mental=MENTAL,
        business=BUSINESS,
        herd=0,
        occult=0,
    )
    victor = make_character(
        BOB_PC, player="player_bob", clan="brujah", business=SEARCH_SPEND, herd=2, occult=0
    )
    for name in NPCS:
        make_character(name, player=None)
    haven = make_haven(marguerite, name=HAVEN, location=LOCATION)
    chronicle_services.attendance_record(
        game=world.game,
        lines=[
            chronicle_services.SignIn(player_id=alice.pk, attended=True, waiver_signed=True),
            chronicle_services.SignIn(player_id=bob.pk, attended=True, waiver_signed=True),
        ],
        by=st,
    )
    draft = submissions.submission_for_edit(character=marguerite, cycle=world.game.cycle, by=alice)
    draft = submissions.submission_save(
        submission=draft,
        by=alice,
        game_report="The Prince's court went quiet.",
        version=draft.version,
    )
    submissions.submission_submit(submission=draft, by=alice)
    searches.search_submit(
        character=victor,
        target_name=ALICE_PC,
        influence="business",
        points=SEARCH_SPEND,
        by=bob,
        key="victor-looks-for-marguerite",
    )
    # Unfinished at the release (issue 12): a request made at the game, still New on the desk,
    # and a purchase still waiting for sign-off.
    desk.at_game_request_record(
        cycle=world.game.cycle,
        character=victor,
        by=st,
        action=ActionKind.LEAVE_CITY,
        description="Victor asks to leave for Providence after the game.",
        requested_at=NOW - dt.timedelta(days=6),
        key="victor-leaves",
    )
    XpPurchase.objects.create(
        character=marguerite,
        kind="trait",
        target="social",
        cost=Decimal(1),
        cycle=world.game.cycle,
        status=PurchaseStatus.REQUESTED,
        requested_by=alice,
        requested_at=NOW,
    )
    return haven


def test_storyteller_closes_resolves_overrides_releases_and_a_player_reads_it(
    world: World,
    make_character: Callable[..., Any],
    make_haven: Any,
    holds: dict[str, Path],
    browser: Browser,
    live_server: Any,
) -> None:
    haven = build_month(world, make_character, make_haven)
    cycle = world.game.cycle
    assert Character.objects.filter(chronicle=world.chronicle).count() == 5

    # --- 1. The storyteller opens the cycle and closes it. ----------------------------------
    st = as_user(browser, live_server.url, "storyteller")
    nav(st, "Resolution")
    expect(st.get_by_role("heading", name="Resolution of the downtimes")).to_be_visible()
    row = st.locator("#cycle-1")
    expect(row).to_contain_text("Open")
    expect(row).to_contain_text("not resolved yet")
    row.get_by_role("link", name="Game 1").click()
    expect(
        st.get_by_role("heading", name="Resolution of the downtime after game 1")
    ).to_be_visible()
    status = st.locator("#cycle-status dt:text-is('Status') + dd")
    expect(status).to_have_text("Open")
    expect(st.get_by_role("button", name="Resolve")).to_have_count(0)
    st.get_by_role("button", name="Close this downtime now").click()
    expect(st.get_by_role("status")).to_contain_text(
        "The cycle is closed; submissions are locked (DT-10)."
    )
    expect(status).to_have_text("Closed")
    cycle.refresh_from_db()
    assert cycle.status == CycleStatus.CLOSED

    # --- 2. Resolve, and watch the bar while the worker runs the steps. -----------------------
    st.get_by_role("button", name="Resolve").click()
    expect(st.get_by_role("status")).to_contain_text("Resolution 1 started")
    progress = st.locator("#progress")
    bar = st.locator("#progress-bar")
    run_status = progress.locator("[data-run-status]")

    def step_row(step: str) -> Locator:
        return progress.locator(f"tr[data-step='{step}'] td").nth(1)

    # Held in a no-downtime chunk: only the lock step is done.
    expect(progress).to_contain_text(f"1 of {TOTAL} chunks done (3%)", timeout=WORKER_MS)
    expect(bar).to_be_visible()
    expect(bar).to_have_attribute("value", "3")
    expect(run_status).to_have_text("running")
    expect(step_row("lock")).to_have_text("1 / 1")
    expect(step_row("no_downtime")).to_have_text("0 / 5")
    expect(step_row("awards")).to_have_text("0 / 4")
    # The release waits for a finished preview, and resolving again for this run to end.
    expect(st.get_by_role("link", name="Release the results…")).to_have_count(0)
    expect(st.get_by_role("button", name="Re-resolve")).to_be_disabled()
    expect(st.locator("#resolve-why")).to_contain_text(
        "You can resolve again once the running resolution has finished or failed"
    )
    st.evaluate("window.sameDocument = true")

    holds["no_downtime"].unlink()
    # Held again in an awards chunk: every step before it is done, polled in place.
    expect(progress).to_contain_text(
        f"{BEFORE_AWARDS} of {TOTAL} chunks done (77%)", timeout=WORKER_MS
    )  # round(100 x 27 / 35)
    expect(bar).to_have_attribute("value", "77")
    expect(step_row("no_downtime")).to_have_text("5 / 5")
    expect(step_row("xp_purchases")).to_have_text("5 / 5")
    expect(step_row("awards")).to_have_text("0 / 4")
    expect(run_status).to_have_text("running")
    assert st.evaluate("window.sameDocument") is True, "the bar moved by reloading the page"

    holds["awards"].unlink()
    # Done: the last poll reloads the page (HX-Refresh), with the preview the run computed.
    expect(run_status).to_have_text("done", timeout=WORKER_MS)
    expect(progress).to_contain_text(f"{TOTAL} of {TOTAL} chunks done (100%)")
    expect(bar).to_have_attribute("value", "100")
    expect(step_row("notifications")).to_have_text("4 / 4")
    assert st.evaluate("window.sameDocument") is None, "the page did not reload when done"
    expect(st.locator("#progress[hx-get]")).to_have_count(0)  # polling stopped
    expect(status).to_have_text("Resolved (preview)")
    expect(st.get_by_role("button", name="Re-resolve")).to_be_enabled()
    expect(st.get_by_role("heading", name="Preview: 9 outcomes")).to_be_visible()
    expect(outcome(st, "Submissions locked").locator(".explanation")).to_contain_text(
        "Downtimes submitted before the deadline, which count: 1. Drafts never submitted, which "
        "count as no downtime: 0"
    )

    # --- 3. Browse: a tab per step with its count, a filter by character. -------------------
    steps = st.get_by_role("navigation", name="Steps")
    expect(steps.get_by_role("link", name="All steps")).to_have_attribute("aria-current", "page")
    expect(steps.locator("[data-step='searches'] .count")).to_have_text("2")
    expect(steps.locator("[data-step='xp_purchases'] .count")).to_have_text("1")
    expect(steps.locator("[data-step='awards'] .count")).to_have_text("1")
    steps.locator("[data-step='searches']").click()
    expect(st.locator("article.outcome")).to_have_count(2)
    expect(
        st.get_by_role("navigation", name="Steps").locator("[aria-current='page']")
    ).to_contain_text("Searches (HAV-25b)")
    st.get_by_role("navigation", name="Steps").get_by_role("link", name="All steps").click()
    st.get_by_label("Player or character").fill("victor")
    st.get_by_role("button", name="Filter").click()
    victors = Outcome.objects.filter(cycle=cycle, character__name__icontains="victor").count()
    assert victors >= 3  # his cash-in and his search's two lines, at least
    expect(
        st.get_by_role("heading", name=f"Preview: {victors} outcomes (filtered)")
    ).to_be_visible()
    expect(st.locator("article.outcome")).to_have_count(victors)
    title = f"Search for {ALICE_PC}: {HAVEN} not found"
    expect(outcome(st, title)).to_have_count(1)
    expect(outcome(st, f"{ALICE_PC}: base XP, submitted downtime (DT-03)")).to_have_count(0)
    shoot(st, "resolution-filtered-1280")
    fits_a_phone(st, "resolution-filtered")

    # --- 4. Override the search: not found → found, with a note. ------------------------------
    search = outcome(st, title)
    expect(search.locator(".explanation")).to_contain_text(
        f"{BOB_PC} ({SEARCH_SPEND} business) searched for {ALICE_PC}'s havens"
    )
    expect(search.locator(".explanation")).to_contain_text(
        f"search of {SEARCH_SPEND} influence against {HIDING_POINTS} hiding points: not found"
    )
    expect(search.locator(".override")).to_have_count(0)
    search.get_by_text("Override", exact=True).click()
    # Saved without a ruling: refused beside the field, the note kept.
    search.get_by_label("Why (kept with the change)").fill(NOTE)
    search.get_by_role("button", name="Save the override").click()
    search = outcome(st, title)
    expect(search.get_by_role("alert")).to_have_text("Say whether the search finds its target.")
    expect(search.get_by_label("Why (kept with the change)")).to_have_value(NOTE)
    search.get_by_label("Yes: the search finds its target").check()
    search.get_by_role("button", name="Save the override").click()
    expect(st.get_by_role("status")).to_contain_text(f"Override saved: {title}.")
    assert "who=victor" in st.url  # back where the storyteller was
    search = outcome(st, title)
    override = search.locator(".override")
    expect(override).to_contain_text("Overridden by storyteller on")
    expect(override).to_contain_text(f": found. Note: {NOTE}")
    expect(search.get_by_role("button", name="Remove the override")).to_be_visible()
    assert OutcomeOverride.objects.get(cycle=cycle).found is True

    # --- 5. Release, through the confirmation of what is unfinished. --------------------------
    st.get_by_role("link", name="Release the results…").click()
    expect(
        st.get_by_role("heading", name="Release the results of the downtime after game 1")
    ).to_be_visible()
    plan = st.locator("#release-plan li")
    expect(plan.nth(0)).to_have_text(
        "2 XP entries totalling 5.0 XP go into the ledger (the XP report lists each one with "
        "its player)."
    )
    expect(plan.nth(1)).to_contain_text("2 haven outcomes")
    expect(plan.nth(2)).to_have_text(
        "1 storyteller override is applied in place of what was computed."
    )
    expect(plan.nth(4)).to_contain_text("The preview's 9 outcomes become final")
    expect(plan.nth(4)).to_contain_text("each of the 2 players gets one summary e-mail")
    expect(st.locator("#release-plan")).to_contain_text("This cannot be undone.")
    unfinished = st.locator("#release-unfinished")
    expect(unfinished.locator("#unfinished-desk")).to_contain_text(
        f"{BOB_PC}: Leave the city (INF-04)"
    )
    expect(unfinished.locator("#unfinished-purchases")).to_contain_text(
        f"{ALICE_PC}: Trait social +1 for 1.0 XP"
    )
    assert not XpEntry.objects.filter(cycle=cycle).exists()  # nothing applied yet
    # Only the purchases ticked: refused, the error beside the desk's box, the tick kept.
    desk_box = st.get_by_label("I know 1 influence desk item is unfinished and release anyway.")
    purchases_box = st.get_by_label(
        "I know 1 XP purchase is still waiting for sign-off and release anyway: it is not "
        "charged by this release."
    )
    purchases_box.check()
    st.get_by_role("button", name="Release now").click()
    desk_field = st.locator(".field", has=st.locator("#id_confirm_desk"))
    expect(desk_field.get_by_role("alert")).to_have_text(
        "Tick this to release with desk items unfinished, or finish them."
    )
    expect(purchases_box).to_be_checked()
    expect(desk_box).not_to_be_checked()
    assert not XpEntry.objects.filter(cycle=cycle).exists()
    shoot(st, "release-confirm-1280")
    fits_a_phone(st, "release-confirm")
    desk_box.check()
    st.get_by_role("button", name="Release now").click()
    expect(st.get_by_role("status")).to_contain_text("Released: the XP is in the ledger")
    expect(status).to_have_text("Released")
    expect(st.get_by_role("button", name="Resolve")).to_have_count(0)
    expect(st.get_by_text("Save the override")).to_have_count(0)
    expect(st.locator("#released-note")).to_contain_text("Released on")
    # The XP report opens with what the plan announced: 2 entries, 5.0 XP.
    st.get_by_role("link", name="XP report").click()
    expect(st.locator("#xp-release .subtotal")).to_have_text("2 entries, 5.0 XP, 2 players.")
    shoot(st, "xp-report-1280")
    fits_a_phone(st, "xp-report")

    # --- 6. Bob reads his results, and finds the haven on his searches page. ------------------
    bob = as_user(browser, live_server.url, "player_bob")
    nav(bob, "Results")
    expect(bob.get_by_role("heading", name="Your downtime results")).to_be_visible()
    results = section(bob, "After game 1 (Sat 9 Mar 2024)")
    expect(results).to_contain_text("Base XP: 2.5 (no downtime).")
    expect(results).to_contain_text("No downtime was submitted: Herd 2 cashed in")
    expect(results).to_contain_text(
        f"The search for {ALICE_PC}'s havens is resolved: the places it found, if any, are "
        "listed on your searches page"
    )
    # HAV-04, HAV-25b: the searcher never reads the numbers nor the STs' note.
    expect(results).not_to_contain_text("hiding points")
    expect(results).not_to_contain_text(NOTE)
    bob.get_by_role("link", name="Your searches").click()
    expect(bob.get_by_role("heading", name="Haven searches and attacks")).to_be_visible()
    expect(section(bob, "Havens you know of")).to_contain_text(f"{LOCATION} (found by {BOB_PC})")
    expect(bob.get_by_text(HAVEN)).to_have_count(0)  # HAV-04: the location only

    # --- What the release did, once. -----------------------------------------------------------
    run = ResolutionRun.objects.get(cycle=cycle)
    assert run.status == RunStatus.DONE
    chunks = StepChunk.objects.filter(run=run)
    assert {s: chunks.filter(step=s).count() for s in CHUNKS} == CHUNKS
    assert set(chunks.values_list("status", "attempts")) == {(ChunkStatus.DONE, 1)}
    xp = {e.player.username: e.amount for e in XpEntry.objects.filter(cycle=cycle).select_related()}
    assert xp == {"player_alice": Decimal("2.5"), "player_bob": Decimal("2.5")}
    assert list(Find.objects.filter(structure=haven).values_list("character__name", flat=True)) == [
        BOB_PC
    ]
    sent = summaries_sent(2)
    assert sorted(m.to[0] for m in sent) == ["player_alice@example.com", "player_bob@example.com"]
    to_bob = next(m for m in sent if m.to == ["player_bob@example.com"])
    assert "Base XP: 2.5 (no downtime)." in to_bob.body
    assert f"The search for {ALICE_PC}'s havens is resolved" in to_bob.body
    for page in (st, bob):
        page.context.close()
