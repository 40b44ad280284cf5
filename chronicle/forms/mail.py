"""Forms of the mail pages: a person's choice per kind, the mail log's filter, and the password
reset whose mail leaves from a worker."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.tokens import PasswordResetTokenGenerator, default_token_generator
from django.contrib.sites.shortcuts import get_current_site
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..models import PERSONAL_KINDS, MailChoice, MailKind, MailStatus
from ..services import mail


class MailPreferencesForm(forms.Form):
    """One row of radio buttons per kind of notice (e-mail at once, daily digest, inbox only)."""

    def __init__(self, *args: Any, choices: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for kind in PERSONAL_KINDS:
            self.fields[kind] = forms.ChoiceField(
                label=MailKind(kind).label,
                choices=MailChoice.choices,
                widget=forms.RadioSelect,
                initial=choices.get(kind, MailChoice.IMMEDIATE),
                error_messages={"required": _("Pick how this kind reaches you.")},
            )


class MailLogFilterForm(forms.Form):
    status = forms.ChoiceField(
        label=_("Status"),
        choices=[("", _("Any status")), *MailStatus.choices],
        required=False,
    )


class WorkerPasswordResetForm(PasswordResetForm):
    """Django's form, but `save` only hands the address to a worker (issue 17): no account is
    looked up in the request, so a known and an unknown address cost the same."""

    def save(
        self,
        domain_override: str | None = None,
        subject_template_name: str = "registration/password_reset_subject.txt",
        email_template_name: str = "registration/password_reset_email.html",
        use_https: bool = False,
        token_generator: PasswordResetTokenGenerator = default_token_generator,
        from_email: str | None = None,
        request: HttpRequest | None = None,
        html_email_template_name: str | None = None,
        extra_email_context: dict[str, str] | None = None,
    ) -> None:
        domain = domain_override or (get_current_site(request).domain if request else "")
        mail.password_reset_request(
            email=self.cleaned_data["email"], domain=domain, use_https=use_https
        )
