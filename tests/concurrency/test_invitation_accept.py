"""One invitation link followed twice at the same instant (a double click, two devices) makes
one account and one membership: the invitation row is locked before it is marked used. On
PostgreSQL, because SQLite serialises every writer and so cannot show a race."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from chronicle.models import Invitation, Membership
from chronicle.services import people
from tests.concurrency.test_purchase_approve import run_together
from tests.conftest import PASSWORD, World
from tests.invariants import assert_invariants

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_link_followed_twice_at_once_joins_once(postgres: None, world: World) -> None:
    admin = Membership.objects.get(user=world.users["admin"], chronicle=world.chronicle)
    [(_invitation, token)] = people.invitations_create(
        membership=admin, invitees=[people.Invitee(email="nina@example.org")]
    )
    results = run_together(
        4,
        lambda i: people.invitation_accept_new(
            token=token, username=f"nina{i}", name="Nina", password=PASSWORD
        ),
    )
    joined = [r for r in results if isinstance(r, Membership)]
    refused = [r for r in results if isinstance(r, ValidationError)]
    assert len(joined) == 1, results
    assert len(refused) == 3 and all(r.code == "accepted" for r in refused)
    assert get_user_model().objects.filter(username__startswith="nina").count() == 1
    assert Membership.objects.filter(chronicle=world.chronicle, user=joined[0].user).count() == 1
    assert Invitation.objects.get().accepted_by == joined[0].user
    assert_invariants()
