"""The house-rule settings page (issue 12): every setting of chronicle.rules.HOUSE_RULE_FIELDS,
grouped by section of the rules, each with its plain label, rule ID and default; the changed
ones marked, each with a reset to its default.

These tests stand before the world's first game (9 March 2024), when nothing is in force yet
and a change applies at once; publishing a change for a later game once games have been
played (GEN-05) is tested in test_rule_changes.py."""

from __future__ import annotations

import datetime as dt
import html as html_lib
import re
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.urls import reverse

from chronicle import services
from chronicle.models import Chronicle
from chronicle.rules import HOUSE_RULE_FIELDS
from chronicle.services.settings import chronicle_house_rule_reset
from tests.conftest import World

URL = "/c/nightfall/settings/"
RESET = "/c/nightfall/settings/reset/"
BEFORE_THE_FIRST_GAME = dt.datetime(2024, 3, 1, 12, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def _before_the_first_game() -> Any:
    with time_machine.travel(BEFORE_THE_FIRST_GAME, tick=False):
        yield


def settings_page(world: World) -> str:
    response = world.client("admin").get(URL)
    assert response.status_code == 200
    return response.content.decode()


def sections(html: str) -> dict[str, tuple[str, str]]:
    """Section code -> (its heading's text, its HTML), in page order."""
    found: dict[str, tuple[str, str]] = {}
    parts = re.split(r'<section class="card settings-section" id="section-([A-Z]+)"', html)
    for code, body in zip(parts[1::2], parts[2::2], strict=True):
        heading = re.search(r"<h2[^>]*>\s*([^<]+?)\s*<code", body)
        assert heading
        found[code] = (html_lib.unescape(heading.group(1)), body.split("</section>")[0])
    return found


def setting(html: str, name: str) -> str:
    match = re.search(
        rf'<div class="setting( changed)?" id="setting-{name}">(.*?)</p>\s*</div>', html, re.S
    )
    assert match, f"no setting {name}"
    return match.group(0)


def override(world: World, **values: Any) -> None:
    services.chronicle_house_rules_update(chronicle=world.chronicle, overrides=values)
    world.chronicle.refresh_from_db()


def test_every_setting_is_on_the_page_with_its_label_rule_and_default(world: World) -> None:
    html = settings_page(world)
    assert len(HOUSE_RULE_FIELDS) >= 50
    for name, spec in HOUSE_RULE_FIELDS.items():
        row = setting(html, name)
        assert html_lib.escape(spec.metadata["label"]) in row, name
        assert f"<code>{spec.metadata['rule']}</code>" in row, name
        assert "Default:" in row, name


def test_settings_are_grouped_under_plain_section_headings(world: World) -> None:
    found = sections(settings_page(world))
    # In the order of the rules' chapters (SPEC.md), each with a heading in words.
    assert list(found)[:4] == ["GEN", "TST", "CLN", "CRE"]
    assert found["GEN"][0] == "General and governance"
    assert found["XP"][0] == "XP spending and character end"
    assert found["DT"][0] == "Downtimes and XP awards"
    assert found["INF"][0] == "Influences"
    assert found["HAV"][0] == "Havens"
    assert found["DIS"][0] == "Disciplines"
    # A setting sits in the section of its rule ID's prefix ("CRE-05/XP-03" under CRE).
    assert 'id="setting-generation_step_cost"' in found["CRE"][1]
    assert 'id="setting-deadline_weeks_after_game"' in found["DT"][1]
    assert 'id="setting-retirement_spent_fraction"' in found["XP"][1]
    assert 'id="setting-theft_control_games"' in found["HAV"][1]
    shown = sum(body.count('<div class="setting') for _, body in found.values())
    assert shown == len(HOUSE_RULE_FIELDS)


def test_defaults_read_as_words(world: World) -> None:
    html = settings_page(world)
    assert "Default: <strong>3</strong>" in setting(html, "willpower_cost")
    assert "Default: <strong>Yes</strong>" in setting(html, "month_is_game_cycle")
    assert "Default: <strong>No</strong>" in setting(html, "background_blocks_freebies")
    assert "Default: <strong>double cost</strong>" in setting(html, "ventrue_herd_mode")
    assert "Default: <strong>2.5</strong>" in setting(html, "no_downtime_xp")


def test_changed_settings_are_marked_with_a_reset(world: World) -> None:
    override(world, willpower_cost=4, ventrue_herd_mode="half_yield")
    html = settings_page(world)
    for name in ("willpower_cost", "ventrue_herd_mode"):
        row = setting(html, name)
        assert row.startswith('<div class="setting changed"'), name
        assert '<span class="badge badge-warn">changed</span>' in row
        assert f'formaction="{RESET}" formnovalidate name="setting" value="{name}"' in row
    plain = setting(html, "trait_cost")
    assert plain.startswith('<div class="setting"')
    assert "changed" not in plain and "Reset to default" not in plain
    cre = sections(html)["CRE"][1]
    assert "1 changed" in cre
    # The reset buttons post the settings form to the reset address, with its game (GEN-05).
    assert html.count(f'formaction="{RESET}"') == 2


def test_reset_puts_one_setting_back_and_keeps_the_others(world: World) -> None:
    override(world, willpower_cost=4, trait_cost=2)
    response = world.client("admin").post(RESET, {"setting": "willpower_cost"}, follow=True)
    assert response.redirect_chain[-1][0] == f"{URL}#setting-willpower_cost"
    assert "“Cost of one willpower” is back to its default." in response.content.decode()
    world.chronicle.refresh_from_db()
    assert world.chronicle.house_rule_overrides == {"trait_cost": 2}
    assert world.chronicle.house_rules.willpower_cost == 3


def test_resetting_an_unchanged_or_unknown_setting_changes_nothing(world: World) -> None:
    override(world, trait_cost=2)
    client = world.client("admin")
    same = client.post(RESET, {"setting": "willpower_cost"}, follow=True)
    assert "already had its default" in same.content.decode()
    unknown = client.post(RESET, {"setting": "no_such_thing"}, follow=True)
    assert "There is no house-rule setting called no_such_thing." in unknown.content.decode()
    world.chronicle.refresh_from_db()
    assert world.chronicle.house_rule_overrides == {"trait_cost": 2}


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 302),
        ("storyteller", 403),
        ("player_alice", 403),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_only_admins_reset(world: World, persona: str | None, status: int) -> None:
    override(world, willpower_cost=4)
    response = world.client(persona).post(RESET, {"setting": "willpower_cost"})
    assert response.status_code == status
    if persona is None:
        assert response["Location"].startswith(reverse("login"))
    world.chronicle.refresh_from_db()
    expected = {} if persona == "admin" else {"willpower_cost": 4}
    assert world.chronicle.house_rule_overrides == expected


def test_reset_is_a_post(world: World) -> None:
    assert world.client("admin").get(RESET).status_code == 405


def test_members_read_the_settings_page_and_only_admins_change_it(world: World) -> None:
    """GEN-05: every member reads the settings and the changes announced; only admins save."""
    override(world, willpower_cost=4)
    for persona in ("storyteller", "player_alice"):
        response = world.client(persona).get(URL)
        assert response.status_code == 200
        html = response.content.decode()
        assert "Upcoming rule changes" in html
        assert "Save house rules" not in html and "Reset to default" not in html
        assert 'name="willpower_cost"' in html and "disabled" in setting(html, "willpower_cost")
        assert world.client(persona).post(URL, {"willpower_cost": "5"}).status_code == 403
    assert world.client("outsider").get(URL).status_code == 404
    world.chronicle.refresh_from_db()
    assert world.chronicle.house_rules.willpower_cost == 4


def test_resetting_the_deadline_setting_moves_open_deadlines_back(world: World) -> None:
    cycle = world.game.cycle
    override(world, deadline_weeks_after_game=3)
    cycle.refresh_from_db()
    # Saturday 9 March 2024: three Tuesdays on is the 26th, two the 19th (23:59 EDT).
    assert cycle.deadline_at == dt.datetime(2024, 3, 27, 3, 59, tzinfo=dt.UTC)
    assert chronicle_house_rule_reset(chronicle=world.chronicle, name="deadline_weeks_after_game")
    cycle.refresh_from_db()
    assert cycle.deadline_at == dt.datetime(2024, 3, 20, 3, 59, tzinfo=dt.UTC)


def test_the_reset_service(world: World) -> None:
    override(world, willpower_cost=4)
    assert chronicle_house_rule_reset(chronicle=world.chronicle, name="willpower_cost") is True
    assert world.chronicle.house_rule_overrides == {}
    assert Chronicle.objects.get(pk=world.chronicle.pk).house_rule_overrides == {}
    assert chronicle_house_rule_reset(chronicle=world.chronicle, name="willpower_cost") is False
    with pytest.raises(ValidationError):
        chronicle_house_rule_reset(chronicle=world.chronicle, name="nope")


def test_a_bad_value_keeps_what_was_typed_in_its_section(world: World) -> None:
    client = world.client("admin")
    form = client.get(URL).context["form"]
    data = {name: field.initial for name, field in form.fields.items()}
    data = {k: v for k, v in data.items() if v is not False}
    data["willpower_cost"] = "-2"
    response = client.post(URL, data)
    assert response.status_code == 400
    row = setting(response.content.decode(), "willpower_cost")
    assert 'value="-2"' in row and "greater than or equal to 0" in row
