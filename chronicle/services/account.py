"""The account: a person's name, a confirmed change of e-mail address, and sign-up where the
deployment allows it (CHRONICLE_OPEN_REGISTRATION)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core import signing
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import rules
from ..models import MailKind, Profile
from .mail import deliver

EMAIL_CHANGE_SALT = "chronicle.account.email-change"
EMAIL_CHANGE_MAX_AGE = 2 * 24 * 3600


@transaction.atomic
def account_name_set(*, user: User, name: str) -> User:
    name = name.strip()[:150]
    if not name:
        raise ValidationError({"name": _("Give the name people know you by.")})
    user.first_name, user.last_name = name, ""
    user.save(update_fields=["first_name", "last_name"])
    return user


def email_change_request(*, user: User, email: str) -> str:
    """Send a link to the new address; the address changes only when it is followed, so nobody
    can move an account to an address they do not read. Returns the signed token."""
    email = email.strip()
    if email.casefold() == (user.email or "").casefold():
        raise ValidationError({"email": _("That is already your address.")})
    token = signing.dumps({"user": user.pk, "email": email}, salt=EMAIL_CHANGE_SALT)
    link = settings.CHRONICLE_BASE_URL + reverse("account_email_confirm", args=[token])
    body = _(
        "Follow this link within two days to make %(email)s the address of your Chronicle "
        "account %(username)s:\n%(link)s\n\nIf you did not ask for this, ignore this e-mail."
    ) % {"email": email, "username": user.get_username(), "link": link}
    subject = _("Confirm your new e-mail address")
    # Logged and sent by a worker; never kept in the inbox: the link must prove the new address
    # is read, so it goes to that address alone.
    deliver(kind=MailKind.ACCOUNT, user=user, address=email, subject=subject, body=body)
    return token


@transaction.atomic
def email_change_confirm(*, user: User, token: str) -> str:
    try:
        data = signing.loads(token, salt=EMAIL_CHANGE_SALT, max_age=EMAIL_CHANGE_MAX_AGE)
    except signing.SignatureExpired:
        raise ValidationError(
            _("This link has expired; ask for the change again on your account page.")
        ) from None
    except signing.BadSignature:
        raise ValidationError(_("This link is not a valid confirmation link.")) from None
    if data.get("user") != user.pk:
        raise ValidationError(
            _("This link confirms another account's address; log in as that account first.")
        )
    user = User.objects.select_for_update().get(pk=user.pk)
    user.email = str(data["email"])
    user.save(update_fields=["email"])
    return user.email


@transaction.atomic
def account_register(
    *,
    username: str,
    name: str,
    email: str,
    password: str,
    birth_date: dt.date | None = None,
    now: dt.datetime | None = None,
) -> User:
    """Open sign-up, only where the deployment allows it; invitations are the usual way in.
    The form asks for the date of birth (GEN-01), so the person is not asked again."""
    if not settings.CHRONICLE_OPEN_REGISTRATION:
        raise ValidationError(_("This site takes new people by invitation only."))
    now = now or timezone.now()
    user = User(username=username.strip(), first_name=name.strip()[:150], email=email.strip())
    errors: dict[str, list[str]] = birth_date_errors(birth_date, now=now)
    try:
        validate_password(password, user)
    except ValidationError as exc:
        errors["password"] = list(exc.messages)
    if not user.username:
        errors["username"] = [_("Choose a username.")]
    if errors:
        raise ValidationError(errors)
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:
        raise ValidationError({"username": [_("That username is taken; pick another.")]}) from None
    birth_date_record(user=user, birth_date=birth_date, now=now)
    return user


@transaction.atomic
def profile_language_set(*, user: User, language: str) -> Profile:
    """Save the language `user` reads pages and e-mails in; "" leaves it to their browser."""
    if language and language not in dict(settings.LANGUAGES):
        raise ValidationError({"language": _("Choose one of the languages offered.")})
    profile, _created = Profile.objects.update_or_create(user=user, defaults={"language": language})
    return profile


# --- GEN-01: the date of birth -----------------------------------------------------------------


def birth_date_errors(birth_date: dt.date | None, *, now: dt.datetime) -> dict[str, list[str]]:
    """GEN-01: {"birth_date": [why]} for a date nobody can have (in the future, before 1900),
    else {}. No date (None) is allowed: giving it is asked for, not forced."""
    if birth_date is None:
        return {}
    try:
        rules.birth_date_checked(birth_date, today=timezone.localdate(now))
    except ValueError as exc:
        return {"birth_date": [str(exc)]}
    return {}


def birth_date_record(*, user: User, birth_date: dt.date | None, now: dt.datetime) -> Profile:
    """Write a checked date of birth (None clears it) and that the person was asked."""
    profile, _created = Profile.objects.get_or_create(user=user)
    profile.birth_date = birth_date
    profile.birth_date_asked_at = profile.birth_date_asked_at or now
    profile.save(update_fields=["birth_date", "birth_date_asked_at"])
    return profile


@transaction.atomic
def profile_birth_date_set(
    *, user: User, birth_date: dt.date | None, now: dt.datetime | None = None
) -> Profile:
    """GEN-01: the person gives (or, with None, withdraws) their date of birth. Only they and,
    as an age, the admins of their chronicles ever see it."""
    now = now or timezone.now()
    errors = birth_date_errors(birth_date, now=now)
    if errors:
        raise ValidationError(errors)
    return birth_date_record(user=user, birth_date=birth_date, now=now)


@transaction.atomic
def profile_birth_date_skip(*, user: User, now: dt.datetime | None = None) -> Profile:
    """GEN-01: the person chose not to answer after signing in; they are not asked again (the
    account page still lets them give it)."""
    profile, _created = Profile.objects.get_or_create(user=user)
    if profile.birth_date_asked_at is None:
        profile.birth_date_asked_at = now or timezone.now()
        profile.save(update_fields=["birth_date_asked_at"])
    return profile


def birth_date_to_ask(user: Any) -> bool:
    """GEN-01: an account with no date of birth that was never asked for one (an account from
    before dates were recorded). Reads the Profile loaded with the user (chronicle.backends)."""
    if user is None or not user.is_authenticated:
        return False
    try:
        profile = user.chronicle_profile
    except ObjectDoesNotExist:
        return True
    return profile.birth_date is None and profile.birth_date_asked_at is None


def birth_date_of(user: Any) -> dt.date | None:
    """The person's own date of birth, from the Profile loaded with them (None: not given)."""
    try:
        return user.chronicle_profile.birth_date  # type: ignore[no-any-return]
    except ObjectDoesNotExist:
        return None
