"""The steps of the between-games resolution (DT-10), each computing one chunk's preview.

A step takes the cycle, a closed id range [lo, hi] of its subjects (characters or players) and
`now`, and returns unsaved `Outcome` rows: what it will do and why. It writes nothing; the
pipeline upserts the rows and the release applies them. Every step is set-based: a fixed number
of queries per chunk, whatever the chunk's size.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import BooleanField, Case, Count, Exists, OuterRef, Q, Sum, When
from django.db.models.expressions import RawSQL
from django.utils import translation
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy, gettext_noop

from characters import rules as character_rules
from characters.models import (
    Approval,
    Character,
    Diablerie,
    GenerationStep,
    InfluenceLoan,
    InfluenceSpend,
    PurchaseStatus,
    TorporHold,
    XpPurchase,
)
from characters.services.purchases import describe
from characters.services.records import PC_IN_PLAY
from chronicle import rules as chronicle_rules
from chronicle.models import Attendance, Cycle
from chronicle.rules import settings_for

from .. import rules
from ..models import (
    Outcome,
    ReportPick,
    ResolutionRun,
    RunStatus,
    Submission,
    SubmissionStatus,
)
from ..wording import Phrase, joined, label, phrase, stored, worded
from .votes import AwardTally, award_tally

# (cycle, lo, hi, now, **options): a step ignores the options it does not take; `awards`
# takes `tally` (an `AwardTally` computed once by the caller).
Compute = Callable[..., list[Outcome]]


@dataclass(frozen=True)
class Step:
    name: str
    label: Any  # lazy: shown in the reader's language
    rule: str
    unit: str  # "character", "player" or "whole": what the chunks' id ranges count
    compute: Compute
    # The outcome steps a "whole" step writes (the havens' step writes seven), in DT-10 order.
    parts: tuple[tuple[str, Any], ...] = ()


def _xp(value: Decimal | int) -> Decimal:
    return Decimal(value).quantize(Decimal("0.1"))


def _pcs(cycle: Cycle, lo: int, hi: int) -> Any:
    """The chunk's player characters in play: approved, with a player, active, in torpor or
    staked."""
    return Character.objects.filter(
        chronicle_id=cycle.chronicle_id,
        pk__gte=lo,
        pk__lte=hi,
        player__isnull=False,
        approval=Approval.APPROVED,
        # A PC in torpor or staked is still in play: its player keeps DT-03's XP.
        status__in=PC_IN_PLAY,
    )


class SheetLine(NamedTuple):
    """A player's line of the cycle's sign-in sheet, as DT-04 reads it."""

    waiver_signed: bool
    adult: bool  # GEN-01: of the minimum age on the game's date (True when no date given)


def _sheet(cycle: Cycle, player_ids: set[int]) -> dict[int, SheetLine]:
    """DT-04: player id → their sign-in line, for the players who attended the cycle's game.
    One query: the date of birth (GEN-01) and the game's date come joined to the sheet."""
    minimum = settings_for(chronicle_rules.adult_on, cycle.chronicle.house_rules)
    return {
        player_id: SheetLine(
            waiver_signed=waiver_signed,
            adult=chronicle_rules.adult_on(born, game_date, **minimum),
        )
        for player_id, waiver_signed, born, game_date in Attendance.objects.filter(
            game_id=cycle.game_id, player_id__in=player_ids
        ).values_list(
            "player_id", "waiver_signed", "player__chronicle_profile__birth_date", "game__date"
        )
    }


def _paid(
    amount: Decimal, sheet: dict[int, SheetLine], player_id: int
) -> tuple[Decimal, str | None]:
    """The XP paid and, when DT-04 refuses it, the reason in English (kept in the outcome;
    the rules' catalog entry translates it where it is read)."""
    line = sheet.get(player_id)
    with translation.override("en"):
        why_not = rules.award_ineligibility(
            attended=line is not None,
            waiver_signed=line is not None and line.waiver_signed,
            adult=line is None or line.adult,
        )
    return (_xp(0), why_not) if why_not else (_xp(amount), None)


def _award(paid: str, refused: str, why_not: str | None, **params: Any) -> Phrase:
    """An award's sentence: `paid` (ends with a full stop), or `refused` with DT-04's reason
    (both marked with gettext_noop by the caller; `refused` has a %(why_not)s)."""
    if why_not:
        # The reason is a rules msgid (written in English by `_paid`).
        return phrase(refused, why_not=phrase(why_not), **params)
    return phrase(paid, **params)


# --- Lock submissions ----------------------------------------------------------------------------


def lock_submissions(
    cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any
) -> list[Outcome]:
    """DT-10's first step: the cycle is closed, so submissions are locked; the preview says how
    many count (submitted before the deadline) and how many drafts do not (DT-01)."""
    counts = dict(
        Submission.objects.filter(cycle=cycle)
        .values("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    submitted = counts.get(SubmissionStatus.SUBMITTED, 0)
    drafts = counts.get(SubmissionStatus.DRAFT, 0)
    return [
        Outcome(
            step="lock",
            subject="cycle",
            **worded(
                title=phrase(gettext_noop("Submissions locked")),
                explanation=phrase(
                    gettext_noop(
                        "Downtimes submitted before the deadline, which count: %(submitted)s. "
                        "Drafts never submitted, which count as no downtime: %(drafts)s (DT-01)."
                    ),
                    submitted=submitted,
                    drafts=drafts,
                ),
            ),
            value={"submitted": submitted, "drafts": drafts},
        )
    ]


# --- No downtime (DT-03) -----------------------------------------------------------------------


def _influence_left(cycle: Cycle, characters: list[Character]) -> dict[int, dict[str, int]]:
    """INF-03 for a whole chunk in two queries: what each character may still spend."""
    ids = [c.pk for c in characters]
    spent: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in (
        InfluenceSpend.objects.filter(cycle=cycle, character_id__in=ids)
        .values("character_id", "influence")
        .annotate(total=Sum("points"))
    ):
        spent[row["character_id"]][row["influence"]] = int(row["total"])
    borrowed: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lent: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for borrower, lender, influence, points in InfluenceLoan.objects.filter(
        Q(borrower_id__in=ids) | Q(lender_id__in=ids),
        cycle=cycle,
        confirmed_at__isnull=False,
        withdrawn_at__isnull=True,
    ).values_list("borrower_id", "lender_id", "influence", "points"):
        borrowed[borrower][influence] += points
        lent[lender][influence] += points
    return {
        c.pk: {
            name: character_rules.influence_available(
                rating=rating,
                spent=spent[c.pk][name],
                borrowed=borrowed[c.pk][name],
                lent=lent[c.pk][name],
            )
            for name, rating in c.influences.items()
        }
        for c in characters
    }


def cash_in_for(cycle: Cycle, characters: list[Character]) -> dict[int, rules.CashIn]:
    """DT-03: what each character without a downtime cashes in; the release recomputes it and
    refuses a preview that no longer matches."""
    house = cycle.chronicle.house_rules_for(cycle)  # GEN-05: in force for this cycle's game
    left = _influence_left(cycle, characters)
    settings = settings_for(rules.cash_in, house)  # once per chunk, not per character
    return {pk: rules.cash_in(available, **settings) for pk, available in left.items()}


def no_downtime(cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any) -> list[Outcome]:
    """DT-03: a character without a submitted downtime cashes in every influence point left
    for its money value, and the player gets the no-downtime XP (if DT-04 allows)."""
    house = cycle.chronicle.house_rules_for(cycle)  # GEN-05: in force for this cycle's game
    submitted = Submission.objects.filter(
        cycle=cycle, character=OuterRef("pk"), status=SubmissionStatus.SUBMITTED
    )
    characters = list(
        _pcs(cycle, lo, hi).annotate(submitted=Exists(submitted)).filter(submitted=False)
    )
    if not characters:
        return []
    cash = cash_in_for(cycle, characters)
    players = {c.player_id for c in characters if c.player_id}
    sheet = _sheet(cycle, players)
    # One base XP per player (XP-07 lets a player have one PC in play, but data from before it,
    # or the admin, can give two): none here if another of their PCs submitted (the awards
    # step pays that one), and one for two PCs without a downtime.
    paid_elsewhere = set(
        Submission.objects.filter(
            cycle=cycle,
            status=SubmissionStatus.SUBMITTED,
            player_id__in=players,
            character__status__in=PC_IN_PLAY,
            character__approval=Approval.APPROVED,
        ).values_list("player_id", flat=True)
    )
    base = rules.base_xp(submitted=False, **settings_for(rules.base_xp, house))
    outcomes: list[Outcome] = []
    for character in characters:
        assert character.player_id is not None
        cashed = cash[character.pk]
        outcomes.append(
            Outcome(
                step="no_downtime",
                subject=f"cash-in:{character.pk}",
                character=character,
                player_id=character.player_id,
                **worded(
                    title=phrase(
                        gettext_noop("%(name)s: influence cashed in"), name=character.name
                    ),
                    **_cash_in_words(cashed, house.influence_money_value),
                ),
                value={"cash_in": cashed.points, "money": cashed.money},
                readers=[character.pk],
            )
        )
        if character.player_id in paid_elsewhere:
            continue
        paid_elsewhere.add(character.player_id)
        xp, why_not = _paid(base, sheet, character.player_id)
        outcomes.append(
            Outcome(
                step="no_downtime",
                subject=f"base:{character.player_id}",
                character=character,
                player_id=character.player_id,
                **worded(
                    title=phrase(
                        gettext_noop("%(name)s: base XP, no downtime (DT-03)"),
                        name=character.name,
                    ),
                    explanation=_award(
                        gettext_noop("%(xp)s XP for a cycle without a downtime (DT-03)."),
                        gettext_noop(
                            "%(xp)s XP for a cycle without a downtime (DT-03); %(why_not)s."
                        ),
                        why_not,
                        xp=base,
                    ),
                    public_text=_award(
                        gettext_noop("Base XP: %(xp)s (no downtime)."),
                        gettext_noop("Base XP: %(xp)s (no downtime); %(why_not)s."),
                        why_not,
                        xp=xp,
                    ),
                ),
                xp=xp,
                value={"xp": str(xp)},
                readers=[character.pk],
                overridable="xp",
            )
        )
    return outcomes


def _cash_in_words(cashed: rules.CashIn, money_value: int) -> dict[str, Phrase]:
    """DT-03's cash-in, for the STs (`explanation`) and the player (`public_text`)."""
    if not cashed.points:
        return {
            "explanation": phrase(
                gettext_noop(
                    "No downtime submitted (DT-03): no influence was left, so nothing is cashed in."
                )
            ),
            "public_text": phrase(
                gettext_noop(
                    "No downtime was submitted: no influence was left, so nothing is cashed in."
                )
            ),
        }
    listed = joined(
        [
            phrase(
                gettext_noop("%(influence)s %(points)s"), influence=label("influence", k), points=v
            )
            for k, v in cashed.points.items()
        ]
    )
    if cashed.money is None:
        return {
            "explanation": phrase(
                gettext_noop(
                    "No downtime submitted (DT-03): %(listed)s cashed in; the STs set the money "
                    "value (INF-05)."
                ),
                listed=listed,
            ),
            "public_text": phrase(
                gettext_noop(
                    "No downtime was submitted: %(listed)s cashed in; the STs set the money "
                    "value (INF-05)."
                ),
                listed=listed,
            ),
        }
    figures = {
        "listed": listed,
        "points": cashed.total_points,
        "value": money_value,
        "money": cashed.money,
    }
    return {
        "explanation": phrase(
            gettext_noop(
                "No downtime submitted (DT-03): %(listed)s cashed in; influence points: "
                "%(points)s × %(value)s = %(money)s in money."
            ),
            **figures,
        ),
        "public_text": phrase(
            gettext_noop(
                "No downtime was submitted: %(listed)s cashed in; influence points: %(points)s × "
                "%(value)s = %(money)s in money."
            ),
            **figures,
        ),
    }


# --- Torpor holds, diablerie steps, XP purchases ------------------------------------------------


def torpor_holds(cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any) -> list[Outcome]:
    """TOR-01: a hold lasts one downtime; the captive then recovers overnight, unless another
    hold or a captivity still keeps them. The hourly sweeper (characters, issue 3) ends a hold
    once its cycle closes, so the preview lists the cycle's holds whether ended already or
    ending at the release (which runs the same sweep)."""
    holds = TorporHold.objects.filter(
        cycle=cycle, captive_id__gte=lo, captive_id__lte=hi
    ).select_related("captive", "holder")
    outcomes = []
    for hold in holds:
        captive, holder = hold.captive, hold.holder
        names = {
            "holder": holder.name,
            "captive": captive.name,
            "status": label("character_status", captive.status, lower=True),
        }
        if hold.ended_at:
            local = hold.ended_at.astimezone(cycle.chronicle.tz)
            explanation = phrase(
                gettext_noop(
                    "%(holder)s's hold on %(captive)s lasts one downtime and ended when the "
                    "downtime closed (%(closed)s); %(captive)s recovers overnight unless another "
                    "hold or a captivity keeps them (TOR-01). Now: %(status)s."
                ),
                closed=f"{local:%Y-%m-%d %H:%M}",
                **names,
            )
        else:
            explanation = phrase(
                gettext_noop(
                    "%(holder)s's hold on %(captive)s lasts one downtime and ends with the "
                    "release; %(captive)s recovers overnight unless another hold or a captivity "
                    "keeps them (TOR-01). Now: %(status)s."
                ),
                **names,
            )
        outcomes.append(
            Outcome(
                step="torpor_holds",
                subject=f"hold:{hold.pk}",
                character=captive,
                player_id=captive.player_id,
                **worded(
                    title=phrase(
                        gettext_noop("%(name)s: torpor hold ends (TOR-01)"), name=captive.name
                    ),
                    explanation=explanation,
                    public_text=phrase(
                        gettext_noop(
                            "The torpor hold on %(name)s ends with this downtime (TOR-01)."
                        ),
                        name=captive.name,
                    ),
                ),
                value={"ends": True},
                readers=[hold.captive_id],
            )
        )
    return outcomes


def diablerie_steps(
    cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any
) -> list[Outcome]:
    """XP-05: a queued generation step waits for the diablerist's purchase (paid before any
    other XP) or their decline; the preview lists each, the STs sign off on the queue."""
    rows = Diablerie.objects.filter(
        diablerist__chronicle_id=cycle.chronicle_id,
        diablerist_id__gte=lo,
        diablerist_id__lte=hi,
        generation_step=GenerationStep.QUEUED,
    ).select_related("diablerist")
    return [
        Outcome(
            step="diablerie_steps",
            subject=f"diablerie:{d.pk}",
            character=d.diablerist,
            player_id=d.diablerist.player_id,
            **worded(
                title=phrase(
                    gettext_noop("%(name)s: generation step waiting"), name=d.diablerist.name
                ),
                explanation=phrase(
                    gettext_noop(
                        "The diablerie of %(victim)s (generation %(generation)s) lets %(name)s "
                        "drop one generation, at most one per downtime, paid before any other XP "
                        "(XP-05). It stays queued until requested and signed off, or declined."
                    ),
                    victim=d.victim_name,
                    generation=d.victim_generation,
                    name=d.diablerist.name,
                ),
            ),
            value={"queued": True},
        )
        for d in rows
    ]


def xp_purchases(cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any) -> list[Outcome]:
    """XP-01: purchases are charged when an ST signs them off, so the preview shows the
    cycle's signed-off purchases (already in the ledger) and warns of any still waiting."""
    purchases = XpPurchase.objects.filter(
        cycle=cycle,
        character_id__gte=lo,
        character_id__lte=hi,
        status__in=[PurchaseStatus.APPROVED, PurchaseStatus.REQUESTED],
    ).select_related("character", "decided_by")
    outcomes = []
    for p in purchases:
        # The purchase as characters' ledger words it (kept in English, translated if known).
        what = stored(describe(p))
        if p.status == PurchaseStatus.APPROVED:
            when = p.decided_at.astimezone(cycle.chronicle.tz) if p.decided_at else None
            by: str | Phrase = (
                p.decided_by.username if p.decided_by else phrase(gettext_noop("an ST"))
            )
            explanation = (
                phrase(
                    gettext_noop(
                        "%(purchase)s for %(cost)s XP, signed off by %(by)s on %(when)s; "
                        "charged at sign-off (XP-01)."
                    ),
                    purchase=what,
                    cost=p.cost,
                    by=by,
                    when=f"{when:%Y-%m-%d %H:%M}",
                )
                if when
                else phrase(
                    gettext_noop(
                        "%(purchase)s for %(cost)s XP, signed off by %(by)s; charged at "
                        "sign-off (XP-01)."
                    ),
                    purchase=what,
                    cost=p.cost,
                    by=by,
                )
            )
            title = phrase(
                gettext_noop("%(name)s: %(purchase)s (signed off)"),
                name=p.character.name,
                purchase=what,
            )
        else:
            explanation = phrase(
                gettext_noop(
                    "%(purchase)s is still waiting for an ST's sign-off: it is not applied with "
                    "this release; sign it off or reject it on the purchase queue (XP-01)."
                ),
                purchase=what,
            )
            title = phrase(
                gettext_noop("%(name)s: %(purchase)s (waiting)"),
                name=p.character.name,
                purchase=what,
            )
        outcomes.append(
            Outcome(
                step="xp_purchases",
                subject=f"purchase:{p.pk}",
                character=p.character,
                player_id=p.character.player_id,
                **worded(title=title, explanation=explanation),
                value={"status": p.status, "cost": str(p.cost)},
            )
        )
    return outcomes


# --- Awards (DT-03..08) -----------------------------------------------------------------------


def stored_tally(cycle: Cycle) -> AwardTally:
    """The vote awards stored with the cycle's current run (the running one, else the latest
    finished): computed once per run (`pipeline.cycle_resolve`), not once per chunk. A run
    started before runs stored it is counted here."""
    stored = (
        ResolutionRun.objects.filter(cycle=cycle, status__in=[RunStatus.RUNNING, RunStatus.DONE])
        .order_by(
            # The running run first (at most one per cycle), then the latest finished.
            Case(When(status=RunStatus.RUNNING, then=0), default=1),
            "-number",
        )
        .values_list("tally", flat=True)
        .first()
    )
    return award_tally(cycle) if stored is None else AwardTally.from_json(stored)


def awards(
    cycle: Cycle,
    lo: int,
    hi: int,
    now: dt.datetime,
    *,
    tally: AwardTally | None = None,
    **options: Any,
) -> list[Outcome]:
    """The cycle's XP awards for the chunk's players, each only to a player who attended with a
    signed waiver (DT-04): the base XP of a submitted downtime (DT-03), picked game reports
    (DT-05) and votes (DT-07/08 through `vote_awards`, as the tally page shows them)."""
    house = cycle.chronicle.house_rules_for(cycle)  # GEN-05: in force for this cycle's game
    outcomes: list[Outcome] = []
    submissions = list(
        Submission.objects.filter(
            cycle=cycle,
            status=SubmissionStatus.SUBMITTED,
            player_id__gte=lo,
            player_id__lte=hi,
            character__status__in=PC_IN_PLAY,
            character__approval=Approval.APPROVED,
        )
        .select_related("character")
        .order_by("player_id", "character_id")
    )
    picks = list(
        ReportPick.objects.filter(
            cycle=cycle, submission__player_id__gte=lo, submission__player_id__lte=hi
        ).select_related("submission__character")
    )
    if tally is None:
        tally = stored_tally(cycle)
    if tally.error:
        # A stored ballot the rules refuse: no vote award can be computed, and the release
        # refuses until it is fixed (an outcome carrying "error" blocks it).
        outcomes.append(
            Outcome(
                step="awards",
                subject="votes:error",
                **worded(
                    title=phrase(gettext_noop("The votes could not be counted")),
                    explanation=phrase(
                        gettext_noop("%(error)s Fix the ballot on the desk and resolve again."),
                        error=stored(tally.error),
                    ),
                ),
                value={"error": tally.error},
            )
        )
    voted = {
        int(a.player): a for a in tally.awards if a.player.isdigit() and lo <= int(a.player) <= hi
    }
    sheet = _sheet(
        cycle,
        {s.player_id for s in submissions} | {p.submission.player_id for p in picks} | set(voted),
    )
    base = rules.base_xp(submitted=True, **settings_for(rules.base_xp, house))
    seen: set[int] = set()
    for s in submissions:
        if s.player_id in seen:  # one base XP per player, whatever their characters
            continue
        seen.add(s.player_id)
        xp, why_not = _paid(base, sheet, s.player_id)
        outcomes.append(
            Outcome(
                step="awards",
                subject=f"base:{s.player_id}",
                character=s.character,
                player_id=s.player_id,
                **worded(
                    title=phrase(
                        gettext_noop("%(name)s: base XP, submitted downtime (DT-03)"),
                        name=s.character.name,
                    ),
                    explanation=_award(
                        gettext_noop("%(xp)s XP for a submitted downtime (DT-03)."),
                        gettext_noop("%(xp)s XP for a submitted downtime (DT-03); %(why_not)s."),
                        why_not,
                        xp=base,
                    ),
                    public_text=_award(
                        gettext_noop("Base XP: %(xp)s."),
                        gettext_noop("Base XP: %(xp)s; %(why_not)s."),
                        why_not,
                        xp=xp,
                    ),
                ),
                xp=xp,
                value={"xp": str(xp)},
                readers=[s.character_id],
                overridable="xp",
            )
        )
    for pick in picks:
        player_id = pick.submission.player_id
        amount = house.game_report_xp
        xp, why_not = _paid(amount, sheet, player_id)
        outcomes.append(
            Outcome(
                step="awards",
                subject=f"report:{pick.pk}",
                character=pick.submission.character,
                player_id=player_id,
                **worded(
                    title=phrase(
                        gettext_noop("%(name)s: game report picked (DT-05)"),
                        name=pick.submission.character.name,
                    ),
                    explanation=_award(
                        gettext_noop("%(xp)s XP for a game report the STs picked (DT-05)."),
                        gettext_noop(
                            "%(xp)s XP for a game report the STs picked (DT-05); %(why_not)s."
                        ),
                        why_not,
                        xp=amount,
                    ),
                    public_text=_award(
                        gettext_noop("Your game report was picked: %(xp)s XP."),
                        gettext_noop("Your game report was picked: %(xp)s XP; %(why_not)s."),
                        why_not,
                        xp=xp,
                    ),
                ),
                xp=xp,
                value={"xp": str(xp)},
                readers=[pick.submission.character_id],
                overridable="xp",
            )
        )
    for player_id, award in sorted(voted.items()):
        xp, why_not = _paid(Decimal(award.xp), sheet, player_id)
        won = joined([label("vote_category", c) for c in award.categories])
        outcomes.append(
            Outcome(
                step="awards",
                subject=f"votes:{player_id}",
                player_id=player_id,
                **worded(
                    title=phrase(
                        gettext_noop("%(name)s: votes won: %(won)s (DT-07)"),
                        name=award.name,
                        won=won,
                    ),
                    explanation=_award(
                        gettext_noop("%(xp)s XP for winning %(won)s, once per player (DT-07/08)."),
                        gettext_noop(
                            "%(xp)s XP for winning %(won)s, once per player (DT-07/08); "
                            "%(why_not)s."
                        ),
                        why_not,
                        xp=award.xp,
                        won=won,
                    ),
                    public_text=_award(
                        gettext_noop("Votes: %(won)s: %(xp)s XP."),
                        gettext_noop("Votes: %(won)s: %(xp)s XP; %(why_not)s."),
                        why_not,
                        xp=xp,
                        won=won,
                    ),
                ),
                xp=xp,
                value={"xp": str(xp)},
                overridable="xp",
            )
        )
    return outcomes


# --- Notifications ----------------------------------------------------------------------------


def reader_players(
    player_id: int | None, readers: list[int], player_of: dict[int, int]
) -> set[int]:
    """The players who read an outcome once released: its player and the players of its reader
    characters. The release and the notifications step both count with this."""
    found = {player_of.get(pk) for pk in readers} | {player_id}
    return {p for p in found if p is not None}


def naming_a_reader_sql(cycle: Cycle, lo: int, hi: int) -> tuple[str, list[Any]]:
    """The PostgreSQL query of `_naming_a_reader` and its parameters (a test reads its plan)."""
    character = Character._meta.db_table
    outcome = Outcome._meta.db_table
    run = ResolutionRun._meta.db_table
    return (
        f'SELECT o.id, o.player_id, o.readers FROM "{character}" c '
        f'JOIN LATERAL (SELECT o.id, o.player_id, o.readers FROM "{outcome}" o '
        f'JOIN "{run}" run ON run.id = o.run_id + 0 AND run.status = %s '
        "WHERE o.readers @> jsonb_build_array(c.id) AND o.cycle_id + 0 = %s "
        "AND o.public_text <> '' OFFSET 0) o ON TRUE "
        "WHERE c.chronicle_id = %s AND c.player_id BETWEEN %s AND %s",
        [RunStatus.RUNNING, cycle.pk, cycle.chronicle_id, lo, hi],
    )


def _naming_a_reader(cycle: Cycle, lo: int, hi: int) -> list[tuple[int, int | None, Any]]:
    """(pk, player, readers) of the running run's player-facing outcomes whose `readers` name a
    character of a player of [lo, hi]. On PostgreSQL, one lookup per character in the GIN index
    on `readers` (migration 0005), each testing one id: a single `@> ANY(every id)` rechecks
    every candidate against the whole list, and a plan through the cycle's index tests every
    outcome of the cycle (quadratic again), so the cycle and the run are compared as
    `cycle_id + 0` and `run_id + 0`, which no index offers (through the run's index, each lookup
    read the whole run: 0.67 ms a character at 10,000 players, against 0.005 ms through the GIN
    index alone). `OFFSET 0` keeps the lookup a subquery run per character: without it the
    planner flattens the join and, while the run's fresh outcomes have no statistics yet (the
    benchmark at 10,000 players), filters every outcome of the cycle against every character
    (4 s a chunk instead of 0.1 s). SQLite (`make run`, small chronicles) looks through each
    outcome's list."""
    character = Character._meta.db_table
    outcome = Outcome._meta.db_table
    if connection.vendor != "postgresql":
        return list(
            Outcome.objects.filter(cycle=cycle, run__status=RunStatus.RUNNING)
            .exclude(public_text="")
            .filter(
                RawSQL(
                    f'EXISTS (SELECT 1 FROM json_each("{outcome}"."readers") r '
                    f'JOIN "{character}" c ON c.id = r.value '
                    "WHERE c.chronicle_id = %s AND c.player_id BETWEEN %s AND %s)",
                    [cycle.chronicle_id, lo, hi],
                    output_field=BooleanField(),
                )
            )
            .order_by()
            .values_list("pk", "player_id", "readers")
        )
    with connection.cursor() as cursor:
        cursor.execute(*naming_a_reader_sql(cycle, lo, hi))
        return [
            (pk, player_id, json.loads(readers) if isinstance(readers, str) else readers)
            for pk, player_id, readers in cursor.fetchall()
        ]


def notifications(
    cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any
) -> list[Outcome]:
    """The release sends each player one summary of their results; the preview says who gets
    one and how many results it will hold (its text is written at release, overrides included).
    Three queries per chunk, each reading only rows about the chunk's players: their
    characters, the run's player-facing outcomes of theirs, and those naming one of their
    characters as a reader (`_naming_a_reader`)."""
    player_of = dict(
        Character.objects.filter(
            chronicle_id=cycle.chronicle_id, player_id__gte=lo, player_id__lte=hi
        ).values_list("pk", "player_id")
    )
    # The summary is a keyed row on a character (characters.Notification): a player without
    # one (an NPC volunteer who won a vote) reads the results page but gets no e-mail.
    mailable = set(player_of.values())
    # Only this run's outcomes: a superseded run's rows are deleted when this one finishes.
    public = (
        Outcome.objects.filter(run__status=RunStatus.RUNNING)
        .exclude(public_text="")
        .order_by()
        .values_list("pk", "player_id", "readers")
    )
    # The chunk's players' own outcomes (the (cycle, player) index), then those naming one of
    # their characters as a reader; an outcome in both is counted once.
    rows: dict[int, tuple[int | None, Any]] = {
        pk: (player_id, readers)
        for pk, player_id, readers in public.filter(
            cycle=cycle, player_id__gte=lo, player_id__lte=hi
        )
    }
    rows.update(
        (pk, (player_id, readers)) for pk, player_id, readers in _naming_a_reader(cycle, lo, hi)
    )
    counts: dict[int, int] = defaultdict(int)
    for player_id, readers in rows.values():
        for player in reader_players(player_id, readers, player_of):
            if player in mailable:
                counts[player] += 1
    return [
        Outcome(
            step="notifications",
            subject=f"summary:{player_id}",
            player_id=player_id,
            **worded(
                title=phrase(gettext_noop("One summary e-mail")),
                explanation=phrase(
                    gettext_noop("One e-mail on release; results in it: %(results)s."), results=n
                ),
            ),
            value={"results": n},
        )
        for player_id, n in sorted(counts.items())
    ]


def havens(cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any) -> list[Outcome]:
    from .haven_steps import havens_preview

    return havens_preview(cycle=cycle, now=now)


def herd_blood(cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any) -> list[Outcome]:
    """BLD-04 / INF-02: Herd spent for blood in downtime becomes stored blood on release."""
    from .herd_blood import herd_blood as herd_blood_preview

    return herd_blood_preview(cycle, lo, hi, now)


HAVEN_PARTS: tuple[tuple[str, Any], ...] = (
    ("ownership", gettext_lazy("Ownership changes (HAV-01..03)")),
    ("forsaking", gettext_lazy("Forsaking (HAV-06)")),
    ("theft", gettext_lazy("Theft (HAV-07)")),
    ("construction", gettext_lazy("Construction and repairs (HAV-10..24)")),
    ("mobile_havens", gettext_lazy("Mobile havens move (HAV-25b)")),
    ("searches", gettext_lazy("Searches (HAV-25b)")),
    ("influence_attacks", gettext_lazy("Influence attacks (HAV-25c)")),
)


# DT-10: lock submissions → no-downtime defaults → ownership, forsaking, theft → construction
# and repairs → mobile havens move → searches → influence attacks → (Herd blood, BLD-04: not in
# DT-10's list, an influence use like the havens') → torpor holds → diablerie steps → approved
# XP purchases → awards → notifications.
def _in_english(compute: Compute) -> Compute:
    """A step computes its outcomes in English, whoever runs it (a worker, or the request of
    the storyteller who resolved): the English columns and the rules' reasons kept in the
    phrases must not depend on a request's language (downtimes.wording)."""

    def run(cycle: Cycle, lo: int, hi: int, now: dt.datetime, **options: Any) -> list[Outcome]:
        with translation.override("en"):
            return compute(cycle, lo, hi, now, **options)

    return run


STEPS: tuple[Step, ...] = (
    Step("lock", gettext_lazy("Lock submissions"), "DT-01", "whole", _in_english(lock_submissions)),
    Step(
        "no_downtime",
        gettext_lazy("No-downtime defaults"),
        "DT-03",
        "character",
        _in_english(no_downtime),
    ),
    Step(
        "havens", gettext_lazy("Havens"), "DT-10", "whole", _in_english(havens), parts=HAVEN_PARTS
    ),
    Step(
        "herd_blood",
        gettext_lazy("Herd blood"),
        "BLD-04",
        "character",
        _in_english(herd_blood),
    ),
    Step(
        "torpor_holds",
        gettext_lazy("Torpor holds"),
        "TOR-01",
        "character",
        _in_english(torpor_holds),
    ),
    Step(
        "diablerie_steps",
        gettext_lazy("Diablerie steps"),
        "XP-05",
        "character",
        _in_english(diablerie_steps),
    ),
    Step(
        "xp_purchases",
        gettext_lazy("Approved XP purchases"),
        "XP-01",
        "character",
        _in_english(xp_purchases),
    ),
    Step("awards", gettext_lazy("Awards"), "DT-03..08", "player", _in_english(awards)),
    Step(
        "notifications",
        gettext_lazy("Notifications"),
        "DT-10",
        "player",
        _in_english(notifications),
    ),
)
STEP_BY_NAME = {step.name: step for step in STEPS}


def outcome_step_order() -> list[tuple[str, Any]]:
    """Every outcome step with its label (lazy: in the reader's language, with its rule IDs),
    in DT-10 order (the havens' step in its parts)."""
    order: list[tuple[str, Any]] = []
    for step in STEPS:
        order.extend(step.parts or [(step.name, format_lazy("{} ({})", step.label, step.rule))])
    return order


OUTCOME_POSITION = {name: i for i, (name, _) in enumerate(outcome_step_order())}
