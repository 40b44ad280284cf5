"""One JSON error shape for the whole API:

    {"error": {"code": "invalid", "message": "...", "fields": {"date": ["..."]}}}

`fields` is present only for input errors. Django's own `ValidationError` (raised by services),
`Http404` and `PermissionDenied` come out in the same shape. `message` is in the request's
language (LocaleMiddleware and chronicle.middleware activate it; DRF's own texts come from its
catalogs, services' from ours).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def error_body(code: str, message: str, fields: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if fields:
        body["fields"] = fields
    return {"error": body}


def _flatten(detail: Any) -> Any:
    if isinstance(detail, dict):
        return {key: _flatten(value) for key, value in detail.items()}
    if isinstance(detail, list):
        return [_flatten(item) for item in detail]
    return str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        if hasattr(exc, "error_dict"):
            exc = exceptions.ValidationError(exc.message_dict)
        else:
            exc = exceptions.ValidationError({"non_field_errors": exc.messages})
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    assert isinstance(exc, exceptions.APIException)
    if isinstance(exc, exceptions.ValidationError):
        detail = _flatten(exc.detail)
        if not isinstance(detail, dict):
            detail = {"non_field_errors": detail}
        general = detail.pop("non_field_errors", None)
        message = " ".join(general) if general else _("Some fields need attention.")
        fields = detail or None
        if general and fields:
            fields["non_field_errors"] = general
        response.data = error_body("invalid", message, fields)
    else:
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        response.data = error_body(code, str(exc.detail))
    return response


def json_error(request: HttpRequest, code: str, message: str, status_code: int) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=status_code)
