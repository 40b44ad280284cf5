"""The character list (CLN clan and sect filters): every character of the chronicle for its
storytellers, a player's own characters for a player.

One page serves both the full page and, for htmx, the table alone (a template partial), so the
filters work without JavaScript and update in place with it.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from django_htmx.middleware import HtmxDetails

from chronicle import access as chronicle_access
from chronicle.views import _page

from ..access import characters_visible_to
from ..forms.roster import RosterFilterForm
from ..models import Status
from ..services.ledger import xp_balances

PAGE_SIZE = 50


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
    characters = form.apply(visible).select_related("player").order_by("name", "pk")
    page = Paginator(characters, PAGE_SIZE).get_page(request.GET.get("page"))
    balances = xp_balances(
        chronicle=membership.chronicle,
        player_ids=sorted({c.player_id for c in page.object_list if c.player_id is not None}),
    )
    rows = [
        {"character": character, "xp": balances.get(character.player_id or 0)}
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
        return _page(request, "characters/roster.html#table", membership, status=status, **context)
    context["status_counts"] = _status_counts(visible)
    return _page(request, "characters/roster.html", membership, status=status, **context)


def _status_counts(visible: Any) -> list[dict[str, Any]]:
    """Characters per status in one GROUP BY (the model's ordering cleared, or it would group by
    name too)."""
    found = dict(visible.order_by().values_list("status").annotate(n=Count("pk")))
    return [
        {"status": value, "label": label, "count": found.get(value, 0)}
        for value, label in Status.choices
    ]
