"""The release's set-based lower bound (issue 15), for the benchmark: what a release of a
resolved cycle writes, done as four SQL statements on PostgreSQL and nothing else (no recheck,
no havens, no summaries): the XP ledger `INSERT … SELECT` from the outcomes with their
overrides, the cash-in spends, the outcome readers, the cycle's status.

`release_bound(cycle_id)` runs them (in one transaction) and returns the rows and seconds of
each; `written(cycle_id)` says what a release wrote, so that the benchmark can run the real
release (`pipeline.cycle_release`) on one copy of the data and the bound on another
(`CREATE DATABASE b TEMPLATE a`) and check they wrote the same rows. The ids are the same on
both copies, so `written` compares the rows themselves through a digest.

Django must be set up (DATABASE_URL on PostgreSQL) before these are called.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

XP = """
INSERT INTO characters_xpentry
    (chronicle_id, player_id, character_id, amount, kind, reason, cycle_id, "key", actor_id,
     created_at)
SELECT cy.chronicle_id, o.player_id, o.character_id, COALESCE(ov.xp, o.xp), 'award',
    left(o.title, 300), o.cycle_id, left('cycle:' || o.cycle_id || ':' || o.step || ':'
    || o.subject, 120), NULL, %(now)s
FROM downtimes_outcome o
JOIN chronicle_cycle cy ON cy.id = o.cycle_id
LEFT JOIN downtimes_outcomeoverride ov
    ON ov.cycle_id = o.cycle_id AND ov.step = o.step AND ov.subject = o.subject
WHERE o.cycle_id = %(cycle)s AND o.player_id IS NOT NULL AND COALESCE(ov.xp, o.xp) <> 0
ON CONFLICT DO NOTHING
"""
CASH_IN = """
INSERT INTO characters_influencespend
    (character_id, cycle_id, influence, points, moment, reason, "key", actor_id, created_at)
SELECT o.character_id, o.cycle_id, c.name, c.points::integer, 'downtime', %(reason)s,
    'cycle:' || o.cycle_id || ':cash-in:' || c.name, NULL, %(now)s
FROM downtimes_outcome o, jsonb_each_text(o.value -> 'cash_in') AS c(name, points)
WHERE o.cycle_id = %(cycle)s AND o.step = 'no_downtime' AND o.subject LIKE 'cash-in:%%'
    AND o.character_id IS NOT NULL
ON CONFLICT DO NOTHING
"""
READERS = """
INSERT INTO downtimes_outcomereader (outcome_id, player_id)
SELECT o.id, o.player_id FROM downtimes_outcome o
WHERE o.cycle_id = %(cycle)s AND o.public_text <> '' AND o.player_id IS NOT NULL
UNION
SELECT o.id, ch.player_id
FROM downtimes_outcome o, jsonb_array_elements_text(o.readers) AS r(id)
JOIN characters_character ch ON ch.id = r.id::bigint
WHERE o.cycle_id = %(cycle)s AND o.public_text <> '' AND ch.player_id IS NOT NULL
ON CONFLICT DO NOTHING
"""
STATUS = """
UPDATE chronicle_cycle SET status = 'released', released_at = %(now)s
WHERE id = %(cycle)s AND status = 'resolved'
"""
STATEMENTS = {"xp": XP, "cash_in": CASH_IN, "readers": READERS, "status": STATUS}


def release_bound(cycle_id: int, now: dt.datetime | None = None) -> dict[str, Any]:
    """Write what the release writes, set-based: {statement: rows} and the seconds of each
    and of all four (`seconds`)."""
    from downtimes.ledger_words import CASHED_IN

    assert connection.vendor == "postgresql", "the bound is PostgreSQL's SQL"
    params = {"cycle": cycle_id, "now": now or timezone.now(), "reason": str(CASHED_IN)}
    out: dict[str, Any] = {}
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        for name, sql in STATEMENTS.items():
            at = time.perf_counter()
            cursor.execute(sql, params)
            out[name] = cursor.rowcount
            out[f"{name}_seconds"] = time.perf_counter() - at
    out["seconds"] = time.perf_counter() - started
    return out


def written(cycle_id: int) -> dict[str, Any]:
    """What a release of the cycle wrote: its XP entries (count, sum, and a digest of every
    entry's player, character, key, amount and reason), its cash-in spends (count, points and a
    digest), its readers (count and digest) and the cycle's status."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT player_id, character_id, key, amount, reason FROM characters_xpentry "
            "WHERE cycle_id = %s AND kind = 'award' AND key LIKE %s ORDER BY player_id, key",
            [cycle_id, f"cycle:{cycle_id}:%"],
        )
        xp = cursor.fetchall()
        cursor.execute(
            "SELECT character_id, key, influence, points, reason FROM characters_influencespend "
            "WHERE cycle_id = %s AND key LIKE %s ORDER BY character_id, key",
            [cycle_id, f"cycle:{cycle_id}:cash-in:%"],
        )
        cash = cursor.fetchall()
        cursor.execute(
            "SELECT r.outcome_id, r.player_id FROM downtimes_outcomereader r "
            "JOIN downtimes_outcome o ON o.id = r.outcome_id WHERE o.cycle_id = %s "
            "ORDER BY r.outcome_id, r.player_id",
            [cycle_id],
        )
        readers = cursor.fetchall()
        cursor.execute("SELECT status FROM chronicle_cycle WHERE id = %s", [cycle_id])
        (status,) = cursor.fetchone()

    def digest(rows: list[tuple[Any, ...]]) -> str:
        return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]

    return {
        "xp_entries": len(xp),
        "xp_sum": sum((row[3] for row in xp), 0),
        "xp_digest": digest(xp),
        "cash_ins": len(cash),
        "cash_in_points": sum(row[3] for row in cash),
        "cash_in_digest": digest(cash),
        "readers": len(readers),
        "readers_digest": digest(readers),
        "status": status,
    }
