"""Decisions by two thirds (GEN-03 / GEN-04): the list, a new proposal, one decision with its
vote. Thin: access decides who sees what, the governance service writes and decides."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from .. import access, rules
from ..forms.governance import ProposalForm, VoteForm
from ..models import DecisionStatus, Membership
from ..services import governance
from . import chronicle_page
from .people import _refused, _status

CLOSED_SHOWN = 100


@login_required
def decision_list(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    now = timezone.now()
    # Votes whose deadline passed close before they are listed (the beat task may be behind).
    governance.proposals_close_due(chronicle=membership.chronicle, now=now)
    visible = access.proposals_visible_to(membership)
    open_rows = list(visible.filter(status=DecisionStatus.OPEN).order_by("closes_at", "pk"))
    closed_rows = list(
        visible.exclude(status=DecisionStatus.OPEN).order_by("-closed_at", "-pk")[:CLOSED_SHOWN]
    )
    voted = governance.voted_on(membership, open_rows)
    return chronicle_page(
        request,
        "chronicle/decisions_list.html",
        membership,
        open_rows=[(p, p.pk in voted, access.may_vote_on(membership, p)) for p in open_rows],
        closed_rows=closed_rows,
        body=access.body_of(membership),
    )


def _members(membership: Membership) -> list[Membership]:
    """Whom a proposal may name: every member of the chronicle (a player proposing a removal
    under GEN-04 needs the names, though not the roster's details)."""
    return list(
        Membership.objects.filter(chronicle=membership.chronicle)
        .select_related("user")
        .order_by("role", "user__username")
    )


@login_required
@require_http_methods(["GET", "POST"])
def decision_new(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    body = access.body_of(membership)
    form = ProposalForm(
        request.POST if request.method == "POST" else None,
        body=body,
        members=_members(membership),
        default_days=membership.chronicle.house_rules.decision_vote_days,
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            proposal = governance.proposal_open(
                membership=membership,
                body=body,
                kind=data["kind"],
                target_user_id=data.get("target"),
                setting_name=data.get("setting_name", ""),
                setting_value=data.get("setting_value", ""),
                text=data.get("text", ""),
                days=data["days"],
            )
        except ValidationError as exc:
            _refused(form, exc)
        else:
            messages.success(request, _("The vote is open; the voters have been told."))
            return redirect("decision_detail", slug=slug, proposal_id=proposal.pk)
    return chronicle_page(
        request,
        "chronicle/decisions_new.html",
        membership,
        form=form,
        body=body,
        status=_status(request, form),
    )


@login_required
@require_http_methods(["GET", "POST"])
def decision_detail(request: HttpRequest, slug: str, proposal_id: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    proposal = governance.proposal_refresh(access.proposal_for(membership, proposal_id))
    may_vote = proposal.is_open and access.may_vote_on(membership, proposal)
    form = VoteForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and not proposal.is_open:
        # Closed meanwhile (perhaps by this very request): the result is what there is to see.
        messages.error(request, _("This vote has closed; votes are no longer taken."))
        return redirect("decision_detail", slug=slug, proposal_id=proposal.pk)
    if request.method == "POST" and form.is_valid():
        try:
            governance.ballot_cast(
                membership=membership, proposal=proposal, yes=form.cleaned_data["vote"] == "yes"
            )
        except ValidationError as exc:
            _refused(form, exc)
        else:
            messages.success(
                request, _("Your vote is recorded. You may change it until the close.")
            )
            return redirect("decision_detail", slug=slug, proposal_id=proposal.pk)
    own = governance.own_ballot(membership, proposal) if may_vote else None
    if own is not None and not form.is_bound:
        form = VoteForm(initial={"vote": "yes" if own.yes else "no"})
    eligible = (
        access.voters_of(membership.chronicle, proposal.body).count()
        if proposal.is_open
        else proposal.eligible_count or 0
    )
    return chronicle_page(
        request,
        "chronicle/decisions_detail.html",
        membership,
        proposal=proposal,
        may_vote=may_vote,
        own=own,
        form=form,
        eligible=eligible,
        needed=rules.supermajority_needed(eligible) if eligible else 0,
        who_voted=governance.voters_who_voted(proposal),
        status=_status(request, form),
    )
