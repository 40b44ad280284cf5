"""Ownership changes asked for now, applied in downtime (HAV-03, HAV-05, HAV-06)."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from characters.models import Character
from characters.models import Status as CharacterStatus
from chronicle.models import Chronicle, Cycle
from chronicle.services import current_downtime

from ... import rules
from ...models import (
    ChangeKind,
    ChangeStatus,
    CryptVote,
    OwnershipChange,
    Structure,
    StructureKind,
)
from ...words import CRYPT_VOTE_TALLY, REPLACED_WILL
from .common import (
    CRYPT_DESTRUCTION,
    NAME_MAX,
    _acts_for,
    _lock_structure,
    _now,
    _owner_ids,
    _require_current_downtime,
    _require_staff,
    _require_standing,
)

# --- Ownership changes asked for now, applied in downtime (HAV-03, HAV-05, HAV-06) ------------


def link_by_name(*, chronicle: Chronicle | int, name: str) -> Character | None:
    """The one active character of the chronicle with exactly this name, or None (none or
    several): an ST links it then. Callers must answer the same either way."""
    matches = list(
        Character.objects.filter(
            chronicle=chronicle, name__iexact=name.strip(), status=CharacterStatus.ACTIVE
        )[:2]
    )
    return matches[0] if len(matches) == 1 else None


def _require_owner(structure: Structure, character: Character, rule: str) -> None:
    if character.pk not in _owner_ids(structure):
        raise ValidationError(
            {"from_character": [_("Only a current owner can do this (%(rule)s).") % {"rule": rule}]}
        )


def _recipient(
    *, structure: Structure, by: User, to_character: Character | None, to_name: str
) -> tuple[Character | None, str]:
    if to_character is not None:
        _require_staff(by, structure.chronicle_id)
        if (
            to_character.chronicle_id != structure.chronicle_id
            or to_character.status != CharacterStatus.ACTIVE
        ):
            raise ValidationError(
                {"to_character": [_("Choose an active character of this chronicle (HAV-05).")]}
            )
        return to_character, to_character.name
    name = to_name.strip()
    if not name or len(name) > NAME_MAX:
        raise ValidationError(
            {
                "to_name": [
                    _("Give the recipient's character name (at most %(max)s letters, HAV-05).")
                    % {"max": NAME_MAX}
                ]
            }
        )
    return link_by_name(chronicle=structure.chronicle_id, name=name), name


@transaction.atomic
def structure_transfer_request(
    *,
    structure: Structure,
    from_character: Character,
    by: User,
    to_character: Character | None = None,
    to_name: str = "",
    note: str = "",
    now: dt.datetime | None = None,
) -> OwnershipChange:
    """HAV-05: `from_character` gives its ownership to another character; it takes effect in
    the downtime of the current open cycle. A crypt goes whole (it has one owner, HAV-01).
    Players name the recipient in words; the answer is the same whether the name matched."""
    now = _now(now)
    _acts_for(by, from_character)
    structure = _lock_structure(structure)
    _require_standing(structure)
    _require_owner(structure, from_character, "HAV-05")
    recipient, name = _recipient(
        structure=structure, by=by, to_character=to_character, to_name=to_name
    )
    if recipient is not None and recipient.pk == from_character.pk:
        raise ValidationError(
            {"to_name": [_("A character cannot give a haven to itself (HAV-05).")]}
        )
    cycle = _require_current_downtime(structure.chronicle_id, "transfer")
    pending = OwnershipChange.objects.filter(
        structure=structure,
        kind=ChangeKind.TRANSFER,
        from_character=from_character,
        status=ChangeStatus.PENDING,
    ).first()
    note = note.strip()
    if pending is not None:
        if (
            pending.to_character_id == (recipient.pk if recipient else None)
            and pending.to_name == name
            and pending.note == note
        ):
            return pending
        raise ValidationError(
            _(
                "A transfer of this haven by this character is already waiting for the "
                "downtime; cancel it first (HAV-05)."
            )
        )
    return OwnershipChange.objects.create(
        structure=structure,
        kind=ChangeKind.TRANSFER,
        cycle=cycle,
        from_character=from_character,
        to_character=recipient,
        to_name=name,
        note=note,
        requested_by=by,
        requested_at=now,
    )


def _any_cycle(chronicle_id: int) -> Cycle:
    cycle = current_downtime(chronicle_id) or (
        Cycle.objects.filter(chronicle_id=chronicle_id).order_by("-deadline_at").first()
    )
    if cycle is None:
        raise ValidationError(_("The chronicle has no game yet; a will waits for one (HAV-05)."))
    return cycle


@transaction.atomic
def structure_will_set(
    *,
    structure: Structure,
    from_character: Character,
    by: User,
    to_character: Character | None = None,
    to_name: str = "",
    note: str = "",
    now: dt.datetime | None = None,
) -> OwnershipChange:
    """HAV-05: the heir of `from_character`'s ownership, applied only when it dies. A new will
    replaces the previous one."""
    now = _now(now)
    _acts_for(by, from_character)
    structure = _lock_structure(structure)
    _require_standing(structure)
    _require_owner(structure, from_character, "HAV-05")
    recipient, name = _recipient(
        structure=structure, by=by, to_character=to_character, to_name=to_name
    )
    if recipient is not None and recipient.pk == from_character.pk:
        raise ValidationError(
            {"to_name": [_("A character cannot leave a haven to itself (HAV-05).")]}
        )
    note = note.strip()
    previous = OwnershipChange.objects.filter(
        structure=structure,
        kind=ChangeKind.WILL,
        from_character=from_character,
        status=ChangeStatus.PENDING,
    )
    same = previous.filter(to_character=recipient, to_name=name, note=note).first()
    if same is not None:
        return same
    previous.update(status=ChangeStatus.CANCELLED, outcome=REPLACED_WILL)
    return OwnershipChange.objects.create(
        structure=structure,
        kind=ChangeKind.WILL,
        cycle=_any_cycle(structure.chronicle_id),
        from_character=from_character,
        to_character=recipient,
        to_name=name,
        note=note,
        requested_by=by,
        requested_at=now,
    )


@transaction.atomic
def structure_forsake_request(
    *, structure: Structure, character: Character, by: User, now: dt.datetime | None = None
) -> OwnershipChange:
    """HAV-06: `character` gives up its ownership in this downtime. An exclusive owner
    forsaking an outer haven destroys it and every crypt in it; a crypt's owner destroys it."""
    now = _now(now)
    _acts_for(by, character)
    structure = _lock_structure(structure)
    _require_standing(structure)
    _require_owner(structure, character, "HAV-06")
    cycle = _require_current_downtime(structure.chronicle_id, "forsake")
    change, _created = OwnershipChange.objects.get_or_create(
        structure=structure,
        kind=ChangeKind.FORSAKE,
        from_character=character,
        status=ChangeStatus.PENDING,
        defaults={"cycle": cycle, "requested_by": by, "requested_at": now},
    )
    return change


@transaction.atomic
def crypt_destroy_vote(
    *, crypt: Structure, voter: Character, by: User, now: dt.datetime | None = None
) -> CryptVote:
    """HAV-03: an owner of the outer haven votes to destroy a crypt inside it. With the
    exclusive owner's vote, or more than half of the partial owners', one destruction is
    queued for the downtime. Voting is the only change they may make to the crypt."""
    now = _now(now)
    _acts_for(by, voter)
    crypt = _lock_structure(crypt)
    if crypt.kind != StructureKind.CRYPT or crypt.outer_id is None:
        raise ValidationError(_("Only a crypt can be destroyed this way (HAV-03)."))
    _require_standing(crypt, crypt=True)
    outer_owners = _owner_ids(crypt.outer_id)
    if voter.pk not in outer_owners:
        raise ValidationError(
            {"voter": [_("Only an owner of the outer haven may vote to destroy a crypt (HAV-03).")]}
        )
    cycle = _require_current_downtime(crypt.chronicle_id, "destroy_crypt")
    vote, _created = CryptVote.objects.get_or_create(
        crypt=crypt, voter=voter, cycle=cycle, defaults={"created_at": now}
    )
    in_favour = CryptVote.objects.filter(
        crypt=crypt, cycle=cycle, voter_id__in=outer_owners
    ).count()
    if (
        rules.crypt_destruction_allowed(outer_owners=len(outer_owners), in_favour=in_favour)
        and not OwnershipChange.objects.filter(
            structure=crypt, kind=ChangeKind.DESTROY_CRYPT, status=ChangeStatus.PENDING
        ).exists()
    ):
        # The change is on the crypt, whose owner sees it: no voter and no count there (HAV-04).
        # The storytellers read both in `outcome` (never shown to players).
        voters = Character.objects.filter(
            pk__in=CryptVote.objects.filter(
                crypt=crypt, cycle=cycle, voter_id__in=outer_owners
            ).values("voter_id")
        ).order_by("name", "pk")
        OwnershipChange.objects.create(
            structure=crypt,
            kind=ChangeKind.DESTROY_CRYPT,
            cycle=cycle,
            note=CRYPT_DESTRUCTION,
            outcome=CRYPT_VOTE_TALLY
            % {
                "in_favour": in_favour,
                "owners": len(outer_owners),
                "voters": ", ".join(v.name for v in voters),
            },
            requested_by=by,
            requested_at=now,
        )
    return vote


@transaction.atomic
def change_cancel(*, change: OwnershipChange, by: User) -> OwnershipChange:
    """Take back a pending change of one's own (storytellers: any)."""
    change = (
        OwnershipChange.objects.select_for_update(of=("self",))
        .select_related("from_character")
        .get(pk=change.pk)
    )
    own = change.requested_by_id == by.pk or (
        change.from_character is not None and change.from_character.player_id == by.pk
    )
    if not own:
        _require_staff(by, change.structure.chronicle_id)
    if change.status == ChangeStatus.CANCELLED:
        return change
    if change.status != ChangeStatus.PENDING:
        raise ValidationError(
            _("Only a change still waiting for the downtime can be cancelled (HAV-05).")
        )
    change.status = ChangeStatus.CANCELLED
    change.save(update_fields=["status"])
    if change.kind == ChangeKind.DESTROY_CRYPT:
        CryptVote.objects.filter(crypt=change.structure_id, cycle=change.cycle_id).delete()
    return change
