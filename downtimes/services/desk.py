"""The storytellers' influence desk (issue 5): statuses, assignees, private notes, results
released later, bulk approval, at-game requests (INF-04) and the not-submitted list.

Two STs editing one item at once: every change names the `version` it was made from; a stale
version is refused and nothing is written, so neither change is lost silently. Bulk changes
bump every touched item's version, so a form opened before them is refused too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, QuerySet, Window
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from characters import rules as character_rules
from characters.models import (
    Approval,
    Character,
    PurchaseStatus,
    SpendMoment,
    Status,
    XpPurchase,
)
from characters.services.common import refusal
from characters.services.influence import influence_spend
from characters.services.notify import notify
from chronicle import rules as chronicle_rules
from chronicle.access import STAFF_ROLES
from chronicle.models import Cycle, Game, Membership
from chronicle.moments import moment_text

from .. import ledger_words
from ..models import ActionKind, DeskItem, DeskStatus, ItemKind, Submission, SubmissionStatus

STALE_VERSION = gettext_noop(
    "Another storyteller changed this item while you were editing; here is their version."
)
# Bulk approval moves only items no ST has decided yet: it never overturns a rejection or
# reopens a resolved item.
UNDECIDED = (DeskStatus.NEW, DeskStatus.IN_PROGRESS, DeskStatus.NEEDS_INFO)
WITHDRAWN = gettext_noop(
    "The player withdrew this item and its points were refunded: its status can no longer change."
)
# The XP purchase itself is decided on the purchase queue: approving its desk row would leave
# the purchase pending while the desk said "approved".
PURCHASE_ELSEWHERE = gettext_noop("Sign off XP purchases on the purchase queue (XP-01).")
PURCHASE_DECISIONS = (DeskStatus.APPROVED, DeskStatus.REJECTED)
DESCRIPTION_MAX = 4000


# What a row of the desk's list shows (templates/downtimes/desk_results.html).
ROW_FIELDS = (
    *("cycle_id", "kind", "influence", "points", "action", "power", "description", "status"),
    *("target_name", "target_text", "purchase_id", "requested_at", "withdrawn_at"),
    *("created_at", "released_at", "version"),
    *("character__name", "assignee__username", "target_character__name"),
    *("target_structure__name", "lender__name"),
)


def desk_items(*, cycle: Cycle | int) -> QuerySet[DeskItem]:
    """Every item of the cycle with what a desk row shows, in one query. Only what a row
    shows is joined and read (the open item reads its own): PostgreSQL plans each join added
    to the page's query (with nine tables planning took longer than reading the page), and a
    whole character is some forty columns, four times a row."""
    return (
        DeskItem.objects.filter(cycle=cycle)
        .select_related("character", "assignee", "target_character", "target_structure", "lender")
        .only(*ROW_FIELDS)
    )


def staff_of(cycle: Cycle, user: User | None) -> bool:
    """Whether `user` is one of the cycle's chronicle's storytellers or admins."""
    if user is None:
        return False
    return Membership.objects.filter(
        chronicle_id=cycle.chronicle_id, user=user, role__in=STAFF_ROLES
    ).exists()


@transaction.atomic
def desk_item_update(
    *,
    item: DeskItem,
    by: User,
    version: int,
    status: str | None = None,
    assignee: User | None = None,
    unassign: bool = False,
    st_notes: str | None = None,
    result: str | None = None,
    now: dt.datetime | None = None,
) -> DeskItem:
    """Change an item's status, assignee, private notes or result, from `version`.

    `None` leaves a field as it is; `unassign=True` clears the assignee. A stale `version`
    is refused with `STALE_VERSION` (field "version"); an assignee must be a storyteller or
    admin of the item's chronicle. Nothing changes and the version stays when nothing differs.

    A withdrawn item's status never changes (`WITHDRAWN`); an XP purchase is approved or
    rejected on the purchase queue, not here (`PURCHASE_ELSEWHERE`, XP-01). Changing the
    result or status of a released item takes the release back, so the player never reads a
    result the STs are still working on: the next `desk_release` publishes the new one.
    """
    now = now or timezone.now()
    locked = DeskItem.objects.select_for_update().select_related("cycle").get(pk=item.pk)
    if locked.version != version:
        raise ValidationError({"version": gettext(STALE_VERSION)})
    changes: dict[str, object] = {}
    if status is not None:
        if status not in DeskStatus.values:
            raise ValidationError(
                {
                    "status": gettext("Choose one of %(choices)s for the status.")
                    % {"choices": ", ".join(DeskStatus.values)}
                }
            )
        changes["status"] = status
    if unassign:
        changes["assignee_id"] = None
    elif assignee is not None:
        if not staff_of(locked.cycle, assignee):
            raise ValidationError(
                {
                    "assignee": gettext(
                        "Only a storyteller or admin of this chronicle can take an item."
                    )
                }
            )
        changes["assignee_id"] = assignee.pk
    if st_notes is not None:
        changes["st_notes"] = st_notes
    if result is not None:
        changes["result"] = result
    changes = {name: value for name, value in changes.items() if getattr(locked, name) != value}
    if not changes:
        return locked
    if "status" in changes:
        if locked.withdrawn_at is not None:
            raise ValidationError({"status": gettext(WITHDRAWN)})
        if locked.kind == ItemKind.PURCHASE and changes["status"] in PURCHASE_DECISIONS:
            raise ValidationError({"status": gettext(PURCHASE_ELSEWHERE)})
    if locked.released_at is not None and ("status" in changes or "result" in changes):
        changes["released_at"] = None
    for name, value in changes.items():
        setattr(locked, name, value)
    locked.version += 1
    locked.updated_at = now
    locked.save(update_fields=[*changes, "version", "updated_at"])
    return locked


@transaction.atomic
def desk_bulk_update(
    *,
    cycle: Cycle,
    by: User,
    status: str,
    items: QuerySet[DeskItem] | None = None,
    ids: Iterable[int] | None = None,
    now: dt.datetime | None = None,
) -> dict[str, int]:
    """Move a filtered set of the cycle's items to `status` in one UPDATE (e.g. bulk approve).

    Only undecided items (new, in progress, needs information) move, and each moved item's
    version is bumped so an edit form opened before is told. Withdrawn items never move, nor
    XP purchases to approved/rejected (decided on the purchase queue, XP-01). Items of
    another cycle in `items` or `ids` are ignored. Returns {"updated": n, "skipped": m}.
    """
    if status not in DeskStatus.values:
        raise ValidationError(
            {
                "status": gettext("Choose one of %(choices)s.")
                % {"choices": ", ".join(DeskStatus.values)}
            }
        )
    if (items is None) == (ids is None):
        raise ValueError("Pass either items or ids.")
    now = now or timezone.now()
    chosen = DeskItem.objects.filter(cycle=cycle)
    if items is not None:
        chosen = chosen.filter(pk__in=items.order_by().values("pk"))
    else:
        chosen = chosen.filter(pk__in=list(ids or ()))
    total = chosen.count()
    movable = chosen.filter(status__in=UNDECIDED, withdrawn_at__isnull=True).exclude(status=status)
    if status in PURCHASE_DECISIONS:
        movable = movable.exclude(kind=ItemKind.PURCHASE)
    updated = movable.update(status=status, version=F("version") + 1, updated_at=now)
    return {"updated": updated, "skipped": total - updated}


@transaction.atomic
def desk_release(*, cycle: Cycle, by: User | None, now: dt.datetime | None = None) -> int:
    """Let players read the results of the cycle's resolved items (a second call releases
    only what was resolved, or changed after a release, since). Withdrawn items are never
    released. The pipeline calls it on release too."""
    now = now or timezone.now()
    return DeskItem.objects.filter(
        cycle=cycle,
        status=DeskStatus.RESOLVED,
        released_at__isnull=True,
        withdrawn_at__isnull=True,
    ).update(released_at=now, version=F("version") + 1, updated_at=now)


def check_at_game_moment(cycle: Cycle, moment: dt.datetime, field: str = "requested_at") -> None:
    """INF-04: a moment typed for a game's request must fall in that game's window
    (`chronicle.rules.at_game_window`): refused beside `field` otherwise (the year 1, a moment of
    another cycle)."""
    game = cycle.game
    previous = (
        Game.objects.filter(chronicle_id=cycle.chronicle_id, date__lt=game.date)
        .order_by("-date")
        .values_list("date", flat=True)
        .first()
    )
    tz = cycle.chronicle.tz
    opens, closes = chronicle_rules.at_game_window(game.date, previous, cycle.deadline_at, tz)
    try:
        chronicle_rules.check_moment_in_window(moment, opens=opens, closes=closes, tz=tz)
    except ValueError as exc:
        raise ValidationError({field: str(exc)}) from None


@transaction.atomic
def at_game_request_record(
    *,
    cycle: Cycle,
    character: Character,
    by: User,
    action: str,
    description: str,
    requested_at: dt.datetime,
    key: str,
    influence: str = "",
    points: int = 0,
    now: dt.datetime | None = None,
) -> tuple[DeskItem, bool]:
    """INF-04: an influence request made at the game (leaving the city, starting a game
    outside it, ...), recorded and time-stamped by an ST. Points spend at once as spent at
    the game (INF-03). Once per `key` and character: returns (item, created)."""
    now = now or timezone.now()
    item_key = f"{cycle.pk}:at_game:{key}"[:120]  # keys are per cycle, like the players'.
    existing = DeskItem.objects.filter(character=character, key=item_key).first()
    if existing is not None:
        return existing, False
    if character.chronicle_id != cycle.chronicle_id:
        raise ValidationError({"character": gettext("No character of this chronicle has that id.")})
    if action not in ActionKind.values:
        raise ValidationError(
            {
                "action": gettext("Choose one of %(choices)s.")
                % {"choices": ", ".join(ActionKind.values)}
            }
        )
    description = description.strip()
    if not description:
        raise ValidationError(
            {"description": gettext("Say what the character asked for: the ST signs it (INF-04).")}
        )
    if len(description) > DESCRIPTION_MAX:
        raise ValidationError(
            {
                "description": gettext("Keep the request under %(max)s characters.")
                % {"max": DESCRIPTION_MAX}
            }
        )
    check_at_game_moment(cycle, requested_at)
    if points < 0:
        raise ValidationError({"points": gettext("Points cannot be negative (INF-03).")})
    if points and not influence:
        raise ValidationError(
            {"influence": gettext("Say which influence the points come from (INF-03).")}
        )
    if points:
        try:
            # INF-02: the action must accept the type its points come from.
            character_rules.check_influence_use(action, influence)
        except ValueError as exc:
            raise refusal(exc, "influence") from None
    spend = None
    if points:
        spend, _ = influence_spend(
            character=character,
            cycle=cycle,
            influence=influence,
            points=points,
            reason=ledger_words.AT_GAME_ACTION % {"action": ledger_words.action_label(action)},
            key=f"desk:{item_key}"[:120],
            actor=by,
            moment=SpendMoment.GAME,
            field="points",
            now=now,
        )
    item = DeskItem.objects.create(
        cycle=cycle,
        kind=ItemKind.AT_GAME,
        character=character,
        influence=influence if points else "",
        points=points,
        action=action,
        description=description,
        spend=spend,
        recorded_by=by,
        requested_at=requested_at,
        created_at=now,
        updated_at=now,
        key=item_key,
    )
    return item, True


# --- Who has not submitted -----------------------------------------------------------------------


def not_submitted(*, cycle: Cycle) -> QuerySet[Character]:
    """Active, approved player characters of the cycle's chronicle without a submitted
    downtime for it (a draft does not count)."""
    submitted = Submission.objects.filter(
        cycle=cycle, character=OuterRef("pk"), status=SubmissionStatus.SUBMITTED
    )
    return (
        Character.objects.filter(
            chronicle_id=cycle.chronicle_id,
            status=Status.ACTIVE,
            approval=Approval.APPROVED,
            player__isnull=False,
        )
        .filter(~Exists(submitted))
        .select_related("player")
        .order_by("name", "pk")
    )


# The desk names this many of those who have not submitted, and counts the rest: a list of
# 300 names is not read, and cost more to draw than the rest of the page.
WAITING_SHOWN = 50


def not_submitted_sample(
    *, cycle: Cycle, limit: int = WAITING_SHOWN
) -> tuple[list[dict[str, Any]], int]:
    """The names (`name`, `player__username`) of the first `limit` of `not_submitted` and
    how many there are in all, in one query: the total rides on each row as a window count."""
    rows = list(
        not_submitted(cycle=cycle)
        .annotate(total=Window(Count("pk")))
        .values("name", "player__username", "total")[:limit]
    )
    return rows, (rows[0]["total"] if rows else 0)


def _reminder_subject(character: Character) -> str:
    return gettext("Your downtime for %(name)s is not in yet") % {"name": character.name}


def _reminder_body(cycle: Cycle, character: Character) -> str:
    return gettext(
        "The storytellers have not received %(name)s's downtime for the cycle after game "
        "%(number)s. The deadline is %(deadline)s."
    ) % {
        "name": character.name,
        "number": cycle.game.number,
        "deadline": moment_text(cycle.deadline_at, cycle.chronicle),
    }


def reminder_mail(
    *,
    cycle: Cycle,
    characters: Iterable[Character | int],
    by: User,
    now: dt.datetime | None = None,
) -> int:
    """E-mail the players of `characters` who still have not submitted, once per cycle,
    character and chronicle day (a double click, or two STs clicking, sends one mail).
    Returns how many mails were queued."""
    now = now or timezone.now()
    ids = [c if isinstance(c, int) else c.pk for c in characters]
    day = now.astimezone(cycle.chronicle.tz).date().isoformat()
    sent = 0
    with transaction.atomic():
        for character in not_submitted(cycle=cycle).filter(pk__in=ids):
            # Worded by the mail service in the player's language (callables), not the ST's.
            sent += notify(
                character=character,
                key=f"dt-desk-reminder:{cycle.pk}:{character.pk}:{day}",
                subject=partial(_reminder_subject, character),
                body=partial(_reminder_body, cycle, character),
                now=now,
            )
    return sent


# --- XP purchases decided on the purchase queue (XP-01) ----------------------------------------

# The desk item of a purchase filed from a downtime mirrors the purchase's decision, which is
# taken on the purchase queue (the characters app cannot reach the desk: it sits a floor down).
PURCHASE_DESK_STATUS: dict[str, str] = {
    PurchaseStatus.APPROVED: DeskStatus.APPROVED,
    PurchaseStatus.REJECTED: DeskStatus.REJECTED,
}


def desk_follow_purchase(*, purchase: XpPurchase, now: dt.datetime | None = None) -> int:
    """Bring the purchase's desk item in line with its sign-off or withdrawal; returns the
    rows changed (0 when already in line, so a re-save changes nothing)."""
    now = now or timezone.now()
    items = DeskItem.objects.filter(purchase_id=purchase.pk)
    if purchase.status == PurchaseStatus.WITHDRAWN:
        return items.filter(withdrawn_at__isnull=True).update(
            withdrawn_at=now, updated_at=now, version=F("version") + 1
        )
    status = PURCHASE_DESK_STATUS.get(purchase.status)
    if status is None:
        return 0
    return items.exclude(status=status).update(
        status=status, updated_at=now, version=F("version") + 1
    )
