"""Pages for people: start a chronicle, invite, accept, change roles, leave, the account.
Thin: access decides who, a service writes, the page says what happened in plain words."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from .. import access
from ..forms.people import (
    AcceptNewForm,
    AccountNameForm,
    BirthDateForm,
    ChronicleStartForm,
    EmailChangeForm,
    InvitationAddressForm,
    InviteForm,
    RemoveForm,
    RoleForm,
)
from ..models import Role
from ..services import account as account_services
from ..services import api_tokens as token_services
from ..services import calendar as calendar_services
from ..services import people as services
from . import chronicle_page

LOGIN_BACKEND = "chronicle.backends.ModelBackend"


def _refused(form: Any, exc: ValidationError) -> None:
    """A service's refusal, next to its field where it names one."""
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc)


def _status(request: HttpRequest, form: Any) -> int:
    return 400 if request.method == "POST" and form.errors else 200


# --- Starting a chronicle ------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def chronicle_new(request: HttpRequest) -> HttpResponse:
    user = access.acting_user(request.user)
    if not services.may_start_chronicle(user):
        return render(request, "chronicle/chronicle_new.html", {"closed": True}, status=403)
    form = ChronicleStartForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            chronicle = services.chronicle_start(creator=user, **form.cleaned_data)
        except ValidationError as exc:
            _refused(form, exc)
        else:
            messages.success(
                request,
                _("%(name)s is ready and you are its admin. Next: invite your people.")
                % {"name": chronicle.name},
            )
            return redirect("invitation_list", slug=chronicle.slug)
    return render(
        request, "chronicle/chronicle_new.html", {"form": form}, status=_status(request, form)
    )


# --- Invitations (staff) -------------------------------------------------------------------------


def _allowed_roles(membership: Any) -> list[str]:
    return [role for role in Role.values if access.may_invite(membership, role)]


@login_required
@require_http_methods(["GET", "POST"])
def invitation_list(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    invitations = access.invitations_visible_to(membership)
    form = InviteForm(
        request.POST or None, request.FILES or None, allowed_roles=_allowed_roles(membership)
    )
    if request.method == "POST" and form.is_valid():
        try:
            made = services.invitations_create(membership=membership, invitees=form.invitees)
        except ValidationError as exc:
            form.add_error("addresses", exc)
        else:
            messages.success(
                request,
                _("Invitations sent to: %(emails)s.")
                % {"emails": ", ".join(inv.email for inv, _token in made)},
            )
            return redirect("invitation_list", slug=slug)
    now = timezone.now()
    rows = [(invitation, invitation.status(now)) for invitation in invitations[:300]]
    return chronicle_page(
        request,
        "chronicle/invitation_list.html",
        membership,
        form=form,
        invitation_days=settings.CHRONICLE_INVITATION_DAYS,
        open_rows=[r for r in rows if r[1] in ("pending", "needs_address", "expired")],
        closed_rows=[r for r in rows if r[1] in ("accepted", "revoked")][:50],
        status=_status(request, form),
    )


@login_required
@require_POST
def invitation_resend(request: HttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    invitation = access.invitation_for(membership, invitation_id)
    form = InvitationAddressForm(request.POST)
    email = form.cleaned_data["email"] if form.is_valid() else None
    if "email" in request.POST and email is None:
        messages.error(request, _("Give a valid e-mail address to send the invitation to."))
        return redirect("invitation_list", slug=slug)
    try:
        invitation, _token = services.invitation_resend(
            membership=membership, invitation=invitation, email=email
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("A new link went to %(email)s.") % {"email": invitation.email})
    return redirect("invitation_list", slug=slug)


@login_required
@require_POST
def invitation_revoke(request: HttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    invitation = access.invitation_for(membership, invitation_id)
    try:
        services.invitation_revoke(membership=membership, invitation=invitation)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request,
            _("The invitation of %(who)s is withdrawn; its link no longer works.")
            % {"who": invitation.email or invitation.name},
        )
    return redirect("invitation_list", slug=slug)


# --- Following a link ----------------------------------------------------------------------------


@never_cache
@require_http_methods(["GET", "POST"])
def invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    invitation = services.invitation_by_token(token)
    status = invitation.status(timezone.now()) if invitation else "unknown"
    context: dict[str, Any] = {"invitation": invitation, "state": status, "token": token}
    if status not in ("pending", "needs_address"):
        return render(request, "chronicle/invitation_accept.html", context, status=410)
    form = AcceptNewForm(request.POST or None) if not request.user.is_authenticated else None
    if request.method == "POST":
        try:
            if request.user.is_authenticated:
                membership = services.invitation_accept(
                    token=token, user=access.acting_user(request.user)
                )
            elif form is not None and form.is_valid():
                data = form.cleaned_data
                membership = services.invitation_accept_new(
                    token=token,
                    username=data["username"],
                    name=data["name"],
                    password=data["password"],
                    birth_date=data["birth_date"],
                )
                login(request, membership.user, backend=LOGIN_BACKEND)
            else:
                return render(
                    request,
                    "chronicle/invitation_accept.html",
                    context | {"form": form},
                    status=400,
                )
        except ValidationError as exc:
            if form is not None and hasattr(exc, "error_dict"):
                _refused(form, exc)
            else:
                context["refusal"] = " ".join(exc.messages)
            return render(
                request, "chronicle/invitation_accept.html", context | {"form": form}, status=400
            )
        messages.success(
            request,
            _("Welcome to %(chronicle)s.") % {"chronicle": membership.chronicle.name},
        )
        return redirect("dashboard", slug=membership.chronicle.slug)
    user = request.user
    if user.is_authenticated and invitation is not None:
        context["wrong_account"] = invitation.placeholder_id is not None or (
            (user.email or "").casefold() != invitation.email.casefold()
        )
    return render(request, "chronicle/invitation_accept.html", context | {"form": form})


@require_POST
def invitation_renew(request: HttpRequest, token: str) -> HttpResponse:
    services.invitation_renewal_request(token=token)
    # The same words whatever happened: the page tells nobody who is behind an address.
    return render(request, "chronicle/invitation_accept.html", {"state": "renewal_asked"})


# --- Roles, removal, leaving ---------------------------------------------------------------------


@login_required
@require_POST
def member_role(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    target = access.member_for_change(membership, user_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Pick player, storyteller or admin."))
        return redirect("people", slug=slug)
    try:
        services.membership_role_change(
            membership=membership, target=target, role=form.cleaned_data["role"]
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request,
            _("%(who)s is now %(role)s.")
            % {"who": _display(target.user), "role": _(form.cleaned_data["role"])},
        )
    return redirect("people", slug=slug)


def _display(user: Any) -> str:
    return str(user.get_full_name() or user.get_username())


@login_required
@require_http_methods(["GET", "POST"])
def member_remove(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    target = access.member_for_change(membership, user_id)
    return _end(request, membership, target, leaving=False)


@login_required
@require_http_methods(["GET", "POST"])
def leave(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    return _end(request, membership, membership, leaving=True)


def _end(request: HttpRequest, membership: Any, target: Any, *, leaving: bool) -> HttpResponse:
    form = RemoveForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.membership_end(
                membership=membership, target=target, characters=form.cleaned_data["characters"]
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            if leaving:
                messages.success(
                    request,
                    _(
                        "You left %(chronicle)s. Your characters and XP are kept; an invitation "
                        "brings you back to them."
                    )
                    % {"chronicle": membership.chronicle.name},
                )
                return redirect("account")
            messages.success(
                request,
                _("%(who)s is no longer a member. Their characters and XP are kept.")
                % {"who": _display(target.user)},
            )
            return redirect("people", slug=membership.chronicle.slug)
    return chronicle_page(
        request,
        "chronicle/member_remove.html",
        membership,
        form=form,
        target=target,
        leaving=leaving,
        status=_status(request, form),
    )


# --- The account ---------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def account(request: HttpRequest) -> HttpResponse:
    user = access.acting_user(request.user)
    name_form = AccountNameForm(
        request.POST if "save_name" in request.POST else None,
        initial={"name": user.get_full_name()},
    )
    email_form = EmailChangeForm(request.POST if "change_email" in request.POST else None)
    birth_form = _birth_date_form(request, user)
    if (
        birth_form.is_bound
        and birth_form.is_valid()
        and _birth_date_saved(request, user, birth_form)
    ):
        return redirect("account")
    if name_form.is_bound and name_form.is_valid():
        account_services.account_name_set(user=user, name=name_form.cleaned_data["name"])
        messages.success(request, _("Your name is saved."))
        return redirect("account")
    if email_form.is_bound and email_form.is_valid():
        try:
            account_services.email_change_request(user=user, email=email_form.cleaned_data["email"])
        except ValidationError as exc:
            _refused(email_form, exc)
        else:
            messages.success(
                request,
                _("We sent a link to %(email)s. Your address changes when you follow it.")
                % {"email": email_form.cleaned_data["email"]},
            )
            return redirect("account")
    bound = name_form.is_bound or email_form.is_bound or birth_form.is_bound
    return render(
        request,
        "chronicle/account.html",
        {
            "name_form": name_form,
            "email_form": email_form,
            "birth_form": birth_form,
            "account_memberships": list(access.memberships_of(user).order_by("chronicle__name")),
            "may_start": services.may_start_chronicle(user),
            "calendar_feeds": calendar_services.feeds_of(user),
            "api_tokens": token_services.tokens_of(user),
            "api_token_ttl_days": settings.API_TOKEN_TTL_DAYS,
        },
        status=400 if request.method == "POST" and bound else 200,
    )


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, token_id: str) -> HttpResponse:
    """Revoke one of the person's own API tokens (another person's is a 404)."""
    token_services.token_revoke(user=access.acting_user(request.user), token_id=token_id)
    messages.success(request, _("The API token is revoked; it no longer works."))
    return redirect(f"{reverse('account')}#api-tokens")


@login_required
@require_POST
def api_tokens_revoke_all(request: HttpRequest) -> HttpResponse:
    count = token_services.tokens_revoke_all(user=access.acting_user(request.user))
    messages.success(
        request,
        ngettext("%(count)d API token is revoked.", "%(count)d API tokens are revoked.", count)
        % {"count": count},
    )
    return redirect(f"{reverse('account')}#api-tokens")


@login_required
def account_email_confirm(request: HttpRequest, token: str) -> HttpResponse:
    user = access.acting_user(request.user)
    try:
        email = account_services.email_change_confirm(user=user, token=token)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Your address is now %(email)s.") % {"email": email})
    return redirect("account")


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if not settings.CHRONICLE_OPEN_REGISTRATION:
        raise Http404(_("Sign-up is by invitation."))
    form = AcceptNewForm(request.POST or None)
    email_form = InvitationAddressForm(request.POST or None)
    if request.method == "POST" and form.is_valid() and email_form.is_valid():
        data = form.cleaned_data
        try:
            user = account_services.account_register(
                username=data["username"],
                name=data["name"],
                email=email_form.cleaned_data["email"],
                password=data["password"],
                birth_date=data["birth_date"],
            )
        except ValidationError as exc:
            _refused(form, exc)
        else:
            login(request, user, backend=LOGIN_BACKEND)
            return redirect("home")
    return render(
        request,
        "registration/signup.html",
        {"form": form, "email_form": email_form},
        status=400 if request.method == "POST" else 200,
    )


# --- GEN-01: the date of birth, asked once after signing in --------------------------------------


class LoginView(auth_views.LoginView):
    """Django's login, which sends an account that never gave its date of birth, nor was asked
    for it, to the one-question page first (and on to where it was going)."""

    def get_success_url(self) -> str:
        url = super().get_success_url()
        if account_services.birth_date_to_ask(self.request.user):
            return f"{reverse('birth_date_ask')}?{urlencode({'next': url})}"
        return url


def _safe_next(request: HttpRequest) -> str:
    url = request.POST.get("next") or request.GET.get("next") or ""
    if url and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return url
    return reverse("home")


def _birth_date_form(request: HttpRequest, user: User) -> BirthDateForm:
    """The account page's and the sign-in question's date-of-birth form (GEN-01)."""
    return BirthDateForm(
        request.POST if "save_birth_date" in request.POST else None,
        initial={"birth_date": account_services.birth_date_of(user)},
    )


def _birth_date_saved(request: HttpRequest, user: User, form: BirthDateForm) -> bool:
    """Save a valid form's date of birth; a refusal goes beside the field (False)."""
    try:
        account_services.profile_birth_date_set(
            user=user, birth_date=form.cleaned_data["birth_date"]
        )
    except ValidationError as exc:
        _refused(form, exc)
        return False
    messages.success(request, _("Your date of birth is saved."))
    return True


@login_required
@require_http_methods(["GET", "POST"])
def birth_date_ask(request: HttpRequest) -> HttpResponse:
    """GEN-01: one question, answered or skipped; either way the person is not asked again."""
    user = access.acting_user(request.user)
    next_url = _safe_next(request)
    form = _birth_date_form(request, user)
    if request.method == "POST" and "skip" in request.POST:
        account_services.profile_birth_date_skip(user=user)
        messages.info(
            request, _("We will not ask again. You can give it on your account page at any time.")
        )
        return redirect(next_url)
    if form.is_bound and form.is_valid():
        if form.cleaned_data["birth_date"] is None:
            form.add_error("birth_date", _("Give your date of birth, or choose “Not now”."))
        elif _birth_date_saved(request, user, form):
            return redirect(next_url)
    return render(
        request,
        "chronicle/birth_date_ask.html",
        {"form": form, "next_url": next_url},
        status=400 if request.method == "POST" else 200,
    )
