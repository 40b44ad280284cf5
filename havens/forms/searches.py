"""Forms of searches, attacks, reinforcement attacks and hidden objects: shape only; the
services check the rules (HAV-25b..26, HID-01..02).

Every choice a player sees comes from `havens.access`: their own characters, their own finds.
Each write form carries a `key` made when the form is first shown, so a double click gives one
effect."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from characters.models import INFLUENCE_CHOICES, Character, Status
from characters.rules import LEVELS
from chronicle.models import Game, Membership

from .. import access
from ..models import Find, HiddenObjectSearch, Structure, StructureStatus
from ..services.searches import TARGET_NAME_MAX

MAX_POINTS = 100
# The empty first choice keeps an untouched attacker row empty: "No Potence" is an attacker
# who adds 4 to the bid (HAV-26), not a blank row.
POTENCE_CHOICES = [("", "—"), (0, _("No Potence"))] + [
    (n, code) for n, code in enumerate(LEVELS, start=1)
]
ATTACKER_ROWS = 5
TEST_ROWS = 6
AT_GAME_ROWS = 3
TEST_CHOICES = [
    ("", _("not played")),
    ("lost", _("attackers lost")),
    ("won", _("attackers won")),
]


def new_key() -> str:
    return uuid.uuid4().hex


class _Keyed(forms.Form):
    key = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].initial = new_key()


class _CharacterLabel(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return str(obj.name)


def own_active_characters(membership: Membership) -> QuerySet[Character]:
    return access.own_characters(membership).filter(status=Status.ACTIVE).order_by("name")


def chronicle_characters(membership: Membership) -> QuerySet[Character]:
    """Staff choices: every character of the chronicle (the caller checked staff)."""
    return Character.objects.filter(chronicle=membership.chronicle).only("pk", "name")


class SearchForm(_Keyed):
    character = _CharacterLabel(label=_("Searcher"), queryset=Character.objects.none())
    target_name = forms.CharField(
        label=_("Whose havens (the character's name)"),
        max_length=TARGET_NAME_MAX,
        help_text=_("As you know them in play; a storyteller matches the name."),
    )
    influence = forms.ChoiceField(label=_("Influence"), choices=INFLUENCE_CHOICES)
    points = forms.IntegerField(label=_("Points"), min_value=1, max_value=MAX_POINTS)

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = own_active_characters(membership)  # type: ignore[attr-defined]


class JoinForm(_Keyed):
    character = _CharacterLabel(label=_("Searcher"), queryset=Character.objects.none())
    party_code = forms.CharField(label=_("Search code"), max_length=32)
    influence = forms.ChoiceField(label=_("Influence"), choices=INFLUENCE_CHOICES)
    points = forms.IntegerField(label=_("Points"), min_value=1, max_value=MAX_POINTS)

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = own_active_characters(membership)  # type: ignore[attr-defined]


class _FindChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        # Location only (HAV-25b): never the structure's name.
        return _("%(location)s (found by %(name)s)") % {
            "location": obj.structure.location,
            "name": obj.character.name,
        }


class AttackForm(_Keyed):
    find = _FindChoice(label=_("Haven you found"), queryset=Find.objects.none())
    influence = forms.ChoiceField(label=_("Influence"), choices=INFLUENCE_CHOICES)
    points = forms.IntegerField(label=_("Points"), min_value=1, max_value=MAX_POINTS)

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["find"].queryset = (  # type: ignore[attr-defined]
            access.finds_visible_to(membership)
            .filter(cleared_at__isnull=True, character__in=own_active_characters(membership))
            .select_related("structure", "character")
            .order_by("pk")
        )


class LinkForm(forms.Form):
    target = _CharacterLabel(label=_("Target"), queryset=Character.objects.none())

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["target"].queryset = chronicle_characters(membership)  # type: ignore[attr-defined]


class AtGameSearchForm(_Keyed):
    target = _CharacterLabel(label=_("Target"), queryset=Character.objects.none())

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        characters = chronicle_characters(membership)
        self.fields["target"].queryset = characters  # type: ignore[attr-defined]
        for i in range(1, AT_GAME_ROWS + 1):
            self.fields[f"searcher_{i}"] = _CharacterLabel(
                label=f"Searcher {i}", queryset=characters, required=i == 1
            )
            self.fields[f"influence_{i}"] = forms.ChoiceField(
                label=f"Influence {i}", choices=INFLUENCE_CHOICES, required=i == 1
            )
            self.fields[f"points_{i}"] = forms.IntegerField(
                label=f"Points {i}", min_value=1, max_value=MAX_POINTS, required=i == 1
            )

    def searchers(self) -> list[tuple[Character, str, int]]:
        data = self.cleaned_data
        return [
            (data[f"searcher_{i}"], data[f"influence_{i}"], data[f"points_{i}"])
            for i in range(1, AT_GAME_ROWS + 1)
            if data.get(f"searcher_{i}") and data.get(f"points_{i}")
        ]


class _StructureChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.name} ({obj.location})"


class ReinforcementForm(_Keyed):
    structure = _StructureChoice(label=_("Structure"), queryset=Structure.objects.none())
    game = forms.ModelChoiceField(label=_("Game"), queryset=Game.objects.none(), required=False)
    note = forms.CharField(
        label=_("Note"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["structure"].queryset = (  # type: ignore[attr-defined]
            access.structures_visible_to(membership)
            .filter(status=StructureStatus.STANDING)
            .order_by("name", "pk")
        )
        self.fields["game"].queryset = Game.objects.filter(  # type: ignore[attr-defined]
            chronicle=membership.chronicle
        ).order_by("-date")
        characters = chronicle_characters(membership)
        for i in range(1, ATTACKER_ROWS + 1):
            self.fields[f"name_{i}"] = forms.CharField(
                label=_("Attacker %(number)s") % {"number": i}, max_length=120, required=False
            )
            self.fields[f"character_{i}"] = _CharacterLabel(
                label=_("Attacker %(number)s's character") % {"number": i},
                queryset=characters,
                required=False,
            )
            self.fields[f"potence_{i}"] = forms.TypedChoiceField(
                label=_("Attacker %(number)s's Potence") % {"number": i},
                choices=POTENCE_CHOICES,
                coerce=int,
                required=False,
                empty_value=None,
            )
        for i in range(1, TEST_ROWS + 1):
            self.fields[f"test_{i}"] = forms.ChoiceField(
                label=_("Test %(number)s (every 5 minutes)") % {"number": i},
                choices=TEST_CHOICES,
                required=False,
            )

    def attacker_rows(self) -> list[tuple[Character | None, str, int]]:
        data = self.cleaned_data
        rows = []
        for i in range(1, ATTACKER_ROWS + 1):
            character, name = data.get(f"character_{i}"), data.get(f"name_{i}") or ""
            level = data.get(f"potence_{i}")
            if character is None and not name.strip() and level is None:
                continue
            rows.append((character, name.strip(), level or 0))
        return rows

    def results(self) -> list[bool]:
        data = self.cleaned_data
        played = [data.get(f"test_{i}") for i in range(1, TEST_ROWS + 1)]
        return [value == "won" for value in played if value]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors and not self.attacker_rows():
            self.add_error("name_1", _("Give at least one attacker (HAV-26)."))
        return data

    @property
    def attacker_fields(self) -> list[list[forms.BoundField]]:
        return [
            [self[f"name_{i}"], self[f"character_{i}"], self[f"potence_{i}"]]
            for i in range(1, ATTACKER_ROWS + 1)
        ]

    @property
    def test_fields(self) -> list[forms.BoundField]:
        return [self[f"test_{i}"] for i in range(1, TEST_ROWS + 1)]


class HiddenRegisterForm(_Keyed):
    hider = _CharacterLabel(label=_("Hider"), queryset=Character.objects.none())
    description = forms.CharField(label=_("Object"), max_length=300)
    place = forms.CharField(label=_("Place (flavour)"), max_length=300, required=False)
    obfuscate_bid = forms.IntegerField(label=_("Obfuscate bid"), min_value=0, max_value=1000)
    number = forms.IntegerField(label=_("Number"), min_value=1, max_value=10)
    game = forms.ModelChoiceField(label=_("Game"), queryset=Game.objects.none(), required=False)

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["hider"].queryset = chronicle_characters(membership)  # type: ignore[attr-defined]
        self.fields["game"].queryset = Game.objects.filter(  # type: ignore[attr-defined]
            chronicle=membership.chronicle
        ).order_by("-date")


class HiddenSearchForm(_Keyed):
    searcher = _CharacterLabel(
        label=_("Searcher (Auspex 2a or higher)"), queryset=Character.objects.none()
    )
    number = forms.IntegerField(label=_("Number"), help_text=_("1 to 10 (HID-02)"))
    game = forms.ModelChoiceField(label=_("Game"), queryset=Game.objects.none(), required=False)

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["searcher"].queryset = chronicle_characters(membership)  # type: ignore[attr-defined]
        self.fields["game"].queryset = Game.objects.filter(  # type: ignore[attr-defined]
            chronicle=membership.chronicle
        ).order_by("-date")


class HiddenWinsForm(forms.Form):
    """HID-02: one box per object still to be tested: did the searcher win?"""

    def __init__(self, *args: Any, record: HiddenObjectSearch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for row in record.results:
            if row["won"] is None:
                self.fields[f"won_{row['object']}"] = forms.BooleanField(
                    label=_("Object %(number)s: the searcher won") % {"number": row["object"]},
                    required=False,
                )

    def won(self) -> dict[int, bool]:
        return {
            int(name.removeprefix("won_")): bool(value)
            for name, value in self.cleaned_data.items()
            if name.startswith("won_")
        }
