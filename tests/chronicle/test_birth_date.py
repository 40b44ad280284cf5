"""GEN-01, "Minors (under 18) are not permitted to participate" (issue 14): the date of birth on
the account, asked once of accounts without it, seen (as an age) by admins only, refusing a
minor on the sign-in sheet and paying a minor no award (DT-04).

The world's first game is Saturday 9 March 2024 (New York): a player born on 9 March 2006 is 18
that day; one born on 10 March 2006 is 17.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import zoneinfo
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from axes.utils import reset as axes_reset
from django.core.exceptions import ValidationError
from django.test import Client, override_settings
from django.utils import timezone

from chronicle import services
from chronicle.models import Attendance, Membership, Profile
from chronicle.services import SignIn, account, people
from downtimes.models import Outcome
from downtimes.rules import award_ineligibility
from downtimes.services.votes import Award
from tests.conftest import PASSWORD, World
from tests.pipeline.conftest import AFTER_DEADLINE, Month, month  # noqa: F401

NY = zoneinfo.ZoneInfo("America/New_York")
GAME_NIGHT = dt.datetime(2024, 3, 9, 19, 0, tzinfo=NY)
EIGHTEEN_ON_GAME_DAY = dt.date(2006, 3, 9)
SEVENTEEN_ON_GAME_DAY = dt.date(2006, 3, 10)
SIGN_IN = "/c/nightfall/games/1/sign-in/"


@pytest.fixture(autouse=True)
def clean_axes(db: None) -> Iterator[None]:
    axes_reset()
    yield
    axes_reset()


def born(user: Any, day: dt.date) -> None:
    Profile.objects.update_or_create(
        user=user, defaults={"birth_date": day, "birth_date_asked_at": timezone.now()}
    )


def profile_of(user: Any) -> Profile:
    return Profile.objects.get(user=user)


# --- The account page -------------------------------------------------------------------------


def test_the_account_page_saves_a_date_of_birth(world: World) -> None:
    alice = world.users["player_alice"]
    client = world.client("player_alice")
    page = client.get("/account/").content.decode()
    assert 'name="birth_date"' in page and 'type="date"' in page
    assert '<label for="id_birth_date">Date of birth</label>' in page

    response = client.post("/account/", {"save_birth_date": "1", "birth_date": "1990-05-17"})
    assert response.status_code == 302 and response["Location"] == "/account/"
    profile = profile_of(alice)
    assert profile.birth_date == dt.date(1990, 5, 17)
    assert profile.birth_date_asked_at is not None
    # The owner sees their own date on the page again.
    assert 'value="1990-05-17"' in client.get("/account/").content.decode()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param("2999-01-01", "cannot be in the future", id="GEN-01-account-future"),
        pytest.param("1899-12-31", "before 1900 cannot be right", id="GEN-01-account-1899"),
        pytest.param("not a date", "Enter a valid date", id="GEN-01-account-not-a-date"),
    ],
)
def test_the_account_page_refuses_an_impossible_date_next_to_the_field(
    world: World, value: str, message: str
) -> None:
    response = world.client("player_alice").post(
        "/account/", {"save_birth_date": "1", "birth_date": value}
    )
    assert response.status_code == 400
    page = response.content.decode()
    field = re.search(r'<div class="field has-error">(.*?)</div>', page, re.S)
    assert field is not None and 'name="birth_date"' in field.group(1)
    assert message in field.group(1)
    assert not Profile.objects.filter(birth_date__isnull=False).exists()


def test_the_service_refuses_the_future_and_before_1900(world: World) -> None:
    alice = world.users["player_alice"]
    now = dt.datetime(2024, 3, 9, 12, tzinfo=dt.UTC)
    with pytest.raises(ValidationError) as refused:
        account.profile_birth_date_set(user=alice, birth_date=dt.date(2024, 3, 11), now=now)
    assert "birth_date" in refused.value.message_dict
    with pytest.raises(ValidationError):
        account.profile_birth_date_set(user=alice, birth_date=dt.date(1899, 12, 31), now=now)
    assert not Profile.objects.exists()
    account.profile_birth_date_set(user=alice, birth_date=dt.date(1900, 1, 1), now=now)
    assert profile_of(alice).birth_date == dt.date(1900, 1, 1)


# --- Joining: the invitation's and the sign-up form ask for it ---------------------------------


def _invitation(world: World) -> str:
    admin = Membership.objects.get(user=world.users["admin"], chronicle=world.chronicle)
    [(_invitation, token)] = people.invitations_create(
        membership=admin, invitees=[people.Invitee(email="nina@example.org")]
    )
    return f"/invitations/{token}/"


NEW_PERSON = {
    "name": "Nina",
    "username": "nina",
    "password": PASSWORD,
    "password_again": PASSWORD,
}


def test_a_new_person_gives_the_date_when_accepting(world: World) -> None:
    path = _invitation(world)
    client = Client()
    assert 'name="birth_date"' in client.get(path).content.decode()
    response = client.post(path, NEW_PERSON | {"birth_date": "1995-07-01"})
    assert response.status_code == 302
    profile = Profile.objects.get(user__username="nina")
    assert profile.birth_date == dt.date(1995, 7, 1)
    assert profile.birth_date_asked_at is not None


def test_accepting_without_a_date_counts_as_asked(world: World) -> None:
    response = Client().post(_invitation(world), NEW_PERSON | {"birth_date": ""})
    assert response.status_code == 302
    profile = Profile.objects.get(user__username="nina")
    assert profile.birth_date is None and profile.birth_date_asked_at is not None
    assert not account.birth_date_to_ask(profile.user)


def test_accepting_with_a_future_date_is_refused_next_to_the_field(world: World) -> None:
    response = Client().post(_invitation(world), NEW_PERSON | {"birth_date": "2999-01-01"})
    assert response.status_code == 400
    page = response.content.decode()
    field = re.search(r'<div class="field has-error">(.*?)</div>', page, re.S)
    assert field is not None and 'name="birth_date"' in field.group(1)
    assert "cannot be in the future" in field.group(1)
    assert not Membership.objects.filter(user__username="nina").exists()


@override_settings(CHRONICLE_OPEN_REGISTRATION=True)
def test_sign_up_takes_the_date(db: None) -> None:
    form = NEW_PERSON | {"email": "nina@example.org", "birth_date": "1988-02-29"}
    response = Client().post("/accounts/signup/", form)
    assert response.status_code == 302
    assert Profile.objects.get(user__username="nina").birth_date == dt.date(1988, 2, 29)

    refused = Client().post(
        "/accounts/signup/", form | {"username": "nina2", "birth_date": "1850-01-01"}
    )
    assert refused.status_code == 400
    assert "before 1900 cannot be right" in refused.content.decode()


# --- Asked once after signing in --------------------------------------------------------------


def _log_in(client: Client, username: str, **data: str) -> Any:
    return client.post("/accounts/login/", {"username": username, "password": PASSWORD, **data})


def test_an_account_without_a_date_is_asked_once_after_logging_in(world: World) -> None:
    alice = world.users["player_alice"]
    client = Client()
    response = _log_in(client, "player_alice", next="/c/nightfall/games/")
    assert response.status_code == 302
    assert response["Location"] == "/account/birth-date/?next=%2Fc%2Fnightfall%2Fgames%2F"

    page = client.get(response["Location"])
    assert page.status_code == 200
    content = page.content.decode()
    assert "18 or older" in content
    assert '<label for="id_birth_date">Date of birth</label>' in content
    assert 'value="/c/nightfall/games/"' in content

    # Skipping records that they were asked, and goes on to where they were going.
    skipped = client.post(
        "/account/birth-date/", {"skip": "1", "next": "/c/nightfall/games/", "birth_date": ""}
    )
    assert skipped.status_code == 302 and skipped["Location"] == "/c/nightfall/games/"
    profile = profile_of(alice)
    assert profile.birth_date is None and profile.birth_date_asked_at is not None

    # The next login is not asked again.
    client.post("/accounts/logout/")
    again = _log_in(Client(), "player_alice")
    assert again.status_code == 302 and again["Location"] == "/"


def test_answering_the_question_saves_the_date(world: World) -> None:
    client = Client()
    _log_in(client, "player_bob")
    response = client.post(
        "/account/birth-date/", {"save_birth_date": "1", "birth_date": "1999-12-31", "next": "/"}
    )
    assert response.status_code == 302 and response["Location"] == "/"
    assert profile_of(world.users["player_bob"]).birth_date == dt.date(1999, 12, 31)
    assert _log_in(Client(), "player_bob")["Location"] == "/"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param({"birth_date": ""}, "or choose", id="GEN-01-ask-empty"),
        pytest.param({"birth_date": "2999-01-01"}, "in the future", id="GEN-01-ask-future"),
        pytest.param({"birth_date": "1800-01-01"}, "before 1900", id="GEN-01-ask-1800"),
    ],
)
def test_the_question_refuses_a_wrong_answer_next_to_the_field(
    world: World, data: dict[str, str], message: str
) -> None:
    response = world.client("player_bob").post(
        "/account/birth-date/", {"save_birth_date": "1", "next": "/", **data}
    )
    assert response.status_code == 400
    field = re.search(r'<div class="field has-error">(.*?)</div>', response.content.decode(), re.S)
    assert field is not None and message in field.group(1)
    assert account.birth_date_to_ask(world.users["player_bob"])


def test_the_question_refuses_an_offsite_next(world: World) -> None:
    response = world.client("player_bob").post(
        "/account/birth-date/", {"skip": "1", "next": "https://evil.example/"}
    )
    assert response["Location"] == "/"


def test_an_account_with_a_date_is_not_asked(world: World) -> None:
    born(world.users["storyteller"], dt.date(1980, 1, 1))
    response = _log_in(Client(), "storyteller")
    assert response.status_code == 302 and response["Location"] == "/"


def test_other_pages_never_redirect_to_the_question(world: World) -> None:
    """Only the login asks: every other page is drawn as before, for an account not asked."""
    assert world.client("player_alice").get("/c/nightfall/").status_code == 200


# --- Seen by admins only ------------------------------------------------------------------------


@pytest.fixture
def dated(world: World) -> World:
    born(world.users["player_alice"], SEVENTEEN_ON_GAME_DAY)
    born(world.users["storyteller"], dt.date(1971, 6, 15))
    return world


DATE_TEXTS = ("2006-03-10", "10 March 2006", "March 10, 2006", "Mar. 10, 2006", "1971")


def _row(page: str, username: str) -> str:
    row = re.search(rf"<tr>\s*<td>[^<]*(?:<br><small>)?{username}.*?</tr>", page, re.S)
    assert row is not None, username
    return row.group(0)


def test_admins_see_each_age_or_not_given(dated: World) -> None:
    with time_machine.travel(GAME_NIGHT, tick=False):
        page = dated.client("admin").get("/c/nightfall/people/").content.decode()
    assert '<th scope="col">Age</th>' in page
    alice = _row(page, "player_alice")
    assert "<td>17 <span" in alice and "under 18" in alice
    assert "<td>52</td>" in _row(page, "storyteller")
    assert "not given" in _row(page, "player_bob")
    for text in DATE_TEXTS:
        assert text not in page  # the age, not the date


def test_storytellers_see_no_age_and_no_date(dated: World) -> None:
    with time_machine.travel(GAME_NIGHT, tick=False):
        page = dated.client("storyteller").get("/c/nightfall/people/").content.decode()
    assert ">Age<" not in page and "not given" not in page and "under 18" not in page
    for text in DATE_TEXTS:
        assert text not in page
    assert dated.client("player_bob").get("/c/nightfall/people/").status_code == 403


@pytest.mark.parametrize("persona", ["admin", "storyteller", "player_bob"])
def test_the_api_shows_no_one_a_date_of_birth(dated: World, persona: str) -> None:
    client = dated.client(persona)
    for url in (
        "/api/chronicles/nightfall/memberships/",
        f"/api/chronicles/nightfall/memberships/{dated.users['player_alice'].pk}/",
    ):
        response = client.get(url)
        assert response.status_code in (200, 404), (url, response.status_code)
        body = response.content.decode()
        assert "birth" not in body
        for text in DATE_TEXTS:
            assert text not in body


def test_the_own_data_download_carries_only_the_owners_date(dated: World) -> None:
    alice = json.loads(dated.client("player_alice").get("/account/data/").content)
    assert alice["user"]["birth_date"] == "2006-03-10"
    bob = dated.client("player_bob").get("/account/data/").content.decode()
    assert json.loads(bob)["user"]["birth_date"] is None
    assert "2006-03-10" not in bob


# --- The sign-in sheet ------------------------------------------------------------------------


def test_a_minor_on_the_games_date_cannot_be_signed_in(world: World) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    alice.first_name = "Alice"
    alice.save()
    born(alice, SEVENTEEN_ON_GAME_DAY)
    with pytest.raises(ValidationError) as refused:
        services.attendance_record(
            game=world.game,
            lines=[SignIn(alice.pk, True, True), SignIn(bob.pk, True, True)],
            by=world.users["storyteller"],
            now=GAME_NIGHT,
        )
    message = " ".join(refused.value.messages)
    assert "Alice cannot be signed in" in message and "18 or older" in message
    assert "GEN-01" in message
    assert not Attendance.objects.exists()


def test_a_player_of_18_on_the_game_day_and_one_without_a_date_are_signed_in(
    world: World,
) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    born(alice, EIGHTEEN_ON_GAME_DAY)
    services.attendance_record(
        game=world.game,
        lines=[SignIn(alice.pk, True, True), SignIn(bob.pk, True, True)],
        by=world.users["storyteller"],
        now=GAME_NIGHT,
    )
    assert set(Attendance.objects.values_list("player_id", flat=True)) == {alice.pk, bob.pk}


def test_a_minor_who_stays_home_does_not_block_the_sheet(world: World) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    born(alice, SEVENTEEN_ON_GAME_DAY)
    services.attendance_record(
        game=world.game,
        lines=[SignIn(alice.pk, False, False), SignIn(bob.pk, True, True)],
        by=world.users["storyteller"],
        now=GAME_NIGHT,
    )
    assert list(Attendance.objects.values_list("player_id", flat=True)) == [bob.pk]


def test_the_sheet_page_refuses_a_minor_and_marks_age_not_given(world: World) -> None:
    alice, bob = world.users["player_alice"], world.users["player_bob"]
    born(alice, SEVENTEEN_ON_GAME_DAY)
    with time_machine.travel(GAME_NIGHT, tick=False):
        client = world.client("storyteller")
        page = client.get(SIGN_IN).content.decode()
        assert "age not given" in _row(page, "player_bob")
        assert "age not given" not in _row(page, "player_alice")
        assert "2006" not in page  # the storyteller never sees the date
        response = client.post(
            SIGN_IN,
            {
                f"was-{alice.pk}": "00",
                f"was-{bob.pk}": "00",
                f"attended-{alice.pk}": "on",
                f"waiver-{alice.pk}": "on",
            },
        )
    assert response.status_code == 400
    assert "player_alice cannot be signed in" in response.content.decode()
    assert "(GEN-01)" in response.content.decode()
    assert not Attendance.objects.exists()


# --- DT-04: no award for a minor ----------------------------------------------------------------


def test_a_minor_on_the_games_date_earns_no_award(month: Month) -> None:  # noqa: F811
    """Both signed in before their dates were given; Bob turns out to have been 17 that night,
    Alice 18 exactly."""
    from chronicle.services import cycle_close
    from downtimes.services import pipeline

    world = month.world
    alice, bob, st = (world.users[n] for n in ("player_alice", "player_bob", "storyteller"))
    born(alice, EIGHTEEN_ON_GAME_DAY)
    born(bob, SEVENTEEN_ON_GAME_DAY)
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    paid = Outcome.objects.get(cycle=month.cycle, step="awards", subject=f"base:{alice.pk}")
    assert paid.xp == Decimal("2.5")
    refused = Outcome.objects.get(cycle=month.cycle, step="no_downtime", subject=f"base:{bob.pk}")
    assert refused.xp == 0
    assert "under age" in refused.explanation and "GEN-01" in refused.explanation


@pytest.mark.parametrize(
    ("attended", "waiver", "adult", "expected"),
    [
        pytest.param(True, True, True, None, id="GEN-01-DT-04-adult-paid"),
        pytest.param(True, True, False, "under age", id="GEN-01-DT-04-minor-not-paid"),
        pytest.param(True, False, False, "under age", id="GEN-01-DT-04-minor-no-waiver"),
        pytest.param(False, False, False, "did not attend", id="GEN-01-DT-04-minor-absent"),
    ],
)
def test_award_ineligibility_of_a_minor(
    attended: bool, waiver: bool, adult: bool, expected: str | None
) -> None:
    reason = award_ineligibility(attended=attended, waiver_signed=waiver, adult=adult)
    assert reason is None if expected is None else expected in (reason or "")


def test_a_vote_award_of_a_minor_is_not_eligible() -> None:
    common: dict[str, Any] = {"player": "1", "name": "A", "xp": 3, "won": []}
    assert Award(**common, attended=True, waiver_signed=True).eligible
    assert not Award(**common, attended=True, waiver_signed=True, adult=False).eligible
