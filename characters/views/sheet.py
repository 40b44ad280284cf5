"""Placeholder: replaced by its owner."""

from django.http import Http404, HttpRequest, HttpResponse


def character_sheet(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def character_print(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404
