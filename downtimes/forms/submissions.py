"""The player's downtime forms (DT-02): their shape only; the services check the rules."""

from __future__ import annotations

import functools
import html
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from characters import rules as character_rules
from characters.forms.purchases import PurchaseForm
from characters.models import INFLUENCE_CHOICES as CHARACTER_INFLUENCE_CHOICES
from characters.models import Character
from chronicle.forms.widgets import LongSelect, PairedChoices, long_select
from havens.models import Structure

from .. import rules
from ..models import ActionKind, PowerKind
from ..plain_words import without_rule_ids
from ..services.votes_cast import Cast

# The influence types in words (characters.models labels them, translated).
INFLUENCE_CHOICES = list(CHARACTER_INFLUENCE_CHOICES)
TEXTAREA = {"rows": 3}


class BallotChoices(PairedChoices):
    """A ballot's nominees, shared by the categories of one kind: their options are written
    once per page, not once per ballot (five ballots of a 300-name cast)."""

    def __init__(self, choices: list[tuple[Any, Any]]) -> None:
        super().__init__(choices)
        self.options: str | None = None


class BallotSelect(LongSelect):
    """`LongSelect`'s HTML, the options of `BallotChoices` written once and the pick marked
    in a copy (values are unique ids, labels escaped: the value's tag occurs once)."""

    def render(
        self,
        name: str,
        value: Any,
        attrs: dict[str, Any] | None = None,
        renderer: Any = None,
    ) -> SafeString:
        choices = self.choices
        if not isinstance(choices, BallotChoices):
            return super().render(name, value, attrs, renderer)
        if choices.options is None:
            # An empty list of values marks no option: the template of every option.
            choices.options = LongSelect(choices=choices).render(name, [], renderer=renderer)
        html_ = choices.options
        for chosen in self.format_value(value):
            tag = f'<option value="{html.escape(chosen)}">'
            html_ = html_.replace(tag, tag[:-1] + " selected>", 1)
        # The attributes as LongSelect writes them: the template's `<select name=...>` head
        # is swapped for this field's own.
        head = LongSelect(attrs=self.attrs).render(name, None, attrs, renderer).split(">", 1)[0]
        # Every part was escaped by LongSelect.
        return mark_safe(head + html_[html_.index(">") :])


def _plain_label(label: Any) -> Any:
    """A choice's label without rule IDs; a group's choices each without theirs."""
    if isinstance(label, list | tuple):
        return [(value, _plain_label(inner)) for value, inner in label]
    return without_rule_ids(str(label))


def plain(form: forms.Form) -> None:
    """The player reads labels, help and choices without rule IDs (issue 12); the shared
    choice sets and the storytellers' forms keep them."""
    for field in form.fields.values():
        if field.label:
            field.label = without_rule_ids(str(field.label))
        if field.help_text:
            field.help_text = without_rule_ids(str(field.help_text))
        if isinstance(field, forms.ChoiceField) and not isinstance(field, forms.ModelChoiceField):
            choices: list[tuple[Any, Any]] = list(field.choices)  # type: ignore[arg-type]
            field.choices = [(value, _plain_label(label)) for value, label in choices]
            grouped = any(isinstance(label, list | tuple) for _value, label in choices)
        else:
            grouped = False
        # Selects written in Python: the page has five forms of them (LongSelect's docstring).
        if type(field.widget) is forms.Select and not grouped:
            long_select(field)


class TextsForm(forms.Form):
    """Sections 1 and 5: saved as the player types (autosave) and by the Save button."""

    notes = forms.CharField(
        label=_("Anything the STs should know about you this month"),
        required=False,
        widget=forms.Textarea(attrs=TEXTAREA),
    )
    game_report = forms.CharField(
        label=_("Game report"),
        required=False,
        # Section 5 sits below sections 2-4 on the page but belongs to the texts form.
        widget=forms.Textarea(attrs={"rows": 6, "form": "texts"}),
        help_text=_("Kept apart from the rest; the storytellers may publish a sanitized copy."),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class KeyedForm(forms.Form):
    # A fresh token per page load: a double click or a re-sent POST adds one item.
    key = forms.CharField(widget=forms.HiddenInput, max_length=64)


class InfluenceActionForm(KeyedForm):
    action = forms.ChoiceField(label=_("What the influence does"), choices=ActionKind.choices)
    influence = forms.ChoiceField(label=_("Influence type"), choices=INFLUENCE_CHOICES)
    points = forms.IntegerField(label=_("Points"), min_value=1, max_value=50, initial=1)
    target_structure = forms.ModelChoiceField(
        label=_("Haven"),
        queryset=Structure.objects.none(),
        required=False,
        help_text=_("For building, repairing (your havens) or attacking (havens you found)."),
    )
    target_name = forms.CharField(
        label=_("Target character (their name)"),
        max_length=120,
        required=False,
        help_text=_("For a search, an attack on someone's influence or an investigation."),
    )
    target_text = forms.CharField(label=_("Other target"), max_length=300, required=False)
    description = forms.CharField(
        label=_("Description"), required=False, widget=forms.Textarea(attrs=TEXTAREA)
    )
    lender = forms.ModelChoiceField(
        label=_("Borrowed from"),
        queryset=Character.objects.none(),
        required=False,
        help_text=_("Only lenders you asked below; their points count once they confirm (INF-03)."),
    )

    def __init__(
        self,
        *args: Any,
        structures: QuerySet[Structure],
        lenders: QuerySet[Character],
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("auto_id", "action_%s")
        super().__init__(*args, **kwargs)
        field = self.fields["target_structure"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = structures
        lender = self.fields["lender"]
        assert isinstance(lender, forms.ModelChoiceField)
        lender.queryset = lenders
        self.fields["influence"].help_text = influence_uses_help()
        plain(self)


def influence_uses_help() -> str:
    """INF-02 in a sentence per restricted action, read from the rules' one table: "Herd
    blood: Herd only. Occult research: Occult only. ... Every other action: any type."""
    return _influence_uses_help(get_language())


@functools.lru_cache(maxsize=32)
def _influence_uses_help(language: str | None) -> str:
    # Fixed rules, in words of the active language: written once per language and process.
    parts = []
    for action in character_rules.INFLUENCE_ACTIONS:
        accepted = character_rules.influence_types_for(action)
        if accepted == character_rules.INFLUENCE_TYPES:
            continue
        parts.append(
            gettext("%(action)s: %(types)s only.")
            % {
                "action": character_rules.influence_action_title(action),
                "types": ", ".join(character_rules.influence_title(t) for t in accepted),
            }
        )
    parts.append(gettext("Every other action: any type."))
    return " ".join(parts)


class LoanForm(forms.Form):
    # Several forms share one page: each gets its own ids, so every label finds its field.
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "loan_%s")
        super().__init__(*args, **kwargs)
        plain(self)

    lender_name = forms.CharField(label=_("Lender (their character's name)"), max_length=120)
    influence = forms.ChoiceField(label=_("Influence type"), choices=INFLUENCE_CHOICES)
    points = forms.IntegerField(label=_("Points"), min_value=1, max_value=50, initial=1)


class DowntimePurchaseForm(PurchaseForm):
    """The characters app's purchase form, in downtime only (DIS-08)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "purchase_%s")
        super().__init__(*args, **kwargs)
        self.fields.pop("moment", None)
        plain(self)

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "kind": data["kind"],
            "discipline": data.get("discipline") or "",
            "levels": [data["level"]] if data.get("level") else [],
            "target": data.get("target") or "",
            "quantity": data["quantity"],
            "teacher_name": data.get("teacher_name") or "",
        }


class PowerForm(KeyedForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "power_%s")
        super().__init__(*args, **kwargs)
        plain(self)

    power = forms.ChoiceField(label=_("Kind of power"), choices=PowerKind.choices)
    target_name = forms.CharField(
        label=_("Target character, if any"),
        max_length=120,
        required=False,
        help_text=_(
            "Only Conditioning, requests to a thrall and torpor holds may touch another "
            "character (DIS-09)."
        ),
    )
    description = forms.CharField(
        label=_("What you do"), widget=forms.Textarea(attrs=TEXTAREA), required=True
    )


class VotesForm(forms.Form):
    """Section 6: one pick per category, from the cast of the game (DT-06): in-character
    categories list the characters who attended, out-of-character ones the players who
    attended, by name; the voter and their own characters are not offered. The values are
    ids, so a typo cannot lose a vote; the service checks the pick again."""

    LABELS = {
        "feared": _("Most feared"),
        "liked": _("Most liked"),
        "respected": _("Most respected"),
        "roleplaying": _("Excellent roleplaying"),
        "costume": _("Best costume"),
    }

    def __init__(self, *args: Any, cast: Cast, voter_id: int | None, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "vote_%s")
        super().__init__(*args, **kwargs)
        # One list per kind of nominee (characters, players), shared by its categories.
        offered: dict[bool, BallotChoices] = {}
        for category in rules.CATEGORIES:
            in_character = category in rules.IN_CHARACTER_CATEGORIES
            if in_character not in offered:
                offered[in_character] = BallotChoices(
                    [
                        ("", _("No vote")),
                        *((n.id, n.name) for n in cast.offered(category, voter_id)),
                    ]
                )
            self.fields[category] = forms.TypedChoiceField(
                label=self.LABELS.get(category, category),
                choices=offered[in_character],
                coerce=int,
                empty_value=None,
                required=False,
                widget=BallotSelect,
                help_text=(
                    _("A character who was at game %(number)s.")
                    if in_character
                    else _("A player who was at game %(number)s.")
                )
                % {"number": cast.game_number},
            )

    def picks(self) -> dict[str, int | None]:
        return {category: self.cleaned_data.get(category) for category in rules.CATEGORIES}
