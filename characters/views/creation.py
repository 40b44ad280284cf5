"""The creation wizard (CRE-01..09): create, edit with live checks, submit, and the ST review.

Thin: access function, form shape, service, render. The freebie total and every rule problem
come from `creation_quote`; the htmx check swaps them in beside their sections, and the same
boxes are drawn on a plain page load, so Save shows the same problems without JavaScript.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_http_methods, require_POST

from chronicle import access as chronicle_access
from chronicle.models import Membership
from chronicle.views import chronicle_page

from .. import access
from ..forms.creation import CreationForm, ReturnForm, initial_from
from ..models import Approval, Character
from ..services import creation, rebuild
from ..services.creation import Draft, Quote

TEMPLATE = "characters/creation_form.html"
SUBMITTED = gettext_noop("%(name)s is submitted; a storyteller will review it.")
# The wizard's problem boxes, in page order; a key without a box (the services' "__all__")
# goes to "general" at the top.
SECTIONS = (
    "general",
    "name",
    "creature",
    "clan",
    "chosen_disciplines",
    "clan_bonus",
    "sect",
    "protean_form",
    "feeding_demographic",
    "embrace_earth",
    "physical",
    "abilities",
    "willpower",
    "influences",
    "disciplines",
    "disadvantages",
    "generation",
    "sewer_lore",
    "freebies",
    "background_questionnaire",
)


def _problems(quote: Quote | None, extra: dict[str, list[str]] | None = None) -> dict[str, Any]:
    found: dict[str, list[str]] = {}
    for source in (quote.problems if quote else {}, extra or {}):
        for key, messages_ in source.items():
            found.setdefault(key if key in SECTIONS else "general", []).extend(messages_)
    return {"problems": found, "checks": [(key, found.get(key, [])) for key in SECTIONS]}


def _wizard(
    request: HttpRequest,
    membership: Membership,
    form: CreationForm,
    *,
    character: Character | None,
    quote: Quote | None,
    extra: dict[str, list[str]] | None = None,
    status: int = 200,
) -> HttpResponse:
    editable = character is None or character.approval in creation.EDITABLE
    return chronicle_page(
        request,
        TEMPLATE,
        membership,
        form=form,
        character=character,
        quote=quote,
        editable=editable,
        freebies=quote.freebies if quote else None,
        rebuild=rebuild.rebuild_for(character),
        status=status,
        **_problems(quote, extra),
    )


def _quote_of(form: CreationForm, membership: Membership) -> Quote | None:
    """The quote of what the form holds, or None while its shape is wrong."""
    if not form.is_valid():
        return None
    try:
        return creation.creation_quote(
            form.to_draft(), house_rules=membership.chronicle.house_rules
        )
    except ValidationError as exc:
        _add_errors(form, exc)
        return None


def _saved_quote(character: Character, membership: Membership) -> Quote:
    # The membership already holds the chronicle; the character's would be one more query.
    house_rules = membership.chronicle.house_rules
    return creation.creation_quote(Draft.from_character(character), house_rules=house_rules)


def _add_errors(
    form: CreationForm, exc: ValidationError, shown: Quote | None = None
) -> dict[str, list[str]]:
    """Put a service's refusal beside the form's fields; section-level keys (the quote's, like
    "abilities") are returned for the problem boxes. Problems the `shown` quote already draws
    in its boxes are not repeated."""
    sections: dict[str, list[str]] = {}
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc)
        return sections
    for key, all_errors in exc.message_dict.items():
        drawn = shown.problems.get(key, []) if shown else []
        errors = [error for error in all_errors if error not in drawn]
        if not errors:
            continue
        if key in form.fields:
            form.add_error(key, errors)
        else:
            sections[key] = list(errors)
    return sections


@login_required
@require_http_methods(["GET", "POST"])
def character_create(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    form = CreationForm(request.POST or None, initial={"generation": 13, "creature": "kindred"})
    if request.method == "POST" and form.is_valid():
        player = chronicle_access.acting_user(request.user)
        try:
            character = creation.character_draft_create(
                chronicle=membership.chronicle, player=player, draft=form.to_draft()
            )
        except ValidationError as exc:
            extra = _add_errors(form, exc)
            return _wizard(
                request, membership, form, character=None, quote=None, extra=extra, status=400
            )
        messages.success(request, _("Draft of %(name)s saved.") % {"name": character.name})
        if request.POST.get("action") == "submit":
            _try_submit(request, character, player)
        return redirect("character_edit", slug=slug, pk=character.pk)
    status = 400 if request.method == "POST" else 200
    quote = _quote_of(form, membership) if form.is_bound else None
    return _wizard(request, membership, form, character=None, quote=quote, status=status)


@login_required
@require_POST
def character_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Throw a draft away (its player or an ST): it frees a place under the open-drafts limit."""
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for(membership, pk)
    try:
        creation.character_draft_delete(
            character=character, by=chronicle_access.acting_user(request.user)
        )
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
        return redirect("character_edit", slug=slug, pk=pk)
    messages.success(request, _("Draft of %(name)s deleted.") % {"name": character.name})
    return redirect("dashboard", slug=slug)


def _try_submit(request: HttpRequest, character: Character, by: Any) -> bool:
    try:
        creation.character_submit(character=character, by=by)
    except ValidationError:
        messages.error(request, _("Saved as a draft: fix the problems shown before submitting."))
        return False
    messages.success(request, _(SUBMITTED) % {"name": character.name})
    return True


@login_required
@require_http_methods(["GET", "POST"])
def character_edit(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for(membership, pk)
    if request.method == "GET":
        draft = Draft.from_character(character)
        form = CreationForm(initial=initial_from(draft))
        saved = _saved_quote(character, membership)
        return _wizard(request, membership, form, character=character, quote=saved)
    form = CreationForm(request.POST)
    quote = _quote_of(form, membership)
    if form.is_valid():
        try:
            creation.character_draft_update(
                character=character,
                by=chronicle_access.acting_user(request.user),
                draft=form.to_draft(),
            )
        except ValidationError as exc:
            extra = _add_errors(form, exc)
        else:
            messages.success(request, _("Draft saved."))
            return redirect("character_edit", slug=slug, pk=pk)
    else:
        extra = {}
    return _wizard(
        request, membership, form, character=character, quote=quote, extra=extra, status=400
    )


@login_required
@require_POST
def character_submit(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Save what the form holds and send it to the STs; a second click on a submitted character
    changes nothing (the service is idempotent)."""
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for(membership, pk)
    by = chronicle_access.acting_user(request.user)
    form = CreationForm(request.POST)
    extra: dict[str, list[str]] = {}
    if character.approval not in creation.EDITABLE:
        creation.character_submit(character=character, by=by)
        return redirect("character_edit", slug=slug, pk=pk)
    quote = _quote_of(form, membership)
    if form.is_valid():
        try:
            character = creation.character_draft_update(
                character=character, by=by, draft=form.to_draft()
            )
            creation.character_submit(character=character, by=by)
        except ValidationError as exc:
            extra = _add_errors(form, exc, shown=quote)
        else:
            messages.success(request, _(SUBMITTED) % {"name": character.name})
            return redirect("character_edit", slug=slug, pk=pk)
    return _wizard(
        request, membership, form, character=character, quote=quote, extra=extra, status=400
    )


@login_required
@require_POST
def character_check(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The live check (htmx): the running freebie total and every problem, each swapped in
    beside its section. `pk` 0 checks the create page's unsaved form."""
    membership = chronicle_access.membership_for(request.user, slug)
    character = None if pk == 0 else access.character_for(membership, pk)
    form = CreationForm(request.POST)
    quote = _quote_of(form, membership)
    # Shape errors (a letter in a number box) have no section box; list them at the top.
    shape = {
        "general": [
            f"{form[key].label}: {' '.join(str(error) for error in errors)}"
            for key, errors in form.errors.items()
            if key != "__all__"
        ]
    }
    return chronicle_page(
        request,
        f"{TEMPLATE}#checks",
        membership,
        character=character,
        quote=quote,
        freebies=quote.freebies if quote else None,
        oob=True,
        **_problems(quote, shape if shape["general"] else None),
    )


@login_required
@require_http_methods(["GET", "POST"])
def character_review(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The ST's review of a submitted character (CRE-09): approve, return with a note, or
    approve the background."""
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for_staff(membership, pk)
    return_form = ReturnForm()
    error = ""
    status = 200
    if request.method == "POST":
        by = chronicle_access.acting_user(request.user)
        action = request.POST.get("action")
        try:
            if action == "approve":
                creation.character_approve(character=character, by=by)
                messages.success(request, _("%(name)s is approved.") % {"name": character.name})
                return redirect(reverse("character_sheet", args=[slug, pk]))
            if action == "return":
                return_form = ReturnForm(request.POST)
                if return_form.is_valid():
                    creation.character_return(
                        character=character, by=by, note=return_form.cleaned_data["note"]
                    )
                    messages.success(
                        request, _("%(name)s went back to its player.") % {"name": character.name}
                    )
                    return redirect("character_review", slug=slug, pk=pk)
            elif action == "background":
                creation.background_approve(character=character, by=by)
                messages.success(request, _("Background approved."))
                return redirect("character_review", slug=slug, pk=pk)
            else:
                error = _("Choose Approve, Return to player or Approve background.")
        except ValidationError as exc:
            error = " ".join(exc.messages)
        status = 400
    draft = Draft.from_character(character)
    quote = _saved_quote(character, membership)
    return chronicle_page(
        request,
        "characters/creation_review.html",
        membership,
        character=character,
        draft=draft,
        quote=quote,
        return_form=return_form,
        error=error,
        can_approve=character.approval == Approval.SUBMITTED,
        rebuild=rebuild.rebuild_for(character),
        status=status,
        **_problems(quote),
    )
