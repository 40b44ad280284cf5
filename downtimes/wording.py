"""The resolution's outcome texts, in the language of whoever reads them (issue 17).

A resolution writes each outcome once, in nobody's language (a worker, or the request of the
storyteller who resolved), and players read it later on the results page and in their summary
mail, storytellers on the preview, each in their own language. So an outcome keeps its texts
twice (`Outcome.texts`):

- in English, in its columns (`title`, `explanation`, `public_text`): the XP ledger's reason,
  the export, and what is shown when a text has no phrase (outcomes written before phrases);
- as phrases: the English msgid with its parameters, which `render` gives in the active
  language when the text is shown.

A phrase is JSON: ``[msgid, {name: value, ...}]``. A value is a plain value (a name, a number,
shown as it is) or one of:

- a phrase (a list): itself rendered (a reason inside a sentence);
- ``{"stored": text}``: a sentence a havens row keeps in English (`havens.words`), or a rules
  refusal written in English, translated through `chronicle.stored_text`;
- ``{"label": kind, "value": code}``: the label of a choice (`LABELS`), lower case when
  ``"lower": true``;
- ``{"join": [values]}``: the values rendered and joined with ", ".

Write a msgid with `gettext_noop` where it is built, so the catalog has it; use whole sentences,
one per case, and `%(name)s` placeholders only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from django.utils import translation
from django.utils.formats import number_format
from django.utils.translation import gettext

from characters.models import INFLUENCE_CHOICES
from characters.models import Status as CharacterStatus
from chronicle.stored_text import stored_text
from havens.models import (
    ATTRIBUTE_CHOICES,
    ChangeKind,
    ChangeStatus,
    DestroyedBy,
    OwnershipHow,
    ProjectStatus,
    StructureKind,
    StructureStatus,
)

Phrase = list[Any]


# The choice sets whose labels a phrase may name, by the key it stores.
def _vote_categories() -> Mapping[str, Any]:
    from .services.votes import CATEGORY_LABELS  # services import this module's users

    return CATEGORY_LABELS


LABELS: Mapping[str, Callable[[], Mapping[str, Any]]] = {
    "character_status": lambda: dict(CharacterStatus.choices),
    "vote_category": _vote_categories,
    "influence": lambda: dict(INFLUENCE_CHOICES),
    "attribute": lambda: dict(ATTRIBUTE_CHOICES),
    "change_kind": lambda: dict(ChangeKind.choices),
    "change_status": lambda: dict(ChangeStatus.choices),
    "destroyed_by": lambda: dict(DestroyedBy.choices),
    "ownership_how": lambda: dict(OwnershipHow.choices),
    "project_status": lambda: dict(ProjectStatus.choices),
    "structure_kind": lambda: dict(StructureKind.choices),
    "structure_status": lambda: dict(StructureStatus.choices),
}


def phrase(msgid: str, **params: Any) -> Phrase:
    """A phrase to keep: `msgid` (marked with gettext_noop by the caller) and its parameters.
    Decimals are kept as their text and written the reader's way when shown (2,5 in Italian)."""
    return [msgid, {name: _kept(value) for name, value in params.items()}]


def _kept(value: Any) -> Any:
    if isinstance(value, Decimal):
        return {"number": str(value)}
    return value


def stored(text: str) -> dict[str, str]:
    """A parameter that is a sentence kept in English elsewhere (a havens row, a rules
    refusal written in English): translated when shown, if it is a known one."""
    return {"stored": text}


def label(kind: str, value: str, *, lower: bool = False) -> dict[str, Any]:
    """A parameter that is a choice's label (`LABELS`)."""
    return {"label": kind, "value": value, "lower": lower}


def joined(values: list[Any]) -> dict[str, list[Any]]:
    """A parameter that is a list, joined with ", " once each value is rendered."""
    return {"join": [_kept(v) for v in values]}


def _value(value: Any, translate: bool) -> Any:
    if isinstance(value, list):
        return render(value, translate=translate)
    if isinstance(value, dict):
        if "number" in value:
            return number_format(Decimal(value["number"])) if translate else value["number"]
        if "stored" in value:
            text = str(value["stored"])
            return stored_text(text) if translate else text
        if "label" in value:
            code = value.get("value") or ""
            choices = LABELS.get(value["label"])
            if choices is None:
                shown = str(code)
            elif translate:
                shown = str(choices().get(code, code))
            else:
                with translation.override("en"):
                    shown = str(choices().get(code, code))
            return shown.lower() if value.get("lower") else shown
        if "join" in value:
            return ", ".join(str(_value(v, translate)) for v in value["join"])
    return value


def render(data: Any, *, translate: bool = True) -> str:
    """The text of a kept phrase: in the active language, or in English (`translate=False`,
    what the English columns keep). A phrase whose translation breaks its placeholders falls
    back to the English sentence."""
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        return ""
    msgid = data[0]
    raw = data[1] if len(data) > 1 and isinstance(data[1], dict) else {}
    params = {name: _value(value, translate) for name, value in raw.items()}
    text = gettext(msgid) if translate else msgid
    if not params:
        return text
    try:
        return text % params
    except (KeyError, ValueError, TypeError):
        return msgid % params


def english(data: Any) -> str:
    """The English text of a kept phrase (what the outcome's column keeps)."""
    return render(data, translate=False)


def worded(**texts: Phrase) -> dict[str, Any]:
    """An outcome's text fields from their phrases: each English column, and `texts`."""
    # Stripped: a part left empty (an outcome with no words) leaves no space at the end.
    return {**{name: english(kept).strip() for name, kept in texts.items()}, "texts": dict(texts)}
