"""Calendar feeds: the chronicle's games and deadlines as iCalendar, for a logged-in member and
at a member's private address (for phone calendars), and making that address anew."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from .. import access
from ..languages import in_language_of
from ..services import calendar


def _ics(body: bytes, slug: str) -> HttpResponse:
    response = HttpResponse(body, content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}.ics"'
    return response


@login_required
@require_safe
@never_cache
def calendar_member(request: HttpRequest, slug: str) -> HttpResponse:
    """The feed for a logged-in member, in the language of the request."""
    membership = access.membership_for(request.user, slug)
    return _ics(calendar.feed_ics(membership), slug)


@require_safe
@never_cache
def calendar_feed(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """The feed at a member's private address: no login (the token is the key), in the
    owner's language whoever fetches it."""
    feed = calendar.feed_for_token(slug, token)
    if feed is None:
        raise Http404("No such calendar.")
    with in_language_of(feed.membership.user):
        body = calendar.feed_ics(feed.membership)
    response = _ics(body, slug)
    response["X-Robots-Tag"] = "noindex"
    return response


@login_required
@require_POST
def calendar_feed_renew(request: HttpRequest, slug: str) -> HttpResponse:
    membership = access.membership_for(request.user, slug)
    _feed, renewed = calendar.calendar_feed_renew(membership=membership)
    name = membership.chronicle.name
    if renewed:
        text = _(
            "Your calendar address for %(name)s is new and the old one no longer works: paste "
            "the new one into your phone's calendar."
        )
    else:
        text = _(
            "Your calendar address for %(name)s is ready: paste it into your phone's calendar."
        )
    messages.success(request, text % {"name": name})
    return redirect(reverse("account") + "#calendars")
