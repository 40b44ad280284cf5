"""The History tab of a character, haven, submission or desk item (issue 16): storytellers
and admins only; the rows come from chronicle.history."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from .. import access, history
from . import chronicle_page


@login_required
@require_GET
def object_history(request: HttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    subject, obj = history.subject_for(membership, kind, pk)
    page, rows = history.history_page(subject, obj, request.GET.get("page"), membership.chronicle)
    return chronicle_page(
        request,
        "chronicle/history.html",
        membership,
        title=history.subject_title(subject, obj),
        back_url=history.subject_url(subject, membership, obj),
        object_name=str(obj),
        page=page,
        rows=rows,
        recording=history.recording(),
    )
