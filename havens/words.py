"""Sentences the havens keep in a row and show later, in the reader's language (issue 17).

A held build's reason, the outcome of a change of owners, why an ownership ended, a search's or
an attack's arithmetic, an alarm's note: each is written once, by a resolution or a service that
runs in nobody's language in particular, and read later by players and storytellers in theirs.
So the row keeps the English sentence (marked with `gettext_noop`, filled with `%`, never an
f-string), and `translated` (`chronicle.stored_text`) gives it in the active language when it is
shown: a sentence with parameters is matched back to its English to recover them, and a
parameter that is itself one of these sentences (a vote's tally inside a destruction's outcome)
is translated too. Anything else (a storyteller's note) is shown as it was written.

Every sentence a havens row keeps is defined and registered here, so writers and readers share
one list; `HavensConfig.ready` imports this module, so a worker writing a mail knows them too.
A refusal of the rules kept in a row (a void change's outcome) is written in English as well
(`translation.override("en")`), and registered with the rules' catalog entry.
"""

from __future__ import annotations

from django.utils.translation import gettext_noop

from chronicle.stored_text import stored_sentences, stored_text

# --- Fixed sentences ---------------------------------------------------------------------------

# Project.held_reason
THEFT_CANCELS = gettext_noop(
    "Cancelled by the theft: the new owners replace alarms and locks (HAV-07)."
)
BREACHED_HELD = gettext_noop(
    "The reinforcement was breached before this was built: the storytellers give the influence "
    "back, and it can be ordered again once repaired (HAV-24)."
)
CRYPT_BUILD_HELD = gettext_noop(
    "A crypt inside a mobile haven cannot have this (HAV-23); it waits for the storytellers."
)
# HAV-23/HAV-04: the outer haven's owners learn that a crypt objects, never which attribute.
CRYPT_REFUSES_MOBILITY = gettext_noop(
    "A crypt inside this haven does not allow Mobility (HAV-23); the storytellers can tell its "
    "owner."
)
# HAV-03/HAV-04: all the crypt's owner may learn of a destruction vote: never who voted, nor
# how many owners the outer haven has. (OwnershipChange.note, Structure.destroyed_note)
CRYPT_DESTRUCTION = gettext_noop("Destruction ordered by the outer haven's owners (HAV-03).")

# Ownership.ended_why
HAVEN_DESTROYED = gettext_noop("The haven was destroyed.")
FORSAKEN = gettext_noop("Forsaken (HAV-06).")
DIED_WITHOUT_WILL = gettext_noop("Died without a will (HAV-06).")
FORSAKEN_AFTER_ABSENCE = gettext_noop("Forsaken after absence (HAV-06).")
TAKEN_BY_THEFT = gettext_noop("Taken by theft (HAV-07).")

# OwnershipChange.note for the changes a resolution makes
NOTE_DIED_WITHOUT_WILL = gettext_noop("The owner died without a will (HAV-06).")
NOTE_ABSENT = gettext_noop("The owner's player was absent from play too long (HAV-06).")
NOTE_THIEVES = gettext_noop("Controlled by thieves (HAV-07).")

# OwnershipChange.outcome
REPLACED_WILL = gettext_noop("Replaced by a newer will (HAV-05).")
NO_RECIPIENT = gettext_noop("No recipient was linked to a character (HAV-05).")
CRYPT_ONE_OWNER = gettext_noop("A crypt has exactly one owner (HAV-01, HAV-05).")
# The refusal of `rules.forsake_outcome` on bad data, kept as a void forsaking's outcome.
RULES_CRYPT_ONE_OWNER = gettext_noop("A crypt has exactly one owner (HAV-01).")
NO_LONGER_STANDS = gettext_noop("The haven no longer stands (HAV-05).")
NO_LONGER_STANDS_ATTACKED = gettext_noop("The haven no longer stands.")
MAJORITY_LOST = gettext_noop(
    "The outer haven's owners changed: the majority no longer holds (HAV-03)."
)
DESTROYED_BY_OWNERS = gettext_noop("Destroyed by the outer haven's owners (HAV-03).")
NO_LONGER_OWNS = gettext_noop("The character no longer owns it (HAV-05).")
DESTROYED_RULING = gettext_noop("The haven was destroyed (HAV-05).")
FORSAKEN_CRYPT = gettext_noop("Forsaken by its owner: the crypt is destroyed (HAV-06).")
FORSAKEN_ONE_LEFT = gettext_noop(
    "A partial owner forsook it; the one owner left is now exclusive (HAV-06)."
)
FORSAKEN_OTHERS_KEEP = gettext_noop(
    "A partial owner forsook it; the other owners keep it (HAV-06)."
)

# Structure.destroyed_note
OUTER_DESTROYED_RULING = gettext_noop("Its outer haven was destroyed by a storyteller's ruling.")
RESISTANCE_BELOW_ZERO = gettext_noop("Influence resistance fell below zero (HAV-25c).")
OUTER_DESTROYED_ATTACK = gettext_noop(
    "Its outer haven was destroyed by an influence attack (HAV-25c)."
)

# Search.explanation (storytellers)
SEARCH_UNLINKED = gettext_noop("No target was linked to this search: it found nothing (HAV-25b).")
SEARCH_HOMELESS = gettext_noop("The target had no standing haven: nothing to find (HAV-25b).")

# InfluenceAttack.explanation (storytellers)
ATTACK_ALREADY_DESTROYED = gettext_noop(
    "The haven was already destroyed; the attack did nothing (HAV-25c)."
)
ATTACK_MOBILE = gettext_noop("A mobile haven is immune to influence attacks (HAV-25c).")


# --- Sentences with parameters (written as `SENTENCE % {...}`) ----------------------------------

TRANSFERRED_TO = gettext_noop("Transferred to %(name)s (HAV-05).")
LEFT_BY_WILL_TO = gettext_noop("Left by will to %(name)s (HAV-05).")
RULING_ENDED = gettext_noop("Storyteller ruling: %(note)s")
CANNOT_RECEIVE = gettext_noop("%(name)s can no longer receive it (HAV-05).")
# Storytellers only: who voted and how many owners (HAV-04 keeps both from the crypt's owner).
CRYPT_VOTE_TALLY = gettext_noop(
    "%(in_favour)s of %(owners)s owners of the outer haven in favour: %(voters)s (HAV-03)."
)
DESTROYED_BY_OWNERS_TALLY = gettext_noop(
    "Destroyed by the outer haven's owners (HAV-03). %(tally)s"
)
FORSAKEN_OUTER = gettext_noop(
    "Forsaken by its exclusive owner: destroyed, with every crypt inside it (crypts: "
    "%(crypts)s) (HAV-06)."
)
THIEVES_OF_CRYPT = gettext_noop(
    "%(thieves)s thieves controlled this crypt, but a crypt has exactly one owner (HAV-01): the "
    "owners are unchanged; a storyteller rules."
)
TAKEN_BY_THIEVES = gettext_noop(
    "Taken by thieves (%(thieves)s); every alarm and lock is inoperative (HAV-07)."
)
SEARCH_FOUND = gettext_noop(
    "search of %(spent)s influence against %(hiding_points)s hiding points: found"
)
SEARCH_NOT_FOUND = gettext_noop(
    "search of %(spent)s influence against %(hiding_points)s hiding points: not found"
)
RULED_FOUND = gettext_noop("%(explanation)s; a storyteller ruled it found: %(note)s")
RULED_NOT_FOUND = gettext_noop("%(explanation)s; a storyteller ruled it not found: %(note)s")
ATTACK_DESTROYS = gettext_noop(
    "%(points)s influence against %(before)s resistance: below zero, the haven is destroyed, and "
    "any crypt inside it with it (HAV-25c)."
)
ATTACK_LEAVES = gettext_noop(
    "%(points)s influence against %(before)s resistance: %(after)s left, the haven stands "
    "(HAV-25c)."
)
# InfluenceSpend.reason (the characters' influence ledger)
SPEND_SEARCH = gettext_noop("Haven search for %(name)s")
SPEND_SEARCH_AT_GAME = gettext_noop("Haven search for %(name)s at %(game)s")
REFUND_SEARCH = gettext_noop("Withdrew from a haven search")
SPEND_ATTACK = gettext_noop("Influence attack on a haven")
REFUND_ATTACK = gettext_noop("Withdrew an influence attack")
SPEND_ATTRIBUTE = gettext_noop("Haven %(haven)s: add an attribute")
SPEND_REPAIR = gettext_noop("Haven %(haven)s: repair")
REFUND_HELD = gettext_noop("Held project released: %(project)s")
# AlarmFiring.note (the game as its name reads)
ALARM_ATTACK = gettext_noop("Attack at %(game)s")
ALARM_FAILED_OPENING = gettext_noop("Failed opening at %(game)s")
ALARM_LOCKS_BEATEN = gettext_noop("Every two-way lock beaten at %(game)s")

stored_sentences(
    THEFT_CANCELS,
    BREACHED_HELD,
    CRYPT_BUILD_HELD,
    CRYPT_REFUSES_MOBILITY,
    CRYPT_DESTRUCTION,
    HAVEN_DESTROYED,
    FORSAKEN,
    DIED_WITHOUT_WILL,
    FORSAKEN_AFTER_ABSENCE,
    TAKEN_BY_THEFT,
    NOTE_DIED_WITHOUT_WILL,
    NOTE_ABSENT,
    NOTE_THIEVES,
    REPLACED_WILL,
    NO_RECIPIENT,
    CRYPT_ONE_OWNER,
    RULES_CRYPT_ONE_OWNER,
    NO_LONGER_STANDS,
    NO_LONGER_STANDS_ATTACKED,
    MAJORITY_LOST,
    DESTROYED_BY_OWNERS,
    NO_LONGER_OWNS,
    DESTROYED_RULING,
    FORSAKEN_CRYPT,
    FORSAKEN_ONE_LEFT,
    FORSAKEN_OTHERS_KEEP,
    OUTER_DESTROYED_RULING,
    RESISTANCE_BELOW_ZERO,
    OUTER_DESTROYED_ATTACK,
    SEARCH_UNLINKED,
    SEARCH_HOMELESS,
    ATTACK_ALREADY_DESTROYED,
    ATTACK_MOBILE,
    TRANSFERRED_TO,
    LEFT_BY_WILL_TO,
    RULING_ENDED,
    CANNOT_RECEIVE,
    CRYPT_VOTE_TALLY,
    DESTROYED_BY_OWNERS_TALLY,
    FORSAKEN_OUTER,
    THIEVES_OF_CRYPT,
    TAKEN_BY_THIEVES,
    SEARCH_FOUND,
    SEARCH_NOT_FOUND,
    RULED_FOUND,
    RULED_NOT_FOUND,
    ATTACK_DESTROYS,
    ATTACK_LEAVES,
    ALARM_ATTACK,
    ALARM_FAILED_OPENING,
    ALARM_LOCKS_BEATEN,
    SPEND_SEARCH,
    SPEND_SEARCH_AT_GAME,
    REFUND_SEARCH,
    SPEND_ATTACK,
    REFUND_ATTACK,
    SPEND_ATTRIBUTE,
    SPEND_REPAIR,
    REFUND_HELD,
)


def translated(text: str) -> str:
    """`text`, a sentence a havens row keeps in English, in the active language (anything
    else, such as a storyteller's note, as it is)."""
    return stored_text(text)
