"""The player's downtime page (DT-01/02): pick a character, then the six sections on one page.

Every POST goes through a service and redirects back (POST-redirect-GET); a refusal re-renders
the page with the failing form bound, its errors beside the fields and what was typed kept.
The page reads only the member's own characters: another player's character or submission
answers 404 like an unknown one.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from characters.models import INFLUENCE_CHOICES, Approval, Character, InfluenceLoan, Status
from characters.services.purchases import purchase_quote
from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.forms.widgets import render_fast
from chronicle.models import Cycle, Membership
from chronicle.services import current_downtime
from chronicle.views import chronicle_page
from havens import access as havens_access
from havens.models import Structure

from .. import access
from ..forms.submissions import (
    DowntimePurchaseForm,
    InfluenceActionForm,
    LoanForm,
    PowerForm,
    TextsForm,
    VotesForm,
)
from ..models import DeskItem, ItemKind, Submission
from ..rules import CATEGORIES as VOTE_CATEGORIES
from ..services import submissions as services

TEMPLATE = "downtimes/submission_page.html"
# What the page reads of the loans (their own columns, and who lends and borrows by name).
_LOAN_FIELDS = (
    *(f.name for f in InfluenceLoan._meta.concrete_fields),
    "lender__id",
    "lender__name",
    "borrower__id",
    "borrower__name",
)
# What the page shows of a submission's items: their own columns, the haven and lender by name.
_ITEM_FIELDS = (
    *(f.name for f in DeskItem._meta.concrete_fields),
    "target_structure__id",
    "target_structure__name",
    "lender__id",
    "lender__name",
)


# --- Lookups -----------------------------------------------------------------------------------


def _own_characters(membership: Membership) -> QuerySet[Character]:
    return Character.objects.filter(
        chronicle=membership.chronicle,
        player_id=membership.user_id,
        status=Status.ACTIVE,
        approval=Approval.APPROVED,
    ).order_by("name")


def _own_character(membership: Membership, character_id: int) -> Character:
    if not 0 < character_id <= MAX_ID:
        raise Http404(gettext("No such character."))
    try:
        return _own_characters(membership).select_related("player").get(pk=character_id)
    except Character.DoesNotExist:
        raise Http404(gettext("No such character.")) from None


def _submission(character: Character, cycle: Cycle) -> Submission | None:
    submission = (
        Submission.objects.filter(character=character, cycle=cycle)
        # One query for its votes and their nominees: the ballot and its read-only view.
        .prefetch_related(services.votes_prefetch())
        .first()
    )
    if submission is not None:
        # Both are loaded already: joining them again would read their wide rows twice.
        submission.cycle = cycle
        submission.character = character
    return submission


def _context(membership: Membership, character: Character) -> dict[str, Any]:
    """The current downtime (`chronicle.services.current_downtime`, whatever its stage: a
    closed one shows read-only and says why) and where it stands."""
    now = timezone.now()
    cycle = current_downtime(membership.chronicle, now=now, open_only=False)
    if cycle is None:
        raise Http404(gettext("No downtime yet: no game has been played."))
    submission = _submission(character, cycle)
    state = services.downtime_state(cycle, now)
    closed = state != services.DowntimeState.OPEN
    remaining = 0 if closed else int((cycle.deadline_at - now).total_seconds())
    return {
        "now": now,
        "cycle": cycle,
        "character": character,
        "submission": submission,
        "state": state.value,
        "closed": closed,
        "remaining_seconds": remaining,
        "left_days": remaining // 86400,
        "left_hours": remaining % 86400 // 3600,
    }


def _edit(
    request: HttpRequest, slug: str, character_id: int
) -> tuple[Membership, Character, Submission]:
    """The submission a POST changes: the member's own, created as a draft on first use (the
    service refuses after the deadline)."""
    membership = chronicle_access.membership_for(request.user, slug)
    character = _own_character(membership, character_id)
    context = _context(membership, character)
    submission = services.submission_for_edit(
        character=character, cycle=context["cycle"], by=chronicle_access.acting_user(request.user)
    )
    return membership, character, submission


def _by_kind(items: Iterable[DeskItem]) -> dict[str, list[DeskItem]]:
    """A submission's items by section (influence, purchase, power), in their order."""
    grouped: dict[str, list[DeskItem]] = {kind: [] for kind in ItemKind.values}
    for item in items:
        grouped[item.kind].append(item)
    return grouped


def _structures_for_player(membership: Membership) -> QuerySet[Structure]:
    """The havens an action may target: the player's own and those they found, in one query
    (subqueries, not lists read first)."""
    own = havens_access.structures_visible_to(membership).values("pk")
    found = havens_access.finds_visible_to(membership).values("structure_id")
    return Structure.objects.filter(Q(pk__in=own) | Q(pk__in=found)).order_by("name")


def _lenders(character: Character, cycle: Cycle) -> QuerySet[Character]:
    return Character.objects.filter(
        pk__in=InfluenceLoan.objects.filter(
            cycle=cycle, borrower=character, withdrawn_at__isnull=True
        ).values("lender_id")
    ).order_by("name")


def _show_errors(form: Form, exc: ValidationError) -> None:
    """Each service problem beside its field; the rest above the form."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for name, errors in exc.message_dict.items():
        target = {"levels": "level", "structure": "target_structure"}.get(name, name)
        form.add_error(target if target in form.fields else None, errors)


def _render(
    request: HttpRequest,
    membership: Membership,
    character: Character,
    *,
    status: int = 200,
    **bound: Form,
) -> HttpResponse:
    context = _context(membership, character)
    submission: Submission | None = context["submission"]
    cycle: Cycle = context["cycle"]
    items: list[DeskItem] = []
    votes: dict[str, str] = {}
    picks: dict[str, int] = {}
    if submission is not None:
        items = list(
            submission.items.select_related("target_structure", "lender")
            # A row shows their names only: two whole characters and havens a row cost
            # more to build the query for than to run it.
            .only(*_ITEM_FIELDS)
            .order_by("created_at", "pk")
        )
        votes = services.vote_choices(submission)
        picks = services.vote_picks(submission)
    cast = services.cast_for(cycle)
    key = secrets.token_urlsafe(16)
    forms: dict[str, Form] = {
        "texts_form": TextsForm(
            initial={
                "notes": submission.notes if submission else "",
                "game_report": submission.game_report if submission else "",
                "version": submission.version if submission else 1,
            }
        ),
        "action_form": InfluenceActionForm(
            initial={"key": key},
            # The selects show names only; a POST cleans with the whole rows (below).
            structures=_structures_for_player(membership).only("pk", "name"),
            lenders=_lenders(character, cycle).only("pk", "name"),
        ),
        "loan_form": LoanForm(),
        "purchase_form": DowntimePurchaseForm(character=character, membership=membership),
        "power_form": PowerForm(initial={"key": key}),
        "votes_form": VotesForm(initial=picks, cast=cast, voter_id=membership.user_id),
    }
    forms.update(bound)
    render_fast(*forms.values())
    # Section 5 sits below sections 2-4 (whose forms cannot nest in the texts form) but saves
    # with it: it autosaves on its own, sending the texts form along.
    forms["texts_form"].fields["game_report"].widget.attrs.update(
        {
            "hx-post": reverse("downtime_save", args=[membership.chronicle.slug, character.pk]),
            "hx-trigger": "input changed delay:800ms",
            "hx-target": "#save-status",
            "hx-swap": "outerHTML",
            "hx-include": "#texts",
        }
    )
    labels = {name: str(label) for name, label in INFLUENCE_CHOICES}
    # One read of the cycle's loans the character borrows or lends, in their order: the
    # page's two lists and what is left to spend all come from it.
    loans = list(
        InfluenceLoan.objects.filter(Q(borrower=character) | Q(lender=character), cycle=cycle)
        .select_related("lender", "borrower")
        .only(*_LOAN_FIELDS)
    )
    return chronicle_page(
        request,
        TEMPLATE,
        membership,
        status=status,
        items_of=_by_kind(items),
        influence_left=[
            (labels.get(name, name), n)
            for name, n in services.influence_left(
                character=character, cycle=cycle, loans=loans
            ).items()
        ],
        loans_out=[loan for loan in loans if loan.borrower_id == character.pk],
        loans_in=services.loans_to_confirm(character=character, cycle=cycle, loans=loans),
        xp=services.xp_overview(character=character, chronicle=membership.chronicle),
        cast=cast,
        voter_attended=any(p.id == membership.user_id for p in cast.players),
        votes=[(VotesForm.LABELS[c], votes[c]) for c in VOTE_CATEGORIES if c in votes],
        **context,
        **forms,
    )


def refusals_shown(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A refusal no form could show (the deadline passed while the page was open) comes back
    as a message on the page, never an error page."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, slug: str, character_id: int, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, slug, character_id, **kwargs)
        except ValidationError as exc:
            text = " ".join(exc.messages)
            if request.htmx:  # type: ignore[attr-defined]
                # 200: htmx swaps no 4xx answer, and the player must read why nothing saved.
                membership = chronicle_access.membership_for(request.user, slug)
                return chronicle_page(
                    request, "downtimes/submission_saved.html", membership, error=text
                )
            messages.error(request, text)
            return redirect("downtime_character", slug=slug, character_id=character_id)

    return wrapped


def _back(slug: str, character: Character, anchor: str = "") -> HttpResponse:
    response = redirect("downtime_character", slug=slug, character_id=character.pk)
    response["Location"] += f"#{anchor}" if anchor else ""
    return response


def _section_post(
    request: HttpRequest,
    slug: str,
    membership: Membership,
    character: Character,
    form: Form,
    *,
    form_name: str,
    anchor: str,
    done: str,
    write: Callable[[Form], object],
) -> HttpResponse:
    """One section's form posted: its service writes, or the page comes back with every
    refusal beside its field and what was typed kept."""
    if form.is_valid():
        try:
            write(form)
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            messages.success(request, done)
            return _back(slug, character, anchor)
    return _render(request, membership, character, status=400, **{form_name: form})


# --- Pages -------------------------------------------------------------------------------------


@login_required
@require_GET
def downtime_home(request: HttpRequest, slug: str) -> HttpResponse:
    """Pick a character (straight to it when there is one); staff see the submissions."""
    membership = chronicle_access.membership_for(request.user, slug)
    characters = list(_own_characters(membership))
    if len(characters) == 1 and not chronicle_access.is_staff(membership):
        return _back(slug, characters[0])
    now = timezone.now()
    cycle = current_downtime(membership.chronicle, now=now, open_only=False)
    submissions: list[Submission] = []
    if chronicle_access.is_staff(membership) and cycle is not None:
        submissions = list(
            access.submissions_visible_to(membership)
            .filter(cycle=cycle)
            .select_related("character", "player")
        )
    return chronicle_page(
        request,
        "downtimes/submission_home.html",
        membership,
        characters=characters,
        cycle=cycle,
        state=services.downtime_state(cycle, now).value if cycle is not None else "",
        submissions=submissions,
    )


@login_required
@require_GET
def downtime_character(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    character = _own_character(membership, character_id)
    return _render(request, membership, character)


@login_required
@require_GET
def submission_read(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """A submission read-only: its player's or, for staff, anyone's (404 otherwise)."""
    membership = chronicle_access.membership_for(request.user, slug)
    submission = access.submission_for(membership, pk)
    votes = services.vote_choices(submission)
    return chronicle_page(
        request,
        "downtimes/submission_read.html",
        membership,
        submission=submission,
        items_of=_by_kind(
            submission.items.select_related("target_structure", "lender").order_by(
                "created_at", "pk"
            )
        ),
        votes=[(VotesForm.LABELS[c], votes[c]) for c in VOTE_CATEGORIES if c in votes],
    )


@login_required
@require_POST
@refusals_shown
def downtime_save(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    """Sections 1 and 5. htmx: answers the save status only; without JS: back to the page."""
    membership, character, submission = _edit(request, slug, character_id)
    form = TextsForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            submission = services.submission_save(
                submission=submission,
                by=chronicle_access.acting_user(request.user),
                notes=form.cleaned_data["notes"],
                game_report=form.cleaned_data["game_report"],
                version=form.cleaned_data["version"],
            )
        except ValidationError as exc:
            _show_errors(form, exc)
            error = " ".join(exc.messages)
    else:
        error = gettext("Could not save: reload the page.")
    if request.htmx:  # type: ignore[attr-defined]
        # Always 200: htmx would drop a 4xx answer and the refusal would never reach
        # #save-status; the fragment itself says nothing was saved.
        return chronicle_page(
            request,
            "downtimes/submission_saved.html",
            membership,
            submission=submission,
            error=error,
        )
    if error:
        return _render(request, membership, character, status=400, texts_form=form)
    messages.success(request, gettext("Draft saved."))
    return _back(slug, character, "texts")


@login_required
@require_POST
@refusals_shown
def downtime_submit(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    membership, character, submission = _edit(request, slug, character_id)
    form = TextsForm(request.POST)
    by = chronicle_access.acting_user(request.user)
    try:
        if form.is_valid():
            submission = services.submission_save(
                submission=submission,
                by=by,
                notes=form.cleaned_data["notes"],
                game_report=form.cleaned_data["game_report"],
                version=form.cleaned_data["version"],
            )
        services.submission_submit(submission=submission, by=by)
    except ValidationError as exc:
        _show_errors(form, exc)
        return _render(request, membership, character, status=400, texts_form=form)
    messages.success(request, gettext("Downtime submitted; a receipt is on its way by e-mail."))
    return _back(slug, character)


@login_required
@require_POST
@refusals_shown
def action_add(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    membership, character, submission = _edit(request, slug, character_id)
    form = InfluenceActionForm(
        request.POST,
        structures=_structures_for_player(membership),
        lenders=_lenders(character, submission.cycle),
    )

    def write(f: Form) -> object:
        data = f.cleaned_data
        return services.influence_action_add(
            submission=submission,
            by=chronicle_access.acting_user(request.user),
            influence=data["influence"],
            points=data["points"],
            action=data["action"],
            target_name=data["target_name"],
            target_structure=data["target_structure"],
            target_text=data["target_text"],
            description=data["description"],
            lender=data["lender"],
            key=data["key"],
        )

    return _section_post(
        request,
        slug,
        membership,
        character,
        form,
        form_name="action_form",
        anchor="influence",
        done=gettext("Influence action added."),
        write=write,
    )


@login_required
@require_POST
@refusals_shown
def item_withdraw(request: HttpRequest, slug: str, character_id: int, item_id: int) -> HttpResponse:
    membership, character, submission = _edit(request, slug, character_id)
    if not 0 < item_id <= MAX_ID:
        raise Http404(gettext("No such item."))
    item = submission.items.filter(pk=item_id).first()
    if item is None:
        raise Http404(gettext("No such item."))
    try:
        services.item_withdraw(item=item, by=chronicle_access.acting_user(request.user))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, gettext("Withdrawn."))
    return _back(slug, character)


@login_required
@require_POST
@refusals_shown
def loan_add(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    membership, character, submission = _edit(request, slug, character_id)
    return _section_post(
        request,
        slug,
        membership,
        character,
        LoanForm(request.POST),
        form_name="loan_form",
        anchor="influence",
        done=gettext("Loan asked for; it counts once the lender confirms."),
        write=lambda f: services.loan_request(
            submission=submission, by=chronicle_access.acting_user(request.user), **f.cleaned_data
        ),
    )


@login_required
@require_POST
@refusals_shown
def loan_confirm(request: HttpRequest, slug: str, character_id: int, loan_id: int) -> HttpResponse:
    membership, character, submission = _edit(request, slug, character_id)
    if not 0 < loan_id <= MAX_ID:
        raise Http404(gettext("No such loan."))
    loan = InfluenceLoan.objects.filter(pk=loan_id, lender=character).first()
    if loan is None:
        raise Http404(gettext("No such loan."))
    try:
        services.loan_confirm(loan=loan, by=chronicle_access.acting_user(request.user))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, gettext("Loan confirmed."))
    return _back(slug, character, "influence")


@login_required
@require_POST
@refusals_shown
def purchase_add(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    membership, character, submission = _edit(request, slug, character_id)
    form = DowntimePurchaseForm(request.POST, character=character, membership=membership)
    return _section_post(
        request,
        slug,
        membership,
        character,
        form,
        form_name="purchase_form",
        anchor="xp",
        done=gettext("Purchase asked for; it waits for a storyteller's sign-off."),
        write=lambda f: services.purchase_add(
            submission=submission,
            by=chronicle_access.acting_user(request.user),
            note=f.cleaned_data.get("note") or "",
            **form.service_kwargs(),
        ),
    )


@login_required
@require_GET
def purchase_preview(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    """htmx: the cost and every problem as the player types (XP-01); writes nothing."""
    membership = chronicle_access.membership_for(request.user, slug)
    character = _own_character(membership, character_id)
    form = DowntimePurchaseForm(request.GET, character=character, membership=membership)
    quote = None
    if form.is_valid():
        quote = purchase_quote(character=character, **form.service_kwargs())
    return chronicle_page(
        request,
        "characters/purchase_preview.html",
        membership,
        character=character,
        form=form,
        quote=quote,
    )


@login_required
@require_POST
@refusals_shown
def power_add(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    membership, character, submission = _edit(request, slug, character_id)
    return _section_post(
        request,
        slug,
        membership,
        character,
        PowerForm(request.POST),
        form_name="power_form",
        anchor="powers",
        done=gettext("Special power added."),
        write=lambda f: services.power_add(
            submission=submission, by=chronicle_access.acting_user(request.user), **f.cleaned_data
        ),
    )


@login_required
@require_POST
@refusals_shown
def votes_save(request: HttpRequest, slug: str, character_id: int) -> HttpResponse:
    membership, character, submission = _edit(request, slug, character_id)
    form = VotesForm(
        request.POST, cast=services.cast_for(submission.cycle), voter_id=membership.user_id
    )
    return _section_post(
        request,
        slug,
        membership,
        character,
        form,
        form_name="votes_form",
        anchor="votes",
        done=gettext("Votes saved."),
        write=lambda f: services.votes_cast(
            submission=submission, by=chronicle_access.acting_user(request.user), picks=form.picks()
        ),
    )


urlpatterns = [
    path("downtime/", downtime_home, name="downtime_home"),
    path("downtime/<int:character_id>/", downtime_character, name="downtime_character"),
    path("downtime/<int:character_id>/save/", downtime_save, name="downtime_save"),
    path("downtime/<int:character_id>/submit/", downtime_submit, name="downtime_submit"),
    path("downtime/<int:character_id>/actions/", action_add, name="downtime_action_add"),
    path(
        "downtime/<int:character_id>/items/<int:item_id>/withdraw/",
        item_withdraw,
        name="downtime_item_withdraw",
    ),
    path("downtime/<int:character_id>/loans/", loan_add, name="downtime_loan_add"),
    path(
        "downtime/<int:character_id>/loans/<int:loan_id>/confirm/",
        loan_confirm,
        name="downtime_loan_confirm",
    ),
    path("downtime/<int:character_id>/purchases/", purchase_add, name="downtime_purchase_add"),
    path(
        "downtime/<int:character_id>/purchases/preview/",
        purchase_preview,
        name="downtime_purchase_preview",
    ),
    path("downtime/<int:character_id>/powers/", power_add, name="downtime_power_add"),
    path("downtime/<int:character_id>/votes/", votes_save, name="downtime_votes_save"),
    path("downtime/submissions/<int:pk>/", submission_read, name="downtime_submission"),
]
