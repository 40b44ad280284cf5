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
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, pgettext

from chronicle.access import STAFF_ROLES
from chronicle.models import Chronicle, Cycle, Game, Membership
from chronicle.moments import moment_text
from chronicle.rules import HouseRules, settings_for
from chronicle.services import current_downtime
from chronicle.stored_text import in_english, stored_sentences

from .. import rules
from ..models import (
    Acquired,
    Approval,
    Character,
    Creature,
    Diablerie,
    DisciplineLevel,
    GenerationStep,
    PurchaseKind,
    PurchaseMoment,
    PurchaseStatus,
    Status,
    XpKind,
    XpPurchase,
)
from . import ledger
from .common import in_reader_language
from .control import control_check
from .notify import notify

TRAIT_AREAS: tuple[str, ...] = ("physical", "social", "mental")
MAX_QUANTITY = 10
TEACHER_NAME_MAX = 120

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


@dataclass(frozen=True)
class Problem:
    """One reason a purchase cannot go ahead; `field` names the form field it belongs beside
    (None for the purchase as a whole). The message cites the rule ID."""

    field: str | None
    message: str


@dataclass
class Quote:
    cost: Decimal
    problems: list[Problem] = field(default_factory=list)
    cycle: Cycle | None = None
    diablerie: Diablerie | None = None
    # What the asker should know but that does not stop the request, e.g. that an ST will
    # confirm the teacher they named (DIS-07).
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, field_name: str | None, message: str) -> None:
        self.problems.append(Problem(field_name, message))

    def error(self) -> ValidationError:
        """Every problem at once, each beside its field."""
        by_field: dict[str, list[str]] = {}
        for problem in self.problems:
            by_field.setdefault(problem.field or "__all__", []).append(problem.message)
        return ValidationError(by_field)


@dataclass(frozen=True)
class _Asker:
    """Who asks for a quote, as far as the teacher checks care: a storyteller, or a player who
    did or did not name their teacher in words."""

    staff: bool
    named: bool


# --- Helpers -----------------------------------------------------------------------------------


def _is_staff(user: User, chronicle: Chronicle) -> bool:
    return Membership.objects.filter(chronicle=chronicle, user=user, role__in=STAFF_ROLES).exists()


def _require_staff(user: User, chronicle: Chronicle) -> None:
    if not _is_staff(user, chronicle):
        raise PermissionDenied(_("Only the chronicle's storytellers may sign off XP purchases."))


def current_cycle(*, chronicle: Chronicle, moment: str, now: dt.datetime) -> Cycle | None:
    """The cycle a purchase counts in (DIS-08): at the game, the cycle of today's game; in
    downtime, the current downtime (`chronicle.services.current_downtime`, the one definition
    every app uses). Not "the latest open cycle": a game scheduled ahead has an open cycle
    with a later deadline, and a purchase made now belongs to the downtime being played."""
    if moment == PurchaseMoment.GAME:
        today = now.astimezone(chronicle.tz).date()
        return (
            Cycle.objects.filter(chronicle=chronicle, game__date=today)
            .select_related("game")
            .first()
        )
    return current_downtime(chronicle, now=now)


def play_starts(game: Game, chronicle: Chronicle) -> dt.datetime | None:
    """XP-01: the moment play starts, in the chronicle's zone; None for a game with no start
    time, where the whole game day counts (only the day is checked, by `current_cycle`)."""
    if game.start_time is None:
        return None
    return dt.datetime.combine(game.date, game.start_time, tzinfo=chronicle.tz)


def _check_before_play(
    quote: Quote, cycle: Cycle, chronicle: Chronicle, asked_at: dt.datetime
) -> None:
    """XP-01: at the game, XP is spent before play starts (`rules.check_before_play`)."""
    try:
        rules.check_before_play(asked_at, play_starts=play_starts(cycle.game, chronicle))
    except ValueError as exc:
        quote.add("moment", str(exc))


def _clan(character: Character) -> str | None:
    return character.clan or None if character.creature == Creature.KINDRED else None


def _top_level(character: Character, discipline: str) -> int:
    levels = DisciplineLevel.objects.filter(character=character, discipline=discipline)
    return max(levels.values_list("level", flat=True), default=0)


def _in_clan(character: Character, discipline: str, house: HouseRules) -> bool:
    return rules.is_in_clan(
        discipline,
        clan=_clan(character),
        chosen=list(character.chosen_disciplines or []),
        **settings_for(rules.is_in_clan, house),
    )


def _levels_this_cycle(character: Character, cycle: Cycle, *, exclude: int | None) -> int:
    """DIS-08: levels approved in this cycle plus levels still asked for in it."""
    approved = DisciplineLevel.objects.filter(
        character=character, cycle=cycle, acquired=Acquired.PLAY
    ).count()
    pending = XpPurchase.objects.filter(
        character=character,
        cycle=cycle,
        kind=PurchaseKind.DISCIPLINE,
        status=PurchaseStatus.REQUESTED,
    )
    if exclude is not None:
        pending = pending.exclude(pk=exclude)
    return approved + sum(len(p.levels) for p in pending.only("levels"))


def _queued_diablerie(character: Character) -> Diablerie | None:
    return (
        Diablerie.objects.filter(diablerist=character, generation_step=GenerationStep.QUEUED)
        .order_by("occurred_on", "pk")
        .first()
    )


# --- The quote ---------------------------------------------------------------------------------


def purchase_quote(
    *,
    character: Character,
    kind: str,
    discipline: str = "",
    levels: Sequence[str] = (),
    target: str = "",
    quantity: int = 1,
    moment: str = PurchaseMoment.DOWNTIME,
    teacher: Character | None = None,
    teacher_name: str = "",
    staff: bool = False,
    now: dt.datetime | None = None,
    cycle: Cycle | None = None,
    exclude: int | None = None,
    asked_at: dt.datetime | None = None,
) -> Quote:
    """The cost from the rules and every problem, writing nothing (the live preview and the
    re-check at approval). At approval, `cycle` is the one the player asked in (it still
    counts if it closed meanwhile), `exclude` the purchase itself, so it does not count
    against itself (DIS-08), and `asked_at` the moment the player asked (by default `now`):
    an at-game purchase asked before play started stays good when an ST signs it off later
    that night (XP-01).

    `staff` says who asks. Only storytellers link a teacher character and read why that
    character cannot teach; for anyone else no message names a teacher or their levels, and a
    teacher named in words (`teacher_name`) stands in for the missing one until an ST
    confirms it at sign-off (DIS-07, SEW-01)."""
    now = now or timezone.now()
    chronicle = character.chronicle
    quote = Quote(cost=Decimal(0))

    # XP-01 / XP-02 / CRE-09: who may spend at all.
    if character.approval != Approval.APPROVED or character.status != Status.ACTIVE:
        quote.add(None, _("Only an approved, active character can spend XP in play (XP-01)."))
    if character.background_approved_at is None:
        quote.add(
            None,
            _(
                "XP spending is blocked until an ST approves the character's background "
                "(XP-02, CRE-09)."
            ),
        )
    if character.player_id is None:
        quote.add(None, _("An NPC has no player and so no XP to spend (XP-07)."))
    if moment not in PurchaseMoment.values:
        quote.add("moment", _("Choose when: in downtime or at the game before play (XP-01)."))
        return quote
    if not isinstance(quantity, int) or not 1 <= quantity <= MAX_QUANTITY:
        quote.add("quantity", _("Buy between 1 and %(most)s at a time.") % {"most": MAX_QUANTITY})
        return quote
    if cycle is None:
        cycle = current_cycle(chronicle=chronicle, moment=moment, now=now)
    quote.cycle = cycle
    house = chronicle.house_rules_for(cycle)  # GEN-05: in force for the cycle at hand
    if cycle is None:
        if moment == PurchaseMoment.GAME:
            quote.add("moment", _("There is no game today; buy at a game only on its day (XP-01)."))
        else:
            quote.add("moment", _("No downtime is open right now to buy in (XP-01)."))
    elif moment == PurchaseMoment.GAME:
        _check_before_play(quote, cycle, chronicle, asked_at or now)

    queued = _queued_diablerie(character)
    named = teacher_name.strip()
    if len(named) > TEACHER_NAME_MAX:
        quote.add(
            "teacher_name",
            _("Give the teacher's name in at most %(most)s letters.") % {"most": TEACHER_NAME_MAX},
        )
    asker = _Asker(staff=staff, named=bool(named))
    if kind == PurchaseKind.DISCIPLINE:
        _quote_discipline(
            quote, character, discipline, levels, moment, teacher, asker, cycle, exclude
        )
    elif kind == PurchaseKind.GENERATION:
        _quote_generation(quote, character, quantity, moment, queued, cycle, exclude)
    elif kind == PurchaseKind.TRAIT:
        if target not in TRAIT_AREAS:
            quote.add("target", _("Name the trait area: physical, social or mental."))
        else:
            _check_generation_maximum(quote, character, target, quantity)
        quote.cost = Decimal(
            rules.unit_cost("trait", quantity, **settings_for(rules.unit_cost, house))
        )
    elif kind == PurchaseKind.ABILITY:
        if not target.strip():
            quote.add("target", _("Name the ability to raise, e.g. investigation."))
        quote.cost = Decimal(
            rules.unit_cost("ability", quantity, **settings_for(rules.unit_cost, house))
        )
    elif kind == PurchaseKind.WILLPOWER:
        _check_generation_maximum(quote, character, "willpower", quantity)
        quote.cost = Decimal(
            rules.unit_cost("willpower", quantity, **settings_for(rules.unit_cost, house))
        )
    elif kind == PurchaseKind.INFLUENCE:
        if target not in rules.INFLUENCE_TYPES:
            quote.add(
                "target",
                _("Name the influence: %(influences)s (INF-01).")
                % {"influences": ", ".join(rules.INFLUENCE_TYPES)},
            )
        else:
            unit = rules.influence_point_cost(
                target, clan=_clan(character), **settings_for(rules.influence_point_cost, house)
            )
            quote.cost = Decimal(unit * quantity)
    elif kind == PurchaseKind.SEWER_LORE:
        _quote_sewer_lore(
            quote,
            character,
            quantity,
            teacher,
            asker,
            rules.unit_cost("sewer_lore", 1, **settings_for(rules.unit_cost, house)),
        )
    else:
        quote.add("kind", _("Choose what to buy."))
        return quote

    # XP-05: a queued generation drop is paid before any other XP.
    if queued is not None and kind != PurchaseKind.GENERATION:
        quote.add(
            None,
            _(
                "The generation step from the diablerie of %(victim)s must be bought or "
                "declined before any other purchase (XP-05)."
            )
            % {"victim": queued.victim_name},
        )
    if character.player_id is not None and quote.cost > 0:
        balance = ledger.xp_balance(chronicle=chronicle, player=character.player_id)
        if balance < quote.cost:
            quote.add(
                None,
                _("Not enough XP: this costs %(cost)s and the balance is %(balance)s (XP-02).")
                % {"cost": quote.cost, "balance": balance},
            )
    return quote


def _quote_discipline(
    quote: Quote,
    character: Character,
    discipline: str,
    levels: Sequence[str],
    moment: str,
    teacher: Character | None,
    asker: _Asker,
    cycle: Cycle | None,
    exclude: int | None,
) -> None:
    house = character.chronicle.house_rules_for(cycle)  # GEN-05: the cycle at hand
    if discipline not in rules.DISCIPLINE_TITLES:
        quote.add("discipline", _("Choose a discipline."))
        return
    clan = _clan(character)
    chosen = list(character.chosen_disciplines or [])
    try:
        rules.check_discipline_allowed(
            discipline, kind=character.kind, clan=clan, chosen=chosen, at_creation=False
        )
    except ValueError as exc:
        quote.add("discipline", str(exc))
        return
    top = _top_level(character, discipline)
    owned = rules.level_code(top) if top else None
    try:
        rules.check_level_order(list(levels), owned=owned)
    except ValueError as exc:
        quote.add("levels", str(exc))
        return
    in_clan = _in_clan(character, discipline, house)
    quote.cost = Decimal(
        rules.discipline_cost(
            list(levels),
            in_clan=in_clan,
            at_creation=False,
            path_owned=top > 0,
            caitiff=clan == "caitiff",
            **settings_for(rules.discipline_cost, house),
        )
    )
    for level in levels:
        problem = _teacher_problem(character, discipline, level, teacher)
        if problem:
            _teacher_refusal(quote, asker, teacher, problem, "DIS-07")
            break
    done = _levels_this_cycle(character, cycle, exclude=exclude) if cycle else 0
    try:
        rules.check_purchase_timing(
            list(levels),
            when=moment,
            in_clan=in_clan,
            levels_bought_this_cycle=done,
            # CLN-01: a Tremere's other Thaumaturgy paths, "any time" (`tremere_paths_any_time`).
            tremere_path=clan == "tremere" and discipline in rules.THAUMATURGY_PATHS,
            **settings_for(rules.check_purchase_timing, house),
        )
    except ValueError as exc:
        # DIS-08: out-of-clan levels in downtime only (a matter of when); else the monthly
        # limit (a matter of how many levels).
        quote.add("moment" if isinstance(exc, rules.PurchaseMomentError) else "levels", str(exc))


def _teacher_refusal(
    quote: Quote, asker: _Asker, teacher: Character | None, problem: str, rule: str
) -> None:
    """A teacher check failed with `problem`. Staff read it as is, and so does anyone when no
    teacher was given (the sentence then names nobody). A player who named their teacher in
    words is told an ST confirms it. A player never reads why a given character cannot teach:
    that would tell them about someone they may not know."""
    if asker.staff:
        quote.add("teacher", problem)
    elif teacher is None and asker.named:
        quote.notes.append(
            _("A storyteller will confirm your teacher at sign-off (%(rule)s).") % {"rule": rule}
        )
    elif teacher is None:
        quote.add("teacher", problem)
    else:
        quote.add("teacher", _("The teacher given cannot teach this (%(rule)s).") % {"rule": rule})


def _teacher_problem(
    character: Character, discipline: str, level: str, teacher: Character | None
) -> str | None:
    """DIS-07, with the teacher read from the database: an active character of the same
    chronicle, their clan, chosen disciplines and level in the discipline taught."""
    house = character.chronicle.house_rules
    clan = _clan(character)
    chosen = list(character.chosen_disciplines or [])
    needed = rules.teacher_required(discipline, level, student_clan=clan, student_chosen=chosen)
    if not needed:
        return None
    title = rules.DISCIPLINE_TITLES[discipline]
    if teacher is not None:
        if teacher.pk == character.pk:
            return _("Nobody can teach themself (DIS-07).")
        if teacher.chronicle_id != character.chronicle_id or teacher.status != Status.ACTIVE:
            return _("The teacher must be an active character of this chronicle (DIS-07).")
        top = _top_level(teacher, discipline)
        teacher_clan = _clan(teacher)
        if top == 0 or teacher_clan is None:
            return _(
                "%(teacher)s does not have %(discipline)s in-clan and cannot teach it (DIS-07)."
            ) % {"teacher": teacher.name, "discipline": title}
        model: rules.Teacher | None = rules.Teacher(
            clan=teacher_clan,
            level=rules.level_code(top),
            chosen=tuple(teacher.chosen_disciplines or ()),
        )
    else:
        model = None
    try:
        rules.check_teacher(
            discipline,
            level,
            student_clan=clan,
            student_chosen=chosen,
            teacher=model,
            **settings_for(rules.check_teacher, house),
        )
    except ValueError as exc:
        return str(exc)
    return None


def _check_generation_maximum(
    quote: Quote, character: Character, target: str, quantity: int
) -> None:
    """CRE-07: a trait area or willpower may not go above the generation's maximum. The CLN-01
    clan bonus point sits in the column but may exceed the maximum, so it is not counted."""
    maximums = rules.generation_maximums(
        character.generation,
        **settings_for(rules.generation_maximums, character.chronicle.house_rules),
    )
    if target == "willpower":
        limit, counted = maximums.willpower, character.willpower
        what = pgettext("trait", "Willpower")
    else:
        bonus = int(character.clan_bonus == target)
        limit, counted = maximums.traits, getattr(character, target) - bonus
        what = rules.trait_area_title(target)
    if counted + quantity > limit:
        field_name = "quantity" if target == "willpower" else "target"
        quote.add(
            field_name,
            _(
                "%(what)s would be %(total)s; generation %(generation)s allows at most "
                "%(limit)s (CRE-07)."
            )
            % {
                "what": what,
                "total": counted + quantity,
                "generation": character.generation,
                "limit": limit,
            },
        )


def _quote_generation(
    quote: Quote,
    character: Character,
    quantity: int,
    moment: str,
    queued: Diablerie | None,
    cycle: Cycle | None,
    exclude: int | None,
) -> None:
    house = character.chronicle.house_rules_for(cycle)  # GEN-05: the cycle at hand
    if character.creature != Creature.KINDRED:
        quote.add("kind", _("Only kindred have a generation to lower (XP-03)."))
        return
    if character.generation - quantity < 1:
        quote.add("quantity", _("A generation cannot go below 1st (XP-03)."))
    if queued is not None:
        quote.diablerie = queued
        # XP-05: at most one step per downtime, bought in downtime.
        if quantity != 1:
            quote.add("quantity", _("A diablerie drops the generation one step at a time (XP-05)."))
        if moment != PurchaseMoment.DOWNTIME:
            quote.add(
                "moment", _("A generation drop after diablerie is bought in downtime (XP-05).")
            )
        if cycle is not None:
            taken = XpPurchase.objects.filter(
                character=character,
                cycle=cycle,
                diablerie__isnull=False,
                status__in=[PurchaseStatus.REQUESTED, PurchaseStatus.APPROVED],
            )
            if exclude is not None:
                taken = taken.exclude(pk=exclude)
            if taken.exists():
                quote.add(None, _("At most one generation drop per downtime (XP-05)."))
    quote.cost = Decimal(
        rules.generation_cost(
            quantity,
            caitiff=_clan(character) == "caitiff",
            diablerie=queued is not None,
            **settings_for(rules.generation_cost, house),
        )
    )


def _quote_sewer_lore(
    quote: Quote,
    character: Character,
    quantity: int,
    teacher: Character | None,
    asker: _Asker,
    unit: int,
) -> None:
    """SEW-01: at ability cost per level; at most 8; a non-Nosferatu is taught each level by a
    Nosferatu who has that level or higher."""
    new_lore = character.sewer_lore + quantity
    if new_lore > rules.MAX_SEWER_LORE:
        quote.add(
            "quantity",
            _("Sewer Lore goes up to %(most)s at most (SEW-01).") % {"most": rules.MAX_SEWER_LORE},
        )
    if _clan(character) != "nosferatu":
        problem = None
        if teacher is None:
            problem = _("Sewer Lore must be taught by a Nosferatu (SEW-01).")
        elif (
            _clan(teacher) != "nosferatu"
            or teacher.chronicle_id != character.chronicle_id
            or teacher.status != Status.ACTIVE
        ):
            problem = _("%(teacher)s is not an active Nosferatu here (SEW-01).") % {
                "teacher": teacher.name
            }
        elif teacher.sewer_lore < new_lore:
            problem = _(
                "%(teacher)s has Sewer Lore %(lore)s and can teach up to that level only; you "
                "would reach %(reach)s (SEW-01)."
            ) % {"teacher": teacher.name, "lore": teacher.sewer_lore, "reach": new_lore}
        if problem:
            _teacher_refusal(quote, asker, teacher, problem, "SEW-01")
    quote.cost = Decimal(unit * quantity)


# --- Writes ------------------------------------------------------------------------------------


def _same_request(
    character: Character,
    *,
    kind: str,
    discipline: str,
    levels: list[str],
    target: str,
    quantity: int,
    moment: str,
    teacher: Character | None,
    teacher_name: str,
) -> XpPurchase | None:
    return (
        XpPurchase.objects.filter(
            character=character,
            status=PurchaseStatus.REQUESTED,
            kind=kind,
            discipline=discipline,
            levels=levels,
            target=target,
            quantity=quantity,
            moment=moment,
            teacher=teacher,
            teacher_name=teacher_name,
        )
        .order_by("pk")
        .first()
    )


def purchase_requote(
    *, purchase: XpPurchase, teacher: Character | None, now: dt.datetime | None = None
) -> Quote:
    """The full check of a stored request, as an ST signs it off (XP-01): every rule again, in
    the cycle it was asked in, without the request counting against itself (DIS-08)."""
    return purchase_quote(
        character=purchase.character,
        kind=purchase.kind,
        discipline=purchase.discipline,
        levels=purchase.levels,
        target=purchase.target,
        quantity=purchase.quantity,
        moment=purchase.moment,
        teacher=teacher,
        staff=True,
        now=now,
        cycle=purchase.cycle,
        exclude=purchase.pk,
        asked_at=purchase.requested_at,
    )


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
