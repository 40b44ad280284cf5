"""The account: a person's name, a confirmed change of e-mail address, and sign-up where the
deployment allows it (CHRONICLE_OPEN_REGISTRATION)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core import signing
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils.translation import gettext as _

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
def account_register(*, username: str, name: str, email: str, password: str) -> User:
    """Open sign-up, only where the deployment allows it; invitations are the usual way in."""
    if not settings.CHRONICLE_OPEN_REGISTRATION:
        raise ValidationError(_("This site takes new people by invitation only."))
    user = User(username=username.strip(), first_name=name.strip()[:150], email=email.strip())
    errors: dict[str, list[str]] = {}
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
    return user


@transaction.atomic
def profile_language_set(*, user: User, language: str) -> Profile:
    """Save the language `user` reads pages and e-mails in; "" leaves it to their browser."""
    if language and language not in dict(settings.LANGUAGES):
        raise ValidationError({"language": _("Choose one of the languages offered.")})
    profile, _created = Profile.objects.update_or_create(user=user, defaults={"language": language})
    return profile
