"""A whole chronicle out and back in, its digest, and a player's own data (DESIGN: import,
export and history).

Each app lists its rows in its own `portability.py` (`PORTABLE`: models in dependency order,
each with a queryset of one chronicle's rows; `NOT_EXPORTED`: models that belong to a
chronicle but are deliberately left out, with the reason; `own_data(user, chronicle)`: what
one player may take home). This module finds those modules through the app registry, the way
`seed_demo` finds each app's `demo.seed`, so the ground floor still names no app above it.

The export is JSON (`"format": "chronicle-export", "version": 1`). Every row has an export
key instead of its id, and every foreign key names the key of the row it points to (a user, by
username). A row's key is a hash of its own fields (with references already turned into keys),
so it depends neither on database ids nor on the order rows come back in; identical rows get
`-1`, `-2`... in id order. The digest is the sha256 of the sorted rows: two databases holding
the same chronicle give the same digest, whatever their ids.

Import writes everything in one transaction, in batches (`bulk_create`, a constant number of
statements per batch, never per row): append-only tables (the ledgers' triggers) accept these
INSERTs and are never updated. Rows that point at rows of their own table (a reversal, a crypt
inside its outer haven) go in layers, the rows they point at first. `auto_now` timestamps are
set back to the exported values after each batch, in one UPDATE per batch.

Ids that other code wrote into text (ledger and notification keys such as `purchase:12`,
outcome subjects and values, pipeline chunk ranges) travel as they are, and the digest matches.
Such a key names the source database's row, so no row made in the target database may ever get
that id again: a new purchase 12 would find the ledger key `purchase:12` taken and get no entry
of its own (an award keyed so is silently never written: the player loses the XP). The export
therefore records, per table (and for the users), the highest id the source database has handed
out (`max_ids`), and the import first moves each table's id sequence past it and past the
target's own highest id: the imported rows and every row after them get ids above every source
id. An export written before `max_ids` existed is still read (same version): the import then
takes the largest number in it that reads like an id (a colon-separated part of a text such as
the 12 of `purchase:12`, or an integer) as every table's floor. What such a key names in the
target is still a different row than in the source (a chronicle is best moved between
downtimes, with no resolution preview pending), but never a row made after the import.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import importlib.util
import json
import logging
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, connection, models, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from .models import (
    Attendance,
    Ballot,
    CalendarFeed,
    Chronicle,
    Cycle,
    CycleTransition,
    Game,
    HouseRuleChange,
    Invitation,
    MailLog,
    MailPreference,
    Membership,
    MembershipEvent,
    Message,
    Profile,
    Proposal,
)

log = logging.getLogger(__name__)

FORMAT = "chronicle-export"
VERSION = 1
OWN_DATA_FORMAT = "chronicle-account-data"
BATCH_SIZE = 500

Row = dict[str, Any]
T = TypeVar("T")
# What `own_data` gives: rows of plain values (times and decimals as they come).
OwnRows = dict[str, list[Any]]


class PortabilityError(Exception):
    """An export or import refused, with a message for the person who asked."""


@dataclass(frozen=True)
class Portable:
    """One model of an app's chronicle data, and how to find one chronicle's rows of it."""

    model: type[models.Model]
    rows: Callable[[Chronicle], QuerySet[Any]]


# --- The chronicle app's own rows ----------------------------------------------------------------

PORTABLE: list[Portable] = [
    Portable(Chronicle, lambda c: Chronicle.objects.filter(pk=c.pk)),
    Portable(Membership, lambda c: Membership.objects.filter(chronicle=c)),
    Portable(MembershipEvent, lambda c: MembershipEvent.objects.filter(chronicle=c)),
    Portable(Invitation, lambda c: Invitation.objects.filter(chronicle=c)),
    Portable(Game, lambda c: Game.objects.filter(chronicle=c)),
    # Attendance travels with the characters app (characters.portability), after the
    # characters its lines name (HAV-06, issue 14).
    Portable(Cycle, lambda c: Cycle.objects.filter(chronicle=c)),
    Portable(CycleTransition, lambda c: CycleTransition.objects.filter(cycle__chronicle=c)),
    Portable(HouseRuleChange, lambda c: HouseRuleChange.objects.filter(chronicle=c)),
    # GEN-03 / GEN-04: the decisions, with the tally and effect frozen at their close.
    Portable(Proposal, lambda c: Proposal.objects.filter(chronicle=c)),
]
NOT_EXPORTED: dict[type[models.Model], str] = {
    # A secret copied into an export file is a secret leaked; after an import, members make a
    # new address from their account page.
    CalendarFeed: "private calendar addresses are secrets; members make new ones",
    # Delivery records of this deployment's mail: the keyed notices they came from
    # (characters.Notification) travel, and a digest or retry means nothing elsewhere.
    MailLog: "the mail log records this deployment's deliveries",
    Message: "inbox messages are copies of the notices, whose keyed rows travel",
    # How each person voted is never shown to anyone; an export file must not show it either.
    Ballot: "ballots are secret; a closed decision's tally travels with its proposal",
}


MESSAGE_FIELDS = ("kind", "subject", "body", "created_at", "read_at")


def own_data(user: Any, chronicle: Chronicle) -> OwnRows:
    """The player's membership in the chronicle, their own attendance, and the notices the
    chronicle sent them (their inbox)."""
    return {
        "messages": list(
            Message.objects.filter(recipient=user, chronicle=chronicle)
            .order_by("created_at", "pk")
            .values(*MESSAGE_FIELDS)
        ),
        "memberships": list(
            Membership.objects.filter(user=user, chronicle=chronicle).values("role", "joined_at")
        ),
        "attendance": list(
            Attendance.objects.filter(player=user, game__chronicle=chronicle)
            .order_by("game__date")
            .values("game__number", "game__date", "waiver_signed", "recorded_at")
        ),
    }


# --- Discovery -----------------------------------------------------------------------------------


def app_modules() -> list[ModuleType]:
    """Every installed app's `portability` module, in INSTALLED_APPS order (dependency order:
    each app builds on the ones before it)."""
    found = []
    for config in apps.get_app_configs():
        name = f"{config.name}.portability"
        if importlib.util.find_spec(name):
            found.append(importlib.import_module(name))
    return found


def portables() -> list[Portable]:
    return [p for module in app_modules() for p in module.PORTABLE]


# The History tab's event rows (chronicle/tracking.py) record this deployment's database: ids,
# its users and its requests. The export carries each row's current state; a restored backup,
# not an export, keeps the history.
HISTORY_NOT_EXPORTED = "change history belongs to this deployment's database (backups keep it)"


def not_exported() -> dict[type[models.Model], str]:
    from pghistory.models import Event

    found = {m: why for module in app_modules() for m, why in module.NOT_EXPORTED.items()}
    for model in apps.get_models():
        if issubclass(model, Event) and model not in found:
            found[model] = HISTORY_NOT_EXPORTED
    return found


# --- Rows as data ------------------------------------------------------------------------------


def _user_model() -> Any:
    return get_user_model()


def _is_user(f: models.Field[Any, Any]) -> bool:
    return f.related_model is _user_model()


def _fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    """The columns that travel: every concrete field but the id."""
    return [f for f in model._meta.concrete_fields if not f.primary_key]


def _to_data(value: Any) -> Any:
    """A column's value as JSON data, canonical across databases (UTC times, decimals as
    strings)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Table:
    model: type[models.Model]
    rows: list[Row] = field(default_factory=list)  # {"key": ..., "fields": {...}}

    @property
    def label(self) -> str:
        return self.model._meta.label_lower


@dataclass
class Snapshot:
    """One chronicle's rows as data: what the export writes and the digest hashes."""

    chronicle: Chronicle
    users: list[Row]
    tables: list[Table]

    def lines(self) -> list[str]:
        return sorted(
            f"{t.label}|{r['key']}|{_canonical(r['fields'])}" for t in self.tables for r in t.rows
        )


def snapshot(chronicle: Chronicle) -> Snapshot:
    """Every row of the chronicle, each table in one query (plus one per many-to-many field and
    one for the users)."""
    raw: list[tuple[Portable, list[tuple[Any, ...]], dict[str, dict[int, list[int]]]]] = []
    user_ids: set[int] = set()
    for portable in portables():
        model = portable.model
        qs = portable.rows(chronicle).order_by("pk")
        names = [f.attname for f in _fields(model)]
        rows = list(qs.values_list("pk", *names))
        links: dict[str, dict[int, list[int]]] = {}
        for m2m in model._meta.many_to_many:
            links[m2m.name] = _links(m2m, qs)
        raw.append((portable, rows, links))
        for i, f in enumerate(_fields(model), start=1):
            if _is_user(f):
                user_ids.update(row[i] for row in rows if row[i] is not None)
    User = _user_model()
    users = {
        u.pk: u
        for batch in _batches(sorted(user_ids))
        for u in User.objects.filter(pk__in=batch).only(
            "username", "email", "first_name", "last_name", "is_active", "date_joined"
        )
    }
    keys: dict[type[models.Model], dict[int, str]] = {}
    tables = [_table(p, rows, links, keys, users) for p, rows, links in raw]
    user_rows = [
        {
            "username": u.get_username(),
            "email": getattr(u, "email", ""),
            "first_name": getattr(u, "first_name", ""),
            "last_name": getattr(u, "last_name", ""),
            "is_active": u.is_active,
            "date_joined": _to_data(u.date_joined),
        }
        for u in sorted(users.values(), key=lambda u: u.get_username())
    ]
    return Snapshot(chronicle=chronicle, users=user_rows, tables=tables)


def _links(m2m: models.ManyToManyField[Any, Any], qs: QuerySet[Any]) -> dict[int, list[int]]:
    """A many-to-many field's pairs for the rows of `qs`: row id -> target ids."""
    through: Any = m2m.remote_field.through
    source = m2m.m2m_field_name()
    target = m2m.m2m_reverse_field_name()
    pairs: dict[int, list[int]] = defaultdict(list)
    for a, b in through.objects.filter(**{f"{source}__in": qs.values("pk")}).values_list(
        f"{source}_id", f"{target}_id"
    ):
        pairs[a].append(b)
    return pairs


def _table(
    portable: Portable,
    rows: list[tuple[Any, ...]],
    links: dict[str, dict[int, list[int]]],
    keys: dict[type[models.Model], dict[int, str]],
    users: dict[int, Any],
) -> Table:
    """The rows of one model as data, each with its key. A row that points at a row of its own
    table waits until that row has its key (a reversal after the entry it reverses)."""
    model = portable.model
    fields = _fields(model)
    own = keys.setdefault(model, {})
    table = Table(model)
    seen: dict[str, int] = defaultdict(int)
    pending = rows
    while pending:
        waiting = []
        for row in pending:
            data = _row_data(model, fields, row, links, keys, users)
            if data is None:
                waiting.append(row)
                continue
            digest = hashlib.sha256(_canonical(data).encode()).hexdigest()[:20]
            seen[digest] += 1
            key = digest if seen[digest] == 1 else f"{digest}-{seen[digest] - 1}"
            own[row[0]] = key
            table.rows.append({"key": key, "fields": data})
        if len(waiting) == len(pending):
            raise PortabilityError(
                _("%(model)s rows point at each other in a circle.") % {"model": table.label}
            )
        pending = waiting
    return table


def _row_data(
    model: type[models.Model],
    fields: list[models.Field[Any, Any]],
    row: tuple[Any, ...],
    links: dict[str, dict[int, list[int]]],
    keys: dict[type[models.Model], dict[int, str]],
    users: dict[int, Any],
) -> Row | None:
    """One row's fields with references as keys; None if it points at a row of its own table
    that has no key yet."""
    data: Row = {}
    for f, value in zip(fields, row[1:], strict=True):
        if not f.is_relation or value is None:
            data[f.name] = _to_data(value)
        elif _is_user(f):
            data[f.name] = users[value].get_username()
        else:
            related: Any = f.related_model
            target = keys.get(related, {})
            if value not in target:
                if related is model:
                    return None
                raise PortabilityError(
                    _("A %(model)s row points at a %(target)s outside the chronicle.")
                    % {"model": model._meta.label_lower, "target": related._meta.label_lower}
                )
            data[f.name] = target[value]
    for m2m in model._meta.many_to_many:
        target = keys[m2m.related_model]  # type: ignore[index]
        data[m2m.name] = sorted(target[pk] for pk in links[m2m.name].get(row[0], []))
    return data


# --- Digest and export -------------------------------------------------------------------------


def dump(chronicle: Chronicle) -> list[str]:
    """The canonical lines the digest hashes, one per row, sorted: for reading a difference."""
    return snapshot(chronicle).lines()


def digest(chronicle: Chronicle) -> str:
    return hashlib.sha256("\n".join(dump(chronicle)).encode()).hexdigest()


def export_data(chronicle: Chronicle, *, now: dt.datetime | None = None) -> dict[str, Any]:
    snap = snapshot(chronicle)
    return {
        "format": FORMAT,
        "version": VERSION,
        "chronicle": chronicle.slug,
        "exported_at": (now or timezone.now()).astimezone(dt.UTC).isoformat(),
        # Per table, the highest id the source database handed out: the import keeps every id
        # up to it unused (see the module's docstring).
        "max_ids": {
            m._meta.label_lower: n
            for m, n in _ids_handed_out([*(t.model for t in snap.tables), _user_model()]).items()
        },
        "users": snap.users,
        "tables": [{"model": t.label, "rows": t.rows} for t in snap.tables],
    }


def export_to_file(chronicle: Chronicle, path: Path) -> None:
    """Write the export next to `path` first, then move it there: a reader never sees half."""
    data = export_data(chronicle)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as out:
        json.dump(data, out, ensure_ascii=False)
    os.replace(partial, path)


# --- Import --------------------------------------------------------------------------------------


@dataclass
class ImportReport:
    chronicle: Chronicle
    rows: int
    users_created: list[str]


def read_export(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as source:
            data = json.load(source)
    except OSError as exc:
        raise PortabilityError(
            _("Cannot read %(path)s: %(error)s") % {"path": path, "error": exc.strerror}
        ) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PortabilityError(_("%(path)s is not a JSON file.") % {"path": path}) from exc
    return data  # import_data checks it


def _checked(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PortabilityError(_("This is not a chronicle export."))
    if data.get("version") != VERSION:
        raise PortabilityError(
            _("This export has version %(found)r; this program reads version %(version)d only.")
            % {"found": data.get("version"), "version": VERSION}
        )
    tables = data.get("tables")
    users = data.get("users", [])
    if not (
        isinstance(tables, list)
        and all(isinstance(t, dict) and isinstance(t.get("rows"), list) for t in tables)
        and isinstance(users, list)
        and all(isinstance(u, dict) for u in users)
        and isinstance(data.get("chronicle"), str)
        and _max_ids_valid(data.get("max_ids", {}))
    ):
        raise PortabilityError(_("The export is damaged or incomplete."))
    known = {p.model._meta.label_lower for p in portables()}
    unknown = sorted({t.get("model") for t in tables} - known, key=str)
    if unknown:
        raise PortabilityError(
            _("The export holds tables this program does not know: %(tables)s.")
            % {"tables": ", ".join(map(str, unknown))}
        )
    roots = [r for t in tables if t.get("model") == "chronicle.chronicle" for r in t["rows"]]
    if [r.get("fields", {}).get("slug") if isinstance(r, dict) else r for r in roots] != [
        data["chronicle"]
    ]:
        raise PortabilityError(_("The export must hold exactly the one chronicle it names."))
    return data


def import_data(data: Any) -> ImportReport:
    """Load an export into this database, which must not hold the chronicle yet. One
    transaction: on any refusal nothing is written."""
    try:
        data = _checked(data)
        slug = data["chronicle"]
        with transaction.atomic():
            if Chronicle.objects.filter(slug=slug).exists():
                raise PortabilityError(
                    _("A chronicle with the slug %(slug)r already exists in this database.")
                    % {"slug": slug}
                )
            tables = {t["model"]: t["rows"] for t in data["tables"]}
            _refuse_taken_unique_values(tables)
            _advance_ids(_id_floors(data))
            users, created = _users(data.get("users", []))
            new_pks: dict[type[models.Model], dict[str, int]] = {}
            count = 0
            for portable in portables():
                rows = tables.get(portable.model._meta.label_lower, [])
                _insert(portable.model, rows, new_pks, users)
                count += len(rows)
            chronicle = Chronicle.objects.get(slug=slug)
    except DatabaseError as exc:
        raise PortabilityError(
            _("The export does not fit this database: %(error)s") % {"error": exc}
        ) from exc
    except (KeyError, TypeError, ValueError, AttributeError, ValidationError) as exc:
        raise PortabilityError(
            _("The export is damaged or incomplete: %(error)r") % {"error": exc}
        ) from exc
    return ImportReport(chronicle=chronicle, rows=count, users_created=created)


# --- Ids the source handed out: kept unused in the target ----------------------------------------

# The largest number the fallback takes for an id: anything larger is not a chronicle's id (a
# year-long sequence of a busy database stays far below), and would only waste the sequence.
_MOST_LIKELY_ID = 2**31 - 1
_ID_IN_TEXT = re.compile(r"(?:^|:)(\d{1,10})(?=:|$)")


def _max_ids_valid(max_ids: Any) -> bool:
    return isinstance(max_ids, dict) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in max_ids.items()
    )


def _id_floors(data: dict[str, Any]) -> dict[type[models.Model], int]:
    """Per table the import writes (and the users), the id every row made from now on must be
    above: the export's `max_ids`, or for an export written before them the largest number in
    it that reads like an id."""
    targets = [p.model for p in portables()] + [_user_model()]
    if "max_ids" in data:
        max_ids: dict[str, int] = data["max_ids"]
        return {m: max_ids.get(m._meta.label_lower, 0) for m in targets}
    named = _largest_id_named(data)
    return dict.fromkeys(targets, named)


def _largest_id_named(data: Any) -> int:
    """The largest integer in the export, or colon-separated part of a text (`purchase:12`,
    `cycle:3:awards:base:41`), up to _MOST_LIKELY_ID: cruder than `max_ids` (it cannot tell
    which table an id belongs to, so every table gets the largest), but never too low."""
    largest = 0
    pending = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str):
            for match in _ID_IN_TEXT.finditer(value):
                number = int(match.group(1))
                if number <= _MOST_LIKELY_ID:
                    largest = max(largest, number)
        elif isinstance(value, int) and not isinstance(value, bool) and value <= _MOST_LIKELY_ID:
            largest = max(largest, value)
    return largest


def _auto_ids(models_: Sequence[type[models.Model]]) -> list[type[models.Model]]:
    """The models whose ids the database hands out (not a one-to-one or a chosen primary key)."""
    return [m for m in models_ if isinstance(m._meta.pk, models.AutoField)]


def _ids_handed_out(models_: Sequence[type[models.Model]]) -> dict[type[models.Model], int]:
    """Per table, the highest id this database has handed out, in one statement: its largest
    id, or its sequence's last value when the last rows were deleted since (their ids may still
    be named in text). Vendor-specific: PostgreSQL keeps the value in the column's sequence
    (also for Django's identity columns), SQLite in `sqlite_sequence` (Django's tables are
    AUTOINCREMENT); elsewhere only the largest id is known."""
    found = _auto_ids(models_)
    if not found:
        return {}
    quote = connection.ops.quote_name
    parts: list[str] = []
    params: list[Any] = []
    for model in found:
        table, column = model._meta.db_table, model._meta.pk.column
        largest = f"(SELECT COALESCE(MAX({quote(column)}), 0) FROM {quote(table)})"
        if connection.vendor == "postgresql":
            parts.append(
                f"GREATEST({largest}, COALESCE(pg_sequence_last_value("
                "pg_get_serial_sequence(%s, %s)::regclass), 0))"
            )
            params += [quote(table), column]
        elif connection.vendor == "sqlite":
            sequence = "(SELECT MAX(seq) FROM sqlite_sequence WHERE name = %s)"
            parts.append(f"MAX({largest}, COALESCE({sequence}, 0))")
            params.append(table)
        else:
            parts.append(largest)
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts), params)
        row = cursor.fetchone()
    return {model: int(value) for model, value in zip(found, row, strict=True)}


def _advance_ids(floors: dict[type[models.Model], int]) -> None:
    """Move each table's id sequence so that the next id is above both `floors[model]` (the
    source's highest id) and the target's own highest id; never backwards.

    Why here, vendor by vendor: ids of the source live on in text (ledger keys such as
    `purchase:12`), and a row made here later under one of those ids would collide with them.
    Django has no API for a sequence, so this is the one vendor-specific step of the import.
    PostgreSQL: `setval` on the column's sequence (`pg_get_serial_sequence` also finds the
    sequence of an identity column, which Django 5 creates); `nextval` inside the GREATEST
    keeps the sequence from going back; `setval` is not undone by a rollback (a refused import
    leaves a gap in the ids, which is harmless). SQLite: an AUTOINCREMENT table's next id is
    one above both its largest id and its row in `sqlite_sequence` (missing until the first
    insert), so that row is raised. Another database is refused rather than left to reuse ids."""
    wanted = [(m, n) for m in _auto_ids(list(floors)) if (n := floors[m]) > 0]
    if not wanted:
        return
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            parts: list[str] = []
            params: list[Any] = []
            for model, floor in wanted:
                table, column = model._meta.db_table, model._meta.pk.column
                parts.append(
                    "setval(pg_get_serial_sequence(%s, %s), GREATEST(%s, "
                    f"(SELECT COALESCE(MAX({quote(column)}), 0) FROM {quote(table)}), "
                    "nextval(pg_get_serial_sequence(%s, %s))), true)"
                )
                params += [quote(table), column, floor, quote(table), column]
            cursor.execute("SELECT " + ", ".join(parts), params)
        elif connection.vendor == "sqlite":
            names = [(model._meta.db_table, floor) for model, floor in wanted]
            cursor.executemany(
                "INSERT INTO sqlite_sequence (name, seq) SELECT %s, 0 WHERE NOT EXISTS "
                "(SELECT 1 FROM sqlite_sequence WHERE name = %s)",
                [(name, name) for name, _floor in names],
            )
            cursor.executemany(
                "UPDATE sqlite_sequence SET seq = MAX(seq, %s) WHERE name = %s",
                [(floor, name) for name, floor in names],
            )
        else:
            raise PortabilityError(
                _("Importing a chronicle needs PostgreSQL or SQLite (not %(vendor)s).")
                % {"vendor": connection.vendor}
            )


def _taken(model: type[models.Model], name: str, values: list[Any]) -> list[Any]:
    """A few of `values` that rows of `model` already hold in column `name`."""
    for batch in _batches(values):
        found = model._default_manager.filter(**{f"{name}__in": batch})
        taken = list(found.values_list(name, flat=True)[:3])
        if taken:
            return taken
    return []


def _refuse_taken_unique_values(tables: dict[str, list[Row]]) -> None:
    """Columns unique across the whole database (a notification's key, a search's party code)
    must not be taken by another chronicle: say which, before writing anything."""
    for portable in portables():
        model = portable.model
        rows = tables.get(model._meta.label_lower, [])
        for f in _fields(model):
            if not f.unique or f.is_relation or not rows:
                continue
            values = [r["fields"][f.name] for r in rows if r["fields"].get(f.name) is not None]
            taken = _taken(model, f.name, values)
            if taken:
                raise PortabilityError(
                    _("This database already holds a %(model)s with %(field)s %(values)s.")
                    % {
                        "model": model._meta.verbose_name,
                        "field": f.name,
                        "values": ", ".join(repr(v) for v in taken),
                    }
                )


def _users(rows: list[Row]) -> tuple[dict[str, int], list[str]]:
    """Username -> id. Existing users are reused as they are; missing ones are created without
    a usable password (they set one through the password reset)."""
    User = _user_model()
    name_field = User.USERNAME_FIELD
    names = [r["username"] for r in rows]
    existing: dict[str, int] = {}
    for batch in _batches(names):
        existing.update(
            User._default_manager.filter(**{f"{name_field}__in": batch}).values_list(
                name_field, "pk"
            )
        )
    missing = [r for r in rows if r["username"] not in existing]
    date_joined = User._meta.get_field("date_joined")
    created = User._default_manager.bulk_create(
        [
            User(
                **{name_field: r["username"]},
                email=r.get("email", ""),
                first_name=r.get("first_name", ""),
                last_name=r.get("last_name", ""),
                is_active=r.get("is_active", True),
                date_joined=date_joined.to_python(r.get("date_joined")) or timezone.now(),
                password=make_password(None),
            )
            for r in missing
        ],
        batch_size=BATCH_SIZE,
    )
    existing.update({u.get_username(): u.pk for u in created})
    return existing, [u.get_username() for u in created]


def _layers(model: type[models.Model], rows: list[Row]) -> list[list[Row]]:
    """Rows that point at rows of their own table come after those rows."""
    own = [f.name for f in _fields(model) if f.related_model is model]
    if not own:
        return [rows]
    placed: set[str] = set()
    layers: list[list[Row]] = []
    pending = rows
    while pending:
        layer = [r for r in pending if all(r["fields"][n] in placed | {None} for n in own)]
        if not layer:
            raise PortabilityError(
                _("%(model)s rows point at rows missing from the export.")
                % {"model": model._meta.label_lower}
            )
        placed.update(r["key"] for r in layer)
        layers.append(layer)
        pending = [r for r in pending if r["key"] not in placed]
    return layers


def _batches(items: Sequence[T]) -> Iterator[Sequence[T]]:
    """BATCH_SIZE at a time: an INSERT, or the values of an `IN (...)` (SQLite binds a limited
    number of values per statement)."""
    for start in range(0, len(items), BATCH_SIZE):
        yield items[start : start + BATCH_SIZE]


def _insert(
    model: type[models.Model],
    rows: list[Row],
    new_pks: dict[type[models.Model], dict[str, int]],
    users: dict[str, int],
) -> None:
    """Insert one table: per batch, one INSERT, one UPDATE if the model has `auto_now` fields
    (bulk_create stamps them with the current time), and one INSERT per many-to-many field."""
    fields = _fields(model)
    stamped = [
        f for f in fields if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
    ]
    own = new_pks.setdefault(model, {})
    for layer in _layers(model, rows):
        for batch in _batches(layer):
            objs = [model(**_python_values(model, fields, r, new_pks, users)) for r in batch]
            model._default_manager.bulk_create(objs)
            for r, obj in zip(batch, objs, strict=True):
                own[r["key"]] = obj.pk
            if stamped:
                for r, obj in zip(batch, objs, strict=True):
                    for f in stamped:
                        setattr(obj, f.attname, f.to_python(r["fields"][f.name]))
                model._default_manager.bulk_update(objs, [f.name for f in stamped])
            for m2m in model._meta.many_to_many:
                _insert_links(m2m, batch, objs, new_pks)


def _python_values(
    model: type[models.Model],
    fields: list[models.Field[Any, Any]],
    row: Row,
    new_pks: dict[type[models.Model], dict[str, int]],
    users: dict[str, int],
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    data = row["fields"]
    for f in fields:
        value = data.get(f.name)
        if value is None:
            values[f.attname] = None if f.null or f.is_relation else f.get_default()
        elif _is_user(f):
            values[f.attname] = users[value]
        elif f.is_relation:
            values[f.attname] = new_pks[f.related_model][value]  # type: ignore[index]
        else:
            values[f.attname] = f.to_python(value)
    return values


def _insert_links(
    m2m: models.ManyToManyField[Any, Any],
    batch: Sequence[Row],
    objs: list[models.Model],
    new_pks: dict[type[models.Model], dict[str, int]],
) -> None:
    through: Any = m2m.remote_field.through
    source = f"{m2m.m2m_field_name()}_id"
    target = f"{m2m.m2m_reverse_field_name()}_id"
    targets = new_pks[m2m.related_model]  # type: ignore[index]
    through._default_manager.bulk_create(
        [
            through(**{source: obj.pk, target: targets[key]})
            for r, obj in zip(batch, objs, strict=True)
            for key in r["fields"].get(m2m.name, [])
        ]
    )


# --- A player's own data -----------------------------------------------------------------------


def account_data(user: Any) -> dict[str, Any]:
    """Everything of the user's own, across their chronicles: what each app's `own_data` gives
    (their rows only, and results once released)."""
    modules = app_modules()
    chronicles = []
    for membership in Membership.objects.filter(user=user).select_related("chronicle"):
        chronicle = membership.chronicle
        entry: dict[str, Any] = {"slug": chronicle.slug, "name": chronicle.name}
        for module in modules:
            entry.update(module.own_data(user, chronicle))
        chronicles.append(entry)
    profile = Profile.objects.filter(user=user).values("language", "birth_date").first()
    return {
        "format": OWN_DATA_FORMAT,
        "version": VERSION,
        "exported_at": timezone.now().isoformat(),
        "user": {
            "username": user.get_username(),
            "email": getattr(user, "email", ""),
            "first_name": getattr(user, "first_name", ""),
            "last_name": getattr(user, "last_name", ""),
            "date_joined": getattr(user, "date_joined", None),
            "language": profile["language"] if profile else "",
            # GEN-01: the person's own date of birth (no one else's export carries it).
            "birth_date": profile["birth_date"] if profile else None,
            "mail_choices": list(
                MailPreference.objects.filter(user=user).order_by("kind").values("kind", "choice")
            ),
        },
        "chronicles": chronicles,
        # Notices of no chronicle, or of one the person has left, stay theirs too.
        "messages": list(
            Message.objects.filter(recipient=user)
            .exclude(chronicle__memberships__user=user)
            .order_by("created_at", "pk")
            .values(*MESSAGE_FIELDS)
        ),
    }


def account_data_json(user: Any) -> str:
    return json.dumps(account_data(user), cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)
