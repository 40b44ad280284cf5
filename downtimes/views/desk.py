"""The influence desk (issues 5 and 12), storytellers and admins only: a player gets 403 on every
desk page, an item of another chronicle 404.

A two-pane work queue: the filters and the list on one side, the open item on the other. Each
item has its own address (`desk/items/<pk>/?<filters>`), a full page without JavaScript; with
htmx a click loads only the item pane and pushes that address, and the filters reload only the
list. The page's query count does not depend on the number of items: rows come from one joined
query (paged), the counts from one GROUP BY, the conflicts from one grouped query.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.cache import patch_vary_headers
from django.utils.html import format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from characters.models import INFLUENCE_CHOICES
from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.forms.widgets import FAST_RENDERER, render_fast
from chronicle.models import Cycle, CycleStatus, Membership
from chronicle.moments import moment_text
from chronicle.views import chronicle_page

from .. import selectors_desk as selectors
from ..forms import desk as forms
from ..forms.desk_queue import AtGameQueueForm, DeskQueueFilterForm
from ..models import ActionKind, DeskItem, DeskStatus, ItemKind, PowerKind
from ..services import desk as services

PAGE_SIZE = 50
FILTER_FIELDS = ("kind", "action", "status", "assignee", "character", "target")
# The id of the item pane: an htmx request aimed at it gets the pane alone.
DETAIL = "desk-detail"
# Sent with every change made from the desk: the list reloads itself on it (its counts and
# rows show the change) without losing its filters or page.
CHANGED = "deskChanged"
CHANGED_ITEM = "deskItemChanged"
BULK_REFUSED = gettext_lazy("Nothing was approved: fix the filters marked below first.")


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
            raise Http404(_("No such cycle."))
        return chronicle_access.cycle_for(membership, int(number))
    working = cycles.filter(status__in=[CycleStatus.OPEN, CycleStatus.CLOSED])
    return working.order_by("-deadline_at").first() or cycles.order_by("-deadline_at").first()


def _item(membership: Membership, pk: int) -> DeskItem:
    if not 0 < pk <= MAX_ID:
        raise Http404(_("No such desk item."))
    item = (
        DeskItem.objects.filter(cycle__chronicle_id=membership.chronicle_id, pk=pk)
        .select_related(
            "cycle", "cycle__game", "cycle__chronicle", "character", "assignee", "lender"
        )
        .select_related("target_character", "target_structure", "recorded_by")
        .first()
    )
    if item is None:
        raise Http404(_("No such desk item."))
    return item


def _filters_query(data: QueryDict, cycle: Cycle, *, leave_out: str = "") -> str:
    pairs = [(name, data[name]) for name in FILTER_FIELDS if data.get(name) and name != leave_out]
    return urlencode([("game", str(cycle.game.number)), *pairs])


def _desk_url(slug: str, query: str) -> str:
    return f"{reverse('desk', args=[slug])}?{query}"


def _item_url(slug: str, pk: int, query: str) -> str:
    return f"{reverse('desk_item', args=[slug, pk])}?{query}"


def _items_path(slug: str) -> str:
    """The desk items' common prefix: "<items path><pk>/" is an item's address and
    "<pk>/assign/" its assignment, as `urlpatterns` below lay them out. A page links every
    row and every conflicting item: one reverse() per page, not one per link."""
    return f"{reverse('desk', args=[slug])}items/"


def _fragment(request: HttpRequest) -> bool:
    """An htmx request for part of the page (a history restore needs the whole page)."""
    htmx: Any = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request


def _to_pane(request: HttpRequest) -> bool:
    return _fragment(request) and request.htmx.target == DETAIL  # type: ignore[attr-defined]


def _vary(response: HttpResponse) -> HttpResponse:
    # The same address answers a page or a fragment: caches must tell them apart.
    patch_vary_headers(response, ["HX-Request", "HX-Target"])
    return response


# The row's fields shown by their choice's label, with their choices.
LABELLED: dict[str, Any] = {
    "kind": ItemKind.choices,
    "status": DeskStatus.choices,
    "action": ActionKind.choices,
    "power": PowerKind.choices,
    "influence": INFLUENCE_CHOICES,
}


def _choice_labels() -> dict[str, dict[str, str]]:
    """The labels of LABELLED's choices in the active language, read once a page: a model's
    get_FOO_display() evaluates every label of the field's choices at each call, which was
    1,600 translations for a page of 50 rows."""
    return {
        name: {str(value): str(label) for value, label in choices}
        for name, choices in LABELLED.items()
    }


def _row_labels(item: DeskItem, labels: dict[str, dict[str, str]]) -> dict[str, str]:
    return {name: labels[name].get(getattr(item, name), getattr(item, name)) for name in LABELLED}


def _conflict_links(ids: list[int], items_path: str, list_query: str) -> str:
    """A conflict's items as links that open in the item pane (the list sets hx-target). A
    cycle of 1,000 items can have 700 items in conflicts: joined here, once per conflict,
    rather than drawn link by link by the template, which made half the page's time."""
    return format_html_join(
        ", ",
        '<a href="{0}{1}/?{2}" hx-get="{0}{1}/?{2}">#{1}</a>',
        ((items_path, pk, list_query) for pk in ids),
    )


def _filters(data: QueryDict, membership: Membership, staff: list[Membership]) -> Any:
    return DeskQueueFilterForm(data, membership=membership, staff=staff)


def _desk_context(
    request: HttpRequest,
    membership: Membership,
    cycle: Cycle,
    *,
    staff: list[Membership],
    data: QueryDict | None = None,
    filters: Any = None,
    open_pk: int | None = None,
) -> dict[str, Any]:
    """The list pane for `cycle`, filtered by `data` (the query string unless given): invalid
    filters are shown beside their fields and left out of the list, and the bulk approval
    is hidden until they are fixed."""
    data = request.GET if data is None else data
    if filters is None:
        filters = _filters(data, membership, staff)
    shown = filters.apply(services.desk_items(cycle=cycle)).order_by("created_at", "pk")
    page = Paginator(shown, PAGE_SIZE).get_page(request.GET.get("page"))
    counts = selectors.status_counts(filters.without_status(DeskItem.objects.filter(cycle=cycle)))
    conflicts = selectors.desk_conflicts(cycle=cycle)
    conflict_of = selectors.conflicts_by_item(conflicts)
    query = _filters_query(data, cycle)
    list_query = f"{query}&page={page.number}" if page.number > 1 else query
    items_path = _items_path(membership.chronicle.slug)
    labels = _choice_labels()
    return {
        "cycle": cycle,
        "filters": filters,
        "filter_errors": [
            (filters.fields[name].label, errors) for name, errors in filters.refusal().items()
        ],
        "page": page,
        "rows": [
            (
                item,
                conflict_of.get(item.pk, []),
                f"{items_path}{item.pk}/",
                _row_labels(item, labels),
            )
            for item in page.object_list
        ],
        "counts": counts,
        "all_count": sum(n for _value, _label, n in counts),
        "status_filter": filters.cleaned_data.get("status", ""),
        "filtered_total": page.paginator.count,
        "conflicts": [
            (conflict, _conflict_links(conflict.item_ids, items_path, list_query))
            for conflict in conflicts
        ],
        "query": query,
        "list_query": list_query,
        "status_query": _filters_query(data, cycle, leave_out="status"),
        "open_pk": open_pk,
        "bulk_form": forms.BulkApproveForm(renderer=FAST_RENDERER),
    }


def _page_extras(membership: Membership, context: dict[str, Any]) -> dict[str, Any]:
    """What the full page adds to the panes (`context` holds the list pane's, and the open
    item's if any): the cycle picker, who has not submitted, and the at-game request form."""
    cycle = context["cycle"]
    waiting, waiting_total = services.not_submitted_sample(cycle=cycle)
    return {
        "cycles": chronicle_access.cycles_visible_to(membership).order_by("-deadline_at"),
        "waiting": waiting,
        "waiting_total": waiting_total,
        "waiting_more": waiting_total - len(waiting),
        "at_game_form": context.get("at_game_form") or AtGameQueueForm(cycle=cycle),
        **context,
    }


def _pane_context(
    membership: Membership,
    item: DeskItem,
    *,
    staff: list[Membership],
    filters: Any,
    list_query: str,
    form: Any = None,
    theirs: DeskItem | None = None,
    note: str = "",
    problem: str = "",
) -> dict[str, Any]:
    if form is None:
        form = forms.DeskItemForm(initial=forms.DeskItemForm.initial_for(item), staff=staff)
    render_fast(form)
    mine = DeskItem.objects.filter(cycle_id=item.cycle_id)
    previous, following = selectors.neighbours(filters.apply(mine), item)
    return {
        "item": item,
        "form": form,
        "theirs": theirs,
        "note": note,
        "problem": problem,
        "previous_pk": previous,
        "next_pk": following,
        "list_query": list_query,
        "assigned_to_me": item.assignee_id == membership.user_id,
    }


@login_required
@require_http_methods(["GET"])
def desk(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.GET)
    if cycle is None:
        return chronicle_page(request, "downtimes/desk_page.html", membership, cycle=None)
    staff = forms.staff_members(membership.chronicle_id)
    context = _desk_context(request, membership, cycle, staff=staff)
    if _fragment(request):
        return _vary(chronicle_page(request, "downtimes/desk_results.html", membership, **context))
    page = _page_extras(membership, context)
    return _vary(chronicle_page(request, "downtimes/desk_page.html", membership, **page))


def _item_page(
    request: HttpRequest,
    membership: Membership,
    item: DeskItem,
    *,
    staff: list[Membership],
    filters: Any,
    status: int = 200,
    **pane: Any,
) -> HttpResponse:
    """The item pane alone (htmx), or the whole desk with this item open."""
    cycle = item.cycle
    query = _filters_query(request.GET, cycle)
    page_number = request.GET.get("page", "")
    list_query = f"{query}&page={page_number}" if page_number.isdecimal() else query
    context = _pane_context(
        membership, item, staff=staff, filters=filters, list_query=list_query, **pane
    )
    if _to_pane(request):
        return _vary(
            chronicle_page(
                request, "downtimes/desk_item.html", membership, status=status, **context
            )
        )
    listing = _desk_context(
        request, membership, cycle, staff=staff, filters=filters, open_pk=item.pk
    )
    # The list's query (with its page) is the one the item was opened from.
    full = _page_extras(membership, {**listing, **context})
    return _vary(
        chronicle_page(request, "downtimes/desk_page.html", membership, status=status, **full)
    )


def _apply_errors(form: Any, exc: ValidationError) -> None:
    if hasattr(exc, "error_dict"):
        for name, errors in exc.message_dict.items():
            form.add_error(name if name in form.fields else None, errors)
    else:
        form.add_error(None, exc.messages)


@login_required
@require_http_methods(["GET", "POST"])
def desk_item(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """GET: the item (pane or page). POST: save it; with `then=next` ("Save and next") open
    the next item of the filtered list (the filters ride in the query string)."""
    membership = _staff(request, slug)
    item = _item(membership, pk)
    staff = forms.staff_members(membership.chronicle_id)
    filters = _filters(request.GET, membership, staff)
    if request.method != "POST":
        return _item_page(request, membership, item, staff=staff, filters=filters)
    form = forms.DeskItemForm(request.POST, staff=staff)
    theirs: DeskItem | None = None
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
            return _saved(request, membership, item, staff=staff, filters=filters)
    return _item_page(
        request,
        membership,
        item,
        staff=staff,
        filters=filters,
        status=409 if theirs is not None else 400,
        form=form,
        theirs=theirs,
    )


def _saved(
    request: HttpRequest,
    membership: Membership,
    item: DeskItem,
    *,
    staff: list[Membership],
    filters: Any,
) -> HttpResponse:
    """After a save: the same item again, or with "Save and next" the next one of the list."""
    note = _("Saved: %(item)s.") % {"item": item}
    target = item.pk
    if request.POST.get("then") == "next":
        mine = DeskItem.objects.filter(cycle_id=item.cycle_id)
        _previous, following = selectors.neighbours(filters.apply(mine), item)
        if following is None:
            note = _("Saved: %(item)s. That was the last item of the list.") % {"item": item}
        else:
            target = following
    address = _item_url(membership.chronicle.slug, target, request.GET.urlencode())
    if not _to_pane(request):
        messages.success(request, note)
        return redirect(address)
    opened = _item(membership, target)
    response = _item_page(request, membership, opened, staff=staff, filters=filters, note=note)
    response["HX-Trigger"] = CHANGED
    if target != item.pk:
        response["HX-Push-Url"] = address
    return response


@login_required
@require_POST
def desk_assign(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Take an item ("me") or give it to a storyteller: from a row of the list (back to the
    list, or to the item open beside it) or from the item pane (htmx: the pane again)."""
    membership = _staff(request, slug)
    item = _item(membership, pk)
    staff = forms.staff_members(membership.chronicle_id)
    form = forms.AssignForm(request.POST, staff=staff)
    me = chronicle_access.acting_user(request.user)
    note = problem = ""
    if not form.is_valid():
        problem = _("Pick a storyteller to assign.")
    else:
        try:
            services.desk_item_update(
                item=item,
                by=me,
                version=form.cleaned_data["version"],
                assignee=form.user(me, staff),
            )
        except ValidationError as exc:
            problem = " ".join(exc.messages)
        else:
            note = _("Assigned: %(item)s.") % {"item": item}
    if _to_pane(request):
        filters = _filters(request.GET, membership, staff)
        opened = _item(membership, pk)
        response = _item_page(
            request,
            membership,
            opened,
            staff=staff,
            filters=filters,
            status=409 if problem else 200,
            note=note,
            problem=problem,
        )
        if note:
            response["HX-Trigger"] = CHANGED
        return response
    if _fragment(request):
        # A row's Take: the list again (its filters and page ride in the query string), and
        # the pane reloads if it shows this item.
        context = _desk_context(request, membership, item.cycle, staff=staff)
        response = _vary(
            chronicle_page(
                request,
                "downtimes/desk_results.html",
                membership,
                note=note,
                problem=problem,
                **context,
            )
        )
        response["HX-Trigger"] = json.dumps({CHANGED_ITEM: {"pk": item.pk}})
        return response
    if problem:
        messages.error(request, problem)
    else:
        messages.success(request, note)
    back = request.POST.get("back", "")
    opened_pk = request.POST.get("open", "")
    if opened_pk.isdecimal() and 0 < int(opened_pk) <= MAX_ID:
        return redirect(_item_url(slug, int(opened_pk), back))
    return redirect(_desk_url(slug, back) if back else reverse("desk", args=[slug]))


@login_required
@require_http_methods(["GET"])
def desk_characters(request: HttpRequest, slug: str) -> HttpResponse:
    """The character type-ahead: at most ten of the chronicle's characters whose name holds
    what was typed (`q`, or the field's own name), as <option>s for the field's datalist.
    `scope=active` offers only active, approved characters (the at-game request's choice)."""
    membership = _staff(request, slug)
    text = request.GET.get("q") or request.GET.get("character") or ""
    if not _fragment(request):
        # Not a page of its own: a visit without htmx gets the desk filtered by the words.
        words = selectors.PICKED.sub("", text).strip()[:120]
        query = urlencode({"character": words}) if words else ""
        return redirect(_desk_url(slug, query) if query else reverse("desk", args=[slug]))
    matches = selectors.character_matches(
        chronicle_id=membership.chronicle_id,
        text=text[:120],
        active_only=request.GET.get("scope") == "active",
    )
    options = [(selectors.character_label(c), c) for c in matches]
    return render(request, "downtimes/desk_characters.html", {"options": options})


@login_required
@require_POST
def desk_bulk_approve(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.POST)
    if cycle is None:
        raise Http404(_("No such cycle."))
    query = _filters_query(request.POST, cycle)
    form = forms.BulkApproveForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(str(e) for e in form.errors["confirm"]))
        return redirect(_desk_url(slug, query))
    staff = forms.staff_members(membership.chronicle_id)
    filters = _filters(request.POST, membership, staff)
    if filters.refusal():
        # Approving without the invalid filter would approve more than the ST chose.
        context = _desk_context(
            request, membership, cycle, staff=staff, data=request.POST, filters=filters
        )
        context["bulk_error"] = BULK_REFUSED
        page = _page_extras(membership, context)
        return chronicle_page(request, "downtimes/desk_page.html", membership, status=400, **page)
    done = services.desk_bulk_update(
        cycle=cycle,
        by=chronicle_access.acting_user(request.user),
        status=DeskStatus.APPROVED,
        items=filters.apply(DeskItem.objects.filter(cycle=cycle)),
    )
    messages.success(
        request,
        _(
            "Approved %(updated)s items; %(skipped)s already decided, withdrawn or XP purchases "
            "(signed off on the purchase queue) were left as they were."
        )
        % done,
    )
    return redirect(_desk_url(slug, query))


@login_required
@require_POST
def desk_remind(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.POST)
    if cycle is None:
        raise Http404(_("No such cycle."))
    waiting = list(services.not_submitted(cycle=cycle))
    form = forms.ReminderForm(request.POST, waiting=waiting)
    if not form.is_valid():
        messages.error(request, _("Pick who to remind among those who have not submitted."))
    else:
        sent = services.reminder_mail(
            cycle=cycle,
            characters=form.cleaned_data["characters"],
            by=chronicle_access.acting_user(request.user),
        )
        messages.success(
            request,
            _("Sent %(sent)s reminders (each player gets at most one a day).") % {"sent": sent},
        )
    return redirect(_desk_url(slug, f"game={cycle.game.number}"))


@login_required
@require_POST
def desk_at_game(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, request.POST)
    if cycle is None:
        raise Http404(_("No such cycle."))
    form = AtGameQueueForm(request.POST, cycle=cycle)
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
                request,
                _("Recorded %(name)s's request at %(time)s.")
                % {
                    "name": item.character.name,
                    "time": moment_text(item.requested_at or data["requested_at"], cycle.chronicle),
                },
            )
            return redirect(_desk_url(slug, f"game={cycle.game.number}"))
    staff = forms.staff_members(membership.chronicle_id)
    context = _desk_context(request, membership, cycle, staff=staff)
    page = _page_extras(membership, {**context, "at_game_form": form})
    return chronicle_page(request, "downtimes/desk_page.html", membership, status=400, **page)


urlpatterns = [
    path("desk/", desk, name="desk"),
    path("desk/characters/", desk_characters, name="desk_characters"),
    path("desk/items/<int:pk>/", desk_item, name="desk_item"),
    path("desk/items/<int:pk>/assign/", desk_assign, name="desk_assign"),
    path("desk/approve/", desk_bulk_approve, name="desk_bulk_approve"),
    path("desk/remind/", desk_remind, name="desk_remind"),
    path("desk/at-game/", desk_at_game, name="desk_at_game"),
]
