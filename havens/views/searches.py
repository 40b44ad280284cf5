"""Searches, influence attacks, reinforcement attacks and hidden objects (HAV-25b..26, HID):
the player's search page, the storytellers' cycle desk, the reinforcement-attack page and the
hidden-object registry. Thin: access → form → service → page.

HAV-04: a player's page shows their searches, the locations they found once released and the
fate of their attacks; never a structure's name, attributes, hiding points, owners, or how
many havens a search tested."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from characters.models import INFLUENCE_CHOICES
from characters.services.influence import influence_left
from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.models import Game, Membership
from chronicle.services import current_downtime
from chronicle.views import chronicle_page

from .. import access
from ..forms import searches as forms
from ..models import (
    AttackStatus,
    HiddenObject,
    HiddenObjectSearch,
    ReinforcementAttack,
    Search,
    Searcher,
    SearchResult,
    SearchStatus,
)
from ..services import searches as services
from ..words import translated


def _show_errors(form: Form, exc: ValidationError, rename: dict[str, str] | None = None) -> None:
    """Each service problem beside its field (`rename`: service name → form field); the rest
    above the form."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for name, errors in exc.message_dict.items():
        name = (rename or {}).get(name, name)
        form.add_error(name if name in form.fields else None, errors)


def _game(membership: Membership, number: int) -> Game:
    if not 0 < number <= MAX_ID:
        raise Http404(_("No such game."))
    game = (
        Game.objects.filter(chronicle=membership.chronicle, number=number)
        .select_related("cycle")
        .first()
    )
    if game is None or not hasattr(game, "cycle"):
        raise Http404(_("No such game."))
    return game


# --- The player's page --------------------------------------------------------------------------


def _player_context(membership: Membership, **forms_given: Any) -> dict[str, Any]:
    characters = list(forms.own_active_characters(membership))
    own_ids = {c.pk for c in characters}
    cycle = current_downtime(membership.chronicle)
    labels = {kind: str(label) for kind, label in INFLUENCE_CHOICES}
    left = (
        [
            (
                c,
                [
                    (labels.get(k, k), n)
                    for k, n in influence_left(character=c, cycle=cycle).items()
                ],
            )
            for c in characters
        ]
        if cycle is not None
        else []
    )
    searches = list(
        access.searches_visible_to(membership)
        .select_related("cycle__game")
        .prefetch_related(
            # Co-searchers are counted, never named: only ids and points are loaded.
            Prefetch(
                "searchers",
                queryset=Searcher.objects.only("pk", "search_id", "character_id", "points"),
            )
        )
        .order_by("-created_at", "-pk")
    )
    found: dict[int, list[str]] = defaultdict(list)
    for search_id, location in SearchResult.objects.filter(
        search__in=[s.pk for s in searches], found=True, search__released_at__isnull=False
    ).values_list("search_id", "structure__location"):
        found[search_id].append(location)
    names = {c.pk: c.name for c in characters}
    rows = []
    for search in searches:
        mine = [s for s in search.searchers.all() if s.character_id in own_ids]
        rows.append(
            {
                "search": search,
                "mine": [(names[s.character_id], s.points, s.character_id) for s in mine],
                "searcher_count": len(search.searchers.all()),
                "found": found.get(search.pk, []),
            }
        )
    finds = list(
        access.finds_visible_to(membership)
        .filter(cleared_at__isnull=True, character_id__in=own_ids)
        .select_related("structure", "character")
        .order_by("pk")
    )
    attacks = [
        (attack, services.attack_outcome_for_attacker(attack))
        for attack in access.influence_attacks_visible_to(membership)
        .select_related("structure", "attacker", "cycle")
        .order_by("-created_at", "-pk")
    ]
    return {
        "characters": characters,
        "cycle": cycle,
        "left": left,
        "rows": rows,
        "finds": finds,
        "attacks": attacks,
        "search_form": forms_given.get("search_form") or forms.SearchForm(membership=membership),
        "join_form": forms_given.get("join_form")
        or forms.JoinForm(membership=membership, auto_id="join_%s"),
        "attack_form": forms_given.get("attack_form")
        or forms.AttackForm(membership=membership, auto_id="attack_%s"),
    }


def _list_page(
    request: HttpRequest, membership: Membership, *, status: int = 200, **forms_given: Any
) -> HttpResponse:
    context = _player_context(membership, **forms_given)
    if chronicle_access.is_staff(membership):
        context["games"] = Game.objects.filter(chronicle=membership.chronicle).order_by("-date")
    return chronicle_page(request, "havens/search_list.html", membership, status=status, **context)


@login_required
@require_GET
def search_list(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    return _list_page(request, membership)


@login_required
@require_POST
def search_create(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    form = forms.SearchForm(request.POST, membership=membership)
    if form.is_valid():
        data = form.cleaned_data
        try:
            search = services.search_submit(
                character=data["character"],
                target_name=data["target_name"],
                influence=data["influence"],
                points=data["points"],
                by=chronicle_access.acting_user(request.user),
                key=f"page:{data['key']}",
            )
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            messages.success(
                request,
                _(
                    "Search for %(name)s filed; share the code %(code)s with anyone who "
                    "searches with you."
                )
                % {"name": search.target_name, "code": search.party_code},
            )
            return redirect("search_list", slug=slug)
    return _list_page(request, membership, status=400, search_form=form)


@login_required
@require_POST
def search_join(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    form = forms.JoinForm(request.POST, membership=membership, auto_id="join_%s")
    if form.is_valid():
        data = form.cleaned_data
        try:
            search = services.search_join(
                party_code=data["party_code"],
                character=data["character"],
                influence=data["influence"],
                points=data["points"],
                by=chronicle_access.acting_user(request.user),
                key=f"page:{data['key']}",
            )
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            messages.success(
                request, _("Joined the search for %(name)s.") % {"name": search.target_name}
            )
            return redirect("search_list", slug=slug)
    return _list_page(request, membership, status=400, join_form=form)


@login_required
@require_POST
def search_withdraw(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    search = access.search_for(membership, pk)
    mine = access.own_characters(membership).filter(
        pk__in=Searcher.objects.filter(search=search).values("character_id")
    )
    by = chronicle_access.acting_user(request.user)
    try:
        for character in mine:
            services.search_withdraw(search=search, character=character, by=by)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Withdrawn; your influence was given back."))
    return redirect("search_list", slug=slug)


@login_required
@require_POST
def attack_create(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    form = forms.AttackForm(request.POST, membership=membership, auto_id="attack_%s")
    if form.is_valid():
        data = form.cleaned_data
        find = data["find"]
        try:
            services.influence_attack_submit(
                attacker=find.character,
                structure=find.structure_id,
                influence=data["influence"],
                points=data["points"],
                by=chronicle_access.acting_user(request.user),
                key=f"page:{data['key']}",
            )
        except ValidationError as exc:
            _show_errors(form, exc, {"structure": "find"})
        else:
            messages.success(
                request, _("Influence attack filed; its outcome comes at the next game.")
            )
            return redirect("search_list", slug=slug)
    return _list_page(request, membership, status=400, attack_form=form)


@login_required
@require_POST
def attack_withdraw(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    if not 0 < pk <= MAX_ID:
        raise Http404(_("No such attack."))
    attack = access.influence_attacks_visible_to(membership).filter(pk=pk).first()
    if attack is None:
        raise Http404(_("No such attack."))
    try:
        services.influence_attack_withdraw(
            attack=attack, by=chronicle_access.acting_user(request.user)
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Attack withdrawn; your influence was given back."))
    return redirect("search_list", slug=slug)


# --- The storytellers' cycle desk ---------------------------------------------------------------


def _desk_page(
    request: HttpRequest,
    membership: Membership,
    game: Game,
    *,
    status: int = 200,
    at_game_form: forms.AtGameSearchForm | None = None,
) -> HttpResponse:
    cycle = game.cycle
    house = membership.chronicle.house_rules
    searches = list(
        Search.objects.filter(cycle=cycle)
        .select_related("target", "created_by")
        .prefetch_related(
            Prefetch("searchers", queryset=Searcher.objects.select_related("character"))
        )
        .order_by("created_at", "pk")
    )
    pending = [s for s in searches if s.status == SearchStatus.SUBMITTED]
    preview = services.search_outcomes(pending, house_rules=house)
    results: dict[int, list[SearchResult]] = defaultdict(list)
    for result in SearchResult.objects.filter(search__cycle=cycle).select_related("structure"):
        results[result.search_id].append(result)
    attacks = list(
        access.influence_attacks_visible_to(membership)
        .filter(cycle=cycle)
        .select_related("attacker", "structure")
        .order_by("created_at", "pk")
    )
    arithmetic = services.influence_attack_preview(
        [a for a in attacks if a.status == AttackStatus.SUBMITTED], house_rules=house
    )
    characters = list(forms.chronicle_characters(membership).order_by("name"))
    rows = [
        {
            "search": s,
            "searchers": list(s.searchers.all()),
            "spent": sum(x.points for x in s.searchers.all()),
            "preview": preview.get(s.pk, []),
            "results": results.get(s.pk, []),
        }
        for s in searches
    ]
    return chronicle_page(
        request,
        "havens/search_desk.html",
        membership,
        status=status,
        game=game,
        cycle=cycle,
        rows=rows,
        attacks=[(a, arithmetic.get(a.pk) or translated(a.explanation)) for a in attacks],
        characters=characters,
        at_game_form=at_game_form or forms.AtGameSearchForm(membership=membership),
    )


@login_required
@require_GET
def search_desk(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    return _desk_page(request, membership, _game(membership, number))


@login_required
@require_POST
def search_release(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    game = _game(membership, number)
    done = services.search_results_release(cycle=game.cycle)
    messages.success(
        request,
        _("Released searches: %(searches)s; attacks: %(attacks)s.")
        % {"searches": done["searches"], "attacks": done["attacks"]},
    )
    return redirect("search_desk", slug=slug, number=number)


@login_required
@require_POST
def search_link(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    search = access.search_for(membership, pk)
    form = forms.LinkForm(request.POST, membership=membership)
    number = search.cycle.game.number
    if not form.is_valid():
        messages.error(request, _("Pick a character to link."))
        return redirect("search_desk", slug=slug, number=number)
    try:
        services.search_target_link(
            search=search,
            target=form.cleaned_data["target"],
            by=chronicle_access.acting_user(request.user),
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request, _("Linked the search for %(name)s.") % {"name": search.target_name}
        )
    return redirect("search_desk", slug=slug, number=number)


@login_required
@require_POST
def search_at_game(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    game = _game(membership, number)
    form = forms.AtGameSearchForm(request.POST, membership=membership)
    if form.is_valid():
        try:
            search = services.search_at_game_record(
                game=game,
                target=form.cleaned_data["target"],
                searchers=form.searchers(),
                by=chronicle_access.acting_user(request.user),
                key=f"page:{form.cleaned_data['key']}",
            )
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            found = SearchResult.objects.filter(search=search, found=True).count()
            messages.success(
                request,
                ngettext(
                    "Search at the game recorded: %(found)s haven found, released at once.",
                    "Search at the game recorded: %(found)s havens found, released at once.",
                    found,
                )
                % {"found": found},
            )
            return redirect("search_desk", slug=slug, number=number)
    return _desk_page(request, membership, game, status=400, at_game_form=form)


# --- Reinforcement attacks (HAV-26) -------------------------------------------------------------


def _preview(form: forms.ReinforcementForm, membership: Membership) -> dict[str, Any] | None:
    # The live preview sends the fields as typed; only the write needs the form's key.
    form.is_valid()
    if set(form.errors) - {"key"} or "structure" not in form.cleaned_data:
        return None
    levels = [level for _, _, level in form.attacker_rows()]
    if not levels:
        return None
    try:
        return services.reinforcement_attack_preview(
            structure=form.cleaned_data["structure"],
            potence_levels=levels,
            house_rules=membership.chronicle.house_rules,
        )
    except ValidationError as exc:
        _show_errors(form, exc)
        return None


@login_required
@require_http_methods(["GET", "POST"])
def reinforcement_attack(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    form = forms.ReinforcementForm(request.POST or None, membership=membership)
    if request.method == "POST" and form.is_valid():
        game = form.cleaned_data["game"]
        if game is None:
            form.add_error("game", _("Pick the game the attack happened at (HAV-26)."))
        else:
            try:
                attack = services.reinforcement_attack_record(
                    structure=form.cleaned_data["structure"],
                    game=game,
                    attackers=[
                        services.AttackerEntry(character=c, name=n, potence=lv)
                        for c, n, lv in form.attacker_rows()
                    ],
                    results=form.results(),
                    by=chronicle_access.acting_user(request.user),
                    key=f"page:{form.cleaned_data['key']}",
                    note=form.cleaned_data.get("note") or "",
                )
            except ValidationError as exc:
                _show_errors(form, exc)
            else:
                fired = services.alarm_firings_of(attack)
                figures = {
                    "bid": attack.bid,
                    "reinforcement": attack.reinforcement,
                    "fired": len(fired),
                    "causes": ", ".join(f.get_cause_display().lower() for f in fired) or _("none"),
                }
                messages.success(
                    request,
                    (
                        _(
                            "Recorded: bid %(bid)s against %(reinforcement)s; penetrated, "
                            "reinforcement breached. Alarms fired: %(fired)s (%(causes)s)."
                        )
                        if attack.penetrated
                        else _(
                            "Recorded: bid %(bid)s against %(reinforcement)s; held. Alarms "
                            "fired: %(fired)s (%(causes)s)."
                        )
                    )
                    % figures,
                )
                return redirect("reinforcement_attack", slug=slug)
    preview = _preview(form, membership) if form.is_bound else None
    recent = (
        ReinforcementAttack.objects.filter(structure__chronicle=membership.chronicle)
        .select_related("structure", "game")
        .order_by("-recorded_at", "-pk")[:20]
    )
    return chronicle_page(
        request,
        "havens/reinforcement_attack.html",
        membership,
        form=form,
        preview=preview,
        recent=recent,
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_GET
def reinforcement_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """htmx: bid, reinforcement, what holding on ties takes and the TST-01 class."""
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    form = forms.ReinforcementForm(request.GET, membership=membership)
    return chronicle_page(
        request,
        "havens/reinforcement_preview.html",
        membership,
        form=form,
        preview=_preview(form, membership),
    )


# --- Objects hidden on site (HID) ---------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def hidden_registry(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    objects = access.hidden_objects_visible_to(membership)
    form = forms.HiddenRegisterForm(request.POST or None, membership=membership)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            services.hidden_object_register(
                chronicle=membership.chronicle,
                hider=data["hider"],
                description=data["description"],
                place=data.get("place") or "",
                obfuscate_bid=data["obfuscate_bid"],
                number=data["number"],
                game=data.get("game"),
                by=chronicle_access.acting_user(request.user),
                key=f"page:{data['key']}",
            )
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            messages.success(
                request, _("Registered under number %(number)s.") % {"number": data["number"]}
            )
            return redirect("hidden_registry", slug=slug)
    return chronicle_page(
        request,
        "havens/hidden_registry.html",
        membership,
        form=form,
        objects=objects.select_related("hider", "found_by").order_by("number", "pk"),
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def hidden_remove(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    if not 0 < pk <= MAX_ID:
        raise Http404(_("No such object."))
    obj = access.hidden_objects_visible_to(membership).filter(pk=pk).first()
    if obj is None:
        raise Http404(_("No such object."))
    services.hidden_object_remove(obj=obj, by=chronicle_access.acting_user(request.user))
    messages.success(request, _("Removed from the registry."))
    return redirect("hidden_registry", slug=slug)


@login_required
@require_http_methods(["GET", "POST"])
def hidden_search(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    form = forms.HiddenSearchForm(request.POST or None, membership=membership)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            record = services.hidden_object_search(
                searcher=data["searcher"],
                number=data["number"],
                game=data.get("game"),
                by=chronicle_access.acting_user(request.user),
                key=f"page:{data['key']}",
            )
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            return redirect("hidden_search_tests", slug=slug, pk=record.pk)
    recent = (
        HiddenObjectSearch.objects.filter(chronicle=membership.chronicle)
        .select_related("searcher")
        .order_by("-recorded_at", "-pk")[:20]
    )
    return chronicle_page(
        request,
        "havens/hidden_search.html",
        membership,
        form=form,
        recent=recent,
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def hidden_search_tests(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    if not 0 < pk <= MAX_ID:
        raise Http404(_("No such search."))
    record = (
        HiddenObjectSearch.objects.filter(chronicle=membership.chronicle, pk=pk)
        .select_related("searcher")
        .first()
    )
    if record is None:
        raise Http404(_("No such search."))
    form = forms.HiddenWinsForm(request.POST or None, record=record)
    if request.method == "POST" and form.is_valid():
        services.hidden_object_search(
            searcher=record.searcher,
            number=record.number,
            by=chronicle_access.acting_user(request.user),
            key=record.key,
            won=form.won(),
        )
        messages.success(request, _("Tests recorded."))
        return redirect("hidden_search_tests", slug=slug, pk=pk)
    objects = {
        o.pk: o
        for o in HiddenObject.objects.filter(
            pk__in=[row["object"] for row in record.results]
        ).select_related("found_by")
    }
    rows = []
    for row in record.results:
        name = f"won_{row['object']}"
        rows.append((row, objects.get(row["object"]), form[name] if name in form.fields else None))
    return chronicle_page(
        request, "havens/hidden_search_tests.html", membership, record=record, rows=rows, form=form
    )


urlpatterns = [
    path("searches/", search_list, name="search_list"),
    path("searches/new/", search_create, name="search_create"),
    path("searches/join/", search_join, name="search_join"),
    path("searches/<int:pk>/withdraw/", search_withdraw, name="search_withdraw"),
    path("searches/<int:pk>/link/", search_link, name="search_link"),
    path("searches/attacks/new/", attack_create, name="attack_create"),
    path("searches/attacks/<int:pk>/withdraw/", attack_withdraw, name="attack_withdraw"),
    path("searches/cycle/<int:number>/", search_desk, name="search_desk"),
    path("searches/cycle/<int:number>/release/", search_release, name="search_release"),
    path("searches/cycle/<int:number>/at-game/", search_at_game, name="search_at_game"),
    path("reinforcement/", reinforcement_attack, name="reinforcement_attack"),
    path("reinforcement/preview/", reinforcement_preview, name="reinforcement_preview"),
    path("hidden/", hidden_registry, name="hidden_registry"),
    path("hidden/<int:pk>/remove/", hidden_remove, name="hidden_remove"),
    path("hidden/search/", hidden_search, name="hidden_search"),
    path("hidden/search/<int:pk>/", hidden_search_tests, name="hidden_search_tests"),
]
