"""INF-02: which influence types each influence action accepts (one table in characters/rules.py),
and BLD-04's stored Herd blood. Pure: no database."""

from __future__ import annotations

import pytest

from characters.rules import (
    INFLUENCE_ACTIONS,
    INFLUENCE_TYPES,
    check_influence_use,
    herd_blood_stored,
    influence_types_for,
    influence_use_allowed,
)

# The rules text, written out by hand: B(usiness) G(overnment) H(erd) O(ccult) U(nderworld).
# "All influence types may be used to build or attack havens, attack others' influences, or
# investigate"; "Business, Government, Underworld, and Occult (to a lesser extent) may be used to
# acquire items"; "Herd may be used as sources of blood"; "Occult may be used for research".
EXPECTED = {
    "build": "BGHOU",
    "repair": "BGHOU",
    "search": "BGHOU",
    "attack_haven": "BGHOU",
    "attack_influence": "BGHOU",
    "investigate": "BGHOU",
    "acquire": "BGOU",
    "herd": "H",
    "research": "O",
    "leave_city": "BGHOU",
    "other": "BGHOU",
}
LETTER = {"business": "B", "government": "G", "herd": "H", "occult": "O", "underworld": "U"}

CASES = [
    pytest.param(action, influence, LETTER[influence] in letters, id=f"INF-02-{action}-{influence}")
    for action, letters in EXPECTED.items()
    for influence in ("business", "government", "herd", "occult", "underworld")
]


@pytest.mark.parametrize(("action", "influence", "allowed"), CASES)
def test_influence_uses_table(action: str, influence: str, allowed: bool) -> None:
    assert influence_use_allowed(action, influence) is allowed
    if allowed:
        check_influence_use(action, influence)
    else:
        with pytest.raises(ValueError, match="INF-02"):
            check_influence_use(action, influence)


def test_the_table_covers_every_action_and_type() -> None:
    """downtimes/test_influence_uses.py checks the actions against ActionKind's values."""
    assert set(INFLUENCE_ACTIONS) == set(EXPECTED)
    assert len(CASES) == len(EXPECTED) * len(INFLUENCE_TYPES)


@pytest.mark.parametrize(
    ("action", "influence", "words"),
    [
        # The reproduction: a "Herd blood" action paid with Business ...
        pytest.param(
            "herd",
            "business",
            "“Herd blood” can be paid only with Herd influence, not Business (INF-02).",
            id="INF-02-herd-blood-refuses-business",
        ),
        # ... and a "research" action paid with Herd.
        pytest.param(
            "research",
            "herd",
            "“Occult research” can be paid only with Occult influence, not Herd (INF-02).",
            id="INF-02-research-refuses-herd",
        ),
        pytest.param(
            "acquire",
            "herd",
            "“Acquire an item” can be paid only with Business, Government, Occult or "
            "Underworld influence, not Herd (INF-02).",
            id="INF-02-acquire-refuses-herd",
        ),
    ],
)
def test_refusal_names_the_types_the_action_takes(action: str, influence: str, words: str) -> None:
    with pytest.raises(ValueError) as caught:
        check_influence_use(action, influence)
    assert str(caught.value) == words


@pytest.mark.parametrize(
    ("action", "influence"),
    [
        pytest.param("feed", "herd", id="INF-02-unknown-action"),
        pytest.param("herd", "money", id="INF-02-unknown-influence"),
        pytest.param(None, "herd", id="INF-02-no-action"),
    ],
)
def test_unknown_action_or_type_is_refused(action: object, influence: object) -> None:
    with pytest.raises(ValueError):
        influence_use_allowed(action, influence)  # type: ignore[arg-type]


def test_types_come_in_inf01_order() -> None:
    assert influence_types_for("acquire") == ("business", "government", "occult", "underworld")
    assert influence_types_for("herd") == ("herd",)


@pytest.mark.parametrize(
    ("herd", "settings", "stored"),
    [
        pytest.param(2, {}, 6, id="BLD-04-two-herd-give-six"),
        pytest.param(2, {"herd_yield": 2}, 4, id="BLD-04-masquerade-threatened-yield-2"),
        pytest.param(1, {"herd_yield": 1}, 1, id="BLD-04-yield-1"),
        pytest.param(
            2,
            {"clan": "ventrue", "ventrue_herd_mode": "half_yield"},
            3,
            id="BLD-04-CLN-03-ventrue-half-yield",
        ),
        pytest.param(
            2,
            {"clan": "ventrue", "ventrue_herd_mode": "double_cost"},
            6,
            id="BLD-04-CLN-03-ventrue-double-cost-full-yield",
        ),
        pytest.param(
            2, {"hunting_excess_becomes_stored": False}, 0, id="BLD-04-setting-stores-none"
        ),
    ],
)
def test_herd_blood_stored(herd: int, settings: dict[str, object], stored: int) -> None:
    kwargs: dict[str, object] = {"clan": "brujah", **settings}
    assert herd_blood_stored(herd, **kwargs) == stored  # type: ignore[arg-type]


def test_herd_blood_stored_refuses_a_negative_spend() -> None:
    with pytest.raises(ValueError):
        herd_blood_stored(-1, clan=None)
