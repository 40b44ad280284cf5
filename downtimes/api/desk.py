"""The influence desk's API (staff only): the same filters, services and version check as the
pages. A player gets 403 on every endpoint; an item of another chronicle answers 404.

PATCH names the `version` it was made from; a stale one is refused (400, field "version")
and the answer's `current` would be read with a GET, as the page shows "their version"."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from characters.models import Character
from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.api import _InChronicle
from chronicle.models import Cycle

from ..forms.desk import DeskFilterForm, staff_members
from ..models import ActionKind, DeskItem, DeskStatus
from ..services import desk as services

STATUS_HELP = f"One of {', '.join(DeskStatus.values)}."
ACTION_HELP = f"One of {', '.join(ActionKind.values)}."


def _id_field(**kwargs: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **kwargs)


class DeskItemSerializer(serializers.ModelSerializer):
    # Plain strings, not enums: "kind", "status" and "action" name other choice sets elsewhere.
    kind = serializers.CharField(read_only=True, help_text="influence, purchase, power, at_game")
    status = serializers.CharField(read_only=True, help_text=STATUS_HELP)
    action = serializers.CharField(read_only=True, help_text=ACTION_HELP)
    power = serializers.CharField(read_only=True)
    influence = serializers.CharField(read_only=True)
    game = serializers.IntegerField(source="cycle.game.number", read_only=True)
    character_name = serializers.CharField(source="character.name", read_only=True)
    assignee_name = serializers.CharField(
        source="assignee.username", read_only=True, allow_null=True, default=None
    )

    class Meta:
        model = DeskItem
        fields = [
            "id",
            "game",
            "kind",
            "character",
            "character_name",
            "submission",
            "influence",
            "points",
            "action",
            "power",
            "target_name",
            "target_character",
            "target_structure",
            "target_text",
            "description",
            "lender",
            "purchase",
            "recorded_by",
            "requested_at",
            "withdrawn_at",
            "created_at",
            "status",
            "assignee",
            "assignee_name",
            "st_notes",
            "result",
            "released_at",
            "updated_at",
            "version",
        ]
        read_only_fields = fields


class DeskItemUpdateSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, help_text="The version you read.")
    status = serializers.CharField(required=False, help_text=STATUS_HELP)
    assignee = serializers.IntegerField(
        required=False, allow_null=True, help_text="A storyteller's user id; null unassigns."
    )
    st_notes = serializers.CharField(required=False, allow_blank=True)
    result = serializers.CharField(required=False, allow_blank=True)


class BulkApproveSerializer(serializers.Serializer):
    game = _id_field(help_text="The cycle after this game.")
    ids = serializers.ListField(
        child=_id_field(),
        required=False,
        help_text="These items; without it, every item the query's filters match.",
    )


class BulkResultSerializer(serializers.Serializer):
    updated = serializers.IntegerField()
    skipped = serializers.IntegerField()


class AtGameRequestSerializer(serializers.Serializer):
    game = _id_field(help_text="The game the request was made at.")
    character = _id_field()
    action = serializers.CharField(help_text=ACTION_HELP)
    influence = serializers.CharField(required=False, allow_blank=True, default="")
    points = serializers.IntegerField(min_value=0, max_value=100, default=0)
    description = serializers.CharField(max_length=services.DESCRIPTION_MAX)
    requested_at = serializers.DateTimeField()
    key = serializers.CharField(max_length=40, help_text="Same key twice gives one request.")


FILTER_PARAMETERS = [
    OpenApiParameter("game", OpenApiTypes.INT, description="Only the cycle after this game."),
    OpenApiParameter("kind", OpenApiTypes.STR),
    OpenApiParameter("action", OpenApiTypes.STR),
    OpenApiParameter("status", OpenApiTypes.STR),
    OpenApiParameter("assignee", OpenApiTypes.STR, description='"me", "none" or a user id.'),
    OpenApiParameter("character", OpenApiTypes.INT),
    OpenApiParameter("target", OpenApiTypes.STR, description="Words of the target."),
]


class DeskItemViewSet(
    _InChronicle, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """The influence desk (storytellers and admins)."""

    serializer_class = DeskItemSerializer
    lookup_value_regex = r"\d+"
    http_method_names = ["get", "patch", "post", "head", "options"]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if "slug" in self.kwargs:
            chronicle_access.require_staff(self.membership)

    def _cycle(self, number: Any) -> Cycle:
        # isdecimal, not isdigit: int() refuses "²"; cycle_for bounds the number.
        if isinstance(number, int):
            game = number
        elif isinstance(number, str) and number.isdecimal():
            game = int(number)
        else:
            raise Http404(gettext("No such cycle."))
        return chronicle_access.cycle_for(self.membership, game)

    def _filters(self) -> DeskFilterForm:
        """The query's filters; an invalid one is a 400 naming it, never silently dropped
        (that would widen the list, or the set a bulk approval changes)."""
        staff = staff_members(self.membership.chronicle_id)
        filters = DeskFilterForm(self.request.query_params, membership=self.membership, staff=staff)
        errors = filters.refusal()
        if errors:
            raise serializers.ValidationError(errors)
        return filters

    def get_queryset(self) -> QuerySet[DeskItem]:
        if "slug" not in self.kwargs:  # the schema generator
            return DeskItem.objects.none()
        items = DeskItem.objects.filter(
            cycle__chronicle_id=self.membership.chronicle_id
        ).select_related("cycle__game", "character", "assignee")
        if self.action == "list":
            params = self.request.query_params
            if params.get("game"):
                items = items.filter(cycle=self._cycle(params["game"]))
            items = self._filters().apply(items)
        return items.order_by("created_at", "pk")

    def get_object(self) -> DeskItem:
        pk = int(self.kwargs["pk"])
        if not 0 < pk <= MAX_ID:
            raise Http404(gettext("No such desk item."))
        item = self.get_queryset().filter(pk=pk).first()
        if item is None:
            raise Http404(gettext("No such desk item."))
        return item

    @extend_schema(parameters=FILTER_PARAMETERS)
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=DeskItemUpdateSerializer,
        responses={200: DeskItemSerializer},
        description="Change status, assignee, notes or result from `version`; a stale "
        "version is refused and nothing changes.",
    )
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        item = self.get_object()
        body = DeskItemUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        assignee = None
        unassign = "assignee" in data and data["assignee"] is None
        if data.get("assignee") is not None:
            staff = staff_members(self.membership.chronicle_id)
            assignee = next((m.user for m in staff if m.user_id == data["assignee"]), None)
            if assignee is None:
                raise serializers.ValidationError(
                    {
                        "assignee": gettext(
                            "Only a storyteller or admin of this chronicle can take an item."
                        )
                    }
                )
        services.desk_item_update(
            item=item,
            by=chronicle_access.acting_user(request.user),
            version=data["version"],
            status=data.get("status"),
            assignee=assignee,
            unassign=unassign,
            st_notes=data.get("st_notes"),
            result=data.get("result"),
        )
        return Response(DeskItemSerializer(self.get_object()).data)

    @extend_schema(
        request=BulkApproveSerializer,
        responses={200: BulkResultSerializer},
        parameters=FILTER_PARAMETERS[1:],
        description="Approve the cycle's undecided items among `ids`, or among those the "
        "query's filters match (an invalid filter is refused: 400, nothing approved); decided "
        "and withdrawn items, and XP purchases (signed off on the purchase queue, XP-01), are "
        "left as they are.",
    )
    @action(detail=False, methods=["post"], url_path="bulk-approve")
    def bulk_approve(self, request: Request, slug: str) -> Response:
        body = BulkApproveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        cycle = self._cycle(body.validated_data["game"])
        by = chronicle_access.acting_user(request.user)
        # Read (and so checked) even when `ids` names the items: an invalid filter is a 400.
        filters = self._filters()
        if "ids" in body.validated_data:
            done = services.desk_bulk_update(
                cycle=cycle, by=by, status=DeskStatus.APPROVED, ids=body.validated_data["ids"]
            )
        else:
            done = services.desk_bulk_update(
                cycle=cycle,
                by=by,
                status=DeskStatus.APPROVED,
                items=filters.apply(DeskItem.objects.filter(cycle=cycle)),
            )
        return Response(BulkResultSerializer(done).data)

    @extend_schema(
        request=AtGameRequestSerializer,
        responses={201: DeskItemSerializer, 200: DeskItemSerializer},
        description="Record an influence request made at the game (INF-04), time-stamped; "
        "points spend as spent at the game (INF-03).",
    )
    @action(detail=False, methods=["post"], url_path="at-game")
    def at_game(self, request: Request, slug: str) -> Response:
        body = AtGameRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        cycle = self._cycle(data["game"])
        character = Character.objects.filter(
            chronicle_id=self.membership.chronicle_id, pk=data["character"]
        ).first()
        if character is None:
            raise serializers.ValidationError(
                {"character": gettext("No character of this chronicle has that id.")}
            )
        item, created = services.at_game_request_record(
            cycle=cycle,
            character=character,
            by=chronicle_access.acting_user(request.user),
            action=data["action"],
            influence=data["influence"],
            points=data["points"],
            description=data["description"],
            requested_at=data["requested_at"],
            key=f"api:{request.user.pk}:{data['key']}",
        )
        item = self.get_queryset().get(pk=item.pk)
        return Response(DeskItemSerializer(item).data, status=201 if created else 200)


def register(router: SimpleRouter) -> None:
    base = r"chronicles/(?P<slug>[-\w]+)"
    router.register(f"{base}/desk-items", DeskItemViewSet, basename="api-desk-item")
