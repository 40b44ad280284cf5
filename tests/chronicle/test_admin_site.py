"""Issue 16: the demo's admin was a Django superuser and, through /admin/, read another
chronicle's storyteller notes, which the app and the API rightly answer 404 to. The demo's admin
is now a chronicle admin only, and Django's admin is for the deployment's superusers alone."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from characters.models import Character
from chronicle import services
from chronicle.management.commands.seed_demo import DEMO_PASSWORD, DEMO_SLUG

pytestmark = pytest.mark.django_db

SECRET = "MARKOTHERSTNOTES"


@pytest.fixture
def demo() -> None:
    call_command("seed_demo", stdout=StringIO())


@pytest.fixture
def other_character(db: None) -> Character:
    """A character of another chronicle, with storyteller notes the demo's admin must not read."""
    other = services.chronicle_create(
        name="Somewhere Else", slug="somewhere-else", timezone_name="Europe/Berlin"
    )
    character = Character.objects.create(
        chronicle=other, name="Quiet Kindred", st_notes=f"Secret {SECRET}"
    )
    return character


def _logged_in(username: str) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return client


def test_the_demo_admin_is_no_django_superuser(demo: None) -> None:
    admin = get_user_model().objects.get(username="admin")
    assert not admin.is_superuser and not admin.is_staff
    assert admin.memberships.get(chronicle__slug=DEMO_SLUG).role == "admin"


def test_the_demo_admin_gets_nothing_from_django_admin(
    demo: None, other_character: Character
) -> None:
    client = _logged_in("admin")
    for path in (
        "/admin/",
        "/admin/characters/character/",
        f"/admin/characters/character/{other_character.pk}/change/",
    ):
        response = client.get(path)
        assert response.status_code == 302, (path, response.status_code)
        assert response["Location"].startswith("/admin/login/"), response["Location"]
        assert SECRET not in response.content.decode()
    # Following the redirect: the admin's login form, not the data.
    page = client.get(f"/admin/characters/character/{other_character.pk}/change/", follow=True)
    assert SECRET not in page.content.decode()
    # The app still answers 404 to the same question.
    other = client.get(f"/c/somewhere-else/characters/{other_character.pk}/")
    assert other.status_code == 404


def test_the_demo_admin_still_runs_the_chronicle_in_the_app(demo: None) -> None:
    client = _logged_in("admin")
    for path in (
        f"/c/{DEMO_SLUG}/",
        f"/c/{DEMO_SLUG}/people/",
        f"/c/{DEMO_SLUG}/games/",
        f"/c/{DEMO_SLUG}/settings/",
    ):
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)


def test_staff_status_alone_opens_no_admin(other_character: Character) -> None:
    """is_staff without is_superuser (what the old demo gave, what an operator might tick)."""
    staff = get_user_model().objects.create_user(
        username="staffer", password=DEMO_PASSWORD, is_staff=True
    )
    client = Client()
    client.force_login(staff)
    response = client.get(f"/admin/characters/character/{other_character.pk}/change/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    # Signing in through the admin's own form lands on that form again, not in the admin.
    again = Client()
    answer = again.post(
        "/admin/login/?next=/admin/",
        {"username": "staffer", "password": DEMO_PASSWORD, "next": "/admin/"},
        follow=True,
    )
    assert answer.redirect_chain[-1][0].startswith("/admin/login/"), answer.redirect_chain
    assert SECRET not in answer.content.decode()
    assert again.get("/admin/characters/character/").status_code == 302


def test_a_deployment_superuser_keeps_the_admin(other_character: Character) -> None:
    root = get_user_model().objects.create_superuser(username="root", password="x-root-pass-1")
    client = Client()
    client.force_login(root)
    assert client.get("/admin/").status_code == 200
    page = client.get(f"/admin/characters/character/{other_character.pk}/change/")
    assert page.status_code == 200
    assert SECRET in page.content.decode()
    assert "unsafe-inline" not in page["Content-Security-Policy"]


def test_seeding_again_demotes_an_old_demo_superuser(demo: None) -> None:
    """A demo seeded before this fix made its admin a superuser: the next seeding undoes it, but
    never touches an operator's own account that happens to share a demo name."""
    users = get_user_model().objects
    users.filter(username="admin").update(is_staff=True, is_superuser=True)
    bob = users.get(username="bob")
    bob.set_password("operator-own-password-7")
    bob.is_superuser = bob.is_staff = True
    bob.save()
    call_command("seed_demo", stdout=StringIO())
    admin = users.get(username="admin")
    assert not admin.is_superuser and not admin.is_staff
    assert users.get(username="bob").is_superuser
