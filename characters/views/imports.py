"""The Import page (storytellers and admins): upload Grapevine files, read the preview (what
will be created or updated, the players who get an invitation, the values that do not map,
each with a choice), then Import, which runs on a Celery worker behind a progress bar.

Players get 403, outsiders 404 (chronicle.access). Nothing of the chronicle is written before
Import; a refused file writes nothing at all, not even the upload.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chronicle import access as chronicle_access
from chronicle.models import Membership
from chronicle.views import chronicle_page

from ..forms.imports import ChoicesForm, UploadForm
from ..models import ImportJob, ImportStatus
from ..services import imports

RECENT_JOBS = 10


def _staff(request: HttpRequest, slug: str) -> Membership:
    membership = chronicle_access.membership_for(request.user, slug)
    chronicle_access.require_staff(membership)
    return membership


def _job(membership: Membership, pk: int) -> ImportJob:
    if not 0 < pk <= chronicle_access.MAX_ID:
        raise Http404(_("No such import."))
    try:
        return ImportJob.objects.select_related("chronicle", "created_by").get(
            pk=pk, chronicle=membership.chronicle
        )
    except ImportJob.DoesNotExist:
        raise Http404(_("No such import.")) from None


def _recent(membership: Membership) -> list[ImportJob]:
    return list(
        ImportJob.objects.filter(chronicle=membership.chronicle)
        .select_related("created_by")
        .defer("files")
        .order_by("-created_at", "-pk")[:RECENT_JOBS]
    )


@login_required
@require_http_methods(["GET", "POST"])
def import_upload(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _staff(request, slug)
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        job, report = imports.import_job_create(
            chronicle=membership.chronicle,
            by=chronicle_access.acting_user(request.user),
            files=form.cleaned_data["files"],
        )
        if job is not None:
            return redirect("import_job", slug=slug, pk=job.pk)
        errors = [str(e) for e in report.errors]
    status = 400 if request.method == "POST" else 200
    return chronicle_page(
        request,
        "characters/import_upload.html",
        membership,
        status=status,
        form=form,
        refusals=errors,
        jobs=_recent(membership),
    )


def _preview_context(job: ImportJob, choices: dict[str, str] | None, data: Any) -> dict[str, Any]:
    report = imports.import_job_preview(job=job, choices=choices)
    rows = report.unmapped()
    form = ChoicesForm(data, rows=rows)
    return {
        "job": job,
        "report": report,
        "summary": report.as_json(),
        "lines": report.characters,
        "choices_form": form,
        "digest": report.digest(),
    }


@login_required
@require_GET
def import_job(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The preview while the job waits for the storytellers; its progress and result after."""
    membership = _staff(request, slug)
    job = _job(membership, pk)
    context: dict[str, Any] = {"job": job}
    if job.status == ImportStatus.PREVIEW:
        context = _preview_context(job, None, None)
    return chronicle_page(request, "characters/import_job.html", membership, **context)


@login_required
@require_POST
def import_confirm(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Preview again with the choices made, or Import with them."""
    membership = _staff(request, slug)
    job = _job(membership, pk)
    if job.status != ImportStatus.PREVIEW:
        return redirect("import_job", slug=slug, pk=pk)
    rows = imports.import_job_preview(job=job).unmapped()
    form = ChoicesForm(request.POST, rows=rows)
    if form.is_valid() and request.POST.get("action") == "import":
        try:
            imports.import_job_confirm(
                job=job,
                by=chronicle_access.acting_user(request.user),
                choices=form.choices(),
                digest=str(request.POST.get("digest", "")),
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return redirect("import_job", slug=slug, pk=pk)
    context = _preview_context(job, form.choices() if form.is_valid() else None, request.POST)
    if form.errors:
        context["choices_form"] = form
    status = 400 if form.errors else 200
    return chronicle_page(
        request, "characters/import_job.html", membership, status=status, **context
    )


@login_required
@require_GET
def import_progress(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The progress bar alone, for htmx's polling; the whole page reloads when the job ends."""
    membership = _staff(request, slug)
    job = _job(membership, pk)
    if not getattr(request, "htmx", False):
        return redirect("import_job", slug=slug, pk=pk)
    response = chronicle_page(request, "characters/import_job.html#progress", membership, job=job)
    if job.status in (ImportStatus.DONE, ImportStatus.FAILED):
        response["HX-Refresh"] = "true"
    return response


@login_required
@require_POST
def import_resend(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = _staff(request, slug)
    job = _job(membership, pk)
    imports.import_job_resend(job=job, by=chronicle_access.acting_user(request.user))
    return redirect("import_job", slug=slug, pk=pk)
