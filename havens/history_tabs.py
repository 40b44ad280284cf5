"""The havens' History tab (issue 16): a structure with its attributes, ownerships and projects,
found through the app's access check."""

from django.utils.translation import gettext_lazy as _

from chronicle.history import Subject

from .access import structure_for_staff

SUBJECTS = {
    "haven": Subject(
        (
            "havens.StructureHistory",
            "havens.AttributeHistory",
            "havens.OwnershipHistory",
            "havens.ProjectHistory",
        ),
        structure_for_staff,
        "haven_detail",
        _("History of %(name)s"),
    ),
}

# Field labels for the tab where the model's own are Django's untranslated defaults.
LABELS = {
    "attribute_kind": _("Attribute kind"),
    "built_cycle": _("Built in the downtime of"),
    "destroyed_at": _("Destroyed at"),
    "destroyed_by": _("Destroyed by"),
    "destroyed_cycle": _("Destroyed in the downtime of"),
    "destroyed_note": _("Note on the destruction"),
    "done_at": _("Done at"),
    "done_cycle": _("Done in the downtime of"),
    "ended_at": _("Ended at"),
    "ended_cycle": _("Ended in the downtime of"),
    "ended_why": _("Why it ended"),
    "held_reason": _("Why it is held"),
    "how": _("How"),
    "outer": _("Inside"),
    "paid": _("Paid"),
    "paid_cycle": _("Paid in the downtime of"),
    "repair_of": _("Repair of"),
    "requested_by": _("Requested by"),
    "started_at": _("Started at"),
    "started_cycle": _("Started in the downtime of"),
    "trigger": _("Trigger"),
    "Project": _("Haven project"),
}
