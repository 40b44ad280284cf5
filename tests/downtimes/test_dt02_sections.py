"""DT-02: a downtime's six sections (who you are; influence use; spending XP; special powers;
game report; voting) are all optional, and the game report is kept separate from what other
readers see. Written against the real services and pages."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from characters.models import Character, XpKind
from characters.services import ledger
from downtimes.models import DeskItem, Submission, SubmissionStatus, Vote
from downtimes.services import submissions as services
from downtimes.services import votes as vote_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

SECRET = "I fed on the ghoul of the Prince behind the theatre."
SANITIZED = "A night at the theatre, told by a Toreador."


def _notes(world: Any, sub: Submission) -> None:
    services.submission_save(
        submission=sub, by=world.users["player_alice"], notes="Lucien, Toreador.", version=1
    )


def _influence(world: Any, sub: Submission) -> None:
    services.influence_action_add(
        submission=sub,
        by=world.users["player_alice"],
        influence="business",
        points=1,
        action="other",
        description="Buy the gallery's debts.",
        key="dt02",
    )


def _xp(world: Any, sub: Submission) -> None:
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(5),
        kind=XpKind.AWARD,
        reason="Game 1",
        key="seed:dt02",
    )
    services.purchase_add(
        submission=sub, by=world.users["player_alice"], kind="trait", target="mental"
    )


def _power(world: Any, sub: Submission) -> None:
    services.power_add(
        submission=sub,
        by=world.users["player_alice"],
        power="ritual",
        description="Ward my haven.",
        key="dt02",
    )


def _report(world: Any, sub: Submission) -> None:
    services.submission_save(
        submission=sub, by=world.users["player_alice"], game_report=SECRET, version=1
    )


def _votes(world: Any, sub: Submission) -> None:
    services.votes_save(
        submission=sub, by=world.users["player_alice"], picks={"feared": "Marguerite"}
    )


def _nothing(world: Any, sub: Submission) -> None:
    return None


SECTIONS: dict[str, Callable[[Any, Submission], None]] = {
    "notes": _notes,
    "influence": _influence,
    "xp": _xp,
    "power": _power,
    "report": _report,
    "votes": _votes,
}


def _filled(sub: Submission) -> set[str]:
    """Which sections hold something, read back from the database."""
    sub.refresh_from_db()
    kinds = set(DeskItem.objects.filter(submission=sub).values_list("kind", flat=True))
    filled = {name for name in ("influence", "power") if name in kinds}
    if "purchase" in kinds:
        filled.add("xp")
    if sub.notes:
        filled.add("notes")
    if sub.game_report:
        filled.add("report")
    if Vote.objects.filter(submission=sub).exists():
        filled.add("votes")
    return filled


# Each row files a downtime with only that section (or none) and submits it.
@pytest.mark.parametrize(
    ("section", "fill"),
    [
        pytest.param("", _nothing, id="DT-02-every-section-empty-accepted"),
        pytest.param("notes", _notes, id="DT-02-only-who-you-are"),
        pytest.param("influence", _influence, id="DT-02-only-influence-use"),
        pytest.param("xp", _xp, id="DT-02-only-spending-xp"),
        pytest.param("power", _power, id="DT-02-only-special-powers"),
        pytest.param("report", _report, id="DT-02-only-game-report"),
        pytest.param("votes", _votes, id="DT-02-only-voting"),
    ],
)
def test_dt02_every_section_is_optional(
    world: Any,
    draft: Submission,
    marguerite: Character,
    section: str,
    fill: Callable[[Any, Submission], None],
) -> None:
    fill(world, draft)
    submitted = services.submission_submit(submission=draft, by=world.users["player_alice"])
    assert submitted.status == SubmissionStatus.SUBMITTED
    assert _filled(submitted) == ({section} if section else set())


def test_dt02_an_empty_downtime_submits_through_the_page_and_names_who_you_are(
    world: Any, lucien: Character, during: None
) -> None:
    """Section 1 comes from the sheet (player, character, clan); nothing needs typing."""
    client = world.client("player_alice")
    page_url = f"/c/{world.chronicle.slug}/downtime/{lucien.pk}/"
    page = client.get(page_url).content.decode()
    assert "1. Who you are" in page and "Lucien" in page and "Toreador" in page
    response = client.post(f"{page_url}submit/", {"notes": "", "game_report": "", "version": "1"})
    assert response.status_code == 302
    submission = Submission.objects.get(character=lucien)
    assert submission.status == SubmissionStatus.SUBMITTED
    assert (submission.notes, submission.game_report) == ("", "")


def test_dt02_the_game_report_is_kept_separate_from_other_readers(
    world: Any, draft: Submission, marguerite: Character
) -> None:
    """The raw report is read by its player and the storytellers only; others read at most the
    storytellers' sanitized text, once published (DT-05)."""
    _report(world, draft)
    services.submission_submit(submission=draft, by=world.users["player_alice"])
    slug = world.chronicle.slug
    read_url = f"/c/{slug}/downtime/submissions/{draft.pk}/"
    assert SECRET in world.client("player_alice").get(read_url).content.decode()
    assert SECRET in world.client("storyteller").get(read_url).content.decode()
    assert world.client("player_bob").get(read_url).status_code == 404

    reports_url = f"/c/{slug}/reports/"
    pick = vote_services.report_pick(submission=draft, by=world.users["storyteller"])
    assert SECRET not in world.client("player_bob").get(reports_url).content.decode()
    vote_services.report_pick_update(
        pick=pick, by=world.users["storyteller"], sanitized_text=SANITIZED, published=True
    )
    page = world.client("player_bob").get(reports_url).content.decode()
    assert SANITIZED in page and SECRET not in page
    # The report stays as the player wrote it beside the storytellers' version.
    draft.refresh_from_db()
    assert draft.game_report == SECRET
