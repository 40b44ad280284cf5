"""The storytellers' record forms: one small form per action on a character (the page shows them
all; the API validates its JSON with the same forms, so the two cannot drift).

Choices come from an `ActionContext` loaded once per request, so a page of 23 forms costs the
same few queries whatever the chronicle's size. Each form's `run` calls one service and returns
the sentence shown on success.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils.formats import number_format
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from chronicle.models import Cycle
from chronicle.stored_text import stored_text

from .. import rules
from ..models import (
    Bond,
    CaptiveOutcome,
    Captivity,
    Character,
    Concealability,
    DonorType,
    Item,
    KnownSewerLocation,
    RegnantRequest,
    RequestSetAt,
    SewerLocation,
    StoredBlood,
    Title,
    XpEntry,
)
from ..services import bonds, ledger, rebuild, records

StrOrPromise = str | Promise

# A typing slip, not a rule: SEW-03 numbers locations and no chronicle has this many.
MAX_SEWER_NUMBER = 9999


@dataclass
class ActionContext:
    """What the forms offer as choices, each list read once."""

    character: Character
    characters: list[Character]
    stored_blood: list[StoredBlood]
    items: list[Item]
    captivities: list[Captivity]
    requests: list[RegnantRequest]
    titles: list[Title]
    known_locations: list[KnownSewerLocation]
    sewer_locations: list[SewerLocation]
    cycles: list[Cycle]
    entries: list[XpEntry]
    bonds: list[Bond]


class ObjectChoiceField(forms.TypedChoiceField):
    """A choice among objects already loaded; cleans to the object, with no query."""

    def __init__(
        self, objects: Iterable[Any], label_of: Callable[[Any], str] = str, **kwargs: Any
    ) -> None:
        self.objects = {str(o.pk): o for o in objects}
        choices = [("", "---------")] + [(k, label_of(o)) for k, o in self.objects.items()]
        super().__init__(choices=choices, coerce=self.objects.__getitem__, **kwargs)


class ObjectMultipleChoiceField(forms.TypedMultipleChoiceField):
    def __init__(
        self, objects: Iterable[Any], label_of: Callable[[Any], str] = str, **kwargs: Any
    ) -> None:
        self.objects = {str(o.pk): o for o in objects}
        choices = [(k, label_of(o)) for k, o in self.objects.items()]
        super().__init__(choices=choices, coerce=self.objects.__getitem__, **kwargs)


# Issue 16: a date typed on a record is a night of the chronicle, never the year 1.
EARLIEST_RECORD = dt.date(1900, 1, 1)
LATEST_RECORD = dt.date(2199, 12, 31)


def _date_in_range(value: dt.date) -> None:
    if not EARLIEST_RECORD <= value <= LATEST_RECORD:
        raise forms.ValidationError(
            _("Pick a date between %(first)s and %(last)s."),
            code="out_of_range",
            params={"first": EARLIEST_RECORD.year, "last": LATEST_RECORD.year},
        )


def _date(**kwargs: Any) -> forms.DateField:
    return forms.DateField(
        widget=forms.DateInput(attrs={"type": "date"}), validators=[_date_in_range], **kwargs
    )


class ActionForm(forms.Form):
    slug: ClassVar[str]
    title: ClassVar[StrOrPromise]

    def __init__(self, *args: Any, context: ActionContext, **kwargs: Any) -> None:
        self.context = context
        kwargs.setdefault("prefix", self.slug)
        super().__init__(*args, **kwargs)
        self.setup()

    def setup(self) -> None:
        """Add the fields whose choices come from the context."""

    def others(self) -> list[Character]:
        return [c for c in self.context.characters if c.pk != self.context.character.pk]

    def run(self, *, by: User, now: dt.datetime) -> str:
        raise NotImplementedError


class DrinkForm(ActionForm):
    slug, title = "drink", _("Record a drink of kindred blood (BND-01/04)")
    night = _date(label=_("Night"))
    mixed = forms.BooleanField(
        required=False, help_text=_("Blood of several kindred, mixed."), label=_("Mixed")
    )

    def setup(self) -> None:
        self.fields["donors"] = ObjectMultipleChoiceField(self.others(), label=_("Donors"))

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        bonds.drink_record(
            drinker=self.context.character,
            donors=data["donors"],
            mixed=data["mixed"],
            night=data["night"],
            by=by,
            now=now,
        )
        return gettext("Drink recorded; the bonds are up to date.")


class BondBreakForm(ActionForm):
    slug, title = "bond-break", _("A ritual broke a bond (BND-03/06)")
    night = _date(label=_("Night"))

    def setup(self) -> None:
        self.fields["regnant"] = ObjectChoiceField(self.others(), label=_("Regnant"))

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        bonds.bond_break_record(
            thrall=self.context.character,
            regnant=data["regnant"],
            night=data["night"],
            by=by,
            now=now,
        )
        return gettext("Ritual recorded.")


class RequestForm(ActionForm):
    slug, title = "request", _("A regnant's request of this thrall (BND-09)")
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label=_("Text"))
    set_at = forms.ChoiceField(choices=RequestSetAt.choices, label=_("Set at"))

    def setup(self) -> None:
        self.fields["regnant"] = ObjectChoiceField(self.others(), label=_("Regnant"))
        self.order_fields(["regnant", "text", "set_at"])

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        bonds.regnant_request_add(
            thrall=self.context.character,
            regnant=data["regnant"],
            text=data["text"],
            set_at=data["set_at"],
            by=by,
            now=now,
        )
        return gettext("Request recorded.")


class RequestDropForm(ActionForm):
    slug, title = "request-drop", _("The regnant drops a request (BND-09)")

    def setup(self) -> None:
        self.fields["request"] = ObjectChoiceField(
            self.context.requests, lambda r: f"{r.regnant.name}: {r.text[:60]}", label=_("Request")
        )

    def run(self, *, by: User, now: dt.datetime) -> str:
        dropped = bonds.regnant_request_drop(request=self.cleaned_data["request"], by=by, now=now)
        return (
            gettext("Request dropped.") if dropped else gettext("That request was already dropped.")
        )


class StoredBloodForm(ActionForm):
    slug, title = "stored-blood", _("Store blood (BLD-01..05)")
    location = forms.CharField(max_length=200, required=False, label=_("Location"))
    on_body = forms.BooleanField(required=False, label=_("On body"))
    points = forms.IntegerField(min_value=1, max_value=100, label=_("Points"))
    donor_type = forms.ChoiceField(choices=DonorType.choices, label=_("Donor type"))
    donor_note = forms.CharField(max_length=200, required=False, label=_("Donor note"))
    collected_on = _date(label=_("Collected on"))

    def setup(self) -> None:
        self.fields["donors"] = ObjectMultipleChoiceField(
            self.context.characters, required=False, label=_("Donors")
        )

    def run(self, *, by: User, now: dt.datetime) -> str:
        records.stored_blood_add(holder=self.context.character, by=by, now=now, **self.cleaned_data)
        return gettext("Stored blood recorded.")


class TransferForm(ActionForm):
    slug, title = "transfer", _("Move stored blood (BLD-02)")
    to_location = forms.CharField(max_length=200, required=False, label=_("To location"))
    on_body = forms.NullBooleanField(
        required=False,
        widget=forms.Select(
            choices=[("unknown", _("Keep")), ("true", _("On body")), ("false", _("Off"))]
        ),
        label=_("On body"),
    )
    points = forms.IntegerField(min_value=1, max_value=100, label=_("Points"))

    def setup(self) -> None:
        self.fields["blood"] = ObjectChoiceField(
            self.context.stored_blood,
            lambda b: (
                _("%(points)s at %(location)s (%(day)s)")
                % {"points": b.points, "location": stored_text(b.location), "day": b.collected_on}
            ),
            label=_("Blood"),
        )
        self.fields["to_holder"] = ObjectChoiceField(
            self.context.characters, required=False, label=_("To holder")
        )
        self.order_fields(["blood", "to_holder", "to_location", "on_body", "points"])

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.stored_blood_transfer(
            blood=data["blood"],
            to_holder=data["to_holder"] or None,
            to_location=data["to_location"],
            on_body=data["on_body"],
            points=data["points"],
            by=by,
            now=now,
        )
        return gettext("Blood moved.")


class DiablerieForm(ActionForm):
    slug, title = "diablerie", _("Record a diablerie by this character (XP-04/05)")
    victim_name = forms.CharField(
        max_length=120, required=False, help_text=_("If not a sheet."), label=_("Victim name")
    )
    victim_generation = forms.IntegerField(
        min_value=1, max_value=15, required=False, label=_("Victim generation")
    )
    occurred_on = _date(label=_("Occurred on"))
    victim_in_torpor = forms.BooleanField(required=False, label=_("Victim in torpor"))
    killed_by_aggravated_or_coup = forms.BooleanField(
        required=False, label=_("Victim killed by coup de grace or aggravated damage")
    )

    def setup(self) -> None:
        self.fields["victim"] = ObjectChoiceField(self.others(), required=False, label=_("Victim"))
        self.order_fields(["victim"])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        named = data.get("victim_name") and data.get("victim_generation")
        if not data.get("victim") and not named:
            raise ValidationError(_("Choose the victim, or give its name and generation (XP-04)."))
        return data

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.diablerie_record(
            diablerist=self.context.character,
            victim=data["victim"] or None,
            victim_name=data["victim_name"],
            victim_generation=data["victim_generation"] or 0,
            occurred_on=data["occurred_on"],
            victim_in_torpor=data["victim_in_torpor"],
            killed_by_aggravated_or_coup=data["killed_by_aggravated_or_coup"],
            by=by,
            now=now,
        )
        return gettext("Diablerie recorded.")


class DeathForm(ActionForm):
    slug, title = "death", _("Record this character's death (XP-06, BND-03)")
    died_on = _date(label=_("Died on"))

    def run(self, *, by: User, now: dt.datetime) -> str:
        records.character_death_record(
            character=self.context.character, died_on=self.cleaned_data["died_on"], by=by, now=now
        )
        return gettext("Death recorded; the player is credited per XP-06.")


class RetireForm(ActionForm):
    slug, title = "retire", _("Retire this character (XP-06)")
    on = _date(label=_("Retired on"))

    def run(self, *, by: User, now: dt.datetime) -> str:
        records.character_retire(
            character=self.context.character, on=self.cleaned_data["on"], by=by, now=now
        )
        return gettext("Character retired; the player is credited per XP-06.")


class ReturnForm(ActionForm):
    slug, title = "return", _("Bring this character back from retirement (XP-07)")

    def run(self, *, by: User, now: dt.datetime) -> str:
        rebuild.character_return(character=self.context.character, by=by, now=now)
        return gettext(
            "The character is back as a draft: its player rebuilds it with their current XP "
            "and submits it for approval (XP-07)."
        )


class EmbraceForm(ActionForm):
    slug, title = "embrace", _("This ghoul or kine is embraced (CRE-04)")
    embraced_on = _date(label=_("Embraced on"))
    clan = forms.ChoiceField(
        choices=[("", _("Let the player choose"))]
        + [(key, clan.title) for key, clan in rules.CLANS.items()],
        required=False,
        label=_("Clan of the sire"),
    )

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        rebuild.character_embrace(
            character=self.context.character,
            embraced_on=data["embraced_on"],
            clan=data["clan"],
            by=by,
            now=now,
        )
        return gettext(
            "Embrace recorded: the blood bonds are broken and the player rebuilds the character "
            "as kindred with the same XP (CRE-04)."
        )


class TorporHoldForm(ActionForm):
    slug, title = "torpor-hold", _("This character holds someone in torpor (TOR-01)")

    def setup(self) -> None:
        self.fields["captive"] = ObjectChoiceField(self.others(), label=_("Captive"))
        self.fields["cycle"] = ObjectChoiceField(
            self.context.cycles,
            lambda c: _("Downtime after game %(number)s") % {"number": c.game.number},
            label=_("Cycle"),
        )

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.torpor_hold_record(
            holder=self.context.character,
            captive=data["captive"],
            cycle=data["cycle"],
            by=by,
            now=now,
        )
        return gettext("Torpor hold recorded.")


class CaptiveForm(ActionForm):
    slug, title = "captive", _("This character is held captive (TOR-02)")
    since = _date(label=_("Since"))

    def setup(self) -> None:
        self.fields["captor"] = ObjectChoiceField(self.others(), label=_("Captor"))
        self.order_fields(["captor"])

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.captivity_record(
            captive=self.context.character,
            captor=data["captor"],
            since=data["since"],
            by=by,
            now=now,
        )
        return gettext("Captivity recorded.")


class CaptiveResolveForm(ActionForm):
    slug, title = "captive-resolve", _("End a captivity (TOR-02)")
    outcome = forms.ChoiceField(
        choices=[(CaptiveOutcome.RELEASED, _("Released")), (CaptiveOutcome.KILLED, _("Killed"))],
        label=_("Outcome"),
    )

    def setup(self) -> None:
        self.fields["captivity"] = ObjectChoiceField(
            self.context.captivities,
            lambda c: _("Captive since %(day)s") % {"day": c.since},
            label=_("Captivity"),
        )
        self.order_fields(["captivity"])

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.captivity_resolve(
            captivity=data["captivity"], outcome=data["outcome"], by=by, now=now
        )
        return gettext("Captivity ended.")


class ItemForm(ActionForm):
    slug, title = "item", _("Add an item (ITM-01)")
    name = forms.CharField(max_length=120, label=_("Name"))
    concealability = forms.ChoiceField(choices=Concealability.choices, label=_("Concealability"))
    armor = forms.IntegerField(min_value=0, max_value=5, initial=0, label=_("Armor"))
    purchase_cost = forms.IntegerField(
        min_value=rules.MIN_ITEM_COST,  # ITM-01: an item costs at least 1
        max_value=32767,
        help_text=_("Including reinforcement and attachments; at least 1."),
        label=_("Purchase cost"),
        error_messages={"min_value": _("An item costs at least %(limit_value)s (ITM-01).")},
    )
    potence_reinforced = forms.BooleanField(required=False, label=_("Potence reinforced"))

    def run(self, *, by: User, now: dt.datetime) -> str:
        records.item_add(character=self.context.character, by=by, now=now, **self.cleaned_data)
        return gettext("Item added.")


class ItemRepairForm(ActionForm):
    slug, title = "item-repair", _("Repair an item (ITM-02)")

    def setup(self) -> None:
        self.fields["item"] = ObjectChoiceField(
            self.context.items,
            lambda i: _("%(item)s (expires %(day)s)") % {"item": i.name, "day": i.expires_on},
            label=_("Item"),
        )

    def run(self, *, by: User, now: dt.datetime) -> str:
        cost = records.item_repair(item=self.cleaned_data["item"], by=by, now=now)
        if cost == 0:
            # ITM-02: an item of cost 1 is repaired free (`item_repair_free_at_cost_one`).
            return gettext("Item repaired free of charge.")
        return gettext("Item repaired for %(cost)s.") % {"cost": cost}


class ItemDowngradeForm(ActionForm):
    slug, title = "item-downgrade", _("Downgrade an item's concealment (ITM-03)")

    def setup(self) -> None:
        self.fields["item"] = ObjectChoiceField(
            self.context.items,
            lambda i: f"{i.name} ({i.get_concealability_display()})",
            label=_("Item"),
        )

    def run(self, *, by: User, now: dt.datetime) -> str:
        cost = records.item_downgrade(item=self.cleaned_data["item"], by=by, now=now)
        return gettext("Concealment downgraded for %(cost)s.") % {"cost": cost}


class SewerLearnForm(ActionForm):
    slug, title = "sewer-learn", _("Learn a sewer location (SEW-02/03)")
    on = _date(label=_("Learned on"))

    def setup(self) -> None:
        self.fields["location"] = ObjectChoiceField(
            self.context.sewer_locations,
            lambda s: _("%(number)s (level %(level)s)") % {"number": s.number, "level": s.level},
            label=_("Location"),
        )
        self.order_fields(["location"])

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.sewer_location_learn(
            character=self.context.character, location=data["location"], on=data["on"], by=by
        )
        return gettext("Location learned.")


class SewerForgetForm(ActionForm):
    slug, title = "sewer-forget", _("Forget a sewer location (SEW-03)")
    in_downtime = forms.BooleanField(required=False, label=_("This is done in downtime"))

    def setup(self) -> None:
        self.fields["known"] = ObjectChoiceField(
            self.context.known_locations,
            lambda k: f"Location {k.location.number}",
            label=_("Known"),
        )
        self.order_fields(["known"])

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.sewer_location_forget(
            known=data["known"], in_downtime=data["in_downtime"], by=by, now=now
        )
        return gettext("Location forgotten.")


class SewerAddForm(ActionForm):
    slug, title = "sewer-add", _("Add a sewer location to the chronicle (SEW-03/04)")
    number = forms.IntegerField(min_value=1, max_value=MAX_SEWER_NUMBER, label=_("Number"))
    level = forms.IntegerField(min_value=1, max_value=rules.MAX_SEWER_LORE, label=_("Sewer level"))
    description = forms.CharField(max_length=200, required=False, label=_("Description"))

    def setup(self) -> None:
        self.fields["defenders"] = ObjectMultipleChoiceField(
            self.context.characters,
            required=False,
            help_text=_("Who defends it against a search (SEW-04)."),
            label=_("Defenders"),
        )

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        location = records.sewer_location_add(
            chronicle=self.context.character.chronicle,
            number=data["number"],
            level=data["level"],
            description=data["description"],
            defenders=data["defenders"],
            by=by,
        )
        return gettext("Location %(number)s (level %(level)s) added.") % {
            "number": location.number,
            "level": location.level,
        }


class SewerSearchForm(ActionForm):
    slug, title = "sewer-search", _("A group searches for a sewer location (SEW-04)")

    def setup(self) -> None:
        self.fields["searchers"] = ObjectMultipleChoiceField(
            self.context.characters, label=_("Searchers")
        )
        self.fields["location"] = ObjectChoiceField(
            self.context.sewer_locations,
            lambda s: _("%(number)s (level %(level)s)") % {"number": s.number, "level": s.level},
            label=_("Location"),
        )

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        learned = records.sewer_search(
            searchers=data["searchers"], location=data["location"], by=by, now=now
        )
        number = data["location"].number
        if not learned:
            return gettext(
                "Nobody learned location %(number)s: the search failed, or every searcher "
                "already knew it or had no free slot (SEW-02/04)."
            ) % {"number": number}
        return gettext("Location %(number)s found; learned by %(names)s.") % {
            "number": number,
            "names": ", ".join(c.name for c in learned),
        }


class SummonsLockForm(ActionForm):
    slug, title = "summons-lock", _("A summons lock won by this character (MSC-01)")
    won_on = _date(label=_("Won on"))

    def setup(self) -> None:
        self.fields["target"] = ObjectChoiceField(self.others(), label=_("Target"))
        self.order_fields(["target"])

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.summons_lock_add(
            holder=self.context.character,
            target=data["target"],
            won_on=data["won_on"],
            by=by,
            now=now,
        )
        return gettext("Summons lock recorded.")


class ConditioningForm(ActionForm):
    slug, title = "conditioning", _("This character was conditioned (MSC-02)")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label=_("Description"))
    recorded_on = _date(label=_("Recorded on"))

    def setup(self) -> None:
        self.fields["conditioner"] = ObjectChoiceField(self.others(), label=_("Conditioner"))
        self.order_fields(["conditioner"])

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        records.conditioning_record(
            subject=self.context.character,
            conditioner=data["conditioner"],
            description=data["description"],
            recorded_on=data["recorded_on"],
            by=by,
            now=now,
        )
        return gettext("Conditioning recorded.")


class TitleForm(ActionForm):
    slug, title = "title", _("Titles")
    name = forms.CharField(max_length=60, required=False, label=_("Title"))
    city = forms.CharField(max_length=80, required=False, label=_("City"))

    def setup(self) -> None:
        self.fields["remove"] = ObjectChoiceField(
            self.context.titles, required=False, label=_("Remove")
        )

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        if data["remove"]:
            records.title_remove(title=data["remove"], by=by)
            return gettext("Title removed.")
        records.title_add(
            character=self.context.character, name=data["name"], city=data["city"], by=by
        )
        return gettext("Title added.")


class NoteForm(ActionForm):
    slug, title = "note", _("Storytellers' notes (never shown to the player)")
    notes = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}), required=False, label=_("Notes")
    )

    def run(self, *, by: User, now: dt.datetime) -> str:
        records.st_note_set(
            character=self.context.character, notes=self.cleaned_data["notes"], by=by
        )
        return gettext("Notes saved.")


class RitualForm(ActionForm):
    slug, title = "ritual", _("Add a ritual (DIS-10)")
    name = forms.CharField(max_length=120, label=_("Name"))
    learned_on = _date(required=False, label=_("Learned on"))
    free = forms.BooleanField(
        required=False, help_text=_("A Tremere's free basic ritual."), label=_("Free")
    )

    def run(self, *, by: User, now: dt.datetime) -> str:
        records.ritual_add(character=self.context.character, by=by, now=now, **self.cleaned_data)
        return gettext("Ritual added.")


class CorrectionForm(ActionForm):
    slug, title = "correction", _("Correct the player's XP ledger")
    amount = forms.DecimalField(
        max_digits=7,
        decimal_places=1,
        required=False,
        help_text=_("Plus or minus, in 0.5 steps."),
        label=_("Amount"),
    )
    reason = forms.CharField(max_length=250, label=_("Reason"))
    # A fresh token with every form drawn: a double-clicked or replayed submit carries the same
    # one, so the ledger writes the correction once.
    token = forms.RegexField(
        regex=r"^[0-9a-f]{32}$",
        required=False,
        widget=forms.HiddenInput,
        initial=lambda: uuid.uuid4().hex,
        error_messages={"invalid": _("Reload the page and try again.")},
        label=_("Token"),
    )

    def setup(self) -> None:
        self.fields["reverse"] = ObjectChoiceField(
            self.context.entries,
            lambda e: (
                f"{e.created_at:%Y-%m-%d} {'+' if e.amount >= 0 else ''}"
                f"{number_format(e.amount)} {stored_text(e.reason)}"
            ),
            required=False,
            label=_("Or reverse this entry"),
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.context.character.player_id is None:
            raise ValidationError(_("An NPC has no XP ledger."))
        if (data.get("amount") is None) == (not data.get("reverse")):
            raise ValidationError(_("Give an amount or choose an entry to reverse (not both)."))
        return data

    def run(self, *, by: User, now: dt.datetime) -> str:
        data = self.cleaned_data
        character = self.context.character
        if data["reverse"]:
            ledger.xp_entry_reverse(entry=data["reverse"], by=by, reason=data["reason"], now=now)
            return gettext("Entry reversed.")
        assert character.player_id is not None
        ledger.xp_correction_add(
            chronicle=character.chronicle,
            player_id=character.player_id,
            amount=Decimal(data["amount"]),
            reason=data["reason"],
            by=by,
            character=character,
            token=data.get("token") or None,
            now=now,
        )
        return gettext("Correction added.")


ACTION_FORMS: dict[str, type[ActionForm]] = {
    form.slug: form
    for form in (
        DrinkForm,
        BondBreakForm,
        RequestForm,
        RequestDropForm,
        StoredBloodForm,
        TransferForm,
        DiablerieForm,
        DeathForm,
        RetireForm,
        ReturnForm,
        EmbraceForm,
        TorporHoldForm,
        CaptiveForm,
        CaptiveResolveForm,
        ItemForm,
        ItemRepairForm,
        ItemDowngradeForm,
        SewerLearnForm,
        SewerForgetForm,
        SewerAddForm,
        SewerSearchForm,
        SummonsLockForm,
        ConditioningForm,
        TitleForm,
        NoteForm,
        RitualForm,
        CorrectionForm,
    )
}
