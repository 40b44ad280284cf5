"""The API's JSON parser: DRF's, but a body nested deeper than MAX_DEPTH is refused before it is
parsed (issue 16). Python's json module recurses once per level, so 1,000 nested `[` raised
RecursionError, a 500; here it is a 400 in the API's error shape (`parse_error`), like any
other body that is not JSON. No request of the API nests more than a few levels."""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils import json

MAX_DEPTH = 32

# A JSON string (with its escapes), so that brackets inside strings are not counted; possessive,
# so that a long or unterminated string costs one pass.
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deep the arrays and objects of `text` nest, counted up to `limit + 1` at most (the
    text need not be valid JSON: an unclosed `[` counts too)."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif depth:
            depth -= 1
    return deepest


def too_deep_message() -> str:
    return _("JSON nested deeper than %(limit)d levels is not accepted.") % {"limit": MAX_DEPTH}


def loads_limited(text: str, **kwargs: Any) -> Any:
    """json.loads for text from outside: ParseError for nesting deeper than MAX_DEPTH."""
    if nesting_depth(text) > MAX_DEPTH:
        raise ParseError(too_deep_message())
    try:
        return json.loads(text, **kwargs)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ParseError(too_deep_message()) from None


class JSONParser(parsers.JSONParser):
    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            # A text encoding only: a bytes-to-bytes codec (bz2_codec) would inflate the body
            # after its size was checked.
            "".encode(encoding)
        except (LookupError, UnicodeError):
            raise ParseError(_("Unsupported charset in the request's Content-Type.")) from None
        try:
            text = codecs.getreader(encoding)(stream).read()
            parse_constant = json.strict_constant if self.strict else None
            return loads_limited(text, parse_constant=parse_constant)
        except ValueError as exc:
            raise ParseError(_("JSON parse error: %(error)s") % {"error": exc}) from None
