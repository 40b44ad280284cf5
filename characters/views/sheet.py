"""The character sheet, its print version and its PDF: the player's own, or any for staff (404
else). All three read the same `selectors.sheet_for`, so none shows more than the others."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from chronicle import access as chronicle_access
from chronicle.forms.widgets import long_select
from chronicle.pdf import pdf_filename, pdf_response
from chronicle.views import chronicle_page

from .. import access, selectors
from ..forms.purchases import PurchaseForm


@login_required
@require_GET
def character_sheet(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for(membership, pk)
    sheet = selectors.sheet_for(character=character, membership=membership)
    form = PurchaseForm(character=character, membership=membership)
    if "teacher" in form.fields:
        # The storytellers' teacher select lists every character of the chronicle.
        long_select(form.fields["teacher"])
    return chronicle_page(request, "characters/sheet.html", membership, sheet=sheet, form=form)


@login_required
@require_GET
def character_print(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for(membership, pk)
    sheet = selectors.sheet_for(character=character, membership=membership)
    return chronicle_page(request, "characters/sheet_print.html", membership, sheet=sheet)


@login_required
@require_GET
def character_sheet_pdf(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The print page's sheet as a PDF (issue 17), under the same access as the print page."""
    membership = chronicle_access.membership_for(request.user, slug)
    character = access.character_for(membership, pk)
    sheet = selectors.sheet_for(character=character, membership=membership)
    filename = pdf_filename(slug, character.name, "sheet")
    return pdf_response(
        request, "characters/sheet_pdf.html", membership, filename=filename, sheet=sheet
    )
