"""Ids of the source database kept inside text never name a row made after an import.

The collision, in words: in the source database Alice's purchase 40 was approved, and the
ledger holds her entry with key `purchase:40`. The chronicle is exported and imported into a
database whose purchases had reached 38: the imported purchase becomes 39, but the ledger entry
keeps its text `purchase:40`. Alice then buys something new; it gets id 40; the storyteller
approves it and the ledger service, keyed `purchase:<id>` once per chronicle and player, finds
`purchase:40` taken and writes nothing; here the approval then breaks on the purchase's link to
that entry (one purchase per entry), and an award keyed by a new row's id is silently never
written: the player loses the XP. The import must therefore move every table's ids past those
the source handed out (`max_ids` in the export).

Each test runs on the database the suite runs on: run it with and without DATABASE_URL.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection

from characters.models import Character, XpEntry, XpKind, XpPurchase
from characters.services import ledger
from characters.services.purchases import purchase_approve, purchase_request
from chronicle import portability
from chronicle.models import Chronicle

from .conftest import as_if_fresh, set_next_id, wipe

pytestmark = pytest.mark.django_db

SOURCE_PURCHASE = 40
DEMO_SLUG = "elysium-nights"


def _through_json(data: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(data))


def _buy(world: Any, character: Character) -> XpPurchase:
    """Alice asks for a point of Mental, the storyteller approves it: a `purchase:<id>` entry."""
    purchase = purchase_request(
        character=character, by=world.users["player_alice"], kind="trait", target="mental"
    )
    return purchase_approve(purchase=purchase, by=world.users["storyteller"])


def _export_a_ledger_with_purchase_40(world: Any, make_character: Any) -> dict[str, Any]:
    lucien = make_character("Lucien", player="player_alice")
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(30),
        kind=XpKind.AWARD,
        reason="a season of games",
        key="award:season",
    )
    set_next_id(XpPurchase, SOURCE_PURCHASE)  # the source database has seen 39 purchases
    bought = _buy(world, lucien)
    assert bought.pk == SOURCE_PURCHASE
    assert XpEntry.objects.filter(chronicle=world.chronicle, key="purchase:40").count() == 1
    data = _through_json(portability.export_data(world.chronicle))
    wipe(world.chronicle)
    # The target database: id 40 is free, and its purchases have reached 38.
    set_next_id(XpPurchase, SOURCE_PURCHASE - 1)
    return data


def _buy_after_the_import(world: Any, data: dict[str, Any]) -> tuple[XpPurchase, Decimal]:
    """Import, then a new purchase through the real services: the purchase and the XP it cost
    (what the ledger moved)."""
    imported = portability.import_data(data).chronicle
    alice = world.users["player_alice"]
    before = ledger.xp_balance(chronicle=imported, player=alice)
    lucien = Character.objects.get(chronicle=imported, name="Lucien")
    new = _buy(world, lucien)
    return new, before - ledger.xp_balance(chronicle=imported, player=alice)


@pytest.mark.parametrize("header", ["max_ids", "no max_ids (an older export)"])
def test_a_purchase_made_after_an_import_is_charged(
    world: Any, make_character: Any, header: str
) -> None:
    data = _export_a_ledger_with_purchase_40(world, make_character)
    assert data["max_ids"]["characters.xppurchase"] == SOURCE_PURCHASE
    if header != "max_ids":
        del data["max_ids"]  # the import falls back to the ids it reads in the text

    new, charged = _buy_after_the_import(world, data)

    assert new.pk > SOURCE_PURCHASE
    assert new.cost > 0 and charged == new.cost  # the XP landed
    entry = XpEntry.objects.get(chronicle=new.character.chronicle, key=f"purchase:{new.pk}")
    assert new.ledger_entry == entry and entry.amount == -new.cost
    assert XpEntry.objects.filter(chronicle=new.character.chronicle).count() == 3


def test_without_moving_the_ids_the_purchase_is_swallowed(
    world: Any, make_character: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scenario above reproduces the collision once the import leaves the ids alone: the
    new purchase is 40, the ledger writes no entry for it and hands back the imported one."""
    data = _export_a_ledger_with_purchase_40(world, make_character)
    monkeypatch.setattr(portability, "_advance_ids", lambda floors: None)

    with pytest.raises(IntegrityError, match="ledger_entry"):
        _buy_after_the_import(world, data)

    new = XpPurchase.objects.get(pk=SOURCE_PURCHASE)  # the request, made after the import
    assert new.character.chronicle.slug == world.chronicle.slug
    assert new.status == "requested" and new.ledger_entry is None
    assert XpEntry.objects.filter(chronicle=new.character.chronicle).count() == 2


def _ids(chronicle: Chronicle) -> dict[str, set[int]]:
    return {
        p.model._meta.label_lower: set(p.rows(chronicle).values_list("pk", flat=True))
        for p in portability.portables()
    }


def test_every_imported_table_gets_ids_above_the_source(world: Any) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    demo = Chronicle.objects.get(slug=DEMO_SLUG)
    before = portability.digest(demo)
    old_ids = _ids(demo)
    data = _through_json(portability.export_data(demo))
    user = get_user_model()
    assert set(data["max_ids"]) == set(old_ids) | {user._meta.label_lower}
    wipe(demo)
    user.objects.exclude(pk__in=[u.pk for u in world.users.values()]).delete()
    # The target hands out ids from where its own rows end, as a database that never held
    # the demo would.
    as_if_fresh([*(p.model for p in portability.portables()), user])

    imported = portability.import_data(data).chronicle

    assert portability.digest(imported) == before
    new_ids = _ids(imported)
    for label, ids in old_ids.items():
        if ids:
            assert data["max_ids"][label] >= max(ids), label
            assert min(new_ids[label]) > data["max_ids"][label], label
    users = set(user.objects.values_list("pk", flat=True)) - {u.pk for u in world.users.values()}
    assert users and min(users) > data["max_ids"][user._meta.label_lower]
    # And every row made afterwards too.
    player = user.objects.create_user("after_the_import")
    assert player.pk > data["max_ids"][user._meta.label_lower]


def test_the_ids_move_on_postgresql_identity_columns(
    postgres: None, world: Any, make_character: Any
) -> None:
    """Django 5 makes PostgreSQL ids identity columns; pg_get_serial_sequence finds their
    sequence, which the import moves past the source's highest id."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attidentity FROM pg_attribute "
            "WHERE attrelid = 'characters_xppurchase'::regclass AND attname = 'id'"
        )
        assert cursor.fetchone() == ("d",)  # GENERATED BY DEFAULT AS IDENTITY
    data = _export_a_ledger_with_purchase_40(world, make_character)
    portability.import_data(data)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT last_value FROM pg_sequences WHERE sequencename = "
            "split_part(pg_get_serial_sequence('characters_xppurchase', 'id'), '.', 2)"
        )
        (last_value,) = cursor.fetchone()
    assert last_value > SOURCE_PURCHASE


def test_the_export_file_names_the_highest_ids(tmp_path: Path, world: Any) -> None:
    path = tmp_path / "nightfall.json"
    call_command("export_chronicle", world.chronicle.slug, "-o", str(path), stdout=io.StringIO())
    header = json.loads(path.read_text())
    assert header["version"] == 1  # still readable by the import before max_ids
    assert header["max_ids"]["chronicle.chronicle"] >= world.chronicle.pk
    assert header["max_ids"]["auth.user"] >= max(u.pk for u in world.users.values())


@pytest.mark.parametrize("max_ids", [[1, 2], {"characters.xpentry": -1}, {"a": "12"}])
def test_damaged_max_ids_are_refused(tmp_path: Path, world: Any, max_ids: Any) -> None:
    data = _through_json(portability.export_data(world.chronicle))
    wipe(world.chronicle)
    data["max_ids"] = max_ids
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match="damaged"):
        call_command("import_chronicle", str(path))
    assert not Chronicle.objects.filter(slug=world.chronicle.slug).exists()
