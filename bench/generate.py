"""The benchmark's data: a deterministic, seeded generator written straight into PostgreSQL
with bulk inserts (no per-row services), and template databases built once per size.

Each chronicle gets 5 storytellers and `n` players with one approved active PC each (clans,
disciplines, influences, some havens), one past game with its sign-in sheet (attendance,
waivers), the game's cycle OPEN with submissions (half of the players submitted with a few
influence actions, some drafts), 3 ballots per submitter, report picks, purchases signed off
and waiting, torpor holds, queued diablerie steps, and ledger history: the same kinds of rows
as tests/pipeline/demo_month.py builds through the services, so every pipeline step has work.

    build([300], desk_items=1000)        # on the database Django is connected to
    template_database("M")               # -> "chronicle_bench_m", built once, kept
    copy_database("chronicle_bench_m", "chronicle_bench_run")

`python -m bench.generate build <SIZE>` builds a size on DATABASE_URL and prints the Dataset
as JSON (template_database runs it in a child process pointed at the template).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import subprocess
import sys
import zoneinfo
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/chronicle_bench"
PASSWORD = "bench-password-2026"

SIZES: dict[str, list[int]] = {
    "S": [50],
    "M": [300],
    "L": [500] * 20,
    "XL": [30000],
    "P1K": [1000],
    "P10K": [10000],
}
# The storytellers' desk of the first chronicle (the desk benchmark's 1,000 items at M).
DESK_ITEMS: dict[str, int] = {"M": 1000}
STORYTELLERS = 5
BATCH = 2000

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
GAME_DAY = dt.date(2024, 3, 9)
BEFORE_GAME = dt.datetime(2024, 2, 20, 20, 0, tzinfo=NEW_YORK)
DURING = dt.datetime(2024, 3, 15, 12, 0, tzinfo=NEW_YORK)
DEADLINE = dt.datetime(2024, 3, 19, 23, 59, tzinfo=NEW_YORK)
AFTER_DEADLINE = dt.datetime(2024, 3, 20, 0, 59, tzinfo=NEW_YORK)

FIRST = ["Ada", "Bram", "Cleo", "Dario", "Elena", "Fynn", "Greta", "Hugo", "Iris", "Jonas"]
LAST = ["Ashford", "Blackwood", "Crane", "Drake", "Everett", "Frost", "Grey", "Hale", "Ivers"]
ACTIONS = ["investigate", "acquire", "other", "attack_influence", "leave_city"]


@dataclass
class ChronicleData:
    slug: str
    cycle_id: int
    storytellers: list[str]
    players: list[str]


@dataclass
class Dataset:
    database: str
    chronicles: list[ChronicleData] = field(default_factory=list)
    password: str = PASSWORD

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Dataset:
        data = json.loads(text)
        return cls(
            database=data["database"],
            chronicles=[ChronicleData(**c) for c in data["chronicles"]],
            password=data.get("password", PASSWORD),
        )


# --- Building rows (needs Django set up) -------------------------------------------------------


def _bulk(model: Any, rows: list[Any]) -> list[Any]:
    # PostgreSQL returns the new ids from a bulk insert; later rows point at them.
    return list(model.objects.bulk_create(rows, batch_size=BATCH))


def build(chronicles: list[int], *, seed: int = 2026, desk_items: int = 0) -> Dataset:
    """Write `len(chronicles)` chronicles with `chronicles[i]` players each into the database
    Django is connected to; the same seed writes the same rows (up to ids)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import connection, transaction

    rng = random.Random(seed)
    # One hash for every account: hashing 30,000 passwords one by one takes minutes. The salt
    # is as long as Django's own (128 bits of its alphabet, 22+ characters): a shorter one
    # makes every first sign-in re-hash the password and write the user row.
    salt = hashlib.sha256(f"chronicle-bench-{seed}".encode()).hexdigest()[:24]
    password = make_password(PASSWORD, salt=salt)
    user_model = get_user_model()
    dataset = Dataset(database=settings.DATABASES["default"]["NAME"])
    with transaction.atomic():
        for index, players in enumerate(chronicles):
            dataset.chronicles.append(
                _chronicle(
                    index,
                    players,
                    rng,
                    password,
                    user_model,
                    desk_items=desk_items if index == 0 else 0,
                )
            )
    with connection.cursor() as cursor:
        # Fresh statistics, so the first query plans of a run are those of a settled database.
        cursor.execute("ANALYZE")
    return dataset


def _chronicle(
    index: int, n: int, rng: random.Random, password: str, user_model: Any, *, desk_items: int
) -> ChronicleData:
    from characters import rules as character_rules
    from characters.models import (
        Acquired,
        Approval,
        Character,
        Diablerie,
        DisciplineLevel,
        GenerationStep,
        InfluenceSpend,
        PurchaseStatus,
        Status,
        TorporHold,
        XpEntry,
        XpKind,
        XpPurchase,
    )
    from chronicle.models import Attendance, Chronicle, Cycle, Game, Membership, Role
    from downtimes.models import (
        DeskItem,
        DeskStatus,
        ItemKind,
        ReportPick,
        Submission,
        SubmissionStatus,
        Vote,
    )
    from havens.models import Ownership, OwnershipHow, Structure, StructureKind, StructureStatus

    tag = f"c{index:02d}"
    chronicle = Chronicle.objects.create(
        name=f"Bench chronicle {index + 1}", slug=f"bench-{index + 1:02d}", timezone=NEW_YORK.key
    )
    st_names = [f"{tag}st{k}" for k in range(STORYTELLERS)]
    player_names = [f"{tag}p{i:05d}" for i in range(n)]
    users = _bulk(
        user_model,
        [
            user_model(
                username=name,
                email=f"{name}@bench.example",
                password=password,
                first_name=name,
                date_joined=BEFORE_GAME,
            )
            for name in st_names + player_names
        ],
    )
    sts, players = users[:STORYTELLERS], users[STORYTELLERS:]
    st = sts[0]
    _bulk(
        Membership,
        [Membership(user=u, chronicle=chronicle, role=Role.STORYTELLER) for u in sts]
        + [Membership(user=u, chronicle=chronicle, role=Role.PLAYER) for u in players],
    )
    game = Game.objects.create(chronicle=chronicle, number=1, date=GAME_DAY, place="Elysium")
    cycle = Cycle.objects.create(chronicle=chronicle, game=game, deadline_at=DEADLINE)

    clans = sorted(character_rules.CLANS)
    influences = list(character_rules.INFLUENCE_TYPES)
    characters = []
    for i, user in enumerate(players):
        clan = clans[i % len(clans)]
        ratings = {name: rng.choice([0, 0, 1, 1, 2, 3]) for name in influences}
        if i % 3 == 0:
            ratings["herd"] = max(ratings["herd"], 1)
        characters.append(
            Character(
                chronicle=chronicle,
                player=user,
                name=f"{rng.choice(FIRST)} {rng.choice(LAST)} {index + 1}-{i}",
                clan=clan,
                physical=rng.randint(3, 7),
                social=rng.randint(3, 7),
                mental=rng.randint(3, 7),
                willpower=rng.randint(1, 4),
                abilities={"investigation": rng.randint(0, 2), "occult": rng.randint(0, 1)},
                approval=Approval.APPROVED,
                approved_by=st,
                approved_at=BEFORE_GAME,
                background_questionnaire="Who sired you? A stranger in the rain.",
                background_approved_at=BEFORE_GAME,
                **ratings,
            )
        )
    characters = _bulk(Character, characters)

    levels = []
    for character in characters:
        in_clan = sorted(character_rules.CLANS[character.clan].in_clan)
        for discipline in in_clan[:2]:
            levels.append(
                DisciplineLevel(
                    character=character,
                    discipline=discipline,
                    level=1,
                    acquired=Acquired.CREATION,
                    free=True,
                )
            )
    _bulk(DisciplineLevel, levels)

    havens = _bulk(
        Structure,
        [
            Structure(
                chronicle=chronicle,
                kind=StructureKind.OUTER,
                name=f"Haven of {c.name}",
                location=f"Block {i}",
                status=StructureStatus.STANDING,
                designed_by=c,
                created_at=BEFORE_GAME,
            )
            for i, c in enumerate(characters)
            if i % 5 == 0
        ],
    )
    _bulk(
        Ownership,
        [
            Ownership(
                structure=h,
                character=h.designed_by,
                how=OwnershipHow.BUILT,
                started_at=BEFORE_GAME,
            )
            for h in havens
        ],
    )

    # The sign-in sheet: most came, most of them signed the waiver.
    _bulk(
        Attendance,
        [
            Attendance(
                game=game,
                player=c.player,
                character=c,
                waiver_signed=rng.random() < 0.85,
                recorded_by=st,
                recorded_at=DURING,
            )
            for c in characters
            if rng.random() < 0.9
        ],
    )

    # Ledger history: an opening balance and an award of an earlier game for every player.
    _bulk(
        XpEntry,
        [
            XpEntry(
                chronicle=chronicle,
                player=c.player,
                character=c,
                amount=Decimal(rng.randint(5, 30)),
                kind=kind,
                reason=reason,
                key=key,
                actor=st,
                created_at=BEFORE_GAME,
            )
            for c in characters
            for kind, reason, key in (
                (XpKind.OPENING, "XP carried over from the paper records", "bench:opening"),
                (XpKind.AWARD, "Attendance at an earlier game", "bench:earlier-game"),
            )
        ],
    )

    # Half of the players submitted; one in ten left a draft.
    submitters = [c for i, c in enumerate(characters) if i % 2 == 0]
    drafters = [c for i, c in enumerate(characters) if i % 10 == 1]
    submissions = _bulk(
        Submission,
        [
            Submission(
                cycle=cycle,
                character=c,
                player=c.player,
                status=SubmissionStatus.SUBMITTED,
                game_report=(
                    f"{c.name} kept to the shadows of Elysium." if rng.random() < 0.25 else ""
                ),
                created_at=DURING,
                updated_at=DURING,
                submitted_at=DURING,
                receipt_sent_at=DURING,
            )
            for c in submitters
        ]
        + [
            Submission(
                cycle=cycle,
                character=c,
                player=c.player,
                created_at=DURING,
                updated_at=DURING,
            )
            for c in drafters
        ],
    )
    submitted = submissions[: len(submitters)]

    # Influence actions: a few per submitter (or `desk_items` spread over them), each with its
    # spend, as influence_action_add files them.
    plan: list[tuple[Submission, str, str, int]] = []
    if desk_items:
        for k in range(desk_items):
            sub = submitted[k % len(submitted)]
            plan.append((sub, *_action(sub.character, rng)))
    else:
        for sub in submitted:
            for _k in range(rng.randint(1, 3)):
                plan.append((sub, *_action(sub.character, rng)))
    statuses = [DeskStatus.NEW] * 6 + [DeskStatus.IN_PROGRESS, DeskStatus.RESOLVED]
    items, spends = [], []
    for k, (sub, influence, action, points) in enumerate(plan):
        character = sub.character
        key = f"{cycle.pk}:influence:bench-{k}"
        status = rng.choice(statuses)
        target = characters[rng.randrange(len(characters))]
        spends.append(
            InfluenceSpend(
                character=character,
                cycle=cycle,
                influence=influence,
                points=points,
                reason=f"Downtime: {action}",
                key=f"downtime:{key}",
                actor=character.player,
                created_at=DURING,
            )
        )
        items.append(
            DeskItem(
                cycle=cycle,
                kind=ItemKind.INFLUENCE,
                character=character,
                submission=sub,
                influence=influence,
                points=points,
                action=action,
                target_name=target.name if action in ("investigate", "attack_influence") else "",
                description=f"{action} with {points} {influence}",
                created_at=DURING,
                updated_at=DURING,
                key=key,
                status=status,
                assignee=sts[k % STORYTELLERS] if status != DeskStatus.NEW else None,
                result="Done as asked." if status == DeskStatus.RESOLVED else "",
            )
        )
    spends = _bulk(InfluenceSpend, spends)
    for item, spend in zip(items, spends, strict=True):
        item.spend = spend
    _bulk(DeskItem, items)

    # 3 ballots per submitter: two in character, one out of character; a few favourites draw
    # most of them, so the tally has winners and ties to break.
    favourites = characters[: max(3, n // 50)]
    votes = []
    for sub in submitted:
        others = [c for c in rng.sample(favourites, min(3, len(favourites))) if c != sub.character]
        if len(others) < 2:
            others = others + [c for c in characters[-3:] if c != sub.character]
        votes.append(Vote(submission=sub, category="feared", nominee_character=others[0]))
        votes.append(Vote(submission=sub, category="liked", nominee_character=others[1]))
        votes.append(Vote(submission=sub, category="roleplaying", nominee_player=others[0].player))
    _bulk(Vote, votes)

    reporters = [sub for sub in submitted if sub.game_report][:4]
    _bulk(
        ReportPick,
        [
            ReportPick(submission=sub, cycle=cycle, picked_by=st, picked_at=DURING)
            for sub in reporters
        ],
    )

    # Purchases: one submitter in five has a trait signed off (charged in the ledger at
    # sign-off), one in seven a trait still waiting (a desk item, as purchase_add files it).
    signed = [sub for k, sub in enumerate(submitted) if k % 5 == 0]
    waiting = [sub for k, sub in enumerate(submitted) if k % 7 == 3]
    purchases = _bulk(
        XpPurchase,
        [
            XpPurchase(
                character=sub.character,
                kind="trait",
                target="mental",
                cycle=cycle,
                cost=Decimal(sub.character.mental + 1),
                status=PurchaseStatus.APPROVED,
                requested_by=sub.player,
                requested_at=DURING,
                decided_by=st,
                decided_at=DURING,
            )
            for sub in signed
        ]
        + [
            XpPurchase(
                character=sub.character,
                kind="trait",
                target="social",
                cycle=cycle,
                cost=Decimal(sub.character.social + 1),
                requested_by=sub.player,
                requested_at=DURING,
            )
            for sub in waiting
        ],
    )
    approved = purchases[: len(signed)]
    entries = _bulk(
        XpEntry,
        [
            XpEntry(
                chronicle=chronicle,
                player=p.character.player,
                character=p.character,
                amount=-p.cost,
                kind=XpKind.PURCHASE,
                reason=f"Trait {p.target}",
                cycle=cycle,
                key=f"purchase:{p.pk}",
                actor=st,
                created_at=DURING,
            )
            for p in approved
        ],
    )
    for p, entry in zip(approved, entries, strict=True):
        p.ledger_entry = entry
    XpPurchase.objects.bulk_update(approved, ["ledger_entry"], batch_size=BATCH)
    _bulk(
        DeskItem,
        [
            DeskItem(
                cycle=cycle,
                kind=ItemKind.PURCHASE,
                character=p.character,
                submission=sub,
                purchase=p,
                description=f"Trait {p.target}",
                created_at=DURING,
                updated_at=DURING,
                key=f"purchase:{p.pk}",
            )
            for sub, p in zip(signed + waiting, purchases, strict=True)
        ],
    )

    # Torpor holds (TOR-01) and queued generation steps (XP-05): one per 200 players.
    few = max(1, n // 200)
    captives = characters[1 : 1 + 2 * few : 2]
    Character.objects.filter(pk__in=[c.pk for c in captives]).update(status=Status.TORPOR)
    _bulk(
        TorporHold,
        [
            TorporHold(
                holder=characters[(k + 1) * 2 % n],
                captive=c,
                cycle=cycle,
                recorded_by=st,
                recorded_at=DURING,
            )
            for k, c in enumerate(captives)
            if characters[(k + 1) * 2 % n] != c
        ],
    )
    _bulk(
        Diablerie,
        [
            Diablerie(
                diablerist=c,
                victim_name=f"Elder {k}",
                victim_generation=c.generation - 2,
                occurred_on=GAME_DAY,
                black_veins_until=GAME_DAY + dt.timedelta(days=90),
                generation_step=GenerationStep.QUEUED,
                recorded_by=st,
                recorded_at=DURING,
            )
            for k, c in enumerate(characters[2 : 2 + 3 * few : 3])
        ],
    )
    return ChronicleData(
        slug=chronicle.slug,
        cycle_id=cycle.pk,
        storytellers=st_names,
        players=player_names,
    )


def _action(character: Any, rng: random.Random) -> tuple[str, str, int]:
    """An influence action the character can pay for (INF-02): Herd blood from Herd, the rest
    from any type it has (Acquire not from Herd)."""
    if character.herd and rng.random() < 0.4:
        return "herd", "herd", rng.randint(1, character.herd)
    owned = [
        name
        for name in ("business", "government", "occult", "underworld")
        if getattr(character, name)
    ]
    if not owned:
        return "herd" if character.herd else "business", "other", 1
    influence = rng.choice(owned)
    return influence, rng.choice(ACTIONS), rng.randint(1, getattr(character, influence))


def digest() -> str:
    """A digest of the generated rows by name (not by id), for the determinism check."""
    from characters.models import Character, InfluenceSpend, XpEntry, XpPurchase
    from chronicle.models import Attendance, Membership
    from downtimes.models import DeskItem, Submission, Vote

    def strip(key: str) -> str:
        # Keys are scoped to the cycle's id.
        return key.split(":", 1)[1] if key.split(":", 1)[0].isdigit() else key

    rows: list[Any] = [
        sorted(Membership.objects.values_list("user__username", "chronicle__slug", "role")),
        sorted(
            Character.objects.values_list(
                "player__username", "name", "clan", "status", "business", "herd", "occult"
            )
        ),
        sorted(Attendance.objects.values_list("player__username", "waiver_signed")),
        sorted(Submission.objects.values_list("player__username", "status", "game_report")),
        sorted(
            (strip(k), u, a, i, p, s)
            for k, u, a, i, p, s in DeskItem.objects.values_list(
                "key", "character__player__username", "action", "influence", "points", "status"
            )
            if not k.startswith("purchase:")
        ),
        sorted(
            Vote.objects.values_list(
                "submission__player__username",
                "category",
                "nominee_character__name",
                "nominee_player__username",
            ),
            key=str,
        ),
        sorted(
            (u, str(a), k if not k.startswith("purchase:") else "purchase")
            for u, a, k in XpEntry.objects.values_list("player__username", "amount", "key")
        ),
        sorted(
            (u, t, str(c), s)
            for u, t, c, s in XpPurchase.objects.values_list(
                "character__player__username", "target", "cost", "status"
            )
        ),
        sorted(
            (u, i, p)
            for u, i, p in InfluenceSpend.objects.values_list(
                "character__player__username", "influence", "points"
            )
        ),
    ]
    return hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest()


# --- Template databases (no Django needed) -----------------------------------------------------


def database_url(name: str, base: str | None = None) -> str:
    """DATABASE_URL (or the default) pointing at database `name`."""
    parts = urlsplit(base or os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _admin() -> Any:
    import psycopg

    parts = urlsplit(database_url("postgres"))
    return psycopg.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 5432,
        user=parts.username or "postgres",
        password=parts.password,
        dbname="postgres",
        autocommit=True,
    )


def generator_version() -> str:
    """This file and every migration: a changed generator or schema rebuilds the templates."""
    digest_ = hashlib.sha256(Path(__file__).read_bytes())
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest_.update(path.relative_to(ROOT).as_posix().encode())
        digest_.update(path.read_bytes())
    return digest_.hexdigest()[:16]


def database_exists(name: str) -> bool:
    with _admin() as conn:
        return bool(conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone())


def drop_database(name: str) -> None:
    """Only the benchmark's own databases."""
    assert name.startswith("chronicle_bench"), name
    with _admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def copy_database(template: str, name: str) -> str:
    """A fresh copy of `template` named `name` (replacing one left by an earlier run)."""
    drop_database(name)
    with _admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return name


def _marker(name: str) -> tuple[str, str] | None:
    import psycopg

    try:
        with psycopg.connect(database_url(name).replace("postgres://", "postgresql://", 1)) as conn:
            row = conn.execute("SELECT version, dataset FROM bench_marker").fetchone()
    except psycopg.Error:
        return None
    return (row[0], row[1]) if row else None


def child_env(database: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url(database),
        DJANGO_SETTINGS_MODULE="chronicle.settings",
        DEBUG=env.get("DEBUG", "1"),
        # Receipts and notices are not the benchmark's business.
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def template_database(size: str, *, seed: int = 2026) -> str:
    """The database `chronicle_bench_<size>` holding `size` built once (kept; rebuilt when
    the generator or the migrations change)."""
    name = f"chronicle_bench_{size.lower()}"
    version = f"{generator_version()}:{seed}"
    marker = _marker(name) if database_exists(name) else None
    if marker and marker[0] == version:
        return name
    drop_database(name)
    with _admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    env = child_env(name, CELERY_BROKER_URL="memory://")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    subprocess.run(
        [sys.executable, "-m", "bench.generate", "build", size, "--seed", str(seed)],
        cwd=ROOT,
        env=env,
        check=True,
    )
    return name


def dataset_of(database: str) -> Dataset:
    marker = _marker(database)
    if marker is None:
        raise LookupError(f"{database} holds no generated dataset")
    dataset = Dataset.from_json(marker[1])
    dataset.database = database
    return dataset


def _main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("command", choices=["build", "template"])
    parser.add_argument("size", choices=sorted(SIZES))
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    if args.command == "template":
        print(template_database(args.size, seed=args.seed))
        return
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chronicle.settings")
    django.setup()
    from django.db import connection

    dataset = build(SIZES[args.size], seed=args.seed, desk_items=DESK_ITEMS.get(args.size, 0))
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE bench_marker (version text, dataset text)")
        cursor.execute(
            "INSERT INTO bench_marker VALUES (%s, %s)",
            [f"{generator_version()}:{args.seed}", dataset.to_json()],
        )
    print(dataset.to_json()[:200])


if __name__ == "__main__":
    _main(sys.argv[1:])
