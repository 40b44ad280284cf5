"""Reads that the sheet pages and the API share, already filtered through `access.py`.

`sheet_for` loads everything a character sheet shows in a fixed number of queries (one per
kind of row, whatever the number of rows), and applies what a player may know (BND-01: a
bond's beginning without the regnant's name; ST notes never).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.access import is_staff
from chronicle.models import Membership
from chronicle.rules import settings_for
from chronicle.stored_text import stored_text

from . import rules
from .models import (
    INFLUENCE_LABELS,
    Bond,
    BondKind,
    Character,
    Creature,
    Diablerie,
    Disadvantage,
    DisciplineLevel,
    GenerationStep,
    Item,
    KnownSewerLocation,
    PurchaseStatus,
    Ritual,
    StoredBlood,
    Title,
    XpEntry,
    XpPurchase,
)
from .services.ledger import xp_balances

CHART_WIDTH = 320
CHART_HEIGHT = 80
BOND_BEGINNING = gettext_noop("You feel the beginning of a bond.")


@dataclass(frozen=True)
class LedgerLine:
    entry: XpEntry
    balance: Decimal


@dataclass(frozen=True)
class DisciplineRow:
    discipline: str
    title: str
    levels: list[DisciplineLevel]

    @property
    def top(self) -> str:
        return self.levels[-1].code


@dataclass(frozen=True)
class BondLine:
    """One line of the sheet's bonds: `regnant` is None when the player may not know it."""

    text: str
    regnant: str | None
    kind: str
    bound: bool
    level: int | None
    due_on: dt.date | None


@dataclass(frozen=True)
class BloodLine:
    stored: StoredBlood
    donors: list[str]
    expired: bool


@dataclass(frozen=True)
class ItemLine:
    item: Item
    expired: bool


@dataclass
class Sheet:
    character: Character
    staff: bool
    today: dt.date
    xp_balance: Decimal
    ledger: list[LedgerLine]
    chart_points: str
    influences: dict[str, int]
    disciplines: list[DisciplineRow]
    discipline_levels: int
    diableries: int
    queued_diableries: list[Diablerie]
    control: int | None
    on_body_limit: int | None
    on_body_blood: int
    stored_blood: list[BloodLine]
    bonds: list[BondLine]
    items: list[ItemLine]
    titles: list[Title]
    rituals: list[Ritual]
    disadvantages: list[Disadvantage]
    sewer_lore: int
    sewer_slots: int
    sewer_locations: list[KnownSewerLocation]
    pending_purchases: list[XpPurchase]
    st_notes: str | None = None
    abilities: list[tuple[str, int]] = field(default_factory=list)
    maximums: rules.GenerationMaximums | None = None  # CRE-07

    @property
    def influence_lines(self) -> list[tuple[str, int]]:
        """INF-01: the five influences, named in the reader's language, with their ratings."""
        return [(str(INFLUENCE_LABELS[name]), value) for name, value in self.influences.items()]


def chart_points(balances: list[tuple[dt.datetime, Decimal]]) -> str:
    """The SVG polyline points of the balance over time: x is time, y the balance, scaled into
    CHART_WIDTH × CHART_HEIGHT (y grows downwards in SVG, so the top is the highest balance)."""
    if not balances:
        return ""
    if len(balances) == 1:
        balances = [balances[0], balances[0]]
    start = balances[0][0]
    span = (balances[-1][0] - start).total_seconds()
    low = min(Decimal(0), *(b for _, b in balances))
    high = max(b for _, b in balances)
    rise = high - low or Decimal(1)
    points = []
    for index, (moment, value) in enumerate(balances):
        if span:
            x = (moment - start).total_seconds() / span * CHART_WIDTH
        else:
            x = index / (len(balances) - 1) * CHART_WIDTH
        y = CHART_HEIGHT - float((value - low) / rise) * CHART_HEIGHT
        points.append(f"{x:.1f},{y:.1f}")
    return " ".join(points)


def _bond_lines(bonds: list[Bond], *, staff: bool) -> list[BondLine]:
    """BND-01: a player knows a bond in force (its regnant and kind); an unbound pure bond at
    level 2 shows only that a bond is beginning, never whose; level 1 and partial shared counts
    show nothing. Staff see everything."""
    lines = []
    for bond in bonds:
        names = {"kind": bond.get_kind_display(), "regnant": bond.regnant.name}
        if staff:
            if bond.bound:
                text = _("%(kind)s to %(regnant)s (bound)") % names
            else:
                text = _("%(kind)s to %(regnant)s (level %(level)s)") % {
                    **names,
                    "level": bond.level,
                }
            lines.append(
                BondLine(
                    text=text,
                    regnant=bond.regnant.name,
                    kind=bond.kind,
                    bound=bond.bound,
                    level=bond.level,
                    due_on=bond.due_on,
                )
            )
        elif bond.bound:
            lines.append(
                BondLine(
                    text=_("%(kind)s to %(regnant)s") % names,
                    regnant=bond.regnant.name,
                    kind=bond.kind,
                    bound=True,
                    level=None,
                    due_on=None,
                )
            )
        elif bond.kind == BondKind.PURE and bond.level == 2:
            lines.append(
                BondLine(
                    text=_(BOND_BEGINNING),
                    regnant=None,
                    kind=bond.kind,
                    bound=False,
                    level=None,
                    due_on=None,
                )
            )
    return lines


def sheet_for(
    *, character: Character, membership: Membership, now: dt.datetime | None = None
) -> Sheet:
    """Everything the sheet shows, in a fixed number of queries (the character is already
    loaded by `access.character_for`):

    1. ledger entries, 2. discipline levels, 3. diableries, 4. stored blood, 5. their donors,
    6. live bonds with regnants, 7. items, 8. pending purchases, 9. titles, 10. rituals,
    11. disadvantages, 12. known sewer locations.
    """
    now = now or timezone.now()
    chronicle = membership.chronicle
    today = now.astimezone(chronicle.tz).date()
    staff = is_staff(membership)

    lines: list[LedgerLine] = []
    balances: list[tuple[dt.datetime, Decimal]] = []
    running = Decimal(0)
    if character.player_id is not None:
        entries = XpEntry.objects.filter(
            chronicle=chronicle, player_id=character.player_id
        ).order_by("created_at", "pk")
        for entry in entries:
            running += entry.amount
            lines.append(LedgerLine(entry, running))
            balances.append((entry.created_at, running))

    levels = list(
        DisciplineLevel.objects.filter(character=character).order_by("discipline", "level")
    )
    rows: list[DisciplineRow] = []
    for level in levels:
        if not rows or rows[-1].discipline != level.discipline:
            title = rules.DISCIPLINE_TITLES.get(level.discipline, level.discipline)
            rows.append(DisciplineRow(level.discipline, title, []))
        rows[-1].levels.append(level)

    diableries = list(Diablerie.objects.filter(diablerist=character).order_by("occurred_on", "pk"))
    control = None
    if character.creature == Creature.KINDRED and character.clan in rules.CLANS:
        animalism = max((lv.level for lv in levels if lv.discipline == "animalism"), default=0)
        control = rules.control_traits(
            clan=character.clan,
            generation=character.generation,
            discipline_levels=len(levels),
            childer=character.childer,
            diableries=len(diableries),
            extra_control=character.extra_control,
            willpower=character.willpower,
            animalism_1b=animalism >= rules.LEVEL_NUMBERS["1b"],
        )
    on_body_limit = (
        None
        if control is None
        else rules.on_body_blood_limit(min(max(control, 0), rules.MAX_CONTROL))
    )

    blood = []
    for stored in StoredBlood.objects.filter(holder=character).prefetch_related("donors"):
        expired = stored.expired_at is not None or (
            stored.unusable_from is not None and stored.unusable_from <= today
        )
        donors = [donor.name for donor in stored.donors.all()]
        if stored.donor_note:
            donors.append(stored_text(stored.donor_note))
        blood.append(BloodLine(stored, donors, expired))

    bonds = list(
        Bond.objects.filter(thrall=character, ended_on__isnull=True).select_related("regnant")
    )
    items = [
        ItemLine(item, item.expires_on <= today)
        for item in Item.objects.filter(character=character)
    ]
    pending = list(
        XpPurchase.objects.filter(character=character, status=PurchaseStatus.REQUESTED)
        .select_related("teacher")
        .order_by("requested_at", "pk")
    )
    return Sheet(
        character=character,
        staff=staff,
        today=today,
        xp_balance=running,
        ledger=lines,
        chart_points=chart_points(balances),
        influences=character.influences,
        disciplines=rows,
        discipline_levels=len(levels),
        diableries=len(diableries),
        queued_diableries=[d for d in diableries if d.generation_step == GenerationStep.QUEUED],
        control=control,
        on_body_limit=on_body_limit,
        on_body_blood=sum(b.stored.points for b in blood if b.stored.on_body and not b.expired),
        stored_blood=blood,
        bonds=_bond_lines(bonds, staff=staff),
        items=items,
        titles=list(Title.objects.filter(character=character).order_by("city", "name")),
        rituals=list(Ritual.objects.filter(character=character)),
        disadvantages=list(Disadvantage.objects.filter(character=character)),
        sewer_lore=character.sewer_lore,
        sewer_slots=rules.sewer_location_slots(
            character.sewer_lore, nosferatu=character.clan == "nosferatu"
        ),
        sewer_locations=list(
            KnownSewerLocation.objects.filter(character=character, forgotten_on__isnull=True)
            .select_related("location")
            .order_by("location__number")
        ),
        pending_purchases=pending,
        st_notes=character.st_notes if staff else None,
        abilities=sorted((str(k), int(v)) for k, v in (character.abilities or {}).items()),
        maximums=rules.generation_maximums(
            character.generation,
            **settings_for(rules.generation_maximums, chronicle.house_rules),
        ),
    )


@dataclass(frozen=True)
class QueueLine:
    """One requested purchase in the ST queue. The rule checks are not repeated here: the
    decide page runs the service's full quote, and approval re-runs it under the locks, so the
    queue cannot drift from them. `needs_teacher`: the player named a teacher in words that an
    ST must link before approving (DIS-07, SEW-01)."""

    purchase: XpPurchase
    balance: Decimal
    needs_teacher: bool


def purchase_queue_for(membership: Membership) -> list[QueueLine]:
    """The chronicle's requested purchases, oldest first, for the ST queue, each with the
    player's balance: 1. the purchases with character, player, teacher and cycle, 2. the
    players' balances."""
    purchases = list(
        XpPurchase.objects.filter(
            character__chronicle=membership.chronicle, status=PurchaseStatus.REQUESTED
        )
        .select_related("character", "character__player", "teacher", "cycle__game")
        .order_by("requested_at", "pk")
    )
    player_ids = sorted({p.character.player_id for p in purchases if p.character.player_id})
    balances = xp_balances(chronicle=membership.chronicle, player_ids=player_ids)
    return [
        QueueLine(
            purchase,
            balances.get(purchase.character.player_id or 0, Decimal(0)),
            needs_teacher=bool(purchase.teacher_name) and purchase.teacher_id is None,
        )
        for purchase in purchases
    ]
