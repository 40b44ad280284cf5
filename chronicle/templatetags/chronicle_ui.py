"""The interface's template helpers: the one way a page, an e-mail or an API text shows a moment
in the chronicle's time zone (issue 12: "one template filter does it everywhere")."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.functional import Promise
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

from ..moments import day_format, moment_format, moment_text, zone_of
from ..stored_text import stored_text

__all__ = ["moment_text"]

register = template.Library()
StrOrPromise = str | Promise


@register.filter
def when(value: dt.datetime | dt.date | None, where: Any = None) -> SafeString | str:
    """`{{ cycle.deadline_at|when }}` or `{{ x|when:chronicle }}`: a <time> element whose
    text is the moment in the chronicle's zone and whose datetime attribute carries the offset
    (the time-zone crawl reads both). A date alone (a game's day) has no zone and shows as one."""
    if value is None or value == "":
        return ""
    if not isinstance(value, dt.datetime):
        return format_html(
            '<time datetime="{}">{}</time>', value.isoformat(), date_format(value, day_format())
        )
    local = value.astimezone(zone_of(where))
    return format_html(
        '<time datetime="{}">{}</time>', local.isoformat(), date_format(local, moment_format())
    )


@register.filter
def day(value: dt.datetime | dt.date | None, where: Any = None) -> SafeString | str:
    """Only the day ("Tue 8 Dec 2026"); a moment is first put in the chronicle's zone."""
    if value is None or value == "":
        return ""
    if isinstance(value, dt.datetime):
        value = value.astimezone(zone_of(where)).date()
    return format_html(
        '<time datetime="{}">{}</time>', value.isoformat(), date_format(value, day_format())
    )


@register.filter
def stored(value: str | None) -> str:
    """`{{ entry.reason|stored }}`: a sentence kept in English in the database (a ledger's
    reason), in the reader's language (chronicle.stored_text); typed text stays as typed."""
    return stored_text(value or "")


# The navigation, grouped by role (issue 12): each entry is its label, the page it opens and
# the pages that count as "inside" it (for aria-current).
NavEntry = tuple[StrOrPromise, str, tuple[str, ...]]
PLAYER_NAV: list[NavEntry] = [
    (_("My characters"), "character_list", ("character_", "purchase_", "haven_", "search_")),
    (_("Downtime"), "downtime_home", ("downtime_", "votes_form", "action_form", "loan_form")),
    (_("Results"), "results", ("results", "report_list")),
    (_("Games"), "game_list", ("game_", "cycle_detail", "cycle_list")),
    (_("Decisions"), "decision_list", ("decision_",)),
]
STORYTELLER_NAV: list[NavEntry] = [
    (_("Desk"), "desk", ("desk",)),
    (_("Resolution"), "cycle_resolution_list", ("cycle_", "outcome_override")),
    (_("Characters"), "character_list", ("character_", "npc_volunteers", "diablerie_")),
    (_("Havens and searches"), "haven_list", ("haven_", "search_", "hidden_", "reinforcement_")),
    (_("Purchases"), "purchase_queue", ("purchase_",)),
    (_("Reports"), "report_picks", ("report_",)),
    (_("Decisions"), "decision_list", ("decision_",)),
]
ADMIN_NAV: list[NavEntry] = [
    (_("Games"), "game_list", ("game_",)),
    (_("Votes and XP"), "vote_tally", ("vote_",)),
    (_("People"), "people", ("people", "invitation_", "member_", "import_")),
    (_("Settings"), "house_rules", ("house_rules", "chronicle_export", "style_guide")),
    (_("Mail log"), "mail_log", ("mail_log",)),
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


@register.inclusion_tag("components/cycle_badge.html")
def cycle_badge(cycle: Any) -> dict[str, Any]:
    """A cycle's stage as a badge. A scheduled game's cycle exists from the day the game is
    created, but its downtime has not begun: it reads "Not started", never "Open" (DT-01).
    Today is the chronicle's (chronicle pages render in its zone), so no query is needed."""
    not_started = cycle.status == "open" and cycle.game.date > timezone.localdate()
    return {"cycle": cycle, "not_started": not_started}


@register.inclusion_tag("components/inbox_link.html", takes_context=True)
def inbox_link(context: template.Context) -> dict[str, Any]:
    """The header's link to the inbox with its unread count, which chronicle.backends loads
    with the user (no query of its own)."""
    from ..services.mail import unread_count

    request = context.get("request")
    match = getattr(request, "resolver_match", None)
    current = match is not None and match.url_name in ("inbox", "message_detail")
    return {"count": unread_count(request) if request is not None else 0, "current": current}
