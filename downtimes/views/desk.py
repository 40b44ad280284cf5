"""The influence desk (issue 5), storytellers and admins only: a player gets 403 on every desk
page, an item of another chronicle 404.

The page's query count does not depend on the number of items: rows come from one joined
query (paged), the counts from one GROUP BY, the conflicts from one query over the cycle.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods, require_POST

from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.models import Cycle, CycleStatus, Membership
from chronicle.views import chronicle_page

from ..forms import desk as forms
from ..models import DeskItem, DeskStatus
from ..services import desk as services

PAGE_SIZE = 100
FILTER_FIELDS = ("kind", "action", "status", "assignee", "character", "target")
BULK_REFUSED = "Nothing was approved: fix the filters marked below first."


def _staff(request: HttpRequest, slug: str) -> Membership:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    return membership


def _cycle(membership: Membership, data: QueryDict) -> Cycle | None:
    """The cycle of `?game=<number>`, else the latest open or closed one (the one the desk
    works on), else the latest of all; None when the chronicle has no game yet."""
    cycles = chronicle_access.cycles_visible_to(membership)
    number = data.get("game", "")
    if number:
        # isdecimal, not isdigit: "²" is a digit int() refuses (a 500). cycle_for bounds it.
        if not number.isdecimal():
            raise Http404("No such cycle.")
        return chronicle_access.cycle_for(membership, int(number))
    working = cycles.filter(status__in=[CycleStatus.OPEN, CycleStatus.CLOSED])
    return working.order_by("-deadline_at").first() or cycles.order_by("-deadline_at").first()


def _item(membership: Membership, pk: int) -> DeskItem:
    if not 0 < pk <= MAX_ID:
        raise Http404("No such desk item.")
    item = (
        DeskItem.objects.filter(cycle__chronicle_id=membership.chronicle_id, pk=pk)
        .select_related("cycle", "cycle__game", "cycle__chronicle", "character", "assignee")
        .first()
    )
    if item is None:
        raise Http404("No such desk item.")
    return item


def _filters_query(data: QueryDict, cycle: Cycle) -> str:
    pairs = [(name, data[name]) for name in FILTER_FIELDS if data.get(name)]
    return urlencode([("game", str(cycle.game.number)), *pairs])


def _desk_url(slug: str, query: str) -> str:
    return f"{reverse('desk', args=[slug])}?{query}"


def _desk_context(
    request: HttpRequest,
    membership: Membership,
    cycle: Cycle,
    data: QueryDict | None = None,
) -> dict[str, Any]:
    """The desk for `cycle`, filtered by `data` (the query string unless given): invalid
    filters are shown beside their fields and left out of the list, and the bulk approval
    is hidden until they are fixed."""
    data = request.GET if data is None else data
    staff = forms.staff_members(membership.chronicle_id)
    filters = forms.DeskFilterForm(data, membership=membership, staff=staff)
    items = services.desk_items(cycle=cycle)
    shown = filters.apply(items).order_by("created_at", "pk")
    page = Paginator(shown, PAGE_SIZE).get_page(request.GET.get("page"))
    counted = dict(
        filters.without_status(DeskItem.objects.filter(cycle=cycle))
        .order_by()
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    counts = [(value, label, counted.get(value, 0)) for value, label in DeskStatus.choices]
    conflicts = services.desk_conflicts(cycle=cycle)
    conflict_of: dict[int, list[str]] = {}
    for conflict in conflicts:
        for pk in conflict.item_ids:
            conflict_of.setdefault(pk, []).append(conflict.label)
    rows = [(item, conflict_of.get(item.pk, [])) for item in page.object_list]
    query = _filters_query(data, cycle)
    return {
        "cycle": cycle,
        "cycles": chronicle_access.cycles_visible_to(membership).order_by("-deadline_at"),
        "filters": filters,
        "filter_errors": [
            (filters.fields[name].label, errors) for name, errors in filters.refusal().items()
        ],
        "page": page,
        "rows": rows,
        "counts": counts,
        "filtered_total": page.paginator.count,
        "conflicts": conflicts,
        "waiting": list(services.not_submitted(cycle=cycle)),
        "staff": staff,
        "query": query,
        "bulk_form": forms.BulkApproveForm(),
    }


@login_required
@require_http_methods(["GET"])
def desk(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.GET)
    if cycle is None:
        return chronicle_page(request, "downtimes/desk_page.html", membership, cycle=None)
    context = _desk_context(request, membership, cycle)
    if request.htmx:  # type: ignore[attr-defined]
        return chronicle_page(request, "downtimes/desk_results.html", membership, **context)
    context["at_game_form"] = forms.AtGameRequestForm(cycle=cycle)
    return chronicle_page(request, "downtimes/desk_page.html", membership, **context)


def _apply_errors(form: Any, exc: ValidationError) -> None:
    if hasattr(exc, "error_dict"):
        for name, errors in exc.message_dict.items():
            form.add_error(name if name in form.fields else None, errors)
    else:
        form.add_error(None, exc.messages)


@login_required
@require_http_methods(["GET", "POST"])
def desk_item(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = _staff(request, slug)
    item = _item(membership, pk)
    staff = forms.staff_members(membership.chronicle_id)
    theirs: DeskItem | None = None
    if request.method == "POST":
        form = forms.DeskItemForm(request.POST, staff=staff)
        if form.is_valid():
            data = form.cleaned_data
            assignee = next((m.user for m in staff if str(m.user_id) == data["assignee"]), None)
            try:
                services.desk_item_update(
                    item=item,
                    by=chronicle_access.acting_user(request.user),
                    version=data["version"],
                    status=data["status"],
                    assignee=assignee,
                    unassign=assignee is None,
                    st_notes=data["st_notes"],
                    result=data["result"],
                )
            except ValidationError as exc:
                _apply_errors(form, exc)
                if "version" in getattr(exc, "error_dict", {}):
                    # Keep what this ST typed, show the other's version beside it, and let a
                    # resubmission apply on top of it.
                    theirs = _item(membership, pk)
                    data_copy = request.POST.copy()
                    data_copy["version"] = str(theirs.version)
                    form.data = data_copy
            else:
                messages.success(request, f"Saved: {item}.")
                return redirect("desk_item", slug=slug, pk=pk)
    else:
        form = forms.DeskItemForm(initial=forms.DeskItemForm.initial_for(item), staff=staff)
    status = 409 if theirs is not None else (400 if form.is_bound else 200)
    return chronicle_page(
        request,
        "downtimes/desk_item.html",
        membership,
        status=status,
        item=item,
        form=form,
        theirs=theirs,
        back=_desk_url(slug, f"game={item.cycle.game.number}"),
    )


@login_required
@require_POST
def desk_assign(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = _staff(request, slug)
    item = _item(membership, pk)
    staff = forms.staff_members(membership.chronicle_id)
    form = forms.AssignForm(request.POST, staff=staff)
    me = chronicle_access.acting_user(request.user)
    if not form.is_valid():
        messages.error(request, "Pick a storyteller to assign.")
    else:
        try:
            services.desk_item_update(
                item=item,
                by=me,
                version=form.cleaned_data["version"],
                assignee=form.user(me, staff),
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, f"Assigned: {item}.")
    back = request.POST.get("back", "")
    return redirect(_desk_url(slug, back) if back else reverse("desk", args=[slug]))


@login_required
@require_POST
def desk_bulk_approve(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.POST)
    if cycle is None:
        raise Http404("No such cycle.")
    query = _filters_query(request.POST, cycle)
    form = forms.BulkApproveForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(str(e) for e in form.errors["confirm"]))
        return redirect(_desk_url(slug, query))
    staff = forms.staff_members(membership.chronicle_id)
    filters = forms.DeskFilterForm(request.POST, membership=membership, staff=staff)
    if filters.refusal():
        # Approving without the invalid filter would approve more than the ST chose.
        context = _desk_context(request, membership, cycle, data=request.POST)
        context["at_game_form"] = forms.AtGameRequestForm(cycle=cycle)
        context["bulk_error"] = BULK_REFUSED
        return chronicle_page(
            request, "downtimes/desk_page.html", membership, status=400, **context
        )
    done = services.desk_bulk_update(
        cycle=cycle,
        by=chronicle_access.acting_user(request.user),
        status=DeskStatus.APPROVED,
        items=filters.apply(DeskItem.objects.filter(cycle=cycle)),
    )
    messages.success(
        request,
        f"Approved {done['updated']} items; {done['skipped']} already decided, withdrawn or "
        "XP purchases (signed off on the purchase queue) were left as they were.",
    )
    return redirect(_desk_url(slug, query))


@login_required
@require_POST
def desk_remind(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.POST)
    if cycle is None:
        raise Http404("No such cycle.")
    waiting = list(services.not_submitted(cycle=cycle))
    form = forms.ReminderForm(request.POST, waiting=waiting)
    if not form.is_valid():
        messages.error(request, "Pick who to remind among those who have not submitted.")
    else:
        sent = services.reminder_mail(
            cycle=cycle,
            characters=form.cleaned_data["characters"],
            by=chronicle_access.acting_user(request.user),
        )
        messages.success(request, f"Sent {sent} reminders (each player gets at most one a day).")
    return redirect(_desk_url(slug, f"game={cycle.game.number}"))


@login_required
@require_POST
def desk_release(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.POST)
    if cycle is None:
        raise Http404("No such cycle.")
    released = services.desk_release(cycle=cycle, by=chronicle_access.acting_user(request.user))
    messages.success(request, f"Released {released} resolved results to their players.")
    return redirect(_desk_url(slug, f"game={cycle.game.number}"))


@login_required
@require_POST
def desk_at_game(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.POST)
    if cycle is None:
        raise Http404("No such cycle.")
    form = forms.AtGameRequestForm(request.POST, cycle=cycle)
    if form.is_valid():
        data = form.cleaned_data
        try:
            item, created = services.at_game_request_record(
                cycle=cycle,
                character=data["character"],
                by=chronicle_access.acting_user(request.user),
                influence=data["influence"],
                points=data["points"],
                action=data["action"],
                description=data["description"],
                requested_at=data["requested_at"],
                key=f"page:{data['key']}",
            )
        except ValidationError as exc:
            _apply_errors(form, exc)
        else:
            messages.success(
                request, f"Recorded {item.character.name}'s request at {item.requested_at:%H:%M}."
            )
            return redirect(_desk_url(slug, f"game={cycle.game.number}"))
    context = _desk_context(request, membership, cycle)
    context["at_game_form"] = form
    return chronicle_page(request, "downtimes/desk_page.html", membership, status=400, **context)


urlpatterns = [
    path("desk/", desk, name="desk"),
    path("desk/items/<int:pk>/", desk_item, name="desk_item"),
    path("desk/items/<int:pk>/assign/", desk_assign, name="desk_assign"),
    path("desk/approve/", desk_bulk_approve, name="desk_bulk_approve"),
    path("desk/remind/", desk_remind, name="desk_remind"),
    path("desk/release/", desk_release, name="desk_release"),
    path("desk/at-game/", desk_at_game, name="desk_at_game"),
]
