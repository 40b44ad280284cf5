"""Placeholder: filled in by this area's work."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.urls import path

from chronicle import access as chronicle_access
from chronicle.views import _page


@login_required
def downtime_home(request: HttpRequest, slug: str) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    return _page(request, "havens/placeholder.html", membership, title="Downtime")


urlpatterns = [path("downtime/", downtime_home, name="downtime_home")]
