"""Who may see and change the chronicle app's objects, and the role and membership primitives
that every other app's `access.py` builds on.

Rules of the house: an object of a chronicle the user does not belong to answers 404 (its very
existence is not theirs to know); a member who lacks the role for an action gets 403.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as AuthUser
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from .models import (
    Attendance,
    Chronicle,
    Cycle,
    Game,
    Invitation,
    MailLog,
    Membership,
    MembershipEvent,
    Message,
    Proposal,
    Role,
)

User = AuthUser | AnonymousUser

STAFF_ROLES = frozenset({Role.STORYTELLER, Role.ADMIN})
# Numbers in URLs beyond a database integer cannot name anything; answer 404 before the
# database refuses them with an error.
MAX_ID = 2**31 - 1


# --- Primitives --------------------------------------------------------------------------------


def memberships_of(user: User) -> QuerySet[Membership]:
    if not user.is_authenticated:
        return Membership.objects.none()
    return Membership.objects.filter(user=user).select_related("chronicle")


def chronicles_for(user: User) -> QuerySet[Chronicle]:
    if not user.is_authenticated:
        return Chronicle.objects.none()
    return Chronicle.objects.filter(memberships__user=user)


def membership_for(user: User, slug: str) -> Membership:
    """The user's membership in the chronicle `slug` (with the chronicle loaded), or 404."""
    try:
        return memberships_of(user).get(chronicle__slug=slug)
    except Membership.DoesNotExist:
        raise Http404(_("No such chronicle.")) from None


def acting_user(user: User) -> AuthUser:
    """The signed-in user behind a write (pages and endpoints already require a login)."""
    if not isinstance(user, AuthUser):
        raise PermissionDenied(_("Log in first."))
    return user


def is_staff(membership: Membership) -> bool:
    return membership.role in STAFF_ROLES


def is_admin(membership: Membership) -> bool:
    return membership.role == Role.ADMIN


def require_staff(membership: Membership) -> None:
    if not is_staff(membership):
        raise PermissionDenied(_("Only the chronicle's storytellers and admins may do this."))


def require_admin(membership: Membership) -> None:
    if not is_admin(membership):
        raise PermissionDenied(_("Only the chronicle's admins may do this."))


# --- The chronicle app's objects ---------------------------------------------------------------


def memberships_visible_to(membership: Membership) -> QuerySet[Membership]:
    """Staff see the whole roster; a player sees their own membership only."""
    roster = Membership.objects.filter(chronicle=membership.chronicle).select_related("user")
    if is_staff(membership):
        return roster
    return roster.filter(pk=membership.pk)


def member_for(membership: Membership, user_id: int) -> Membership:
    if not 0 < user_id <= MAX_ID:
        raise Http404(_("No such member."))
    try:
        return memberships_visible_to(membership).get(user_id=user_id)
    except Membership.DoesNotExist:
        raise Http404(_("No such member.")) from None


def players_of(membership: Membership) -> QuerySet[Membership]:
    require_staff(membership)
    return memberships_visible_to(membership).filter(role=Role.PLAYER)


def games_visible_to(membership: Membership) -> QuerySet[Game]:
    return Game.objects.filter(chronicle=membership.chronicle).select_related(
        "cycle", "cycle__chronicle"
    )


def game_for(membership: Membership, number: int) -> Game:
    if not 0 < number <= MAX_ID:
        raise Http404(_("No such game."))
    try:
        return games_visible_to(membership).get(number=number)
    except Game.DoesNotExist:
        raise Http404(_("No such game.")) from None


def game_for_edit(membership: Membership, number: int) -> Game:
    require_staff(membership)
    return game_for(membership, number)


def attendance_visible_to(membership: Membership, game: Game) -> QuerySet[Attendance]:
    """Staff read the whole sign-in sheet; a player sees only their own line."""
    sheet = Attendance.objects.filter(game=game).select_related("player", "recorded_by")
    if is_staff(membership):
        return sheet
    return sheet.filter(player_id=membership.user_id)


def own_attendance(membership: Membership) -> QuerySet[Attendance]:
    return Attendance.objects.filter(
        player_id=membership.user_id, game__chronicle=membership.chronicle
    ).select_related("game")


def cycles_visible_to(membership: Membership) -> QuerySet[Cycle]:
    return Cycle.objects.filter(chronicle=membership.chronicle).select_related("game", "chronicle")


def cycle_for(membership: Membership, game_number: int) -> Cycle:
    if not 0 < game_number <= MAX_ID:
        raise Http404(_("No such cycle."))
    try:
        return cycles_visible_to(membership).get(game__number=game_number)
    except Cycle.DoesNotExist:
        raise Http404(_("No such cycle.")) from None


def cycle_for_edit(membership: Membership, game_number: int) -> Cycle:
    require_staff(membership)
    return cycle_for(membership, game_number)


# --- People: invitations and memberships ---------------------------------------------------------


def may_invite(membership: Membership, role: str) -> bool:
    """Admins invite any role; storytellers invite players."""
    if is_admin(membership):
        return True
    return is_staff(membership) and role == Role.PLAYER


def require_may_invite(membership: Membership, role: str) -> None:
    if not may_invite(membership, role):
        raise PermissionDenied(
            _("Only the chronicle's admins may invite storytellers and admins.")
            if is_staff(membership)
            else _("Only the chronicle's storytellers and admins may invite people.")
        )


def may_remove(membership: Membership, target: Membership) -> bool:
    """Admins remove anyone; storytellers remove players."""
    if is_admin(membership):
        return True
    return is_staff(membership) and target.role == Role.PLAYER


def require_may_remove(membership: Membership, target: Membership) -> None:
    if not may_remove(membership, target):
        raise PermissionDenied(_("Only the chronicle's admins may remove storytellers and admins."))


def invitations_visible_to(membership: Membership) -> QuerySet[Invitation]:
    require_staff(membership)
    return Invitation.objects.filter(chronicle=membership.chronicle).select_related(
        "invited_by", "accepted_by", "chronicle"
    )


def invitation_for(membership: Membership, invitation_id: int) -> Invitation:
    if not 0 < invitation_id <= MAX_ID:
        raise Http404(_("No such invitation."))
    try:
        return invitations_visible_to(membership).get(pk=invitation_id)
    except Invitation.DoesNotExist:
        raise Http404(_("No such invitation.")) from None


def member_for_change(membership: Membership, user_id: int) -> Membership:
    require_staff(membership)
    return member_for(membership, user_id)


def membership_events_visible_to(membership: Membership) -> QuerySet[MembershipEvent]:
    require_staff(membership)
    return MembershipEvent.objects.filter(chronicle=membership.chronicle).select_related(
        "user", "by"
    )


# --- Mail (issue 17) ---------------------------------------------------------------------------


def messages_of(user: User) -> QuerySet[Message]:
    """A person's inbox, across their chronicles: their own messages, nobody else's."""
    if not user.is_authenticated:
        return Message.objects.none()
    return Message.objects.filter(recipient_id=user.pk).select_related("chronicle")


def message_for(user: User, message_id: int) -> Message:
    """One message of the user's inbox; another person's answers 404, as a missing one does."""
    if not 0 < message_id <= MAX_ID:
        raise Http404(_("No such message."))
    try:
        return messages_of(user).get(pk=message_id)
    except Message.DoesNotExist:
        raise Http404(_("No such message.")) from None


def mail_log_visible_to(membership: Membership) -> QuerySet[MailLog]:
    """The chronicle's mail log (who was written to, at which address): its admins only."""
    require_admin(membership)
    return MailLog.objects.filter(chronicle=membership.chronicle).select_related("recipient")


def mail_log_entry_for(membership: Membership, log_id: int) -> MailLog:
    require_admin(membership)
    if not 0 < log_id <= MAX_ID:
        raise Http404(_("No such mail."))
    try:
        return mail_log_visible_to(membership).get(pk=log_id)
    except MailLog.DoesNotExist:
        raise Http404(_("No such mail.")) from None


# --- Governance: decisions by two thirds (GEN-03 / GEN-04, issue 14) --------------------------
# GEN-03 counts "all current STs". Admins count as storytellers: in this app an admin holds
# every storyteller power (is_staff) besides running the chronicle, and the rules text knows no
# admin role; leaving them out would let the other storytellers remove an admin who runs games
# without that admin's vote. GEN-04's "all current players" are the members whose role is player.
# A member whose account is inactive (an imported player who has not accepted their invitation
# yet) cannot log in to vote; counting them would turn their silence into a "no" for everyone.

VOTING_ROLES: dict[str, frozenset[str]] = {
    "storytellers": STAFF_ROLES,
    "players": frozenset({Role.PLAYER}),
}


def body_of(membership: Membership) -> str:
    """The voting body a member belongs to: "storytellers" (and admins) or "players"."""
    return "storytellers" if is_staff(membership) else "players"


def voters_of(chronicle: Chronicle, body: str) -> QuerySet[Membership]:
    """Every current voter of `body` in `chronicle`, whether they vote or not (GEN-03 / GEN-04)."""
    return Membership.objects.filter(
        chronicle=chronicle, role__in=VOTING_ROLES[body], user__is_active=True
    ).select_related("user")


def may_vote_on(membership: Membership, proposal: Proposal) -> bool:
    # A member acting is logged in, so their account is active: no query for it.
    return membership.role in VOTING_ROLES[proposal.body]


def require_may_propose(membership: Membership, body: str) -> None:
    """Storytellers put storytellers' decisions to a vote, players put players' removals
    (GEN-04); neither body votes on the other's."""
    if body not in VOTING_ROLES:
        raise PermissionDenied(_("Choose the storytellers' or the players' vote."))
    if membership.role not in VOTING_ROLES[body]:
        raise PermissionDenied(
            _("Only the chronicle's storytellers may propose a storytellers' decision.")
            if body == "storytellers"
            else _("Only the chronicle's players may propose a players' vote.")
        )


def proposals_visible_to(membership: Membership) -> QuerySet[Proposal]:
    """Storytellers' decisions are the storytellers' business: players do not see them (nor
    learn that they exist). The players' votes are open to the players and to the storytellers,
    who may read them but not vote."""
    proposals = Proposal.objects.filter(chronicle=membership.chronicle).select_related(
        "chronicle", "target", "proposed_by"
    )
    if is_staff(membership):
        return proposals
    return proposals.filter(body="players")


def proposal_for(membership: Membership, proposal_id: int) -> Proposal:
    if not 0 < proposal_id <= MAX_ID:
        raise Http404(_("No such decision."))
    try:
        return proposals_visible_to(membership).get(pk=proposal_id)
    except Proposal.DoesNotExist:
        raise Http404(_("No such decision.")) from None
