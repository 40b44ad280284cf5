"""Blood drinks and the bonds they make (BND-01..10, CRE-04).

The drinks are the truth; `Bond` rows are what `rules.bond_state` says about them, kept so the
sheet and the daily sweeper (BND-10) read a due date instead of replaying every history. Only
the thrall's player is ever told anything: regnants and donors never learn whether a bond took
(BND-08).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.models import Chronicle
from chronicle.rules import settings_for
from chronicle.services import chronicle_today
from chronicle.stored_text import stored_sentences, stored_text

from .. import rules
from ..models import (
    BloodDrink,
    Bond,
    BondBreak,
    BondKind,
    Character,
    Creature,
    RegnantRequest,
    RequestSetAt,
)
from .common import in_reader_language, refusal
from .notify import notify

Key = tuple[int, str]  # (regnant id, bond kind)

# Why a bond ended, stored in English (the API gives it as stored) and told to the thrall's
# player in their language (chronicle.stored_text).
ENDED_EMBRACED = gettext_noop("embraced (CRE-04)")
ENDED_RITUAL = gettext_noop("broken by a ritual")
ENDED_REGNANT_DIED = gettext_noop("the regnant died")
ENDED_EXPIRED = gettext_noop("expired")
ENDED_LAPSED = gettext_noop("lapsed")
stored_sentences(ENDED_EMBRACED, ENDED_RITUAL, ENDED_REGNANT_DIED, ENDED_EXPIRED, ENDED_LAPSED)


@dataclass(frozen=True)
class _Row:
    level: int
    bound: bool
    since: dt.date | None
    due_on: dt.date


def _kindred(character: Character, field: str, rule: str) -> None:
    if character.creature != Creature.KINDRED:
        raise ValidationError(
            {
                field: _(
                    "%(character)s is not kindred; only kindred blood makes a bond (%(rule)s)."
                )
                % {"character": character.name, "rule": rule}
            }
        )


@transaction.atomic
def drink_record(
    *,
    drinker: Character,
    donors: Sequence[Character],
    mixed: bool,
    night: dt.date,
    by: User,
    now: dt.datetime | None = None,
) -> BloodDrink:
    """An ST records one drink of kindred blood (BND-01/04): unmixed blood has exactly one
    donor; mixed blood lists each donor once. The drinker's bonds are recomputed at once."""
    now = now or timezone.now()
    chronicle = drinker.chronicle
    today = chronicle_today(chronicle, now)
    donors = list(donors)
    if not donors:
        raise ValidationError({"donors": _("Name the kindred whose blood was drunk (BND-01).")})
    if not mixed and len(donors) != 1:
        raise ValidationError(
            {"donors": _("Unmixed blood comes from exactly one kindred; mark it mixed (BND-04).")}
        )
    if len({d.pk for d in donors}) != len(donors):
        raise ValidationError({"donors": _("List each donor of mixed blood once (BND-04).")})
    for donor in donors:
        if donor.chronicle_id != chronicle.pk:
            raise ValidationError(
                {"donors": _("Every donor must be a character of this chronicle.")}
            )
        if donor.pk == drinker.pk:
            raise ValidationError({"donors": _("A character cannot be bound to itself (BND-01).")})
        _kindred(donor, "donors", "BND-08")
    if night > today:
        raise ValidationError({"night": _("A drink can be recorded only once it has happened.")})
    drink = BloodDrink.objects.create(
        drinker=drinker, night=night, mixed=mixed, recorded_by=by, recorded_at=now
    )
    drink.donors.set(donors)
    bonds_refresh(thrall_ids=[drinker.pk], on=today, now=now)
    return drink


def _end_reason(
    key: Key,
    *,
    bound: bool,
    thrall: Character,
    deaths: dict[int, dt.date],
    breaks: list[BondBreak],
    on: dt.date,
) -> str:
    regnant_id = key[0]
    if thrall.embraced_on is not None and thrall.embraced_on <= on:
        return ENDED_EMBRACED
    if any(b.regnant_id == regnant_id and b.night <= on for b in breaks):
        return ENDED_RITUAL
    died = deaths.get(regnant_id)
    if died is not None and died <= on:
        return ENDED_REGNANT_DIED
    return ENDED_EXPIRED if bound else ENDED_LAPSED


def _wanted(state: rules.BondState) -> dict[Key, tuple[int, bool, dt.date | None]]:
    rows: dict[Key, tuple[int, bool, dt.date | None]] = {}
    if state.pure_regnant is not None:
        rows[(int(state.pure_regnant), BondKind.PURE)] = (3, True, state.pure_since)
    for kindred, level in state.pure_levels.items():
        rows[(int(kindred), BondKind.PURE)] = (level, False, None)
    for donor in state.share_bonds:
        rows[(int(donor), BondKind.SHARED)] = (0, True, None)
    for donor, count in state.share_counts.items():
        rows[(int(donor), BondKind.SHARED)] = (count, False, None)
    return rows


def _state_rows(
    drinks: list[rules.Drink],
    *,
    on: dt.date,
    deaths: dict[int, dt.date],
    rituals: list[rules.BondBreak],
    embraced_on: dt.date | None,
    settings: dict[str, object],
) -> dict[Key, _Row]:
    """The rows `bond_state` implies on `on`, each with the first later day it changes.

    A bond in force has its end date from the rules. A partial level or count has none, so its
    lapse day is found by asking the rules on each day something could change (a drink's
    anniversary or a death's), which needs no further data: later drinks are unknown anyway.
    """

    def state_on(day: dt.date) -> rules.BondState:
        return rules.bond_state(
            drinks,
            on=day,
            deaths={str(k): v for k, v in deaths.items()},
            rituals=rituals,
            embraced_on=embraced_on,
            **settings,  # type: ignore[arg-type]
        )

    state = state_on(on)
    wanted = _wanted(state)
    rows: dict[Key, _Row] = {}
    pending: dict[Key, tuple[int, bool, dt.date | None]] = {}
    for key, (level, bound, since) in wanted.items():
        regnant_id, kind = key
        if bound and kind == BondKind.PURE:
            assert state.pure_ends is not None
            rows[key] = _Row(level, True, since, state.pure_ends)
        elif bound:
            ends = state.share_bonds[str(regnant_id)]
            count = sum(1 for d in drinks if str(regnant_id) in d.donors and d.night <= on)
            rows[key] = _Row(count, True, since, ends)
        else:
            pending[key] = (level, bound, since)
    if pending:
        months = {int(str(settings["pure_bond_months"])), int(str(settings["shared_bond_months"]))}
        after_death = int(str(settings["bond_months_after_death"]))
        candidates = {rules.add_months(d.night, m) for d in drinks if d.night <= on for m in months}
        candidates |= {rules.add_months(died, after_death) for died in deaths.values()}
        for day in sorted(c for c in candidates if c > on):
            later = _wanted(state_on(day))
            for key in [k for k in pending if later.get(k) != pending[k]]:
                level, bound, since = pending.pop(key)
                rows[key] = _Row(level, bound, since, day)
            if not pending:
                break
        for key, (level, bound, since) in pending.items():
            # Unreachable with a consistent history; a far due date keeps the sweeper quiet.
            rows[key] = _Row(level, bound, since, rules.add_months(on, 12))
    return rows


@transaction.atomic
def bonds_refresh(*, thrall_ids: Iterable[int], on: dt.date, now: dt.datetime | None = None) -> int:
    """Make each thrall's live `Bond` rows match `rules.bond_state` on `on` (BND-01..07,
    CRE-04); returns how many rows ended or lapsed.

    Reads every drink, donor, death and ritual of all the thralls in a fixed number of queries.
    Tells the thrall's player when a pure level reaches 2 (BND-01, never naming the regnant)
    and when a bond ends (BND-10); never tells a regnant or donor anything (BND-08).
    """
    now = now or timezone.now()
    ids = sorted(set(thrall_ids))
    if not ids:
        return 0
    # Locked in id order so two refreshes of overlapping thralls cannot deadlock, and two
    # refreshes of one thrall cannot both insert its live row.
    thralls = {
        t.pk: t
        for t in Character.objects.select_for_update(of=("self",))
        .select_related("chronicle", "player__chronicle_profile")
        .filter(pk__in=ids)
        .order_by("pk")
    }
    drink_rows = list(
        BloodDrink.objects.filter(drinker_id__in=ids)
        .order_by("night", "pk")
        .values_list("pk", "drinker_id", "night", "mixed")
    )
    donor_links = BloodDrink.donors.through.objects.filter(
        blooddrink__drinker_id__in=ids
    ).values_list("blooddrink_id", "character_id")
    donors_of: dict[int, list[int]] = defaultdict(list)
    for drink_id, donor_id in donor_links:
        donors_of[drink_id].append(donor_id)
    breaks_of: dict[int, list[BondBreak]] = defaultdict(list)
    for ritual in BondBreak.objects.filter(thrall_id__in=ids):
        breaks_of[ritual.thrall_id].append(ritual)
    live: dict[int, dict[Key, Bond]] = defaultdict(dict)
    for bond in Bond.objects.filter(thrall_id__in=ids, ended_on__isnull=True).select_related(
        "regnant"
    ):
        live[bond.thrall_id][(bond.regnant_id, bond.kind)] = bond
    related = {d for ds in donors_of.values() for d in ds}
    related |= {k[0] for rows in live.values() for k in rows}
    deaths: dict[int, dt.date] = {
        pk: died
        for pk, died in Character.objects.filter(pk__in=related).values_list("pk", "died_on")
        if died is not None
    }

    drinks_of: dict[int, list[rules.Drink]] = defaultdict(list)
    for drink_id, drinker_id, night, mixed in drink_rows:
        donors = tuple(str(d) for d in sorted(donors_of[drink_id]))
        if donors:
            drinks_of[drinker_id].append(rules.Drink(night, donors, mixed))

    ended = 0
    for thrall_id in ids:
        thrall = thralls.get(thrall_id)
        if thrall is None:
            continue
        settings = settings_for(rules.bond_state, thrall.chronicle.house_rules)
        breaks = breaks_of[thrall_id]
        try:
            wanted = _state_rows(
                drinks_of[thrall_id],
                on=on,
                deaths=deaths,
                rituals=[rules.BondBreak(b.night, str(b.regnant_id)) for b in breaks],
                embraced_on=thrall.embraced_on,
                settings=settings,
            )
        except ValueError as exc:
            raise refusal(exc) from exc
        current = live[thrall_id]
        for key, bond in current.items():
            if key in wanted:
                continue
            bond.ended_on = min(bond.due_on, on)
            bond.end_reason = _end_reason(
                key, bound=bond.bound, thrall=thrall, deaths=deaths, breaks=breaks, on=on
            )
            bond.save(update_fields=["ended_on", "end_reason"])
            ended += 1
            _tell_ended(thrall, bond, now)
        for key, row in wanted.items():
            found = current.get(key)
            if found is None:
                bond = Bond.objects.create(
                    thrall=thrall,
                    regnant_id=key[0],
                    kind=key[1],
                    level=row.level,
                    bound=row.bound,
                    since=row.since,
                    due_on=row.due_on,
                )
            else:
                bond = found
            if (bond.level, bond.bound, bond.since, bond.due_on) != (
                row.level,
                row.bound,
                row.since,
                row.due_on,
            ):
                bond.level, bond.bound, bond.since, bond.due_on = (
                    row.level,
                    row.bound,
                    row.since,
                    row.due_on,
                )
                bond.save(update_fields=["level", "bound", "since", "due_on"])
            if key[1] == BondKind.PURE and not row.bound and row.level >= 2:
                _tell_beginning(thrall, bond, now)
    return ended


def _tell_beginning(thrall: Character, bond: Bond, now: dt.datetime) -> None:
    """BND-01: the thrall feels a bond beginning, without learning whose blood it is."""
    if bond.notified_at is not None:
        return
    with in_reader_language(thrall.player):
        subject = _("You feel the beginning of a bond")
        body = _(
            "%(thrall)s feels the beginning of a blood bond: one more night of the same blood "
            "and it will take hold (BND-01)."
        ) % {"thrall": thrall.name}
    notify(
        character=thrall,
        key=f"bond-beginning:{bond.pk}",
        subject=subject,
        body=body,
        now=now,
    )
    Bond.objects.filter(pk=bond.pk).update(notified_at=now)
    bond.notified_at = now


def _tell_ended(thrall: Character, bond: Bond, now: dt.datetime) -> None:
    """BND-10: the thrall's player learns that a bond in force ended, or that a bond they were
    told was beginning has faded (still without the name)."""
    if not bond.bound and bond.notified_at is None:
        return
    with in_reader_language(thrall.player):
        names = {
            "thrall": thrall.name,
            "regnant": bond.regnant.name,
            "day": bond.ended_on,
            "reason": stored_text(bond.end_reason),
        }
        if bond.bound and bond.kind == BondKind.PURE:
            subject = _("Your blood bond to %(regnant)s has ended") % names
            body = (
                _("%(thrall)s's blood bond to %(regnant)s ended on %(day)s (%(reason)s, BND-10).")
                % names
            )
        elif bond.bound:
            subject = _("Your shared bond to %(regnant)s has ended") % names
            body = (
                _("%(thrall)s's shared bond to %(regnant)s ended on %(day)s (%(reason)s, BND-10).")
                % names
            )
        else:
            subject = _("The bond you felt beginning has faded")
            body = _("The beginning of a bond that %(thrall)s felt has faded (BND-10).") % names
    notify(character=thrall, key=f"bond-ended:{bond.pk}", subject=subject, body=body, now=now)


@transaction.atomic
def bond_break_record(
    *,
    thrall: Character,
    regnant: Character,
    night: dt.date,
    by: User,
    now: dt.datetime | None = None,
) -> BondBreak:
    """A ritual broke the thrall's bond (and partial levels or counts) to one kindred
    (BND-03/06)."""
    now = now or timezone.now()
    today = chronicle_today(thrall.chronicle, now)
    if regnant.chronicle_id != thrall.chronicle_id or regnant.pk == thrall.pk:
        raise ValidationError({"regnant": _("Choose another character of this chronicle.")})
    if night > today:
        raise ValidationError({"night": _("A ritual can be recorded only once it has happened.")})
    if BondBreak.objects.filter(thrall=thrall, regnant=regnant, night=night).exists():
        raise ValidationError(
            {"night": _("This ritual is already recorded for that night (BND-03).")}
        )
    ritual = BondBreak.objects.create(thrall=thrall, regnant=regnant, night=night, recorded_by=by)
    bonds_refresh(thrall_ids=[thrall.pk], on=today, now=now)
    return ritual


def bonds_sweep(*, now: dt.datetime | None = None) -> int:
    """BND-10, the daily job: every live bond whose due day has come (in its chronicle's time
    zone) is recomputed; returns how many ended or lapsed. A second run finds nothing due."""
    now = now or timezone.now()
    # A day's margin on UTC covers every time zone; each chronicle's own today decides.
    horizon = now.date() + dt.timedelta(days=1)
    due = Bond.objects.filter(ended_on__isnull=True, due_on__lte=horizon).values_list(
        "thrall_id", "due_on", "thrall__chronicle_id"
    )
    by_chronicle: dict[int, list[tuple[int, dt.date]]] = defaultdict(list)
    for thrall_id, due_on, chronicle_id in due:
        by_chronicle[chronicle_id].append((thrall_id, due_on))
    total = 0
    for chronicle in Chronicle.objects.filter(pk__in=by_chronicle):
        today = chronicle_today(chronicle, now)
        thralls = {t for t, due_on in by_chronicle[chronicle.pk] if due_on <= today}
        if thralls:
            total += bonds_refresh(thrall_ids=thralls, on=today, now=now)
    return total


@transaction.atomic
def regnant_request_add(
    *,
    thrall: Character,
    regnant: Character,
    text: str,
    set_at: str,
    by: User,
    now: dt.datetime | None = None,
) -> RegnantRequest:
    """BND-09: a regnant's request of a bound thrall; at most 4 in force per pair."""
    now = now or timezone.now()
    text = text.strip()
    if not text:
        raise ValidationError({"text": _("Write the request.")})
    if set_at not in RequestSetAt.values:
        raise ValidationError({"set_at": _("Say whether it was set at a game or in downtime.")})
    # The thrall row serializes two STs adding a 5th request at once.
    Character.objects.select_for_update().filter(pk=thrall.pk).first()
    bound = Bond.objects.filter(
        thrall=thrall, regnant=regnant, ended_on__isnull=True, bound=True
    ).exists()
    active = RegnantRequest.objects.filter(
        thrall=thrall, regnant=regnant, dropped_at__isnull=True
    ).count()
    try:
        rules.check_new_request(bound=bound, active_requests=active)
    except ValueError as exc:
        raise refusal(exc, "regnant") from exc
    return RegnantRequest.objects.create(
        thrall=thrall, regnant=regnant, text=text, set_at=set_at, created_at=now
    )


@transaction.atomic
def regnant_request_drop(
    *, request: RegnantRequest, by: User, now: dt.datetime | None = None
) -> bool:
    """BND-09: the regnant drops a request, freeing its place; False if already dropped."""
    now = now or timezone.now()
    return bool(
        RegnantRequest.objects.filter(pk=request.pk, dropped_at__isnull=True).update(dropped_at=now)
    )
