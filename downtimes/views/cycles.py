"""The between-games pipeline's pages (issue 6, DT-10): the storytellers' resolution page of a
cycle (close, resolve, the progress bar, the preview with its overrides, the release), the XP
report with its CSV, and the player's results page.

Storytellers and admins only, like the desk: a player gets 403 on every resolution page, a
stranger to the chronicle 404. The results page is every member's own: it lists only the
released outcomes the player reads (`pipeline.results_for`), and only what the player may
read of them (`public_text`, never the STs' `explanation` or `title`).

The chronicle app owns `cycles/<number>/` (the members' page of a cycle), so these pages live
under `resolution/`; the API mirrors them under /api/chronicles/<slug>/resolution/.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.models import Cycle, CycleStatus, Membership
from chronicle.views import chronicle_page

from ..forms.cycles import OutcomeOverrideForm, ReleaseConfirmForm
from ..models import Outcome, OutcomeOverride, Submission
from ..selectors import progress_by_cycle, release_plan_key
from ..services import pipeline
from ..services.steps import OUTCOME_POSITION, outcome_step_order

CSV_COLUMNS = [
    ("player", "Player"),
    ("character", "Character"),
    ("xp", "XP"),
    ("reason", "Reason"),
    ("kind", "Kind"),
    ("note", "Override note"),
]


def _staff(request: HttpRequest, slug: str) -> Membership:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    return membership


def _cycle(membership: Membership, number: int) -> Cycle:
    return chronicle_access.cycle_for(membership, number)


def _outcome(cycle: Cycle, pk: int) -> Outcome:
    if not 0 < pk <= MAX_ID:
        raise Http404("No such outcome.")
    outcome = Outcome.objects.filter(cycle=cycle, pk=pk).first()
    if outcome is None:
        raise Http404("No such outcome.")
    return outcome


def _page_url(slug: str, cycle: Cycle, anchor: str = "") -> str:
    url = reverse("cycle_resolution", args=[slug, cycle.game.number])
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


def _page_context(
    membership: Membership,
    cycle: Cycle,
    step: str,
    bound: dict[int, OutcomeOverrideForm] | None = None,
) -> dict[str, Any]:
    """The cycle's page: status, progress, and the preview grouped by step in DT-10 order.

    Queries (whatever the number of outcomes): the latest run and its chunk counts
    (`run_progress`, 2), the outcomes with their player and character (1), the overrides with
    their author (1), the outcomes per step (1)."""
    progress = pipeline.run_progress(cycle=cycle)
    outcomes = pipeline.outcomes_for(cycle=cycle)
    if step:
        outcomes = outcomes.filter(step=step)
    overrides = pipeline.overrides_for(cycle=cycle)
    counts = dict(
        Outcome.objects.filter(cycle=cycle)
        .values_list("step")
        .annotate(n=Count("pk"))
        .order_by()
        .values_list("step", "n")
    )
    editable = cycle.status != CycleStatus.RELEASED
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for outcome in outcomes:
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
    groups = [
        {"name": name, "label": label, "rows": grouped.get(name, []), "count": counts.get(name, 0)}
        for name, label in outcome_step_order()
        if not step or name == step
    ]
    return {
        "cycle": cycle,
        "progress": progress,
        "groups": groups,
        "step": step,
        "steps": [(name, label, counts.get(name, 0)) for name, label in outcome_step_order()],
        "outcome_total": sum(counts.values()),
        "editable": editable,
    }


def _override_initial(override: OutcomeOverride | None) -> dict[str, Any]:
    if override is None:
        return {}
    found = "" if override.found is None else ("yes" if override.found else "no")
    return {"xp": override.xp, "found": found, "note": override.note}


def _step(request: HttpRequest) -> str:
    step = request.GET.get("step", "")
    if step and step not in OUTCOME_POSITION:
        raise Http404("No such step.")
    return step


@login_required
@require_GET
def cycle_resolution(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    context = _page_context(membership, cycle, _step(request))
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
            messages.success(request, "The cycle is closed; submissions are locked (DT-10).")
        else:
            messages.info(request, "This cycle was already closed.")
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
            f"Resolution {run.number} started: the steps run in DT-10 order and the preview "
            "appears here when they are done.",
        )
    return redirect(_page_url(slug, cycle, "progress"))


@login_required
@require_POST
def outcome_override(request: HttpRequest, slug: str, number: int, pk: int) -> HttpResponse:
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    outcome = _outcome(cycle, pk)
    form = OutcomeOverrideForm(request.POST, outcome=outcome)
    if not outcome.overridable:
        messages.error(request, "This outcome cannot be overridden; change its inputs instead.")
        return redirect(_page_url(slug, cycle, f"outcome-{outcome.pk}"))
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
                return redirect(_page_url(slug, cycle, f"outcome-{outcome.pk}"))
            for name, errors in exc.message_dict.items():
                form.add_error(name if name in form.fields else None, errors)
        else:
            messages.success(request, f"Override saved: {outcome.title}.")
            return redirect(_page_url(slug, cycle, f"outcome-{outcome.pk}"))
    # The page again, with what was typed kept and each refusal beside its field.
    context = _page_context(membership, cycle, "", bound={outcome.pk: form})
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
            messages.success(request, f"Override removed: {outcome.title} is as computed.")
        else:
            messages.info(request, "This outcome had no override.")
    return redirect(_page_url(slug, cycle, f"outcome-{outcome.pk}"))


# --- Release -----------------------------------------------------------------------------------


def _release_page(
    request: HttpRequest, membership: Membership, cycle: Cycle, status: int = 200
) -> HttpResponse:
    plan = pipeline.release_plan(cycle=cycle)
    run, key = release_plan_key(cycle, plan)
    return chronicle_page(
        request,
        "downtimes/cycle_release.html",
        membership,
        status=status,
        cycle=cycle,
        plan=plan,
        form=ReleaseConfirmForm(initial={"run": run, "plan": key}),
        ready=(
            cycle.status == CycleStatus.RESOLVED and not pipeline.run_progress(cycle=cycle).running
        ),
    )


@login_required
@require_http_methods(["GET", "POST"])
def cycle_release(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """GET: what the release will do, to confirm. POST: release the preview the ST confirmed;
    if it changed since they read it (another ST re-resolved or overrode), show it again."""
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    if request.method == "GET":
        return _release_page(request, membership, cycle)
    if cycle.status == CycleStatus.RELEASED:
        messages.info(request, "The results of this cycle are already released.")
        return redirect(_page_url(slug, cycle))
    form = ReleaseConfirmForm(request.POST)
    run, key = release_plan_key(cycle, pipeline.release_plan(cycle=cycle))
    if not form.is_valid() or (form.cleaned_data["run"], form.cleaned_data["plan"]) != (run, key):
        messages.error(
            request,
            "The preview changed since this confirmation was shown (or it was not shown): read "
            "what the release will do again before releasing.",
        )
        return _release_page(request, membership, cycle, status=409)
    try:
        released = pipeline.cycle_release(
            cycle=cycle, by=chronicle_access.acting_user(request.user), expected_key=(run, key)
        )
    except pipeline.PreviewChanged as exc:
        _refused(request, exc)
        return _release_page(request, membership, cycle, status=409)
    except ValidationError as exc:
        _refused(request, exc)
    else:
        if released:
            messages.success(
                request,
                "Released: the XP is in the ledger, the results are on the players' results "
                "pages, and one summary e-mail per player is on its way.",
            )
        else:
            messages.info(request, "The results of this cycle are already released.")
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
    writer.writerow([label for _, label in CSV_COLUMNS])
    for row in rows:
        writer.writerow([_csv_cell(row[key]) for key, _ in CSV_COLUMNS])
    return response


@login_required
@require_GET
def xp_report(request: HttpRequest, slug: str, number: int, as_csv: bool = False) -> HttpResponse:
    """Every XP line of the cycle with its reason: the ledger once released, the preview (with
    overrides) before. `?format=csv` (or xp.csv) downloads it."""
    membership = _staff(request, slug)
    cycle = _cycle(membership, number)
    rows = pipeline.xp_report(cycle=cycle)
    if as_csv or request.GET.get("format") == "csv":
        return _xp_csv(cycle, rows)
    total = sum((row["xp"] or Decimal(0) for row in rows), Decimal(0))
    return chronicle_page(
        request,
        "downtimes/xp_report.html",
        membership,
        cycle=cycle,
        rows=rows,
        total=total,
        players=len({row["player"] for row in rows}),
    )


# --- The player's results ----------------------------------------------------------------------


@login_required
@require_GET
def results(request: HttpRequest, slug: str) -> HttpResponse:
    """The released outcomes the player reads, newest cycle first; with links to the released
    results of their downtime's actions (desk items) and to their searches.

    Queries after the membership: the outcomes (1), the overrides of their cycles (1, for the
    same words the summary e-mail used), the player's submissions of those cycles (1)."""
    membership = chronicle_access.membership_for(request.user, slug)
    user = chronicle_access.acting_user(request.user)
    outcomes = list(
        pipeline.results_for(user=user).filter(cycle__chronicle_id=membership.chronicle_id)
    )
    overrides: dict[int, dict[tuple[str, str], OutcomeOverride]] = defaultdict(dict)
    for override in OutcomeOverride.objects.filter(cycle_id__in={o.cycle_id for o in outcomes}):
        overrides[override.cycle_id][(override.step, override.subject)] = override
    submissions: dict[int, list[Submission]] = defaultdict(list)
    for submission in (
        Submission.objects.filter(cycle__chronicle_id=membership.chronicle_id, player=user)
        .filter(cycle__status=CycleStatus.RELEASED)
        .select_related("character", "cycle__game")
        .order_by("character__name", "pk")
    ):
        submissions[submission.cycle_id].append(submission)
    labels = dict(outcome_step_order())
    by_cycle: dict[int, dict[str, Any]] = {}
    for outcome in outcomes:
        entry = by_cycle.setdefault(
            outcome.cycle_id,
            {"cycle": outcome.cycle, "lines": [], "submissions": submissions[outcome.cycle_id]},
        )
        entry["lines"].append(
            {
                "label": labels.get(outcome.step, outcome.step),
                "character": outcome.character,
                # The summary e-mail's own words (an XP override and its note included), so the
                # page and the mail never disagree.
                "text": pipeline.public_line(outcome, overrides[outcome.cycle_id]),
            }
        )
    # A released cycle with a downtime but no outcome read still links to its desk results.
    for cycle_id, subs in submissions.items():
        if cycle_id not in by_cycle:
            by_cycle[cycle_id] = {"cycle": subs[0].cycle, "lines": [], "submissions": subs}
    cycles = sorted(by_cycle.values(), key=lambda e: e["cycle"].deadline_at, reverse=True)
    return chronicle_page(request, "downtimes/results.html", membership, cycles=cycles)


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
    path("results/", results, name="results"),
]
