"""The storytellers' records on a character (BLD-01..05, XP-04..07, TOR-01/02, MSC-01/02,
DIS-10). Each is an ST action; each refusal names its rule and writes nothing. Items, sewer lore
and the NPC volunteer list live beside it (items.py, sewers.py, npc_volunteers.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.models import Chronicle, Cycle, Game
from chronicle.rules import settings_for
from chronicle.services import chronicle_today
from chronicle.stored_text import stored_sentences

from .. import rules
from ..models import (
    BloodDrink,
    CaptiveOutcome,
    Captivity,
    Character,
    Conditioning,
    Creature,
    Diablerie,
    DonorType,
    GenerationStep,
    Ritual,
    Status,
    StoredBlood,
    SummonsLock,
    Title,
    TorporHold,
    XpEntry,
    XpKind,
)
from . import ledger
from .bonds import bonds_refresh
from .common import in_reader_language, refusal
from .control import control_check, control_rating
from .notify import notify

GHOUL_KINDRED_BLOOD = 3  # BLD-05
# XP-07: a PC in torpor or staked is still its player's character in play.
PC_IN_PLAY = (Status.ACTIVE, Status.TORPOR, Status.STAKED)
KINDRED_DONOR_TYPES = (DonorType.KINDRED, DonorType.MIXED_KINDRED)

# Stored in English and shown in each reader's language (chronicle.stored_text): the XP-06
# credit's ledger reason, and where blood is kept when the ST named no place.
RETIREMENT_REASON = gettext_noop("%(character)s left play: half of the %(spent)s XP spent (XP-06)")
ON_BODY = gettext_noop("on body")
stored_sentences(RETIREMENT_REASON, ON_BODY)


def _same_chronicle(character: Character, other: Character, field: str) -> None:
    if other.chronicle_id != character.chronicle_id:
        raise ValidationError({field: _("Choose a character of this chronicle.")})


def _not_future(day: dt.date, today: dt.date, field: str) -> None:
    if day > today:
        raise ValidationError({field: _("This date is in the future; record it once it happens.")})


# --- Stored blood (BLD-01..05) -----------------------------------------------------------------


def _control(character: Character) -> int:
    """CTL-01 permanent control, as BLD-01 reads it (for kindred: control needs a clan)."""
    try:
        control = control_rating(character)
    except ValueError as exc:
        raise refusal(exc, "holder") from exc
    if control is None:
        raise ValidationError(
            {"holder": _("Control needs a kindred with a clan; choose the clan first (CTL-01).")}
        )
    return control


def _check_limits(
    *,
    holder: Character,
    on_body: bool,
    points: int,
    donor_type: str,
    excluding: StoredBlood | None = None,
) -> None:
    """BLD-01 (on the body, kindred only: control needs a clan) and BLD-05 (ghouls)."""
    held = StoredBlood.objects.filter(holder=holder, expired_at__isnull=True)
    if excluding is not None:
        held = held.exclude(pk=excluding.pk)
    if on_body and holder.creature == Creature.KINDRED:
        limit = rules.on_body_blood_limit(max(0, min(_control(holder), rules.MAX_CONTROL)))
        carried = held.filter(on_body=True).aggregate(n=Sum("points"))["n"] or 0
        if carried + points > limit:
            raise ValidationError(
                {
                    "points": _(
                        "%(holder)s can carry at most %(limit)s stored blood on the body (half "
                        "their control, BLD-01) and already carries %(carried)s."
                    )
                    % {"holder": holder.name, "limit": limit, "carried": carried}
                }
            )
    if holder.kind == Creature.GHOUL and donor_type in KINDRED_DONOR_TYPES:
        kindred = held.filter(donor_type__in=KINDRED_DONOR_TYPES).aggregate(n=Sum("points"))["n"]
        if (kindred or 0) + points > GHOUL_KINDRED_BLOOD:
            raise ValidationError(
                {
                    "points": _(
                        "A ghoul holds at most %(limit)s kindred blood (BLD-05); %(holder)s "
                        "already holds %(held)s."
                    )
                    % {"limit": GHOUL_KINDRED_BLOOD, "holder": holder.name, "held": kindred or 0}
                }
            )


@transaction.atomic
def stored_blood_add(
    *,
    holder: Character,
    location: str,
    on_body: bool,
    points: int,
    donor_type: str,
    donors: Sequence[Character],
    donor_note: str,
    collected_on: dt.date,
    by: User,
    now: dt.datetime | None = None,
) -> StoredBlood:
    """BLD-02: a stored-blood record; kine blood gets its BLD-03 expiry as a due date."""
    now = now or timezone.now()
    chronicle = holder.chronicle
    _not_future(collected_on, chronicle_today(chronicle, now), "collected_on")
    if points < 1:
        raise ValidationError({"points": _("Store at least 1 blood (BLD-02).")})
    location = location.strip() or (ON_BODY if on_body else "")
    if not location:
        raise ValidationError({"location": _("Say where the blood is kept (BLD-01).")})
    donors = list(donors)
    for donor in donors:
        _same_chronicle(holder, donor, "donors")
    if donor_type == DonorType.KINE and donors:
        raise ValidationError(
            {"donors": _("Kine donors have no record; describe them in the note.")}
        )
    if donor_type == DonorType.KINDRED and len(donors) != 1:
        raise ValidationError(
            {"donors": _("Blood of one kindred names exactly one donor (BLD-02).")}
        )
    if donor_type == DonorType.MIXED_KINDRED and len(donors) < 2:
        raise ValidationError(
            {"donors": _("Mixed kindred blood names two donors or more (BLD-03).")}
        )
    try:
        unusable_from = rules.stored_blood_unusable_from(
            donor_type=donor_type,
            collected_on=collected_on,
            **settings_for(rules.stored_blood_unusable_from, chronicle.house_rules),
        )
    except ValueError as exc:
        raise refusal(exc, "donor_type") from exc
    # The holder's row serializes two records racing past the same limit.
    Character.objects.select_for_update().filter(pk=holder.pk).first()
    _check_limits(holder=holder, on_body=on_body, points=points, donor_type=donor_type)
    blood = StoredBlood.objects.create(
        holder=holder,
        location=location[:200],
        on_body=on_body,
        points=points,
        donor_type=donor_type,
        donor_note=donor_note[:200],
        collected_on=collected_on,
        unusable_from=unusable_from,
    )
    blood.donors.set(donors)
    return blood


@transaction.atomic
def stored_blood_transfer(
    *,
    blood: StoredBlood,
    to_holder: Character | None = None,
    to_location: str | None = None,
    on_body: bool | None = None,
    points: int,
    by: User,
    now: dt.datetime | None = None,
) -> StoredBlood:
    """BLD-02: move some or all of a record's points to another holder or place; a part moved
    becomes its own record with the same donors and dates. BLD-01/05 limits apply there."""
    record = StoredBlood.objects.select_for_update().select_related("holder").get(pk=blood.pk)
    holder = to_holder or record.holder
    _same_chronicle(record.holder, holder, "to_holder")
    if record.expired_at is not None:
        raise ValidationError(_("This blood has expired and can no longer be used (BLD-03)."))
    if not 1 <= points <= record.points:
        raise ValidationError(
            {"points": _("Move between 1 and %(most)s blood (BLD-02).") % {"most": record.points}}
        )
    location = (to_location or "").strip() or record.location
    body = record.on_body if on_body is None else on_body
    if holder.pk == record.holder_id and location == record.location and body == record.on_body:
        raise ValidationError({"to_location": _("Choose another holder or place to move it to.")})
    Character.objects.select_for_update().filter(pk=holder.pk).first()
    whole = points == record.points
    _check_limits(
        holder=holder,
        on_body=body,
        points=points,
        donor_type=record.donor_type,
        excluding=record if whole and holder.pk == record.holder_id else None,
    )
    if whole:
        record.holder, record.location, record.on_body = holder, location[:200], body
        record.save(update_fields=["holder", "location", "on_body"])
        return record
    donors = list(record.donors.all())
    record.points -= points
    record.save(update_fields=["points"])
    moved = StoredBlood.objects.create(
        holder=holder,
        location=location[:200],
        on_body=body,
        points=points,
        donor_type=record.donor_type,
        donor_note=record.donor_note,
        collected_on=record.collected_on,
        unusable_from=record.unusable_from,
    )
    moved.donors.set(donors)
    return moved


# --- Diablerie, death, retirement, return (XP-04..07, BND-03) -----------------------------------


@transaction.atomic
def diablerie_record(
    *,
    diablerist: Character,
    victim: Character | None,
    victim_name: str,
    victim_generation: int,
    occurred_on: dt.date,
    victim_in_torpor: bool,
    killed_by_aggravated_or_coup: bool,
    by: User,
    now: dt.datetime | None = None,
) -> Diablerie:
    """XP-04: only a victim in torpor can be diablerized, and not one killed by coup de grace or
    aggravated damage. Black veins last 6 months; a victim of lower generation queues one
    generation step (XP-05). A victim with a sheet dies (and XP-06 applies to its player)."""
    now = now or timezone.now()
    _not_future(occurred_on, chronicle_today(diablerist.chronicle, now), "occurred_on")
    if diablerist.creature != Creature.KINDRED:
        raise ValidationError({"diablerist": _("Only kindred can commit diablerie (XP-04).")})
    if not victim_in_torpor:
        raise ValidationError(
            {"victim_in_torpor": _("Only a victim in torpor can be diablerized (XP-04).")}
        )
    if killed_by_aggravated_or_coup:
        raise ValidationError(
            {
                "killed_by_aggravated_or_coup": _(
                    "A victim killed by coup de grace or aggravated "
                    "damage cannot be diablerized (XP-04)."
                )
            }
        )
    if victim is not None:
        _same_chronicle(diablerist, victim, "victim")
        if victim.pk == diablerist.pk:
            raise ValidationError({"victim": _("A character cannot diablerize itself (XP-04).")})
        if victim.status == Status.DEAD:
            raise ValidationError(
                {"victim": _("%(victim)s is already dead (XP-04).") % {"victim": victim.name}}
            )
        victim_name = victim_name.strip() or victim.name
        victim_generation = victim.generation
    victim_name = victim_name.strip()
    if not victim_name:
        raise ValidationError({"victim_name": _("Name the victim (XP-04).")})
    if not 1 <= victim_generation <= 15:
        raise ValidationError({"victim_generation": _("A generation runs from 1 to 15 (XP-04).")})
    diablerie = Diablerie.objects.create(
        diablerist=diablerist,
        victim=victim,
        victim_name=victim_name[:120],
        victim_generation=victim_generation,
        occurred_on=occurred_on,
        black_veins_until=rules.add_months(occurred_on, 6),
        generation_step=(
            GenerationStep.QUEUED
            if victim_generation < diablerist.generation
            else GenerationStep.NONE
        ),
        recorded_by=by,
        recorded_at=now,
    )
    if victim is not None:
        character_death_record(character=victim, died_on=occurred_on, by=by, now=now)
    # XP-04: diableries +1 at once, so control may fall below 1 (CTL-02).
    control_check(diablerist, by=by, now=now, diablerie=diablerie)
    return diablerie


def _spent_on(character: Character) -> Decimal:
    """The XP the character's purchases took from its player's ledger, net of reversals."""
    spent = -(
        XpEntry.objects.filter(character=character)
        .filter(Q(kind=XpKind.PURCHASE) | Q(kind=XpKind.REVERSAL, reverses__kind=XpKind.PURCHASE))
        .aggregate(total=Sum("amount"))["total"]
        or Decimal(0)
    )
    return max(spent, Decimal(0))


def _retirement_key(character: Character) -> str:
    """One XP-06 credit per build: the first keeps the key it always had."""
    if not character.rebuilds:
        return f"retirement:{character.pk}"
    return f"retirement:{character.pk}:{character.rebuilds}"


def _retirement_credit(
    character: Character, *, by: User | None, now: dt.datetime
) -> XpEntry | None:
    """XP-06: the player's unspent XP already sits in their ledger, so the credit is what
    `retirement_points` adds to it: half of what this character spent (keyed: once). `by` is
    None when no one but the rules caused it (TOR-02); the entry then has no actor."""
    if character.player_id is None:
        return None
    chronicle = character.chronicle
    ledger.lock_ledger(chronicle=chronicle, player_id=character.player_id)
    # XP-07a: a rebuilt character's earlier builds were credited already; count this one only.
    try:
        spent = rules.spent_since_rebuild(
            spent=_spent_on(character), spent_before_rebuild=character.xp_spent_before_rebuild
        )
    except ValueError as exc:
        raise refusal(exc) from exc
    unspent = ledger.xp_balance(chronicle=chronicle, player=character.player_id)
    try:
        total = rules.retirement_points(
            spent=max(spent, Decimal(0)),
            unspent=max(unspent, Decimal(0)),
            **settings_for(rules.retirement_points, chronicle.house_rules),
        )
    except ValueError as exc:
        raise refusal(exc) from exc
    credit = total - max(unspent, Decimal(0))
    if credit <= 0:
        return None
    entry, _created = ledger.xp_entry_add(
        chronicle=chronicle,
        player_id=character.player_id,
        amount=credit,
        kind=XpKind.RETIREMENT,
        reason=RETIREMENT_REASON % {"character": character.name, "spent": spent},
        key=_retirement_key(character),
        character=character,
        actor=by,
        now=now,
    )
    return entry


def _locked(character: Character) -> Character:
    return (
        Character.objects.select_for_update(of=("self",))
        .select_related("chronicle", "player")
        .get(pk=character.pk)
    )


@transaction.atomic
def character_death_record(
    *, character: Character, died_on: dt.date, by: User | None, now: dt.datetime | None = None
) -> Character:
    """XP-06 and BND-03: the character dies; its player is credited half the XP it spent, its
    thralls are told at once, and their bonds end a month later (via `bonds_refresh`).
    Recording a death twice changes nothing. `by` is the ST who recorded it, or None when the
    rules killed the character (a captive not released in time, TOR-02)."""
    now = now or timezone.now()
    today = chronicle_today(character.chronicle, now)
    _not_future(died_on, today, "died_on")
    character = _locked(character)
    if character.status == Status.DEAD:
        return character
    character.status, character.died_on = Status.DEAD, died_on
    character.save(update_fields=["status", "died_on", "updated_at"])
    _retirement_credit(character, by=by, now=now)
    thralls = (
        Character.objects.filter(
            bonds__regnant=character, bonds__ended_on__isnull=True, bonds__bound=True
        )
        .select_related("player__chronicle_profile")
        .distinct()
    )
    for thrall in thralls:
        # Each thrall's player reads it in their own language.
        with in_reader_language(thrall.player):
            subject = _("%(regnant)s has died") % {"regnant": character.name}
            body = _(
                "%(thrall)s learns that %(regnant)s, to whom they are bound, died on %(day)s; "
                "the bond fades a month later (BND-03)."
            ) % {"thrall": thrall.name, "regnant": character.name, "day": died_on}
        notify(
            character=thrall,
            key=f"regnant-died:{character.pk}:{thrall.pk}",
            subject=subject,
            body=body,
            now=now,
        )
    drinkers = BloodDrink.objects.filter(donors=character).values_list("drinker_id", flat=True)
    bonds_refresh(thrall_ids=set(drinkers), on=today, now=now)
    return character


@transaction.atomic
def character_retire(
    *, character: Character, on: dt.date, by: User, now: dt.datetime | None = None
) -> Character:
    """XP-06: the player retires the character and is credited half the XP it spent; retiring
    twice changes nothing."""
    now = now or timezone.now()
    _not_future(on, chronicle_today(character.chronicle, now), "on")
    character = _locked(character)
    if character.status == Status.RETIRED:
        return character
    if character.status != Status.ACTIVE:
        raise ValidationError(
            _("Only an active character can retire; %(character)s is %(status)s (XP-06).")
            % {"character": character.name, "status": character.get_status_display().lower()}
        )
    character.status, character.retired_on = Status.RETIRED, on
    character.save(update_fields=["status", "retired_on", "updated_at"])
    _retirement_credit(character, by=by, now=now)
    return character


@transaction.atomic
def characters_leave_play(
    *, chronicle: Chronicle, player: User, become: str, by: User, now: dt.datetime | None = None
) -> list[Character]:
    """A player left the chronicle or was removed: their active characters leave play, retired
    (XP-06's credit included, as for any retirement) or kept by the storytellers as NPCs. The
    characters stay linked to the player, with their ledger, so an invitation back finds them.
    Drafts, and characters in torpor or staked, stay as they are for the storytellers."""
    now = now or timezone.now()
    if become not in ("retired", "npc"):
        raise ValidationError(
            _("Characters leave play retired or as NPCs, not %(become)s.")
            % {"become": repr(become)}
        )
    active = list(
        Character.objects.select_for_update(of=("self",))
        .filter(chronicle=chronicle, player=player, status=Status.ACTIVE)
        .select_related("chronicle", "player")
        .order_by("pk")
    )
    today = chronicle_today(chronicle, now)
    for character in active:
        if become == "retired" and character.approval == "approved":
            character_retire(character=character, on=today, by=by, now=now)
        elif become == "npc":
            character.status = Status.NPC
            character.save(update_fields=["status", "updated_at"])
    npc_volunteer_leave(chronicle=chronicle, player=player)
    return active


def on_membership_ended(
    *, chronicle: Chronicle, user: User, by: User, characters: str, now: dt.datetime, **_: object
) -> None:
    characters_leave_play(chronicle=chronicle, player=user, become=characters, by=by, now=now)


# --- Torpor holds and captives (TOR-01/02) -----------------------------------------------------


@transaction.atomic
def torpor_hold_record(
    *, holder: Character, captive: Character, cycle: Cycle, by: User, now: dt.datetime | None = None
) -> TorporHold:
    """TOR-01: a holder keeps a controlled character in torpor for one downtime; a hold in the
    downtime right after a held one is refused."""
    now = now or timezone.now()
    _same_chronicle(holder, captive, "captive")
    if captive.pk == holder.pk:
        raise ValidationError({"captive": _("A character cannot hold itself in torpor (TOR-01).")})
    if cycle.chronicle_id != holder.chronicle_id:
        raise ValidationError({"cycle": _("Choose a downtime of this chronicle.")})
    Character.objects.select_for_update().filter(pk=captive.pk).first()
    if TorporHold.objects.filter(captive=captive, cycle=cycle).exists():
        raise ValidationError(
            {"cycle": _("This character is already held in that downtime (TOR-01).")}
        )
    earlier = (
        Cycle.objects.filter(chronicle_id=cycle.chronicle_id, deadline_at__lt=cycle.deadline_at)
        .order_by("-deadline_at")
        .values_list("pk", flat=True)
    )
    held = set(
        TorporHold.objects.filter(holder=holder, captive=captive).values_list("cycle_id", flat=True)
    )
    consecutive = 0
    for cycle_id in earlier:
        if cycle_id not in held:
            break
        consecutive += 1
    try:
        rules.check_torpor_hold(
            consecutive_downtimes_held=consecutive,
            **settings_for(rules.check_torpor_hold, holder.chronicle.house_rules),
        )
    except ValueError as exc:
        raise refusal(exc, "cycle") from exc
    hold = TorporHold.objects.create(
        holder=holder, captive=captive, cycle=cycle, recorded_by=by, recorded_at=now
    )
    # The hold is what keeps the captive in torpor; without this status the sweep's recovery
    # (TOR-01: torpor → active once the hold ends) would never apply. A captive already staked,
    # dead or retired keeps that status.
    if Character.objects.filter(pk=captive.pk, status=Status.ACTIVE).update(
        status=Status.TORPOR, updated_at=now
    ):
        captive.status = Status.TORPOR
    return hold


@transaction.atomic
def captivity_record(
    *,
    captive: Character,
    captor: Character,
    since: dt.date,
    by: User,
    now: dt.datetime | None = None,
) -> Captivity:
    """TOR-02: a PC whose body another controls must be released or killed before the end of
    the next game; `deadline_game` is the first game after `since` (None until scheduled)."""
    now = now or timezone.now()
    _same_chronicle(captive, captor, "captor")
    if captive.pk == captor.pk:
        raise ValidationError({"captor": _("A character cannot hold itself captive (TOR-02).")})
    _not_future(since, chronicle_today(captive.chronicle, now), "since")
    Character.objects.select_for_update().filter(pk=captive.pk).first()
    if Captivity.objects.filter(captive=captive, resolved_at__isnull=True).exists():
        raise ValidationError(
            {
                "captive": _("%(captive)s is already held captive (TOR-02).")
                % {"captive": captive.name}
            }
        )
    game = (
        Game.objects.filter(chronicle_id=captive.chronicle_id, date__gt=since)
        .order_by("date", "number")
        .first()
    )
    return Captivity.objects.create(
        captive=captive, captor=captor, since=since, deadline_game=game, recorded_by=by
    )


@transaction.atomic
def captivity_resolve(
    *, captivity: Captivity, outcome: str, by: User, now: dt.datetime | None = None
) -> Captivity:
    """TOR-02: the captor released or killed the captive (a killed captive dies, XP-06)."""
    now = now or timezone.now()
    if outcome not in (CaptiveOutcome.RELEASED, CaptiveOutcome.KILLED):
        raise ValidationError({"outcome": _("The captive is either released or killed (TOR-02).")})
    updated = Captivity.objects.filter(pk=captivity.pk, resolved_at__isnull=True).update(
        outcome=outcome, resolved_at=now
    )
    if not updated:
        raise ValidationError(_("This captivity is already over (TOR-02)."))
    captivity.refresh_from_db()
    if outcome == CaptiveOutcome.KILLED:
        captive = captivity.captive
        character_death_record(
            character=captive, died_on=chronicle_today(captive.chronicle, now), by=by, now=now
        )
    return captivity


# --- Miscellany (MSC-01/02, titles, notes, DIS-10) --------------------------------------------


@transaction.atomic
def summons_lock_add(
    *,
    holder: Character,
    target: Character,
    won_on: dt.date,
    by: User,
    now: dt.datetime | None = None,
) -> SummonsLock:
    """MSC-01: a won summons lock and its date (summons needs one from the last year)."""
    now = now or timezone.now()
    _same_chronicle(holder, target, "target")
    if holder.pk == target.pk:
        raise ValidationError({"target": _("A summons lock is won on someone else (MSC-01).")})
    _not_future(won_on, chronicle_today(holder.chronicle, now), "won_on")
    return SummonsLock.objects.create(holder=holder, target=target, won_on=won_on)


@transaction.atomic
def conditioning_record(
    *,
    subject: Character,
    conditioner: Character,
    description: str,
    recorded_on: dt.date,
    by: User,
    now: dt.datetime | None = None,
) -> Conditioning:
    """MSC-02: conditioning (a 3-night downtime action, allowed by DIS-09) is permanent."""
    now = now or timezone.now()
    _same_chronicle(subject, conditioner, "conditioner")
    if subject.pk == conditioner.pk:
        raise ValidationError(
            {"conditioner": _("Conditioning acts on another character (MSC-02).")}
        )
    _not_future(recorded_on, chronicle_today(subject.chronicle, now), "recorded_on")
    description = description.strip()
    if not description:
        raise ValidationError({"description": _("Describe the conditioning (MSC-02).")})
    return Conditioning.objects.create(
        subject=subject, conditioner=conditioner, description=description, recorded_on=recorded_on
    )


@transaction.atomic
def title_add(*, character: Character, name: str, city: str, by: User) -> Title:
    """A title held in a city (e.g. Prince of Chicago); each at most once."""
    name, city = name.strip(), city.strip()
    if not name or not city:
        raise ValidationError({"name": _("Give the title and the city.")})
    title, created = Title.objects.get_or_create(
        character=character, name=name[:60], city=city[:80]
    )
    if not created:
        raise ValidationError(
            {
                "name": _("%(character)s already holds %(title)s of %(city)s.")
                % {"character": character.name, "title": title.name, "city": title.city}
            }
        )
    return title


@transaction.atomic
def title_remove(*, title: Title, by: User) -> None:
    Title.objects.filter(pk=title.pk).delete()


@transaction.atomic
def st_note_set(*, character: Character, notes: str, by: User) -> Character:
    """The storytellers' private notes on a character (never shown to its player)."""
    Character.objects.filter(pk=character.pk).update(st_notes=notes, updated_at=timezone.now())
    character.st_notes = notes
    return character


@transaction.atomic
def ritual_add(
    *,
    character: Character,
    name: str,
    learned_on: dt.date | None,
    free: bool = False,
    by: User,
    now: dt.datetime | None = None,
) -> Ritual:
    """DIS-10: a ritual on the character's list; only a Tremere's first basic one is free."""
    now = now or timezone.now()
    name = name.strip()
    if not name:
        raise ValidationError({"name": _("Name the ritual (DIS-10).")})
    if learned_on is not None:
        _not_future(learned_on, chronicle_today(character.chronicle, now), "learned_on")
    if free:
        clan = rules.CLANS.get(character.clan)
        allowed = clan.free_basic_rituals if clan is not None else 0
        if Ritual.objects.filter(character=character, free=True).count() >= allowed:
            raise ValidationError(
                {"free": _("Only a Tremere starts with one free basic ritual (DIS-10).")}
            )
    if Ritual.objects.filter(character=character, name__iexact=name).exists():
        raise ValidationError(
            {
                "name": _("%(character)s already knows %(ritual)s (DIS-10).")
                % {"character": character.name, "ritual": name}
            }
        )
    return Ritual.objects.create(
        character=character, name=name[:120], free=free, learned_on=learned_on
    )


# Items, sewer lore and the NPC volunteer list have modules of their own; callers that name
# them through `records` still find them here.
from .items import item_add as item_add  # noqa: E402
from .items import item_downgrade as item_downgrade  # noqa: E402
from .items import item_repair as item_repair  # noqa: E402
from .npc_volunteers import npc_volunteer_decline as npc_volunteer_decline  # noqa: E402
from .npc_volunteers import npc_volunteer_join as npc_volunteer_join  # noqa: E402
from .npc_volunteers import npc_volunteer_leave as npc_volunteer_leave  # noqa: E402
from .sewers import sewer_location_add as sewer_location_add  # noqa: E402
from .sewers import sewer_location_forget as sewer_location_forget  # noqa: E402
from .sewers import sewer_location_learn as sewer_location_learn  # noqa: E402
from .sewers import sewer_search as sewer_search  # noqa: E402
