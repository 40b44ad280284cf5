"""The interface's template helpers: the one way a page, an e-mail or an API text shows a moment
in the chronicle's time zone (issue 12: "one template filter does it everywhere")."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from typing import Any

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

register = template.Library()
StrOrPromise = str | Promise

# "Tue 8 Dec 2026, 23:59 EST": the day, the date and the zone, so nobody has to guess.
MOMENT_FORMAT = "D j M Y, H:i T"
DAY_FORMAT = "D j M Y"


def _zone(where: Any) -> dt.tzinfo:
    """The zone of a chronicle, of an object that has one, of a zone name, or the active one
    (chronicle pages activate their chronicle's zone: chronicle.views.chronicle_page)."""
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
        return _zone(chronicle)
    return timezone.get_current_timezone()


def moment_text(value: dt.datetime, where: Any = None) -> str:
    """A moment as plain text in the chronicle's zone (for e-mails and API text)."""
    return date_format(value.astimezone(_zone(where)), MOMENT_FORMAT)


@register.filter
def when(value: dt.datetime | dt.date | None, where: Any = None) -> SafeString | str:
    """`{{ cycle.deadline_at|when }}` or `{{ x|when:chronicle }}`: a <time> element whose
    text is the moment in the chronicle's zone and whose datetime attribute carries the offset
    (the time-zone crawl reads both). A date alone (a game's day) has no zone and shows as one."""
    if value is None or value == "":
        return ""
    if not isinstance(value, dt.datetime):
        return format_html(
            '<time datetime="{}">{}</time>', value.isoformat(), date_format(value, DAY_FORMAT)
        )
    local = value.astimezone(_zone(where))
    return format_html(
        '<time datetime="{}">{}</time>', local.isoformat(), date_format(local, MOMENT_FORMAT)
    )


@register.filter
def day(value: dt.datetime | dt.date | None, where: Any = None) -> SafeString | str:
    """Only the day ("Tue 8 Dec 2026"); a moment is first put in the chronicle's zone."""
    if value is None or value == "":
        return ""
    if isinstance(value, dt.datetime):
        value = value.astimezone(_zone(where)).date()
    return format_html(
        '<time datetime="{}">{}</time>', value.isoformat(), date_format(value, DAY_FORMAT)
    )


# The navigation, grouped by role (issue 12): each entry is its label, the page it opens and
# the pages that count as "inside" it (for aria-current).
NavEntry = tuple[StrOrPromise, str, tuple[str, ...]]
PLAYER_NAV: list[NavEntry] = [
    (_("My characters"), "character_list", ("character_", "purchase_", "haven_", "search_")),
    (_("Downtime"), "downtime_home", ("downtime_", "votes_form", "action_form", "loan_form")),
    (_("Results"), "results", ("results", "report_list")),
    (_("Games"), "game_list", ("game_", "cycle_detail", "cycle_list")),
]
STORYTELLER_NAV: list[NavEntry] = [
    (_("Desk"), "desk", ("desk",)),
    (_("Resolution"), "cycle_resolution_list", ("cycle_", "outcome_override")),
    (_("Characters"), "character_list", ("character_", "npc_volunteers", "diablerie_")),
    (_("Havens and searches"), "haven_list", ("haven_", "search_", "hidden_", "reinforcement_")),
    (_("Purchases"), "purchase_queue", ("purchase_",)),
    (_("Reports"), "report_picks", ("report_",)),
]
ADMIN_NAV: list[NavEntry] = [
    (_("Games"), "game_list", ("game_",)),
    (_("Votes and XP"), "vote_tally", ("vote_",)),
    (_("People"), "people", ("people", "invitation_", "member_", "import_")),
    (_("Settings"), "house_rules", ("house_rules", "chronicle_export", "style_guide")),
]


@register.inclusion_tag("components/site_nav.html", takes_context=True)
def site_nav(context: template.Context) -> dict[str, Any]:
    """The chronicle's navigation for the viewer's role: a player's group, or a storyteller's,
    and an admin's besides. Each link knows whether the page shown is inside it."""
    membership = context.get("membership")
    request = context.get("request")
    if membership is None or request is None:
        return {"groups": []}
    match = getattr(request, "resolver_match", None)
    current = match.url_name if match else ""
    role = membership.role
    # (label, entries, as a menu): an admin's group folds into one menu beside the
    # storytellers' links, so the bar stays one row at 1280 px.
    groups: list[tuple[StrOrPromise, list[NavEntry], bool]] = []
    if role == "player":
        groups.append((_("Player"), PLAYER_NAV, False))
    else:
        groups.append((_("Storytelling"), STORYTELLER_NAV, False))
    if role == "admin":
        groups.append((_("Admin"), ADMIN_NAV, True))
    slug = membership.chronicle.slug
    drawn = []
    claimed = False
    for label, entries, menu in groups:
        links = []
        for text, url_name, inside in entries:
            # One link is current: the first whose pages include this one.
            here = not claimed and bool(current) and current.startswith(inside)
            claimed = claimed or here
            links.append({"text": text, "url": reverse(url_name, args=[slug]), "current": here})
        drawn.append({"label": label, "links": links, "menu": menu})
    return {"groups": drawn}
