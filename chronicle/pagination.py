from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from .access import MAX_ID


class Pagination(LimitOffsetPagination):
    """At most 500 rows a page, and no offset past what a database integer can count.

    `limit` and `offset` are checked, not guessed (issue 16): `?offset=null` or `?limit=-1`
    answer 400 in the API's error shape instead of silently meaning the first page. A limit
    above 500 is a page of 500, as documented."""

    max_limit = 500

    def _number(self, request: Request, name: str, lowest: int, highest: int) -> int | None:
        raw = request.query_params.get(name)
        if raw is None:
            return None
        try:
            value = int(raw.strip())
        except ValueError:
            value = None
        if value is None or value < lowest or value > highest:
            raise exceptions.ValidationError(
                {
                    name: _("%(name)s must be a whole number from %(lowest)s to %(highest)s.")
                    % {"name": name, "lowest": lowest, "highest": highest}
                }
            )
        return value

    def get_limit(self, request: Request) -> int | None:
        # Any whole number from 1: above the most a page holds, a page of that most.
        limit = self._number(request, self.limit_query_param, 1, 10**30)
        if limit is None:
            return self.default_limit
        return min(limit, self.max_limit) if self.max_limit else limit

    def get_offset(self, request: Request) -> int:
        return self._number(request, self.offset_query_param, 0, MAX_ID) or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        bounds = {
            self.limit_query_param: {"minimum": 1},
            self.offset_query_param: {"minimum": 0, "maximum": MAX_ID},
        }
        for parameter in parameters:
            if parameter["name"] in bounds:
                parameter["schema"] = {**parameter["schema"], **bounds[parameter["name"]]}
        if parameters and parameters[0]["name"] == self.limit_query_param:
            parameters[0]["description"] = _(
                "Number of results to return per page (at most %(most)s)."
            ) % {"most": self.max_limit}
        return parameters
