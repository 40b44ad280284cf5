"""XP purchases in play (XP-01): the player's form with its live preview, the ST queue and
sign-off, and the player's withdrawal. Thin: access → form → service → page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chronicle import access as chronicle_access
from chronicle.views import chronicle_page

from .. import access, selectors
from ..forms.purchases import DecisionForm, PurchaseForm, field_for
from ..models import PurchaseStatus
from ..services import purchases as services


def _show_errors(form: Form, exc: ValidationError) -> None:
    """Each service problem beside its field; the rest above the form."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for name, errors in exc.message_dict.items():
        form.add_error(field_for(form, name), errors)


@login_required
@require_http_methods(["GET", "POST"])
def purchase_create(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for_owner(membership, pk)
    form = PurchaseForm(request.POST or None, character=character, membership=membership)
    quote = None
    if request.method == "POST" and form.is_valid():
        try:
            purchase = services.purchase_request(
                character=character,
                by=chronicle_access.acting_user(request.user),
                note=form.cleaned_data.get("note") or "",
                **form.service_kwargs(),
            )
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            messages.success(
                request,
                _("Asked for %(purchase)s (%(cost)s XP); it waits for an ST's sign-off.")
                % {"purchase": services.describe(purchase), "cost": purchase.cost},
            )
            return redirect("character_sheet", slug=slug, pk=character.pk)
    if form.is_bound and form.is_valid():
        quote = services.purchase_quote(
            character=character, staff=form.staff, **form.service_kwargs()
        )
    status = 400 if request.method == "POST" else 200
    return chronicle_page(
        request,
        "characters/purchase_form.html",
        membership,
        character=character,
        form=form,
        quote=quote,
        status=status,
    )


@login_required
@require_GET
def purchase_preview(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """htmx: the cost and every rule problem as the player types; writes nothing."""
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for_owner(membership, pk)
    form = PurchaseForm(request.GET, character=character, membership=membership)
    quote = None
    if form.is_valid():
        quote = services.purchase_quote(
            character=character, staff=form.staff, **form.service_kwargs()
        )
    return chronicle_page(
        request,
        "characters/purchase_form.html#preview",
        membership,
        character=character,
        form=form,
        quote=quote,
    )


@login_required
@require_GET
def purchase_queue(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    lines = selectors.purchase_queue_for(membership)
    return chronicle_page(request, "characters/purchase_queue.html", membership, lines=lines)


@login_required
@require_http_methods(["GET", "POST"])
def purchase_decide(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    purchase = access.purchase_for(membership, pk)
    chronicle_access.require_staff(membership)
    form = DecisionForm(request.POST or None, purchase=purchase, membership=membership)
    if request.method == "POST" and form.is_valid():
        by = chronicle_access.acting_user(request.user)
        try:
            if form.cleaned_data["decision"] == "approve":
                services.purchase_approve(
                    purchase=purchase, by=by, teacher=form.cleaned_data.get("teacher")
                )
                done = _("Purchase approved: %(purchase)s.")
            else:
                services.purchase_reject(purchase=purchase, by=by, note=form.cleaned_data["note"])
                done = _("Purchase rejected: %(purchase)s.")
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            messages.success(request, done % {"purchase": services.describe(purchase)})
            return redirect("purchase_queue", slug=slug)
    quote = None
    if purchase.status == PurchaseStatus.REQUESTED:
        quote = services.purchase_requote(purchase=purchase, teacher=purchase.teacher)
    return chronicle_page(
        request,
        "characters/purchase_decide.html",
        membership,
        purchase=purchase,
        description=services.describe(purchase),
        quote=quote,
        form=form,
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def diablerie_step_decline(
    request: HttpRequest, slug: str, pk: int, diablerie_id: int
) -> HttpResponse:
    """XP-05: the player declines a queued generation step; other purchases may then go
    ahead. A plain form post, so it works without JavaScript."""
    membership = chronicle_access.membership_for(request.user, slug)
    diablerie = access.own_diablerie_for(membership, pk, diablerie_id)
    try:
        services.diablerie_step_decline(
            diablerie=diablerie, by=chronicle_access.acting_user(request.user)
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request,
            _("Declined the generation step from the diablerie of %(victim)s (XP-05).")
            % {"victim": diablerie.victim_name},
        )
    return redirect("character_sheet", slug=slug, pk=pk)


@login_required
@require_POST
def purchase_withdraw(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    purchase = access.purchase_for(membership, pk)
    try:
        services.purchase_withdraw(purchase=purchase, by=chronicle_access.acting_user(request.user))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request, _("Withdrawn: %(purchase)s.") % {"purchase": services.describe(purchase)}
        )
    return redirect("character_sheet", slug=slug, pk=purchase.character_id)
