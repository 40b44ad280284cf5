"""The character list (CLN clan and sect filters): every character of the chronicle for its
storytellers, a player's own characters for a player.

One page serves both the full page and, for htmx, the table alone (a template partial), so the
filters work without JavaScript and update in place with it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.middleware import HtmxDetails

from chronicle import access as chronicle_access
from chronicle.views import chronicle_page

from ..access import characters_visible_to
from ..forms.roster import FILTER_CHOICES, RosterFilterForm, VolunteerForm
from ..models import NpcVolunteer, Status
from ..services import records
from ..services.ledger import xp_balances

PAGE_SIZE = 50
ROW_FIELDS = (
    "name",
    "chronicle_id",
    "player_id",
    "player__username",
    "creature",
    "clan",
    "sect",
    "status",
    "approval",
)


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


@login_required
@require_GET
def character_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    visible = characters_visible_to(membership)
    filters = request.GET.copy()
    filters.pop("page", None)
    form = RosterFilterForm(filters or None)
    valid = form.is_valid() if form.is_bound else True
    characters = (
        form.apply(visible)
        .select_related("player")
        # The columns the table shows: a character row carries its whole creation record.
        .only(*ROW_FIELDS)
        .order_by("name", "pk")
    )
    page = Paginator(characters, PAGE_SIZE).get_page(request.GET.get("page"))
    balances = xp_balances(
        chronicle=membership.chronicle,
        player_ids=sorted({c.player_id for c in page.object_list if c.player_id is not None}),
    )
    # Each choice's words once per page: `get_FOO_display` translates every choice of its
    # field again for each row.
    labels = {
        name: {value: str(label) for value, label in choices}
        for name, choices in FILTER_CHOICES.items()
    }
    rows = [
        {
            "character": character,
            "xp": balances.get(character.player_id or 0),
            **{
                name: labels[name].get(getattr(character, name), getattr(character, name))
                for name in labels
            },
        }
        for character in page.object_list
    ]
    context: dict[str, Any] = {
        "form": form,
        "page": page,
        "rows": rows,
        # The filters without the page number, for the pager's links.
        "filter_query": filters.urlencode(),
    }
    status = 200 if valid else 400
    if request.htmx:
        # htmx swaps only 2xx answers; the partial shows the errors itself.
        status = 200
        return chronicle_page(
            request, "characters/roster.html#table", membership, status=status, **context
        )
    context["status_counts"] = _status_counts(visible)
    return chronicle_page(request, "characters/roster.html", membership, status=status, **context)


def _status_counts(visible: Any) -> list[dict[str, Any]]:
    """Characters per status in one GROUP BY (the model's ordering cleared, or it would group by
    name too)."""
    found = dict(visible.order_by().values_list("status").annotate(n=Count("pk")))
    return [
        {"status": value, "label": label, "count": found.get(value, 0)}
        for value, label in Status.choices
    ]


# What a member is told after an action on the list: about themself, or about someone else.
VOLUNTEER_DONE = {
    ("join", True): gettext_noop("You are on the NPC volunteer list."),
    ("decline", True): gettext_noop("You moved to the end of the NPC volunteer list."),
    ("decline", False): gettext_noop("%(name)s moved to the end of the NPC volunteer list."),
    ("leave", True): gettext_noop("You left the NPC volunteer list."),
    ("leave", False): gettext_noop("%(name)s left the NPC volunteer list."),
}


@login_required
@require_http_methods(["GET", "POST"])
def npc_volunteers(request: HttpRequest, slug: str) -> HttpResponse:
    """MSC-03: the published first-come list of NPC volunteers, in order, for every member. A
    member joins, declines (moves to the end) or leaves for themselves; storytellers may do the
    last two for anyone on the list."""
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle = membership.chronicle
    volunteers = list(
        NpcVolunteer.objects.filter(chronicle=chronicle)
        .select_related("player")
        .order_by("position", "pk")
    )
    form = VolunteerForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = chronicle_access.acting_user(request.user)
        player = user
        wanted = form.cleaned_data["volunteer"]
        if wanted is not None and wanted != user.pk:
            if not chronicle_access.is_staff(membership):
                raise PermissionDenied(_("Only a storyteller may change someone else's place."))
            on_list = {v.player_id: v.player for v in volunteers}
            if wanted not in on_list or form.cleaned_data["action"] == "join":
                form.add_error(None, _("Choose someone on the list; members join themselves."))
            else:
                player = on_list[wanted]
        if form.is_valid():
            service = {
                "join": records.npc_volunteer_join,
                "decline": records.npc_volunteer_decline,
                "leave": records.npc_volunteer_leave,
            }[form.cleaned_data["action"]]
            try:
                service(chronicle=chronicle, player=player)
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                done = VOLUNTEER_DONE[form.cleaned_data["action"], player.pk == user.pk]
                messages.success(request, _(done) % {"name": player.get_username()})
                return redirect("npc_volunteers", slug=slug)
    status = 400 if form.is_bound else 200
    mine = next((v for v in volunteers if v.player_id == request.user.pk), None)
    return chronicle_page(
        request,
        "characters/npc_volunteers.html",
        membership,
        status=status,
        form=form,
        volunteers=volunteers,
        mine=mine,
    )
