"""The game's sign-in sheet as a PDF for the door (issue 17): the players the sign-in page lists,
each with their playable characters, a space to sign and a box for the waiver.

It lives with the characters because it lists them, as the People page does: the game, the
players and who may print it (staff, as for the sign-in page) are the chronicle app's.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from chronicle import access as chronicle_access
from chronicle.pdf import pdf_filename, pdf_response

from .. import access
from ..models import Approval, Status

# Empty rows after the players, for whoever comes without being on the list yet.
BLANK_ROWS = 3


@login_required
@require_GET
def game_sign_in_pdf(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """Three queries after the membership, whatever the number of players: the game, the
    players (with their users), their playable characters."""
    membership = chronicle_access.membership_for(request.user, slug)
    game = chronicle_access.game_for_edit(membership, number)
    players = list(chronicle_access.players_of(membership).order_by("user__username"))
    playing: dict[int, list[str]] = defaultdict(list)
    for player_id, name in (
        access.characters_visible_to(membership)
        .filter(
            player_id__in=[m.user_id for m in players],
            status=Status.ACTIVE,
            approval=Approval.APPROVED,
        )
        .order_by("name", "pk")
        .values_list("player_id", "name")
    ):
        playing[player_id].append(name)
    rows = [
        {
            "name": m.user.get_full_name() or m.user.get_username(),
            "username": m.user.get_username(),
            "characters": playing.get(m.user_id, []),
        }
        for m in players
    ]
    chronicle = membership.chronicle
    starts_at = (
        dt.datetime.combine(game.date, game.start_time, tzinfo=chronicle.tz)
        if game.start_time
        else None
    )
    return pdf_response(
        request,
        "chronicle/sign_in_pdf.html",
        membership,
        filename=pdf_filename(slug, "game", game.number, "sign-in"),
        game=game,
        starts_at=starts_at,
        rows=rows,
        blank_rows=range(BLANK_ROWS),
    )
