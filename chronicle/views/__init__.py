"""HTML pages of the chronicle app: thin, through access.py and services.py only."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from .. import access, services
from ..api_errors import json_error
from ..celery import app as celery_app
from ..dashboard import cards_for as dashboard_cards
from ..forms import GameForm, HouseRulesForm, sign_in_lines
from ..rules import HOUSE_RULE_FIELDS
from ..services.people import may_start_chronicle
from ..services.settings import chronicle_house_rule_reset


def chronicle_page(
    request: HttpRequest, template: str, membership: Any, *, status: int = 200, **context: Any
) -> HttpResponse:
    """Render a page of one chronicle: every such page knows the membership, the chronicle and
    whether the viewer is staff (the header and the templates' staff-only parts use them)."""
    context |= {
        "membership": membership,
        "chronicle": membership.chronicle,
        "is_staff": access.is_staff(membership),
    }
    # Every moment on the page shows in the chronicle's zone (the `when` filter reads it).
    with timezone.override(membership.chronicle.tz):
        return render(request, template, context, status=status)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    memberships = list(access.memberships_of(request.user))
    if len(memberships) == 1:
        return redirect("dashboard", slug=memberships[0].chronicle.slug)
    return render(
        request,
        "chronicle/switcher.html",
        {"memberships": memberships, "may_start": may_start_chronicle(request.user)},
    )


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    """What to do next, per role: each app's cards (chronicle.dashboard)."""
    membership = access.membership_for(request.user, slug)
    cards = dashboard_cards(membership, timezone.now())
    return chronicle_page(request, "chronicle/dashboard.html", membership, cards=cards)


@login_required
def game_list(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    games = access.games_visible_to(membership).order_by("date", "number")
    today = services.chronicle_today(membership.chronicle, timezone.now())
    return chronicle_page(
        request,
        "chronicle/game_list.html",
        membership,
        games=games,
        today=today,
    )


@login_required
@require_http_methods(["GET", "POST"])
def game_create(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    access.require_staff(membership)
    form = GameForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            game = services.game_create(chronicle=membership.chronicle, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, services.game_created_text(game, timezone.now()))
            return redirect("game_detail", slug=slug, number=game.number)
    status = 400 if request.method == "POST" else 200
    return chronicle_page(request, "chronicle/game_form.html", membership, form=form, status=status)


@login_required
def game_detail(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    game = access.game_for(membership, number)
    return chronicle_page(
        request,
        "chronicle/game_detail.html",
        membership,
        game=game,
        cycle=game.cycle,
        attendance=list(access.attendance_visible_to(membership, game)),
    )


@login_required
@require_http_methods(["GET", "POST"])
def game_edit(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    game = access.game_for_edit(membership, number)
    form = GameForm(request.POST or None, instance=game)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            services.game_update(
                game=game,
                date=data["date"],
                start_time=data["start_time"],
                place=data["place"],
                notes=data["notes"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Game %(number)s saved.") % {"number": game.number})
            return redirect("game_detail", slug=slug, number=game.number)
    return chronicle_page(
        request,
        "chronicle/game_form.html",
        membership,
        form=form,
        game=game,
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def game_sign_in(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """The sign-in sheet of a game: an ST ticks who came and who signed the waiver."""
    membership = access.membership_for(request.user, slug)
    game = access.game_for_edit(membership, number)
    players = list(access.players_of(membership).order_by("user__username"))
    ids = [m.user_id for m in players]
    saved = {a.player_id: a.waiver_signed for a in access.attendance_visible_to(membership, game)}
    # The boxes as drawn, and the saved state each row was drawn from ("was-<id>": attended and
    # waiver as two digits); only the ST's changes against the latter are written.
    ticked = {pid: (pid in saved, saved.get(pid, False)) for pid in ids}
    shown = {pid: f"{pid in saved:d}{saved.get(pid, False):d}" for pid in ids}
    error = ""
    status = 200
    if request.method == "POST":
        lines = sign_in_lines(request.POST, ids)
        try:
            services.attendance_record(game=game, lines=lines, by=access.acting_user(request.user))
        except ValidationError as exc:
            error = " ".join(exc.messages)
            status = 400
            # Keep what the ST ticked, and the state it was ticked against, for the retry.
            post = request.POST
            ticked = {pid: (f"attended-{pid}" in post, f"waiver-{pid}" in post) for pid in ids}
            shown = {pid: post.get(f"was-{pid}", shown[pid]) for pid in ids}
        else:
            messages.success(
                request, _("Sign-in sheet of game %(number)s saved.") % {"number": game.number}
            )
            return redirect("game_sign_in", slug=slug, number=number)
    rows = [
        {
            "player": m.user,
            "attended": ticked[m.user_id][0],
            "waiver": ticked[m.user_id][1],
            "shown": shown[m.user_id],
        }
        for m in players
    ]
    return chronicle_page(
        request,
        "chronicle/sign_in.html",
        membership,
        game=game,
        rows=rows,
        error=error,
        status=status,
    )


@login_required
def cycle_list(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    return chronicle_page(
        request,
        "chronicle/cycle_list.html",
        membership,
        cycles=access.cycles_visible_to(membership).order_by("-deadline_at"),
    )


@login_required
def cycle_detail(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    cycle = access.cycle_for(membership, number)
    return chronicle_page(
        request,
        "chronicle/cycle_detail.html",
        membership,
        cycle=cycle,
        now=timezone.now(),
    )


@login_required
@require_POST
def cycle_close(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    cycle = access.cycle_for_edit(membership, number)
    if services.cycle_close(cycle=cycle, by=access.acting_user(request.user)):
        messages.success(request, _("The cycle is closed; submissions are locked."))
    else:
        messages.info(request, _("This cycle was already closed."))
    return redirect("cycle_detail", slug=slug, number=number)


@login_required
@require_http_methods(["GET", "POST"])
def house_rules(request: HttpRequest, slug: str) -> HttpResponse:
    """The chronicle's house-rule settings (every INTERPRETATION of SPEC), for its admins,
    grouped by section of the rules, each changed one marked with a reset to its default."""
    membership = access.membership_for(request.user, slug)
    access.require_admin(membership)
    chronicle = membership.chronicle
    form = HouseRulesForm(request.POST or None, current=chronicle.house_rules)
    if request.method == "POST" and form.is_valid():
        try:
            services.chronicle_house_rules_update(chronicle=chronicle, overrides=form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("House rules saved."))
            return redirect("house_rules", slug=slug)
    return chronicle_page(
        request,
        "chronicle/house_rules.html",
        membership,
        form=form,
        sections=form.sections(),
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def house_rule_reset(request: HttpRequest, slug: str) -> HttpResponse:
    """Put one setting (`setting`) back to the rules' default; admins only, like the page."""
    membership = access.membership_for(request.user, slug)
    access.require_admin(membership)
    name = request.POST.get("setting", "")
    try:
        reset = chronicle_house_rule_reset(chronicle=membership.chronicle, name=name)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("house_rules", slug=slug)
    label = _(HOUSE_RULE_FIELDS[name].metadata["label"])
    if reset:
        messages.success(request, _("“%(label)s” is back to its default.") % {"label": label})
    else:
        messages.info(request, _("“%(label)s” already had its default.") % {"label": label})
    return redirect(f"{reverse('house_rules', args=[slug])}#setting-{name}")


@require_GET
@never_cache
def health(request: HttpRequest) -> JsonResponse:
    """Liveness of the two things the app cannot work without; 503 if either is down."""
    report: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        report["database"] = "ok"
    except Exception as exc:  # any failure means "down"; say which
        report["database"] = f"error: {type(exc).__name__}"
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        report["broker"] = "ok"
    except Exception as exc:
        report["broker"] = f"error: {type(exc).__name__}"
    healthy = all(value == "ok" for value in report.values())
    return JsonResponse(
        {"status": "ok" if healthy else "error", **report}, status=200 if healthy else 503
    )


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _wants_json(request):
        return json_error(request, "not_found", _("Not found."), 404)
    return render(request, "404.html", status=404)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    message = str(exception) if exception and str(exception) else _("You may not do this.")
    if _wants_json(request):
        return json_error(request, "permission_denied", message, 403)
    return render(request, "403.html", {"message": message}, status=403)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _wants_json(request):
        return json_error(request, "bad_request", _("The request could not be understood."), 400)
    return render(request, "400.html", status=400)


def server_error(request: HttpRequest) -> HttpResponse:
    if _wants_json(request):
        return json_error(request, "server_error", _("Something went wrong on our side."), 500)
    return render(request, "500.html", status=500)


def api_not_found(request: HttpRequest, rest: str) -> JsonResponse:
    return json_error(request, "not_found", _("No such endpoint."), 404)
