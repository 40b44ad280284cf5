"""The storytellers' records as API endpoints: the same forms (for the input's shape), the same
services and the same access checks as the records page. A player gets 404 for another's
character and 403 for their own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from chronicle.access import acting_user
from chronicle.api import _InChronicle

from .. import access
from ..forms.staff import ACTION_FORMS
from ..models import Bond, Character, RegnantRequest
from ..views.staff import action_context


class BondSerializer(serializers.ModelSerializer):
    regnant_name = serializers.CharField(source="regnant.name", read_only=True)

    class Meta:
        model = Bond
        fields = [
            "id",
            "regnant",
            "regnant_name",
            "kind",
            "level",
            "bound",
            "since",
            "due_on",
            "ended_on",
            "end_reason",
            "notified_at",
        ]
        read_only_fields = fields


class RequestSerializer(serializers.ModelSerializer):
    class Meta:
        model = RegnantRequest
        fields = ["id", "regnant", "text", "set_at", "created_at", "dropped_at"]
        read_only_fields = fields


BondStateSerializer = inline_serializer(
    "BondState",
    {
        "bonds": BondSerializer(many=True),
        "requests": RequestSerializer(many=True),
    },
)
RecordDoneSerializer = inline_serializer("RecordDone", {"message": serializers.CharField()})


class RecordViewSet(_InChronicle, viewsets.ViewSet):
    """Storytellers' records on one character (BLD, BND, XP-04..07, TOR, ITM, SEW, MSC)."""

    object_actions = ("list",)  # one object: the bonds and the requests (chronicle.api_schema)

    def _character(self) -> Character:
        raw = self.kwargs["character_id"]
        return access.character_for_staff(self.membership, int(raw))

    @extend_schema(
        responses={200: BondStateSerializer},
        description="The character's bonds as a thrall (live and ended) and the requests set on "
        "it: the whole state, for storytellers only (BND-01..10).",
    )
    def list(self, request: Request, slug: str, character_id: str) -> Response:
        character = self._character()
        bonds = Bond.objects.filter(thrall=character).select_related("regnant").order_by("pk")
        requests = RegnantRequest.objects.filter(thrall=character).order_by("pk")
        return Response(
            {
                "bonds": BondSerializer(bonds, many=True).data,
                "requests": RequestSerializer(requests, many=True).data,
            }
        )

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={200: RecordDoneSerializer},
        parameters=[
            OpenApiParameter(
                "kind",
                str,
                OpenApiParameter.PATH,
                enum=sorted(ACTION_FORMS),
                description="Record kind.",
            )
        ],
        description="Record one storyteller action on the character. The body holds that "
        "action's fields, as on the records page (e.g. drink: donors, mixed, night). A refusal "
        "names its rule and writes nothing.",
    )
    @action(detail=False, methods=["post"], url_path=r"(?P<kind>[a-z-]+)")
    def record(self, request: Request, slug: str, character_id: str, kind: str) -> Response:
        character = self._character()
        form_class = ACTION_FORMS.get(kind)
        if form_class is None:
            raise Http404(_("No such record kind."))
        form = form_class(
            _form_data(request.data),
            context=action_context(self.membership, character),
            prefix=None,
        )
        _refuse_lists(form)
        if not form.is_valid():
            raise serializers.ValidationError(
                {
                    ("non_field_errors" if field == "__all__" else field): [str(e) for e in errors]
                    for field, errors in form.errors.items()
                }
            )
        done = form.run(by=acting_user(request.user), now=timezone.now())
        return Response({"message": str(done)})


def _form_data(data: Any) -> dict[str, Any]:
    """JSON as the records forms read it: text values, or lists of text for several choices.
    Django's form fields expect the strings a browser sends; a number or a boolean sent as JSON
    is the same value written out, and an object where a value belongs is refused."""
    if not isinstance(data, Mapping):
        raise serializers.ValidationError({"non_field_errors": [_("Send a JSON object.")]})
    scalars = (str, int, float, bool)
    clean: dict[str, Any] = {}
    problems: dict[str, list[str]] = {}
    for field, value in data.items():
        if value is None:
            continue
        if isinstance(value, list) and all(isinstance(item, scalars) for item in value):
            clean[field] = [str(item) for item in value]
        elif isinstance(value, scalars):
            clean[field] = str(value)
        else:
            problems[field] = [_("Expected a value or a list of values.")]
    if problems:
        raise serializers.ValidationError(problems)
    return clean


def _refuse_lists(form: forms.Form) -> None:
    """A list is a value only for a field that takes several (donors, searchers)."""
    problems = {
        name: [_("Expected one value, not a list.")]
        for name, field in form.fields.items()
        if isinstance(form.data.get(name), list)
        and not getattr(field.widget, "allow_multiple_selected", False)
    }
    if problems:
        raise serializers.ValidationError(problems)


def register(router: SimpleRouter) -> None:
    router.register(
        r"chronicles/(?P<slug>[-\w]+)/characters/(?P<character_id>\d+)/records",
        RecordViewSet,
        basename="api-record",
    )
