"""A chronicle with something on every page, for the crawls that read every page as every persona
(issue 12: accessibility, phone width, one time zone).

The world's Nightfall (New York) two months in:
- Game 1 (Saturday 9 March 2024): Alice and Bob attended; Alice's Lucien submitted a downtime
  with an influence action, resolved on the desk; the cycle is closed, resolved and released
  (outcomes, XP, results). Alice's game report is picked and published.
- Game 2 (Saturday 6 April 2024): its downtime is open (due Tuesday 16 April, 23:59). Bob's
  Marguerite submitted (an influence action, New on the desk); Alice's Lucien has a draft with an
  action and an XP purchase waiting for sign-off; Bob searches for Lucien's havens.
- Havens: Lucien's Loft (a project, an alarm, a reinforcement, a transfer asked for, an attack
  recorded at game 1), Marguerite's Crypt; a hidden object registered at game 1.
- Alice's second character waits for approval; an invitation is open; a Grapevine upload waits
  for the storytellers' preview.

The crawls run at `NOW`, in game 2's downtime. `ids` holds every object's id, by the path segment
that names it ("characters", "havens", ...), for `routes`; `walk` crawls them.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import time_machine
from django.test import Client

from characters.models import Approval, Character, ImportJob, InfluenceSpend, XpKind
from characters.services import ledger
from characters.services.purchases import purchase_request
from chronicle import services as chronicle_services
from chronicle.models import Cycle
from chronicle.services import people
from downtimes.models import DeskItem, ReportPick
from downtimes.services import pipeline, submissions
from havens.models import (
    Attribute,
    ChangeKind,
    HiddenObject,
    Ownership,
    OwnershipChange,
    Project,
    ProjectKind,
    ReinforcementAttack,
    Search,
    Searcher,
    SearchStatus,
    Structure,
    StructureStatus,
)
from tests import crawl

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
DURING_1 = dt.datetime(2024, 3, 15, 12, 0, tzinfo=NEW_YORK)
AFTER_1 = dt.datetime(2024, 3, 20, 1, 0, tzinfo=NEW_YORK)
DURING_2 = dt.datetime(2024, 4, 10, 12, 0, tzinfo=NEW_YORK)
NOW = DURING_2 + dt.timedelta(hours=2)
T = TypeVar("T")
GRAPEVINE = Path(__file__).resolve().parents[2] / "shared" / "data" / "grapevine"
if not GRAPEVINE.exists():  # the checkout's shared/ sits beside it, as on the build machines
    GRAPEVINE = Path("/work/shared/data/grapevine")


@dataclass
class Rich:
    world: Any
    first: Cycle
    second: Cycle
    token: str = ""
    ids: dict[str, list[int]] = field(default_factory=dict)

    def add(self, segment: str, *objects: Any) -> None:
        known = self.ids.setdefault(segment, [])
        known.extend(o.pk for o in objects if o.pk not in known)


def _spend(character: Character, cycle: Cycle, points: int, key: str) -> InfluenceSpend:
    return InfluenceSpend.objects.create(
        character=character,
        cycle=cycle,
        influence="business",
        points=points,
        reason=f"Spend {key}",
        key=key,
        created_at=DURING_2,
    )


def _structure(owner: Character, name: str, location: str) -> Structure:
    structure = Structure.objects.create(
        chronicle=owner.chronicle,
        kind="outer",
        name=name,
        location=location,
        description="Damp, but the roof holds.",
        status=StructureStatus.STANDING,
        designed_by=owner,
        created_at=DURING_1,
    )
    Ownership.objects.create(structure=structure, character=owner, how="built", started_at=DURING_1)
    return structure


def _signed_in(world: Any, game: Any, names: Iterable[str], now: dt.datetime) -> None:
    chronicle_services.attendance_record(
        game=game,
        lines=[
            chronicle_services.SignIn(world.users[n].pk, attended=True, waiver_signed=True)
            for n in names
        ],
        by=world.users["storyteller"],
        now=now,
    )


def build(world: Any, make_character: Callable[..., Character]) -> Rich:
    alice, bob, st = (world.users[n] for n in ("player_alice", "player_bob", "storyteller"))
    lucien = make_character(
        "Lucien", player="player_alice", business=5, disciplines={"auspex": "1b"}
    )
    marguerite = make_character("Marguerite", player="player_bob", clan="ventrue", business=5)
    old_tom = make_character("Old Tom", player=None, clan="nosferatu")
    fledgling = make_character("Célestine", player=None, background_approved=False)
    Character.objects.filter(pk=fledgling.pk).update(player=alice, approval=Approval.SUBMITTED)
    first = world.game.cycle

    # Game 1's downtime: Alice submits an influence action, resolved on the desk; released.
    _signed_in(world, world.game, ["player_alice", "player_bob"], DURING_1)
    with time_machine.travel(DURING_1, tick=False):
        draft = submissions.submission_for_edit(character=lucien, cycle=first, by=alice)
        draft = submissions.submission_save(
            submission=draft,
            by=alice,
            notes="Lucien keeps to the galleries this month.",
            game_report="The Harpy's salon went quiet when the Baron walked in.",
            version=draft.version,
        )
        submissions.influence_action_add(
            submission=draft,
            by=alice,
            influence="business",
            points=1,
            action="investigate",
            key="first",
            target_name="The Baron",
            description="Who pays for the Baron's new gallery?",
        )
        first_report = submissions.submission_submit(submission=draft, by=alice)
    DeskItem.objects.filter(cycle=first).update(
        status="resolved", result="A shell company in Delaware pays.", assignee=st
    )
    chronicle_services.cycle_close(cycle=first, by=st, now=AFTER_1)
    pipeline.cycle_resolve_inline(cycle=first, by=st, now=AFTER_1)
    assert pipeline.cycle_release(cycle=first, by=st, now=AFTER_1)
    ReportPick.objects.create(
        submission=first_report,
        cycle=first,
        sanitized_text="The Harpy's salon went quiet.",
        published=True,
        picked_by=st,
        picked_at=AFTER_1,
    )

    # Game 2 and its open downtime.
    second_game = chronicle_services.game_create(
        chronicle=world.chronicle, date=dt.date(2024, 4, 6), start_time=dt.time(19, 30)
    )
    second = second_game.cycle
    _signed_in(world, second_game, ["player_alice", "player_bob"], DURING_2)
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=alice.pk,
        amount=Decimal(20),
        kind=XpKind.AWARD,
        reason="Costume prize",
        key="crawl:award",
    )
    loft = _structure(lucien, "The Loft", "Under the old bridge")
    crypt = _structure(marguerite, "Marguerite's Crypt", "Behind the chapel")
    with time_machine.travel(DURING_2, tick=False):
        draft = submissions.submission_for_edit(character=lucien, cycle=second, by=alice)
        submissions.submission_save(
            submission=draft, by=alice, notes="Lucien courts the Toreador.", version=draft.version
        )
        mine = submissions.influence_action_add(
            submission=draft,
            by=alice,
            influence="business",
            points=2,
            action="investigate",
            key="second",
            target_name="Marguerite",
            description="Where does she sleep?",
        )
        theirs = submissions.submission_for_edit(character=marguerite, cycle=second, by=bob)
        bobs = submissions.influence_action_add(
            submission=theirs,
            by=bob,
            influence="business",
            points=1,
            action="investigate",
            key="bob",
            target_name="Lucien",
            description="Who paints for Lucien?",
        )
        submissions.submission_submit(submission=theirs, by=bob)
        purchase = purchase_request(character=lucien, by=alice, kind="willpower")
    project = Project.objects.create(
        structure=loft,
        kind=ProjectKind.ATTRIBUTE,
        attribute_kind="influence_resistance",
        cost=5,
        paid=1,
        requested_by=lucien,
        created_at=DURING_2,
    )
    alarm = Attribute.objects.create(
        structure=loft,
        kind="alarm",
        cost=5,
        trigger="attack",
        effect="silent",
        note="A bell on the stairs",
        created_at=DURING_1,
    )
    Attribute.objects.create(
        structure=loft, kind="reinforcement", quantity=100, cost=10, created_at=DURING_1
    )
    change = OwnershipChange.objects.create(
        structure=loft,
        kind=ChangeKind.TRANSFER,
        cycle=second,
        from_character=lucien,
        note="To my childe",
        requested_at=DURING_2,
    )
    search = Search.objects.create(
        cycle=second,
        target_name="Lucien",
        target=lucien,
        party_code="CRAWL1",
        status=SearchStatus.SUBMITTED,
        created_by=marguerite,
        created_at=DURING_2,
    )
    Searcher.objects.create(
        search=search,
        character=marguerite,
        influence="business",
        points=2,
        spend=_spend(marguerite, second, 2, "search"),
        joined_at=DURING_2,
    )
    attack = ReinforcementAttack.objects.create(
        structure=loft,
        game=world.game,
        attackers=[{"character": marguerite.pk, "name": "Marguerite", "potence": 2}],
        bid=12,
        reinforcement=100,
        results=[False],
        penetrated=False,
        note="Rammed the door",
        recorded_by=st,
        recorded_at=AFTER_1,
        key="crawl",
    )
    hidden = HiddenObject.objects.create(
        chronicle=world.chronicle,
        game=world.game,
        hider=lucien,
        description="A letter to the Prince",
        place="Behind the bar",
        obfuscate_bid=6,
        number=3,
        registered_by=st,
        registered_at=AFTER_1,
    )
    admin = world.chronicle.memberships.get(user=world.users["admin"])
    (invitation, token), *_ = people.invitations_create(
        membership=admin,
        invitees=[people.Invitee(email="newcomer@example.com", role="player")],
        now=NOW,
    )
    job = ImportJob.objects.create(
        chronicle=world.chronicle,
        created_by=st,
        created_at=DURING_2,
        files=[{"name": "mcmillan.gex", "text": (GRAPEVINE / "mcmillan.gex").read_text()}],
    )

    rich = Rich(world=world, first=first, second=second, token=token)
    characters = (lucien, marguerite, old_tom, fledgling)
    rich.add("characters", *characters)
    rich.add("waiting", fledgling)
    rich.add("downtime", lucien, marguerite)
    rich.add("submissions", first_report, draft, theirs)
    rich.add("reports", first_report, theirs)
    rich.add("items", mine, bobs)
    rich.add("desk-items", mine, bobs)
    rich.add("sheets", *characters)
    rich.add("drafts", fledgling)
    rich.add("hidden-objects", hidden)
    rich.add("memberships", alice, bob)
    rich.add("purchases", purchase)
    rich.add("havens", loft, crypt)
    rich.add("projects", project)
    rich.add("attributes", alarm)
    rich.add("changes", change)
    rich.add("searches", search)
    rich.add("hidden", hidden)
    rich.add("search", hidden)
    rich.add("import", job)
    rich.add("invitations", invitation)
    rich.add("people", alice, bob)
    rich.add("outcomes", *first.outcomes.all()[:3])
    rich.add("attacks", attack)
    for none_here in ("diableries", "crypts", "loans", "records", "api", "export"):
        rich.add(none_here)
    return rich


# The segment before a parameter says what it names; a parameter after any other segment gets
# every id (slower, never silently skipped).
NUMBERS = ("games", "cycles", "cycle", "resolution")
# Pages that read a query string: the released cycle's desk, votes and reports.
EXTRAS = {
    "desk": "?cycle={first}",
    "vote_tally": "?cycle={first}",
    "report_picks": "?cycle={first}",
}
# Routes whose first object should be another than the segment's first (the review page is
# about a character waiting for approval).
PREFERRED = {"character_review": "waiting"}
HTTP_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
SKIPPED = ("admin/", "accounts/logout/", "accounts/reset/<uidb64>/", "api/schema/", "api/docs/")


def routes(rich: Rich, *, api: bool = False) -> list[tuple[str, list[str]]]:
    """Every GET-able page of the project (the admin site aside), the site's or the API's: one
    entry per route and game number, with the paths to try for it, each id parameter filled
    with the ids of the objects its path segment names ("havens/<int:pk>/": each haven's)."""
    everything = sorted({str(pk) for pks in rich.ids.values() for pk in pks})
    numbers = [str(rich.first.game.number), str(rich.second.game.number)]
    found: dict[str, list[str]] = {}
    for route, pattern in crawl.patterns():
        if route.startswith(SKIPPED) or route.startswith("api/") != api:
            continue
        if not _takes_get(pattern.callback):
            continue
        # The API's router routes are regexes inside "api/" ("^chronicles/(?P<slug>[-\\w]+)/$"),
        # which crawl.fill leaves alone: written as converters first.
        plain = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", route.replace("^", "").replace("$", ""))
        names = list(dict.fromkeys(n for n in crawl.params(plain) if n not in ("slug", "format")))
        fills: list[dict[str, str]] = [{}]
        for name in names:
            before = PREFERRED.get(pattern.name or "") or _segment_before(plain, name)
            if name in ("number", "game_number") or before in NUMBERS:
                choices = numbers
            elif name == "token":
                choices = [rich.token]
            elif name == "action":
                choices = ["transfer"]
            else:
                known = rich.ids.get(before)
                choices = everything if known is None else [str(pk) for pk in known]
                choices = choices or ["0"]  # a kind the world has none of: its 404
            fills = [dict(f, **{name: c}) for f in fills for c in choices]
        for values in fills:
            path = crawl.fill(plain, {"slug": rich.world.chronicle.slug, **values})
            if path is None:
                continue
            # Each game number is a page of its own (an open cycle, a released one).
            key = f"{route} {values.get('number', values.get('game_number', ''))}"
            found.setdefault(key, []).append(path)
            extra = EXTRAS.get(pattern.name or "")
            if extra and len(found[key]) == 1:
                found[key].append(path + extra.format(first=rich.first.game.number))
    return sorted(found.items())


def _takes_get(view: Any) -> bool:
    """False for a view that `require_POST` (or `require_http_methods` without GET) guards:
    the methods it allows are a list in one of its wrappers' closures."""
    for _ in range(10):
        for cell in getattr(view, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            methods = isinstance(value, list | tuple) and value
            if methods and all(isinstance(m, str) and m in HTTP_METHODS for m in methods):
                return "GET" in methods
        view = getattr(view, "__wrapped__", None)
        if view is None:
            break
    return True


def _segment_before(route: str, name: str) -> str:
    """The path segment just before parameter `name` ("havens" in "havens/<int:pk>/")."""
    match = re.search(rf"([\w-]+)/<(?:\w+:)?{name}>", route)
    return match.group(1) if match else ""


def client(world: Any, persona: str | None) -> Client:
    """A persona's test client that answers a server error as a 500 (the crawls report it with
    the rest) instead of raising it."""
    browser = Client(raise_request_exception=False)
    if persona is not None:
        browser.force_login(world.users[persona])
    return browser


def walk(
    rich: Rich,
    personas: Iterable[str | None],
    get: Callable[[str | None, str], T],
    status: Callable[[T], int],
    *,
    api: bool = False,
) -> Iterator[tuple[str | None, str, T]]:
    """(persona, path, answer) for every page and persona, `get` fetching it: a page's paths
    are tried in turn until one answers 200 (one page per route, game and persona keeps the
    crawls quick); a route that answers 405 to a GET takes only POSTs and is not tried again."""
    posts_only: set[str] = set()
    members = set(rich.world.chronicle.memberships.values_list("user_id", flat=True))
    for persona in personas:
        # Someone outside the chronicle gets its 404 whatever the object: one path a route.
        stranger = persona is None or rich.world.users[persona].pk not in members
        for key, paths in routes(rich, api=api):
            route = key.split(" ")[0]
            if route in posts_only:
                continue
            for path in paths[:1] if stranger else paths:
                answer = get(persona, path)
                code = status(answer)
                if code == 405:
                    posts_only.add(route)
                    break
                yield persona, path, answer
                if code == 200:
                    break
