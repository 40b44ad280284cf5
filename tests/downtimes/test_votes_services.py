"""Votes through the database (DT-06..09): which ballots count, the tally, winners, ties and
awards the rules give; SPEC's DT-07/DT-08 worked example built from real submissions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from characters.models import Character
from chronicle.models import Attendance, Cycle
from downtimes.models import Submission, SubmissionStatus, Vote
from downtimes.services import votes as services
from tests.conftest import World

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 14, 20, 0, tzinfo=dt.UTC)


@dataclass
class Voting:
    """A cycle's electorate, built through the ORM: users, their characters, and helpers to
    file a submitted (or draft) downtime with votes."""

    world: World
    make_user: Callable[..., Any]

    @property
    def cycle(self) -> Cycle:
        return self.world.game.cycle

    def user(self, name: str, *, attended: bool = True, waiver: bool = True) -> Any:
        user = self.make_user(name)
        if attended:
            Attendance.objects.create(
                game=self.world.game,
                player=user,
                waiver_signed=waiver,
                recorded_by=self.world.users["admin"],
                recorded_at=NOW,
            )
        return user

    def character(self, name: str, player: Any, clan: str = "brujah") -> Character:
        return Character.objects.create(
            chronicle=self.world.chronicle, player=player, name=name, clan=clan
        )

    def downtime(
        self,
        character: Character,
        picks: dict[str, Any],
        *,
        submitted: bool = True,
        at: dt.datetime = NOW,
        report: str = "",
    ) -> Submission:
        submission = Submission.objects.create(
            cycle=self.cycle,
            character=character,
            player=character.player,
            status=SubmissionStatus.SUBMITTED if submitted else SubmissionStatus.DRAFT,
            game_report=report,
            created_at=at,
            updated_at=at,
            submitted_at=at if submitted else None,
        )
        Vote.objects.bulk_create(
            Vote(
                submission=submission,
                category=category,
                nominee_character=nominee if isinstance(nominee, Character) else None,
                nominee_player=None if isinstance(nominee, Character) else nominee,
            )
            for category, nominee in picks.items()
        )
        return submission

    def voters(self, count: int, prefix: str = "voter") -> list[Character]:
        return [
            self.character(f"{prefix.title()} {i:04}", self.user(f"{prefix}{i:04}"))
            for i in range(count)
        ]


@pytest.fixture
def voting(world: World, make_user: Callable[..., Any]) -> Voting:
    return Voting(world, make_user)


def cast(voting: Voting, voters: list[Character], plan: dict[str, list[tuple[Any, int]]]) -> None:
    """Give each voter their picks: `plan[category]` is [(nominee, votes), ...] handed out to
    the voters in order."""
    picks: dict[int, dict[str, Any]] = {v.pk: {} for v in voters}
    for category, entries in plan.items():
        queue = iter(voters)
        for nominee, count in entries:
            for _ in range(count):
                picks[next(queue).pk][category] = nominee
    for voter in voters:
        voting.downtime(voter, picks[voter.pk])


def awarded(tally: services.Tally) -> dict[str, int]:
    return {a.name: a.xp for a in tally.awards}


def winners(tally: services.Tally) -> dict[str, list[str]]:
    return {c.category: [r.name for r in c.winners] for c in tally.categories}


def standings(tally: services.Tally, category: str) -> list[tuple[str, int, int]]:
    table = next(c for c in tally.categories if c.category == category)
    return [(r.name, r.votes, r.rank) for r in table.rows]


@pytest.fixture
def worked_example(voting: Voting) -> dict[str, Any]:
    """SPEC DT-08 TV: feared A (P1) 5, B 3; liked A 4, C 2; respected D (P4) 6; roleplay P1 7,
    P5 4, P6 2; costume P7 5, P8 3. Thirteen attending voters, none of them a nominee."""
    p = {n: voting.user(f"p{n}") for n in range(1, 9)}
    a = voting.character("A", p[1])
    b = voting.character("B", p[2])
    c = voting.character("C", p[3])
    d = voting.character("D", p[4])
    voters = voting.voters(13)
    cast(
        voting,
        voters,
        {
            "feared": [(a, 5), (b, 3)],
            "liked": [(a, 4), (c, 2)],
            "respected": [(d, 6)],
            "roleplaying": [(p[1], 7), (p[5], 4), (p[6], 2)],
            "costume": [(p[7], 5), (p[8], 3)],
        },
    )
    return {"p": p, "a": a, "b": b, "c": c, "d": d, "voters": voters}


def test_dt08_worked_example_through_the_db(voting: Voting, worked_example: dict[str, Any]) -> None:
    tally = services.tally_for(cycle=voting.cycle)
    assert tally.error == ""
    assert tally.voters == 13
    assert standings(tally, "feared") == [("A", 5, 1), ("B", 3, 2)]
    assert standings(tally, "liked") == [("A", 4, 1), ("C", 2, 2)]
    assert standings(tally, "respected") == [("D", 6, 1)]
    assert standings(tally, "roleplaying") == [("p1", 7, 1), ("p5", 4, 2), ("p6", 2, 3)]
    assert standings(tally, "costume") == [("p7", 5, 1), ("p8", 3, 2)]
    assert winners(tally) == {
        "feared": ["A"],
        "liked": ["A"],
        "respected": ["D"],
        "roleplaying": ["p1", "p5"],
        "costume": ["p7", "p8"],
    }
    # DT-08: P1 tops three lists and gets 3 XP once; nobody moves up into those places.
    assert awarded(tally) == {"p1": 3, "p4": 3, "p5": 3, "p7": 3, "p8": 3}
    p1 = next(a for a in tally.awards if a.name == "p1")
    assert p1.won == ["Most feared", "Most liked", "Excellent roleplaying"]
    assert all(a.eligible for a in tally.awards)
    # DT-09: the top two of each category are announced.
    roleplay = next(c for c in tally.categories if c.category == "roleplaying")
    assert [r.name for r in roleplay.announced] == ["p1", "p5"]


def test_ballots_for_maps_nominated_characters_to_players(
    voting: Voting, worked_example: dict[str, Any]
) -> None:
    ballots, player_of = services.ballots_for(cycle=voting.cycle)
    assert len(ballots) == 5 + 3 + 4 + 2 + 6 + 7 + 4 + 2 + 5 + 3
    p, ex = worked_example["p"], worked_example
    assert player_of == {
        str(ex["a"].pk): str(p[1].pk),
        str(ex["b"].pk): str(p[2].pk),
        str(ex["c"].pk): str(p[3].pk),
        str(ex["d"].pk): str(p[4].pk),
    }
    assert not any(b.double for b in ballots)


def test_non_attending_voters_ballots_are_ignored(voting: Voting) -> None:
    """INTERPRETATION DT-06: only players who attended the cycle's game count."""
    nominee = voting.character("Nominee", voting.user("nominee"))
    rival = voting.character("Rival", voting.user("rival"))
    voting.downtime(voting.character("Here", voting.user("here")), {"feared": rival})
    absent = voting.user("absent", attended=False)
    for i in range(3):
        voting.downtime(
            voting.character(
                f"Away {i}", absent if i == 0 else voting.user(f"away{i}", attended=False)
            ),
            {"feared": nominee},
        )
    tally = services.tally_for(cycle=voting.cycle)
    assert standings(tally, "feared") == [("Rival", 1, 1)]
    assert tally.ballots == 1


def test_draft_submissions_are_ignored(voting: Voting) -> None:
    nominee = voting.character("Nominee", voting.user("nominee"))
    rival = voting.character("Rival", voting.user("rival"))
    voting.downtime(voting.character("Sent", voting.user("sent")), {"liked": rival})
    for i in range(2):
        voting.downtime(
            voting.character(f"Draft {i}", voting.user(f"draft{i}")),
            {"liked": nominee},
            submitted=False,
        )
    assert standings(services.tally_for(cycle=voting.cycle), "liked") == [("Rival", 1, 1)]


def test_toreador_counts_twice_in_character_only(voting: Voting) -> None:
    """DT-06: a Toreador's in-character vote counts x2; out-of-character it counts once."""
    a_player, b_player = voting.user("aplayer"), voting.user("bplayer")
    a = voting.character("A", a_player)
    b = voting.character("B", b_player)
    rose = voting.character("Rose", voting.user("rose"), clan="toreador")
    voting.downtime(rose, {"feared": a, "costume": a_player})
    for i in range(2):
        voter = voting.character(f"Plain {i}", voting.user(f"plain{i}"))
        voting.downtime(voter, {"feared": b, "costume": b_player})
    tally = services.tally_for(cycle=voting.cycle)
    assert standings(tally, "feared") == [("A", 2, 1), ("B", 2, 1)]
    feared = next(c for c in tally.categories if c.category == "feared")
    rows = {r.name: r for r in feared.rows}
    assert (rows["A"].ballots, rows["A"].doubled) == (1, 1)
    assert (rows["B"].ballots, rows["B"].doubled) == (2, 0)
    # DT-07 INTERPRETATION: a tie within the winning places makes both winners.
    assert feared.tie_at_the_top and all(r.tied for r in feared.rows)
    assert standings(tally, "costume") == [("bplayer", 2, 1), ("aplayer", 1, 2)]
    ballots, _ = services.ballots_for(cycle=voting.cycle)
    assert sorted(b.double for b in ballots) == [False] * 4 + [True] * 2


def test_a_player_with_two_characters_votes_once_per_category(voting: Voting) -> None:
    """INTERPRETATION DT-06: two downtimes of one player: the first submitted counts."""
    twin = voting.user("twin")
    first = voting.character("First", twin)
    second = voting.character("Second", twin)
    x = voting.character("X", voting.user("xp"))
    y = voting.character("Y", voting.user("yp"))
    voting.downtime(second, {"feared": y}, at=NOW + dt.timedelta(hours=1))
    voting.downtime(first, {"feared": x})
    assert standings(services.tally_for(cycle=voting.cycle), "feared") == [("X", 1, 1)]


def test_a_stored_self_vote_is_reported_not_crashed(voting: Voting) -> None:
    me = voting.user("narcissus")
    mine = voting.character("Narcissus", me)
    voting.downtime(mine, {"liked": mine})
    tally = services.tally_for(cycle=voting.cycle)
    assert "self-votes are not allowed (DT-06)" in tally.error
    assert tally.categories == [] and tally.awards == []


def test_awards_show_dt04_eligibility(voting: Voting) -> None:
    """A winner who did not attend (or sign the waiver) is shown as not eligible (DT-04)."""
    gone = voting.user("gone", attended=False)
    unsigned = voting.user("unsigned", waiver=False)
    voter = voting.character("Voter", voting.user("voter"))
    voting.downtime(voter, {"roleplaying": gone, "feared": voting.character("U", unsigned)})
    tally = services.tally_for(cycle=voting.cycle)
    by_name = {a.name: a for a in tally.awards}
    assert (by_name["gone"].attended, by_name["gone"].eligible) == (False, False)
    assert (by_name["unsigned"].attended, by_name["unsigned"].eligible) == (True, False)


def test_an_npc_can_top_a_list_but_is_paid_nothing(voting: Voting) -> None:
    npc = Character.objects.create(chronicle=voting.world.chronicle, player=None, name="Prince")
    voting.downtime(voting.character("Voter", voting.user("voter")), {"respected": npc})
    tally = services.tally_for(cycle=voting.cycle)
    assert winners(tally)["respected"] == ["Prince"]
    assert tally.awards == []


def test_other_cycles_votes_do_not_count(voting: Voting, world: World) -> None:
    from chronicle import services as chronicle_services

    later = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 6))
    x = voting.character("X", voting.user("xp"))
    voter = voting.character("Voter", voting.user("voter"))
    voting.downtime(voter, {"feared": x})
    assert services.ballots_for(cycle=later.cycle) == ([], {})


@pytest.mark.parametrize("count", [10, 200])
def test_tally_queries_do_not_grow(
    voting: Voting, count: int, django_assert_num_queries: Any
) -> None:
    nominees = [voting.character(f"N{i}", voting.user(f"n{i}")) for i in range(3)]
    voters = voting.voters(count)
    for i, voter in enumerate(voters):
        voting.downtime(voter, {"feared": nominees[i % 3], "costume": nominees[i % 2].player})
    cycle = Cycle.objects.get(pk=voting.cycle.pk)
    # 1 the counted votes with names; 2 the chronicle (its house-rule settings); 3 the award
    # winners' attendance (DT-04).
    with django_assert_num_queries(3):
        tally = services.tally_for(cycle=cycle)
    assert tally.ballots == 2 * count
    with django_assert_num_queries(1):
        services.ballots_for(cycle=cycle)
