"""Who may see and change downtimes (DT-02, issue 5): a player sees only the submissions and
desk items of their own characters; the chronicle's storytellers see all of them.

Another player's submission or item answers exactly like one that does not exist (404, same
message), so neither its existence nor its content leaks. What a player may read of an item is
further limited by the serializers and templates: never `st_notes`, `assignee` or an unreleased
`result`.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from chronicle.access import MAX_ID, is_staff
from chronicle.models import Membership

from .models import DeskItem, Submission, Vote


def submissions_visible_to(membership: Membership) -> QuerySet[Submission]:
    """Staff see every submission of the chronicle; a player those of their own characters."""
    submissions = Submission.objects.filter(cycle__chronicle=membership.chronicle)
    if is_staff(membership):
        return submissions
    return submissions.filter(player_id=membership.user_id, character__player_id=membership.user_id)


def submission_for(membership: Membership, submission_id: int) -> Submission:
    if not 0 < submission_id <= MAX_ID:
        raise Http404(_("No such downtime."))
    try:
        return (
            submissions_visible_to(membership)
            .select_related("cycle", "cycle__chronicle", "character", "player")
            .get(pk=submission_id)
        )
    except Submission.DoesNotExist:
        raise Http404(_("No such downtime.")) from None


def own_submission_for(membership: Membership, submission_id: int) -> Submission:
    """A submission its player edits: staff read every submission but write none of them
    (a downtime is the player's own words), so anyone else gets 404."""
    if not 0 < submission_id <= MAX_ID:
        raise Http404(_("No such downtime."))
    try:
        return (
            Submission.objects.select_related("cycle", "cycle__chronicle", "character", "player")
            .filter(
                cycle__chronicle=membership.chronicle,
                player_id=membership.user_id,
                character__player_id=membership.user_id,
            )
            .get(pk=submission_id)
        )
    except Submission.DoesNotExist:
        raise Http404(_("No such downtime.")) from None


def desk_items_visible_to(membership: Membership) -> QuerySet[DeskItem]:
    """Staff see every desk item of the chronicle; a player the items of their own characters
    (at-game requests included: they were made by that character)."""
    items = DeskItem.objects.filter(cycle__chronicle=membership.chronicle)
    if is_staff(membership):
        return items
    return items.filter(
        character__player_id=membership.user_id, character__chronicle=membership.chronicle
    )


def desk_item_for(membership: Membership, item_id: int) -> DeskItem:
    if not 0 < item_id <= MAX_ID:
        raise Http404(_("No such item."))
    try:
        return desk_items_visible_to(membership).get(pk=item_id)
    except DeskItem.DoesNotExist:
        raise Http404(_("No such item.")) from None


def votes_visible_to(membership: Membership) -> QuerySet[Vote]:
    """DT-06: staff see every vote; a player only the votes of their own submissions."""
    return Vote.objects.filter(submission__in=submissions_visible_to(membership))
