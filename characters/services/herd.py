"""Herd blood (BLD-04, INF-02): the stored blood a released downtime spend of Herd gives.

The downtimes release calls `herd_blood_store` once per cycle, under the cycle's row lock and
its "released" guard, so each spend gives its blood exactly once. One INSERT for the whole
cycle: kine blood kept off the body has no limit to check (BLD-01 counts only blood on the
body, BLD-05 only kindred blood), so `records.stored_blood_add`'s per-row checks have nothing
to refuse here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.utils.translation import gettext_noop

from chronicle.models import Chronicle, Cycle
from chronicle.rules import settings_for
from chronicle.services import chronicle_today
from chronicle.stored_text import stored_sentences

from .. import rules
from ..models import DonorType, StoredBlood

# Stored in English and shown in each reader's language (chronicle.stored_text).
HERD_LOCATION = gettext_noop("Off the body, from Herd in downtime")
HERD_DONORS = gettext_noop("Herd")
stored_sentences(HERD_LOCATION)


def herd_blood_store(
    *, cycle: Cycle, chronicle: Chronicle, blood: Iterable[tuple[int, int]], now: dt.datetime
) -> list[StoredBlood]:
    """BLD-04: store `(character id, points)` of Herd blood for each released spend: kine blood
    above the normal pool, kept off the body, collected on the release day (chronicle time),
    unusable from BLD-03's date. Rows of 0 points store nothing."""
    today = chronicle_today(chronicle, now)
    unusable_from = rules.stored_blood_unusable_from(
        donor_type=DonorType.KINE,
        collected_on=today,
        **settings_for(rules.stored_blood_unusable_from, chronicle.house_rules_for(cycle)),
    )
    rows = [
        StoredBlood(
            holder_id=holder_id,
            location=HERD_LOCATION,
            on_body=False,
            points=points,
            donor_type=DonorType.KINE,
            donor_note=HERD_DONORS,
            collected_on=today,
            unusable_from=unusable_from,
        )
        for holder_id, points in blood
        if points > 0
    ]
    return StoredBlood.objects.bulk_create(rows, batch_size=500) if rows else []
