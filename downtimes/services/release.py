"""What a cycle's release pays and what is still unfinished before it, each defined once
(issue 12).

- `release_xp_lines`: the outcomes the release pays and what each pays (overrides applied).
  The release plan counts them, `pipeline.cycle_release` writes them, and the XP report lists
  them, so the three cannot disagree. Whatever else the ledger holds for the cycle (purchases
  charged at sign-off, XP-01; corrections) is *outside the release*: `xp_statement` gives it as
  its own labelled groups with their own subtotals.
- `release_unfinished`: influence desk items still New or In progress, and XP purchases still
  waiting for sign-off. The storytellers confirm each non-empty group before they release
  (`release_check_unfinished`); with the house rule `unfinished_blocks_release` (DT-REL) on,
  they finish them first.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NamedTuple

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.utils.translation import gettext, gettext_lazy, ngettext, pgettext_lazy

from characters.models import PurchaseStatus, XpEntry, XpKind, XpPurchase
from characters.services.purchases import describe
from chronicle.models import Cycle, CycleStatus
from chronicle.stored_text import stored_text

from ..models import DeskItem, DeskStatus, ItemKind, Outcome, OutcomeOverride

# --- The release's XP ----------------------------------------------------------------------


def effective_xp(
    outcome: Outcome, overrides: dict[tuple[str, str], OutcomeOverride]
) -> Decimal | None:
    """What one outcome pays: its override's XP if an ST changed it, else the computed XP."""
    override = overrides.get((outcome.step, outcome.subject))
    if override is not None and override.xp is not None:
        return override.xp
    return outcome.xp


class ReleaseLine(NamedTuple):
    outcome: Outcome
    xp: Decimal
    player_id: int


def release_xp_lines(
    outcomes: Iterable[Outcome], overrides: dict[tuple[str, str], OutcomeOverride]
) -> list[ReleaseLine]:
    """The XP entries the release writes, one per outcome that pays something to a player: the
    one definition the plan, the release and the XP report share. An outcome paying 0 (DT-04:
    no waiver) writes nothing, nor does one without a player (an NPC)."""
    lines = []
    for outcome in outcomes:
        xp = effective_xp(outcome, overrides)
        if xp and outcome.player_id is not None:
            lines.append(ReleaseLine(outcome, xp, outcome.player_id))
    return lines


def release_entry_key(cycle: Cycle, outcome: Outcome) -> str:
    """The ledger key of the entry the release writes for an outcome (unique per player)."""
    return f"cycle:{cycle.pk}:{outcome.step}:{outcome.subject}"[:120]


@dataclass(frozen=True)
class XpLine:
    player: str
    player_id: int | None
    character: str
    xp: Decimal
    reason: str
    kind: str
    note: str


@dataclass(frozen=True)
class XpGroup:
    """Lines with a label and a subtotal: the release's own, or one kind of ledger entry of the
    cycle outside it."""

    name: str
    label: str
    in_release: bool
    lines: list[XpLine] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.lines)

    @property
    def total(self) -> Decimal:
        return sum((line.xp for line in self.lines), Decimal(0))

    @property
    def players(self) -> int:
        return len({line.player_id for line in self.lines})


@dataclass(frozen=True)
class XpStatement:
    release: XpGroup
    outside: list[XpGroup]

    @property
    def groups(self) -> list[XpGroup]:
        return [self.release, *self.outside]


RELEASE_GROUP = "release"
OUTSIDE_LABELS: dict[str, Any] = {
    XpKind.PURCHASE: gettext_lazy(
        "XP purchases signed off in this cycle: charged at sign-off, not by the release (XP-01)"
    ),
}
PREVIEW_KIND = pgettext_lazy("XP report kind", "Award (preview)")


def _person(user: User | None) -> str:
    return (user.get_full_name() or user.username) if user else ""


def _is_release_entry(cycle: Cycle, entry: XpEntry) -> bool:
    return entry.kind == XpKind.AWARD and entry.key.startswith(f"cycle:{cycle.pk}:")


def xp_statement(*, cycle: Cycle) -> XpStatement:
    """Every XP line of the cycle, grouped: first the release's (the preview's
    `release_xp_lines` until the release, the entries it wrote after), then each kind of ledger
    entry of the cycle outside the release, with its own label and subtotal.

    Three queries whatever the size: the overrides, the ledger's entries of the cycle, and
    (before the release) the outcomes that pay."""
    overrides = {
        (o.step, o.subject): o
        for o in OutcomeOverride.objects.filter(cycle=cycle).select_related("by")
    }
    notes = {
        f"cycle:{cycle.pk}:{step}:{subject}"[:120]: o.note
        for (step, subject), o in overrides.items()
    }
    released = cycle.status == CycleStatus.RELEASED
    release = XpGroup(
        name=RELEASE_GROUP,
        label=str(
            gettext("Paid by this cycle's release: awards and no-downtime XP (DT-03..08)")
            if released
            else gettext(
                "What the release will pay: awards and no-downtime XP, overrides applied "
                "(DT-03..08)"
            )
        ),
        in_release=True,
    )
    outside: dict[str, XpGroup] = {}
    for entry in (
        XpEntry.objects.filter(cycle=cycle)
        .select_related("player", "character")
        .order_by("player__username", "created_at", "pk")
    ):
        line = XpLine(
            player=_person(entry.player),
            player_id=entry.player_id,
            character=entry.character.name if entry.character else "",
            xp=entry.amount,
            # The ledger keeps its reasons in English: in the reader's language here.
            reason=stored_text(entry.reason),
            kind=entry.get_kind_display(),
            note=notes.get(entry.key, ""),
        )
        if _is_release_entry(cycle, entry):
            release.lines.append(line)
            continue
        group = outside.get(entry.kind)
        if group is None:
            label = OUTSIDE_LABELS.get(entry.kind) or gettext(
                "%(kind)s entries of this cycle, outside the release"
            ) % {"kind": entry.get_kind_display()}
            group = outside[entry.kind] = XpGroup(
                name=entry.kind, label=str(label), in_release=False
            )
        group.lines.append(line)
    if not released:
        outcomes = (
            Outcome.objects.filter(cycle=cycle, xp__isnull=False)
            .select_related("player", "character")
            .order_by("player__username", "position", "subject")
        )
        for outcome, xp, player_id in release_xp_lines(outcomes, overrides):
            override = overrides.get((outcome.step, outcome.subject))
            release.lines.append(
                XpLine(
                    player=_person(outcome.player),
                    player_id=player_id,
                    character=outcome.character.name if outcome.character else "",
                    xp=xp,
                    reason=outcome.localized_title,
                    kind=str(PREVIEW_KIND),
                    note=override.note if override else "",
                )
            )
    order = {kind: i for i, kind in enumerate(XpKind.values)}
    return XpStatement(
        release=release,
        outside=sorted(outside.values(), key=lambda g: order.get(g.name, len(order))),
    )


# --- What is unfinished --------------------------------------------------------------------

DESK_GROUP = "desk"
PURCHASES_GROUP = "purchases"
UNFINISHED_GROUPS = (DESK_GROUP, PURCHASES_GROUP)
DESK_UNFINISHED = (DeskStatus.NEW, DeskStatus.IN_PROGRESS)
EXAMPLES = 10


@dataclass(frozen=True)
class UnfinishedGroup:
    """One kind of unfinished work: how many, by status, and the first few by name."""

    name: str
    label: str
    count: int
    by_status: list[tuple[str, int]]
    examples: list[str]

    @property
    def more(self) -> int:
        return max(0, self.count - len(self.examples))

    @property
    def field(self) -> str:
        """The confirmation's name, in the release form, the API and the service's errors."""
        return f"confirm_{self.name}"


def _what(item: DeskItem) -> str:
    return str(item.get_action_display() or item.get_power_display() or item.get_kind_display())


def release_unfinished(*, cycle: Cycle) -> list[UnfinishedGroup]:
    """Influence desk items still New or In progress (a purchase's desk row is left to the
    purchases' group, which it follows), and XP purchases still waiting for sign-off (XP-01).
    Four queries whatever their number."""
    desk = DeskItem.objects.filter(
        cycle=cycle, status__in=DESK_UNFINISHED, withdrawn_at__isnull=True
    ).exclude(kind=ItemKind.PURCHASE)
    desk_counts = dict(
        desk.values_list("status").annotate(n=Count("pk")).order_by().values_list("status", "n")
    )
    desk_examples = [
        f"{item.character.name}: {_what(item)}"
        for item in desk.select_related("character").order_by("created_at", "pk")[:EXAMPLES]
    ]
    purchases = XpPurchase.objects.filter(cycle=cycle, status=PurchaseStatus.REQUESTED)
    purchase_count = purchases.count()
    purchase_examples = [
        gettext("%(character)s: %(what)s for %(cost)s XP")
        % {"character": p.character.name, "what": describe(p), "cost": p.cost}
        for p in purchases.select_related("character").order_by("requested_at", "pk")[:EXAMPLES]
    ]
    labels = dict(DeskStatus.choices)
    return [
        UnfinishedGroup(
            name=DESK_GROUP,
            label=gettext("Influence desk items still New or In progress"),
            count=sum(desk_counts.values()),
            by_status=[
                (str(labels[s]), desk_counts[s]) for s in DESK_UNFINISHED if s in desk_counts
            ],
            examples=desk_examples,
        ),
        UnfinishedGroup(
            name=PURCHASES_GROUP,
            label=gettext("XP purchases waiting for sign-off (XP-01)"),
            count=purchase_count,
            by_status=[],
            examples=purchase_examples,
        ),
    ]


class UnfinishedBlocks(ValidationError):
    """The chronicle's house rule DT-REL holds the release until the unfinished work is done."""


def _finish_text(group: UnfinishedGroup) -> str:
    if group.name == DESK_GROUP:
        return ngettext(
            "resolve, approve or reject %(n)d influence desk item still New or In progress",
            "resolve, approve or reject %(n)d influence desk items still New or In progress",
            group.count,
        ) % {"n": group.count}
    return ngettext(
        "sign off or reject %(n)d XP purchase still waiting",
        "sign off or reject %(n)d XP purchases still waiting",
        group.count,
    ) % {"n": group.count}


def _confirm_text(group: UnfinishedGroup) -> str:
    if group.name == DESK_GROUP:
        return ngettext(
            "Tick this to release with %(n)d desk item unfinished, or finish it first.",
            "Tick this to release with %(n)d desk items unfinished, or finish them first.",
            group.count,
        ) % {"n": group.count}
    return ngettext(
        "Tick this to release with %(n)d XP purchase still waiting, or sign it off first.",
        "Tick this to release with %(n)d XP purchases still waiting, or sign them off first.",
        group.count,
    ) % {"n": group.count}


def unfinished_blocked(cycle: Cycle, groups: list[UnfinishedGroup]) -> bool:
    """DT-REL: the house rule is on and something is unfinished."""
    # GEN-05: the settings in force for this cycle's game.
    house = cycle.chronicle.house_rules_for(cycle)
    return house.unfinished_blocks_release and any(g.count for g in groups)


def release_check_unfinished(
    *, cycle: Cycle, groups: list[UnfinishedGroup], confirmed: Collection[str] | None
) -> None:
    """Refuse a release while work is unfinished: always under the house rule DT-REL
    (`UnfinishedBlocks`, saying what to finish); else unless each non-empty group is among
    `confirmed` (a ValidationError naming each missing confirmation's field). `confirmed=None`
    is a caller with nobody to ask (the demo's seed, a script): only the house rule applies."""
    pending = [g for g in groups if g.count]
    if not pending:
        return
    if unfinished_blocked(cycle, groups):
        raise UnfinishedBlocks(
            gettext(
                "This chronicle's house rule (DT-REL) holds the release until the work is "
                "finished: %(what)s; then release."
            )
            % {"what": "; ".join(_finish_text(g) for g in pending)},
            code="unfinished",
        )
    if confirmed is None:
        return
    missing = {g.field: [_confirm_text(g)] for g in pending if g.name not in confirmed}
    if missing:
        raise ValidationError(missing)


def confirmations_from(data: dict[str, object]) -> set[str]:
    """The groups a form or an API body confirmed (`confirm_desk`, `confirm_purchases`)."""
    return {name for name in UNFINISHED_GROUPS if data.get(f"confirm_{name}") is True}
