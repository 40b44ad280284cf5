"""JSON bodies keep their JSON types (issue 16, Schemathesis's coverage phase).

DRF's CharField turns a number into a string (`"name": 0` is saved as "0") and its BooleanField
reads 0, 1, "yes" or "false" as booleans: friendly to HTML forms, whose values are all strings,
but a JSON body that sends a number where the schema says string, or 0 where it says boolean,
is a client bug the API must refuse (400), not guess at. So, for a body that is not form data
(a JSON body is a dict, a form's a QueryDict), a string field takes only a string and a boolean
field only `true` or `false`. Form and multipart bodies keep DRF's reading.

`install()` (called once, from chronicle.apps) wraps the two fields' `to_internal_value`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import QueryDict
from rest_framework import fields


def _from_form(field: fields.Field) -> bool:
    initial = getattr(field.root, "initial_data", None)
    return isinstance(initial, QueryDict)


def _strict(
    cls: type[fields.Field], accepts: Callable[[Any], bool], error: str
) -> Callable[[fields.Field, Any], Any]:
    original = cls.to_internal_value

    def to_internal_value(self: fields.Field, data: Any) -> Any:
        if not accepts(data) and not _from_form(self):
            self.fail(error)
        return original(self, data)

    to_internal_value.__wrapped__ = original  # type: ignore[attr-defined]
    return to_internal_value


def install() -> None:
    if hasattr(fields.CharField.to_internal_value, "__wrapped__"):
        return
    fields.CharField.to_internal_value = _strict(  # type: ignore[method-assign,assignment]
        fields.CharField, lambda data: isinstance(data, str), "invalid"
    )
    fields.BooleanField.to_internal_value = _strict(  # type: ignore[method-assign,assignment]
        fields.BooleanField, lambda data: isinstance(data, bool), "invalid"
    )
