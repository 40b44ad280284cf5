"""The vote tally (DT-06..09, admins), the game-report picks (DT-05, storytellers) and the
published reports (every member). Thin: access → form → service → page.

Votes are secret: only admins see the tally (storytellers get 403, players too; strangers to
the chronicle 404). Players only ever see the sanitized text the STs chose to publish, without
its author."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.models import Cycle, CycleStatus, Membership
from chronicle.views import chronicle_page

from ..forms.votes import CyclePickForm, ReportPickForm
from ..models import ReportPick, Submission, SubmissionStatus
from ..services import votes as services


def _cycles(membership: Membership) -> list[Cycle]:
    return list(chronicle_access.cycles_visible_to(membership).order_by("-game__date", "-pk"))


def _picked_cycle(request: HttpRequest, membership: Membership) -> tuple[list[Cycle], Cycle | None]:
    """The cycles for the picker and the one asked for (`?cycle=<game number>`); by default
    the latest whose voting is over (not open), else the latest. An unknown number is 404."""
    cycles = _cycles(membership)
    form = CyclePickForm(request.GET)
    if not form.is_valid():
        raise Http404(gettext("No such cycle."))
    number = form.cleaned_data["cycle"]
    if number is not None:
        chosen = next((c for c in cycles if c.game.number == number), None)
        if chosen is None:
            raise Http404(gettext("No such cycle."))
        return cycles, chosen
    done = [c for c in cycles if c.status != CycleStatus.OPEN]
    default = done or cycles
    return cycles, default[0] if default else None


@login_required
@require_GET
def vote_tally(request: HttpRequest, slug: str) -> HttpResponse:
    """DT-06..09: each category's tally, winners and ties, the awards and the top two."""
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_admin(membership)
    cycles, cycle = _picked_cycle(request, membership)
    tally = services.tally_for(cycle=cycle) if cycle is not None else None
    return chronicle_page(
        request,
        "downtimes/vote_tally.html",
        membership,
        cycles=cycles,
        cycle=cycle,
        tally=tally,
    )


# --- Game-report picks (DT-05) ---------------------------------------------------------------


def _reports(cycle: Cycle) -> QuerySet[Submission]:
    return (
        Submission.objects.filter(cycle=cycle, status=SubmissionStatus.SUBMITTED)
        .exclude(game_report="")
        .select_related("character", "player", "report_pick")
        .order_by("character__name", "pk")
    )


def _submission(membership: Membership, pk: int) -> Submission:
    """A submission of the member's chronicle (staff only reach here), or 404."""
    if not 0 < pk <= MAX_ID:
        raise Http404(gettext("No such downtime."))
    submission = (
        Submission.objects.filter(pk=pk, cycle__chronicle=membership.chronicle)
        .select_related("cycle__game", "report_pick")
        .first()
    )
    if submission is None:
        raise Http404(gettext("No such downtime."))
    return submission


def _picks_page(
    request: HttpRequest,
    membership: Membership,
    cycles: list[Cycle],
    cycle: Cycle | None,
    bound: dict[int, ReportPickForm] | None = None,
    status: int = 200,
) -> HttpResponse:
    rows: list[dict[str, Any]] = []
    limit = membership.chronicle.house_rules.game_report_picks
    if cycle is not None:
        for submission in _reports(cycle):
            pick = getattr(submission, "report_pick", None)
            form = (bound or {}).get(submission.pk) or (
                ReportPickForm(
                    initial={"sanitized_text": pick.sanitized_text, "published": pick.published},
                    prefix=f"s{submission.pk}",
                )
                if pick is not None
                else None
            )
            rows.append({"submission": submission, "pick": pick, "form": form})
    picked = sum(1 for row in rows if row["pick"] is not None)
    return chronicle_page(
        request,
        "downtimes/report_picks.html",
        membership,
        status=status,
        cycles=cycles,
        cycle=cycle,
        rows=rows,
        picked=picked,
        limit=limit,
        full=picked >= limit,
    )


@login_required
@require_GET
def report_picks(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    cycles, cycle = _picked_cycle(request, membership)
    return _picks_page(request, membership, cycles, cycle)


def _back(slug: str, submission: Submission) -> HttpResponse:
    return redirect(f"{reverse('report_picks', args=[slug])}?cycle={submission.cycle.game.number}")


@login_required
@require_POST
def report_pick(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    submission = _submission(membership, pk)
    try:
        services.report_pick(submission=submission, by=chronicle_access.acting_user(request.user))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request,
            gettext("Picked %(name)s's game report.") % {"name": submission.character.name},
        )
    return _back(slug, submission)


@login_required
@require_POST
def report_unpick(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    submission = _submission(membership, pk)
    pick = getattr(submission, "report_pick", None)
    if pick is not None:
        try:
            services.report_unpick(pick=pick, by=chronicle_access.acting_user(request.user))
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(
                request,
                gettext("Unpicked %(name)s's game report.") % {"name": submission.character.name},
            )
    return _back(slug, submission)


@login_required
@require_http_methods(["POST"])
def report_pick_edit(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    submission = _submission(membership, pk)
    pick = getattr(submission, "report_pick", None)
    if pick is None:
        messages.error(
            request, gettext("This report is not picked (any more); pick it first (DT-05).")
        )
        return _back(slug, submission)
    form = ReportPickForm(request.POST, prefix=f"s{submission.pk}")
    if form.is_valid():
        try:
            services.report_pick_update(
                pick=pick,
                by=chronicle_access.acting_user(request.user),
                sanitized_text=form.cleaned_data["sanitized_text"],
                published=form.cleaned_data["published"],
            )
        except ValidationError as exc:
            for name, errors in getattr(exc, "message_dict", {None: exc.messages}).items():
                form.add_error(name if name in form.fields else None, errors)
        else:
            messages.success(
                request,
                gettext("Saved the sanitized text of %(name)s.")
                % {"name": submission.character.name},
            )
            return _back(slug, submission)
    # Re-render with what was typed kept and the refusal beside its field.
    return _picks_page(
        request,
        membership,
        _cycles(membership),
        submission.cycle,
        bound={submission.pk: form},
        status=400,
    )


@login_required
@require_GET
def report_list(request: HttpRequest, slug: str) -> HttpResponse:
    """DT-05: the published sanitized reports, newest game first, for every member."""
    membership = chronicle_access.membership_for(request.user, slug)
    picks = (
        ReportPick.objects.filter(cycle__chronicle=membership.chronicle, published=True)
        .exclude(sanitized_text="")
        .select_related("cycle__game")
        .order_by("-cycle__game__date", "pk")
    )
    return chronicle_page(request, "downtimes/report_list.html", membership, picks=picks)


urlpatterns = [
    path("votes/", vote_tally, name="vote_tally"),
    path("votes/reports/", report_picks, name="report_picks"),
    path("votes/reports/<int:pk>/pick/", report_pick, name="report_pick"),
    path("votes/reports/<int:pk>/unpick/", report_unpick, name="report_unpick"),
    path("votes/reports/<int:pk>/edit/", report_pick_edit, name="report_pick_edit"),
    path("reports/", report_list, name="report_list"),
]
