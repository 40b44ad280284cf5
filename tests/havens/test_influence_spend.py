"""INF-03 through `influence_spend`, as havens use it: refused beyond the rating, keyed
(idempotent), refunded by a reversing entry, refused in a closed cycle."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from characters.models import InfluenceSpend
from characters.services.influence import influence_left, influence_refund, influence_spend
from chronicle.models import CycleStatus

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def lucien(make_character: Any) -> Any:
    return make_character("Lucien", player="player_alice", business=3)


def _spend(lucien: Any, cycle: Any, points: int, key: str) -> Any:
    return influence_spend(
        character=lucien,
        cycle=cycle,
        influence="business",
        points=points,
        reason="Haven",
        key=key,
    )


def test_spend_is_keyed_and_counts_against_the_rating(world: Any, lucien: Any) -> None:
    cycle = world.game.cycle
    spend, created = _spend(lucien, cycle, 2, "a")
    again, created_again = _spend(lucien, cycle, 2, "a")
    assert created and not created_again and spend.pk == again.pk
    assert influence_left(character=lucien, cycle=cycle)["business"] == 1
    before = InfluenceSpend.objects.count()
    with pytest.raises(ValidationError) as refused:
        _spend(lucien, cycle, 2, "b")
    assert "INF-03" in " ".join(refused.value.messages)
    assert InfluenceSpend.objects.count() == before


def test_refund_gives_the_points_back_once(world: Any, lucien: Any) -> None:
    cycle = world.game.cycle
    spend, _ = _spend(lucien, cycle, 3, "a")
    refund = influence_refund(spend=spend, reason="cancelled")
    assert influence_refund(spend=spend, reason="again").pk == refund.pk
    assert refund.points == -3
    assert influence_left(character=lucien, cycle=cycle)["business"] == 3
    with pytest.raises(ValidationError, match="cannot itself be refunded"):
        influence_refund(spend=refund, reason="no")


def test_unknown_type_and_closed_cycle_are_refused(world: Any, lucien: Any) -> None:
    cycle = world.game.cycle
    with pytest.raises(ValidationError, match="Choose one of"):
        influence_spend(
            character=lucien, cycle=cycle, influence="money", points=1, reason="", key="x"
        )
    cycle.status, cycle.closed_at = CycleStatus.CLOSED, timezone.now()
    cycle.save()
    with pytest.raises(ValidationError, match="DT-01"):
        _spend(lucien, cycle, 1, "c")
    assert not InfluenceSpend.objects.exists()
