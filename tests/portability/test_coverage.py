"""Every model that belongs to a chronicle is exported by some app's `portability.py` (or left
out on purpose, with a reason): a model added without a line there fails here, before an
export silently misses its rows. And each app lists its models in an order the import can
follow (a row's references are already in)."""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import models

from chronicle import portability
from chronicle.models import Chronicle

Model = type[models.Model]


def _references(model: Model) -> set[Model]:
    """The models a model's rows point at (foreign keys, one-to-ones, many-to-manys)."""
    return {
        f.related_model  # type: ignore[misc]
        for f in model._meta.get_fields()
        if f.concrete and f.is_relation and isinstance(f.related_model, type)
    }


def chronicle_models() -> set[Model]:
    """Chronicle and every model that points, through other such models, at it."""
    found: set[Model] = {Chronicle}
    changed = True
    while changed:
        changed = False
        for model in apps.get_models():
            if model not in found and _references(model) & found:
                found.add(model)
                changed = True
    return found


def uncovered(listed: set[Model]) -> set[Model]:
    return chronicle_models() - listed - set(portability.not_exported())


def _listed() -> set[Model]:
    return {p.model for p in portability.portables()}


def test_every_model_of_a_chronicle_is_exported() -> None:
    missing = uncovered(_listed())
    assert not missing, (
        "These models belong to a chronicle but no app's portability.py lists them (add them to "
        "PORTABLE, or to NOT_EXPORTED with the reason): "
        + ", ".join(sorted(m._meta.label for m in missing))
    )


def test_the_check_catches_a_model_left_out() -> None:
    from characters.models import Title

    assert uncovered(_listed() - {Title}) == {Title}


def test_each_model_is_listed_once_and_nothing_else_is() -> None:
    models_listed = [p.model for p in portability.portables()]
    assert len(models_listed) == len(set(models_listed))
    assert set(models_listed) <= chronicle_models()
    assert not set(models_listed) & set(portability.not_exported())


def test_the_order_puts_every_referenced_model_first() -> None:
    seen: set[Model] = set()
    user = get_user_model()
    for portable in portability.portables():
        later = _references(portable.model) - seen - {portable.model, user}
        assert not later, f"{portable.model._meta.label} comes before {later}"
        seen.add(portable.model)


def test_the_apps_are_found_through_the_registry() -> None:
    names = [m.__name__ for m in portability.app_modules()]
    assert names == [
        "chronicle.portability",
        "characters.portability",
        "havens.portability",
        "downtimes.portability",
    ]
