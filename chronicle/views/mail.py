"""Mail pages (issue 17): a person's inbox across their chronicles, their choice per kind of
notice, and a chronicle's mail log for its admins. Thin: access reads, the mail service writes."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import PasswordResetView
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from .. import access, throttle
from ..client_ip import client_ip
from ..forms.mail import MailLogFilterForm, MailPreferencesForm, WorkerPasswordResetForm
from ..models import MailChoice
from ..services import mail
from . import chronicle_page

PAGE_SIZE = 25

log = logging.getLogger("chronicle.security")


def reset_allowed(request: HttpRequest, email: str) -> bool:
    """Whether this password reset may go out (issue 16): at most
    CHRONICLE_RESET_LIMIT_PER_CLIENT requests from one client address and
    CHRONICLE_RESET_LIMIT_PER_ADDRESS for one e-mail address in CHRONICLE_RESET_WINDOW_SECONDS.
    A refused one is logged; the person sees the same page either way."""
    window = settings.CHRONICLE_RESET_WINDOW_SECONDS
    ip = client_ip(request) or "unknown"
    address = email.strip().lower()
    address_key = throttle.cache_key("reset-address", address)
    if not throttle.hit(
        throttle.cache_key("reset-client", ip),
        limit=settings.CHRONICLE_RESET_LIMIT_PER_CLIENT,
        window=window,
    ):
        log.warning("Password reset refused: too many from client %s", ip)
        return False
    if not throttle.hit(
        address_key, limit=settings.CHRONICLE_RESET_LIMIT_PER_ADDRESS, window=window
    ):
        # The address itself stays out of the log: a short hash of it tells repeats apart.
        log.warning(
            "Password reset refused: too many for one address (%s) from client %s",
            address_key.rsplit(":", 1)[-1][:16],
            ip,
        )
        return False
    return True


class ThrottledPasswordResetView(PasswordResetView):
    """Django's reset page, with the form whose mail leaves from a worker, throttled per
    address and per client. A throttled request gets the same "if the address is known, a mail
    is on its way" page, so the answer never tells whether an address has an account."""

    form_class = WorkerPasswordResetForm

    def form_valid(self, form: Any) -> HttpResponse:
        if reset_allowed(self.request, form.cleaned_data["email"]):
            return super().form_valid(form)
        return HttpResponseRedirect(self.get_success_url())


password_reset = ThrottledPasswordResetView.as_view()


@login_required
@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    user = access.acting_user(request.user)
    # Queries: the count, the page's messages with their chronicles (and the header's).
    page = Paginator(access.messages_of(user), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "chronicle/inbox.html", {"page": page})


@login_required
@require_GET
def message_detail(request: HttpRequest, message_id: int) -> HttpResponse:
    user = access.acting_user(request.user)
    message = mail.message_open(message=access.message_for(user, message_id), reader=user)
    return render(request, "chronicle/message_detail.html", {"message": message})


@login_required
@require_POST
def inbox_read_all(request: HttpRequest) -> HttpResponse:
    count = mail.inbox_mark_all_read(user=access.acting_user(request.user))
    if count:
        text = ngettext(
            "%(count)d message marked read.", "%(count)d messages marked read.", count
        ) % {"count": count}
        messages.success(request, text)
    return redirect("inbox")


@login_required
@require_http_methods(["GET", "POST"])
def mail_preferences(request: HttpRequest) -> HttpResponse:
    user = access.acting_user(request.user)
    form = MailPreferencesForm(request.POST or None, choices=mail.preferences_of(user))
    if request.method == "POST" and form.is_valid():
        try:
            mail.preferences_save(user=user, choices=form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Your mail choices are saved."))
            return redirect("mail_preferences")
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "choices": MailChoice.choices}
    return render(request, "chronicle/mail_preferences.html", context, status=status)


@login_required
@require_GET
def mail_log(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    rows = access.mail_log_visible_to(membership)
    form = MailLogFilterForm(request.GET or None)
    valid = form.is_valid() if form.is_bound else True
    status = form.cleaned_data.get("status") if valid and form.is_bound else ""
    if status:
        rows = rows.filter(status=status)
    # Queries: the count and the page's rows with their recipients (and the header's).
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return chronicle_page(
        request,
        "chronicle/mail_log.html",
        membership,
        form=form,
        page=page,
        status_query=f"status={status}&" if status else "",
        status=200 if valid else 400,
    )


@login_required
@require_POST
def mail_log_retry(request: HttpRequest, slug: str, log_id: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    row = access.mail_log_entry_for(membership, log_id)
    if mail.mail_retry(row=row):
        messages.success(request, _("The mail to %(to)s is queued again.") % {"to": row.address})
    else:
        messages.info(request, _("This mail is not waiting for a retry any more."))
    return redirect(reverse("mail_log", args=[slug]) + "?status=failed")
