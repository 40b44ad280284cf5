"""The Import page's forms: the upload of Grapevine files, and the storytellers' choice for each
value the mapping table lacks."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile
from django.utils.translation import gettext_lazy as _

from ..importers import grapevine
from ..models import CLAN_CHOICES, DISCIPLINE_CHOICES, INFLUENCE_CHOICES, Creature, Sect, Status
from ..services.imports import MAX_FILE_BYTES

MAX_FILES = 20


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".gex,.gv2,.xml"}))
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if not data:
            raise forms.ValidationError(self.error_messages["required"], code="required")
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class UploadForm(forms.Form):
    files = MultipleFileField(  # type: ignore[assignment]
        label=_("Grapevine files"),
        help_text=_(
            "One or more files saved by Grapevine 3 as XML (.gex or .gv2). A file in Grapevine's "
            "binary format must first be exported as XML from Grapevine."
        ),
    )

    def clean_files(self) -> list[tuple[str, bytes]]:
        uploaded: list[UploadedFile] = self.cleaned_data["files"]
        if len(uploaded) > MAX_FILES:
            raise forms.ValidationError(
                _("Upload at most %(n)s files at a time.") % {"n": MAX_FILES}
            )
        files = []
        for upload in uploaded:
            if upload.size is not None and upload.size > MAX_FILE_BYTES:
                raise forms.ValidationError(
                    _("%(name)s is larger than %(mb)s MB.")
                    % {"name": upload.name, "mb": MAX_FILE_BYTES // (1024 * 1024)}
                )
            files.append((str(upload.name or "upload.gex"), upload.read()))
        return files


# Labels stay lazy: each page shows them in its own language.
TARGET_LABELS: dict[str, dict[str, Any]] = {
    "kind": {str(k): v for k, v in Creature.choices},
    "clan": {str(k): v for k, v in CLAN_CHOICES},
    "sect": {str(k): v for k, v in Sect.choices},
    "discipline": {str(k): v for k, v in DISCIPLINE_CHOICES},
    "influence": {str(k): v for k, v in INFLUENCE_CHOICES},
    "status": {str(k): v for k, v in Status.choices},
}
WHAT_LABELS = {
    "kind": _("Kind of character"),
    "clan": _("Clan"),
    "sect": _("Sect"),
    "discipline": _("Discipline"),
    "influence": _("Influence"),
    "status": _("Status"),
}
KEEP_AS_TEXT = {
    "clan": _("No clan (kept as text on the sheet)"),
    "sect": _("No sect (kept as text on the sheet)"),
    "discipline": _("Keep as text on the sheet"),
    "influence": _("Keep as text on the sheet"),
}


class ChoicesForm(forms.Form):
    """One choice per unmapped value ("Nihilist" → Anarch), named c0, c1, … in the order of
    the report's `unmapped()` rows; `choices()` gives them keyed as the services want."""

    def __init__(self, *args: Any, rows: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rows = rows
        for index, row in enumerate(rows):
            what = row["what"]
            options = [
                (
                    target,
                    KEEP_AS_TEXT.get(what, "—") if target == "" else TARGET_LABELS[what][target],
                )
                for target in grapevine.TARGETS[what]
            ]
            self.fields[f"c{index}"] = forms.ChoiceField(
                label=f"{WHAT_LABELS[what]} “{row['value']}”",
                choices=options,
                initial=row["chosen"],
                help_text=row["where"],
                # Left out (an older form, a script): what the preview showed stands.
                required=False,
            )

    def choices(self) -> dict[str, str]:
        data = getattr(self, "cleaned_data", {})
        chosen: dict[str, str] = {}
        for index, row in enumerate(self.rows):
            value = data.get(f"c{index}")
            given = value is not None and f"c{index}" in self.data
            chosen[str(row["key"])] = str(value if given else row["chosen"])
        return chosen
