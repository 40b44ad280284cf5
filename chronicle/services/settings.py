"""House-rule settings: putting one setting back to the rules' default (issue 12).

Saving the whole form is `chronicle_house_rules_update`; this removes a single override, so
an admin can undo one change without retyping the others. Like that service it locks the
chronicle row first (two admins at once each keep the other's changes) and moves open cycles'
deadlines when the deadline setting changes. Setting changes are not audited elsewhere, so
neither is this one.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from .. import rules
from ..models import Chronicle
from . import _reschedule_open_cycles


@transaction.atomic
def chronicle_house_rule_reset(*, chronicle: Chronicle, name: str) -> bool:
    """Remove the override of setting `name`, so the rules' default applies again. Returns
    False when the setting had no override (nothing changed); refuses an unknown name."""
    if name not in rules.HOUSE_RULE_FIELDS:
        raise ValidationError(_("There is no house-rule setting called %(name)s.") % {"name": name})
    locked = Chronicle.objects.select_for_update().get(pk=chronicle.pk)
    overrides = dict(locked.house_rule_overrides or {})
    if name not in overrides:
        return False
    del overrides[name]
    locked.house_rule_overrides = overrides
    locked.save(update_fields=["house_rule_overrides"])
    chronicle.house_rule_overrides = overrides
    _reschedule_open_cycles(locked)
    return True
