"""The style guide: every component of the design system on one page (staff only), so the next
page is built from parts."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from .. import access
from . import chronicle_page

# The palette's tokens (app.css :root), shown as swatches.
SWATCHES = [
    "--ink", "--muted", "--paper", "--surface", "--line", "--blood", "--focus",
    "--ok-bg", "--warn-bg", "--danger-bg", "--info-bg", "--muted-bg",
]  # fmt: skip


@login_required
def style_guide(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    access.require_staff(membership)
    return chronicle_page(
        request,
        "chronicle/style_guide.html",
        membership,
        swatches=SWATCHES,
        # An XP amount as the tables show one: a number, so each language writes it its way.
        sample_xp=Decimal("12.5"),
        now=timezone.now(),
        cycle=access.cycles_visible_to(membership).select_related("game").first(),
    )
