"""The characters' History tab (issue 16): a character's own events and its records', found
through the app's access check (another chronicle's character is a 404)."""

from django.utils.translation import gettext_lazy as _

from chronicle.history import Subject

from .access import character_for_staff

SUBJECTS = {
    "character": Subject(
        (
            "characters.CharacterHistory",
            "characters.TitleHistory",
            "characters.DisciplineLevelHistory",
            "characters.RitualHistory",
            "characters.DisadvantageHistory",
            "characters.ItemHistory",
        ),
        character_for_staff,
        "character_sheet",
        _("History of %(name)s"),
    ),
}

# Field labels for the tab where the model's own are Django's untranslated defaults.
LABELS = {
    "acquired": _("Acquired"),
    "approval_note": _("Approval note"),
    "approved_at": _("Approved at"),
    "approved_by": _("Approved by"),
    "background_approved_at": _("Background approved at"),
    "background_approved_by": _("Background approved by"),
    "background_story": _("Background story"),
    "business": _("Business influence"),
    "childer": _("Childer"),
    "chosen_disciplines": _("Chosen disciplines"),
    "clan": _("Clan"),
    "creation": _("Creation choices"),
    "derangement": _("Derangement"),
    "downgraded": _("Downgraded"),
    "embrace_earth": _("Earth of the embrace"),
    "expires_on": _("Expires on"),
    "extra_control": _("Extra control"),
    "feeding_demographic": _("Feeding demographic"),
    "government": _("Government influence"),
    "hideously_ugly": _("Hideously ugly"),
    "imported_notes": _("Notes from the import"),
    "major": _("Major"),
    "npc_reason": _("Why the storytellers run it"),
    "npc_since": _("Run by the storytellers since"),
    "occult": _("Occult influence"),
    "protean_form": _("Protean form"),
    "rebuilds": _("Rebuilds"),
    "repaired_at": _("Repaired at"),
    "sewer_lore": _("Sewer lore"),
    "st_notes": _("Storyteller notes"),
    "submitted_at": _("Submitted at"),
    "underworld": _("Underworld influence"),
    "xp_spent_before_rebuild": _("XP spent before the rebuild"),
    "Disadvantage": _("Disadvantage"),
}
