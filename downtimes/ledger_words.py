"""Reasons the downtimes write into the characters' ledgers (influence spends and refunds, XP
awards), kept in English and shown in each reader's language by `chronicle.stored_text` (the
characters' pages put a ledger's reasons through it). Registered by `DowntimesConfig.ready`,
with the labels of the influence actions they name."""

from __future__ import annotations

from django.utils import translation
from django.utils.translation import gettext_noop

from chronicle.stored_text import stored_sentences

# InfluenceSpend.reason
CASHED_IN = gettext_noop("Cashed in: no downtime (DT-03)")
DOWNTIME_ACTION = gettext_noop("Downtime: %(action)s")
AT_GAME_ACTION = gettext_noop("At the game: %(action)s")
WITHDRAWN = gettext_noop("Withdrawn from the downtime")
# XpEntry.reason: the outcome's title (steps.py words them; the XP ones are these).
XP_REASONS = (
    gettext_noop("%(name)s: base XP, no downtime (DT-03)"),
    gettext_noop("%(name)s: base XP, submitted downtime (DT-03)"),
    gettext_noop("%(name)s: game report picked (DT-05)"),
    gettext_noop("%(name)s: votes won: %(won)s (DT-07)"),
)


def action_label(action: str) -> str:
    """An influence action's label in English, as a ledger reason keeps it."""
    from .models import ActionKind

    with translation.override("en"):
        return str(ActionKind(action).label)


def register() -> None:
    from .models import ActionKind
    from .services.votes import CATEGORY_LABELS

    with translation.override("en"):
        labels = [str(label) for label in [*ActionKind.labels, *CATEGORY_LABELS.values()]]
    stored_sentences(CASHED_IN, DOWNTIME_ACTION, AT_GAME_ACTION, WITHDRAWN, *XP_REASONS, *labels)
