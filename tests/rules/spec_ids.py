"""The rule IDs SPEC.md defines, kept in the repository as `spec_ids.txt` so the coverage test
(test_spec_coverage.py) runs on a clean clone, where the storytellers' `../shared` folder is
absent. Where SPEC.md is present the test also checks that the copy is current.

Regenerate the copy after SPEC.md changes, from the repository's root:

    .venv/bin/python tests/rules/spec_ids.py

And where each ID is cited: `citations(id, files)` finds an ID written out (`HAV-25`, not
`HAV-25b`) or inside one of SPEC's own shorthands, a range (`DIS-03..06`, `HAV-10..22`) or a
list (`GEN-03/04`, `XP-04..07`)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The storytellers' folder sits beside the project (`../shared`); a clone made elsewhere on the
# team's machine (CI clones into a temporary folder) finds it at its usual place, /work/shared.
SPEC_PLACES = (ROOT.parent / "shared" / "SPEC.md", Path("/work/shared/SPEC.md"))
SPEC = next((place for place in SPEC_PLACES if place.exists()), SPEC_PLACES[0])
COPY = Path(__file__).with_name("spec_ids.txt")

_ID = r"[A-Z]{2,4}-\d{2}[a-z]?"
# A definition: a bullet that opens with the bold ID ("- **GEN-01.**") or a table row of
# attributes ("| HAV-10 | Alarm |").
_DEFINED = re.compile(rf"^\s*-\s+\*\*({_ID})\b|^\|\s*({_ID})\s*\|", re.MULTILINE)
# An ID as cited: its prefix, a number, an optional letter, then SPEC's shorthands for more
# numbers of the same prefix: "..06" (a range) or "/04" (a list), in any mix.
_CITED = re.compile(r"\b([A-Z]{2,4})-(\d{2}[a-z]?)((?:(?:\.\.|/)\d{2}[a-z]?)*)(?![0-9A-Za-z])")
_MORE = re.compile(r"(\.\.|/)(\d{2}[a-z]?)")


def defined_ids(spec_text: str) -> list[str]:
    """Every rule ID SPEC defines, in its order, once."""
    found: list[str] = []
    for match in _DEFINED.finditer(spec_text):
        rule_id = match.group(1) or match.group(2)
        if rule_id not in found:
            found.append(rule_id)
    return found


def _number(code: str) -> int:
    return int(code[:2])


def cited_ids(text: str) -> set[str]:
    """The IDs a text cites, a range or list expanded to every number it spans."""
    cited: set[str] = set()
    for match in _CITED.finditer(text):
        prefix, first, rest = match.groups()
        cited.add(f"{prefix}-{first}")
        previous = first
        for joint, code in _MORE.findall(rest):
            if joint == ".." and _number(code) > _number(previous):
                for n in range(_number(previous) + 1, _number(code)):
                    cited.add(f"{prefix}-{n:02d}")
            cited.add(f"{prefix}-{code}")
            previous = code
    return cited


def cited_in(files: Iterable[Path]) -> dict[str, set[Path]]:
    """For each cited ID, the files that cite it."""
    where: dict[str, set[Path]] = {}
    for path in files:
        for rule_id in cited_ids(path.read_text(encoding="utf-8", errors="replace")):
            where.setdefault(rule_id, set()).add(path)
    return where


def read_copy() -> list[str]:
    return [line.strip() for line in COPY.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> int:
    if not SPEC.exists():
        print(f"No {SPEC}: nothing to copy.", file=sys.stderr)
        return 1
    ids = defined_ids(SPEC.read_text(encoding="utf-8"))
    COPY.write_text("".join(f"{rule_id}\n" for rule_id in ids), encoding="utf-8")
    print(f"{len(ids)} rule IDs written to {COPY.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
