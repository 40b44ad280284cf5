"""Objects hidden on site and searched for (HID-01, HID-02)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from characters.models import Character, DisciplineLevel
from characters.services.common import refusal
from chronicle.models import Chronicle, Game
from chronicle.rules import ratio_class, settings_for

from ... import rules
from ...models import (
    HiddenObject,
    HiddenObjectSearch,
)
from .common import (
    _require_staff,
    _short_key,
)

# --- Objects hidden on site (HID-01, HID-02) ---------------------------------------------------


@transaction.atomic
def hidden_object_register(
    *,
    chronicle: Chronicle,
    hider: Character,
    description: str,
    place: str,
    obfuscate_bid: int,
    number: int,
    by: User,
    game: Game | None = None,
    key: str = "",
    now: dt.datetime | None = None,
) -> HiddenObject:
    """HID-01: register an object hidden on site: flavour, the hider's Obfuscate bid and a
    number 1..10 (at the influence desk: staff). `key` (the form's token) makes a double
    submit register one object."""
    now = now or timezone.now()
    _require_staff(by, chronicle)
    key = _short_key(key)
    if key:
        # Two racing submits of one form queue on the hider's row; the second finds the first.
        Character.objects.select_for_update().filter(pk=hider.pk).values_list("pk").first()
        earlier = HiddenObject.objects.filter(chronicle=chronicle, key=key).first()
        if earlier is not None:
            return earlier
    if hider.chronicle_id != chronicle.pk or (game and game.chronicle_id != chronicle.pk):
        raise ValidationError(_("Pick a character and a game of this chronicle."))
    if not (description or "").strip():
        raise ValidationError({"description": _("Describe the object (HID-01).")})
    try:
        rules.check_hidden_object_registration(obfuscate_bid=obfuscate_bid, number=number)
    except ValueError as exc:
        # The rules name the bid by its identifier, in every language (the number's refusal
        # cites HID-01 instead).
        field = "obfuscate_bid" if "obfuscate_bid" in str(exc) else "number"
        raise refusal(exc, field) from None
    return HiddenObject.objects.create(
        chronicle=chronicle,
        game=game,
        hider=hider,
        description=description.strip()[:300],
        place=(place or "").strip()[:300],
        obfuscate_bid=obfuscate_bid,
        number=number,
        registered_by=by,
        registered_at=now,
        key=key,
    )


@transaction.atomic
def hidden_object_remove(
    *, obj: HiddenObject, by: User, now: dt.datetime | None = None
) -> HiddenObject:
    """The hider takes the object back (or an ST clears it); removing twice is once."""
    now = now or timezone.now()
    _require_staff(by, obj.chronicle_id)
    HiddenObject.objects.filter(pk=obj.pk, removed_at__isnull=True).update(removed_at=now)
    obj.refresh_from_db()
    return obj


def auspex_level(character: Character) -> int:
    return max(
        DisciplineLevel.objects.filter(character=character, discipline="auspex").values_list(
            "level", flat=True
        ),
        default=0,
    )


def _investigate(character: Character) -> int:
    abilities = character.abilities or {}
    value = abilities.get("investigation", 0) or abilities.get("investigate", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@transaction.atomic
def hidden_object_search(
    *,
    searcher: Character,
    number: int,
    by: User,
    key: str,
    game: Game | None = None,
    won: Mapping[int, bool] | None = None,
    now: dt.datetime | None = None,
) -> HiddenObjectSearch:
    """HID-02: an Auspex search of one number. The first call lists each registered object
    still hidden under it, with both bids and the TST-01 class; a later call with the same
    `key` and `won` (object id → the searcher won its test) records the tests, and a win
    reveals the object. Recording the same wins twice changes nothing."""
    now = now or timezone.now()
    chronicle_id = searcher.chronicle_id
    _require_staff(by, chronicle_id)
    key = _short_key(key)
    # A double submit races here: both requests would miss the key and the second would fail
    # on the unique (chronicle, key). The searcher's row queues the second behind the first.
    Character.objects.select_for_update().filter(pk=searcher.pk).values_list("pk").first()
    record = (
        HiddenObjectSearch.objects.select_for_update()
        .filter(chronicle_id=chronicle_id, key=key)
        .first()
    )
    if record is None:
        level = auspex_level(searcher)
        try:
            rules.check_hidden_object_search(auspex_level=level, number=number)
        except ValueError as exc:
            # Rule IDs stay in every language: HID-02 is the searcher's Auspex.
            raise refusal(exc, "searcher" if "HID-02" in str(exc) else "number") from None
        bid = rules.hidden_object_search_bid(
            mental_traits=searcher.mental, investigate=_investigate(searcher), auspex_level=level
        )
        house = searcher.chronicle.house_rules
        objects = HiddenObject.objects.filter(
            chronicle_id=chronicle_id, number=number, found_by__isnull=True, removed_at__isnull=True
        ).order_by("registered_at", "pk")
        results = []
        for obj in objects:
            high, low = max(bid, obj.obfuscate_bid), min(bid, obj.obfuscate_bid)
            results.append(
                {
                    "object": obj.pk,
                    "obfuscate_bid": obj.obfuscate_bid,
                    "class": ratio_class(high, low, **settings_for(ratio_class, house)),
                    "higher": (
                        "even"
                        if bid == obj.obfuscate_bid
                        else "searcher"
                        if bid > obj.obfuscate_bid
                        else "hider"
                    ),
                    "won": None,
                }
            )
        record = HiddenObjectSearch.objects.create(
            chronicle_id=chronicle_id,
            game=game,
            searcher=searcher,
            number=number,
            bid=bid,
            results=results,
            recorded_by=by,
            recorded_at=now,
            key=key,
        )
    if won:
        wins: list[int] = []
        for row in record.results:
            if row["won"] is None and row["object"] in won:
                row["won"] = bool(won[row["object"]])
                if row["won"]:
                    wins.append(row["object"])
        record.save(update_fields=["results"])
        if wins:
            HiddenObject.objects.filter(
                pk__in=wins, found_by__isnull=True, removed_at__isnull=True
            ).update(found_by=record.searcher_id, found_at=now)
    return record
