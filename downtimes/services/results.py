"""What a player reads once a downtime's results are released (issue 12), for the results page
and the summary e-mail alike, so the two never disagree: each outcome in the player's words
(`pipeline.public_line`), and each of their actions with the storytellers' written result.

Plain words only: step labels without rule IDs ("Awards", not "Awards (DT-03..08)"), never an
ST's note, title or explanation. Reads only; a constant number of queries whatever the size.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils.functional import Promise, lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from characters.models import Character
from chronicle.models import Cycle, CycleStatus

from ..models import DeskItem, ItemKind, OutcomeOverride, Submission
from ..plain_words import without_rule_ids
from . import pipeline
from .steps import outcome_step_order

# The steps as a player reads them; the storytellers' labels carry the rule IDs.
PLAYER_STEP_LABELS: dict[str, str | Promise] = {
    "lock": _("Submissions"),
    "no_downtime": _("No downtime"),
    "ownership": _("Havens: ownership"),
    "forsaking": _("Havens: forsaken"),
    "theft": _("Havens: theft"),
    "construction": _("Havens: building and repairs"),
    "mobile_havens": _("Havens: on the move"),
    "searches": _("Searches"),
    "influence_attacks": _("Influence attacks"),
    "torpor_holds": _("Torpor holds"),
    "diablerie_steps": _("Diablerie"),
    "xp_purchases": _("XP purchases"),
    "awards": _("Awards"),
    "notifications": _("Notifications"),
}


def player_step_label(step: str) -> str:
    """A step's name for players: its own words, or the storytellers' label without its IDs."""
    label = PLAYER_STEP_LABELS.get(step)
    if label is None:
        label = without_rule_ids(str(dict(outcome_step_order()).get(step, step)))
    return str(label)


def action_words(item: DeskItem) -> str:
    """What the player asked, in a few words: the same on the page and in the e-mail."""
    if item.kind == ItemKind.INFLUENCE:
        words = (
            f"{item.points} {item.get_influence_display()}: "
            f"{without_rule_ids(item.get_action_display())}"
        )
        structure = item.target_structure
        target = (structure.name if structure is not None else "") or (
            item.target_name or item.target_text
        )
        return f"{words} · {target}" if target else words
    if item.kind == ItemKind.POWER:
        power = without_rule_ids(item.get_power_display())
        if item.target_name:
            return gettext("%(power)s on %(target)s") % {
                "power": power,
                "target": item.target_name,
            }
        return power
    if item.kind == ItemKind.AT_GAME:
        return gettext("At the game: %(action)s") % {
            "action": without_rule_ids(item.get_action_display())
        }
    return item.description


# Lazy in the summary e-mail: worded when each mail is written, in its reader's language.
_lazy_action_words = lazy(action_words, str)


@dataclass(frozen=True)
class ActionResult:
    item: DeskItem
    character: Character
    what: str | Promise
    result: str


@dataclass
class ResultLine:
    label: str
    character: Character | None
    text: str


@dataclass
class CycleResults:
    cycle: Cycle
    lines: list[ResultLine] = field(default_factory=list)
    actions: list[ActionResult] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)


def _released_items(items: QuerySet[DeskItem]) -> QuerySet[DeskItem]:
    """Items whose written result the storytellers released (never a withdrawn one)."""
    return (
        items.filter(released_at__isnull=False, withdrawn_at__isnull=True)
        .exclude(result="")
        .select_related("character", "target_structure", "cycle__game")
        .order_by("character__name", "created_at", "pk")
    )


def _action(item: DeskItem) -> ActionResult:
    return ActionResult(
        item=item, character=item.character, what=_lazy_action_words(item), result=item.result
    )


def released_actions(
    *, cycle: Cycle, players: tuple[int | None, int | None] = (None, None)
) -> dict[int, list[ActionResult]]:
    """Player id -> the released results of their characters' actions in `cycle` (one
    query): what the summary e-mail adds to the outcomes. `players` bounds the player ids
    (None: no bound), for the release's summaries written one page of players at a time."""
    lo, hi = players
    items = DeskItem.objects.filter(cycle=cycle)
    if lo is not None:
        items = items.filter(character__player_id__gte=lo)
    if hi is not None:
        items = items.filter(character__player_id__lte=hi)
    out: dict[int, list[ActionResult]] = defaultdict(list)
    for item in _released_items(items):
        if item.character.player_id is not None:
            out[item.character.player_id].append(_action(item))
    return out


def results_of(*, user: User, chronicle_id: int) -> list[CycleResults]:
    """The results page: per cycle, newest first, the released outcomes the player reads, the
    released results of their characters' actions, and their downtimes of released cycles.
    Four queries: outcomes, their cycles' overrides, submissions, actions."""
    outcomes = list(pipeline.results_for(user=user).filter(cycle__chronicle_id=chronicle_id))
    overrides: dict[int, dict[tuple[str, str], OutcomeOverride]] = defaultdict(dict)
    for override in OutcomeOverride.objects.filter(cycle_id__in={o.cycle_id for o in outcomes}):
        overrides[override.cycle_id][(override.step, override.subject)] = override
    by_cycle: dict[int, CycleResults] = {}

    def entry(cycle: Cycle) -> CycleResults:
        return by_cycle.setdefault(cycle.pk, CycleResults(cycle=cycle))

    for outcome in outcomes:
        entry(outcome.cycle).lines.append(
            ResultLine(
                label=player_step_label(outcome.step),
                character=outcome.character,
                # The summary e-mail's own words (an XP override included), so the page and
                # the mail never disagree.
                text=pipeline.public_line(outcome, overrides[outcome.cycle_id]),
            )
        )
    for submission in (
        Submission.objects.filter(cycle__chronicle_id=chronicle_id, player=user)
        .filter(cycle__status=CycleStatus.RELEASED)
        .select_related("character", "cycle__game")
        .order_by("character__name", "pk")
    ):
        entry(submission.cycle).submissions.append(submission)
    items = DeskItem.objects.filter(cycle__chronicle_id=chronicle_id, character__player=user)
    for item in _released_items(items):
        entry(item.cycle).actions.append(_action(item))
    return sorted(by_cycle.values(), key=lambda e: e.cycle.deadline_at, reverse=True)
