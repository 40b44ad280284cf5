"""What a player reads once results are released (issue 12): each action's written result from
the storytellers on the results page itself and in the summary e-mail, in plain words (no rule
IDs, never the STs' notes), at a constant number of queries."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from django.core import mail
from django.urls import reverse

from characters.models import Notification
from chronicle.models import Attendance
from chronicle.services import cycle_close
from downtimes.models import DeskStatus, Submission
from downtimes.services import desk, pipeline, submissions

from ..downtimes.conftest import DURING
from .conftest import AFTER_DEADLINE, Month

pytestmark = pytest.mark.django_db

RESULT = "Two new vessels join your herd at the gallery."
SECRET = "ST only: the gallery owner is a ghoul of the Prince."
RULE_ID = re.compile(r"\b(?:DT|XP|INF|HAV|DIS|CRE|BND|TOR|SEW|GEN|CLN|CTL|BLD)-\d")


def _resolved_action(month: Month) -> Any:
    """Alice's herd action, resolved on the desk with a written result and a private note."""
    alice, st = month.world.users["player_alice"], month.world.users["storyteller"]
    submission = Submission.objects.get(cycle=month.cycle, character=month.lucien)
    item = submissions.influence_action_add(
        submission=submission,
        by=alice,
        influence="herd",  # INF-02: Herd blood takes only Herd
        points=1,
        action="herd",
        key="herd",
        description="Feed at the gallery opening.",
        now=DURING,
    )
    item = desk.desk_item_update(
        item=item,
        by=st,
        version=item.version,
        status=DeskStatus.RESOLVED,
        result=RESULT,
        st_notes=SECRET,
        now=DURING,
    )
    return item


def _released(month: Month) -> None:
    st = month.world.users["storyteller"]
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_release(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()


def _results(month: Month, persona: str) -> str:
    response = month.world.client(persona).get(reverse("results", args=["nightfall"]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_results_page_shows_each_actions_written_result(month: Month) -> None:
    _resolved_action(month)
    before = _results(month, "player_alice")
    assert RESULT not in before
    _released(month)
    page = _results(month, "player_alice")
    assert RESULT in page and "Feed at the gallery opening." in page
    assert SECRET not in page
    assert RESULT not in _results(month, "player_bob")


def test_the_summary_mail_includes_the_written_results(month: Month) -> None:
    _resolved_action(month)
    _released(month)
    alice = month.world.users["player_alice"]
    note = Notification.objects.get(key=f"cycle:{month.cycle.pk}:summary:{alice.pk}")
    assert RESULT in note.body and SECRET not in note.body
    assert "Base XP: 2.5." in note.body
    assert reverse("results", args=["nightfall"]) in note.body
    bob = month.world.users["player_bob"]
    assert RESULT not in Notification.objects.get(key__endswith=f":summary:{bob.pk}").body
    mail.outbox.clear()
    pipeline.summaries_send(cycle_id=month.cycle.pk)
    sent = {m.to[0]: m.body for m in mail.outbox}
    assert RESULT in sent["player_alice@example.com"]


def test_player_text_has_no_rule_ids(month: Month) -> None:
    """The label "Awards (DT-03..08)" is a storyteller's: the player reads "Awards"; a reason
    given in the rules' words ("no signed waiver (DT-04)") loses its rule ID too."""
    bob = month.world.users["player_bob"]
    Attendance.objects.filter(game=month.world.game, player=bob).update(waiver_signed=False)
    _resolved_action(month)
    _released(month)
    for persona in ("player_alice", "player_bob"):
        page = _results(month, persona)
        assert not RULE_ID.search(page), (persona, RULE_ID.findall(page))
    assert "no signed waiver" in _results(month, "player_bob")
    assert "Awards" in _results(month, "player_alice")
    for note in Notification.objects.filter(key__contains=":summary:"):
        assert not RULE_ID.search(note.body), note.body
        assert not RULE_ID.search(note.subject), note.subject


def test_an_override_still_reads_the_same_on_page_and_in_mail(month: Month) -> None:
    _resolved_action(month)
    st = month.world.users["storyteller"]
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    alice = month.world.users["player_alice"]
    base = pipeline.outcomes_for(cycle=month.cycle).get(step="awards", subject=f"base:{alice.pk}")
    pipeline.outcome_override(outcome=base, by=st, note="Ran the plot", xp=Decimal(4))
    pipeline.cycle_release(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    line = "Base XP: 2.5. A storyteller changed this award to 4.0 XP."
    note = Notification.objects.get(key=f"cycle:{month.cycle.pk}:summary:{alice.pk}")
    assert line in note.body and line in _results(month, "player_alice")
    assert "Ran the plot" not in note.body


# outcomes (1), their cycles' overrides (1), the player's submissions of released cycles (1),
# the released results of their characters' actions (1), after the session, user, membership
# and the nav's memberships (4): the same for 1 and 6 actions.
RESULTS_QUERIES = 8


def test_the_results_page_has_no_per_action_query(
    month: Month, django_assert_num_queries: Any
) -> None:
    _resolved_action(month)
    _released(month)
    client = month.world.client("player_alice")
    url = reverse("results", args=["nightfall"])
    with django_assert_num_queries(RESULTS_QUERIES):
        assert client.get(url).status_code == 200
    submission = Submission.objects.get(cycle=month.cycle, character=month.lucien)
    for item in submission.items.all():
        desk.desk_item_update(
            item=item, by=month.world.users["storyteller"], version=item.version, result="Again."
        )
    from downtimes.models import DeskItem, ItemKind

    for n in range(5):
        DeskItem.objects.create(
            cycle=month.cycle,
            kind=ItemKind.POWER,
            power="ritual",
            character=month.lucien,
            submission=submission,
            description=f"Ward {n}",
            status=DeskStatus.RESOLVED,
            result=f"Warded {n}.",
            released_at=AFTER_DEADLINE,
            created_at=DURING,
            updated_at=DURING,
            key=f"extra-{n}",
        )
    desk.desk_release(cycle=month.cycle, by=month.world.users["storyteller"])
    with django_assert_num_queries(RESULTS_QUERIES):
        page = client.get(url).content.decode()
    assert page.count("Warded") == 5 and "Again." in page
