"""Password resets leave from a worker. The request only hands the typed address to the broker,
whatever it is: the page does the same work, and so takes the same time, for an address that
has an account and for one that has none. The worker finds the accounts (Django's rules: active,
with a usable password) and writes each one's mail through the mail log."""

from __future__ import annotations

from functools import partial

from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.template.loader import render_to_string
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from ...models import MailKind
from .delivery import deliver
from .sending import after_commit

RESET_TASK = "chronicle.tasks.send_password_reset"
SUBJECT_TEMPLATE = "registration/password_reset_subject.txt"
BODY_TEMPLATE = "registration/password_reset_email.html"


def password_reset_request(*, email: str, domain: str, use_https: bool) -> None:
    """From the request: the worker's task after commit, nothing else (no query at all)."""
    args = [email, domain, use_https]
    inline = partial(password_reset_send, email=email, domain=domain, use_https=use_https)
    after_commit(RESET_TASK, args, inline)


def password_reset_send(*, email: str, domain: str, use_https: bool) -> int:
    """In the worker: one reset mail to each account at `email`, in its owner's language, sent
    here and logged (a failure is retried by the sweeper). Returns how many accounts."""
    count = 0
    for user in PasswordResetForm().get_users(email):
        address = getattr(user, user.get_email_field_name())
        context = {
            "email": address,
            "domain": domain,
            "site_name": domain,
            "uid": urlsafe_base64_encode(force_bytes(user.pk)),
            "user": user,
            "token": default_token_generator.make_token(user),
            "protocol": "https" if use_https else "http",
        }
        with transaction.atomic():
            deliver(
                kind=MailKind.PASSWORD_RESET,
                user=user,
                address=address,
                subject=partial(render_to_string, SUBJECT_TEMPLATE, context),
                body=partial(render_to_string, BODY_TEMPLATE, context),
                send_now=True,
            )
        count += 1
    return count
