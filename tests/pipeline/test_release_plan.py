"""The release plan and what it asks before releasing (issue 12): the plan and the XP report
agree on the release's XP (one definition, `downtimes.services.release.release_xp_lines`), with
what is outside the release shown apart; the unfinished work (desk items still New or In
progress, XP purchases waiting for sign-off) is listed and confirmed group by group; and the
house rule `unfinished_blocks_release` (DT-REL, this project's own rule ID) refuses the release
outright, in the service, the page and the API alike.

The demo month (tests/pipeline/demo_month.py), by hand:
- Isabella's Mental +1 was signed off during the downtime: its debit is in the ledger with the
  cycle (XP-01, charged at sign-off), so it is *outside* the release.
- Unfinished on the desk: Marcus's search, Carmen's build, Esme's attack and Esme's search, all
  New (Isabella's herd action is resolved; purchases' desk rows belong to the purchases' group).
- Waiting for sign-off: Carmen's Social +1.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from characters.models import PurchaseStatus, XpEntry, XpKind, XpPurchase
from chronicle.models import CycleStatus
from chronicle.rules import HOUSE_RULE_FIELDS
from chronicle.services import cycle_close
from downtimes.models import DeskItem, DeskStatus, ItemKind
from downtimes.services import desk, pipeline, release

from .conftest import AFTER_DEADLINE, Month
from .demo_month import AFTER_DEADLINE as MONTH_AFTER_DEADLINE
from .demo_month import DURING as MONTH_DURING
from .demo_month import DemoMonth, build_month

pytestmark = pytest.mark.django_db

API = "/api/chronicles/nightfall"


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(AFTER_DEADLINE, tick=False):
        yield


def text_of(response: Any) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def resolved_month(prefix: str = "") -> tuple[DemoMonth, Client]:
    month = build_month(prefix=prefix)
    cycle_close(cycle=month.cycle, by=month.st, now=MONTH_AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st, now=MONTH_AFTER_DEADLINE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED
    client = Client()
    client.force_login(month.st)
    return month, client


def month_url(month: DemoMonth, name: str) -> str:
    return reverse(name, args=[month.chronicle.slug, month.game.number])


PLAN_XP = re.compile(r"(\d+) XP entr(?:y|ies) totalling ([-\d.]+) XP")
# The XP report's first figures: its headline, the first thing a storyteller reads.
REPORT_FIRST = re.compile(r"(\d+) (?:lines?|entry|entries), ([-\d.]+) XP")


def confirmations(client: Client, url: str) -> dict[str, str]:
    form = client.get(url).context["form"]
    return {"run": str(form.initial["run"]), "plan": form.initial["plan"]}


# --- The plan and the XP report agree ------------------------------------------------------------


def test_the_release_plan_and_the_xp_report_give_the_same_entries_and_total() -> None:
    """The report used to open with every ledger line of the cycle plus the preview (e.g. 13
    lines, 22.5 XP) where the plan said 11 entries, 34.5 XP: the purchase debits charged at
    sign-off were mixed in. Now both read the release's entries first, and the debits are a
    group of their own with their own subtotal."""
    month, client = resolved_month()
    plan_page = client.get(month_url(month, "cycle_release"))
    entries, total = PLAN_XP.search(text_of(plan_page)).groups()  # type: ignore[union-attr]
    report = client.get(month_url(month, "cycle_xp_report"))
    report_text = text_of(report)
    first = REPORT_FIRST.search(report_text)
    assert first is not None
    assert first.groups() == (entries, total)

    # The debit outside the release: Isabella's Mental +1, signed off in the downtime.
    bought = XpPurchase.objects.get(
        character=month.characters["alice"], status=PurchaseStatus.APPROVED
    )
    assert XpEntry.objects.filter(cycle=month.cycle).count() == 1  # only that debit so far
    outside = report.context["statement"].outside
    assert [(g.name, g.count, g.total) for g in outside] == [(XpKind.PURCHASE, 1, -bought.cost)]
    assert "XP purchases signed off in this cycle" in report_text
    assert f"1 entry, {-bought.cost} XP" in report_text
    # The plan says so too, apart from what the release writes.
    assert "Not part of the release, already in the ledger for this cycle" in text_of(plan_page)

    # Released: the ledger's release entries are what the plan announced, and the report
    # still opens with them.
    data = confirmations(client, month_url(month, "cycle_release"))
    data.update(confirm_desk="on", confirm_purchases="on")
    released = client.post(month_url(month, "cycle_release"), data, follow=True)
    assert any(m.startswith("Released:") for m in messages_of(released))
    awards = XpEntry.objects.filter(cycle=month.cycle, kind=XpKind.AWARD)
    assert awards.count() == int(entries)
    assert sum(e.amount for e in awards) == Decimal(total)
    after = REPORT_FIRST.search(text_of(client.get(month_url(month, "cycle_xp_report"))))
    assert after is not None and after.groups() == (entries, total)


def test_the_csv_and_the_api_carry_each_lines_group() -> None:
    month, client = resolved_month()
    plan = pipeline.release_plan(cycle=month.cycle)
    rows = pipeline.xp_report(cycle=month.cycle)
    inside = [r for r in rows if r["in_release"]]
    assert len(inside) == plan.xp_entries
    assert sum(r["xp"] for r in inside) == plan.xp_total
    assert [r["kind"] for r in rows if not r["in_release"]] == ["Purchase"]
    csv_text = client.get(month_url(month, "cycle_xp_report_csv")).content.decode()
    header, *lines = csv_text.strip().splitlines()
    assert header.endswith(",Group")
    assert len(lines) == plan.xp_entries + 1
    assert sum("XP purchases signed off in this cycle" in line for line in lines) == 1


def test_an_outcome_paying_no_player_is_neither_planned_nor_written(month: Month) -> None:
    """One definition: an XP outcome without a player (an NPC's) was counted by the plan but
    skipped by the release."""
    cycle_close(cycle=month.cycle, by=month.world.users["storyteller"], now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.world.users["storyteller"])
    award = pipeline.outcomes_for(cycle=month.cycle).get(step="awards")
    award.pk = None
    award.subject = "npc"
    award.player = None
    award.save()
    plan = pipeline.release_plan(cycle=month.cycle)
    assert (plan.xp_entries, plan.xp_total) == (2, Decimal("5.0"))  # the two players' 2.5


# --- What is unfinished ------------------------------------------------------------------------


def test_the_plan_lists_unfinished_work_by_group() -> None:
    month, client = resolved_month()
    groups = {g.name: g for g in release.release_unfinished(cycle=month.cycle)}
    assert groups["desk"].count == 4
    assert groups["desk"].by_status == [("New", 4)]
    assert groups["purchases"].count == 1
    page = client.get(month_url(month, "cycle_release"))
    text = text_of(page)
    assert "Influence desk items still New or In progress 4" in text
    assert "New: 4" in text
    assert "Marcus Steel: Search for a character" in text
    assert "XP purchases waiting for sign-off (XP-01) 1" in text
    assert "Carmen Vasquez: Trait social +1 for" in text
    form = page.context["form"]
    assert [f.name for f in form.confirmation_fields] == ["confirm_desk", "confirm_purchases"]


def test_a_release_without_each_confirmation_keeps_what_was_ticked_and_says_why() -> None:
    month, client = resolved_month()
    url = month_url(month, "cycle_release")
    data = confirmations(client, url)
    response = client.post(url, {**data, "confirm_purchases": "on"})
    assert response.status_code == 400
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED
    assert not XpEntry.objects.filter(cycle=month.cycle, kind=XpKind.AWARD).exists()
    form = response.context["form"]
    assert form.errors == {
        "confirm_desk": ["Tick this to release with desk items unfinished, or finish them."]
    }
    body = response.content.decode()
    # The error beside its checkbox, the other tick kept.
    desk_field = body[
        body.index('id="id_confirm_desk"') - 400 : body.index('id="id_confirm_desk"') + 600
    ]
    assert "Tick this to release with desk items unfinished" in desk_field
    assert re.search(r'<input[^>]*name="confirm_purchases"[^>]*checked', body)

    response = client.post(url, {**data, "confirm_desk": "on", "confirm_purchases": "on"})
    assert response.status_code == 302
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RELEASED


def test_nothing_unfinished_asks_nothing(month: Month) -> None:
    cycle_close(cycle=month.cycle, by=month.world.users["storyteller"], now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.world.users["storyteller"])
    client = month.world.client("storyteller")
    url = reverse("cycle_release", args=["nightfall", 1])
    page = client.get(url)
    assert "Nothing unfinished" in text_of(page)
    assert page.context["form"].confirmation_fields == []
    assert client.post(url, confirmations(client, url)).status_code == 302


def test_the_service_checks_the_confirmations_itself() -> None:
    month, _ = resolved_month()
    with pytest.raises(ValidationError) as refused:
        pipeline.cycle_release(
            cycle=month.cycle, by=month.st, confirmed_unfinished={"desk"}, now=MONTH_AFTER_DEADLINE
        )
    assert set(refused.value.message_dict) == {"confirm_purchases"}
    assert not XpEntry.objects.filter(cycle=month.cycle, kind=XpKind.AWARD).exists()
    assert pipeline.cycle_release(
        cycle=month.cycle,
        by=month.st,
        confirmed_unfinished={"desk", "purchases"},
        now=MONTH_AFTER_DEADLINE,
    )


def test_finishing_the_work_empties_the_groups() -> None:
    month, _ = resolved_month()
    for item in DeskItem.objects.filter(cycle=month.cycle, status=DeskStatus.NEW).exclude(
        kind=ItemKind.PURCHASE
    ):
        desk.desk_item_update(
            item=item,
            by=month.st,
            version=item.version,
            status=DeskStatus.RESOLVED,
            result="Done.",
            now=MONTH_DURING,
        )
    counts = {g.name: g.count for g in release.release_unfinished(cycle=month.cycle)}
    assert counts == {"desk": 0, "purchases": 1}


# --- DT-REL: unfinished work blocks the release --------------------------------------------------


def test_the_house_rule_is_dt_rel_and_off_by_default() -> None:
    spec = HOUSE_RULE_FIELDS["unfinished_blocks_release"]
    assert spec.default is False
    assert spec.metadata["rule"] == "DT-REL"


def blocking(month: DemoMonth) -> None:
    month.chronicle.house_rule_overrides = {"unfinished_blocks_release": True}
    month.chronicle.save()
    month.cycle.refresh_from_db()


def test_dt_rel_refuses_the_release_in_the_service_even_confirmed() -> None:
    month, _ = resolved_month()
    blocking(month)
    for confirmed in (None, {"desk", "purchases"}):
        with pytest.raises(release.UnfinishedBlocks) as refused:
            pipeline.cycle_release(
                cycle=month.cycle,
                by=month.st,
                confirmed_unfinished=confirmed,
                now=MONTH_AFTER_DEADLINE,
            )
        message = " ".join(refused.value.messages)
        assert "DT-REL" in message
        assert "4 influence desk items still New or In progress" in message
        assert "sign off or reject 1 XP purchase still waiting" in message
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED


def test_dt_rel_on_the_page_offers_no_release_and_refuses_a_post() -> None:
    month, client = resolved_month()
    blocking(month)
    url = month_url(month, "cycle_release")
    page = client.get(url)
    assert "This chronicle's house rule DT-REL holds the release" in text_of(page)
    assert "Release now" not in page.content.decode()
    data = {**confirmations(client, url), "confirm_desk": "on", "confirm_purchases": "on"}
    response = client.post(url, data)
    assert response.status_code == 409
    assert any("DT-REL" in m and "finish" in m for m in messages_of(response))
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED


def test_dt_rel_lets_a_finished_cycle_go() -> None:
    month, _ = resolved_month()
    blocking(month)
    DeskItem.objects.filter(cycle=month.cycle).update(status=DeskStatus.RESOLVED)
    XpPurchase.objects.filter(cycle=month.cycle, status=PurchaseStatus.REQUESTED).update(
        status=PurchaseStatus.REJECTED
    )
    assert pipeline.cycle_release(
        cycle=month.cycle, by=month.st, confirmed_unfinished=set(), now=MONTH_AFTER_DEADLINE
    )


# --- The API behaves the same ------------------------------------------------------------------


def api(month: DemoMonth, client: Client, what: str) -> str:
    return f"/api/chronicles/{month.chronicle.slug}/resolution/{month.game.number}/{what}/"


def test_the_api_plan_lists_the_unfinished_and_the_release_needs_each_confirmation() -> None:
    month, client = resolved_month()
    plan = client.get(api(month, client, "release-plan")).json()
    assert [(g["name"], g["count"], g["field"]) for g in plan["unfinished"]] == [
        ("desk", 4, "confirm_desk"),
        ("purchases", 1, "confirm_purchases"),
    ]
    assert plan["blocked"] is False
    assert [(g["name"], g["entries"]) for g in plan["outside_release"]] == [("purchase", 1)]
    refused = client.post(
        api(month, client, "release"),
        {"key": plan["key"], "confirm_desk": True},
        content_type="application/json",
    )
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "invalid"
    assert set(error["fields"]) == {"confirm_purchases"}
    assert not XpEntry.objects.filter(cycle=month.cycle, kind=XpKind.AWARD).exists()
    done = client.post(
        api(month, client, "release"),
        {"key": plan["key"], "confirm_desk": True, "confirm_purchases": True},
        content_type="application/json",
    )
    assert done.status_code == 200 and done.json()["status"] == CycleStatus.RELEASED
    assert (
        XpEntry.objects.filter(cycle=month.cycle, kind=XpKind.AWARD).count() == plan["xp_entries"]
    )


def test_the_api_release_under_dt_rel_is_a_409_saying_what_to_finish() -> None:
    month, client = resolved_month()
    blocking(month)
    plan = client.get(api(month, client, "release-plan")).json()
    assert plan["blocked"] is True
    refused = client.post(
        api(month, client, "release"),
        {"confirm_desk": True, "confirm_purchases": True},
        content_type="application/json",
    )
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "unfinished"
    assert "DT-REL" in error["message"] and "XP purchase" in error["message"]
