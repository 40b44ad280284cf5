"""Issue 15: the player's downtime page costs the same queries with a big cast and many
actions, and its ballots (the whole cast of the game, five times) render as Django would."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from characters.models import Approval, Character, InfluenceLoan
from chronicle.forms.widgets import LongSelect, PairedChoices
from chronicle.models import Attendance
from downtimes.forms.submissions import BallotChoices, BallotSelect
from downtimes.models import Submission
from downtimes.services import submissions as services

from .conftest import DURING


def _grow(world: Any, draft: Submission, size: int) -> None:
    """`size` players at the game, each with a character, and `size` actions in the draft."""
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"guest{size}-{i}", first_name=f"Guest {i}") for i in range(size)
    )
    Character.objects.bulk_create(
        Character(
            chronicle=world.chronicle,
            player=user,
            name=f"Guest character {i}",
            approval=Approval.APPROVED,
        )
        for i, user in enumerate(users)
    )
    Attendance.objects.bulk_create(
        Attendance(
            game=world.game, player=user, recorded_by=world.users["storyteller"], recorded_at=DURING
        )
        for user in users
    )
    alice = world.users["player_alice"]
    for i in range(size):
        services.power_add(
            submission=draft, by=alice, power="ritual", key=f"r{size}-{i}", description=f"Rite {i}"
        )


def _page(world: Any, character: Character) -> tuple[int, str]:
    client = world.client("player_alice")
    url = reverse("downtime_character", args=[world.chronicle.slug, character.pk])
    client.get(url)  # the session's first use writes nothing either way; warm the caches
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), response.content.decode()


def test_queries_do_not_grow_with_the_cast_or_the_actions(
    world: Any, draft: Submission, lucien: Character
) -> None:
    _grow(world, draft, 10)
    small, page = _page(world, lucien)
    assert page.count("Guest character ") == 3 * 10  # three in-character ballots
    assert page.count("Rite ") == 10
    _grow(world, draft, 190)
    large, page = _page(world, lucien)
    assert page.count("Guest character ") == 3 * 200
    assert page.count(">Guest ") - page.count(">Guest character ") == 2 * 200  # players' ballots
    assert page.count("Rite ") == 200
    assert large == small


@pytest.mark.parametrize("value", [None, 2, "2"], ids=["no-pick", "int-pick", "str-pick"])
def test_the_long_select_writes_what_djangos_select_writes(value: Any) -> None:
    """Same HTML as Django's Select (less its blank lines between options), escaping included."""
    choices = [("", "No vote"), (1, 'Ana <b>&</b> "Bo"'), (2, "Célestin"), (3, "O'Hara")]
    attrs = {"id": "vote_feared", "aria-describedby": "vote_feared_helptext"}
    django_html = forms.Select(choices=choices).render("feared", value, attrs=attrs)
    ours = LongSelect(choices=PairedChoices(choices)).render("feared", value, attrs=attrs)
    assert ours == "\n".join(line for line in django_html.splitlines() if line.strip())
    assert ours.count(" selected") == 1 and f'<option value="{value or ""}" selected>' in ours


def test_a_ballot_still_refuses_a_name_not_offered(world: Any) -> None:
    """The shared choice list validates as Django's list did: an id outside the cast fails."""
    field = forms.TypedChoiceField(
        choices=PairedChoices([("", "No vote"), (7, "Ana")]),
        coerce=int,
        empty_value=None,
        required=False,
        widget=LongSelect,
    )
    assert field.clean("7") == 7 and field.clean("") is None
    with pytest.raises(forms.ValidationError):
        field.clean("8")


def test_ballots_sharing_their_options_write_what_the_long_select_writes() -> None:
    """The options written once for several ballots: each ballot still marks its own pick
    and carries its own name and attributes, exactly as `LongSelect` writes them."""
    choices = [("", "No vote"), (1, 'Ana <b>&</b> "Bo"'), (12, "Célestin"), (2, "O'Hara")]
    shared = BallotChoices(choices)
    for name, value in [("feared", 2), ("liked", None), ("respected", "12"), ("costume", 1)]:
        attrs = {"id": f"vote_{name}", "aria-describedby": f"vote_{name}_helptext"}
        ours = BallotSelect(choices=shared).render(name, value, attrs=attrs)
        expected = LongSelect(choices=PairedChoices(choices)).render(name, value, attrs=attrs)
        assert ours == expected
        assert ours.count(" selected") == 1
    assert shared.options is not None and " selected" not in shared.options


def test_loans_read_once_count_as_the_services_own_reads(
    world: Any, draft: Submission, bob_draft: Submission, lucien: Any, marguerite: Any
) -> None:
    """The page hands its one read of the loans to `influence_left` and `loans_to_confirm`:
    confirmed, waiting and withdrawn loans, both ways, give what their own queries give."""
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    confirmed = services.loan_request(
        submission=draft, by=alice, lender_name="Marguerite", influence="business", points=2
    )
    services.loan_confirm(loan=confirmed, by=bob)
    services.loan_request(
        submission=draft, by=alice, lender_name="Marguerite", influence="business", points=1
    )
    services.loan_request(
        submission=bob_draft, by=bob, lender_name="Lucien", influence="business", points=1
    )
    withdrawn = services.loan_request(
        submission=bob_draft, by=bob, lender_name="Lucien", influence="business", points=2
    )
    InfluenceLoan.objects.filter(pk=withdrawn.pk).update(withdrawn_at=DURING)
    cycle = draft.cycle
    for character in (lucien, marguerite):
        loans = list(
            InfluenceLoan.objects.filter(cycle=cycle).filter(borrower=character)
            | InfluenceLoan.objects.filter(cycle=cycle, lender=character)
        )
        with CaptureQueriesContext(connection) as read:
            to_confirm = services.loans_to_confirm(character=character, cycle=cycle, loans=loans)
        assert len(read) == 0
        assert to_confirm == services.loans_to_confirm(character=character, cycle=cycle)
        assert services.influence_left(
            character=character, cycle=cycle, loans=loans
        ) == services.influence_left(character=character, cycle=cycle)
    assert services.influence_left(character=marguerite, cycle=cycle)["business"] == 1
    assert len(services.loans_to_confirm(character=lucien, cycle=cycle)) == 1
