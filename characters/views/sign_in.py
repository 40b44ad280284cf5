"""The game's sign-in sheet as a PDF for the door (issue 17): the players the sign-in page lists,
each with their playable characters (to circle the one played, HAV-06; black veins marked,
XP-04), a space to sign and a box for the waiver.

It lives with the characters because it lists them, as the People page does: the game, the
players and who may print it (staff, as for the sign-in page) are the chronicle app's.
"""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from chronicle import access as chronicle_access
from chronicle.pdf import pdf_filename, pdf_response

from ..attendance import playable

# Empty rows after the players, for whoever comes without being on the list yet.
BLANK_ROWS = 3


@login_required
@require_GET
def game_sign_in_pdf(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """Four queries after the membership, whatever the number of players: the game, the
    players (with their users), their playable characters and those characters' diableries."""
    membership = chronicle_access.membership_for(request.user, slug)
    game = chronicle_access.game_for_edit(membership, number)
    players = list(chronicle_access.players_of(membership).order_by("user__username"))
    # The characters each player may be signed in as, marked where black veins show on the
    # game's day (XP-04: they enter only with a storyteller's permission).
    playing = playable(
        chronicle=membership.chronicle, player_ids=[m.user_id for m in players], day=game.date
    )
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
