"""Character creation: the wizard's draft, its freebie quote, submission and ST approval
(CRE-01..09, CLN-01..04, DIS-01..06, DIS-10, SEW-01, XP-07).

A draft keeps the wizard's raw choices in `Character.creation` (the 7/5/3 split and the freebie
purchases cannot be told apart once summed) and only approval writes the sheet: the summed
columns, the discipline levels, disadvantages, the Tremere's free ritual and the Gargoyle's
blood for the Regional Tremere Lord. Every number comes from `characters.rules`, with the
chronicle's INTERPRETATION settings passed through `settings_for`.
"""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import ProtectedError, RestrictedError
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.access import STAFF_ROLES
from chronicle.models import Chronicle, Membership
from chronicle.rules import settings_for
from chronicle.stored_text import stored_sentences

from .. import rules
from ..models import (
    Acquired,
    Approval,
    Character,
    Creature,
    Disadvantage,
    DisciplineLevel,
    DonorType,
    Ritual,
    Status,
    StoredBlood,
)
from .common import in_reader_language
from .creation_quotes import (
    _COLUMNS,
    _check_shape,
)
from .creation_quotes import MAX_RATING as MAX_RATING
from .creation_quotes import DisadvantagePick as DisadvantagePick
from .creation_quotes import DisciplinePick as DisciplinePick
from .creation_quotes import Draft as Draft
from .creation_quotes import Quote as Quote
from .creation_quotes import creation_quote as creation_quote
from .creation_quotes import draft_quote as draft_quote
from .ledger import lock_ledger
from .notify import notify

# The NPC who keeps a Gargoyle's blood (CLN-01): a character of the chronicle, whose name is a
# name like any other (not translated).
TREMERE_LORD = "Regional Tremere Lord"
# Written on the sheet in English and shown in each reader's language (chronicle.stored_text).
FREE_RITUAL = gettext_noop("Free basic ritual (to be chosen with a storyteller)")  # DIS-10
HELD_BY_LORD = gettext_noop("Held by the %(lord)s")  # CLN-01
AT_CREATION = gettext_noop("%(character)s, at creation (CLN-01)")
stored_sentences(FREE_RITUAL, HELD_BY_LORD, AT_CREATION)
EDITABLE = (Approval.DRAFT, Approval.RETURNED)


# --- Services -------------------------------------------------------------------------------


def _is_staff(chronicle: Chronicle, user: User) -> bool:
    return Membership.objects.filter(chronicle=chronicle, user=user, role__in=STAFF_ROLES).exists()


def _require_staff(chronicle: Chronicle, user: User) -> None:
    if not _is_staff(chronicle, user):
        raise PermissionDenied(_("Only the chronicle's storytellers and admins may do this."))


def _require_owner_or_staff(character: Character, user: User) -> None:
    if character.player_id != user.pk and not _is_staff(character.chronicle, user):
        raise PermissionDenied(_("Only the character's player or a storyteller may change it."))


def _lock(character: Character) -> Character:
    # of=("self",): the player sits on the nullable side of the join (NPCs have none).
    return (
        Character.objects.select_for_update(of=("self",))
        .select_related("chronicle", "player__chronicle_profile")
        .get(pk=character.pk)
    )


def _write_draft(character: Character, draft: Draft) -> None:
    for column in _COLUMNS:
        value = getattr(draft, column)
        setattr(character, column, list(value) if column == "chosen_disciplines" else value)
    character.name = draft.name.strip()
    character.creation = draft.creation_json()


def open_drafts_of(chronicle: Chronicle, player: User) -> int:
    """The player's characters in creation (drafts and returned): what the limit counts."""
    return Character.objects.filter(
        chronicle=chronicle, player=player, approval__in=EDITABLE
    ).count()


def _check_open_drafts(chronicle: Chronicle, player: User) -> None:
    # Called under the player's ledger lock, so two clicks cannot both take the last place.
    try:
        rules.check_open_drafts(
            open_drafts_of(chronicle, player),
            **settings_for(rules.check_open_drafts, chronicle.house_rules),
        )
    except ValueError as exc:
        raise ValidationError(str(exc), code="draft_limit") from None


@transaction.atomic
def character_draft_create(
    *, chronicle: Chronicle, player: User, draft: Draft, now: dt.datetime | None = None
) -> Character:
    """Start a character in the wizard (CRE-01). A draft may break the rules while it is being
    written; the quote lists the problems and submission refuses them. A second click with the
    same name finds the draft the first click made and saves over it. A player (not a
    storyteller) may keep only `open_drafts_per_player` drafts open at once."""
    _check_shape(draft)
    if not draft.name.strip():
        raise ValidationError({"name": _("Give the character a name.")})
    # The membership row is the player's lock: two clicks make one draft.
    lock_ledger(chronicle=chronicle, player_id=player.pk)
    existing = Character.objects.filter(
        chronicle=chronicle, player=player, name__iexact=draft.name.strip(), approval__in=EDITABLE
    ).first()
    if existing is None and not _is_staff(chronicle, player):
        _check_open_drafts(chronicle, player)
    character = existing or Character(chronicle=chronicle, player=player)
    _write_draft(character, draft)
    character.approval = Approval.DRAFT
    character.save()
    return character


@transaction.atomic
def character_draft_update(*, character: Character, by: User, draft: Draft) -> Character:
    """Save the wizard over a draft: only its player or an ST, only while it is a draft or has
    been returned (CRE-09)."""
    _check_shape(draft)
    _require_owner_or_staff(character, by)
    if not draft.name.strip():
        raise ValidationError({"name": _("Give the character a name.")})
    locked = _lock(character)
    if locked.approval not in EDITABLE:
        raise ValidationError(
            _(
                "This character is %(state)s; only a draft or a character returned by a "
                "storyteller can be changed (CRE-09)."
            )
            % {"state": locked.get_approval_display().lower()}
        )
    _write_draft(locked, draft)
    locked.save()
    return locked


@transaction.atomic
def character_draft_delete(*, character: Character, by: User) -> None:
    """Throw away a character in creation that was never approved (a draft, or one returned by
    a storyteller): only its player or an ST. It frees a place under `open_drafts_per_player`.
    A rebuilt sheet (approved before) is never deleted this way."""
    _require_owner_or_staff(character, by)
    locked = _lock(character)
    if locked.approval not in EDITABLE or locked.approved_at is not None:
        raise ValidationError(
            _("Only a character still in creation can be deleted; this one is %(state)s (CRE-09).")
            % {"state": locked.get_approval_display().lower()}
        )
    try:
        locked.delete()
    except (ProtectedError, RestrictedError):
        # Something of the chronicle already points at it (a ledger entry, a spend): keep it.
        raise ValidationError(
            _("This character already has a history in the chronicle; it cannot be deleted.")
        ) from None


def _submit_problems(character: Character) -> dict[str, list[str]]:
    problems = {key: list(value) for key, value in draft_quote(character).problems.items()}
    if not character.background_questionnaire.strip():
        problems.setdefault("background_questionnaire", []).append(
            _("Answer the background questionnaire: every character needs one (CRE-09).")
        )
    if character.embraced_on is not None and character.creature != Creature.KINDRED:
        # CRE-04: an embraced ghoul or kine is rebuilt as kindred, never as what it was.
        problems.setdefault("creature", []).append(
            _("%(character)s was embraced: rebuild them as kindred (CRE-04).")
            % {"character": character.name}
        )
    return problems


@transaction.atomic
def character_submit(
    *, character: Character, by: User, now: dt.datetime | None = None
) -> Character:
    """Send a draft to the STs (CRE-09). Refused with every problem of the quote and a missing
    questionnaire listed; a second click on a submitted character changes nothing."""
    now = now or timezone.now()
    _require_owner_or_staff(character, by)
    locked = _lock(character)
    if locked.approval in (Approval.SUBMITTED, Approval.APPROVED):
        return locked
    problems = _submit_problems(locked)
    if problems:
        raise ValidationError(problems)
    locked.approval = Approval.SUBMITTED
    locked.submitted_at = now
    locked.freebies_spent = draft_quote(locked).cost
    locked.save(update_fields=["approval", "submitted_at", "freebies_spent", "updated_at"])
    return locked


def _tremere_lord(chronicle: Chronicle) -> Character:
    """CLN-01: the NPC who holds every Gargoyle's blood, made once per chronicle. The chronicle
    row is locked so two approvals at once do not make two lords."""
    Chronicle.objects.select_for_update().filter(pk=chronicle.pk).values_list("pk").get()
    lord = Character.objects.filter(
        chronicle=chronicle, player=None, name=TREMERE_LORD, status=Status.NPC
    ).first()
    if lord is None:
        lord = Character.objects.create(
            chronicle=chronicle,
            player=None,
            name=TREMERE_LORD,
            creature=Creature.KINDRED,
            clan="tremere",
            status=Status.NPC,
            approval=Approval.APPROVED,
        )
    return lord


def _build_sheet(character: Character, draft: Draft, quote: Quote, now: dt.datetime) -> None:
    """Sum the package, the freebies and the CLN-01 bonus into the sheet's columns and write
    the rows approval owns (DIS-01 levels, CRE-02 disadvantages, DIS-10 ritual, CLN-01 blood)."""
    clan_row = rules.get_clan(draft.clan) if draft.clan_or_none else None
    bonus = draft.clan_bonus
    character.physical = draft.physical + draft.extra_physical + int(bonus == "physical")
    character.social = draft.social + draft.extra_social + int(bonus == "social")
    character.mental = draft.mental + draft.extra_mental
    character.willpower = draft.willpower + draft.extra_willpower
    abilities: dict[str, int] = {}
    for source in (draft.abilities, draft.extra_abilities):
        for name, points in source.items():
            if points:
                key = name.strip().lower()
                abilities[key] = abilities.get(key, 0) + points
    bonus_abilities = list(clan_row.fixed_bonuses) if clan_row else []
    if bonus == "leadership":
        bonus_abilities.append("leadership")
    for name in bonus_abilities:
        abilities[name] = abilities.get(name, 0) + 1
    character.abilities = abilities
    for influence in rules.INFLUENCE_TYPES:
        points = draft.influences.get(influence, 0) + draft.extra_influences.get(influence, 0)
        setattr(character, influence, points + int(influence == "herd" and bonus == "herd"))
    character.sewer_lore = draft.sewer_lore + int(bonus == "sewer_lore")
    character.freebies_spent = quote.cost
    character.sect = draft.sect
    character.protean_form = draft.protean_form
    character.feeding_demographic = draft.feeding_demographic.strip()
    character.embrace_earth = draft.embrace_earth

    hr = character.chronicle.house_rules
    clan = draft.clan_or_none
    chosen = draft.chosen_disciplines if clan else ()
    levels: list[DisciplineLevel] = []
    for pick in draft.disciplines:
        in_clan = rules.is_in_clan(
            pick.discipline, clan=clan, chosen=chosen, **settings_for(rules.is_in_clan, hr)
        )
        levels += [
            DisciplineLevel(
                character=character,
                discipline=pick.discipline,
                level=rules.level_number(code),
                acquired=Acquired.CREATION,
                free=True,
            )
            for code in pick.free_levels()
        ]
        bought = pick.bought_levels()
        for index, code in enumerate(bought):
            # DIS-04: the path fee is paid with the first level bought; each level records
            # its own share, so the levels of one discipline add up to the quote's line.
            cost = rules.discipline_cost(
                [code],
                in_clan=in_clan,
                at_creation=True,
                path_owned=bool(pick.free) or index > 0,
                caitiff=clan == "caitiff",
                **settings_for(rules.discipline_cost, hr),
            )
            levels.append(
                DisciplineLevel(
                    character=character,
                    discipline=pick.discipline,
                    level=rules.level_number(code),
                    acquired=Acquired.CREATION,
                    cost=cost,
                )
            )
    DisciplineLevel.objects.filter(character=character, acquired=Acquired.CREATION).delete()
    DisciplineLevel.objects.bulk_create(levels)
    Disadvantage.objects.filter(character=character).delete()
    Disadvantage.objects.bulk_create(
        Disadvantage(
            character=character,
            name=d.name.strip(),
            major=d.major,
            physical=d.physical,
            hideously_ugly=d.hideously_ugly,
        )
        for d in draft.disadvantages
    )
    if clan_row is not None and clan_row.free_basic_rituals:
        Ritual.objects.filter(character=character, free=True).delete()
        Ritual.objects.bulk_create(
            Ritual(character=character, name=FREE_RITUAL, free=True, learned_on=now.date())
            for _index in range(clan_row.free_basic_rituals)
        )
    if clan_row is not None and clan_row.stored_blood_for_tremere_lord:
        lord = _tremere_lord(character.chronicle)
        given = StoredBlood.objects.filter(holder=lord, donors=character).exists()
        if character.rebuilds and given:
            # XP-07 / CRE-04: a rebuilt Gargoyle gave its blood when first created.
            return
        blood = StoredBlood.objects.create(
            holder=lord,
            location=HELD_BY_LORD % {"lord": TREMERE_LORD},
            points=clan_row.stored_blood_for_tremere_lord,
            donor_type=DonorType.KINDRED,
            donor_note=AT_CREATION % {"character": character.name},
            collected_on=timezone.localdate(now),
        )
        blood.donors.add(character)


@transaction.atomic
def character_approve(
    *, character: Character, by: User, now: dt.datetime | None = None
) -> Character:
    """An ST approves a submitted character (CRE-09): the rules are checked again, the sheet is
    written, and the player is told. XP-07: a player has one active PC per chronicle. A second
    click on an approved character changes nothing."""
    now = now or timezone.now()
    _require_staff(character.chronicle, by)
    if character.player_id is not None:
        # The player's lock first, so two approvals of the player's characters queue here.
        lock_ledger(chronicle=character.chronicle, player_id=character.player_id)
    locked = _lock(character)
    if locked.approval == Approval.APPROVED:
        return locked
    if locked.approval != Approval.SUBMITTED:
        raise ValidationError(
            _(
                "Only a character submitted for approval can be approved; this one is "
                "%(state)s (CRE-09)."
            )
            % {"state": locked.get_approval_display().lower()}
        )
    problems = _submit_problems(locked)
    if problems:
        raise ValidationError(problems)
    # A PC in torpor or staked is still in play (it may recover, TOR-01): approving a second
    # one would leave two active PCs when it does, which the database refuses.
    other = (
        Character.objects.filter(
            chronicle=locked.chronicle,
            player_id=locked.player_id,
            status__in=(Status.ACTIVE, Status.TORPOR, Status.STAKED),
            approval=Approval.APPROVED,
        )
        .exclude(pk=locked.pk)
        .first()
        if locked.player_id is not None
        else None
    )
    if other is not None:
        raise ValidationError(
            _(
                "This player already has %(other)s in play (%(status)s); a player has one "
                "character in play at a time, counting one in torpor or staked (XP-07). Retire "
                "the other one first."
            )
            % {"other": other.name, "status": other.get_status_display().lower()}
        )
    draft = Draft.from_character(locked)
    _build_sheet(locked, draft, draft_quote(locked), now)
    locked.status = Status.ACTIVE
    locked.approval = Approval.APPROVED
    locked.approved_by = by
    locked.approved_at = now
    locked.approval_note = ""
    locked.save()
    with in_reader_language(locked.player):
        subject = _("%(character)s is approved") % {"character": locked.name}
        body = _("A storyteller approved %(character)s. Your character sheet is ready.") % {
            "character": locked.name
        }
    notify(
        character=locked,
        key=f"character-approved:{locked.pk}",
        subject=subject,
        body=body,
        now=now,
    )
    return locked


@transaction.atomic
def character_return(
    *, character: Character, by: User, note: str, now: dt.datetime | None = None
) -> Character:
    """An ST sends a submitted character back to its player with a note (CRE-09)."""
    now = now or timezone.now()
    _require_staff(character.chronicle, by)
    note = note.strip()
    if not note:
        raise ValidationError({"note": _("Tell the player what to change.")})
    locked = _lock(character)
    if locked.approval == Approval.RETURNED and locked.approval_note == note:
        return locked
    if locked.approval != Approval.SUBMITTED:
        raise ValidationError(
            _(
                "Only a character waiting for approval can be returned; this one is "
                "%(state)s (CRE-09)."
            )
            % {"state": locked.get_approval_display().lower()}
        )
    locked.approval = Approval.RETURNED
    locked.approval_note = note
    locked.save(update_fields=["approval", "approval_note", "updated_at"])
    with in_reader_language(locked.player):
        subject = _("%(character)s needs changes") % {"character": locked.name}
        body = _("A storyteller returned %(character)s with this note:\n\n%(note)s") % {
            "character": locked.name,
            "note": note,
        }
    notify(
        character=locked,
        key=f"character-returned:{locked.pk}:{now.isoformat()}",
        subject=subject,
        body=body,
        now=now,
    )
    return locked


@transaction.atomic
def background_approve(
    *, character: Character, by: User, now: dt.datetime | None = None
) -> Character:
    """CRE-09: an ST approves the background; until then the player cannot spend XP (XP-02)."""
    now = now or timezone.now()
    _require_staff(character.chronicle, by)
    locked = _lock(character)
    if locked.background_approved_at is not None:
        return locked
    if not locked.background_questionnaire.strip():
        raise ValidationError(
            {"background_questionnaire": _("There is no questionnaire to approve yet (CRE-09).")}
        )
    locked.background_approved_by = by
    locked.background_approved_at = now
    locked.save(update_fields=["background_approved_by", "background_approved_at", "updated_at"])
    return locked
