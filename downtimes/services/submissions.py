"""The player's downtime (DT-01/02): the draft, its six sections, submitting until the deadline,
and where a downtime stands (open, closed early, deadline passed). Its e-mails (receipts,
reminders) are in `submissions_mail`, its votes (section 6) in `votes_cast`.

Every writer here locks the submission row first, so a double click or two tabs of the same
player queue instead of racing, then refuses anything after the deadline (DT-01: 23:59 of the
deadline day in the chronicle's time, `cycle.deadline_at`) before writing. Influence actions
spend through the havens services or `influence_spend` (INF-03), so what a character may spend
is checked in one place under the character's row lock.

Lock order: submission row, then the character row (taken by the spending services).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import partial

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from characters import rules as character_rules
from characters.models import (
    Approval,
    Character,
    InfluenceLoan,
    PurchaseMoment,
    PurchaseStatus,
    Status,
    XpPurchase,
)
from characters.services.common import refusal
from characters.services.influence import (
    influence_left,
    influence_refund,
    influence_spend,
)
from characters.services.ledger import xp_balance
from characters.services.notify import notify
from characters.services.purchases import purchase_request, purchase_withdraw
from chronicle.models import Chronicle, Cycle, CycleStatus
from chronicle.moments import moment_text
from chronicle.services import current_downtime
from havens.models import (
    Find,
    Ownership,
    Project,
    ProjectKind,
    ProjectStatus,
    Structure,
    StructureStatus,
)
from havens.services.ownership import project_contribute
from havens.services.searches import (
    influence_attack_submit,
    influence_attack_withdraw,
    search_submit,
    search_withdraw,
)

from .. import ledger_words, rules
from ..models import (
    ActionKind,
    DeskItem,
    DeskStatus,
    ItemKind,
    PowerKind,
    Submission,
    SubmissionStatus,
)
from .submissions_mail import deadline_text as _deadline_text
from .submissions_mail import reminders_send, submission_summary

NAME_MAX = 120
TEXT_MAX = 300
DESCRIPTION_MAX = 5000
# Items the STs have decided stay as they are: the player may no longer take them back.
DECIDED = (DeskStatus.APPROVED, DeskStatus.REJECTED, DeskStatus.RESOLVED)
STALE = gettext_noop(
    "This downtime was changed in another tab or window since this page was loaded; nothing "
    "was saved. Reload to see the latest version (your text is still below, copy it first)."
)
# `% {"rule": ...}` after gettext.
NO_CHARACTER = gettext_noop("No active character has that exact name (%(rule)s).")
NO_PLAYER = gettext_noop("No player of this chronicle has that username (DT-06).")
# HAV-04: a haven the character may not act on answers exactly like one that does not exist.
NO_HAVEN = gettext_noop("No such haven.")


# --- Helpers -----------------------------------------------------------------------------------


def _receipt_subject(character: Character) -> str:
    return gettext("Downtime received: %(name)s") % {"name": character.name}


def _choose_influence() -> str:
    return gettext("Choose one of %(choices)s (INF-01).") % {
        "choices": ", ".join(character_rules.INFLUENCE_TYPES)
    }


def _now(now: dt.datetime | None) -> dt.datetime:
    return now or timezone.now()


def deadline_passed(cycle: Cycle, now: dt.datetime) -> bool:
    """DT-01: changes are accepted strictly before the deadline moment (23:59 of the deadline
    day, chronicle time: `chronicle.rules.deadline_moment`), and never once the cycle left
    "open"."""
    return cycle.status != CycleStatus.OPEN or now >= cycle.deadline_at


class DowntimeState(StrEnum):
    """Where a downtime stands for its players, as the page, the API and the refusals say it."""

    OPEN = "open"
    CLOSED_EARLY = "closed_early"  # the storytellers closed it before its deadline
    DEADLINE_PASSED = "deadline_passed"


def downtime_state(cycle: Cycle, now: dt.datetime) -> DowntimeState:
    """DT-01 / DT-10: open until its deadline; "closed early" when the storytellers closed it
    before the deadline (`closed_at` earlier than `deadline_at`, and so it stays through
    resolution and release); otherwise its deadline has passed (the deadline task may not
    have run yet: `now` at or past the deadline is enough)."""
    if cycle.status == CycleStatus.OPEN:
        return DowntimeState.OPEN if now < cycle.deadline_at else DowntimeState.DEADLINE_PASSED
    if cycle.closed_at is not None and cycle.closed_at < cycle.deadline_at:
        return DowntimeState.CLOSED_EARLY
    return DowntimeState.DEADLINE_PASSED


def state_text(cycle: Cycle, now: dt.datetime) -> str:
    """The downtime's state in one plain sentence, with its moments in the chronicle's zone."""
    state = downtime_state(cycle, now)
    if state == DowntimeState.OPEN:
        return gettext("Open until %(deadline)s.") % {"deadline": _deadline_text(cycle)}
    if state == DowntimeState.CLOSED_EARLY:
        assert cycle.closed_at is not None
        return gettext(
            "The storytellers closed this downtime early, on %(closed)s, to resolve it: it can "
            "no longer be changed."
        ) % {"closed": moment_text(cycle.closed_at, cycle.chronicle)}
    return gettext(
        "The deadline (%(deadline)s) has passed: this downtime can no longer be changed."
    ) % {"deadline": _deadline_text(cycle)}


def _require_open(cycle: Cycle, now: dt.datetime) -> None:
    if downtime_state(cycle, now) != DowntimeState.OPEN:
        raise ValidationError(state_text(cycle, now))


def _require_player(by: User, character: Character) -> None:
    """A downtime is its player's own words: nobody else (not even an ST) writes it."""
    if character.player_id != by.pk:
        raise PermissionDenied(gettext("Only the character's player may write its downtime."))


def _lock(submission: Submission) -> Submission:
    return (
        Submission.objects.select_for_update(of=("self",))
        .select_related("cycle", "cycle__chronicle", "character", "character__player")
        .get(pk=submission.pk)
    )


def _writable(submission: Submission, by: User, now: dt.datetime) -> Submission:
    locked = _lock(submission)
    _require_player(by, locked.character)
    _require_open(locked.cycle, now)
    # Spends, searches and purchases land in the current downtime (INF-03, DIS-08): a
    # submission of an earlier cycle still open (a game came before its deadline) is closed to
    # changes, or its items and their spends would sit in different cycles.
    current = current_downtime(locked.cycle.chronicle, now=now)
    if current is None or current.pk != locked.cycle_id:
        raise ValidationError(
            gettext(
                "A later game has started the next downtime: this one can no longer be changed."
            )
        )
    return locked


def _touch(submission: Submission, now: dt.datetime) -> None:
    Submission.objects.filter(pk=submission.pk).update(updated_at=now)
    submission.updated_at = now


def _text(value: str, field: str, limit: int, rule: str) -> str:
    value = (value or "").strip()
    if len(value) > limit:
        raise ValidationError(
            {
                field: gettext("Keep this to at most %(limit)s characters (%(rule)s).")
                % {"limit": limit, "rule": rule}
            }
        )
    return value


def active_character_named(chronicle_id: int, name: str) -> Character | None:
    """The one active character of exactly this name (case-insensitive), or None when no one
    or several have it."""
    matches = list(
        Character.objects.filter(
            chronicle_id=chronicle_id, status=Status.ACTIVE, name__iexact=name.strip()
        )[:2]
    )
    return matches[0] if len(matches) == 1 else None


def _existing_item(character: Character, cycle: Cycle, key: str) -> DeskItem | None:
    return DeskItem.objects.filter(character=character, cycle=cycle, key=key).first()


def _item_key(cycle: Cycle, prefix: str, key: str) -> str:
    """The stored key, scoped to the cycle: a client reusing its key next month makes a new
    item (and a new spend), not a silent replay of last month's."""
    key = (key or "").strip()
    if not key:
        raise ValidationError({"key": gettext("Every change needs an idempotency key.")})
    return f"{cycle.pk}:{prefix}:{key}"[:120]


# --- The submission ----------------------------------------------------------------------------


@transaction.atomic
def submission_for_edit(
    *, character: Character, cycle: Cycle, by: User, now: dt.datetime | None = None
) -> Submission:
    """DT-01/02: the character's downtime of `cycle`, created as a draft on first use. Refused
    after the deadline, and for a character that is not the player's own, approved and
    active."""
    now = _now(now)
    _require_player(by, character)
    if character.chronicle_id != cycle.chronicle_id:
        raise PermissionDenied(gettext("This character plays in another chronicle."))
    if character.approval != Approval.APPROVED or character.status != Status.ACTIVE:
        raise ValidationError(
            {"character": gettext("Only an approved, active character writes a downtime (DT-02).")}
        )
    existing = Submission.objects.filter(cycle=cycle, character=character).first()
    _require_open(cycle, now)
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return Submission.objects.create(
                cycle=cycle, character=character, player=by, created_at=now, updated_at=now
            )
    except IntegrityError:
        # Two first loads at once: the other one made it.
        return Submission.objects.get(cycle=cycle, character=character)


@transaction.atomic
def submission_save(
    *,
    submission: Submission,
    by: User,
    notes: str | None = None,
    game_report: str | None = None,
    version: int,
    now: dt.datetime | None = None,
) -> Submission:
    """Autosave of the free texts (sections 1 and 5). `version` is what the page last saw: a
    stale one (another tab saved since) is refused and nothing is overwritten. A save that
    changes nothing is a no-op, stale or not."""
    now = _now(now)
    locked = _writable(submission, by, now)
    changes: dict[str, str] = {}
    if notes is not None:
        changes["notes"] = _text(notes, "notes", DESCRIPTION_MAX, "DT-02")
    if game_report is not None:
        changes["game_report"] = _text(game_report, "game_report", DESCRIPTION_MAX * 4, "DT-05")
    changes = {k: v for k, v in changes.items() if getattr(locked, k) != v}
    if not changes:
        # Nothing to lose (a double click, a stale tab typing what is already saved).
        return locked
    if version != locked.version:
        raise ValidationError({"version": gettext(STALE)})
    for name, value in changes.items():
        setattr(locked, name, value)
    locked.version += 1
    locked.updated_at = now
    locked.save(update_fields=[*changes, "version", "updated_at"])
    return locked


@transaction.atomic
def submission_submit(
    *, submission: Submission, by: User, key: str = "", now: dt.datetime | None = None
) -> Submission:
    """DT-01: submit (or resubmit after changes) until the deadline; a receipt is e-mailed
    once per submit. Submitting again with nothing changed since (a double click) changes
    nothing and sends nothing."""
    now = _now(now)
    locked = _writable(submission, by, now)
    unchanged = (
        locked.status == SubmissionStatus.SUBMITTED
        and locked.submitted_at is not None
        and locked.submitted_at >= locked.updated_at
    )
    if unchanged:
        return locked
    locked.status = SubmissionStatus.SUBMITTED
    locked.submitted_at = now
    locked.updated_at = now
    locked.receipt_sent_at = now
    locked.save(update_fields=["status", "submitted_at", "updated_at", "receipt_sent_at"])
    receipt_key = f"downtime-receipt:{locked.pk}:{key or int(now.timestamp() * 1_000_000)}"
    # Callables: the mail service words the receipt in the player's saved language.
    notify(
        character=locked.character,
        key=receipt_key[:120],
        subject=partial(_receipt_subject, locked.character),
        body=partial(submission_summary, locked),
        now=now,
    )
    return locked


# --- Section 2: influence use ------------------------------------------------------------------


def _require_actable(character: Character, structure: Structure, action: str) -> None:
    """HAV-04: build and repair act on the player's own havens (as
    `havens.access.structures_visible_to`: one a character of theirs owns now, or their own
    plan); an attack on one of the attacker's current, released finds (HAV-25b). Anything
    else is refused exactly like an unknown haven."""
    allowed: QuerySet[Find] | QuerySet[Structure]
    if action == ActionKind.ATTACK_HAVEN:
        allowed = Find.objects.filter(
            structure=structure, character=character, cleared_at__isnull=True
        ).filter(Q(result__isnull=True) | Q(result__search__released_at__isnull=False))
    else:
        player_owns = Ownership.objects.filter(
            structure=OuterRef("pk"),
            ended_at__isnull=True,
            character__player_id=character.player_id,
            character__chronicle_id=character.chronicle_id,
        )
        allowed = Structure.objects.filter(
            pk=structure.pk, chronicle_id=character.chronicle_id
        ).filter(
            Exists(player_owns)
            | Q(status=StructureStatus.PLANNED, designed_by__player_id=character.player_id)
        )
    if character.player_id is None or not allowed.exists():
        raise ValidationError({"target_structure": gettext(NO_HAVEN)})


def _open_project(structure: Structure, kind: str) -> Project:
    project = (
        Project.objects.filter(structure=structure, kind=kind, status=ProjectStatus.OPEN)
        .order_by("created_at", "pk")
        .first()
    )
    if project is None:
        raise ValidationError(
            {
                "target_structure": (
                    gettext(
                        "This haven has no open repair project to pay into; start one on the "
                        "haven's page first (HAV-02)."
                    )
                    if kind == ProjectKind.REPAIR
                    else gettext(
                        "This haven has no open building project to pay into; start one on the "
                        "haven's page first (HAV-02)."
                    )
                )
            }
        )
    return project


@transaction.atomic
def influence_action_add(
    *,
    submission: Submission,
    by: User,
    influence: str,
    points: int,
    action: str,
    key: str,
    target_name: str = "",
    target_structure: Structure | None = None,
    target_text: str = "",
    description: str = "",
    lender: Character | None = None,
    now: dt.datetime | None = None,
) -> DeskItem:
    """DT-02 section 2 / INF-02 / INF-03: one influence action. Building, repairing, searching
    and attacking a haven go through the havens services (which spend); every other action
    spends here. Borrowed points name their lender: the loan must have been asked for, and only
    a confirmed one adds to what may be spent. The same `key` twice gives one item.

    `target_structure` must be the player's own for build/repair and a released find of the
    character for an attack (HAV-04); anything else answers "No such haven." before any
    project is looked up, so no message tells what another's haven has."""
    now = _now(now)
    locked = _writable(submission, by, now)
    character = locked.character
    item_key = _item_key(locked.cycle, "influence", key)
    existing = _existing_item(character, locked.cycle, item_key)
    if existing is not None:
        return existing
    if action not in ActionKind.values:
        raise ValidationError({"action": gettext("Choose what the influence does (INF-02).")})
    if influence not in character_rules.INFLUENCE_TYPES:
        raise ValidationError({"influence": _choose_influence()})
    try:
        # INF-02: Herd blood only from Herd, occult research only from Occult, ...
        character_rules.check_influence_use(action, influence)
    except ValueError as exc:
        raise refusal(exc, "influence") from None
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise ValidationError({"points": gettext("Spend at least 1 point of influence (INF-03).")})
    target_name = _text(target_name, "target_name", NAME_MAX, "INF-02")
    target_text = _text(target_text, "target_text", TEXT_MAX, "INF-02")
    description = _text(description, "description", DESCRIPTION_MAX, "INF-02")
    if lender is not None:
        asked = InfluenceLoan.objects.filter(
            cycle=locked.cycle,
            lender=lender,
            borrower=character,
            influence=influence,
            withdrawn_at__isnull=True,
        ).exists()
        if not asked:
            raise ValidationError(
                {
                    "lender": gettext(
                        "Ask this lender for the loan of that influence first (INF-03)."
                    )
                }
            )
    needs_structure = action in (ActionKind.BUILD, ActionKind.REPAIR, ActionKind.ATTACK_HAVEN)
    if needs_structure and target_structure is None:
        raise ValidationError(
            {"target_structure": gettext("Choose the haven this acts on (INF-02).")}
        )
    if not needs_structure:
        target_structure = None
    if target_structure is not None:
        # Before any project lookup, so no message tells what another's haven has.
        _require_actable(character, target_structure, action)
    if action == ActionKind.SEARCH and not target_name:
        raise ValidationError(
            {"target_name": gettext("Name the character whose havens you seek (HAV-25b).")}
        )

    item = DeskItem(
        cycle=locked.cycle,
        kind=ItemKind.INFLUENCE,
        character=character,
        submission=locked,
        influence=influence,
        points=points,
        action=action,
        target_name=target_name,
        target_structure=target_structure,
        target_text=target_text,
        description=description,
        lender=lender,
        created_at=now,
        updated_at=now,
        key=item_key,
    )
    spend_key = f"downtime:{item_key}"
    if action in (ActionKind.BUILD, ActionKind.REPAIR):
        assert target_structure is not None
        kind = ProjectKind.REPAIR if action == ActionKind.REPAIR else ProjectKind.ATTRIBUTE
        project = _open_project(target_structure, kind)
        contribution = project_contribute(
            project=project,
            character=character,
            influence=influence,
            points=points,
            by=by,
            key=spend_key,
            cycle=locked.cycle,
            now=now,
        )
        item.haven_project = project
        item.spend_id = contribution.spend_id
    elif action == ActionKind.SEARCH:
        search = search_submit(
            character=character,
            target_name=target_name,
            influence=influence,
            points=points,
            by=by,
            key=spend_key,
            now=now,
        )
        item.haven_search = search
        item.target_character_id = search.target_id
        item.spend_id = search.searchers.get(character=character).spend_id
    elif action == ActionKind.ATTACK_HAVEN:
        assert target_structure is not None
        attack = influence_attack_submit(
            attacker=character,
            structure=target_structure,
            influence=influence,
            points=points,
            by=by,
            key=spend_key,
            now=now,
        )
        item.haven_attack = attack
        item.spend_id = attack.spend_id
    else:
        spend, _ = influence_spend(
            character=character,
            cycle=locked.cycle,
            influence=influence,
            points=points,
            reason=ledger_words.DOWNTIME_ACTION % {"action": ledger_words.action_label(action)},
            key=spend_key,
            actor=by,
            now=now,
        )
        item.spend = spend
        if target_name:
            # Linked for the STs when the name is unambiguous; the player is never told.
            item.target_character = active_character_named(character.chronicle_id, target_name)
    item.save()
    _touch(locked, now)
    return item


@transaction.atomic
def item_withdraw(*, item: DeskItem, by: User, now: dt.datetime | None = None) -> DeskItem:
    """The player takes back an action, purchase or power before the deadline and before the
    STs decided it; its influence is refunded. Twice is once. A contribution already paid
    into a haven's project stays: the project counts it (HAV-02)."""
    now = _now(now)
    if item.submission is None:
        raise PermissionDenied(
            gettext("Requests recorded at the game are the storytellers' to change.")
        )
    submission = _writable(item.submission, by, now)
    item = (
        DeskItem.objects.select_for_update(of=("self",))
        .select_related("haven_search", "haven_attack", "spend", "purchase", "character")
        .get(pk=item.pk)
    )
    if item.withdrawn_at is not None:
        return item
    if item.status in DECIDED:
        raise ValidationError(
            gettext(
                "The storytellers have already decided this (%(status)s); it can no longer be "
                "withdrawn (DT-02)."
            )
            % {"status": item.get_status_display().lower()}
        )
    if item.haven_project_id is not None:
        raise ValidationError(
            gettext("Influence paid into a haven's project cannot be taken back (HAV-02).")
        )
    if item.haven_search is not None:
        search_withdraw(search=item.haven_search, character=item.character, by=by, now=now)
    elif item.haven_attack is not None:
        influence_attack_withdraw(attack=item.haven_attack, by=by, now=now)
    elif item.spend is not None:
        influence_refund(spend=item.spend, reason=ledger_words.WITHDRAWN, actor=by, now=now)
    if item.purchase is not None:
        purchase_withdraw(purchase=item.purchase, by=by, now=now)
    item.withdrawn_at = now
    item.updated_at = now
    # An ST with the item open sees a conflict instead of deciding a withdrawn item.
    item.version += 1
    item.save(update_fields=["withdrawn_at", "updated_at", "version"])
    _touch(submission, now)
    return item


# The name the other helpers were promised.
influence_action_withdraw = item_withdraw

# --- Section 3: XP purchases -------------------------------------------------------------------


@transaction.atomic
def purchase_add(
    *,
    submission: Submission,
    by: User,
    kind: str,
    discipline: str = "",
    levels: Sequence[str] = (),
    target: str = "",
    quantity: int = 1,
    teacher_name: str = "",
    note: str = "",
    now: dt.datetime | None = None,
) -> DeskItem:
    """DT-02 section 3 / DIS-08: an XP purchase asked in downtime, refused with every problem
    `purchase_request` finds (each beside its field, citing its rule). Asking twice for the
    same thing gives one item."""
    now = _now(now)
    locked = _writable(submission, by, now)
    purchase = purchase_request(
        character=locked.character,
        by=by,
        kind=kind,
        discipline=discipline,
        levels=levels,
        target=target,
        quantity=quantity,
        moment=PurchaseMoment.DOWNTIME,
        teacher_name=teacher_name,
        note=note,
        now=now,
    )
    existing = DeskItem.objects.filter(purchase=purchase).first()
    if existing is not None:
        return existing
    item = DeskItem.objects.create(
        cycle=locked.cycle,
        kind=ItemKind.PURCHASE,
        character=locked.character,
        submission=locked,
        purchase=purchase,
        description=_purchase_text(purchase),
        created_at=now,
        updated_at=now,
        key=f"purchase:{purchase.pk}",
    )
    _touch(locked, now)
    return item


def purchase_words(purchase: XpPurchase) -> str:
    """What a purchase buys, in a few words ("Discipline Auspex 2a", "Trait mental x2")."""
    parts = [purchase.get_kind_display()]
    if purchase.discipline:
        parts.append(purchase.discipline.replace("_", " ").title())
    if purchase.levels:
        parts.append(", ".join(purchase.levels))
    if purchase.target:
        parts.append(purchase.target)
    if purchase.quantity and purchase.quantity != 1:
        parts.append(f"x{purchase.quantity}")
    return " ".join(parts)


def _purchase_text(purchase: XpPurchase) -> str:
    return f"{purchase_words(purchase)} ({purchase.cost} XP)"


@dataclass(frozen=True)
class XpOverview:
    """The downtime page's XP section: the player's XP (a player's, shared by their
    characters) and the character's purchases waiting for a storyteller's sign-off (asked in
    any downtime or at a game: XP is charged only at sign-off, XP-01)."""

    available: Decimal
    waiting: list[XpPurchase]

    @property
    def waiting_cost(self) -> Decimal:
        return sum((p.cost for p in self.waiting), Decimal(0))

    @property
    def after_waiting(self) -> Decimal:
        return self.available - self.waiting_cost


def xp_overview(*, character: Character, chronicle: Chronicle) -> XpOverview:
    """Two queries: the ledger's sum and the waiting purchases."""
    available = (
        xp_balance(chronicle=chronicle, player=character.player_id)
        if character.player_id is not None
        else Decimal(0)
    )
    waiting = list(
        XpPurchase.objects.filter(character=character, status=PurchaseStatus.REQUESTED).order_by(
            "requested_at", "pk"
        )
    )
    return XpOverview(available=available, waiting=waiting)


# --- Section 4: special powers -----------------------------------------------------------------


@transaction.atomic
def power_add(
    *,
    submission: Submission,
    by: User,
    power: str,
    key: str,
    target_name: str = "",
    description: str = "",
    now: dt.datetime | None = None,
) -> DeskItem:
    """DT-02 section 4 / DIS-09: a ritual or power used in downtime. Naming another character
    as its target is refused except for Conditioning, requests to a thrall (BND-09) and
    torpor holds (TOR-01). The same `key` twice gives one item."""
    now = _now(now)
    locked = _writable(submission, by, now)
    character = locked.character
    item_key = _item_key(locked.cycle, "power", key)
    existing = _existing_item(character, locked.cycle, item_key)
    if existing is not None:
        return existing
    if power not in PowerKind.values:
        raise ValidationError({"power": gettext("Choose the kind of power (DIS-09).")})
    target_name = _text(target_name, "target_name", NAME_MAX, "DIS-09")
    description = _text(description, "description", DESCRIPTION_MAX, "DIS-09")
    if not description:
        raise ValidationError({"description": gettext("Say what the power does (DIS-09).")})
    targets_other = bool(target_name) and target_name.casefold() != character.name.casefold()
    try:
        rules.check_special_power(power, targets_other=targets_other)
    except ValueError as exc:
        raise refusal(exc, "target_name") from None
    item = DeskItem.objects.create(
        cycle=locked.cycle,
        kind=ItemKind.POWER,
        character=character,
        submission=locked,
        power=power,
        target_name=target_name,
        target_character=(
            active_character_named(character.chronicle_id, target_name) if targets_other else None
        ),
        description=description,
        created_at=now,
        updated_at=now,
        key=item_key,
    )
    _touch(locked, now)
    return item


# --- Section 6: votes: downtimes/services/votes_cast.py (re-exported at the end) -------------


# --- Reading helpers for pages and the API -----------------------------------------------------


def influence_overview(*, submission: Submission) -> dict[str, int]:
    """INF-03: what the character may still spend of each type this cycle."""
    return influence_left(character=submission.character, cycle=submission.cycle)


__all__ = [
    "DECIDED",
    "DowntimeState",
    "PurchaseStatus",
    "cast_for",
    "deadline_passed",
    "downtime_state",
    "influence_action_add",
    "influence_action_withdraw",
    "item_withdraw",
    "loan_confirm",
    "loan_request",
    "loans_to_confirm",
    "power_add",
    "purchase_add",
    "reminders_send",
    "state_text",
    "submission_for_edit",
    "submission_save",
    "submission_submit",
    "purchase_words",
    "xp_overview",
    "vote_choices",
    "vote_picks",
    "votes_cast",
    "votes_prefetch",
    "votes_save",
]

# Section 6 and the loans (INF-03) live in their own modules, which build on the helpers
# above; the names the pages, the API and the other helpers call stay importable from here.
from .loans import loan_confirm, loan_request, loans_to_confirm  # noqa: E402
from .votes_cast import (  # noqa: E402
    cast_for,
    vote_choices,
    vote_picks,
    votes_cast,
    votes_prefetch,
    votes_save,
)
