"""The demo chronicle's havens, made by the same services the pages call: a loft its owner built
this downtime, the Prince's Elysium with a crypt inside, a safehouse whose alarm fired when it
was attacked at the last game, a haven still being paid for, a pending search, and an object
hidden on site.

`chronicle`'s `seed_demo` command calls `seed` after the characters app's. Idempotent: a
chronicle that already has structures is left as it is.
"""

from __future__ import annotations

from typing import Any

from characters.models import Character
from chronicle.models import Chronicle, Game
from chronicle.services import current_downtime

from .models import Project, Structure
from .services.ownership import (
    AttributeRequest,
    construction_resolve,
    project_contribute,
    structure_design,
)
from .services.searches import (
    AttackerEntry,
    hidden_object_register,
    reinforcement_attack_record,
    search_submit,
)


def _pay(project: Project, character: Character, by: Any, spends: dict[str, int]) -> None:
    for influence, points in spends.items():
        project_contribute(
            project=project,
            character=character,
            influence=influence,
            points=points,
            by=by,
            key=f"demo:{project.pk}:{character.pk}:{influence}",
        )


def _design(
    character: Character, by: Any, name: str, location: str, *lines: AttributeRequest, **kw: Any
) -> tuple[Structure, list[Project]]:
    structure = structure_design(
        character=character,
        by=by,
        kind=kw.pop("kind", "outer"),
        name=name,
        location=location,
        attributes=lines,
        **kw,
    )
    return structure, list(structure.projects.order_by("pk"))


def seed(*, chronicle: Chronicle, users: dict[str, Any], stdout: Any = None) -> None:
    if Structure.objects.filter(chronicle=chronicle).exists():
        return
    cycle = current_downtime(chronicle)
    game = Game.objects.filter(chronicle=chronicle).order_by("-date").first()
    if cycle is None or game is None:
        return
    st = users["st_lucia"]
    pcs = {c.name: c for c in Character.objects.filter(chronicle=chronicle)}
    isabella, marcus, felix = pcs["Isabella Moreau"], pcs["Marcus Steel"], pcs["Felix Grant"]
    prince, dmitri = pcs["Prince Aldric"], pcs["Old Dmitri"]

    # Isabella's loft: a two-way lock and a camera, paid in full this downtime.
    _loft, projects = _design(
        isabella,
        users["alice"],
        "The Velvet Loft",
        "Top floor above the Moreau gallery, Newbury Street",
        AttributeRequest("two_way_lock"),
        AttributeRequest("camera"),
        description="Silk curtains, a piano nobody plays, and a door that is not a door.",
    )
    _pay(projects[0], isabella, users["alice"], {"business": 1, "herd": 1})
    _pay(projects[1], isabella, users["alice"], {"occult": 1})

    # The Prince's Elysium (an ST acts for the NPC): locks and an alarm, with a crypt inside.
    elysium, projects = _design(
        prince,
        st,
        "The Elysium Theater",
        "The old Colonial Theater, Boylston Street",
        AttributeRequest("two_way_lock", 2),
        AttributeRequest("alarm", trigger="penetration", effect="page"),
    )
    _pay(projects[0], prince, st, {"business": 4})
    _pay(projects[1], prince, st, {"government": 5})

    # Felix's safehouse: an alarm that rings when the place is attacked.
    safehouse, projects = _design(
        felix,
        users["felix"],
        "Dock 9 Safehouse",
        "A shipping container behind Dock 9, Charlestown",
        AttributeRequest("alarm", trigger="attack", effect="audible"),
    )
    _pay(projects[0], felix, users["felix"], {"government": 4, "business": 1})

    construction_resolve(cycle=cycle)

    # A crypt in the Elysium, planned by the Prince, not yet paid for (his influence is spent).
    _design(
        prince,
        st,
        "The Prince's Crypt",
        "Beneath the Elysium's stage",
        AttributeRequest("seals"),
        kind="crypt",
        outer=elysium,
    )

    # At the last game Marcus and a hired ghoul broke into the safehouse: its alarm rang.
    reinforcement_attack_record(
        structure=safehouse,
        game=game,
        attackers=[
            AttackerEntry(character=marcus, name=marcus.name, potence=2),
            AttackerEntry(character=None, name="A hired ghoul", potence=0),
        ],
        results=[True],
        by=st,
        key="demo:safehouse-attack",
        note="With no reinforcement to stop them, they were through the door in one test.",
    )

    # Marcus hunts for Isabella's haven this downtime (resolved with the cycle).
    search_submit(
        character=marcus,
        target_name="Isabella Moreau",
        influence="underworld",
        points=3,
        by=users["bob"],
        key="demo:marcus-search",
    )

    # Old Dmitri hid a ledger of debts on site (HID-01).
    hidden_object_register(
        chronicle=chronicle,
        hider=dmitri,
        description="A leather ledger of debts owed to the Nosferatu",
        place="Inside the broken piano in the lobby",
        obfuscate_bid=6,
        number=7,
        game=game,
        by=st,
        key="demo:dmitri-ledger",
    )
    if stdout is not None:
        stdout.write("Havens: 4 structures, 1 alarm fired, 1 search pending, 1 hidden object.")
