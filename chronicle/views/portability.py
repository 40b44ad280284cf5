"""Export pages: the admins' download of a whole chronicle (a Celery job writes the file) and a
player's own data. Thin: access checks, then chronicle.portability."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from .. import access, export_jobs, portability
from ..models import Membership
from . import chronicle_page


def _admin_job(
    request: HttpRequest, slug: str, job_id: str
) -> tuple[Membership, export_jobs.ExportJob]:
    """The chronicle's export job for one of its admins: others get 403 (members) or 404."""
    membership = access.membership_for(request.user, slug)
    access.require_admin(membership)
    job = export_jobs.export_job_for(membership.chronicle, job_id)
    if job is None:
        raise Http404(_("No such export."))
    return membership, job


@login_required
@require_POST
def chronicle_export_start(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    access.require_admin(membership)
    job = export_jobs.export_job_start(
        chronicle=membership.chronicle, by=access.acting_user(request.user)
    )
    return redirect("chronicle_export_status", slug=slug, job=job.id)


@login_required
@never_cache
def chronicle_export_status(request: HttpRequest, slug: str, job: str) -> HttpResponse:
    membership, found = _admin_job(request, slug, job)
    return chronicle_page(request, "chronicle/export_status.html", membership, job=found)


@login_required
@never_cache
def chronicle_export_download(request: HttpRequest, slug: str, job: str) -> FileResponse:
    membership, found = _admin_job(request, slug, job)
    if not found.done:
        raise Http404(_("This export is not ready."))
    try:
        stream = export_jobs.export_job_file(found).open("rb")
    except OSError:
        raise Http404(_("This export is no longer on the server.")) from None
    return FileResponse(
        stream,
        as_attachment=True,
        filename=f"{slug}-export.json",
        content_type="application/json",
    )


@login_required
@require_GET
@never_cache
def account_data_export(request: HttpRequest) -> HttpResponse:
    """The signed-in user's own data across their chronicles, as a JSON download."""
    user = access.acting_user(request.user)
    response = HttpResponse(
        portability.account_data_json(user), content_type="application/json; charset=utf-8"
    )
    filename = f"{user.get_username()}-chronicle-data.json"
    response["Content-Disposition"] = content_disposition_header(True, filename) or "attachment"
    return response
