from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from .access import MAX_ID


class Pagination(LimitOffsetPagination):
    """At most 500 rows a page, and no offset past what a database integer can count."""

    max_limit = 500

    def get_offset(self, request: Request) -> int:
        offset = super().get_offset(request)
        if offset > MAX_ID:
            raise exceptions.ValidationError(
                {"offset": _("offset must be at most %(highest)s.") % {"highest": MAX_ID}}
            )
        return offset
