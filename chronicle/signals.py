"""Signals the chronicle app sends, so the apps above it act on a membership's end without this
ground-floor app naming them (characters leave play, for instance)."""

from django.dispatch import Signal

# Sent inside the transaction that ends a membership, before the row goes: receivers get
# chronicle, user, by (the acting user), characters ("retired" or "npc") and now.
membership_ended = Signal()
