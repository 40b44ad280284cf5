"""Invariants of the stored chronicle (issue 16): what must hold whatever code wrote the rows,
checked after the fact by `manage.py check_invariants` (and by CI after the fault and race
tests).

Each app states its own in an `invariants.py` beside `portability.py` (`CHECKS`, a list of
`Invariant`), the way `seed_demo` and the export find each app's module, so the chronicle app
still names no app above it. A check takes one chronicle and returns the ids of the rows that
break it, from set-based queries (an aggregate or an anti-join per chronicle, never a query per
row); the runner goes chronicle by chronicle so no query spans a whole deployment.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType

from django.apps import apps

from ..models import Chronicle

# Ids shown per failing check: enough to start looking, short enough for one line.
SHOWN_IDS = 5


@dataclass(frozen=True)
class Invariant:
    """`name` is what the command prints; `find` returns the ids (of `what`) that break it in
    one chronicle."""

    name: str
    what: str
    find: Callable[[Chronicle], Iterable[object]]


@dataclass
class Result:
    invariant: Invariant
    count: int = 0
    first: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.count == 0

    def line(self) -> str:
        if self.ok:
            return f"{self.invariant.name}: ok"
        shown = ", ".join(self.first)
        more = ", ..." if self.count > len(self.first) else ""
        return (
            f"{self.invariant.name}: {self.count} mismatch(es), first {self.invariant.what} "
            f"{shown}{more}"
        )


def app_modules() -> list[ModuleType]:
    """Every installed app's `invariants` module, in INSTALLED_APPS order."""
    found = []
    for config in apps.get_app_configs():
        name = f"{config.name}.invariants"
        if importlib.util.find_spec(name):
            module = importlib.import_module(name)
            if hasattr(module, "CHECKS"):
                found.append(module)
    return found


def invariants() -> list[Invariant]:
    return [check for module in app_modules() for check in module.CHECKS]


def check_invariants(chronicles: Iterable[Chronicle] | None = None) -> list[Result]:
    """Run every invariant on each chronicle (all of them by default); one result per
    invariant, its mismatches summed over the chronicles (ids prefixed by the chronicle's slug
    when more than one is checked)."""
    chosen = list(chronicles) if chronicles is not None else list(Chronicle.objects.order_by("pk"))
    results = [Result(check) for check in invariants()]
    for chronicle in chosen:
        for result in results:
            ids = list(result.invariant.find(chronicle))
            result.count += len(ids)
            room = SHOWN_IDS - len(result.first)
            if room > 0:
                prefix = f"{chronicle.slug}:" if len(chosen) > 1 else ""
                result.first.extend(f"{prefix}{i}" for i in ids[:room])
    return results
