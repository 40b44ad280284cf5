"""Placeholder: replaced by its owner."""

from django.http import Http404, HttpRequest, HttpResponse


def purchase_create(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def purchase_preview(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def purchase_queue(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def purchase_decide(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404


def purchase_withdraw(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise Http404
