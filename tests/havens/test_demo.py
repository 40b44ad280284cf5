"""The demo chronicle's havens are made through the services (so the demo breaks when a rule it
relies on changes): built havens with their attributes, a plan still unpaid, an alarm that
fired, a search waiting for the downtime, an object hidden on site."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from havens.models import AlarmFiring, Attribute, HiddenObject, Search, Structure

pytestmark = pytest.mark.django_db


def test_demo_havens() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    structures = Structure.objects.filter(chronicle__slug="elysium-nights")
    assert set(structures.values_list("status", flat=True)) == {"standing", "planned"}
    loft = structures.get(name="The Velvet Loft")
    assert sorted(Attribute.objects.filter(structure=loft).values_list("kind", flat=True)) == [
        "camera",
        "two_way_lock",
    ]
    assert structures.filter(kind="crypt", outer__name="The Elysium Theater").exists()
    firing = AlarmFiring.objects.get()
    assert firing.alarm.structure.name == "Dock 9 Safehouse"
    assert Search.objects.get().status == "submitted"
    assert HiddenObject.objects.get().number == 7
    count = Structure.objects.count()
    call_command("seed_demo", stdout=io.StringIO())
    assert Structure.objects.count() == count  # idempotent


def test_demo_player_sees_the_alarm_on_their_haven() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    client = Client()
    client.force_login(get_user_model().objects.get(username="felix"))
    safehouse = Structure.objects.get(name="Dock 9 Safehouse")
    body = client.get(f"/c/elysium-nights/havens/{safehouse.pk}/").content.decode()
    assert "Audible" in body and "Physical attack" in body
    other = client.get("/c/elysium-nights/havens/").content.decode()
    assert "Velvet Loft" not in other  # Isabella's, not Felix's (HAV-04)
