"""Issue 16: creating a submission that exists already, or replaying a keyed action, answers
200 with the existing object (it answered 201, as if it had made a new one)."""

from __future__ import annotations

from typing import Any

import pytest

from characters.models import Character
from downtimes.models import DeskItem, Submission

pytestmark = pytest.mark.django_db

BASE = "/api/chronicles/nightfall/submissions/"


def test_starting_an_existing_submission_answers_200_with_it(
    world: Any, lucien: Character, during: None
) -> None:
    client = world.client("player_alice")
    first = client.post(BASE, {"character": lucien.pk}, content_type="application/json")
    again = client.post(BASE, {"character": lucien.pk}, content_type="application/json")
    assert first.status_code == 201, first.content
    assert again.status_code == 200, again.content
    assert again.json()["id"] == first.json()["id"]
    assert Submission.objects.count() == 1


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("actions", {"action": "investigate", "influence": "business", "points": 1}),
        ("powers", {"power": "ritual", "description": "A ward on the door"}),
    ],
)
def test_a_replayed_key_answers_200_with_the_first_item(
    world: Any, lucien: Character, during: None, path: str, body: dict[str, Any]
) -> None:
    client = world.client("player_alice")
    start = client.post(BASE, {"character": lucien.pk}, content_type="application/json")
    url = f"{BASE}{start.json()['id']}/{path}/"
    first = client.post(url, {"key": "k1", **body}, content_type="application/json")
    again = client.post(url, {"key": "k1", **body}, content_type="application/json")
    assert first.status_code == 201, first.content
    assert again.status_code == 200, again.content
    assert again.json()["id"] == first.json()["id"]
    assert DeskItem.objects.count() == 1
