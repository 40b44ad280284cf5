"""The storytellers' records on one character: a page of small forms, one per action (BLD, BND,
XP-04..07, TOR, ITM, SEW, MSC). Players never reach it: 404 for another's character, 403 for
their own."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from chronicle import access as chronicle_access
from chronicle.models import Cycle, Membership
from chronicle.views import chronicle_page

from .. import access
from ..forms.staff import ACTION_FORMS, ActionContext, ActionForm
from ..models import (
    Bond,
    Captivity,
    Character,
    Item,
    KnownSewerLocation,
    RegnantRequest,
    SewerLocation,
    StoredBlood,
    Title,
    XpEntry,
)

TEMPLATE = "characters/staff_actions.html"


def _htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


def action_context(membership: Membership, character: Character) -> ActionContext:
    """Every choice the forms offer, one query per list (the page's cost does not grow with
    the chronicle)."""
    chronicle = membership.chronicle
    entries: list[XpEntry] = []
    if character.player_id is not None:
        entries = list(
            access.ledger_visible_to(membership, character.player_id)
            .filter(reversed_by__isnull=True)
            .exclude(kind="reversal")
            .order_by("-created_at", "-pk")[:50]
        )
    return ActionContext(
        character=character,
        characters=list(
            access.characters_visible_to(membership).only("pk", "name", "chronicle_id")
        ),
        stored_blood=list(StoredBlood.objects.filter(holder=character, expired_at__isnull=True)),
        items=list(Item.objects.filter(character=character)),
        captivities=list(Captivity.objects.filter(captive=character, resolved_at__isnull=True)),
        requests=list(
            RegnantRequest.objects.filter(thrall=character, dropped_at__isnull=True).select_related(
                "regnant"
            )
        ),
        titles=list(Title.objects.filter(character=character)),
        known_locations=list(
            KnownSewerLocation.objects.filter(
                character=character, forgotten_on__isnull=True
            ).select_related("location")
        ),
        sewer_locations=list(SewerLocation.objects.filter(chronicle=chronicle)),
        cycles=list(
            Cycle.objects.filter(chronicle=chronicle)
            .select_related("game")
            .order_by("-deadline_at")
        ),
        entries=entries,
        bonds=list(
            Bond.objects.filter(Q(thrall=character) & Q(ended_on__isnull=True)).select_related(
                "regnant"
            )
        ),
    )


def _render(
    request: HttpRequest,
    membership: Membership,
    context: ActionContext,
    *,
    bound: ActionForm | None = None,
    status: int = 200,
) -> HttpResponse:
    forms = [
        bound if bound is not None and bound.slug == slug else form(context=context)
        for slug, form in ACTION_FORMS.items()
    ]
    for form in forms:
        if form.slug == "note" and not form.is_bound:
            form.initial = {"notes": context.character.st_notes}
    page: dict[str, Any] = {"character": context.character, "forms": forms, "ctx": context}
    if bound is not None and _htmx(request):
        return chronicle_page(
            request, f"{TEMPLATE}#action-form", membership, form=bound, status=status, **page
        )
    return chronicle_page(request, TEMPLATE, membership, status=status, **page)


@login_required
@require_GET
def character_actions(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for_staff(membership, pk)
    return _render(request, membership, action_context(membership, character))


@login_required
@require_POST
def character_action(request: HttpRequest, slug: str, pk: int, action: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for_staff(membership, pk)
    form_class = ACTION_FORMS.get(action)
    if form_class is None:
        raise Http404(_("No such action."))
    context = action_context(membership, character)
    form = form_class(request.POST, context=context)
    if form.is_valid():
        try:
            done = form.run(by=chronicle_access.acting_user(request.user), now=timezone.now())
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            if _htmx(request):
                fresh = action_context(membership, character)
                again = form_class(context=fresh)
                if again.slug == "note":
                    again.initial = {"notes": character.st_notes}
                return chronicle_page(
                    request,
                    f"{TEMPLATE}#action-form",
                    membership,
                    form=again,
                    done=done,
                    character=character,
                )
            messages.success(request, done)
            return redirect("character_actions", slug=slug, pk=pk)
    return _render(request, membership, context, bound=form, status=400)
