"""CTL-02: control below 1 makes a character a storyteller-run NPC, through the service that
changed control (an approved XP purchase, a recorded diablerie): the status, when and why are
written, the player is told once, and the sheet says why to the player and the storytellers."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from characters.models import Character, Notification, Status, XpKind
from characters.services import ledger, records
from characters.services.control import control_check, control_rating
from characters.services.purchases import purchase_approve, purchase_request
from chronicle.models import Message

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

# Three days after the world's game (2024-03-09): its downtime is open.
NOW = dt.datetime(2024, 3, 12, 18, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(NOW, tick=False):
        yield


def brujah(make_character: Callable[..., Character], world: Any, *, childer: int) -> Character:
    """A Brujah of the 13th generation with 1 willpower and 3 levels (Celerity 1a/1b, Potence
    1a), 10 XP to spend. CTL-01: max(13 − 3 − childer + 1, 1) − 1 (Brujah)."""
    character = make_character(
        "Rook",
        clan="brujah",
        willpower=1,
        childer=childer,
        disciplines={"celerity": "1b", "potence": "1a"},
    )
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(10),
        kind=XpKind.AWARD,
        reason="test award",
        key="award:ctl",
    )
    return character


def buy_potence_1b(world: Any, character: Character) -> None:
    """An in-clan level (3 XP), requested by the player and signed off by an ST: one more
    discipline level, so control falls by 1 (CTL-01)."""
    purchase = purchase_request(
        character=character,
        by=world.users["player_alice"],
        kind="discipline",
        discipline="potence",
        levels=["1b"],
    )
    purchase_approve(purchase=purchase, by=world.users["storyteller"])


# The reproduction, as a table: control before the purchase → after, and the outcome.
@pytest.mark.parametrize(
    ("childer", "before", "after", "status"),
    [
        pytest.param(9, 1, 0, Status.NPC, id="CTL-02-purchase-to-0-npc"),
        pytest.param(8, 2, 1, Status.ACTIVE, id="CTL-02-purchase-to-1-stays"),
        pytest.param(0, 8, 8, Status.ACTIVE, id="CTL-02-capped-brujah-stays"),
    ],
)
def test_ctl02_an_approved_purchase_below_1_makes_an_npc(
    world: Any,
    make_character: Callable[..., Character],
    childer: int,
    before: int,
    after: int,
    status: str,
) -> None:
    character = brujah(make_character, world, childer=childer)
    assert control_rating(character) == before
    buy_potence_1b(world, character)
    character.refresh_from_db()
    assert control_rating(character) == after
    assert character.status == status
    told = Notification.objects.filter(character=character, key__startswith="npc-control:")
    if status == Status.NPC:
        assert character.npc_since == NOW
        assert "Control fell to 0" in character.npc_reason
        assert "Potence 1b" in character.npc_reason and "(CTL-02)" in character.npc_reason
        # The player stays linked: their sheet and ledger are still theirs to read.
        assert character.player == world.users["player_alice"]
        assert told.count() == 1
        assert "storyteller-run NPC" in told.get().subject
        assert Message.objects.filter(
            recipient=world.users["player_alice"], subject__contains="NPC"
        )
    else:
        assert character.npc_since is None and character.npc_reason == ""
        assert not told.exists()


def test_ctl02_a_diablerie_below_1_makes_an_npc(
    world: Any, make_character: Callable[..., Character]
) -> None:
    """XP-04: the diablerie counts at once (diableries +1), so control 1 → 0 (CTL-02)."""
    diablerist = brujah(make_character, world, childer=9)
    victim = make_character("Elder", player="player_bob", clan="ventrue", generation=11)
    records.diablerie_record(
        diablerist=diablerist,
        victim=victim,
        victim_name="",
        victim_generation=0,
        occurred_on=dt.date(2024, 3, 10),
        victim_in_torpor=True,
        killed_by_aggravated_or_coup=False,
        by=world.users["storyteller"],
        now=NOW,
    )
    diablerist.refresh_from_db()
    assert diablerist.status == Status.NPC
    assert "diablerie of Elder" in diablerist.npc_reason
    assert Notification.objects.filter(character=diablerist, key__startswith="npc-control:")


def test_ctl02_a_diablerie_that_leaves_control_at_1_keeps_the_pc(
    world: Any, make_character: Callable[..., Character]
) -> None:
    diablerist = brujah(make_character, world, childer=8)
    records.diablerie_record(
        diablerist=diablerist,
        victim=None,
        victim_name="An outsider",
        victim_generation=12,
        occurred_on=dt.date(2024, 3, 10),
        victim_in_torpor=True,
        killed_by_aggravated_or_coup=False,
        by=world.users["storyteller"],
        now=NOW,
    )
    diablerist.refresh_from_db()
    assert diablerist.status == Status.ACTIVE and control_rating(diablerist) == 1


def test_ctl02_check_is_once_and_skips_what_has_no_control(
    world: Any, make_character: Callable[..., Character]
) -> None:
    character = brujah(make_character, world, childer=10)  # already 0: a sheet from before
    st = world.users["storyteller"]
    assert control_check(character, by=st, now=NOW) is True
    assert "a storyteller's change to the sheet" in character.npc_reason
    # Already an NPC: nothing more is written and the player is not told twice.
    assert control_check(character, by=st, now=NOW + dt.timedelta(hours=1)) is False
    assert Notification.objects.filter(character=character).count() == 1
    ghoul = make_character("Renfield", player="player_bob", creature="ghoul")
    assert control_rating(ghoul) is None
    assert control_check(ghoul, by=st, now=NOW) is False


def test_ctl02_the_sheet_says_why_to_the_player_and_the_storytellers(
    world: Any, make_character: Callable[..., Character]
) -> None:
    character = brujah(make_character, world, childer=9)
    buy_potence_1b(world, character)
    url = f"/c/{world.chronicle.slug}/characters/{character.pk}/"
    for persona in ("player_alice", "storyteller"):
        response = world.client(persona).get(url)
        page = response.content.decode()
        assert response.status_code == 200, persona
        assert "Storyteller-run NPC" in page, persona
        assert "Control fell to 0 after the approved XP purchase" in page, persona
    assert world.client("player_bob").get(url).status_code == 404
