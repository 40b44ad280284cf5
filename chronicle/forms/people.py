"""Forms of the people pages: starting a chronicle, inviting, accepting, roles, the account."""

from __future__ import annotations

import csv
import io
import zoneinfo
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ..models import Role
from ..services.people import CHARACTER_FATES, Invitee

MAX_INVITEES = 200
MAX_CSV_BYTES = 256 * 1024
ROLE_WORDS = {value: value for value in Role.values} | {
    "st": Role.STORYTELLER,
    "narrator": Role.STORYTELLER,
    "administrator": Role.ADMIN,
}
TIMEZONE_CHOICES = sorted(zoneinfo.available_timezones())


def _role_of(word: str, default: str) -> str | None:
    word = word.strip().casefold()
    if not word:
        return default
    return ROLE_WORDS.get(word)


def _line_invitee(line: str, default_role: str) -> Invitee | str:
    """One pasted line: `e-mail`, `Name <e-mail>`, `Name, e-mail` or `Name, e-mail, role`
    (commas, semicolons or tabs). Returns the invitee or what is wrong with the line."""
    text = line.strip()
    if "<" in text and text.endswith(">"):
        name, _sep, email = text[:-1].rpartition("<")
        parts = [name.strip().strip('"'), email.strip()]
    else:
        parts = [p.strip() for p in text.replace(";", ",").replace("\t", ",").split(",")]
    emails = [i for i, part in enumerate(parts) if "@" in part]
    if len(emails) != 1:
        return _("put one e-mail address on the line")
    at = emails[0]
    email = parts[at]
    try:
        validate_email(email)
    except ValidationError:
        return _("%(value)s is not an e-mail address") % {"value": email}
    name = " ".join(p for p in parts[:at] if p)
    rest = [p for p in parts[at + 1 :] if p]
    role = _role_of(rest[0] if rest else "", default_role)
    if role is None or len(rest) > 1:
        return _("the role must be player, storyteller or admin")
    return Invitee(email=email, name=name, role=role)


def parse_invitees(
    text: str, default_role: str, *, csv_text: str = ""
) -> tuple[list[Invitee], list[str]]:
    """The pasted list and the CSV (columns name, e-mail, role; a header row is skipped) as
    invitees, and one message per bad line naming its number, so nothing typed is lost."""
    invitees: list[Invitee] = []
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        found = _line_invitee(line, default_role)
        if isinstance(found, str):
            errors.append(
                _("Line %(n)d (%(line)s): %(why)s.")
                % {
                    "n": number,
                    "line": line.strip()[:80],
                    "why": found,
                }
            )
        else:
            invitees.append(found)
    for number, row in enumerate(csv.reader(io.StringIO(csv_text)), start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if number == 1 and not any("@" in cell for cell in cells):
            continue  # the header row
        found = _line_invitee(", ".join(cells), default_role)
        if isinstance(found, str):
            errors.append(_("CSV row %(n)d: %(why)s.") % {"n": number, "why": found})
        else:
            invitees.append(found)
    if len(invitees) > MAX_INVITEES:
        errors.append(_("At most %(max)d people at once; split the list.") % {"max": MAX_INVITEES})
    return invitees, errors


class ChronicleStartForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name of the chronicle"), max_length=120)
    slug = forms.SlugField(
        label=gettext_lazy("Address"),
        max_length=60,
        help_text=gettext_lazy(
            "Letters, numbers and hyphens; your chronicle will be at /c/<address>/."
        ),
    )
    timezone_name = forms.ChoiceField(
        label=gettext_lazy("Time zone"),
        choices=[(tz, tz) for tz in TIMEZONE_CHOICES],
        initial="Europe/Rome",
        help_text=gettext_lazy("Deadlines fall at 23:59 in this time zone."),
    )
    first_game = forms.DateField(
        label=gettext_lazy("First game (optional)"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    first_game_start = forms.TimeField(
        label=gettext_lazy("Starts at (optional)"),
        required=False,
        widget=forms.TimeInput(attrs={"type": "time"}),
    )
    place = forms.CharField(label=gettext_lazy("Place (optional)"), max_length=200, required=False)


class InviteForm(forms.Form):
    addresses = forms.CharField(
        label=gettext_lazy("E-mail addresses"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=gettext_lazy(
            "One person per line: an address, or Name <address>, or Name, address, role."
        ),
    )
    role = forms.ChoiceField(
        label=gettext_lazy("Role, where a line names none"), choices=Role.choices
    )
    csv_file = forms.FileField(
        label=gettext_lazy("Or a CSV file (name, e-mail, role)"), required=False
    )

    def __init__(self, *args: Any, allowed_roles: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        role_field = self.fields["role"]
        assert isinstance(role_field, forms.ChoiceField)
        role_field.choices = [(v, label) for v, label in Role.choices if v in allowed_roles]
        self.allowed_roles = allowed_roles
        self.invitees: list[Invitee] = []

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("csv_file")
        csv_text = ""
        if upload is not None:
            if upload.size > MAX_CSV_BYTES:
                self.add_error("csv_file", _("The file is larger than 256 KB."))
                return data
            try:
                csv_text = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error("csv_file", _("Save the CSV as UTF-8 text and upload it again."))
                return data
        invitees, errors = parse_invitees(
            data.get("addresses", ""), data.get("role", Role.PLAYER), csv_text=csv_text
        )
        for error in errors:
            self.add_error("addresses", error)
        refused = [i.email for i in invitees if i.role not in self.allowed_roles]
        if refused:
            self.add_error(
                "addresses",
                _("You may invite players only: %(emails)s.") % {"emails": ", ".join(refused)},
            )
        if not errors and not refused and not invitees:
            self.add_error("addresses", _("Give at least one e-mail address."))
        self.invitees = invitees
        return data


class InvitationAddressForm(forms.Form):
    email = forms.EmailField(label=gettext_lazy("E-mail address"))


def birth_date_field(label: Any) -> forms.DateField:
    """GEN-01: the date of birth, optional; the service refuses impossible dates next to it."""
    return forms.DateField(
        label=label,
        required=False,
        widget=forms.DateInput(attrs={"type": "date", "autocomplete": "bday"}, format="%Y-%m-%d"),
        help_text=gettext_lazy(
            "Players must be 18 or older on the day of a game (GEN-01). Only you and, as an "
            "age, the admins of your chronicles see it; storytellers and players never do."
        ),
    )


class AcceptNewForm(forms.Form):
    name = forms.CharField(
        label=gettext_lazy("Your name"),
        max_length=150,
        help_text=gettext_lazy("As the storytellers and other players know you."),
    )
    username = forms.CharField(
        label=gettext_lazy("Username"),
        max_length=150,
        help_text=gettext_lazy("You log in with it. Letters, digits and @ . + - _ only."),
    )
    password = forms.CharField(
        label=gettext_lazy("Password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password_again = forms.CharField(
        label=gettext_lazy("Password again"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    birth_date = birth_date_field(gettext_lazy("Date of birth (optional)"))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("password") and data.get("password") != data.get("password_again"):
            self.add_error("password_again", _("The two passwords differ."))
        return data


class RoleForm(forms.Form):
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=Role.choices)


class RemoveForm(forms.Form):
    characters = forms.ChoiceField(
        label=gettext_lazy("Their characters"),
        choices=[
            ("retired", gettext_lazy("Retire them")),
            ("npc", gettext_lazy("Keep them as NPCs")),
        ],
        initial="retired",
        widget=forms.RadioSelect,
    )

    def clean_characters(self) -> str:
        value = str(self.cleaned_data["characters"])
        if value not in CHARACTER_FATES:
            raise ValidationError(_("Choose retired or NPC."))
        return value


class AccountNameForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Your name"), max_length=150)


class BirthDateForm(forms.Form):
    birth_date = birth_date_field(gettext_lazy("Date of birth"))


class EmailChangeForm(forms.Form):
    email = forms.EmailField(
        label=gettext_lazy("New e-mail address"),
        help_text=gettext_lazy("We send a link to the new address; it changes when you follow it."),
    )
