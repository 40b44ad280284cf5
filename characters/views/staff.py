"""Placeholder: replaced by its owner."""

from django.http import Http404, HttpRequest, HttpResponse


def character_actions(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def character_action(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404
