"""XP purchases in play (XP-01..05, DIS-02..08, CRE-03/04/09, INF-01, SEW-01).

A player asks (`purchase_request`), an ST signs off (`purchase_approve`, XP-01) and only then is
the one ledger entry (key `purchase:<id>`) written and the effect applied. `purchase_quote` is
the same arithmetic and the same checks with nothing written, for the live preview; approval
re-runs it under the locks because the world may have moved since the request.

Lock order, everywhere here: the purchase row, then the character row, then the player's ledger
(their membership row, taken by `ledger.xp_entry_add`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.moments import moment_text
from chronicle.rules import settings_for
from chronicle.stored_text import in_english, stored_sentences

from .. import rules
from ..models import (
    Acquired,
    Character,
    Diablerie,
    DisciplineLevel,
    GenerationStep,
    PurchaseKind,
    PurchaseMoment,
    PurchaseStatus,
    XpKind,
    XpPurchase,
)
from . import ledger
from .common import in_reader_language
from .control import control_check
from .notify import notify
from .purchase_quotes import (
    Quote,
    _clan,
    _in_clan,
    _is_staff,
    _require_staff,
    _same_request,
    purchase_requote,
)
from .purchase_quotes import purchase_quote as purchase_quote  # callers import it from here

# A purchase as the ledger, the queue and the mails name it (`describe`). The ledger stores it
# in English, inside PURCHASE_REASON, and shows it in each reader's language
# (chronicle.stored_text).
PURCHASE_REASON = gettext_noop("%(character)s: %(purchase)s")
PURCHASE_LINES: dict[tuple[str, str], str] = {
    ("generation", ""): gettext_noop("Generation −%(quantity)s"),
    ("generation", "diablerie"): gettext_noop("Generation −%(quantity)s after diablerie"),
    ("trait", "physical"): gettext_noop("Trait physical +%(quantity)s"),
    ("trait", "social"): gettext_noop("Trait social +%(quantity)s"),
    ("trait", "mental"): gettext_noop("Trait mental +%(quantity)s"),
    ("influence", "business"): gettext_noop("Influence business +%(quantity)s"),
    ("influence", "government"): gettext_noop("Influence government +%(quantity)s"),
    ("influence", "herd"): gettext_noop("Influence herd +%(quantity)s"),
    ("influence", "occult"): gettext_noop("Influence occult +%(quantity)s"),
    ("influence", "underworld"): gettext_noop("Influence underworld +%(quantity)s"),
    ("ability", ""): gettext_noop("Ability %(target)s +%(quantity)s"),
    ("willpower", ""): gettext_noop("Willpower +%(quantity)s"),
    ("sewer_lore", ""): gettext_noop("Sewer Lore +%(quantity)s"),
}
stored_sentences(PURCHASE_REASON, *PURCHASE_LINES.values())


@transaction.atomic
def purchase_request(
    *,
    character: Character,
    by: User,
    kind: str,
    discipline: str = "",
    levels: Sequence[str] = (),
    target: str = "",
    quantity: int = 1,
    moment: str = PurchaseMoment.DOWNTIME,
    teacher: Character | None = None,
    teacher_name: str = "",
    note: str = "",
    now: dt.datetime | None = None,
) -> XpPurchase:
    """XP-01: the player asks; the purchase waits for an ST's sign-off. Refused with every
    problem at once (each citing its rule). Asking twice for the same thing (a double click)
    returns the pending request instead of a second one. A player who needs a teacher names
    them in `teacher_name`; an ST links the character at sign-off (DIS-07, SEW-01)."""
    now = now or timezone.now()
    staff = _is_staff(by, character.chronicle)
    if character.player_id != by.pk and not staff:
        raise PermissionDenied(_("You may ask for purchases only for your own character."))
    target = target.strip().lower() if kind == PurchaseKind.ABILITY else target.strip()
    levels = list(levels) if kind == PurchaseKind.DISCIPLINE else []
    discipline = discipline if kind == PurchaseKind.DISCIPLINE else ""
    teacher_name = teacher_name.strip()
    if kind not in (PurchaseKind.DISCIPLINE, PurchaseKind.SEWER_LORE):
        teacher, teacher_name = None, ""
    # The character's row serialises this player's requests: two clicks cannot both pass the
    # duplicate and DIS-08 checks.
    character = Character.objects.select_for_update().get(pk=character.pk)
    existing = _same_request(
        character,
        kind=kind,
        discipline=discipline,
        levels=levels,
        target=target,
        quantity=quantity,
        moment=moment,
        teacher=teacher,
        teacher_name=teacher_name,
    )
    if existing is not None:
        return existing
    quote = purchase_quote(
        character=character,
        kind=kind,
        discipline=discipline,
        levels=levels,
        target=target,
        quantity=quantity,
        moment=moment,
        teacher=teacher,
        teacher_name=teacher_name,
        staff=staff,
        now=now,
    )
    if not quote.ok:
        raise quote.error()
    return XpPurchase.objects.create(
        character=character,
        kind=kind,
        discipline=discipline,
        levels=levels,
        target=target,
        quantity=quantity,
        teacher=teacher,
        teacher_name=teacher_name,
        diablerie=quote.diablerie,
        moment=moment,
        cycle=quote.cycle,
        cost=quote.cost,
        note=note.strip(),
        requested_by=by,
        requested_at=now,
    )


def describe(purchase: XpPurchase) -> str:
    """A line for the ledger and the queue, in the active language, e.g. "Auspex 1a (Heightened
    Senses)" (disciplines and their levels are names, the same in every language)."""
    if purchase.kind == PurchaseKind.DISCIPLINE:
        title = rules.DISCIPLINE_TITLES.get(purchase.discipline, purchase.discipline)
        names = ", ".join(
            f"{level} ({rules.level_name(purchase.discipline, level)})" for level in purchase.levels
        )
        return f"{title} {names}"
    if purchase.kind == PurchaseKind.GENERATION:
        line = PURCHASE_LINES["generation", "diablerie" if purchase.diablerie_id else ""]
    elif purchase.kind in (PurchaseKind.TRAIT, PurchaseKind.INFLUENCE):
        line = PURCHASE_LINES.get((purchase.kind, purchase.target), "")
    else:
        line = PURCHASE_LINES.get((purchase.kind, ""), "")
    if not line:
        # A row no form could have made (a target outside the rules): say what it holds.
        label = PurchaseKind(purchase.kind).label
        target = f" {purchase.target}" if purchase.target else ""
        return f"{label}{target} +{purchase.quantity}"
    return _(line) % {"quantity": purchase.quantity, "target": purchase.target}


def _locked_purchase(purchase: XpPurchase) -> XpPurchase:
    return (
        XpPurchase.objects.select_for_update(of=("self",))
        .select_related("decided_by", "character", "character__chronicle")
        .get(pk=purchase.pk)
    )


def _already_decided(purchase: XpPurchase) -> ValidationError:
    who = purchase.decided_by.get_username() if purchase.decided_by else _("someone")
    when = (
        moment_text(purchase.decided_at, purchase.character.chronicle)
        if purchase.decided_at
        else _("an earlier moment")
    )
    by_status: dict[str, str] = {
        PurchaseStatus.APPROVED: _(
            "This purchase was already approved by %(who)s at %(when)s (XP-01)."
        ),
        PurchaseStatus.REJECTED: _(
            "This purchase was already rejected by %(who)s at %(when)s (XP-01)."
        ),
        PurchaseStatus.WITHDRAWN: _(
            "This purchase was already withdrawn by %(who)s at %(when)s (XP-01)."
        ),
    }
    already = by_status.get(purchase.status)
    if already is None:
        already = _("This purchase was already %(status)s by %(who)s at %(when)s (XP-01).")
    return ValidationError(
        already % {"status": purchase.get_status_display().lower(), "who": who, "when": when}
    )


@transaction.atomic
def purchase_approve(
    *,
    purchase: XpPurchase,
    by: User,
    teacher: Character | None = None,
    now: dt.datetime | None = None,
) -> XpPurchase:
    """XP-01: an ST signs off. Every check runs again under the locks, then one ledger entry
    (key `purchase:<id>`) is written and the effect applied. The same ST's second click gets the
    approved purchase back; anyone else is told who approved it and when.

    `teacher` is the character the ST links as the teacher (DIS-07, SEW-01), typically the one
    the player named in words; without it the purchase's own teacher, if any, is checked."""
    now = now or timezone.now()
    purchase = _locked_purchase(purchase)
    character = purchase.character
    _require_staff(by, character.chronicle)
    if purchase.status != PurchaseStatus.REQUESTED:
        if purchase.status == PurchaseStatus.APPROVED and purchase.decided_by_id == by.pk:
            return purchase
        raise _already_decided(purchase)
    character = (
        Character.objects.select_for_update().select_related("chronicle").get(pk=character.pk)
    )
    if teacher is None:
        teacher = purchase.teacher
    elif teacher.chronicle_id != character.chronicle_id:
        # The view resolves the teacher within the chronicle; this guards direct callers.
        raise ValidationError({"teacher": _("The teacher must be of this chronicle (DIS-07).")})
    purchase.character = character  # check against the row just locked, not a stale copy
    quote = purchase_requote(purchase=purchase, teacher=teacher, now=now)
    if not quote.ok:
        raise quote.error()
    if purchase.kind not in (PurchaseKind.DISCIPLINE, PurchaseKind.SEWER_LORE):
        teacher = None
    purchase.teacher = teacher
    entry = None
    if quote.cost > 0:
        assert character.player_id is not None
        with in_english():
            reason = PURCHASE_REASON % {"character": character.name, "purchase": describe(purchase)}
        entry, _created = ledger.xp_entry_add(
            chronicle=character.chronicle,
            player_id=character.player_id,
            amount=-quote.cost,
            kind=XpKind.PURCHASE,
            reason=reason,
            key=f"purchase:{purchase.pk}",
            character=character,
            cycle=purchase.cycle,
            actor=by,
            now=now,
        )
    _apply(purchase, character, quote)
    control_check(character, by=by, now=now, purchase=purchase)  # CTL-02: below 1, an NPC
    purchase.status = PurchaseStatus.APPROVED
    purchase.cost = quote.cost
    purchase.decided_by = by
    purchase.decided_at = now
    purchase.ledger_entry = entry
    purchase.save(
        update_fields=["status", "cost", "teacher", "decided_by", "decided_at", "ledger_entry"]
    )
    # The mail speaks its reader's language, whoever signed the purchase off.
    with in_reader_language(character.player):
        subject = _("XP purchase approved: %(purchase)s") % {"purchase": describe(purchase)}
        body = _("An ST approved %(purchase)s for %(character)s (%(cost)s XP).") % {
            "purchase": describe(purchase),
            "character": character.name,
            "cost": quote.cost,
        }
    notify(
        character=character,
        key=f"purchase:{purchase.pk}:approved",
        subject=subject,
        body=body,
        now=now,
    )
    return purchase


def _apply(purchase: XpPurchase, character: Character, quote: Quote) -> None:
    house = character.chronicle.house_rules_for(quote.cycle)  # GEN-05: the purchase's cycle
    kind = purchase.kind
    if kind == PurchaseKind.DISCIPLINE:
        in_clan = _in_clan(character, purchase.discipline, house)
        DisciplineLevel.objects.bulk_create(
            DisciplineLevel(
                character=character,
                discipline=purchase.discipline,
                level=rules.level_number(level),
                acquired=Acquired.PLAY,
                cycle=purchase.cycle,
                teacher=purchase.teacher,
                # In play there is no path fee (DIS-05), so each level's own price adds up to
                # the purchase's cost.
                cost=rules.discipline_cost(
                    [level],
                    in_clan=in_clan,
                    at_creation=False,
                    path_owned=True,
                    caitiff=_clan(character) == "caitiff",
                    **settings_for(rules.discipline_cost, house),
                ),
                purchase=purchase,
            )
            for level in purchase.levels
        )
        return
    fields: list[str]
    if kind == PurchaseKind.GENERATION:
        character.generation -= purchase.quantity
        fields = ["generation"]
        if quote.diablerie is not None:
            Diablerie.objects.filter(pk=quote.diablerie.pk).update(
                generation_step=GenerationStep.TAKEN
            )
            if purchase.diablerie_id != quote.diablerie.pk:
                purchase.diablerie = quote.diablerie
                purchase.save(update_fields=["diablerie"])
    elif kind in (PurchaseKind.TRAIT, PurchaseKind.INFLUENCE):
        setattr(character, purchase.target, getattr(character, purchase.target) + purchase.quantity)
        fields = [purchase.target]
    elif kind == PurchaseKind.ABILITY:
        abilities = dict(character.abilities or {})
        abilities[purchase.target] = int(abilities.get(purchase.target, 0)) + purchase.quantity
        character.abilities = abilities
        fields = ["abilities"]
    elif kind == PurchaseKind.WILLPOWER:
        character.willpower += purchase.quantity
        fields = ["willpower"]
    else:
        character.sewer_lore += purchase.quantity
        fields = ["sewer_lore"]
    character.save(update_fields=[*fields, "updated_at"])


@transaction.atomic
def purchase_reject(
    *, purchase: XpPurchase, by: User, note: str, now: dt.datetime | None = None
) -> XpPurchase:
    """XP-01: an ST refuses, with a note the player reads; nothing is spent."""
    now = now or timezone.now()
    purchase = _locked_purchase(purchase)
    _require_staff(by, purchase.character.chronicle)
    if not note.strip():
        raise ValidationError({"note": _("Tell the player why the purchase is rejected.")})
    if purchase.status != PurchaseStatus.REQUESTED:
        raise _already_decided(purchase)
    purchase.status = PurchaseStatus.REJECTED
    purchase.decision_note = note.strip()
    purchase.decided_by = by
    purchase.decided_at = now
    purchase.save(update_fields=["status", "decision_note", "decided_by", "decided_at"])
    with in_reader_language(purchase.character.player):
        subject = _("XP purchase rejected: %(purchase)s") % {"purchase": describe(purchase)}
        body = _("An ST rejected %(purchase)s: %(note)s") % {
            "purchase": describe(purchase),
            "note": purchase.decision_note,
        }
    notify(
        character=purchase.character,
        key=f"purchase:{purchase.pk}:rejected",
        subject=subject,
        body=body,
        now=now,
    )
    return purchase


@transaction.atomic
def purchase_withdraw(
    *, purchase: XpPurchase, by: User, now: dt.datetime | None = None
) -> XpPurchase:
    """The player takes back a request the STs have not decided yet. Withdrawing twice is a
    no-op."""
    now = now or timezone.now()
    purchase = _locked_purchase(purchase)
    if purchase.character.player_id != by.pk:
        raise PermissionDenied(_("Only the character's player may withdraw a purchase."))
    if purchase.status == PurchaseStatus.WITHDRAWN:
        return purchase
    if purchase.status != PurchaseStatus.REQUESTED:
        raise _already_decided(purchase)
    purchase.status = PurchaseStatus.WITHDRAWN
    purchase.decided_by = by
    purchase.decided_at = now
    purchase.save(update_fields=["status", "decided_by", "decided_at"])
    return purchase


@transaction.atomic
def diablerie_step_decline(
    *, diablerie: Diablerie, by: User, now: dt.datetime | None = None
) -> Diablerie:
    """XP-05: the diablerist may decline the generation drop; other purchases then go ahead.
    A pending request for that step is withdrawn with it."""
    now = now or timezone.now()
    diablerie = (
        Diablerie.objects.select_for_update(of=("self",))
        .select_related("diablerist", "diablerist__chronicle")
        .get(pk=diablerie.pk)
    )
    character = diablerie.diablerist
    if character.player_id != by.pk and not _is_staff(by, character.chronicle):
        raise PermissionDenied(_("Only the diablerist's player or an ST may decline the step."))
    if diablerie.generation_step == GenerationStep.DECLINED:
        return diablerie
    if diablerie.generation_step != GenerationStep.QUEUED:
        raise ValidationError(
            _("There is no generation step waiting for this diablerie (%(state)s) (XP-05).")
            % {"state": diablerie.get_generation_step_display().lower()}
        )
    diablerie.generation_step = GenerationStep.DECLINED
    diablerie.save(update_fields=["generation_step"])
    XpPurchase.objects.filter(
        Q(diablerie=diablerie) | Q(character=character, kind=PurchaseKind.GENERATION),
        status=PurchaseStatus.REQUESTED,
    ).update(status=PurchaseStatus.WITHDRAWN, decided_by=by, decided_at=now)
    return diablerie
