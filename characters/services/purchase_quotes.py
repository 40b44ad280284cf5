"""Quotes for XP purchases in play (XP-01..05, DIS-02..08, CRE-03/04/09, INF-01, SEW-01): the
arithmetic and every check of a purchase, with nothing written. The live preview shows a quote;
`purchases.purchase_request` and the sign-off (`purchases.purchase_approve`) run the same quote
again under their locks, because the world may have moved since the request."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from chronicle.access import STAFF_ROLES
from chronicle.models import Chronicle, Cycle, Game, Membership
from chronicle.rules import HouseRules, settings_for
from chronicle.services import current_downtime

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
    XpPurchase,
)
from . import ledger

TRAIT_AREAS: tuple[str, ...] = ("physical", "social", "mental")
MAX_QUANTITY = 10
TEACHER_NAME_MAX = 120


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
