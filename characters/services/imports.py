"""Imports of Grapevine 3 files: the preview (what will be created, updated, invited, and what
does not map) and the import itself, in one transaction, set-based.

`grapevine_plan` reads only: it parses every file (`characters.importers.grapevine`), matches
the characters with the chronicle's (the file's own id, else the name), the players with its
members, and the imported XP entries with the ledger. `grapevine_import` takes the chronicle's
lock, plans again, and writes: invitations for players who have no account (the people
services' placeholders), the characters in bulk, their discipline levels, rituals and
disadvantages, and the ledger entries the file adds (keyed, so a second import adds nothing;
an entry the file no longer holds is reversed, never deleted: the ledger is append-only).
Statements grow by batch of characters, not by trait or XP entry.

A storyteller's change since the last import is found by comparing the sheet with what the
last import wrote (`Character.imported_data["written"]`); the preview lists it, and the import
refuses to run on a chronicle that changed since the preview the storytellers confirmed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from celery import current_app
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, pgettext_lazy

from chronicle.access import STAFF_ROLES
from chronicle.models import Chronicle, Membership
from chronicle.services import member_placeholder_create
from chronicle.stored_text import stored_sentences

from .. import rules
from ..importers import grapevine
from ..importers.grapevine import CharacterPlan, GrapevineRefused, LedgerLine
from ..models import (
    Acquired,
    Approval,
    Character,
    Creature,
    Disadvantage,
    DisciplineLevel,
    ImportJob,
    ImportStatus,
    Ritual,
    Status,
    XpEntry,
    XpKind,
)
from .common import in_reader_language

# Stored in English on the ledger and shown in each reader's language (chronicle.stored_text).
GRAPEVINE_REVERSAL = gettext_noop("Reversal: no longer in the Grapevine file %(file)s")
stored_sentences(GRAPEVINE_REVERSAL)

BATCH = 200
PROGRESS_EVERY = 10
IMPORT_TASK = "characters.tasks.run_grapevine_import"
MAX_FILE_BYTES = 5 * 1024 * 1024
IN_PLAY = (Status.ACTIVE, Status.TORPOR, Status.STAKED)
FIELDS = (
    "name",
    "creature",
    "clan",
    "sect",
    "generation",
    "status",
    "physical",
    "social",
    "mental",
    "willpower",
    "abilities",
    *rules.INFLUENCE_TYPES,
    "background_story",
)


# --- The report -----------------------------------------------------------------------------------


@dataclass
class PlayerLine:
    """A player named in the files: an existing member, or an invitation to be made."""

    name: str
    user_id: int | None = None
    username: str = ""
    # True when the import makes (or made) an invitation for this player.
    invitation: bool = False


@dataclass
class CharacterLine:
    plan: CharacterPlan
    existing: Character | None = None
    changed_since: list[str] = field(default_factory=list)
    ledger_new: list[LedgerLine] = field(default_factory=list)
    ledger_reversed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def action(self) -> str:
        return "update" if self.existing is not None else "create"

    @property
    def xp_earned(self) -> Decimal:
        return sum(
            (line.amount for line in self.plan.ledger if line.kind in ("award", "penalty")),
            Decimal(0),
        )

    def as_json(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "name": plan.name,
            "kind": plan.kind,
            # The kind as the storytellers read it, in the language the report is written in.
            "kind_label": str(Creature(plan.creature).label)
            if plan.creature in Creature.values
            else plan.kind,
            "clan": plan.clan_title,
            "sect": plan.sect.title() if plan.sect else "",
            "generation": plan.generation if plan.creature == "kindred" else None,
            "player": plan.player_name or None,
            "npc": plan.npc,
            "xp_earned": float(self.xp_earned),
            "xp_unspent": float(plan.ledger_total),
            "xp_entries": len(plan.ledger),
            "status": plan.status,
            "action": self.action,
            "changed_since": self.changed_since,
            "file": plan.file,
            "xp_unspent_in_file": (
                float(plan.xp_unspent_file) if plan.xp_unspent_file is not None else None
            ),
        }


@dataclass
class ImportReport:
    files: list[str] = field(default_factory=list)
    characters: list[CharacterLine] = field(default_factory=list)
    players: list[PlayerLine] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[GrapevineRefused] = field(default_factory=list)
    choices: dict[str, str] = field(default_factory=dict)
    written: bool = False

    @property
    def refused(self) -> bool:
        return bool(self.errors)

    @property
    def created(self) -> int:
        return sum(1 for line in self.characters if line.action == "create")

    @property
    def updated(self) -> int:
        return sum(1 for line in self.characters if line.action == "update")

    @property
    def xp_entries(self) -> int:
        return sum(len(line.ledger_new) for line in self.characters)

    @property
    def invitations(self) -> list[PlayerLine]:
        return [p for p in self.players if p.invitation]

    def unmapped(self) -> list[dict[str, Any]]:
        """Each value the mapping table lacks, once, with where it is and the choices."""
        rows: dict[str, dict[str, Any]] = {}
        for line in self.characters:
            for item in line.plan.unmapped:
                row = rows.setdefault(
                    item.key,
                    {
                        "what": item.what,
                        "value": item.value,
                        "key": item.key,
                        "places": [],
                        "choices": list(grapevine.TARGETS[item.what]),
                        "chosen": self.choices.get(item.key, grapevine.DEFAULTS[item.what]),
                    },
                )
                place = f"{line.plan.file}: {item.character}"
                if place not in row["places"]:
                    row["places"].append(place)
        result = []
        for row in rows.values():
            row["where"] = "; ".join(row.pop("places"))
            result.append(row)
        return result

    def all_warnings(self) -> list[str]:
        return self.warnings + [w for line in self.characters for w in line.plan.warnings]

    def digest(self) -> str:
        """What the storytellers saw in the preview, so the import can refuse a chronicle
        that changed since."""
        material = [
            [
                line.plan.key,
                line.action,
                line.existing.pk if line.existing else None,
                line.changed_since,
                len(line.ledger_new),
                len(line.ledger_reversed),
            ]
            for line in self.characters
        ]
        # The storytellers' choices are not part of it: they may change them with the Import
        # button itself.
        material.append([[p.name, str(p.user_id)] for p in self.players])
        return hashlib.sha256(json.dumps(material, default=str).encode()).hexdigest()

    def as_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "characters": [line.as_json() for line in self.characters],
            "created": self.created,
            "updated": self.updated,
            "xp_entries": self.xp_entries,
            "unmapped": [
                {"what": r["what"], "value": r["value"], "where": r["where"]}
                for r in self.unmapped()
            ],
            "players": [
                {"name": p.name, "member": p.username or None, "invitation": p.invitation}
                for p in self.players
            ],
            "warnings": self.all_warnings(),
            "errors": [str(e) for e in self.errors],
            "written": self.written,
        }


# --- Reading: the plan ----------------------------------------------------------------------------


def snapshot(
    character: Character,
    *,
    levels: Sequence[tuple[str, int]],
    rituals: Sequence[str],
    disadvantages: Sequence[tuple[str, bool, bool]],
) -> dict[str, Any]:
    """The sheet as `CharacterPlan.written` describes it."""
    tops: dict[str, int] = {}
    for discipline, level in levels:
        tops[discipline] = max(tops.get(discipline, 0), level)
    return {
        "name": character.name,
        "creature": character.creature,
        "clan": character.clan,
        "sect": character.sect,
        "generation": character.generation,
        "status": character.status,
        "physical": character.physical,
        "social": character.social,
        "mental": character.mental,
        "willpower": character.willpower,
        "abilities": dict(sorted((character.abilities or {}).items())),
        **{name: getattr(character, name) for name in rules.INFLUENCE_TYPES},
        "disciplines": dict(sorted(tops.items())),
        "rituals": sorted(rituals),
        "disadvantages": sorted([list(d) for d in disadvantages]),
        "background_story": character.background_story,
    }


# What the storytellers changed on a sheet since its import, as the report names it.
FIELD_LABELS: Mapping[str, Any] = {
    "name": pgettext_lazy("sheet field", "name"),
    "creature": pgettext_lazy("sheet field", "creature"),
    "clan": pgettext_lazy("sheet field", "clan"),
    "sect": pgettext_lazy("sheet field", "sect"),
    "generation": pgettext_lazy("sheet field", "generation"),
    "status": pgettext_lazy("sheet field", "status"),
    "physical": pgettext_lazy("sheet field", "physical"),
    "social": pgettext_lazy("sheet field", "social"),
    "mental": pgettext_lazy("sheet field", "mental"),
    "willpower": pgettext_lazy("sheet field", "willpower"),
    "abilities": pgettext_lazy("sheet field", "abilities"),
    "business": pgettext_lazy("sheet field", "business"),
    "government": pgettext_lazy("sheet field", "government"),
    "herd": pgettext_lazy("sheet field", "herd"),
    "occult": pgettext_lazy("sheet field", "occult"),
    "underworld": pgettext_lazy("sheet field", "underworld"),
    "disciplines": pgettext_lazy("sheet field", "disciplines"),
    "rituals": pgettext_lazy("sheet field", "rituals"),
    "disadvantages": pgettext_lazy("sheet field", "disadvantages"),
    "background_story": pgettext_lazy("sheet field", "background story"),
}


def _changed_since(character: Character, current: dict[str, Any]) -> list[str]:
    written = (character.imported_data or {}).get("written")
    if not written:
        return [_("not imported before: the file's values replace this sheet")]
    return [
        str(FIELD_LABELS.get(name, name.replace("_", " ")))
        for name, value in written.items()
        if current.get(name) != value
    ]


def _read_files(
    files: Sequence[tuple[str, bytes]], *, chronicle: Chronicle, now: dt.datetime
) -> tuple[list[grapevine.GvFile], list[GrapevineRefused]]:
    parsed: list[grapevine.GvFile] = []
    errors: list[GrapevineRefused] = []
    for name, data in files:
        if len(data) > MAX_FILE_BYTES:
            errors.append(
                GrapevineRefused(
                    _("The file is larger than %(mb)s MB; split the chronicle into several files.")
                    % {"mb": MAX_FILE_BYTES // (1024 * 1024)},
                    file=name,
                )
            )
            continue
        try:
            parsed.append(grapevine.read_file(data, filename=name))
        except GrapevineRefused as exc:
            errors.append(exc)
    return parsed, errors


def grapevine_plan(
    *,
    chronicle: Chronicle,
    files: Sequence[tuple[str, bytes]],
    choices: Mapping[str, str] | None = None,
    now: dt.datetime | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """The preview: what an import of `files` would do, and nothing written. A refused file
    leaves the report with `errors` and no characters."""
    now = now or timezone.now()
    report = ImportReport(files=[name for name, _data in files], choices=dict(choices or {}))
    parsed, report.errors = _read_files(files, chronicle=chronicle, now=now)
    if report.errors:
        return report
    plans: dict[str, CharacterPlan] = {}
    player_names: list[str] = []
    total = sum(len(f.characters) for f in parsed)
    done = 0
    for gv_file in parsed:
        report.warnings += gv_file.warnings
        for gv in gv_file.characters:
            plan = grapevine.plan_character(
                gv,
                file=gv_file.name,
                tz=chronicle.tz,
                day_first=gv_file.day_first,
                now=now,
                choices=choices,
            )
            if plan.key in plans:
                report.warnings.append(
                    _("%(name)s is in %(first)s and %(second)s; the one in %(second)s is imported.")
                    % {"name": plan.name, "first": plans[plan.key].file, "second": plan.file}
                )
            plans[plan.key] = plan
            done += 1
            if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
                progress(done, total)
        player_names += gv_file.players
    player_names += [p.player_name for p in plans.values() if p.player_name]
    _match_players(report, chronicle, player_names)
    _match_characters(report, chronicle, list(plans.values()))
    _one_in_play(report, chronicle)
    return report


def _full_name(user: User) -> str:
    return " ".join(user.get_full_name().split()).lower()


def _match_players(report: ImportReport, chronicle: Chronicle, names: list[str]) -> None:
    """A player named in the file is the member with that full name, else that username
    (case-insensitive); anyone else gets an invitation."""
    unique = list(dict.fromkeys(" ".join(n.split()) for n in names if n.strip()))
    if not unique:
        return
    members = list(
        Membership.objects.filter(chronicle=chronicle).select_related("user").order_by("pk")
    )
    by_full: dict[str, User] = {}
    by_username: dict[str, User] = {}
    for membership in members:
        by_full.setdefault(_full_name(membership.user), membership.user)
        by_username.setdefault(membership.user.username.lower(), membership.user)
    for name in unique:
        user = by_full.get(name.lower()) or by_username.get(name.lower())
        report.players.append(
            PlayerLine(
                name=name,
                user_id=user.pk if user else None,
                username=user.username if user else "",
                invitation=user is None,
            )
        )


def _match_characters(
    report: ImportReport, chronicle: Chronicle, plans: list[CharacterPlan]
) -> None:
    keys = [p.key for p in plans]
    names = [p.name.lower() for p in plans]
    candidates = list(
        Character.objects.filter(chronicle=chronicle)
        .annotate(lower_name=Lower("name"))
        .filter(Q(grapevine_key__in=keys) | Q(lower_name__in=names))
        .order_by("pk")
    )
    by_key: dict[str, Character] = {}
    by_name: dict[str, Character] = {}
    for character in candidates:
        if character.grapevine_key:
            by_key.setdefault(character.grapevine_key, character)
        by_name.setdefault(character.name.lower(), character)
    taken: set[int] = set()
    for plan in plans:
        existing = by_key.get(plan.key)
        if existing is None and plan.key.startswith("name:"):
            found = by_name.get(plan.name.lower())
            # A character that an id keys belongs to that id, not to a namesake.
            if found is not None and not found.grapevine_key.startswith("id:"):
                existing = found
        if existing is not None and existing.pk in taken:
            existing = None
        if existing is not None:
            taken.add(existing.pk)
        report.characters.append(CharacterLine(plan=plan, existing=existing))
    existing_ids = [line.existing.pk for line in report.characters if line.existing]
    if not existing_ids:
        for line in report.characters:
            line.ledger_new = list(line.plan.ledger) if line.plan.player_name else []
        return
    levels: dict[int, list[tuple[str, int]]] = {}
    for character_id, discipline, level in DisciplineLevel.objects.filter(
        character_id__in=existing_ids
    ).values_list("character_id", "discipline", "level"):
        levels.setdefault(character_id, []).append((discipline, level))
    rituals: dict[int, list[str]] = {}
    for character_id, name in Ritual.objects.filter(character_id__in=existing_ids).values_list(
        "character_id", "name"
    ):
        rituals.setdefault(character_id, []).append(name)
    disadvantages: dict[int, list[tuple[str, bool, bool]]] = {}
    for character_id, name, major, derangement in Disadvantage.objects.filter(
        character_id__in=existing_ids
    ).values_list("character_id", "name", "major", "derangement"):
        disadvantages.setdefault(character_id, []).append((name, major, derangement))
    entries: dict[int, list[dict[str, Any]]] = {}
    for entry_row in (
        XpEntry.objects.filter(
            chronicle=chronicle,
            character_id__in=existing_ids,
            key__startswith="gv:",
            reversed_by__isnull=True,
        )
        .exclude(kind=XpKind.REVERSAL)
        .values("pk", "key", "amount", "player_id", "character_id", "reason")
    ):
        entries.setdefault(entry_row["character_id"], []).append(dict(entry_row))
    player_ids = {p.name: p.user_id for p in report.players}
    for line in report.characters:
        plan = line.plan
        player_id = player_ids.get(plan.player_name) if plan.player_name else None
        if line.existing is None:
            line.ledger_new = list(plan.ledger) if plan.player_name else []
            continue
        pk = line.existing.pk
        current = snapshot(
            line.existing,
            levels=levels.get(pk, []),
            rituals=rituals.get(pk, []),
            disadvantages=disadvantages.get(pk, []),
        )
        line.changed_since = _changed_since(line.existing, current)
        wanted = {ledger.key for ledger in plan.ledger} if plan.player_name else set()
        kept = set()
        for row in entries.get(pk, []):
            if row["key"] in wanted and player_id is not None and row["player_id"] == player_id:
                kept.add(row["key"])
            else:
                line.ledger_reversed.append(row)
        line.ledger_new = [ledger for ledger in plan.ledger if ledger.key in wanted - kept]


def _one_in_play(report: ImportReport, chronicle: Chronicle) -> None:
    """XP-07: a player has one character in play; a second one in the file comes in retired."""
    player_ids = {p.name: p.user_id for p in report.players}
    members = [uid for uid in player_ids.values() if uid is not None]
    in_play: dict[int | str, int | None] = {}
    if members:
        for player_id, pk in Character.objects.filter(
            chronicle=chronicle,
            player_id__in=members,
            status__in=IN_PLAY,
            approval=Approval.APPROVED,
        ).values_list("player_id", "pk"):
            in_play.setdefault(player_id, pk)
    matched = {line.existing.pk for line in report.characters if line.existing}
    # The characters this import updates make way for their own new status.
    in_play = {k: v for k, v in in_play.items() if v not in matched}
    for line in report.characters:
        plan = line.plan
        if not plan.player_name or plan.status not in IN_PLAY:
            continue
        who: int | str = player_ids.get(plan.player_name) or f"name:{plan.player_name}"
        if who in in_play:
            plan.status = Status.RETIRED
            plan.warnings.append(
                _(
                    "%(name)s comes in retired: %(player)s already has a character in play, and a "
                    "player has one at a time (XP-07)."
                )
                % {"name": plan.name, "player": plan.player_name}
            )
        else:
            in_play[who] = line.existing.pk if line.existing else None


# --- Writing --------------------------------------------------------------------------------------


def _require_staff(chronicle: Chronicle, user: User) -> None:
    if not Membership.objects.filter(chronicle=chronicle, user=user, role__in=STAFF_ROLES).exists():
        raise PermissionDenied(_("Only the chronicle's storytellers and admins may import."))


@transaction.atomic
def grapevine_import(
    *,
    chronicle: Chronicle,
    files: Sequence[tuple[str, bytes]],
    by: User,
    choices: Mapping[str, str] | None = None,
    dry_run: bool = False,
    expect_digest: str = "",
    now: dt.datetime | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import Grapevine files into `chronicle`, all or nothing: a refused file (its line, its
    column, what is wrong) leaves the chronicle as it was. `dry_run` plans and writes nothing.
    `expect_digest`: the preview the storytellers confirmed; a chronicle changed since is
    refused rather than overwritten without their knowing."""
    now = now or timezone.now()
    _require_staff(chronicle, by)
    # One import at a time per chronicle: two would both create the same characters.
    Chronicle.objects.select_for_update().filter(pk=chronicle.pk).values_list("pk").get()
    report = grapevine_plan(
        chronicle=chronicle, files=files, choices=choices, now=now, progress=progress
    )
    if report.refused or dry_run:
        return report
    if expect_digest and report.digest() != expect_digest:
        raise ValidationError(
            _(
                "The chronicle changed since the preview (a character was edited or imported "
                "meanwhile). Nothing was imported: look at the preview again and confirm it."
            )
        )
    _write(report, chronicle=chronicle, by=by, now=now)
    report.written = True
    return report


def _write(report: ImportReport, *, chronicle: Chronicle, by: User, now: dt.datetime) -> None:
    # Players: the members they are, or invitations (placeholders) for the others.
    user_ids: dict[str, int] = {}
    for player in report.players:
        if player.user_id is None:
            membership = member_placeholder_create(
                chronicle=chronicle, name=player.name, invited_by=by, now=now
            )
            player.user_id = membership.user_id
        user_ids[player.name] = player.user_id
    if user_ids:
        # The ledgers' locks (lock_ledger's rows), all at once and in one order.
        list(
            Membership.objects.select_for_update()
            .filter(chronicle=chronicle, user_id__in=sorted(set(user_ids.values())))
            .order_by("pk")
            .values_list("pk", flat=True)
        )

    files = ", ".join(report.files)[:255]
    new: list[Character] = []
    updated: list[Character] = []
    by_key: dict[str, Character] = {}
    for line in report.characters:
        plan = line.plan
        character = line.existing or Character(chronicle=chronicle, approval=Approval.APPROVED)
        character.player_id = user_ids.get(plan.player_name) if plan.player_name else None
        for name in FIELDS:
            if name in rules.INFLUENCE_TYPES:
                setattr(character, name, plan.influences.get(name, 0))
            else:
                setattr(character, name, getattr(plan, name))
        character.imported_from = plan.file[:255] if plan.file else files
        character.imported_at = now
        character.grapevine_key = plan.key
        character.imported_notes = plan.notes
        character.imported_data = {**plan.data, "file": plan.file, "written": plan.written()}
        character.updated_at = now
        (updated if line.existing else new).append(character)
        by_key[plan.key] = character
    Character.objects.bulk_create(new, batch_size=BATCH)
    if updated:
        Character.objects.bulk_update(
            updated,
            [
                *FIELDS,
                "player",
                "imported_from",
                "imported_at",
                "grapevine_key",
                "imported_notes",
                "imported_data",
                "updated_at",
            ],
            batch_size=BATCH,
        )
        ids = [c.pk for c in updated]
        DisciplineLevel.objects.filter(
            character_id__in=ids, acquired=Acquired.CREATION, purchase__isnull=True
        ).delete()
        Ritual.objects.filter(character_id__in=ids, free=False).delete()
        Disadvantage.objects.filter(character_id__in=ids).delete()

    levels: list[DisciplineLevel] = []
    rituals: list[Ritual] = []
    disadvantages: list[Disadvantage] = []
    for line in report.characters:
        character = by_key[line.plan.key]
        for discipline, top in line.plan.disciplines.items():
            levels += [
                DisciplineLevel(
                    character=character,
                    discipline=discipline,
                    level=number,
                    acquired=Acquired.CREATION,
                )
                for number in range(1, top + 1)
            ]
        rituals += [Ritual(character=character, name=name[:120]) for name in line.plan.rituals]
        disadvantages += [
            Disadvantage(
                character=character, name=d.name[:120], major=d.major, derangement=d.derangement
            )
            for d in line.plan.disadvantages
        ]
    # A level bought in play since stays; the file's same level is then already owned.
    DisciplineLevel.objects.bulk_create(levels, batch_size=BATCH * 10, ignore_conflicts=True)
    Ritual.objects.bulk_create(rituals, batch_size=BATCH * 10)
    Disadvantage.objects.bulk_create(disadvantages, batch_size=BATCH * 10)

    # The ledger: what the file adds, and reversals of what it no longer holds.
    entries: list[XpEntry] = []
    for line in report.characters:
        character = by_key[line.plan.key]
        for row in line.ledger_reversed:
            entries.append(
                XpEntry(
                    chronicle=chronicle,
                    player_id=row["player_id"],
                    character=character,
                    amount=-row["amount"],
                    kind=XpKind.REVERSAL,
                    reason=GRAPEVINE_REVERSAL % {"file": line.plan.file},
                    key=f"reversal:{row['pk']}",
                    reverses_id=row["pk"],
                    actor=by,
                    created_at=now,
                )
            )
        if character.player_id is None:
            continue
        entries += [
            XpEntry(
                chronicle=chronicle,
                player_id=character.player_id,
                character=character,
                amount=ledger.amount,
                kind=ledger.kind,
                reason=ledger.reason,
                key=ledger.key,
                actor=by,
                created_at=ledger.when,
            )
            for ledger in line.ledger_new
        ]
    XpEntry.objects.bulk_create(entries, batch_size=BATCH * 10)


# --- Jobs: the Import page's uploads, run on a worker ---------------------------------------------


def _job_files(job: ImportJob) -> list[tuple[str, bytes]]:
    return [(str(f["name"]), str(f["text"]).encode("utf-8")) for f in job.files]


@transaction.atomic
def import_job_create(
    *,
    chronicle: Chronicle,
    by: User,
    files: Sequence[tuple[str, bytes]],
    now: dt.datetime | None = None,
) -> tuple[ImportJob | None, ImportReport]:
    """Keep uploaded files for the preview. A refused file creates no job: the report's
    `errors` say why, with line and column."""
    now = now or timezone.now()
    _require_staff(chronicle, by)
    report = grapevine_plan(chronicle=chronicle, files=files, now=now)
    if report.refused:
        return None, report
    stored = [{"name": name, "text": grapevine.decode(data)} for name, data in files]
    job = ImportJob.objects.create(
        chronicle=chronicle,
        created_by=by,
        created_at=now,
        files=stored,
        progress_total=len(report.characters),
    )
    return job, report


def import_job_preview(*, job: ImportJob, choices: Mapping[str, str] | None = None) -> ImportReport:
    return grapevine_plan(
        chronicle=job.chronicle,
        files=_job_files(job),
        choices=job.choices if choices is None else choices,
    )


def _send_after_commit(job_id: int) -> None:
    # By name (the services do not import the tasks that call them), after commit, and robust:
    # a broker that is down must not turn the confirmation into an error; the job page offers
    # to start it again.
    transaction.on_commit(lambda: current_app.send_task(IMPORT_TASK, args=[job_id]), robust=True)


@transaction.atomic
def import_job_confirm(
    *,
    job: ImportJob,
    by: User,
    choices: Mapping[str, str],
    digest: str,
    now: dt.datetime | None = None,
) -> ImportJob:
    """The storytellers' Import: their choices and the preview they saw, then the worker."""
    now = now or timezone.now()
    _require_staff(job.chronicle, by)
    locked = ImportJob.objects.select_for_update().get(pk=job.pk)
    if locked.status != ImportStatus.PREVIEW:
        return locked
    bad = {
        key: value
        for key, value in choices.items()
        if key.split(":", 1)[0] not in grapevine.TARGETS
        or value not in grapevine.TARGETS[key.split(":", 1)[0]]
    }
    if bad:
        raise ValidationError(_("Choose one of the offered values for each unmapped name."))
    locked.choices = dict(choices)
    locked.preview_digest = digest
    locked.status = ImportStatus.QUEUED
    locked.confirmed_by = by
    locked.confirmed_at = now
    locked.progress_done = 0
    locked.save()
    _send_after_commit(locked.pk)
    return locked


@transaction.atomic
def import_job_resend(*, job: ImportJob, by: User) -> ImportJob:
    """Send a queued job to the workers again (the broker was down). Running it twice does
    nothing more: the job row says when it is done."""
    _require_staff(job.chronicle, by)
    locked = ImportJob.objects.select_for_update().get(pk=job.pk)
    if locked.status in (ImportStatus.QUEUED, ImportStatus.RUNNING):
        _send_after_commit(locked.pk)
    return locked


def import_job_run(*, job_id: int, now: dt.datetime | None = None) -> bool:
    """The worker's side: claim the job, check the files again with a progress bar, and
    import in one transaction. Idempotent: a job done (or failed) is left alone, so a
    redelivered message or a second worker does nothing. Returns whether it imported."""
    now = now or timezone.now()
    claimed = ImportJob.objects.filter(
        pk=job_id, status__in=(ImportStatus.QUEUED, ImportStatus.RUNNING)
    ).update(status=ImportStatus.RUNNING, progress_done=0)
    if not claimed:
        return False
    job = ImportJob.objects.select_related("chronicle", "confirmed_by", "created_by").get(pk=job_id)
    # The report and the text kept on the sheets are written in the language of the storyteller
    # who confirmed the import, as a mail to them would be: they read it when it is done.
    reader = job.confirmed_by or job.created_by
    try:
        with in_reader_language(reader):
            return _import_job_run(job, job_id, now)
    except (ValidationError, PermissionDenied) as exc:
        with in_reader_language(reader):
            messages = getattr(exc, "messages", None) or [str(exc)]
        ImportJob.objects.filter(pk=job_id, status=ImportStatus.RUNNING).update(
            status=ImportStatus.FAILED, error=" ".join(messages), finished_at=timezone.now()
        )
        return False


def _import_job_run(job: ImportJob, job_id: int, now: dt.datetime) -> bool:
    def progress(done: int, total: int) -> None:
        # Outside the import's transaction, so each step is committed and the page sees it.
        ImportJob.objects.filter(pk=job_id, status=ImportStatus.RUNNING).update(
            progress_done=done, progress_total=total + 1
        )

    # First pass, read-only: the files checked character by character (the progress bar);
    # then the import itself, the last step of the bar, all at once.
    grapevine_plan(
        chronicle=job.chronicle,
        files=_job_files(job),
        choices=job.choices,
        now=now,
        progress=progress,
    )
    with transaction.atomic():
        locked = ImportJob.objects.select_for_update().get(pk=job_id)
        if locked.status != ImportStatus.RUNNING:
            return False
        report = grapevine_import(
            chronicle=job.chronicle,
            files=_job_files(job),
            by=job.confirmed_by or job.created_by,
            choices=job.choices,
            expect_digest=job.preview_digest,
            now=now,
        )
        if report.refused:
            raise ValidationError([str(e) for e in report.errors])
        locked.status = ImportStatus.DONE
        locked.result = report.as_json()
        locked.progress_total = len(report.characters) + 1
        locked.progress_done = locked.progress_total
        locked.finished_at = timezone.now()
        locked.save()
    return True
