"""The served schema is the API's contract: every operation documents the errors it can answer.

A drf-spectacular postprocessing hook adds, with the one `Error` component (the shape of
chronicle/api_errors.py), to every operation:

- 401 where the operation needs a logged-in caller, 403 everywhere (a role too low, or a
  session call without its CSRF token);
- 404 where the path names something (a chronicle's slug, an id): a stranger's chronicle and a
  missing object answer the same 404;
- 400 on writes and on operations that read query parameters (an invalid `limit`, `offset` or
  filter answers 400, never a silent default);
- 429 on the token exchange (django-axes locks an account out after failed log-ins).

Responses an operation documents itself (a 409 of its own shape, say) are kept.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's, told two things a view knows about its own actions:

    - `unpaginated_actions`: actions that answer a bare JSON array (the havens list, a game's
      sign-in sheet): documented without the page envelope and without limit/offset;
    - `object_actions`: a ViewSet's `list` that answers one object (a character's records),
      documented as that object, not as an array of it.
    """

    def _action(self) -> str | None:
        return getattr(self.view, "action", None)

    def _get_paginator(self) -> Any:
        if self._action() in getattr(self.view, "unpaginated_actions", ()):
            return None
        return super()._get_paginator()

    def _is_list_view(self, serializer: Any = None) -> bool:
        if self._action() in getattr(self.view, "object_actions", ()):
            return False
        return bool(super()._is_list_view(serializer))


ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The one error shape of the API.",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "A stable machine-readable code."},
                "message": {"type": "string", "description": "In the caller's language."},
                "fields": {
                    "type": "object",
                    "additionalProperties": True,
                    "description": "Input errors by field name (present only for input errors).",
                },
            },
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
}

DESCRIPTIONS = {
    "400": "Invalid input, an invalid query parameter, or a request the house rules refuse.",
    "401": "Not logged in (no credentials, or a token that is not valid).",
    "403": "Logged in, but this role may not do this (or a session call lacks its CSRF token).",
    "404": "No such object, or one in a chronicle the caller does not belong to.",
    "409": "The object is not in a state that allows this.",
    "429": "Too many failed log-ins: try again later.",
}

WRITES = {"post", "put", "patch", "delete"}
METHODS = WRITES | {"get"}
# Operations django-axes can lock out.
THROTTLED = {("post", "/api/auth/token/")}


def _error(status: str) -> dict[str, Any]:
    return {
        "description": DESCRIPTIONS[status],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _needs_login(operation: dict[str, Any], default: list[dict[str, Any]]) -> bool:
    security = operation.get("security", default)
    return bool(security) and {} not in security


# Components of a oneOf whose schemas nest (a player's character is a storyteller's without
# st_notes): closed, so that a response matches exactly one of them.
CLOSED = ("Character",)


# A game's start time is a wall-clock time in the chronicle's zone ("19:30:00"), not RFC 3339's
# `full-time` (which needs an offset): documented by its pattern, which DRF's TimeField reads.
LOCAL_TIME = {
    "type": "string",
    "pattern": r"^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?$",
}


def _local_times(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "string" and node.get("format") == "time":
            del node["format"]
            node.update(LOCAL_TIME)
        for value in node.values():
            _local_times(value)
    elif isinstance(node, list):
        for value in node:
            _local_times(value)


def add_error_responses(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = ERROR_SCHEMA
    _local_times(result)
    for name in CLOSED:
        if name in components:
            components[name]["additionalProperties"] = False
    default_security = result.get("security", [])
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            statuses = ["403"]
            if _needs_login(operation, default_security):
                statuses.append("401")
            if any(p.get("in") == "path" for p in parameters):
                statuses.append("404")
            if method in WRITES or any(p.get("in") == "query" for p in parameters):
                statuses.append("400")
            if (method, path) in THROTTLED:
                statuses.append("429")
            for status in statuses:
                responses.setdefault(status, _error(status))
    return result


class TokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """`Authorization: Token <key>` (chronicle.api_auth.TokenAuthentication, a knox subclass
    that drf-spectacular's own knox extension does not match)."""

    target_class = "chronicle.api_auth.TokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'Token-based authentication with required prefix "Token"',
        }
