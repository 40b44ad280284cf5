"""Drinks and bonds on PostgreSQL (BND-01..10): the Bond rows, their due dates, the sweeper and
who is told what."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.core import mail
from django.core.exceptions import ValidationError

from characters.models import BloodDrink, Bond, BondKind, Notification, RegnantRequest
from characters.services import bonds, records

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NY = ZoneInfo("America/New_York")


def at(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(21, 0), tzinfo=NY)


@pytest.fixture
def cast(world: Any, make_character: Any) -> dict[str, Any]:
    return {
        "thrall": make_character("Thrall", player="player_alice"),
        "regnant": make_character("Regnant", player="player_bob", clan="ventrue"),
        "donor": make_character("Donor", player=None, clan="brujah"),
        "st": world.users["storyteller"],
    }


def drink(cast: dict[str, Any], day: dt.date, *donors: Any, mixed: bool = False) -> BloodDrink:
    return bonds.drink_record(
        drinker=cast["thrall"],
        donors=list(donors) or [cast["regnant"]],
        mixed=mixed,
        night=day,
        by=cast["st"],
        now=at(day),
    )


def live(cast: dict[str, Any]) -> list[Bond]:
    return list(Bond.objects.filter(thrall=cast["thrall"], ended_on__isnull=True))


def test_bnd03_three_nights_bind_for_twelve_months(cast: dict[str, Any]) -> None:
    for day in (dt.date(2024, 1, 1), dt.date(2024, 1, 5), dt.date(2024, 2, 20)):
        drink(cast, day)
    (bond,) = live(cast)
    assert (bond.regnant_id, bond.kind, bond.level, bond.bound) == (
        cast["regnant"].pk,
        BondKind.PURE,
        3,
        True,
    )
    assert bond.since == dt.date(2024, 2, 20)
    assert bond.due_on == dt.date(2025, 2, 20)


def test_bnd01_two_drinks_in_one_night_are_level_one(cast: dict[str, Any]) -> None:
    drink(cast, dt.date(2024, 1, 1))
    drink(cast, dt.date(2024, 1, 1))
    (bond,) = live(cast)
    assert (bond.level, bond.bound) == (1, False)
    # A partial level lapses 12 months after the drink (BND-03 INTERPRETATION).
    assert bond.due_on == dt.date(2025, 1, 1)


def test_bnd01_level_two_notice_without_the_regnants_name(
    cast: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        drink(cast, dt.date(2024, 1, 1))
        assert mail.outbox == []
        drink(cast, dt.date(2024, 1, 5))
        drink(cast, dt.date(2024, 1, 5))  # same night again: no second notice
    (message,) = mail.outbox
    assert message.subject == "You feel the beginning of a bond"
    assert message.to == ["player_alice@example.com"]
    assert "Regnant" not in message.subject + message.body
    assert live(cast)[0].notified_at is not None


def test_bnd08_regnant_and_donor_are_never_told(
    cast: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        for day in (dt.date(2024, 1, 1), dt.date(2024, 1, 5), dt.date(2024, 2, 20)):
            drink(cast, day)
    assert all(m.to == ["player_alice@example.com"] for m in mail.outbox)
    assert not Notification.objects.exclude(character=cast["thrall"]).exists()


def test_bnd03_regnant_death_ends_a_month_later_and_thrall_is_told(
    cast: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    for day in (dt.date(2024, 1, 1), dt.date(2024, 1, 5), dt.date(2024, 2, 20)):
        drink(cast, day)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        records.character_death_record(
            character=cast["regnant"],
            died_on=dt.date(2024, 6, 1),
            by=cast["st"],
            now=at(dt.date(2024, 6, 1)),
        )
    (told,) = mail.outbox
    assert told.to == ["player_alice@example.com"]
    assert "Regnant has died" in told.subject
    (bond,) = live(cast)
    assert bond.due_on == dt.date(2024, 7, 1)
    assert bonds.bonds_sweep(now=at(dt.date(2024, 6, 30))) == 0
    assert bonds.bonds_sweep(now=at(dt.date(2024, 7, 1))) == 1
    bond.refresh_from_db()
    assert (bond.ended_on, bond.end_reason) == (dt.date(2024, 7, 1), "the regnant died")


def test_bnd06_sixth_shared_drink_binds_for_six_months(cast: dict[str, Any]) -> None:
    nights = [dt.date(2024, 1, d) for d in (1, 8, 15, 22, 29)] + [dt.date(2024, 3, 1)]
    for night in nights:
        drink(cast, night, cast["regnant"], cast["donor"], mixed=True)
    bound = {(b.regnant_id, b.bound, b.due_on) for b in live(cast)}
    assert bound == {
        (cast["regnant"].pk, True, dt.date(2024, 9, 1)),
        (cast["donor"].pk, True, dt.date(2024, 9, 1)),
    }
    assert {b.kind for b in live(cast)} == {BondKind.SHARED}


def test_bnd04_a_mixed_drink_counts_once_per_donor(cast: dict[str, Any]) -> None:
    drink(cast, dt.date(2024, 1, 1), cast["regnant"], cast["donor"], mixed=True)
    rows = {b.regnant_id: (b.kind, b.level, b.bound) for b in live(cast)}
    assert rows == {
        cast["regnant"].pk: (BondKind.SHARED, 1, False),
        cast["donor"].pk: (BondKind.SHARED, 1, False),
    }
    # BND-06 INTERPRETATION: partial counts lapse 6 months after the last drink.
    assert {b.due_on for b in live(cast)} == {dt.date(2024, 7, 1)}


def test_bnd10_sweep_twice_one_effect_one_email(
    cast: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    for day in (dt.date(2024, 1, 1), dt.date(2024, 1, 5), dt.date(2024, 2, 20)):
        drink(cast, day)
    mail.outbox.clear()
    with time_machine.travel(at(dt.date(2025, 2, 20)), tick=False):
        with django_capture_on_commit_callbacks(execute=True):
            assert bonds.bonds_sweep() == 1
        with django_capture_on_commit_callbacks(execute=True):
            assert bonds.bonds_sweep() == 0
    (message,) = mail.outbox
    assert message.subject == "Your blood bond to Regnant has ended"
    assert live(cast) == []
    assert Bond.objects.get(thrall=cast["thrall"]).end_reason == "expired"


def test_bnd10_partial_level_lapses_once(cast: dict[str, Any]) -> None:
    drink(cast, dt.date(2024, 1, 1))
    assert bonds.bonds_sweep(now=at(dt.date(2024, 12, 31))) == 0
    assert bonds.bonds_sweep(now=at(dt.date(2025, 1, 1))) == 1
    assert bonds.bonds_sweep(now=at(dt.date(2025, 1, 2))) == 0
    assert Bond.objects.get(thrall=cast["thrall"]).end_reason == "lapsed"


def test_bond_break_ritual_ends_the_bond(cast: dict[str, Any]) -> None:
    for day in (dt.date(2024, 1, 1), dt.date(2024, 1, 5), dt.date(2024, 2, 20)):
        drink(cast, day)
    bonds.bond_break_record(
        thrall=cast["thrall"],
        regnant=cast["regnant"],
        night=dt.date(2024, 3, 1),
        by=cast["st"],
        now=at(dt.date(2024, 3, 1)),
    )
    assert live(cast) == []
    assert Bond.objects.get(thrall=cast["thrall"]).end_reason == "broken by a ritual"


@pytest.mark.parametrize(
    ("mixed", "who", "message"),
    [
        pytest.param(False, ("regnant", "donor"), "BND-04", id="BND-04-unmixed-two-donors"),
        pytest.param(True, ("regnant", "regnant"), "BND-04", id="BND-04-donor-twice"),
        pytest.param(False, ("thrall",), "BND-01", id="BND-01-self"),
    ],
)
def test_drink_refusals_write_nothing(
    cast: dict[str, Any], mixed: bool, who: tuple[str, ...], message: str
) -> None:
    with pytest.raises(ValidationError) as exc:
        drink(cast, dt.date(2024, 1, 1), *(cast[w] for w in who), mixed=mixed)
    assert message in str(exc.value)
    assert not BloodDrink.objects.exists()
    assert not Bond.objects.exists()


def test_drink_of_ghoul_blood_refused(cast: dict[str, Any], make_character: Any) -> None:
    ghoul = make_character("Renfield", player=None, creature="ghoul")
    with pytest.raises(ValidationError, match="BND-08"):
        drink(cast, dt.date(2024, 1, 1), ghoul)
    assert not BloodDrink.objects.exists()


def test_bnd09_requests_only_on_bound_thralls_at_most_four(cast: dict[str, Any]) -> None:
    def ask(text: str) -> RegnantRequest:
        return bonds.regnant_request_add(
            thrall=cast["thrall"],
            regnant=cast["regnant"],
            text=text,
            set_at="downtime",
            by=cast["st"],
            now=at(dt.date(2024, 3, 1)),
        )

    with pytest.raises(ValidationError, match="BND-09"):
        ask("Guard my haven")
    assert not RegnantRequest.objects.exists()
    for day in (dt.date(2024, 1, 1), dt.date(2024, 1, 5), dt.date(2024, 2, 20)):
        drink(cast, day)
    first = ask("one")
    for text in ("two", "three", "four"):
        ask(text)
    with pytest.raises(ValidationError, match="BND-09"):
        ask("five")
    assert RegnantRequest.objects.count() == 4
    assert bonds.regnant_request_drop(request=first, by=cast["st"]) is True
    assert bonds.regnant_request_drop(request=first, by=cast["st"]) is False
    ask("five")
    assert RegnantRequest.objects.filter(dropped_at__isnull=True).count() == 4


def test_bonds_refresh_runs_a_fixed_number_of_queries(
    cast: dict[str, Any], make_character: Any, django_assert_num_queries: Any
) -> None:
    thralls = [cast["thrall"]] + [make_character(f"T{i}", player=None) for i in range(3)]
    for thrall in thralls:
        for day in (dt.date(2024, 1, 1), dt.date(2024, 1, 8)):
            bonds.drink_record(
                drinker=thrall,
                donors=[cast["regnant"], cast["donor"]],
                mixed=True,
                night=day,
                by=cast["st"],
                now=at(day),
            )
    # savepoint, lock thralls, drinks, donor links, rituals, live bonds, deaths, release
    with django_assert_num_queries(8):
        assert (
            bonds.bonds_refresh(
                thrall_ids=[t.pk for t in thralls],
                on=dt.date(2024, 2, 1),
                now=at(dt.date(2024, 2, 1)),
            )
            == 0
        )
