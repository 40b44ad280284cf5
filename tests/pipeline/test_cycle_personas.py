"""Every page and endpoint of the resolution (issue 6) for every persona, and a crawl of the whole
project with markers in the outcomes' secret fields:

- an ST explanation (`Outcome.explanation`) reaches the storytellers only, released or not;
- an unreleased outcome (its player's text, its override note) reaches the storytellers only;
- a released outcome's text reaches its player and the storytellers, never another player.

Game 1's cycle is released, game 2's resolved and waiting for review.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.urls import reverse

from chronicle import services as chronicle_services
from chronicle.models import Cycle, CycleStatus
from chronicle.services import cycle_close
from downtimes.models import Outcome, OutcomeOverride
from downtimes.services import pipeline
from tests import crawl

from .conftest import AFTER_DEADLINE, Month

pytestmark = pytest.mark.django_db

SLUG = "nightfall"
API = f"/api/chronicles/{SLUG}"
STAFF = {"admin", "storyteller"}
PERSONAS = [None, "admin", "storyteller", "player_alice", "player_bob", "outsider"]
MARKS = {
    "explanation": "MARKSTEXPLANATION",
    "released_alice": "MARKRELEASEDALICE",
    "released_bob": "MARKRELEASEDBOB",
    "unreleased": "MARKUNRELEASED",
    "unreleased_note": "MARKUNRELEASEDNOTE",
    "unreleased_explanation": "MARKUNRELEASEDEXPLAIN",
}
ALLOWED = {
    "explanation": STAFF,
    "released_alice": STAFF | {"player_alice"},
    "released_bob": STAFF | {"player_bob"},
    "unreleased": STAFF,
    "unreleased_note": STAFF,
    "unreleased_explanation": STAFF,
}
LATER = AFTER_DEADLINE + dt.timedelta(days=20)


@dataclass
class Seeded:
    released: Cycle
    pending: Cycle
    alice_released: Outcome
    alice_pending: Outcome


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(LATER, tick=False):
        yield


def _mark(cycle: Cycle, step: str, subject: str, **fields: str) -> Outcome:
    Outcome.objects.filter(cycle=cycle, step=step, subject=subject).update(**fields)
    return Outcome.objects.get(cycle=cycle, step=step, subject=subject)


@pytest.fixture
def seeded(month: Month) -> Seeded:
    world = month.world
    st = world.users["storyteller"]
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    first = month.cycle
    cycle_close(cycle=first, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=first, by=st, now=AFTER_DEADLINE)
    alice_released = _mark(
        first,
        "awards",
        f"base:{alice.pk}",
        explanation=f"2.5 XP {MARKS['explanation']}",
        public_text=f"Base XP: 2.5 {MARKS['released_alice']}",
    )
    _mark(first, "no_downtime", f"base:{bob.pk}", public_text=f"Base {MARKS['released_bob']}")
    assert pipeline.cycle_release(cycle=first, by=st, now=AFTER_DEADLINE)

    game = chronicle_services.game_create(
        chronicle=world.chronicle, date=dt.date(2024, 4, 6), place="Elysium"
    )
    second = game.cycle
    cycle_close(cycle=second, by=st, now=LATER)
    pipeline.cycle_resolve_inline(cycle=second, by=st, now=LATER)
    second.refresh_from_db()
    assert second.status == CycleStatus.RESOLVED
    # Nobody attended game 2: Alice's and Bob's base XP are for no downtime.
    alice_pending = _mark(
        second,
        "no_downtime",
        f"base:{alice.pk}",
        explanation=f"No {MARKS['unreleased_explanation']}",
        public_text=f"Base {MARKS['unreleased']}",
    )
    pipeline.outcome_override(
        outcome=alice_pending, by=st, note=f"Sick {MARKS['unreleased_note']}", xp=Decimal(1)
    )
    first.refresh_from_db()
    return Seeded(first, second, alice_released, alice_pending)


def _paths(world: Any, seeded: Seeded) -> set[str]:
    ids = sorted(
        {
            str(seeded.alice_released.pk),
            str(seeded.alice_pending.pk),
            str(seeded.released.game.number),
            str(seeded.pending.game.number),
        }
    )
    paths: set[str] = set()
    for cycle in (seeded.released, seeded.pending):
        paths |= crawl.all_paths(world.chronicle.slug, ids, cycle.game.number)
    return paths


def test_markers_appear_only_where_they_belong(month: Month, seeded: Seeded) -> None:
    paths = _paths(month.world, seeded)
    for wanted in ("/resolution/2/", "/results/", "/resolution/2/outcomes/", "/xp.csv"):
        assert any(wanted in p for p in paths), wanted
    leaks: list[str] = []
    for persona in PERSONAS:
        client = month.world.client(persona)
        for path in sorted(paths):
            response = client.get(path)
            assert response.status_code < 500, (persona, path, response.status_code)
            body = response.content.decode(errors="replace")
            for mark, text in MARKS.items():
                if text in body and persona not in ALLOWED[mark]:
                    leaks.append(f"{persona} sees {mark} at {path} ({response.status_code})")
    assert not leaks, "\n".join(leaks)


def test_those_allowed_do_see_the_markers(month: Month, seeded: Seeded) -> None:
    """The crawl above would pass on empty pages: each marker is where it belongs."""
    alice = month.world.client("player_alice").get(reverse("results", args=[SLUG]))
    assert MARKS["released_alice"] in alice.content.decode()
    bob = month.world.client("player_bob").get(f"{API}/results/")
    assert MARKS["released_bob"] in bob.content.decode()
    st = month.world.client("storyteller")
    pending = st.get(reverse("cycle_resolution", args=[SLUG, 2])).content.decode()
    for mark in ("unreleased", "unreleased_note", "unreleased_explanation"):
        assert MARKS[mark] in pending, mark
    released = st.get(f"{API}/resolution/1/outcomes/").content.decode()
    assert MARKS["explanation"] in released


# --- Every route, every persona ---------------------------------------------------------------

READS = [
    "cycle_resolution_list",
    ("cycle_resolution", 2),
    ("cycle_release", 2),
    ("cycle_xp_report", 2),
    ("cycle_xp_report_csv", 2),
]
API_READS = [
    "resolution/",
    "resolution/2/",
    "resolution/2/release-plan/",
    "resolution/2/xp/",
    "resolution/2/outcomes/",
]
STATUS = {
    "admin": 200,
    "storyteller": 200,
    "player_alice": 403,
    "player_bob": 403,
    "outsider": 404,
    "other_storyteller": 404,
}


def _url(entry: str | tuple[str, int], *extra: Any) -> str:
    name, args = (entry, ()) if isinstance(entry, str) else (entry[0], (entry[1],))
    return reverse(name, args=[SLUG, *args, *extra])


@pytest.mark.parametrize("persona", list(STATUS))
def test_every_staff_page_for_every_persona(month: Month, seeded: Seeded, persona: str) -> None:
    client = month.world.client(persona)
    outcome = seeded.alice_pending.pk
    for entry in READS:
        assert client.get(_url(entry)).status_code == STATUS[persona], entry
    progress = client.get(_url(("cycle_progress", 2)), HTTP_HX_REQUEST="true")
    assert progress.status_code == STATUS[persona]
    for path in API_READS + [f"resolution/2/outcomes/{outcome}/"]:
        response = client.get(f"{API}/{path}")
        assert response.status_code == STATUS[persona], path
        if STATUS[persona] != 200:
            assert set(response.json()) == {"error"}  # the one error shape


@pytest.mark.parametrize("persona", ["player_alice", "player_bob", "outsider", "other_storyteller"])
def test_no_write_for_those_who_are_not_staff(month: Month, seeded: Seeded, persona: str) -> None:
    client = month.world.client(persona)
    outcome = seeded.alice_pending.pk
    expected = STATUS[persona]
    posts = [
        (_url(("cycle_resolution_close", 2)), {}),
        (_url(("cycle_resolve", 2)), {}),
        (_url(("cycle_release", 2)), {}),
        (_url(("outcome_override", 2), outcome), {f"o{outcome}-xp": "9", f"o{outcome}-note": "x"}),
        (_url(("outcome_override_remove", 2), outcome), {}),
    ]
    for path, data in posts:
        assert client.post(path, data).status_code == expected, path
    for path in ("close/", "resolve/", "release/"):
        assert client.post(f"{API}/resolution/2/{path}").status_code == expected, path
    override = f"{API}/resolution/2/outcomes/{outcome}/override/"
    body = {"xp": "9", "note": "x"}
    assert client.post(override, body, content_type="application/json").status_code == expected
    assert client.delete(override).status_code == expected
    # Nothing changed.
    seeded.pending.refresh_from_db()
    assert seeded.pending.status == CycleStatus.RESOLVED
    assert OutcomeOverride.objects.get(cycle=seeded.pending).xp == Decimal(1)
    assert seeded.pending.resolution_runs.count() == 1


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 200),
        ("player_bob", 200),
        ("outsider", 404),
        ("other_storyteller", 404),
    ],
)
def test_results_for_every_persona(month: Month, seeded: Seeded, persona: str, status: int) -> None:
    client = month.world.client(persona)
    assert client.get(reverse("results", args=[SLUG])).status_code == status
    assert client.get(f"{API}/results/").status_code == status


def test_every_route_needs_a_login(month: Month, seeded: Seeded) -> None:
    client = month.world.client(None)
    for entry in [*READS, "results"]:
        response = client.get(_url(entry))
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    for path in [*API_READS, "results/"]:
        assert client.get(f"{API}/{path}").status_code == 401
