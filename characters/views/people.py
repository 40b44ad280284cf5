"""The People page: every member with role, since when, last seen and their characters, with
the role, removal and invitation links. It lives with the characters because it lists them;
the memberships and their changes are the chronicle app's."""

from __future__ import annotations

from collections import defaultdict

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from chronicle import access as chronicle_access
from chronicle.models import Role
from chronicle.views import chronicle_page

from .. import access


@login_required
def people(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    members = list(
        chronicle_access.memberships_visible_to(membership).order_by(
            "role", "user__first_name", "user__username"
        )
    )
    by_player = defaultdict(list)
    for character in (
        access.characters_visible_to(membership)
        .filter(player_id__in=[m.user_id for m in members])
        .only("pk", "name", "status", "approval", "player_id")
    ):
        by_player[character.player_id].append(character)
    rows = [
        {
            "membership": member,
            "characters": by_player.get(member.user_id, []),
            "may_remove": member.pk != membership.pk
            and chronicle_access.may_remove(membership, member),
        }
        for member in members
    ]
    return chronicle_page(
        request,
        "chronicle/people.html",
        membership,
        rows=rows,
        events=list(
            chronicle_access.membership_events_visible_to(membership).order_by("-at", "-pk")[:20]
        ),
        roles=Role.choices,
        is_admin=chronicle_access.is_admin(membership),
    )
