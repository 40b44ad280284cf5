"""The downtimes' History tabs (issue 16): a submission with its desk items, and one desk item,
found through the app's access checks."""

from django.utils.translation import gettext_lazy as _

from chronicle.history import Subject

from .access import desk_item_for, submission_for

SUBJECTS = {
    "submission": Subject(
        ("downtimes.SubmissionHistory", "downtimes.DeskItemHistory"),
        submission_for,
        "downtime_submission",
        _("History of %(name)s"),
    ),
    "desk-item": Subject(
        ("downtimes.DeskItemHistory",),
        desk_item_for,
        "desk_item",
        _("History of %(name)s"),
    ),
}

# Field labels for the tab where the model's own are Django's untranslated defaults.
LABELS = {
    "haven_attack": _("Haven attack"),
    "haven_project": _("Haven project"),
    "haven_search": _("Haven search"),
    "lender": _("Lender"),
    "receipt_sent_at": _("Receipt sent at"),
    "recorded_by": _("Recorded by"),
    "released_at": _("Released at"),
    "reminder_sent_at": _("Reminder sent at"),
    "requested_at": _("Requested at"),
    "st_notes": _("Storyteller notes"),
    "submission": _("Submission"),
    "submitted_at": _("Submitted at"),
    "target_character": _("Target character"),
    "target_name": _("Target name"),
    "target_structure": _("Target structure"),
    "target_text": _("Target, in words"),
    "withdrawn_at": _("Withdrawn at"),
    "DeskItem": _("Desk item"),
}
