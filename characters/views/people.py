"""The People page: every member with role, since when, last seen and their characters, with
the role, removal and invitation links. It lives with the characters because it lists them;
the memberships and their changes are the chronicle app's."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from chronicle import access as chronicle_access
from chronicle import rules as chronicle_rules
from chronicle.models import Role
from chronicle.services import chronicle_today
from chronicle.views import chronicle_page

from .. import access


@login_required
def people(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    is_admin = chronicle_access.is_admin(membership)
    members = list(
        chronicle_access.memberships_visible_to(membership)
        # GEN-01: the admins see each player's age; the Profile comes in the same query.
        .select_related("user__chronicle_profile")
        .order_by("role", "user__first_name", "user__username")
    )
    today = chronicle_today(membership.chronicle, timezone.now())
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
            # GEN-01: the age (never the date), to the admins only; None when not given.
            "age": _age(member.user, today) if is_admin else None,
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
        is_admin=is_admin,
        minimum_age=membership.chronicle.house_rules.minimum_player_age,
    )


def _age(user: Any, today: dt.date) -> int | None:
    """GEN-01: a member's age today, from the Profile joined to the roster; None if not given."""
    try:
        born: dt.date | None = user.chronicle_profile.birth_date
    except ObjectDoesNotExist:
        return None
    if born is None or born > today:
        return None
    return chronicle_rules.age_on(born, today)
