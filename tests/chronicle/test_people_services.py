"""People services: starting a chronicle, invitations (single use, expiry, revocation, the wrong
account), roles with at least one admin, leaving and removal that lose nothing."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import override_settings
from django.utils import timezone

from characters.models import Status, XpEntry, XpKind
from characters.services import ledger
from chronicle.models import Invitation, Membership, MembershipEvent, Role
from chronicle.services import people
from tests.conftest import PASSWORD, World

User = get_user_model()
NOW = dt.datetime(2026, 12, 1, 20, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def _mail_after_commit(django_capture_on_commit_callbacks: Any) -> None:
    """Services send mail after commit; inside a test's transaction that is when the service
    returns, as it would be in production."""
    global CAPTURE
    CAPTURE = django_capture_on_commit_callbacks


CAPTURE: Any = None


def committed(fn: Any, **kwargs: Any) -> Any:
    with CAPTURE(execute=True):
        return fn(**kwargs)


def member(world: World, name: str) -> Membership:
    return Membership.objects.get(chronicle=world.chronicle, user=world.users[name])


def invite(
    world: World, by: str, email: str, role: str = Role.PLAYER, **kw: Any
) -> tuple[Invitation, str]:
    [(invitation, token)] = committed(
        people.invitations_create,
        membership=member(world, by),
        invitees=[people.Invitee(email=email, role=role, **kw)],
        now=NOW,
    )
    return invitation, token


def link_token(message: Any) -> str:
    found = re.search(r"/invitations/([^/\s]+)/", message.body)
    assert found, message.body
    return found.group(1)


# --- Starting a chronicle ------------------------------------------------------------------------


def test_a_user_starts_a_chronicle_and_becomes_its_admin(world: World) -> None:
    user = world.users["outsider"]
    chronicle = people.chronicle_start(
        name="Roma di Notte",
        slug="roma",
        timezone_name="Europe/Rome",
        creator=user,
        first_game=dt.date(2027, 1, 9),
        now=NOW,
    )
    membership = Membership.objects.get(chronicle=chronicle, user=user)
    assert membership.role == Role.ADMIN
    assert chronicle.games.get().number == 1
    assert chronicle.cycles.count() == 1
    assert MembershipEvent.objects.filter(chronicle=chronicle, user=user, kind="joined").exists()


def test_a_taken_address_is_refused_next_to_its_field(world: World) -> None:
    with pytest.raises(ValidationError) as exc:
        people.chronicle_start(
            name="Again", slug="nightfall", timezone_name="UTC", creator=world.users["outsider"]
        )
    assert "slug" in exc.value.message_dict


@override_settings(CHRONICLE_OPEN_CREATION=False)
def test_closed_creation_is_for_operators_only(world: World) -> None:
    with pytest.raises(ValidationError):
        people.chronicle_start(
            name="Mine", slug="mine", timezone_name="UTC", creator=world.users["outsider"]
        )
    operator = world.users["outsider"]
    operator.is_staff = True
    operator.save()
    assert people.chronicle_start(name="Mine", slug="mine", timezone_name="UTC", creator=operator)


# --- Invitations ---------------------------------------------------------------------------------


def test_an_invitation_mails_an_unguessable_link_and_stores_only_its_hash(world: World) -> None:
    invitation, token = invite(world, "admin", "nina@example.org", name="Nina")
    assert len(token) >= 40
    assert invitation.token_hash != token and token not in invitation.token_hash
    assert invitation.expires_at == NOW + dt.timedelta(days=7)
    [message] = mail.outbox
    assert message.to == ["nina@example.org"]
    assert link_token(message) == token
    assert "Nightfall" in message.subject


def test_a_new_person_accepts_sets_name_and_password_and_joins(world: World) -> None:
    invitation, token = invite(world, "storyteller", "nina@example.org")
    membership = people.invitation_accept_new(
        token=token, username="nina", name="Nina Rossi", password=PASSWORD, now=NOW
    )
    user = membership.user
    assert (user.username, user.get_full_name(), user.email) == (
        "nina",
        "Nina Rossi",
        "nina@example.org",
    )
    assert user.check_password(PASSWORD) and user.is_active
    assert membership.role == Role.PLAYER and membership.chronicle == world.chronicle
    invitation.refresh_from_db()
    assert invitation.accepted_by == user


def test_a_weak_password_is_refused_with_django_validators(world: World) -> None:
    _invitation, token = invite(world, "admin", "nina@example.org")
    with pytest.raises(ValidationError) as exc:
        people.invitation_accept_new(
            token=token, username="nina", name="Nina", password="123", now=NOW
        )
    assert "password" in exc.value.message_dict
    assert not User.objects.filter(username="nina").exists()


def test_an_existing_user_accepts_with_their_own_address(world: World) -> None:
    outsider = world.users["outsider"]
    _invitation, token = invite(world, "admin", outsider.email, role=Role.STORYTELLER)
    membership = people.invitation_accept(token=token, user=outsider, now=NOW)
    assert membership.role == Role.STORYTELLER


@pytest.mark.parametrize("how", ["again-same-user", "again-new-account"])
def test_a_link_works_once(world: World, how: str) -> None:
    outsider = world.users["outsider"]
    _invitation, token = invite(world, "admin", outsider.email)
    people.invitation_accept(token=token, user=outsider, now=NOW)
    with pytest.raises(ValidationError) as exc:
        if how == "again-same-user":
            people.invitation_accept(token=token, user=outsider, now=NOW)
        else:
            people.invitation_accept_new(
                token=token, username="sneaky", name="Sneaky", password=PASSWORD, now=NOW
            )
    assert exc.value.code == "accepted"
    assert Membership.objects.filter(chronicle=world.chronicle, user=outsider).count() == 1
    assert not User.objects.filter(username="sneaky").exists()


def test_an_expired_link_is_refused(world: World) -> None:
    _invitation, token = invite(world, "admin", "late@example.org")
    with pytest.raises(ValidationError) as exc:
        people.invitation_accept_new(
            token=token,
            username="late",
            name="Late",
            password=PASSWORD,
            now=NOW + dt.timedelta(days=7, seconds=1),
        )
    assert exc.value.code == "expired"


def test_a_revoked_link_is_refused(world: World) -> None:
    invitation, token = invite(world, "admin", "gone@example.org")
    people.invitation_revoke(membership=member(world, "admin"), invitation=invitation, now=NOW)
    with pytest.raises(ValidationError) as exc:
        people.invitation_accept_new(
            token=token, username="gone", name="Gone", password=PASSWORD, now=NOW
        )
    assert exc.value.code == "revoked"


def test_a_user_logged_in_with_another_address_is_refused(world: World) -> None:
    _invitation, token = invite(world, "admin", "someone-else@example.org")
    outsider = world.users["outsider"]
    with pytest.raises(ValidationError) as exc:
        people.invitation_accept(token=token, user=outsider, now=NOW)
    assert exc.value.code == "wrong_account"
    assert not Membership.objects.filter(chronicle=world.chronicle, user=outsider).exists()


def test_resending_replaces_the_link(world: World) -> None:
    invitation, old = invite(world, "admin", "nina@example.org")
    _invitation, new = people.invitation_resend(
        membership=member(world, "admin"), invitation=invitation, now=NOW + dt.timedelta(days=6)
    )
    assert new != old
    with pytest.raises(ValidationError) as exc:
        people.invitation_accept_new(
            token=old, username="nina", name="Nina", password=PASSWORD, now=NOW
        )
    assert exc.value.code == "unknown"
    # The new link counts its week from the resend.
    people.invitation_accept_new(
        token=new,
        username="nina",
        name="Nina",
        password=PASSWORD,
        now=NOW + dt.timedelta(days=12),
    )


def test_inviting_an_open_address_again_renews_one_invitation(world: World) -> None:
    invite(world, "admin", "nina@example.org")
    invite(world, "storyteller", "NINA@example.org")
    assert Invitation.objects.filter(chronicle=world.chronicle).count() == 1


def test_a_member_is_not_invited_again(world: World) -> None:
    with pytest.raises(ValidationError):
        invite(world, "admin", world.users["player_bob"].email)


@pytest.mark.parametrize(
    ("by", "role", "allowed"),
    [
        pytest.param("admin", Role.ADMIN, True, id="admin-invites-admin"),
        pytest.param("admin", Role.STORYTELLER, True, id="admin-invites-storyteller"),
        pytest.param("storyteller", Role.PLAYER, True, id="storyteller-invites-player"),
        pytest.param("storyteller", Role.STORYTELLER, False, id="storyteller-not-storyteller"),
        pytest.param("storyteller", Role.ADMIN, False, id="storyteller-not-admin"),
        pytest.param("player_alice", Role.PLAYER, False, id="player-invites-nobody"),
        pytest.param("player_alice", Role.STORYTELLER, False, id="player-not-storyteller"),
    ],
)
def test_who_may_invite_whom(world: World, by: str, role: str, allowed: bool) -> None:
    if allowed:
        invite(world, by, "new@example.org", role=role)
        assert Invitation.objects.filter(email="new@example.org", role=role).exists()
    else:
        with pytest.raises(PermissionDenied):
            invite(world, by, "new@example.org", role=role)
        assert not Invitation.objects.exists()
        assert mail.outbox == []


def test_a_bad_address_in_a_batch_writes_nothing(world: World) -> None:
    with pytest.raises(ValidationError):
        people.invitations_create(
            membership=member(world, "admin"),
            invitees=[people.Invitee(email="ok@example.org"), people.Invitee(email="not-one")],
            now=NOW,
        )
    assert not Invitation.objects.exists()
    assert mail.outbox == []


def test_asking_for_a_new_link_tells_the_inviter_once_a_day(world: World) -> None:
    invitation, token = invite(world, "storyteller", "late@example.org")
    mail.outbox.clear()
    later = NOW + dt.timedelta(days=8)
    assert committed(people.invitation_renewal_request, token=token, now=later)
    assert not people.invitation_renewal_request(token=token, now=later + dt.timedelta(hours=1))
    # One notice each (their own inbox and choice of e-mail, chronicle.services.mail).
    assert sorted(m.to for m in mail.outbox) == [["admin@example.com"], ["storyteller@example.com"]]
    assert all("late@example.org" in m.subject for m in mail.outbox)


# --- Placeholders (imported players) ------------------------------------------------------------


def test_a_placeholder_becomes_the_persons_account_with_its_ledger(world: World) -> None:
    membership = people.member_placeholder_create(
        chronicle=world.chronicle, name="Andrew Sayman", invited_by=world.users["admin"], now=NOW
    )
    placeholder = membership.user
    assert not placeholder.is_active and not placeholder.has_usable_password()
    assert placeholder.get_full_name() == "Andrew Sayman"
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=placeholder.pk,
        amount=Decimal("12.5"),
        kind=XpKind.AWARD,
        reason="Imported",
        key="import:1",
        now=NOW,
    )
    invitation = Invitation.objects.get(placeholder=placeholder)
    assert invitation.status(NOW) == "needs_address"
    mail.outbox.clear()
    _invitation, token = committed(
        people.invitation_resend,
        membership=member(world, "admin"),
        invitation=invitation,
        email="andrew@example.org",
    )
    assert mail.outbox[0].to == ["andrew@example.org"]
    joined = people.invitation_accept_new(
        token=token, username="andrew", name="Andrew Sayman", password=PASSWORD
    )
    assert joined.user.pk == placeholder.pk
    assert joined.pk == membership.pk
    assert ledger.xp_balance(chronicle=world.chronicle, player=placeholder.pk) == Decimal("12.5")


def test_a_placeholder_cannot_be_claimed_by_a_logged_in_account(world: World) -> None:
    membership = people.member_placeholder_create(
        chronicle=world.chronicle, name="Ghost", invited_by=world.users["admin"]
    )
    invitation = Invitation.objects.get(placeholder=membership.user)
    outsider = world.users["outsider"]
    _invitation, token = people.invitation_resend(
        membership=member(world, "admin"), invitation=invitation, email=outsider.email
    )
    with pytest.raises(ValidationError) as exc:
        people.invitation_accept(token=token, user=outsider)
    assert exc.value.code == "wrong_account"


# --- Roles, leaving, removal ----------------------------------------------------------------------


def test_an_admin_changes_a_role_and_it_is_recorded(world: World) -> None:
    people.membership_role_change(
        membership=member(world, "admin"),
        target=member(world, "player_bob"),
        role=Role.STORYTELLER,
        now=NOW,
    )
    assert member(world, "player_bob").role == Role.STORYTELLER
    event = MembershipEvent.objects.get(kind="role_changed")
    assert (event.by, event.role_before, event.role_after, event.at) == (
        world.users["admin"],
        "player",
        "storyteller",
        NOW,
    )


@pytest.mark.parametrize("by", ["storyteller", "player_alice"])
def test_only_admins_change_roles(world: World, by: str) -> None:
    with pytest.raises(PermissionDenied):
        people.membership_role_change(
            membership=member(world, by), target=member(world, "player_bob"), role=Role.ADMIN
        )
    assert member(world, "player_bob").role == Role.PLAYER


def test_the_last_admin_cannot_be_demoted_or_leave(world: World) -> None:
    admin = member(world, "admin")
    with pytest.raises(ValidationError, match="last admin"):
        people.membership_role_change(membership=admin, target=admin, role=Role.PLAYER)
    with pytest.raises(ValidationError, match="last admin"):
        people.membership_end(membership=admin, target=admin)
    assert member(world, "admin").role == Role.ADMIN
    # With a second admin, the first may step down.
    people.membership_role_change(
        membership=admin, target=member(world, "storyteller"), role=Role.ADMIN
    )
    people.membership_end(membership=admin, target=admin)
    assert not Membership.objects.filter(user=world.users["admin"], chronicle=world.chronicle)


def test_a_storyteller_removes_players_but_not_staff(world: World) -> None:
    storyteller = member(world, "storyteller")
    with pytest.raises(PermissionDenied):
        people.membership_end(membership=storyteller, target=member(world, "admin"))
    people.membership_end(membership=storyteller, target=member(world, "player_bob"))
    assert not Membership.objects.filter(user=world.users["player_bob"]).exists()


def test_a_player_cannot_remove_another(world: World) -> None:
    with pytest.raises(PermissionDenied):
        people.membership_end(
            membership=member(world, "player_alice"), target=member(world, "player_bob")
        )


@pytest.mark.parametrize("fate", ["retired", "npc"])
def test_removal_keeps_characters_and_ledger_and_reinvitation_finds_them(
    world: World, make_character: Any, fate: str
) -> None:
    alice = world.users["player_alice"]
    pc = make_character("Lucien", player="player_alice")
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=alice.pk,
        amount=Decimal(10),
        kind=XpKind.AWARD,
        reason="Game 1",
        key="award:1",
        now=NOW,
    )
    entries_before = XpEntry.objects.filter(player=alice).count()
    people.membership_end(
        membership=member(world, "admin"), target=member(world, "player_alice"), characters=fate
    )
    pc.refresh_from_db()
    assert pc.player == alice
    assert pc.status == (Status.RETIRED if fate == "retired" else Status.NPC)
    assert XpEntry.objects.filter(player=alice).count() >= entries_before
    assert ledger.xp_balance(chronicle=world.chronicle, player=alice.pk) >= Decimal(10)
    assert MembershipEvent.objects.filter(user=alice, kind="removed", note=fate).exists()
    # Invited back, Alice finds Lucien and her XP again.
    _invitation, token = invite(world, "admin", alice.email)
    membership = people.invitation_accept(token=token, user=alice)
    assert membership.role == Role.PLAYER
    assert list(alice.characters.filter(chronicle=world.chronicle)) == [pc]
    assert ledger.xp_balance(chronicle=world.chronicle, player=alice.pk) >= Decimal(10)


def test_leaving_withdraws_open_invitations_to_the_same_address(world: World) -> None:
    bob = world.users["player_bob"]
    Invitation.objects.create(
        chronicle=world.chronicle,
        email=bob.email,
        role=Role.PLAYER,
        token_hash="x" * 64,
        created_at=timezone.now(),
        expires_at=timezone.now() + dt.timedelta(days=7),
    )
    bob_membership = member(world, "player_bob")
    people.membership_end(membership=bob_membership, target=bob_membership)
    assert Invitation.objects.get(email=bob.email).revoked_at is not None


def test_a_placeholder_with_a_known_address_is_invited_at_once(world: World) -> None:
    membership = committed(
        people.member_placeholder_create,
        chronicle=world.chronicle,
        name="Sandra Weird",
        invited_by=world.users["storyteller"],
        email="sandra@example.org",
        now=NOW,
    )
    invitation = Invitation.objects.get(placeholder=membership.user)
    assert (
        invitation.status(NOW) == "pending" and invitation.invited_by == world.users["storyteller"]
    )
    assert [m.to for m in mail.outbox] == [["sandra@example.org"]]
