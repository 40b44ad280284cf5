"""The steps of the between-games resolution (DT-10), each computing one chunk's preview.

A step takes the cycle, a closed id range [lo, hi] of its subjects (characters or players) and
`now`, and returns unsaved `Outcome` rows: what it will do and why. It writes nothing; the
pipeline upserts the rows and the release applies them. Every step is set-based: a fixed number
of queries per chunk, whatever the chunk's size.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, Sum

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
from chronicle.models import Attendance, Cycle
from chronicle.rules import settings_for

from .. import rules
from ..models import Outcome, ReportPick, RunStatus, Submission, SubmissionStatus
from .votes import tally_for

Compute = Callable[[Cycle, int, int, dt.datetime], list[Outcome]]


@dataclass(frozen=True)
class Step:
    name: str
    label: str
    rule: str
    unit: str  # "character", "player" or "whole": what the chunks' id ranges count
    compute: Compute
    # The outcome steps a "whole" step writes (the havens' step writes seven), in DT-10 order.
    parts: tuple[tuple[str, str], ...] = ()


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


def _sheet(cycle: Cycle, player_ids: set[int]) -> dict[int, bool]:
    """DT-04: player id → waiver signed, for the players who attended the cycle's game."""
    return dict(
        Attendance.objects.filter(game_id=cycle.game_id, player_id__in=player_ids).values_list(
            "player_id", "waiver_signed"
        )
    )


def _paid(amount: Decimal, sheet: dict[int, bool], player_id: int) -> tuple[Decimal, str | None]:
    why_not = rules.award_ineligibility(
        attended=player_id in sheet, waiver_signed=sheet.get(player_id, False)
    )
    return (_xp(0), why_not) if why_not else (_xp(amount), None)


# --- Lock submissions ----------------------------------------------------------------------------


def lock_submissions(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
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
            title="Submissions locked",
            explanation=(
                f"{submitted} downtime(s) submitted before the deadline count; {drafts} "
                "draft(s) never submitted count as no downtime (DT-01)."
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
    house = cycle.chronicle.house_rules
    left = _influence_left(cycle, characters)
    return {
        pk: rules.cash_in(available, **settings_for(rules.cash_in, house))
        for pk, available in left.items()
    }


def no_downtime(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
    """DT-03: a character without a submitted downtime cashes in every influence point left
    for its money value, and the player gets the no-downtime XP (if DT-04 allows)."""
    house = cycle.chronicle.house_rules
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
    outcomes: list[Outcome] = []
    for character in characters:
        assert character.player_id is not None
        cashed = cash[character.pk]
        listed = (
            ", ".join(f"{k.title()} {v}" for k, v in cashed.points.items())
            or "no influence was left, so nothing is"
        )
        money = (
            f"{cashed.total_points} point(s) × {house.influence_money_value} = "
            f"{cashed.money} in money"
            if cashed.money is not None
            else "the STs set the money value (INF-05)"
        )
        outcomes.append(
            Outcome(
                step="no_downtime",
                subject=f"cash-in:{character.pk}",
                character=character,
                player_id=character.player_id,
                title=f"{character.name}: influence cashed in",
                explanation=f"No downtime submitted (DT-03): {listed} cashed in; {money}.",
                public_text=f"No downtime was submitted: {listed} cashed in; {money}.",
                value={"cash_in": cashed.points, "money": cashed.money},
                readers=[character.pk],
            )
        )
        if character.player_id in paid_elsewhere:
            continue
        paid_elsewhere.add(character.player_id)
        base = rules.base_xp(submitted=False, **settings_for(rules.base_xp, house))
        xp, why_not = _paid(base, sheet, character.player_id)
        outcomes.append(
            Outcome(
                step="no_downtime",
                subject=f"base:{character.player_id}",
                character=character,
                player_id=character.player_id,
                title=f"{character.name}: base XP, no downtime (DT-03)",
                explanation=f"{base} XP for a cycle without a downtime (DT-03)"
                + (f"; {why_not}." if why_not else "."),
                public_text=f"Base XP: {xp} (no downtime)" + (f"; {why_not}." if why_not else "."),
                xp=xp,
                value={"xp": str(xp)},
                readers=[character.pk],
                overridable="xp",
            )
        )
    return outcomes


# --- Torpor holds, diablerie steps, XP purchases ------------------------------------------------


def torpor_holds(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
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
        if hold.ended_at:
            local = hold.ended_at.astimezone(cycle.chronicle.tz)
            when = f"ended when the downtime closed ({local:%Y-%m-%d %H:%M})"
        else:
            when = "ends with the release"
        outcomes.append(
            Outcome(
                step="torpor_holds",
                subject=f"hold:{hold.pk}",
                character=captive,
                player_id=captive.player_id,
                title=f"{captive.name}: torpor hold ends (TOR-01)",
                explanation=(
                    f"{holder.name}'s hold on {captive.name} lasts one downtime and {when}; "
                    f"{captive.name} recovers overnight unless another hold or a captivity "
                    f"keeps them (TOR-01). Now: {captive.get_status_display().lower()}."
                ),
                public_text=f"The torpor hold on {captive.name} ends with this downtime (TOR-01).",
                value={"ends": True},
                readers=[hold.captive_id],
            )
        )
    return outcomes


def diablerie_steps(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
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
            title=f"{d.diablerist.name}: generation step waiting",
            explanation=(
                f"The diablerie of {d.victim_name} (generation {d.victim_generation}) lets "
                f"{d.diablerist.name} drop one generation, at most one per downtime, paid before "
                "any other XP (XP-05). It stays queued until requested and signed off, or "
                "declined."
            ),
            value={"queued": True},
        )
        for d in rows
    ]


def xp_purchases(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
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
        if p.status == PurchaseStatus.APPROVED:
            when = p.decided_at.astimezone(cycle.chronicle.tz) if p.decided_at else None
            explanation = (
                f"{describe(p)} for {p.cost} XP, signed off by "
                f"{p.decided_by.username if p.decided_by else 'an ST'}"
                f"{f' on {when:%Y-%m-%d %H:%M}' if when else ''}; charged at sign-off (XP-01)."
            )
            title = f"{p.character.name}: {describe(p)} (signed off)"
        else:
            explanation = (
                f"{describe(p)} is still waiting for an ST's sign-off: it is not applied with "
                "this release; sign it off or reject it on the purchase queue (XP-01)."
            )
            title = f"{p.character.name}: {describe(p)} (waiting)"
        outcomes.append(
            Outcome(
                step="xp_purchases",
                subject=f"purchase:{p.pk}",
                character=p.character,
                player_id=p.character.player_id,
                title=title,
                explanation=explanation,
                value={"status": p.status, "cost": str(p.cost)},
            )
        )
    return outcomes


# --- Awards (DT-03..08) -----------------------------------------------------------------------


def awards(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
    """The cycle's XP awards for the chunk's players, each only to a player who attended with a
    signed waiver (DT-04): the base XP of a submitted downtime (DT-03), picked game reports
    (DT-05) and votes (DT-07/08 through `vote_awards`, as the tally page shows them)."""
    house = cycle.chronicle.house_rules
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
    tally = tally_for(cycle=cycle)
    if tally.error:
        # A stored ballot the rules refuse: no vote award can be computed, and the release
        # refuses until it is fixed (an outcome carrying "error" blocks it).
        outcomes.append(
            Outcome(
                step="awards",
                subject="votes:error",
                title="The votes could not be counted",
                explanation=f"{tally.error} Fix the ballot on the desk and resolve again.",
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
    seen: set[int] = set()
    for s in submissions:
        if s.player_id in seen:  # one base XP per player, whatever their characters
            continue
        seen.add(s.player_id)
        base = rules.base_xp(submitted=True, **settings_for(rules.base_xp, house))
        xp, why_not = _paid(base, sheet, s.player_id)
        outcomes.append(
            Outcome(
                step="awards",
                subject=f"base:{s.player_id}",
                character=s.character,
                player_id=s.player_id,
                title=f"{s.character.name}: base XP, submitted downtime (DT-03)",
                explanation=f"{base} XP for a submitted downtime (DT-03)"
                + (f"; {why_not}." if why_not else "."),
                public_text=f"Base XP: {xp}" + (f"; {why_not}." if why_not else "."),
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
                title=f"{pick.submission.character.name}: game report picked (DT-05)",
                explanation=f"{amount} XP for a game report the STs picked (DT-05)"
                + (f"; {why_not}." if why_not else "."),
                public_text=f"Your game report was picked: {xp} XP"
                + (f"; {why_not}." if why_not else "."),
                xp=xp,
                value={"xp": str(xp)},
                readers=[pick.submission.character_id],
                overridable="xp",
            )
        )
    for player_id, award in sorted(voted.items()):
        xp, why_not = _paid(Decimal(award.xp), sheet, player_id)
        won = ", ".join(award.won)
        outcomes.append(
            Outcome(
                step="awards",
                subject=f"votes:{player_id}",
                player_id=player_id,
                title=f"{award.name}: votes won: {won} (DT-07)",
                explanation=f"{award.xp} XP for winning {won}, once per player (DT-07/08)"
                + (f"; {why_not}." if why_not else "."),
                public_text=f"Votes: {won}: {xp} XP" + (f"; {why_not}." if why_not else "."),
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


def notifications(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
    """The release sends each player one summary of their results; the preview says who gets
    one and how many results it will hold (its text is written at release, overrides included).
    Two queries per chunk: the run's player-facing outcomes and the chunk's players'
    characters."""
    player_of = dict(
        Character.objects.filter(
            chronicle_id=cycle.chronicle_id, player_id__gte=lo, player_id__lte=hi
        ).values_list("pk", "player_id")
    )
    # The summary is a keyed row on a character (characters.Notification): a player without
    # one (an NPC volunteer who won a vote) reads the results page but gets no e-mail.
    mailable = set(player_of.values())
    counts: dict[int, int] = defaultdict(int)
    # Only this run's outcomes: a superseded run's rows are deleted when this one finishes.
    for player_id, readers in (
        Outcome.objects.filter(cycle=cycle, run__status=RunStatus.RUNNING)
        .exclude(public_text="")
        .values_list("player_id", "readers")
    ):
        for player in reader_players(player_id, readers, player_of):
            if player in mailable:
                counts[player] += 1
    return [
        Outcome(
            step="notifications",
            subject=f"summary:{player_id}",
            player_id=player_id,
            title="One summary e-mail",
            explanation=f"One e-mail on release with {n} result(s).",
            value={"results": n},
        )
        for player_id, n in sorted(counts.items())
    ]


def havens(cycle: Cycle, lo: int, hi: int, now: dt.datetime) -> list[Outcome]:
    from .haven_steps import havens_preview

    return havens_preview(cycle=cycle, now=now)


HAVEN_PARTS: tuple[tuple[str, str], ...] = (
    ("ownership", "Ownership changes (HAV-01..03)"),
    ("forsaking", "Forsaking (HAV-06)"),
    ("theft", "Theft (HAV-07)"),
    ("construction", "Construction and repairs (HAV-10..24)"),
    ("mobile_havens", "Mobile havens move (HAV-25b)"),
    ("searches", "Searches (HAV-25b)"),
    ("influence_attacks", "Influence attacks (HAV-25c)"),
)

# DT-10: lock submissions → no-downtime defaults → ownership, forsaking, theft → construction
# and repairs → mobile havens move → searches → influence attacks → torpor holds → diablerie
# steps → approved XP purchases → awards → notifications.
STEPS: tuple[Step, ...] = (
    Step("lock", "Lock submissions", "DT-01", "whole", lock_submissions),
    Step("no_downtime", "No-downtime defaults", "DT-03", "character", no_downtime),
    Step("havens", "Havens", "DT-10", "whole", havens, parts=HAVEN_PARTS),
    Step("torpor_holds", "Torpor holds", "TOR-01", "character", torpor_holds),
    Step("diablerie_steps", "Diablerie steps", "XP-05", "character", diablerie_steps),
    Step("xp_purchases", "Approved XP purchases", "XP-01", "character", xp_purchases),
    Step("awards", "Awards", "DT-03..08", "player", awards),
    Step("notifications", "Notifications", "DT-10", "player", notifications),
)
STEP_BY_NAME = {step.name: step for step in STEPS}


def outcome_step_order() -> list[tuple[str, str]]:
    """Every outcome step with its label, in DT-10 order (the havens' step in its parts)."""
    order: list[tuple[str, str]] = []
    for step in STEPS:
        order.extend(step.parts or [(step.name, f"{step.label} ({step.rule})")])
    return order


OUTCOME_POSITION = {name: i for i, (name, _) in enumerate(outcome_step_order())}
