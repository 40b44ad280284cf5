"""Player text in plain words (issue 12): rule IDs are the storytellers' shorthand, so text a
player reads drops a rule reference in brackets ("Awards (DT-03..08)" reads "Awards"; "no
signed waiver for the game (DT-04)." reads "no signed waiver for the game."). Pure, no Django:
storytellers' pages keep the IDs and call nothing here."""

from __future__ import annotations

import re

_ID = r"[A-Z]{2,5}-\d+[a-z]?"
# One rule or several: "DT-04", "DT-03..08", "DT-07/08", "XP-02, CRE-09", "HAV-10..24".
_IDS = rf"{_ID}(?:\s*(?:\.\.|/|,|–|-|and)\s*(?:{_ID}|\d+[a-z]?))*"
_IN_BRACKETS = re.compile(rf"\s*\((?:INTERPRETATION\s+|see\s+)?{_IDS}\)")


def without_rule_ids(text: str) -> str:
    """The text without its bracketed rule references; anything else is left as it is."""
    return _IN_BRACKETS.sub("", text)
