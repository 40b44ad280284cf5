"""GEN-03 / GEN-04: decisions by two thirds of ALL current voters (SPEC's vectors), the fewest
yes votes that pass, and what each voting body may decide."""

from __future__ import annotations

import pytest

from chronicle import rules


@pytest.mark.parametrize(
    ("yes", "eligible", "passes"),
    [
        pytest.param(4, 5, True, id="GEN-03-five-STs-four-yes-passes"),
        pytest.param(3, 5, False, id="GEN-03-five-STs-three-yes-fails"),
        pytest.param(4, 6, True, id="GEN-03-six-STs-four-yes-passes"),
        pytest.param(3, 6, False, id="GEN-03-six-STs-three-yes-fails"),
        pytest.param(2, 3, True, id="GEN-03-three-STs-two-yes-passes"),
        pytest.param(1, 3, False, id="GEN-03-three-STs-one-yes-fails"),
        pytest.param(1, 1, True, id="GEN-03-one-ST-alone"),
        pytest.param(0, 1, False, id="GEN-03-one-ST-no-vote"),
        # Two thirds of all 30 current players, not of the 20 who voted: 20 yes is enough,
        # 19 yes is not, even if nobody voted no.
        pytest.param(20, 30, True, id="GEN-04-thirty-players-twenty-yes"),
        pytest.param(19, 30, False, id="GEN-04-thirty-players-nineteen-yes"),
    ],
)
def test_supermajority_of_everyone_eligible(yes: int, eligible: int, passes: bool) -> None:
    assert rules.supermajority_passes(yes, eligible) is passes


@pytest.mark.parametrize(
    ("eligible", "needed"),
    [
        pytest.param(5, 4, id="GEN-03-needed-of-five"),
        pytest.param(6, 4, id="GEN-03-needed-of-six"),
        pytest.param(3, 2, id="GEN-03-needed-of-three"),
        pytest.param(1, 1, id="GEN-03-needed-of-one"),
        pytest.param(2, 2, id="GEN-03-needed-of-two"),
        pytest.param(7, 5, id="GEN-04-needed-of-seven"),
    ],
)
def test_supermajority_needed(eligible: int, needed: int) -> None:
    assert rules.supermajority_needed(eligible) == needed
    assert rules.supermajority_passes(needed, eligible)
    assert not rules.supermajority_passes(needed - 1, eligible)


@pytest.mark.parametrize(
    ("yes", "eligible"),
    [
        pytest.param(1, 0, id="GEN-03-nobody-eligible"),
        pytest.param(6, 5, id="GEN-03-more-yes-than-voters"),
        pytest.param(-1, 5, id="GEN-03-negative-yes"),
        pytest.param(True, 1, id="GEN-03-bool-is-not-a-count"),
    ],
)
def test_supermajority_refuses_nonsense(yes: int, eligible: int) -> None:
    with pytest.raises(ValueError):
        rules.supermajority_passes(yes, eligible)


def test_supermajority_needed_refuses_no_voters() -> None:
    with pytest.raises(ValueError, match="eligible"):
        rules.supermajority_needed(0)


@pytest.mark.parametrize(
    ("body", "kind", "allowed"),
    [
        pytest.param("storytellers", "add_storyteller", True, id="GEN-03-add-ST"),
        pytest.param("storytellers", "remove_storyteller", True, id="GEN-03-remove-ST"),
        pytest.param("storytellers", "remove_player", True, id="GEN-03-remove-player"),
        pytest.param("storytellers", "setting_now", True, id="GEN-03-setting-now"),
        pytest.param("storytellers", "other", True, id="GEN-03-other-ST-function"),
        pytest.param("players", "remove_storyteller", True, id="GEN-04-remove-ST"),
        pytest.param("players", "remove_player", True, id="GEN-04-remove-player"),
        pytest.param("players", "add_storyteller", False, id="GEN-04-no-adding-STs"),
        pytest.param("players", "setting_now", False, id="GEN-04-no-settings"),
        pytest.param("players", "other", False, id="GEN-04-no-other"),
    ],
)
def test_what_each_body_decides(body: str, kind: str, allowed: bool) -> None:
    assert rules.decision_kind_allowed(body, kind) is allowed


def test_unknown_body_is_refused() -> None:
    with pytest.raises(ValueError, match="voting body"):
        rules.decision_kind_allowed("admins", "other")
