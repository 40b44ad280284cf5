"""Placeholder: replaced by its owner."""

from django.http import Http404, HttpRequest, HttpResponse


def character_create(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def character_edit(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def character_check(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def character_submit(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def character_review(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404
