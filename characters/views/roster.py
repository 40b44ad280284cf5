"""Placeholder: replaced by its owner."""

from django.http import Http404, HttpRequest, HttpResponse


def character_list(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404
