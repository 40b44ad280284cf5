"""Havens' ownership and construction pages (HAV-01..24): the list, the design and upgrade
forms with their live costs, the detail page and its owner actions. Thin: access → form →
service → page. A haven the viewer may not see answers 404 exactly like a missing one."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext, pgettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from characters.models import INFLUENCE_CHOICES
from characters.services.influence import influence_left
from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.models import Membership
from chronicle.services import current_downtime
from chronicle.views import chronicle_page

from .. import access, selectors
from ..forms.havens import (
    ContributeForm,
    DesignForm,
    DestroyForm,
    HandOverForm,
    ListFilterForm,
    LockTestForm,
    OwnerActionForm,
    TheftControlForm,
    UpgradeForm,
)
from ..models import (
    ATTRIBUTE_CHOICES,
    Attribute,
    ChangeKind,
    ChangeStatus,
    Contribution,
    Ownership,
    OwnershipChange,
    Project,
    ProjectStatus,
    Structure,
    StructureKind,
    StructureStatus,
)
from ..services import ownership as services
from ..services import searches


def _show_errors(form: Form, exc: ValidationError) -> None:
    """Each service problem beside its field; the rest above the form."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for name, errors in exc.message_dict.items():
        # A hidden field (the design version) shows nothing beside it: its errors go on top.
        shown = name in form.fields and not form.fields[name].widget.is_hidden
        target = name if shown else None
        if name.startswith("to_") and "to_name" in form.fields:
            target = "to_name"
        form.add_error(target, errors)


# `selectors.ownership_label` in words (HAV-02).
OWNERSHIP_LABELS = {
    "none": pgettext_lazy("ownership", "none"),
    "exclusive": pgettext_lazy("ownership", "exclusive"),
    "partial": pgettext_lazy("ownership", "partial"),
}


def _ownership_label(owner_count: int) -> str:
    return str(OWNERSHIP_LABELS[selectors.ownership_label(owner_count)])


def _labelled(amounts: dict[str, int], labels: Any) -> list[tuple[str, int]]:
    """A kind → number mapping as (label, number) pairs, for a page."""
    names = dict(labels)
    return [(str(names.get(kind, kind)), n) for kind, n in amounts.items()]


NOT_FOUND = {
    "project": gettext_noop("No such project."),
    "attribute": gettext_noop("No such attribute."),
    "crypt": gettext_noop("No such crypt."),
    "change": gettext_noop("No such change."),
}


def _one(queryset: QuerySet[Any], pk: int, what: str) -> Any:
    """`what` names the refusal in `NOT_FOUND`."""
    if not 0 < pk <= MAX_ID:
        raise Http404(_(NOT_FOUND[what]))
    found = queryset.filter(pk=pk).first()
    if found is None:
        raise Http404(_(NOT_FOUND[what]))
    return found


def _by(request: HttpRequest) -> Any:
    return chronicle_access.acting_user(request.user)


# --- List ------------------------------------------------------------------------------------


@login_required
@require_GET
def haven_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Players: their structures (owned now, or planned by them). Staff: every structure of
    the chronicle, filtered, with hiding points and the ownership changes STs must be told of
    (HAV-05). A fixed number of queries, whatever the number of structures."""
    membership = chronicle_access.membership_for(request.user, slug)
    staff = chronicle_access.is_staff(membership)
    structures = access.structures_visible_to(membership)
    filters = ListFilterForm(request.GET or None)
    if staff and filters.is_valid():
        data = filters.cleaned_data
        if data["status"]:
            structures = structures.filter(status=data["status"])
        if data["kind"]:
            structures = structures.filter(kind=data["kind"])
        if data["owner"]:
            structures = structures.filter(
                Exists(
                    Ownership.objects.filter(
                        structure=OuterRef("pk"),
                        ended_at__isnull=True,
                        character__name__icontains=data["owner"],
                    )
                )
            )
    listed = list(structures.order_by("name", "pk"))
    owners = selectors.current_owners(listed)
    attributes = selectors.built_attributes(listed)
    projects: dict[int, list[Project]] = {s.pk: [] for s in listed}
    for project in Project.objects.filter(
        structure_id__in=list(projects), status__in=[ProjectStatus.OPEN, ProjectStatus.PAID]
    ).order_by("created_at", "pk"):
        projects[project.structure_id].append(project)
    hiding = (
        selectors.hiding_points_for(listed, house_rules=membership.chronicle.house_rules)
        if staff
        else {}
    )
    rows = [
        {
            "structure": s,
            "owners": owners[s.pk],
            "label": _ownership_label(len(owners[s.pk])),
            "attributes": attributes[s.pk],
            "broken": [a for a in attributes[s.pk] if a.state != "active"],
            "projects": projects[s.pk],
            "hiding_points": hiding.get(s.pk),
        }
        for s in listed
    ]
    applied: list[OwnershipChange] = []
    if staff:
        latest = (
            OwnershipChange.objects.filter(
                structure__chronicle=membership.chronicle, status=ChangeStatus.APPLIED
            )
            .order_by("-cycle__deadline_at")
            .values("cycle_id")[:1]
        )
        applied = list(
            OwnershipChange.objects.filter(
                structure__chronicle=membership.chronicle,
                status=ChangeStatus.APPLIED,
                cycle_id__in=latest,
            )
            .select_related("structure", "from_character", "to_character", "cycle__game")
            .order_by("applied_at", "pk")
        )
    return chronicle_page(
        request,
        "havens/haven_list.html",
        membership,
        rows=rows,
        filters=filters,
        applied=applied,
    )


# --- Design and upgrade ----------------------------------------------------------------------


def _design_quote(form: DesignForm, membership: Membership) -> services.DesignQuote:
    data = getattr(form, "cleaned_data", {})
    return services.design_quote(
        chronicle=membership.chronicle,
        kind=data.get("kind") or form.data.get("kind") or "",
        attributes=form.attribute_requests(),
        outer=data.get("outer"),
    )


@login_required
@require_http_methods(["GET", "POST"])
def haven_design(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    form = DesignForm(request.POST or None, membership=membership)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            structure = services.structure_design(
                character=data["character"],
                by=_by(request),
                kind=data["kind"],
                name=data["name"],
                location=data["location"],
                description=data["description"],
                outer=data["outer"],
                attributes=form.attribute_requests(),
                key=f"page:{request.user.pk}:{data['key']}" if data.get("key") else "",
            )
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            messages.success(
                request,
                _("%(haven)s is planned: pay into it to own it.") % {"haven": structure.name},
            )
            return redirect("haven_detail", slug=slug, pk=structure.pk)
    quote = _design_quote(form, membership) if form.is_bound else None
    return chronicle_page(
        request,
        "havens/haven_form.html",
        membership,
        form=form,
        quote=quote,
        structure=None,
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def haven_check(request: HttpRequest, slug: str) -> HttpResponse:
    """htmx: each line's cost, the total and every rule problem as the player types."""
    membership = chronicle_access.membership_for(request.user, slug)
    form = DesignForm(request.POST, membership=membership)
    form.is_valid()
    return chronicle_page(
        request,
        "havens/haven_form.html#check",
        membership,
        form=form,
        quote=_design_quote(form, membership),
    )


def _upgrade_quote(form: UpgradeForm, structure: Structure) -> services.DesignQuote:
    return services.upgrade_quote(structure=structure, attributes=form.attribute_requests())


@login_required
@require_http_methods(["GET", "POST"])
def haven_upgrade(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    form = UpgradeForm(request.POST or None, membership=membership, structure=structure)
    if request.method == "POST" and form.is_valid():
        try:
            projects = services.structure_upgrade(
                structure=structure,
                character=form.cleaned_data["character"],
                by=_by(request),
                attributes=form.attribute_requests(),
                version=form.cleaned_data.get("version"),
            )
        except ValidationError as exc:
            _show_errors(form, exc)
            structure.refresh_from_db()
            if "version" in getattr(exc, "error_dict", {}):
                # Show the current design and let the next submit go through.
                data = request.POST.copy()
                data["version"] = str(structure.version)
                form.data = data
        else:
            messages.success(
                request,
                ngettext(
                    "%(count)s project added to %(haven)s.",
                    "%(count)s projects added to %(haven)s.",
                    len(projects),
                )
                % {"count": len(projects), "haven": structure.name},
            )
            return redirect("haven_detail", slug=slug, pk=structure.pk)
    return chronicle_page(
        request,
        "havens/haven_form.html",
        membership,
        form=form,
        structure=structure,
        design=_labelled(selectors.designs([structure])[structure.pk], ATTRIBUTE_CHOICES),
        quote=_upgrade_quote(form, structure) if form.is_bound else None,
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def haven_upgrade_check(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    form = UpgradeForm(request.POST, membership=membership, structure=structure)
    form.is_valid()
    return chronicle_page(
        request,
        "havens/haven_form.html#check",
        membership,
        form=form,
        structure=structure,
        quote=_upgrade_quote(form, structure),
    )


# --- Detail and the owners' actions ----------------------------------------------------------


def _owned_since(membership: Membership, structure: Structure) -> dt.datetime | None:
    """When the member's current ownership of the structure began (the earliest, with several
    characters owning it); None when none of their characters owns it now (their own plan)."""
    return (
        Ownership.objects.filter(
            structure=structure,
            ended_at__isnull=True,
            character__in=access.own_characters(membership),
        )
        .order_by("started_at")
        .values_list("started_at", flat=True)
        .first()
    )


def _detail(
    request: HttpRequest,
    membership: Membership,
    structure: Structure,
    *,
    status: int = 200,
    bound: dict[str, Form] | None = None,
) -> HttpResponse:
    staff = chronicle_access.is_staff(membership)
    bound = bound or {}
    owners = selectors.current_owners([structure])[structure.pk]
    own_ids: set[int] = (
        set(access.own_characters(membership).values_list("pk", flat=True))
        if owners or staff
        else set()
    )
    mine = owners and {c.pk for c in owners} & own_ids
    since = None if staff else _owned_since(membership, structure)
    contributions = Contribution.objects.select_related("character", "cycle__game")
    history = structure.ownerships.select_related("character").order_by("started_at", "pk")
    firings = (
        access.alarm_firings_visible_to(membership)
        .filter(alarm__structure=structure)
        .select_related("alarm", "game")
    )
    pending = structure.changes.filter(status=ChangeStatus.PENDING).select_related("from_character")
    if not staff:
        # HAV-04: a new owner (a thief, an heir) learns nothing of the haven's past: not who
        # owned it, paid into it or asked for changes before their own ownership began.
        if since is None:
            contributions = contributions.none()
            history = history.none()
            firings = firings.none()
        else:
            contributions = contributions.filter(created_at__gte=since)
            history = history.filter(Q(ended_at__isnull=True) | Q(ended_at__gt=since))
            firings = firings.filter(fired_at__gte=since)
        # A previous owner's change still waiting (it will be void) is not theirs to read.
        pending = pending.filter(
            Q(from_character__in=[c.pk for c in owners])
            | Q(from_character__isnull=True)
            | Q(kind=ChangeKind.DESTROY_CRYPT)
        )
    projects = list(
        structure.projects.exclude(status=ProjectStatus.CANCELLED)
        .select_related("repair_of")
        .prefetch_related(Prefetch("contributions", queryset=contributions))
        .order_by("-created_at", "-pk")
    )
    actor = OwnerActionForm(membership=membership, structure=structure)
    characters = list(actor.fields["character"].queryset)  # type: ignore[attr-defined]
    if staff:
        # A storyteller may act for any character, but this page gives them the storytellers'
        # tools: the owners' forms ("Transfer … As <the owner>") are for the owners' players,
        # unless a character of the storyteller's own is an owner.
        characters = [c for c in characters if c.pk in own_ids]
    owner_tools = bool(characters)
    contribute_forms = {
        p.pk: bound.get(f"contribute-{p.pk}")
        or ContributeForm(membership=membership, structure=structure, prefix=f"p{p.pk}")
        for p in projects
        if p.status == ProjectStatus.OPEN and owner_tools
    }
    cycle = current_downtime(membership.chronicle)
    left = (
        [
            (c, _labelled(influence_left(character=c, cycle=cycle), INFLUENCE_CHOICES))
            for c in characters
        ]
        if cycle
        else []
    )
    crypts: list[Structure] = []
    if structure.kind == StructureKind.OUTER and (mine or staff):
        # Owners of the outer haven know a crypt is inside, its name and its location; its
        # attributes and its owner stay secret (HAV-03, HAV-04).
        crypts = list(
            Structure.objects.filter(outer=structure)
            .exclude(status=StructureStatus.DESTROYED)
            .only("pk", "name", "location", "outer_id")
        )
    hand_over = bound.get("transfer") or HandOverForm(
        membership=membership, structure=structure, prefix="transfer"
    )
    will = bound.get("will") or HandOverForm(
        membership=membership, structure=structure, prefix="will"
    )
    context: dict[str, Any] = {
        "structure": structure,
        "owners": owners,
        "label": _ownership_label(len(owners)),
        "history": history,
        "attributes": selectors.built_attributes([structure])[structure.pk],
        "projects": projects,
        "contribute_forms": contribute_forms,
        "actor": bound.get("actor") or actor,
        "actor_choices": characters,
        "actor_selected": str(bound["actor"].data.get("character", "")) if "actor" in bound else "",
        "left": left,
        "cycle": cycle,
        "firings": firings,
        "pending": pending,
        "crypts": crypts,
        "transfer_form": hand_over,
        "will_form": will,
        "staff": staff,
        "owner_tools": owner_tools,
        "error_of": {key: form for key, form in bound.items()},
    }
    if staff:
        context["hiding_points"] = selectors.hiding_points_for(
            [structure], house_rules=membership.chronicle.house_rules
        )[structure.pk]
        context["theft_form"] = bound.get("theft") or TheftControlForm(membership=membership)
        context["destroy_form"] = bound.get("destroy") or DestroyForm()
        context["lock_test_form"] = bound.get("lock_test") or LockTestForm(
            membership=membership, structure=structure
        )
        context["applied"] = structure.changes.exclude(status=ChangeStatus.PENDING).order_by(
            "-requested_at", "-pk"
        )
    return chronicle_page(request, "havens/haven_detail.html", membership, status=status, **context)


@login_required
@require_GET
def haven_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    return _detail(request, membership, structure)


def _act(
    request: HttpRequest,
    slug: str,
    pk: int,
    *,
    form_key: str,
    make_form: Any,
    run: Any,
    done: str,
) -> HttpResponse:
    """One owner action: the structure through access (404 first, before any input is read),
    a form, a service; on a refusal the detail page with the form's errors beside its fields."""
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    form = make_form(membership, structure)
    if form.is_valid():
        try:
            run(membership, structure, form)
        except ValidationError as exc:
            _show_errors(form, exc)
        else:
            messages.success(request, done)
            return redirect("haven_detail", slug=slug, pk=structure.pk)
    return _detail(request, membership, structure, status=400, bound={form_key: form})


@login_required
@require_POST
def haven_contribute(request: HttpRequest, slug: str, pk: int, project_id: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    project: Project = _one(structure.projects.all(), project_id, "project")

    def make(m: Membership, s: Structure) -> ContributeForm:
        return ContributeForm(request.POST, membership=m, structure=s, prefix=f"p{project.pk}")

    def run(m: Membership, s: Structure, form: ContributeForm) -> None:
        services.project_contribute(
            project=project,
            character=form.cleaned_data["character"],
            influence=form.cleaned_data["influence"],
            points=form.cleaned_data["points"],
            by=_by(request),
            key=f"{request.user.pk}:{form.cleaned_data['key']}",
        )

    return _act(
        request,
        slug,
        pk,
        form_key=f"contribute-{project.pk}",
        make_form=make,
        run=run,
        done=_("Contribution recorded."),
    )


def _actor_form(request: HttpRequest) -> Any:
    return lambda m, s: OwnerActionForm(request.POST, membership=m, structure=s)


@login_required
@require_POST
def haven_repair(request: HttpRequest, slug: str, pk: int, attribute_id: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    attribute: Attribute = _one(structure.attributes.all(), attribute_id, "attribute")
    return _act(
        request,
        slug,
        pk,
        form_key="actor",
        make_form=_actor_form(request),
        run=lambda m, s, f: services.repair_request(
            attribute=attribute, character=f.cleaned_data["character"], by=_by(request)
        ),
        done=_("Repair ordered: pay into it to have it done in downtime (HAV-24)."),
    )


@login_required
@require_POST
def haven_project_cancel(request: HttpRequest, slug: str, pk: int, project_id: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    project: Project = _one(structure.projects.all(), project_id, "project")
    return _act(
        request,
        slug,
        pk,
        form_key="actor",
        make_form=_actor_form(request),
        run=lambda m, s, f: services.project_cancel(
            project=project, character=f.cleaned_data["character"], by=_by(request)
        ),
        done=_("Project cancelled."),
    )


@login_required
@require_POST
def haven_project_release(
    request: HttpRequest, slug: str, pk: int, project_id: int
) -> HttpResponse:
    """Storytellers settle a held project: cancelled, its influence given back (HAV-23/24)."""
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    project: Project = _one(structure.projects.all(), project_id, "project")
    chronicle_access.require_staff(membership)
    try:
        services.project_release_held(project=project, by=_by(request))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Held project cancelled; its influence is given back."))
    return redirect("haven_detail", slug=slug, pk=structure.pk)


def _hand_over(request: HttpRequest, slug: str, pk: int, which: str) -> HttpResponse:
    service = (
        services.structure_transfer_request if which == "transfer" else services.structure_will_set
    )

    def run(m: Membership, s: Structure, f: HandOverForm) -> None:
        service(
            structure=s,
            from_character=f.cleaned_data["character"],
            by=_by(request),
            to_character=f.cleaned_data.get("to_character"),
            to_name=f.cleaned_data.get("to_name") or "",
            note=f.cleaned_data.get("note") or "",
        )

    # The same sentence whether or not the name matched a character (HAV-04).
    done = (
        _("Transfer asked for; it takes effect in downtime (HAV-05).")
        if which == "transfer"
        else _("Will recorded; it applies only on your character's death (HAV-05).")
    )
    return _act(
        request,
        slug,
        pk,
        form_key=which,
        make_form=lambda m, s: HandOverForm(request.POST, membership=m, structure=s, prefix=which),
        run=run,
        done=done,
    )


@login_required
@require_POST
def haven_transfer(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    return _hand_over(request, slug, pk, "transfer")


@login_required
@require_POST
def haven_will(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    return _hand_over(request, slug, pk, "will")


@login_required
@require_POST
def haven_forsake(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    return _act(
        request,
        slug,
        pk,
        form_key="actor",
        make_form=_actor_form(request),
        run=lambda m, s, f: services.structure_forsake_request(
            structure=s, character=f.cleaned_data["character"], by=_by(request)
        ),
        done=_("Forsaking asked for; it takes effect in downtime (HAV-06)."),
    )


@login_required
@require_POST
def haven_crypt_vote(request: HttpRequest, slug: str, pk: int, crypt_id: int) -> HttpResponse:
    """HAV-03: on the outer haven's page, its owners vote to destroy a crypt inside."""
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    crypt: Structure = _one(Structure.objects.filter(outer=structure), crypt_id, "crypt")
    return _act(
        request,
        slug,
        pk,
        form_key="actor",
        make_form=_actor_form(request),
        run=lambda m, s, f: services.crypt_destroy_vote(
            crypt=crypt, voter=f.cleaned_data["character"], by=_by(request)
        ),
        done=_("Vote recorded (HAV-03)."),
    )


@login_required
@require_POST
def haven_change_cancel(request: HttpRequest, slug: str, pk: int, change_id: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    structure = access.structure_for(membership, pk)
    change: OwnershipChange = _one(access.own_changes(membership, structure), change_id, "change")
    try:
        services.change_cancel(change=change, by=_by(request))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Change cancelled."))
    return redirect("haven_detail", slug=slug, pk=structure.pk)


def _staff_form(request: HttpRequest, form_class: type[Form]) -> Any:
    def make(m: Membership, s: Structure) -> Form:
        chronicle_access.require_staff(m)
        if form_class is TheftControlForm:
            return TheftControlForm(request.POST, membership=m)
        return form_class(request.POST)

    return make


@login_required
@require_POST
def haven_theft_control(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    return _act(
        request,
        slug,
        pk,
        form_key="theft",
        make_form=_staff_form(request, TheftControlForm),
        run=lambda m, s, f: services.theft_control_record(
            structure=s,
            game=f.cleaned_data["game"],
            thieves=list(f.cleaned_data["thieves"]),
            by=_by(request),
        ),
        done=_("Theft control recorded (HAV-07)."),
    )


@login_required
@require_POST
def haven_lock_test(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """HAV-16: an ST records one test against a two-way lock; alarms fire as the test says."""

    def make(m: Membership, s: Structure) -> LockTestForm:
        chronicle_access.require_staff(m)
        return LockTestForm(request.POST, membership=m, structure=s)

    def run(m: Membership, s: Structure, form: LockTestForm) -> None:
        result = form.cleaned_data["result"]
        outcome = searches.lock_test_record(
            lock=form.cleaned_data["lock"],
            game=form.cleaned_data["game"],
            attacker_won=result != "lost",
            outcome=None if result == "lost" else result,
            by=_by(request),
            key=f"page:{m.chronicle_id}:{form.cleaned_data['key']}",
        )
        fired = {"fired": outcome["fired"]}
        messages.info(
            request,
            _("Alarms fired: %(fired)s. Every two-way lock is beaten: penetrated.") % fired
            if outcome["penetrated"]
            else _("Alarms fired: %(fired)s.") % fired,
        )

    return _act(
        request,
        slug,
        pk,
        form_key="lock_test",
        make_form=make,
        run=run,
        done=_("Lock test recorded (HAV-16)."),
    )


@login_required
@require_POST
def haven_destroy(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    return _act(
        request,
        slug,
        pk,
        form_key="destroy",
        make_form=_staff_form(request, DestroyForm),
        run=lambda m, s, f: services.structure_destroy(
            structure=s, by=_by(request), note=f.cleaned_data["note"]
        ),
        done=_("Haven destroyed by ruling."),
    )


urlpatterns = [
    path("havens/", haven_list, name="haven_list"),
    path("havens/new/", haven_design, name="haven_design"),
    path("havens/check/", haven_check, name="haven_check"),
    path("havens/<int:pk>/", haven_detail, name="haven_detail"),
    path("havens/<int:pk>/upgrade/", haven_upgrade, name="haven_upgrade"),
    path("havens/<int:pk>/check/", haven_upgrade_check, name="haven_upgrade_check"),
    path(
        "havens/<int:pk>/projects/<int:project_id>/contribute/",
        haven_contribute,
        name="haven_contribute",
    ),
    path(
        "havens/<int:pk>/projects/<int:project_id>/cancel/",
        haven_project_cancel,
        name="haven_project_cancel",
    ),
    path(
        "havens/<int:pk>/attributes/<int:attribute_id>/repair/",
        haven_repair,
        name="haven_repair",
    ),
    path("havens/<int:pk>/transfer/", haven_transfer, name="haven_transfer"),
    path("havens/<int:pk>/will/", haven_will, name="haven_will"),
    path("havens/<int:pk>/forsake/", haven_forsake, name="haven_forsake"),
    path("havens/<int:pk>/crypts/<int:crypt_id>/vote/", haven_crypt_vote, name="haven_crypt_vote"),
    path(
        "havens/<int:pk>/changes/<int:change_id>/cancel/",
        haven_change_cancel,
        name="haven_change_cancel",
    ),
    path("havens/<int:pk>/theft-control/", haven_theft_control, name="haven_theft_control"),
    path("havens/<int:pk>/destroy/", haven_destroy, name="haven_destroy"),
    path("havens/<int:pk>/lock-test/", haven_lock_test, name="haven_lock_test"),
    path(
        "havens/<int:pk>/projects/<int:project_id>/release/",
        haven_project_release,
        name="haven_project_release",
    ),
]
