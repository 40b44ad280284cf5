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
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from .. import access, services
from ..api_errors import json_error
from ..celery import app as celery_app
from ..dashboard import cards_for as dashboard_cards
from ..forms import GameForm, HouseRulesForm, sign_in_lines
from ..rule_changes import past_changes, upcoming_changes
from ..rules import HOUSE_RULE_FIELDS
from ..services.people import may_start_chronicle
from ..services.settings import (
    chronicle_house_rule_reset,
    house_rules_publish,
    publication_for,
)
from ..services.sign_in import default_character, sign_in_playable


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
    """The sign-in sheet of a game: an ST ticks who came, which character each played (HAV-06),
    who signed the waiver, and lets a character in with black veins showing (XP-04)."""
    membership = access.membership_for(request.user, slug)
    game = access.game_for_edit(membership, number)
    # The Profile joined: the sheet marks "age not given" (GEN-01) without a query per row.
    players = list(
        access.players_of(membership)
        .select_related("user__chronicle_profile")
        .order_by("user__username")
    )
    ids = [m.user_id for m in players]
    saved = {a.player_id: a for a in access.attendance_visible_to(membership, game)}
    playable = sign_in_playable(chronicle=membership.chronicle, player_ids=ids, day=game.date)

    def drawn(pid: int) -> dict[str, Any]:
        """A row as the saved sheet draws it: a player not signed in yet shows their only
        active character; the permit box shows the saved permission."""
        row = saved.get(pid)
        character = row.character_id if row else None
        if character is None:
            only = default_character(playable.get(pid, []))
            character = only.id if only else None
        return {
            "attended": row is not None,
            "waiver": bool(row and row.waiver_signed),
            "character": "" if character is None else str(character),
            "permit": bool(row and row.black_veins_permitted_by_id),
        }

    # The boxes as drawn, and the saved state each row was drawn from ("was-<id>": attended and
    # waiver as two digits; "was-character-<id>", "was-permit-<id>"); only the ST's changes
    # against the latter are written.
    ticked = {pid: drawn(pid) for pid in ids}
    shown = {
        pid: {
            "digits": f"{ticked[pid]['attended']:d}{ticked[pid]['waiver']:d}",
            "character": ticked[pid]["character"],
            "permit": f"{ticked[pid]['permit']:d}",
        }
        for pid in ids
    }
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
            ticked = {
                pid: {
                    "attended": f"attended-{pid}" in post,
                    "waiver": f"waiver-{pid}" in post,
                    "character": post.get(f"character-{pid}", ticked[pid]["character"]),
                    "permit": f"permit-{pid}" in post,
                }
                for pid in ids
            }
            shown = {
                pid: {
                    "digits": post.get(f"was-{pid}", shown[pid]["digits"]),
                    "character": post.get(f"was-character-{pid}", shown[pid]["character"]),
                    "permit": post.get(f"was-permit-{pid}", shown[pid]["permit"]),
                }
                for pid in ids
            }
        else:
            messages.success(
                request, _("Sign-in sheet of game %(number)s saved.") % {"number": game.number}
            )
            return redirect("game_sign_in", slug=slug, number=number)
    rows = [
        {
            "player": m.user,
            "attended": ticked[m.user_id]["attended"],
            "waiver": ticked[m.user_id]["waiver"],
            "shown": shown[m.user_id]["digits"],
            "characters": playable.get(m.user_id, []),
            "character": ticked[m.user_id]["character"],
            "shown_character": shown[m.user_id]["character"],
            # XP-04: the permit box, beside a player with a character whose black veins show.
            "veins": any(c.black_veins for c in playable.get(m.user_id, [])),
            "permit": ticked[m.user_id]["permit"],
            "shown_permit": shown[m.user_id]["permit"],
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
    """The chronicle's house-rule settings (every INTERPRETATION of SPEC), grouped by section
    of the rules, each changed one marked with a reset to its default, and the changes
    published for later games (GEN-05). Admins change them; every member reads them."""
    membership = access.membership_for(request.user, slug)
    may_edit = access.is_admin(membership)
    if request.method == "POST":
        access.require_admin(membership)
    chronicle = membership.chronicle
    now = timezone.now()
    publication = publication_for(chronicle, now=now)
    form = HouseRulesForm(
        request.POST or None,
        current=chronicle.house_rules,
        effective_games=publication.choices if publication.played else None,
        read_only=not may_edit,
    )
    if request.method == "POST" and form.is_valid():
        try:
            records = house_rules_publish(
                chronicle=chronicle,
                changes=form.setting_changes(),
                effective_game=form.cleaned_data.get("effective_game"),
                by=access.acting_user(request.user),
                now=now,
            )
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            if not records:
                messages.info(request, _("Nothing changed."))
            elif publication.played:
                messages.success(
                    request,
                    _("Published: the changes take effect from game %(number)s.")
                    % {"number": records[0].effective_game},
                )
            else:
                messages.success(request, _("House rules saved."))
            return redirect("house_rules", slug=slug)
    today = services.chronicle_today(chronicle, now)
    return chronicle_page(
        request,
        "chronicle/house_rules.html",
        membership,
        form=form,
        sections=form.sections(),
        may_edit=may_edit,
        publication=publication,
        upcoming=upcoming_changes(chronicle, today),
        past=past_changes(chronicle, today=today),
        status=400 if request.method == "POST" else 200,
    )


def _form_errors(form: Any, exc: ValidationError) -> None:
    """A service's refusal under the field it names, or above the form."""
    if hasattr(exc, "error_dict"):
        for name, errors in exc.error_dict.items():
            form.add_error(name if name in form.fields else None, errors)
    else:
        form.add_error(None, exc)


@login_required
@require_POST
def house_rule_reset(request: HttpRequest, slug: str) -> HttpResponse:
    """Put one setting (`setting`) back to the rules' default, published like any change for
    the game chosen on the page (`effective_game`, GEN-05); admins only, like saving."""
    membership = access.membership_for(request.user, slug)
    access.require_admin(membership)
    name = request.POST.get("setting", "")
    raw_game = request.POST.get("effective_game", "")
    try:
        reset = chronicle_house_rule_reset(
            chronicle=membership.chronicle,
            name=name,
            effective_game=int(raw_game) if raw_game.strip().isdigit() else None,
            by=access.acting_user(request.user),
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("house_rules", slug=slug)
    label = _(HOUSE_RULE_FIELDS[name].metadata["label"])
    if reset and raw_game.strip().isdigit():
        messages.success(
            request,
            _("“%(label)s” goes back to its default from game %(number)s.")
            % {"label": label, "number": int(raw_game)},
        )
    elif reset:
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


# Exempt: it reads and writes nothing, and a POST to an unknown API path must get the API's JSON
# 404 (as DRF's own views are exempt), not the CSRF middleware's HTML 403 (issue 16).
@csrf_exempt
def api_not_found(request: HttpRequest, rest: str) -> JsonResponse:
    return json_error(request, "not_found", _("No such endpoint."), 404)
