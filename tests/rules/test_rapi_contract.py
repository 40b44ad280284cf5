"""SPEC section 19 (RAPI): the rules functions that checks outside the project call, with
exactly these names and parameters. Anything a module adds to a contract function must be an
optional keyword-only setting, so every call written against the contract still works."""

from __future__ import annotations

import importlib
import inspect

import pytest

EMPTY = inspect.Parameter.empty
POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
KW = inspect.Parameter.KEYWORD_ONLY

# module -> function -> [(parameter, kind, default)], exactly as the contract states.
RAPI: dict[str, dict[str, list[tuple[str, object, object]]]] = {
    "chronicle.rules": {
        "downtime_deadline": [("game_date", POS, EMPTY)],
        "supermajority_passes": [("yes", POS, EMPTY), ("eligible", POS, EMPTY)],
        "ratio_class": [("high", POS, EMPTY), ("low", POS, EMPTY)],
    },
    "characters.rules": {
        "discipline_cost": [
            ("levels", POS, EMPTY),
            ("in_clan", KW, EMPTY),
            ("at_creation", KW, EMPTY),
            ("path_owned", KW, False),
            ("caitiff", KW, False),
        ],
        "control_traits": [
            ("clan", KW, EMPTY),
            ("generation", KW, EMPTY),
            ("discipline_levels", KW, EMPTY),
            ("childer", KW, 0),
            ("diableries", KW, 0),
            ("extra_control", KW, 0),
            ("willpower", KW, EMPTY),
            ("animalism_1b", KW, False),
        ],
        "on_body_blood_limit": [("control", POS, EMPTY)],
        "generation_cost": [
            ("steps", POS, EMPTY),
            ("caitiff", KW, False),
            ("diablerie", KW, False),
        ],
        "retirement_points": [("spent", KW, EMPTY), ("unspent", KW, EMPTY)],
        "sewer_location_slots": [("lore", POS, EMPTY), ("nosferatu", KW, EMPTY)],
        "sewer_search_succeeds": [("searchers", POS, EMPTY), ("defenders", POS, EMPTY)],
        "concealment_downgrade_cost": [("purchase_cost", POS, EMPTY)],
    },
    "havens.rules": {
        "hiding_points": [
            ("mental_traits", KW, EMPTY),
            ("influences", KW, EMPTY),
            ("hidden", KW, EMPTY),
        ],
        "search_finds": [("spent", KW, EMPTY), ("hiding_points", KW, EMPTY)],
        "reinforcement_attack_bid": [("potence_levels", POS, EMPTY)],
        "reinforcement_points": [("influences", POS, EMPTY)],
        "influence_attack": [("resistance", KW, EMPTY), ("spent", KW, EMPTY)],
        "attribute_cost": [("kind", POS, EMPTY), ("quantity", POS, 1)],
        "repair_cost": [("original_cost", POS, EMPTY)],
    },
    "downtimes.rules": {
        "vote_awards": [("ballots", POS, EMPTY), ("player_of", KW, EMPTY)],
    },
}


@pytest.mark.parametrize(
    ("module", "name"),
    [
        pytest.param(module, name, id=f"RAPI-{module.split('.')[0]}-{name}")
        for module, functions in RAPI.items()
        for name in functions
    ],
)
def test_rapi_signature_is_the_contract(module: str, name: str) -> None:
    params = list(
        inspect.signature(getattr(importlib.import_module(module), name)).parameters.values()
    )
    contract = RAPI[module][name]
    got = [(p.name, p.kind, p.default) for p in params[: len(contract)]]
    assert got == contract
    for extra in params[len(contract) :]:
        assert extra.kind is KW and extra.default is not EMPTY, extra.name
