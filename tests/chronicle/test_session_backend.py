"""A session signed in under Django's own backend (before chronicle.backends) stays signed in."""

from __future__ import annotations

from django.contrib.auth import BACKEND_SESSION_KEY
from django.test import Client
from django.urls import reverse

from tests.conftest import World


def test_a_session_from_before_the_backend_swap_stays_signed_in(
    world: World, client: Client
) -> None:
    client.force_login(world.users["player_alice"], backend="chronicle.backends.ModelBackend")
    session = client.session
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session.save()

    response = client.get(reverse("account"))

    assert response.status_code == 200
    assert response.wsgi_request.user == world.users["player_alice"]
    assert client.session[BACKEND_SESSION_KEY] == "chronicle.backends.ModelBackend"
