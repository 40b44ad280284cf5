"""Havens' searches and attacks: the shared constants and glue."""

from __future__ import annotations

import hashlib
import secrets

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from characters.models import Character, Status
from chronicle.access import STAFF_ROLES
from chronicle.models import Chronicle, Cycle, Membership
from chronicle.services import current_downtime

TARGET_NAME_MAX = 120
KEY_MAX = 120  # HiddenObject.key, HiddenObjectSearch.key, LockTest.key
PARTY_CODE_BYTES = 12  # token_urlsafe(12) is 16 characters, the column's length
# One answer for a code that is unknown, of another chronicle, or of a search no longer open:
# a code reveals nothing but that it can be joined.
UNKNOWN_CODE = gettext_noop(
    "No open search has that code; ask the searcher who shared it (HAV-25b)."
)
# One answer for a structure that does not exist and one the attacker has not found.
UNKNOWN_HAVEN = gettext_noop(
    "You know of no haven with that id; attack only a haven you found (HAV-25c)."
)
NO_OPEN_CYCLE = gettext_noop("No downtime is open right now to spend influence in (DT-01).")
CLOSED_CYCLE = gettext_noop(
    "This downtime's deadline has passed; it can no longer be withdrawn (DT-01)."
)


# --- Glue --------------------------------------------------------------------------------------


def _is_staff(user: User, chronicle: Chronicle | int) -> bool:
    return Membership.objects.filter(chronicle=chronicle, user=user, role__in=STAFF_ROLES).exists()


def _require_staff(user: User, chronicle: Chronicle | int) -> None:
    if not _is_staff(user, chronicle):
        raise PermissionDenied(_("Only the chronicle's storytellers may do this."))


def _require_player(user: User, character: Character) -> None:
    """A player acts for their own characters; storytellers for anyone's."""
    if character.player_id != user.pk and not _is_staff(user, character.chronicle_id):
        raise PermissionDenied(_("You may act only for your own characters."))


def _current_cycle(chronicle: Chronicle | int) -> Cycle:
    cycle = current_downtime(chronicle)
    if cycle is None:
        raise ValidationError(_(NO_OPEN_CYCLE))
    return cycle


def _active_target(chronicle: Chronicle | int, name: str) -> Character | None:
    """The one active character of exactly this name (case-insensitive), or None when no one
    or several have it; an ST links it then."""
    matches = list(
        Character.objects.filter(
            chronicle=chronicle, status=Status.ACTIVE, name__iexact=name.strip()
        )[:2]
    )
    return matches[0] if len(matches) == 1 else None


def _require_active(character: Character, rule: str, field: str = "character") -> None:
    if character.status != Status.ACTIVE:
        raise ValidationError(
            {
                field: _("%(name)s is not active and cannot act now (%(rule)s).")
                % {"name": character.name, "rule": rule}
            }
        )


def _target_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ValidationError(
            {"target_name": _("Name the character whose havens you seek (HAV-25b).")}
        )
    if len(name) > TARGET_NAME_MAX:
        raise ValidationError(
            {
                "target_name": _("Give the name in at most %(max)s letters (HAV-25b).")
                % {"max": TARGET_NAME_MAX}
            }
        )
    return name


def _short_key(key: str) -> str:
    """A key fits its 120-letter column: a longer one is hashed, never cut, so two different
    keys never become one."""
    if len(key) <= KEY_MAX:
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def _new_party_code() -> str:
    return secrets.token_urlsafe(PARTY_CODE_BYTES)[:16]
