"""How Chronicle writes a moment for people: always in the chronicle's time zone, naming the
zone ("Tue 8 Dec 2026, 23:59 EST"). Pages use the `when`/`day` template filters
(chronicle.templatetags.chronicle_ui); e-mails, API text and services use these functions."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from typing import Any

from django.utils import timezone, translation
from django.utils.formats import date_format

MOMENT_FORMAT = "D j M Y, H:i T"
DAY_FORMAT = "D j M Y"
# (moment, day) per language; the day and month names come from Django's own catalogs. Italian
# and Catalan write an abbreviated month in lower case ("Mar 8 dic 2026", "dt. 8 des. 2026").
FORMATS = {
    "en": (MOMENT_FORMAT, DAY_FORMAT),
    "it": ("D j b Y, H:i T", "D j b Y"),
    "ca": ("D j b Y, H:i T", "D j b Y"),
}


def _formats() -> tuple[str, str]:
    """The active language's formats ("it" for "it-ch"); English's for one without its own."""
    language = (translation.get_language() or "en").split("-")[0].lower()
    return FORMATS.get(language, FORMATS["en"])


def moment_format() -> str:
    return _formats()[0]


def day_format() -> str:
    return _formats()[1]


def zone_of(where: Any) -> dt.tzinfo:
    """The zone of a chronicle, of an object that has one (a cycle, a game), of a zone name, or
    the active one (chronicle pages activate their chronicle's: chronicle.views.chronicle_page)."""
    if where is None or where == "":
        return timezone.get_current_timezone()
    if isinstance(where, dt.tzinfo):
        return where
    if isinstance(where, str):
        return zoneinfo.ZoneInfo(where)
    tz = getattr(where, "tz", None)
    if isinstance(tz, dt.tzinfo):
        return tz
    chronicle = getattr(where, "chronicle", None)
    if chronicle is not None:
        return zone_of(chronicle)
    return timezone.get_current_timezone()


def local(value: dt.datetime, where: Any = None) -> dt.datetime:
    return value.astimezone(zone_of(where))


def moment_text(value: dt.datetime, where: Any = None) -> str:
    """A moment as plain text in the chronicle's zone, for e-mails and API text."""
    return date_format(local(value, where), moment_format())


def day_text(value: dt.datetime | dt.date, where: Any = None) -> str:
    if isinstance(value, dt.datetime):
        value = local(value, where).date()
    return date_format(value, day_format())
