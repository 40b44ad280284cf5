"""People: starting a chronicle, invitations, roles, leaving and removal.

The only code that writes memberships and invitations. An invitation's link carries a random
token; only its SHA-256 is stored. Every refusal is a `ValidationError` in words the person
reads, and nothing is written when one is raised.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from .. import access, signals
from ..languages import saved_language_of
from ..models import (
    Chronicle,
    Invitation,
    MailKind,
    Membership,
    MembershipEvent,
    MembershipEventKind,
    Role,
)
from ..moments import moment_text
from .account import birth_date_errors, birth_date_record
from .mail import deliver

# A new person may ask for a fresh link once a day, so the link cannot be used to flood the
# storytellers' mailboxes.
RENEWAL_INTERVAL = dt.timedelta(days=1)
CHARACTER_FATES = ("retired", "npc")


@dataclass(frozen=True)
class Invitee:
    email: str
    name: str = ""
    role: str = Role.PLAYER


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_link(token: str) -> str:
    return settings.CHRONICLE_BASE_URL + reverse("invitation_accept", args=[token])


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(32)
    return token, _hash(token)


def _record(
    *,
    chronicle: Chronicle,
    user: User,
    kind: str,
    by: User | None,
    now: dt.datetime,
    role_before: str = "",
    role_after: str = "",
    note: str = "",
) -> None:
    MembershipEvent.objects.create(
        chronicle=chronicle,
        user=user,
        kind=kind,
        role_before=role_before,
        role_after=role_after,
        by=by,
        at=now,
        note=note[:200],
    )


def _join(
    *, chronicle: Chronicle, user: User, role: str, by: User | None, now: dt.datetime
) -> Membership:
    membership = Membership.objects.create(chronicle=chronicle, user=user, role=role)
    _record(
        chronicle=chronicle,
        user=user,
        kind=MembershipEventKind.JOINED,
        by=by,
        now=now,
        role_after=role,
    )
    return membership


# --- Starting a chronicle ------------------------------------------------------------------------


def may_start_chronicle(user: User | AnonymousUser) -> bool:
    """CHRONICLE_OPEN_CREATION: any logged-in user, or only the deployment's operators."""
    if not user.is_authenticated or not user.is_active:
        return False
    return bool(settings.CHRONICLE_OPEN_CREATION or user.is_staff or user.is_superuser)


@transaction.atomic
def chronicle_start(
    *,
    name: str,
    slug: str,
    timezone_name: str,
    creator: User | None,
    first_game: dt.date | None = None,
    first_game_start: dt.time | None = None,
    place: str = "",
    now: dt.datetime | None = None,
) -> Chronicle:
    """A new chronicle whose creator (when there is one) is its first admin, with its first
    game and downtime cycle if a date is given. A shell (`create_chronicle`) has no creator and
    invites the admin instead."""
    from . import chronicle_create, game_create

    now = now or timezone.now()
    if creator is not None and not may_start_chronicle(creator):
        raise ValidationError(_("On this site only its operators may start a chronicle."))
    if Chronicle.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": _("That address is taken; pick another.")})
    try:
        chronicle = chronicle_create(name=name, slug=slug, timezone_name=timezone_name)
    except IntegrityError:  # the same slug at the same instant
        raise ValidationError({"slug": _("That address is taken; pick another.")}) from None
    if creator is not None:
        _join(chronicle=chronicle, user=creator, role=Role.ADMIN, by=creator, now=now)
    if first_game is not None:
        game_create(chronicle=chronicle, date=first_game, start_time=first_game_start, place=place)
    return chronicle


# --- Invitations ---------------------------------------------------------------------------------


def _send_invitation(invitation: Invitation, token: str, *, resend: bool = False) -> None:
    """E-mail the link from a worker after commit; a mail server that is down leaves a failed
    row in the mail log, retried by the sweeper (and the invitation can be resent), rather than
    turning the committed work into an error page."""
    if not invitation.email:
        return
    # The invitee has no account and so no language yet: write in the inviter's, as saved, or
    # as their page is (a troupe invites in the language it plays in).
    with translation.override(
        saved_language_of(invitation.invited_by) or translation.get_language()
    ):
        _send_invitation_in_language(invitation, token, resend=resend)


def _send_invitation_in_language(invitation: Invitation, token: str, *, resend: bool) -> None:
    chronicle = invitation.chronicle
    inviter = invitation.invited_by
    inviter_name = (inviter.get_full_name() or inviter.get_username()) if inviter else ""
    subject = _("Your invitation to %(chronicle)s") % {"chronicle": chronicle.name}
    lines = [
        _("Hello %(name)s,") % {"name": invitation.name} if invitation.name else _("Hello,"),
        "",
        (
            _("%(who)s invites you to join %(chronicle)s on Chronicle as %(role)s.")
            % {"who": inviter_name, "chronicle": chronicle.name, "role": _(invitation.role)}
            if inviter_name
            else _("You are invited to join %(chronicle)s on Chronicle as %(role)s.")
            % {"chronicle": chronicle.name, "role": _(invitation.role)}
        ),
        "",
        _("Follow this link to accept (it works once, until %(until)s):")
        % {"until": moment_text(invitation.expires_at, chronicle)},
        invitation_link(token),
        "",
        _("If you did not expect this, ignore this e-mail: nothing happens without the link."),
    ]
    if resend:
        lines.insert(1, _("(This link replaces any earlier one, which no longer works.)"))
    # No account, so no inbox: logged (the chronicle's mail log) and sent by a worker.
    deliver(
        kind=MailKind.INVITATION,
        address=invitation.email,
        chronicle=chronicle,
        subject=subject,
        body="\n".join(lines),
    )


def _expiry(now: dt.datetime) -> dt.datetime:
    return now + dt.timedelta(days=settings.CHRONICLE_INVITATION_DAYS)


def _clean_invitee(invitee: Invitee) -> Invitee:
    email = invitee.email.strip()
    try:
        validate_email(email)
    except ValidationError:
        raise ValidationError(
            {"email": _("%(value)s is not an e-mail address.") % {"value": email or "''"}}
        ) from None
    if invitee.role not in Role.values:
        raise ValidationError({"role": _("Pick player, storyteller or admin.")})
    return Invitee(email=email, name=invitee.name.strip()[:150], role=invitee.role)


@transaction.atomic
def invitations_create(
    *, membership: Membership, invitees: Sequence[Invitee], now: dt.datetime | None = None
) -> list[tuple[Invitation, str]]:
    """Invite each address with its role, one e-mail each. Admins invite any role,
    storytellers invite players. An address that already has an open invitation to this
    chronicle gets it renewed (new link, new expiry, the role asked now). An address of a
    current member is refused, so nobody is invited twice into one chronicle. All or nothing.
    Returns each invitation with its raw token (shown nowhere but the e-mail and the shell)."""
    cleaned = [_clean_invitee(invitee) for invitee in invitees]
    for invitee in cleaned:
        access.require_may_invite(membership, invitee.role)
    return _invite(
        chronicle=membership.chronicle,
        invitees=cleaned,
        invited_by=membership.user,
        now=now or timezone.now(),
    )


@transaction.atomic
def invitations_create_by_operator(
    *, chronicle: Chronicle, invitees: Sequence[Invitee], now: dt.datetime | None = None
) -> list[tuple[Invitation, str]]:
    """The deployment's operator invites from a shell (`create_chronicle`): any role, no
    inviting member, so a new chronicle's first admin can be invited before anyone is in."""
    cleaned = [_clean_invitee(invitee) for invitee in invitees]
    return _invite(
        chronicle=chronicle, invitees=cleaned, invited_by=None, now=now or timezone.now()
    )


def _invite(
    *,
    chronicle: Chronicle,
    invitees: list[Invitee],
    invited_by: User | None,
    now: dt.datetime,
) -> list[tuple[Invitation, str]]:
    if not invitees:
        raise ValidationError(_("Give at least one e-mail address."))
    seen: set[str] = set()
    for invitee in invitees:
        key = invitee.email.casefold()
        if key in seen:
            raise ValidationError(_("%(email)s is in the list twice.") % {"email": invitee.email})
        seen.add(key)
    # Lock the chronicle so two storytellers inviting one address at once make one invitation.
    Chronicle.objects.select_for_update().filter(pk=chronicle.pk).first()
    members = {
        email.casefold()
        for email in Membership.objects.filter(chronicle=chronicle).values_list(
            "user__email", flat=True
        )
        if email
    }
    already = [i.email for i in invitees if i.email.casefold() in members]
    if already:
        raise ValidationError(
            _("Already members of %(chronicle)s: %(emails)s.")
            % {"chronicle": chronicle.name, "emails": ", ".join(already)}
        )
    open_by_email = {
        invitation.email.casefold(): invitation
        for invitation in Invitation.objects.select_for_update()
        .filter(chronicle=chronicle, accepted_at__isnull=True, revoked_at__isnull=True)
        .exclude(email="")
    }
    made: list[tuple[Invitation, str]] = []
    for invitee in invitees:
        token, token_hash = _new_token()
        invitation = open_by_email.get(invitee.email.casefold())
        if invitation is None:
            invitation = Invitation(chronicle=chronicle, email=invitee.email, created_at=now)
        invitation.name = invitee.name or invitation.name
        invitation.role = invitee.role
        invitation.token_hash = token_hash
        invitation.invited_by = invited_by
        invitation.expires_at = _expiry(now)
        invitation.sent_at = now
        invitation.send_count += 1
        invitation.save()
        _send_invitation(invitation, token)
        made.append((invitation, token))
    return made


@transaction.atomic
def invitation_resend(
    *,
    membership: Membership,
    invitation: Invitation,
    email: str | None = None,
    now: dt.datetime | None = None,
) -> tuple[Invitation, str]:
    """A new link with a new expiry; the old link stops working. `email` sets the address of an
    imported player's invitation that had none."""
    now = now or timezone.now()
    invitation = (
        Invitation.objects.select_for_update().select_related("chronicle").get(pk=invitation.pk)
    )
    access.require_may_invite(membership, invitation.role)
    return _reissue(invitation, email=email, by=membership.user, now=now)


def _reissue(
    invitation: Invitation, *, email: str | None, by: User, now: dt.datetime
) -> tuple[Invitation, str]:
    if invitation.accepted_at is not None:
        raise ValidationError(_("This invitation was accepted already."))
    if invitation.revoked_at is not None:
        raise ValidationError(_("This invitation was revoked; invite the address again."))
    if email is not None and email.strip() != invitation.email:
        invitation.email = _clean_invitee(Invitee(email=email, role=invitation.role)).email
        clash = (
            Invitation.objects.filter(
                chronicle=invitation.chronicle,
                email__iexact=invitation.email,
                accepted_at__isnull=True,
                revoked_at__isnull=True,
            )
            .exclude(pk=invitation.pk)
            .exists()
        )
        if clash:
            raise ValidationError(
                {
                    "email": _("%(email)s has an open invitation already.")
                    % {"email": invitation.email}
                }
            )
    if not invitation.email:
        raise ValidationError({"email": _("Give the e-mail address to send it to.")})
    token, invitation.token_hash = _new_token()
    invitation.expires_at = _expiry(now)
    invitation.sent_at = now
    invitation.send_count += 1
    invitation.invited_by = invitation.invited_by or by
    invitation.renewal_requested_at = None
    invitation.save()
    _send_invitation(invitation, token, resend=invitation.send_count > 1)
    return invitation, token


@transaction.atomic
def invitation_revoke(
    *, membership: Membership, invitation: Invitation, now: dt.datetime | None = None
) -> Invitation:
    """The link stops working at once. Revoking twice changes nothing."""
    now = now or timezone.now()
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    access.require_may_invite(membership, invitation.role)
    if invitation.accepted_at is not None:
        raise ValidationError(
            _("This invitation was accepted already; remove the member from the People page.")
        )
    if invitation.revoked_at is None:
        invitation.revoked_at, invitation.revoked_by = now, membership.user
        invitation.save(update_fields=["revoked_at", "revoked_by"])
    return invitation


def invitation_by_token(token: str) -> Invitation | None:
    if not token or len(token) > 100:
        return None
    return (
        Invitation.objects.select_related("chronicle", "invited_by")
        .filter(token_hash=_hash(token))
        .first()
    )


def _open_invitation(token: str, now: dt.datetime) -> Invitation:
    """The invitation behind a link, locked, or a refusal that says what happened to it."""
    found = invitation_by_token(token)
    if found is None:
        raise ValidationError(
            _(
                "This link is not (or no longer) an invitation. If it was sent again, use the "
                "newest e-mail."
            ),
            code="unknown",
        )
    invitation = Invitation.objects.select_for_update().select_related("chronicle").get(pk=found.pk)
    status = invitation.status(now)
    if status == "accepted":
        raise ValidationError(_("This invitation has been used already."), code="accepted")
    if status == "revoked":
        raise ValidationError(_("The storytellers withdrew this invitation."), code="revoked")
    if status == "expired":
        raise ValidationError(_("This invitation has expired."), code="expired")
    return invitation


def _take_up(invitation: Invitation, user: User, now: dt.datetime) -> Membership:
    """Mark the invitation used and join with its role; a member already in keeps the
    membership and role they have, so a link never makes a second one."""
    membership = Membership.objects.filter(chronicle=invitation.chronicle, user=user).first()
    if membership is None:
        membership = _join(
            chronicle=invitation.chronicle,
            user=user,
            role=invitation.role,
            by=invitation.invited_by,
            now=now,
        )
    invitation.accepted_at, invitation.accepted_by = now, user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    return membership


@transaction.atomic
def invitation_accept(*, token: str, user: User, now: dt.datetime | None = None) -> Membership:
    """A logged-in user takes up an invitation sent to their own address. Following the link
    proves the address, so it is marked as theirs. A user already in the chronicle keeps the
    membership (and role) they have; a second membership is never made."""
    now = now or timezone.now()
    invitation = _open_invitation(token, now)
    if invitation.placeholder_id is not None:
        raise ValidationError(
            _(
                "This invitation holds characters imported for a new account. Log out, then "
                "follow the link again to set that account up."
            ),
            code="wrong_account",
        )
    if not user.email or user.email.casefold() != invitation.email.casefold():
        raise ValidationError(
            _(
                "This invitation was sent to another address than the one of the account you "
                "are logged in with. Log out and follow the link again, or ask for an invitation "
                "to your own address."
            ),
            code="wrong_account",
        )
    user = User.objects.select_for_update().get(pk=user.pk)
    return _take_up(invitation, user, now)


@transaction.atomic
def invitation_accept_new(
    *,
    token: str,
    username: str,
    name: str,
    password: str,
    birth_date: dt.date | None = None,
    now: dt.datetime | None = None,
) -> Membership:
    """A new person accepts: their account is made with the invitation's (now verified)
    address, Django's password validators, and joins with the invitation's role. For an
    imported player the waiting placeholder account becomes theirs, characters included.
    The form asks for the date of birth (GEN-01): given or not, they are not asked again."""
    now = now or timezone.now()
    invitation = _open_invitation(token, now)
    username = username.strip()
    errors: dict[str, list[str]] = birth_date_errors(birth_date, now=now)
    username_field = User._meta.get_field("username")
    try:
        username_field.run_validators(username)
        if not username:
            raise ValidationError(_("Choose a username."))
    except ValidationError as exc:
        errors["username"] = list(exc.messages)
    taken = User.objects.filter(username__iexact=username)
    if invitation.placeholder_id is not None:
        taken = taken.exclude(pk=invitation.placeholder_id)
    if "username" not in errors and taken.exists():
        errors["username"] = [_("That username is taken; pick another.")]
    name = name.strip()[:150]
    if not name:
        errors["name"] = [_("Give the name the storytellers know you by.")]
    if invitation.placeholder_id is not None:
        user = User.objects.select_for_update().get(pk=invitation.placeholder_id)
    else:
        user = User(is_active=True)
    user.username, user.first_name, user.last_name = username, name, ""
    user.email = invitation.email
    try:
        validate_password(password, user)
    except ValidationError as exc:
        errors["password"] = list(exc.messages)
    if errors:
        raise ValidationError(errors)
    user.set_password(password)
    user.is_active = True
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:
        raise ValidationError({"username": [_("That username is taken; pick another.")]}) from None
    birth_date_record(user=user, birth_date=birth_date, now=now)
    return _take_up(invitation, user, now)


@transaction.atomic
def invitation_renewal_request(*, token: str, now: dt.datetime | None = None) -> bool:
    """The holder of a used, withdrawn or expired link asks for a new one: the person who sent
    it (or the chronicle's admins) get one e-mail, at most once a day. Answers the same either
    way, so the page says nothing about who is behind an address."""
    now = now or timezone.now()
    found = invitation_by_token(token)
    if found is None:
        return False
    invitation = Invitation.objects.select_for_update().select_related("chronicle").get(pk=found.pk)
    if invitation.accepted_at is not None:
        return False
    last = invitation.renewal_requested_at
    if last is not None and now - last < RENEWAL_INTERVAL:
        return False
    invitation.renewal_requested_at = now
    invitation.save(update_fields=["renewal_requested_at"])
    chronicle = invitation.chronicle
    admins = Membership.objects.filter(chronicle=chronicle, role=Role.ADMIN).select_related("user")
    recipients = [m.user for m in admins]
    inviter = invitation.invited_by
    if inviter is not None and inviter not in recipients:
        recipients.insert(0, inviter)
    if not recipients:
        return False
    url = settings.CHRONICLE_BASE_URL + reverse("invitation_list", args=[chronicle.slug])

    # Functions, so each storyteller reads it in their own language (deliver renders them).
    def subject() -> str:
        return _("%(email)s asks for a new invitation to %(chronicle)s") % {
            "email": invitation.email or invitation.name,
            "chronicle": chronicle.name,
        }

    def body() -> str:
        return _(
            "The invitation of %(who)s to %(chronicle)s as %(role)s can no longer be used. "
            "To send a new link, open the Invitations page:\n%(url)s"
        ) % {
            "who": invitation.name or invitation.email,
            "chronicle": chronicle.name,
            "role": _(invitation.role),
            "url": url,
        }

    # One notice each (their inbox, their choice of e-mail), keyed by the request's moment.
    for recipient in recipients:
        deliver(
            kind=MailKind.RENEWAL,
            user=recipient,
            chronicle=chronicle,
            key=f"renewal:{invitation.pk}:{now.isoformat()}:{recipient.pk}",
            subject=subject,
            body=body,
            now=now,
        )
    return True


@transaction.atomic
def member_placeholder_create(
    *,
    chronicle: Chronicle,
    name: str,
    invited_by: User,
    email: str = "",
    now: dt.datetime | None = None,
) -> Membership:
    """A player named by an import who has no account yet: an inactive user with no usable
    password, a player membership, and an invitation the storytellers send from the
    Invitations page once they know the address. Accepting it makes the placeholder the
    person's account, with the characters and ledger it already holds."""
    now = now or timezone.now()
    name = name.strip()[:150]
    if not name:
        raise ValidationError({"name": _("A player needs a name.")})
    user = User(username=f"invited-{secrets.token_hex(8)}", first_name=name, is_active=False)
    user.set_unusable_password()
    user.save()
    membership = _join(chronicle=chronicle, user=user, role=Role.PLAYER, by=invited_by, now=now)
    _token, token_hash = _new_token()
    invitation = Invitation.objects.create(
        chronicle=chronicle,
        name=name,
        role=Role.PLAYER,
        token_hash=token_hash,
        invited_by=invited_by,
        placeholder=user,
        created_at=now,
        expires_at=_expiry(now),
    )
    if email.strip():
        _reissue(invitation, email=email, by=invited_by, now=now)
    return membership


# --- Roles, leaving, removal ---------------------------------------------------------------------


def _lock_admins(chronicle: Chronicle) -> list[int]:
    """Lock the chronicle's admin memberships, so two admins stepping down at once cannot leave
    it with none."""
    return list(
        Membership.objects.select_for_update()
        .filter(chronicle=chronicle, role=Role.ADMIN)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


@transaction.atomic
def membership_role_change(
    *, membership: Membership, target: Membership, role: str, now: dt.datetime | None = None
) -> Membership:
    """An admin gives a member another role, recorded with who and when. The chronicle keeps at
    least one admin."""
    access.require_admin(membership)
    return membership_role_set(target=target, role=role, by=membership.user, now=now)


@transaction.atomic
def membership_role_set(
    *,
    target: Membership,
    role: str,
    by: User | None,
    note: str = "",
    now: dt.datetime | None = None,
) -> Membership:
    """Give `target` another role once it is decided: by an admin (`membership_role_change`,
    after its access check) or by a vote (GEN-03 / GEN-04, `by` None and the decision in
    `note`). The chronicle keeps at least one admin; a member who has left is refused."""
    now = now or timezone.now()
    if role not in Role.values:
        raise ValidationError({"role": _("Pick player, storyteller or admin.")})
    admins = _lock_admins(target.chronicle)
    try:
        target = Membership.objects.select_for_update().select_related("user").get(pk=target.pk)
    except Membership.DoesNotExist:
        raise ValidationError(_("This person is no longer a member.")) from None
    if target.role == role:
        return target
    if target.role == Role.ADMIN and admins == [target.pk]:
        raise ValidationError(
            _("%(name)s is the chronicle's last admin; make someone else admin first.")
            % {"name": target.user.get_full_name() or target.user.get_username()}
        )
    before = target.role
    target.role = role
    target.save(update_fields=["role"])
    _record(
        chronicle=target.chronicle,
        user=target.user,
        kind=MembershipEventKind.ROLE_CHANGED,
        by=by,
        now=now,
        role_before=before,
        role_after=role,
        note=note,
    )
    return target


@transaction.atomic
def membership_end(
    *,
    membership: Membership,
    target: Membership,
    characters: str = "retired",
    now: dt.datetime | None = None,
) -> None:
    """A member leaves (target is themselves) or is removed: admins remove anyone, storytellers
    remove players. The membership ends; nothing else is lost: their characters leave play
    (retired or NPC, as `characters` says; each app's receiver of `signals.membership_ended`
    does its part), ledgers and history stay, and an invitation brings them back to find it
    all again. The last admin can neither leave nor be removed."""
    now = now or timezone.now()
    if characters not in CHARACTER_FATES:
        raise ValidationError({"characters": _("Choose retired or NPC for their characters.")})
    leaving = membership.pk == target.pk
    if not leaving:
        access.require_may_remove(membership, target)
    membership_remove(
        target=target, by=membership.user, characters=characters, leaving=leaving, now=now
    )


@transaction.atomic
def membership_remove(
    *,
    target: Membership,
    by: User | None,
    characters: str = "retired",
    leaving: bool = False,
    now: dt.datetime | None = None,
) -> None:
    """End `target`'s membership once it is decided: by `membership_end` (after its access
    check) or by a vote (GEN-03 / GEN-04, `by` None). A member who has already left, and the
    chronicle's last admin, are refused."""
    now = now or timezone.now()
    if characters not in CHARACTER_FATES:
        raise ValidationError({"characters": _("Choose retired or NPC for their characters.")})
    admins = _lock_admins(target.chronicle)
    try:
        target = (
            Membership.objects.select_for_update()
            .select_related("user", "chronicle")
            .get(pk=target.pk)
        )
    except Membership.DoesNotExist:
        raise ValidationError(_("This person is no longer a member.")) from None
    if target.role == Role.ADMIN and admins == [target.pk]:
        raise ValidationError(
            _("You are the chronicle's last admin: make someone else admin before you leave.")
            if leaving
            else _("This is the chronicle's last admin; make someone else admin first.")
        )
    chronicle, user = target.chronicle, target.user
    signals.membership_ended.send(
        sender=Membership, chronicle=chronicle, user=user, by=by, characters=characters, now=now
    )
    target.delete()
    _record(
        chronicle=chronicle,
        user=user,
        kind=MembershipEventKind.LEFT if leaving else MembershipEventKind.REMOVED,
        by=by,
        now=now,
        role_before=target.role,
        note=characters,
    )
    # An open invitation of the departed person would let them straight back in.
    Invitation.objects.filter(
        Q(email__iexact=user.email) if user.email else Q(pk__in=[]),
        chronicle=chronicle,
        accepted_at__isnull=True,
        revoked_at__isnull=True,
    ).update(revoked_at=now, revoked_by=by)
