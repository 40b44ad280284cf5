"""INF-02 and BLD-04 on the database (issue 14, "Herd and the other influences"): the downtime
form, its service, the API and the desk's at-game requests refuse an influence type the action
does not accept; a released Herd spend for blood becomes stored blood, exactly once."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from characters.models import Character, DonorType, InfluenceSpend, StoredBlood
from characters.rules import INFLUENCE_ACTIONS
from chronicle.services import cycle_close
from downtimes.forms.submissions import InfluenceActionForm
from downtimes.models import ActionKind, DeskItem, DeskStatus, Outcome, Submission
from downtimes.services import desk, pipeline
from downtimes.services import submissions as services
from havens.models import Structure

from .conftest import AT_DEADLINE, DURING

pytestmark = pytest.mark.django_db

AFTER_DEADLINE = AT_DEADLINE + dt.timedelta(hours=1)  # 20 March 2024, 00:59 in New York
HERD_BLOOD_REFUSED = "“Herd blood” can be paid only with Herd influence, not Business (INF-02)."
RESEARCH_REFUSED = "“Occult research” can be paid only with Occult influence, not Herd (INF-02)."


@pytest.fixture
def herder(make_character: Callable[..., Character]) -> Character:
    return make_character(
        "Lucien", player="player_alice", clan="toreador", herd=2, business=2, occult=1
    )


@pytest.fixture
def sub(world: Any, herder: Character, during: None) -> Submission:
    return services.submission_for_edit(
        character=herder, cycle=world.game.cycle, by=world.users["player_alice"]
    )


def _add(world: Any, sub: Submission, action: str, influence: str, points: int = 1) -> DeskItem:
    return services.influence_action_add(
        submission=sub,
        by=world.users["player_alice"],
        influence=influence,
        points=points,
        action=action,
        key=f"{action}-{influence}",
        description="Feed at the gallery opening.",
    )


def test_the_rules_table_covers_every_action_kind() -> None:
    """INF-02: one row per ActionKind of the downtime form (the rules cannot import it)."""
    assert set(INFLUENCE_ACTIONS) == set(ActionKind.values)


# --- Refusals: service, page, API, desk ----------------------------------------------------


@pytest.mark.parametrize(
    ("action", "influence", "words"),
    [
        pytest.param("herd", "business", HERD_BLOOD_REFUSED, id="INF-02-herd-blood-business"),
        pytest.param("research", "herd", RESEARCH_REFUSED, id="INF-02-research-herd"),
    ],
)
def test_service_refuses_a_type_the_action_does_not_take(
    world: Any, sub: Submission, action: str, influence: str, words: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        _add(world, sub, action, influence)
    assert caught.value.message_dict == {"influence": [words]}
    assert not DeskItem.objects.exists()
    assert not InfluenceSpend.objects.exists()


@pytest.mark.parametrize(
    ("action", "influence"),
    [
        pytest.param("herd", "herd", id="INF-02-herd-blood-herd"),
        pytest.param("research", "occult", id="INF-02-research-occult"),
        pytest.param("acquire", "occult", id="INF-02-acquire-occult-lesser-extent"),
        pytest.param("acquire", "business", id="INF-02-acquire-business"),
        pytest.param("investigate", "herd", id="INF-02-investigate-any-type"),
    ],
)
def test_service_accepts_a_type_the_action_takes(
    world: Any, sub: Submission, action: str, influence: str
) -> None:
    item = _add(world, sub, action, influence)
    assert (item.action, item.influence, item.spend.points) == (action, influence, 1)


def test_page_shows_the_refusal_beside_the_influence_field(
    world: Any, herder: Character, during: None
) -> None:
    url = reverse("downtime_action_add", kwargs={"slug": "nightfall", "character_id": herder.pk})
    response = world.client("player_alice").post(
        url,
        {
            "key": "k1",
            "action": "herd",
            "influence": "business",
            "points": 1,
            "description": "Feed at the gallery opening.",
        },
    )
    assert response.status_code == 400
    form = response.context["action_form"]
    assert form.errors["influence"] == [HERD_BLOOD_REFUSED]
    page = response.content.decode()
    assert f'<p class="error" role="alert">{HERD_BLOOD_REFUSED}</p>' in page
    assert "Feed at the gallery opening." in page  # what was typed is kept
    assert not DeskItem.objects.exists()


def test_form_says_which_types_each_action_takes() -> None:
    form = InfluenceActionForm(
        structures=Structure.objects.none(), lenders=Character.objects.none()
    )
    help_text = str(form.fields["influence"].help_text)
    assert "Herd blood: Herd only." in help_text
    assert "Occult research: Occult only." in help_text
    assert "Acquire an item: Business, Government, Occult, Underworld only." in help_text
    assert "Every other action: any type." in help_text


def test_api_refuses_with_the_one_error_shape(world: Any, herder: Character, during: None) -> None:
    client = world.client("player_alice")
    base = "/api/chronicles/nightfall/submissions/"
    started = client.post(base, {"character": herder.pk}, content_type="application/json")
    assert started.status_code == 201, started.content
    response = client.post(
        f"{base}{started.json()['id']}/actions/",
        {"key": "a1", "action": "research", "influence": "herd", "points": 1},
        content_type="application/json",
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert error["fields"] == {"influence": [RESEARCH_REFUSED]}
    assert not DeskItem.objects.exists()


def test_desk_refuses_an_at_game_request_paid_with_the_wrong_type(
    world: Any, herder: Character
) -> None:
    kwargs: dict[str, Any] = {
        "cycle": world.game.cycle,
        "character": herder,
        "by": world.users["storyteller"],
        "action": "herd",
        "description": "Feeds on the herd before the court.",
        "requested_at": DURING,
        "now": DURING,
    }
    with pytest.raises(ValidationError) as caught:
        desk.at_game_request_record(**kwargs, influence="business", points=1, key="a")
    assert caught.value.message_dict == {"influence": [HERD_BLOOD_REFUSED]}
    assert not InfluenceSpend.objects.exists()
    item, created = desk.at_game_request_record(**kwargs, influence="herd", points=1, key="b")
    assert created and item.spend.influence == "herd"


# --- Herd blood on release (BLD-04) ---------------------------------------------------------


def _resolve(world: Any) -> None:
    st = world.users["storyteller"]
    cycle_close(cycle=world.game.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=world.game.cycle, by=st, now=AFTER_DEADLINE)


def _release(world: Any) -> bool:
    return pipeline.cycle_release(
        cycle=world.game.cycle, by=world.users["storyteller"], now=AFTER_DEADLINE
    )


def _herd_downtime(world: Any, sub: Submission, points: int = 2, submit: bool = True) -> DeskItem:
    item = _add(world, sub, "herd", "herd", points)
    if submit:
        services.submission_submit(
            submission=Submission.objects.get(pk=sub.pk), by=world.users["player_alice"]
        )
    return item


@pytest.mark.parametrize(
    ("overrides", "points", "blood"),
    [
        pytest.param({}, 2, 6, id="BLD-04-INF-02-herd-2-gives-6"),
        pytest.param({"herd_yield": 2}, 2, 4, id="BLD-04-herd-yield-2-gives-4"),
        pytest.param({"herd_yield": 1}, 1, 1, id="BLD-04-herd-yield-1"),
    ],
)
def test_released_herd_spend_gives_stored_blood_once(
    world: Any, sub: Submission, herder: Character, overrides: dict, points: int, blood: int
) -> None:
    world.chronicle.house_rule_overrides = overrides
    world.chronicle.save(update_fields=["house_rule_overrides"])
    _herd_downtime(world, sub, points)
    _resolve(world)
    # The preview changes nothing: the blood comes with the release.
    assert not StoredBlood.objects.exists()
    outcome = Outcome.objects.get(cycle=world.game.cycle, step="herd_blood")
    assert outcome.value == {"herd": points, "blood": blood, "stored": blood}
    assert outcome.character_id == herder.pk

    assert _release(world) is True
    stored = StoredBlood.objects.get(holder=herder)
    assert (stored.points, stored.donor_type, stored.on_body) == (blood, DonorType.KINE, False)
    # Kine blood collected on the release day (chronicle time) is unusable 3 months on (BLD-03).
    assert (stored.collected_on, stored.unusable_from) == (
        dt.date(2024, 3, 20),
        dt.date(2024, 6, 20),
    )

    # A second release gives nothing more.
    assert _release(world) is False
    assert list(StoredBlood.objects.values_list("points", flat=True)) == [blood]


def test_the_player_reads_the_blood_in_the_released_results(
    world: Any, sub: Submission, herder: Character
) -> None:
    _herd_downtime(world, sub, 2)
    _resolve(world)
    _release(world)
    alice = world.users["player_alice"]
    lines = [
        o.localized_public_text
        for o in pipeline.results_for(user=alice, cycle=world.game.cycle)
        if o.step == "herd_blood"
    ]
    assert lines == [
        "Your Herd gave 6 blood (2 Herd spent): it is kept as stored blood off your body, "
        "above your normal blood pool."
    ]
    # Bob reads nothing of Alice's blood.
    assert not [
        o for o in pipeline.results_for(user=world.users["player_bob"]) if o.step == "herd_blood"
    ]


def test_ventrue_half_yield(world: Any, make_character: Any, during: None) -> None:
    world.chronicle.house_rule_overrides = {"ventrue_herd_mode": "half_yield"}
    world.chronicle.save(update_fields=["house_rule_overrides"])
    ventrue = make_character("Marguerite", player="player_alice", clan="ventrue", herd=2)
    sub = services.submission_for_edit(
        character=ventrue, cycle=world.game.cycle, by=world.users["player_alice"]
    )
    _herd_downtime(world, sub, 2)
    _resolve(world)
    _release(world)
    assert StoredBlood.objects.get(holder=ventrue).points == 3  # 2 × 3 halved (CLN-03)


def test_setting_off_stores_nothing_and_says_so(
    world: Any, sub: Submission, herder: Character
) -> None:
    world.chronicle.house_rule_overrides = {"hunting_excess_becomes_stored": False}
    world.chronicle.save(update_fields=["house_rule_overrides"])
    _herd_downtime(world, sub, 2)
    _resolve(world)
    outcome = Outcome.objects.get(cycle=world.game.cycle, step="herd_blood")
    assert outcome.value == {"herd": 2, "blood": 6, "stored": 0}
    assert "next game" in outcome.public_text
    _release(world)
    assert not StoredBlood.objects.exists()


@pytest.mark.parametrize(
    "how",
    [
        pytest.param("draft", id="BLD-04-DT-01-draft-never-submitted"),
        pytest.param("rejected", id="BLD-04-rejected-by-the-storytellers"),
        pytest.param("withdrawn", id="BLD-04-withdrawn-by-the-player"),
    ],
)
def test_spends_that_give_no_blood(
    world: Any, sub: Submission, herder: Character, how: str
) -> None:
    item = _herd_downtime(world, sub, 2, submit=how != "draft")
    if how == "rejected":
        desk.desk_item_update(
            item=item,
            by=world.users["storyteller"],
            version=item.version,
            status=DeskStatus.REJECTED,
            now=DURING,
        )
    if how == "withdrawn":
        services.item_withdraw(item=item, by=world.users["player_alice"])
    _resolve(world)
    assert not Outcome.objects.filter(cycle=world.game.cycle, step="herd_blood").exists()
    assert _release(world) is True
    assert not StoredBlood.objects.exists()


def test_a_rejection_after_the_preview_stops_the_release(
    world: Any, sub: Submission, herder: Character
) -> None:
    item = _herd_downtime(world, sub, 2)
    _resolve(world)
    item.refresh_from_db()
    desk.desk_item_update(
        item=item,
        by=world.users["storyteller"],
        version=item.version,
        status=DeskStatus.REJECTED,
        now=AFTER_DEADLINE,
    )
    with pytest.raises(ValidationError, match="resolve the cycle again"):
        _release(world)
    assert not StoredBlood.objects.exists()
    # Resolved again, the release gives nothing for the rejected spend.
    pipeline.cycle_resolve_inline(
        cycle=world.game.cycle, by=world.users["storyteller"], now=AFTER_DEADLINE
    )
    assert _release(world) is True
    assert not StoredBlood.objects.exists()
