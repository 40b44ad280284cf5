"""The between-games pipeline's pages (issue 6, DT-10; issue 12): the storytellers' resolution
page of a cycle (close, resolve, the progress bar, the preview by step with its filter and its
overrides, the release), the XP report with its CSV and PDF, and the player's results page.

Storytellers and admins only, like the desk: a player gets 403 on every resolution page, a
stranger to the chronicle 404. The results page is every member's own: it lists only the
released outcomes the player reads (`pipeline.results_for`), and only what the player may
read of them (`public_text`, never the STs' `explanation` or `title`).

The chronicle app owns `cycles/<number>/` (the members' page of a cycle), so these pages live
under `resolution/`; the API mirrors them under /api/chronicles/<slug>/resolution/.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.models import Cycle, CycleStatus, Membership
from chronicle.pdf import pdf_filename, pdf_response
from chronicle.views import chronicle_page

from ..forms.cycles import OutcomeOverrideForm
from ..forms.release import PreviewFilterForm, ReleaseForm
from ..models import Outcome, OutcomeOverride
from ..selectors import progress_by_cycle, release_plan_key
from ..services import pipeline, release
from ..services import results as player_results
from ..services.preview import (
    OVERVIEW_SIZE,
    PAGE_SIZE,
    PreviewFilter,
    preview_counts,
    preview_lines,
)
from ..services.steps import OUTCOME_POSITION, outcome_step_order

CSV_COLUMNS = [
    ("player", gettext_lazy("Player")),
    ("character", gettext_lazy("Character")),
    ("xp", gettext_lazy("XP")),
    ("reason", gettext_lazy("Reason")),
    ("kind", gettext_lazy("Kind")),
    ("note", gettext_lazy("Override note")),
    ("group", gettext_lazy("Group")),
]


def _staff(request: HttpRequest, slug: str) -> Membership:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    return membership


def _cycle(membership: Membership, number: int) -> Cycle:
    return chronicle_access.cycle_for(membership, number)


def _outcome(cycle: Cycle, pk: int) -> Outcome:
    if not 0 < pk <= MAX_ID:
        raise Http404(_("No such outcome."))
    outcome = Outcome.objects.filter(cycle=cycle, pk=pk).first()
    if outcome is None:
        raise Http404(_("No such outcome."))
    return outcome


def _query(wanted: PreviewFilter, **changes: Any) -> str:
    """The preview's query string for `wanted` with `changes` (step, page), empty parts left
    out, so every link and every form's way back keeps the filter."""
    values = {
        "step": wanted.step,
        "who": wanted.who,
        "overridden": "1" if wanted.overridden else "",
        "page": wanted.page if wanted.page > 1 else "",
    }
    values.update(changes)
    return urlencode({k: v for k, v in values.items() if v not in ("", None, 1)})


def _page_url(slug: str, cycle: Cycle, anchor: str = "", query: str = "") -> str:
    url = reverse("cycle_resolution", args=[slug, cycle.game.number])
    if query:
        url = f"{url}?{query}"
    return f"{url}#{anchor}" if anchor else url


def _refused(request: HttpRequest, exc: ValidationError) -> None:
    messages.error(request, " ".join(exc.messages))


# --- The list ----------------------------------------------------------------------------------


@login_required
@require_GET
def cycle_resolution_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Every cycle of the chronicle with its status and its latest resolution (three queries
    after the membership, whatever the number of cycles)."""
    membership = _staff(request, slug)
    cycles = list(chronicle_access.cycles_visible_to(membership).order_by("-deadline_at"))
    progress = progress_by_cycle(cycles)
    rows = [(cycle, progress.get(cycle.pk)) for cycle in cycles]
    return chronicle_page(request, "downtimes/cycle_list.html", membership, rows=rows)


# --- One cycle ---------------------------------------------------------------------------------


def _wanted(data: QueryDict) -> PreviewFilter:
    step = data.get("step", "")
    if step and step not in OUTCOME_POSITION:
        raise Http404(_("No such step."))
    return PreviewFilterForm(data).wanted(step)


def _page_context(
    membership: Membership,
    cycle: Cycle,
    wanted: PreviewFilter,
    bound: dict[int, OutcomeOverrideForm] | None = None,
) -> dict[str, Any]:
    """The cycle's page: status, progress, and the preview by step in DT-10 order, one step
    (a page of it) or the first lines of each, filtered by player or character.

    Queries (whatever the number of outcomes): the latest run, its chunk counts and its
    failures (`run_progress`, 3), the lines shown with their player and character (1), the
    overrides with their author (1), the outcomes per step under the filter (1)."""
    progress = pipeline.run_progress(cycle=cycle)
    lines = preview_lines(cycle=cycle, wanted=wanted)
    overrides = pipeline.overrides_for(cycle=cycle)
    counts = preview_counts(cycle=cycle, wanted=wanted)
    editable = cycle.status != CycleStatus.RELEASED
    back = _query(wanted)
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for outcome in lines:
        override = overrides.get((outcome.step, outcome.subject))
        form = None
        if editable and outcome.overridable:
            form = (bound or {}).get(outcome.pk) or OutcomeOverrideForm(
                outcome=outcome, initial=_override_initial(override)
            )
        grouped[outcome.step].append(
            {
                "outcome": outcome,
                "override": override,
                "xp": pipeline.effective_xp(outcome, overrides),
                "reads": pipeline.public_line(outcome, overrides),
                "form": form,
            }
        )
    order = outcome_step_order()
    groups = []
    for number, (name, label) in enumerate(order, start=1):
        if wanted.step and name != wanted.step:
            continue
        rows = grouped.get(name, [])
        count = counts.get(name, 0)
        groups.append(
            {
                "number": number,
                "name": name,
                "label": label,
                "rows": rows,
                "count": count,
                "more": count - len(rows) if not wanted.step else 0,
                "url": "?" + _query(wanted, step=name, page=""),
            }
        )
    tabs = [
        {
            "name": name,
            "label": label,
            "count": counts.get(name, 0),
            "url": "?" + _query(wanted, step=name, page=""),
            "current": name == wanted.step,
        }
        for name, label in order
        if counts.get(name) or name == wanted.step
    ]
    pages = max(1, math.ceil(counts.get(wanted.step, 0) / PAGE_SIZE)) if wanted.step else 1
    first = (wanted.page - 1) * PAGE_SIZE
    return {
        "cycle": cycle,
        "progress": progress,
        "groups": groups,
        "tabs": tabs,
        "all_url": "?" + _query(wanted, step="", page="") if wanted.active else "?",
        "wanted": wanted,
        "filter_form": PreviewFilterForm(
            initial={"step": wanted.step, "who": wanted.who, "overridden": wanted.overridden}
        ),
        "clear_url": "?" + _query(PreviewFilter(step=wanted.step)),
        "back": back,
        "pager": {
            "page": wanted.page,
            "pages": pages,
            "first": first + 1,
            "last": min(first + PAGE_SIZE, counts.get(wanted.step, 0)),
            "previous": "?" + _query(wanted, page=wanted.page - 1) if wanted.page > 1 else "",
            "next": "?" + _query(wanted, page=wanted.page + 1) if wanted.page < pages else "",
        },
        "overview_size": OVERVIEW_SIZE,
        "outcome_total": sum(counts.values()),
        "editable": editable,
        "settled_on_paper": cycle.status == CycleStatus.RELEASED and progress.run is None,
    }


def _override_initial(override: OutcomeOverride | None) -> dict[str, Any]:
    if override is None:
        return {}
    found = "" if override.found is None else ("yes" if override.found else "no")
    return {"xp": override.xp, "found": found, "note": override.note}


def _back(request: HttpRequest) -> PreviewFilter:
    """The view the override form was sent from (its `back` field), so the storyteller lands
    where they were; anything malformed is the overview."""
    try:
        return _wanted(QueryDict(request.POST.get("back", "")[:500]))
    except Http404:
        return PreviewFilter()


@login_required
@require_GET
def cycle_resolution(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    context = _page_context(membership, cycle, _wanted(request.GET))
    return chronicle_page(request, "downtimes/cycle_page.html", membership, **context)


@login_required
@require_GET
def cycle_progress(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """The progress bar alone, for htmx's polling (every second while the run runs). When the
    run is over the whole page reloads (HX-Refresh), so the preview it computed appears."""
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect(_page_url(slug, cycle, "progress"))
    progress = pipeline.run_progress(cycle=cycle)
    response = chronicle_page(
        request,
        "downtimes/cycle_page.html#progress",
        membership,
        cycle=cycle,
        progress=progress,
        settled_on_paper=cycle.status == CycleStatus.RELEASED and progress.run is None,
    )
    if not progress.running:
        response["HX-Refresh"] = "true"
    return response


@login_required
@require_POST
def cycle_close(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    try:
        closed = pipeline.cycle_close_now(
            cycle=cycle, by=chronicle_access.acting_user(request.user)
        )
    except ValidationError as exc:
        _refused(request, exc)
    else:
        if closed:
            messages.success(request, _("The cycle is closed; submissions are locked (DT-10)."))
        else:
            messages.info(request, _("This cycle was already closed."))
    return redirect(_page_url(slug, cycle))


@login_required
@require_POST
def cycle_resolve(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """Start (or restart) the resolution: the service enqueues the steps' tasks after commit;
    the workers compute the preview and this page shows their progress."""
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    try:
        run = pipeline.cycle_resolve(cycle=cycle, by=chronicle_access.acting_user(request.user))
    except ValidationError as exc:
        _refused(request, exc)
    else:
        messages.success(
            request,
            _(
                "Resolution %(number)s started: the steps run in DT-10 order and the preview "
                "appears here when they are done."
            )
            % {"number": run.number},
        )
    return redirect(_page_url(slug, cycle, "progress"))


@login_required
@require_POST
def outcome_override(request: HttpRequest, slug: str, number: int, pk: int) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    outcome = _outcome(cycle, pk)
    back = _back(request)
    here = _page_url(slug, cycle, f"outcome-{outcome.pk}", _query(back))
    form = OutcomeOverrideForm(request.POST, outcome=outcome)
    if not outcome.overridable:
        messages.error(request, _("This outcome cannot be overridden; change its inputs instead."))
        return redirect(here)
    if form.is_valid():
        try:
            pipeline.outcome_override(
                outcome=outcome,
                by=chronicle_access.acting_user(request.user),
                note=form.cleaned_data["note"],
                xp=form.cleaned_data.get("xp"),
                found=form.found_value,
            )
        except ValidationError as exc:
            if not hasattr(exc, "error_dict"):
                # About the outcome, not the input (the cycle was released meanwhile): the
                # page no longer shows a form to put it beside.
                _refused(request, exc)
                return redirect(here)
            for name, errors in exc.message_dict.items():
                form.add_error(name if name in form.fields else None, errors)
        else:
            messages.success(
                request, _("Override saved: %(title)s.") % {"title": outcome.localized_title}
            )
            return redirect(here)
    # The page again, where the storyteller was, with what was typed kept and each refusal
    # beside its field.
    context = _page_context(membership, cycle, back, bound={outcome.pk: form})
    return chronicle_page(request, "downtimes/cycle_page.html", membership, status=400, **context)


@login_required
@require_POST
def outcome_override_remove(request: HttpRequest, slug: str, number: int, pk: int) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    outcome = _outcome(cycle, pk)
    try:
        removed = pipeline.outcome_override_remove(
            outcome=outcome, by=chronicle_access.acting_user(request.user)
        )
    except ValidationError as exc:
        _refused(request, exc)
    else:
        if removed:
            messages.success(
                request,
                _("Override removed: %(title)s is as computed.")
                % {"title": outcome.localized_title},
            )
        else:
            messages.info(request, _("This outcome had no override."))
    return redirect(_page_url(slug, cycle, f"outcome-{outcome.pk}", _query(_back(request))))


# --- Release -----------------------------------------------------------------------------------


def _release_page(
    request: HttpRequest,
    membership: Membership,
    cycle: Cycle,
    unfinished: list[release.UnfinishedGroup],
    *,
    status: int = 200,
    form: ReleaseForm | None = None,
    ticked: set[str] | frozenset[str] = frozenset(),
) -> HttpResponse:
    """What the release will do, what is unfinished, and the confirmation. A bound `form`
    (confirmations missing) is shown with its errors; else a fresh one for the current preview,
    keeping the groups already `ticked`."""
    plan = pipeline.release_plan(cycle=cycle)
    run, key = release_plan_key(cycle, plan)
    if form is None:
        initial: dict[str, Any] = {"run": run, "plan": key}
        initial.update({f"confirm_{name}": True for name in ticked})
        form = ReleaseForm(initial=initial, unfinished=unfinished)
    return chronicle_page(
        request,
        "downtimes/cycle_release.html",
        membership,
        status=status,
        cycle=cycle,
        plan=plan,
        statement=release.xp_statement(cycle=cycle),
        unfinished=[g for g in unfinished if g.count],
        blocked=release.unfinished_blocked(cycle, unfinished),
        form=form,
        ready=(
            cycle.status == CycleStatus.RESOLVED and not pipeline.run_progress(cycle=cycle).running
        ),
    )


@login_required
@require_http_methods(["GET", "POST"])
def cycle_release(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """GET: what the release will do and what is unfinished, to confirm. POST: release the
    preview the ST confirmed, with each group of unfinished work confirmed; if the preview
    changed since they read it (another ST re-resolved or overrode), show it again."""
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    unfinished = release.release_unfinished(cycle=cycle)
    if request.method == "GET":
        return _release_page(request, membership, cycle, unfinished)
    if cycle.status == CycleStatus.RELEASED:
        messages.info(request, _("The results of this cycle are already released."))
        return redirect(_page_url(slug, cycle))
    form = ReleaseForm(request.POST, unfinished=unfinished)
    valid = form.is_valid()
    run, key = release_plan_key(cycle, pipeline.release_plan(cycle=cycle))
    if form.seen() != (run, key):
        messages.error(
            request,
            _(
                "The preview changed since this confirmation was shown (or it was not shown): "
                "read what the release will do again before releasing."
            ),
        )
        return _release_page(
            request, membership, cycle, unfinished, status=409, ticked=form.confirmed()
        )
    if not valid and not release.unfinished_blocked(cycle, unfinished):
        # A confirmation left unticked: the page again, the error beside it, the ticks kept.
        return _release_page(request, membership, cycle, unfinished, status=400, form=form)
    try:
        released = pipeline.cycle_release(
            cycle=cycle,
            by=chronicle_access.acting_user(request.user),
            expected_key=(run, key),
            confirmed_unfinished=form.confirmed(),
        )
    except (pipeline.PreviewChanged, release.UnfinishedBlocks) as exc:
        _refused(request, exc)
        return _release_page(
            request, membership, cycle, unfinished, status=409, ticked=form.confirmed()
        )
    except ValidationError as exc:
        if hasattr(exc, "error_dict"):
            # Work left unfinished since the page was read: its confirmation, beside it.
            unfinished = release.release_unfinished(cycle=cycle)
            fresh = ReleaseForm(request.POST, unfinished=unfinished)
            fresh.is_valid()
            for name, errors in exc.message_dict.items():
                if name in fresh.fields and name not in fresh.errors:
                    fresh.add_error(name, errors)
            return _release_page(request, membership, cycle, unfinished, status=400, form=fresh)
        _refused(request, exc)
    else:
        if released:
            messages.success(
                request,
                _(
                    "Released: the XP is in the ledger, the results are on the players' "
                    "results pages, and one summary e-mail per player is on its way."
                ),
            )
        else:
            messages.info(request, _("The results of this cycle are already released."))
    return redirect(_page_url(slug, cycle))


# --- XP report ---------------------------------------------------------------------------------


def _csv_cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (a character named "=HYPERLINK(…)")
    is quoted; numbers stay numbers."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _xp_csv(cycle: Cycle, rows: list[dict[str, Any]]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"{cycle.chronicle.slug}-game-{cycle.game.number}-xp.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.writer(response)
    writer.writerow([str(label) for _, label in CSV_COLUMNS])
    for row in rows:
        writer.writerow([_csv_cell(row[key]) for key, _ in CSV_COLUMNS])
    return response


@login_required
@require_GET
def xp_report(request: HttpRequest, slug: str, number: int, as_csv: bool = False) -> HttpResponse:
    """Every XP line of the cycle, grouped: the release's (the same entries and total as the
    release plan: `release.xp_statement`), then each group of ledger entries of the cycle
    outside the release with its subtotal. `?format=csv` (or xp.csv) downloads it."""
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    if as_csv or request.GET.get("format") == "csv":
        return _xp_csv(cycle, pipeline.xp_report(cycle=cycle))
    statement = release.xp_statement(cycle=cycle)
    return chronicle_page(
        request,
        "downtimes/xp_report.html",
        membership,
        cycle=cycle,
        statement=statement,
        lines=sum(group.count for group in statement.groups),
    )


@login_required
@require_GET
def xp_report_pdf(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """The XP report as a PDF (issue 17): the same statement, groups and subtotals as the page,
    for the same readers (staff)."""
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    statement = release.xp_statement(cycle=cycle)
    return pdf_response(
        request,
        "downtimes/xp_report_pdf.html",
        membership,
        filename=pdf_filename(slug, "game", cycle.game.number, "xp"),
        cycle=cycle,
        statement=statement,
        lines=sum(group.count for group in statement.groups),
        now=timezone.now(),
    )


# --- The player's results ----------------------------------------------------------------------


@login_required
@require_GET
def results(request: HttpRequest, slug: str) -> HttpResponse:
    """The released results the player reads, newest cycle first: the outcomes, each action's
    written result from the storytellers, and links to their downtimes and searches
    (`downtimes.services.results.results_of`: four queries after the membership)."""
    membership = chronicle_access.membership_for(request.user, slug)
    user = chronicle_access.acting_user(request.user)
    return chronicle_page(
        request,
        "downtimes/results.html",
        membership,
        cycles=player_results.results_of(user=user, chronicle_id=membership.chronicle_id),
    )


urlpatterns = [
    path("resolution/", cycle_resolution_list, name="cycle_resolution_list"),
    path("resolution/<int:number>/", cycle_resolution, name="cycle_resolution"),
    path("resolution/<int:number>/progress/", cycle_progress, name="cycle_progress"),
    path("resolution/<int:number>/close/", cycle_close, name="cycle_resolution_close"),
    path("resolution/<int:number>/resolve/", cycle_resolve, name="cycle_resolve"),
    path("resolution/<int:number>/release/", cycle_release, name="cycle_release"),
    path(
        "resolution/<int:number>/outcomes/<int:pk>/override/",
        outcome_override,
        name="outcome_override",
    ),
    path(
        "resolution/<int:number>/outcomes/<int:pk>/override/remove/",
        outcome_override_remove,
        name="outcome_override_remove",
    ),
    path("resolution/<int:number>/xp/", xp_report, name="cycle_xp_report"),
    path(
        "resolution/<int:number>/xp.csv",
        xp_report,
        {"as_csv": True},
        name="cycle_xp_report_csv",
    ),
    path("resolution/<int:number>/xp.pdf", xp_report_pdf, name="cycle_xp_report_pdf"),
    path("results/", results, name="results"),
]
