"""The demo chronicle has characters of several clans and creature types with real histories,
made through the services (so the demo breaks when a rule the seed relies on changes)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from characters.models import (
    Bond,
    Character,
    Diablerie,
    Item,
    StoredBlood,
    XpEntry,
    XpPurchase,
)
from characters.services.ledger import xp_balances

pytestmark = pytest.mark.django_db


def test_demo_characters_have_histories() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    characters = Character.objects.filter(chronicle__slug="elysium-nights")
    assert {"kindred", "ghoul", "kine"} <= set(characters.values_list("creature", flat=True))
    assert len(set(characters.exclude(clan="").values_list("clan", flat=True))) >= 5
    assert characters.filter(status="retired").exists()
    assert XpPurchase.objects.filter(status="approved").count() >= 2
    assert XpPurchase.objects.filter(status="requested").exists()
    assert Bond.objects.filter(bound=True).exists() and Bond.objects.filter(bound=False).exists()
    assert Diablerie.objects.filter(generation_step="queued").exists()
    assert Item.objects.exists() and StoredBlood.objects.exists()
    players = list(characters.exclude(player=None).values_list("player_id", flat=True))
    chronicle = characters.first().chronicle  # type: ignore[union-attr]
    assert all(b >= 0 for b in xp_balances(chronicle=chronicle, player_ids=players).values())
    entries = XpEntry.objects.count()
    call_command("seed_demo", stdout=io.StringIO())
    assert XpEntry.objects.count() == entries  # idempotent
