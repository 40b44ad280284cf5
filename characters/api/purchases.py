"""The sheet, the XP ledger and XP purchases (XP-01): the same access functions, selectors and
services as the pages."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from chronicle import access as chronicle_access
from chronicle.api import _InChronicle
from chronicle.models import Membership

from .. import access, selectors
from ..models import (
    DISCIPLINE_CHOICES,
    Character,
    Diablerie,
    PurchaseKind,
    PurchaseMoment,
    PurchaseStatus,
    XpEntry,
    XpPurchase,
)
from ..services import purchases as services
from ..services.purchase_quotes import MAX_QUANTITY, TEACHER_NAME_MAX

# --- Serializers ------------------------------------------------------------------------------


class LedgerEntrySerializer(serializers.ModelSerializer):
    # Plain strings, not enums: "kind" and "status" name other choice sets elsewhere in the API.
    kind = serializers.CharField(read_only=True)

    class Meta:
        model = XpEntry
        fields = ["id", "amount", "kind", "reason", "cycle", "character", "created_at"]
        read_only_fields = fields


class LedgerLineSerializer(serializers.Serializer):
    entry = LedgerEntrySerializer()
    balance = serializers.DecimalField(max_digits=8, decimal_places=1)


class LevelSerializer(serializers.Serializer):
    level = serializers.CharField(source="code")
    name = serializers.CharField(source="title")
    acquired = serializers.CharField()


class DisciplineRowSerializer(serializers.Serializer):
    discipline = serializers.CharField()
    title = serializers.CharField()
    levels = LevelSerializer(many=True)


class BondLineSerializer(serializers.Serializer):
    text = serializers.CharField()
    regnant = serializers.CharField(allow_null=True)
    kind = serializers.CharField()
    bound = serializers.BooleanField()


class BloodLineSerializer(serializers.Serializer):
    location = serializers.CharField(source="stored.location")
    on_body = serializers.BooleanField(source="stored.on_body")
    points = serializers.IntegerField(source="stored.points")
    donor_type = serializers.CharField(source="stored.donor_type")
    donors = serializers.ListField(child=serializers.CharField())
    unusable_from = serializers.DateField(source="stored.unusable_from", allow_null=True)
    expired = serializers.BooleanField()


class ItemLineSerializer(serializers.Serializer):
    name = serializers.CharField(source="item.name")
    concealability = serializers.CharField(source="item.concealability")
    armor = serializers.IntegerField(source="item.armor")
    expires_on = serializers.DateField(source="item.expires_on")
    expired = serializers.BooleanField()


class PurchaseSerializer(serializers.ModelSerializer):
    character_name = serializers.CharField(source="character.name", read_only=True)
    description = serializers.SerializerMethodField()
    teacher = serializers.SerializerMethodField(
        help_text="The teacher character's id, for storytellers; null for players, to whom "
        "other characters are unknown (they see `teacher_name`)."
    )
    kind = serializers.CharField(read_only=True, help_text="One of the PurchaseKind values.")
    status = serializers.CharField(read_only=True, help_text="requested, approved, ...")
    discipline = serializers.CharField(read_only=True)
    moment = serializers.CharField(read_only=True)

    class Meta:
        model = XpPurchase
        fields = [
            "id",
            "character",
            "character_name",
            "kind",
            "discipline",
            "levels",
            "target",
            "quantity",
            "teacher",
            "teacher_name",
            "moment",
            "cost",
            "status",
            "note",
            "decision_note",
            "requested_at",
            "decided_at",
            "description",
        ]
        read_only_fields = fields

    def get_description(self, purchase: XpPurchase) -> str:
        return services.describe(purchase)

    def get_teacher(self, purchase: XpPurchase) -> int | None:
        # The linked teacher may be another player's character: its id is not a player's.
        return purchase.teacher_id if self.context.get("staff") else None


class SheetSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="character.pk")
    name = serializers.CharField(source="character.name")
    creature = serializers.CharField(source="character.creature")
    clan = serializers.CharField(source="character.clan")
    generation = serializers.IntegerField(source="character.generation")
    physical = serializers.IntegerField(source="character.physical")
    social = serializers.IntegerField(source="character.social")
    mental = serializers.IntegerField(source="character.mental")
    willpower = serializers.IntegerField(source="character.willpower")
    xp_balance = serializers.DecimalField(max_digits=8, decimal_places=1)
    influences = serializers.DictField(child=serializers.IntegerField())
    disciplines = DisciplineRowSerializer(many=True)
    control = serializers.IntegerField(allow_null=True)
    on_body_limit = serializers.IntegerField(allow_null=True)
    diableries = serializers.IntegerField()
    stored_blood = BloodLineSerializer(many=True)
    bonds = BondLineSerializer(many=True)
    items = ItemLineSerializer(many=True)
    titles = serializers.SerializerMethodField()
    rituals = serializers.SerializerMethodField()
    sewer_lore = serializers.IntegerField()
    sewer_slots = serializers.IntegerField()
    pending_purchases = PurchaseSerializer(many=True)
    st_notes = serializers.CharField(
        allow_null=True, help_text="Only for storytellers; null for players."
    )

    def get_titles(self, sheet: selectors.Sheet) -> list[str]:
        return [str(title) for title in sheet.titles]

    def get_rituals(self, sheet: selectors.Sheet) -> list[str]:
        return [ritual.name for ritual in sheet.rituals]


class PurchaseInputSerializer(serializers.Serializer):
    character = serializers.IntegerField(min_value=1, max_value=chronicle_access.MAX_ID)
    kind = serializers.ChoiceField(choices=PurchaseKind.choices)
    discipline = serializers.ChoiceField(
        choices=DISCIPLINE_CHOICES, required=False, allow_blank=True, default=""
    )
    levels = serializers.ListField(
        child=serializers.RegexField(r"^[123][ab]$", help_text="1a, 1b, 2a, 2b or 3a"),
        required=False,
        default=list,
        max_length=5,
    )
    target = serializers.CharField(max_length=60, required=False, allow_blank=True, default="")
    quantity = serializers.IntegerField(min_value=1, max_value=MAX_QUANTITY, default=1)
    moment = serializers.ChoiceField(
        choices=PurchaseMoment.choices, default=PurchaseMoment.DOWNTIME
    )
    teacher = serializers.IntegerField(
        min_value=1,
        max_value=chronicle_access.MAX_ID,
        required=False,
        allow_null=True,
        help_text="Storytellers only: the teacher character's id (DIS-07, SEW-01).",
    )
    teacher_name = serializers.CharField(
        max_length=TEACHER_NAME_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="Players: the teacher as you know them; an ST confirms it at sign-off.",
    )
    note = serializers.CharField(required=False, allow_blank=True, default="")


# One answer for every id a member may not name, known or not, so it reveals nothing.
UNKNOWN_TEACHER = gettext_lazy(
    "No character you may name as a teacher has that id (DIS-07, SEW-01)."
)


def _teacher(membership: Membership, teacher_id: int | None) -> Character | None:
    """The teacher, only through `access.teacher_choices`."""
    if teacher_id is None:
        return None
    teacher = access.teacher_choices(membership).filter(pk=teacher_id).first()
    if teacher is None:
        raise serializers.ValidationError({"teacher": UNKNOWN_TEACHER})
    return teacher


class ApproveSerializer(serializers.Serializer):
    teacher = serializers.IntegerField(
        min_value=1,
        max_value=chronicle_access.MAX_ID,
        required=False,
        allow_null=True,
        help_text="The teacher character to link at sign-off (DIS-07, SEW-01); by default the "
        "purchase's own.",
    )


class QuoteProblemSerializer(serializers.Serializer):
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()


class QuoteSerializer(serializers.Serializer):
    cost = serializers.DecimalField(max_digits=6, decimal_places=1)
    problems = QuoteProblemSerializer(many=True)
    notes = serializers.ListField(child=serializers.CharField())


class RejectSerializer(serializers.Serializer):
    note = serializers.CharField()


# --- Views ------------------------------------------------------------------------------------


class SheetViewSet(_InChronicle, viewsets.GenericViewSet):
    """A character sheet: the player's own, any for storytellers (404 otherwise)."""

    serializer_class = SheetSerializer
    lookup_field = "character_id"
    lookup_value_regex = r"\d+"

    def retrieve(self, request: Request, slug: str, character_id: str) -> Response:
        character = access.character_for(self.membership, int(character_id))
        sheet = selectors.sheet_for(character=character, membership=self.membership)
        return Response(SheetSerializer(sheet, context={"staff": sheet.staff}).data)


class LedgerViewSet(_InChronicle, mixins.ListModelMixin, viewsets.GenericViewSet):
    """XP-07: the XP ledger of a character's player, oldest first."""

    serializer_class = LedgerEntrySerializer

    def get_queryset(self) -> QuerySet[XpEntry]:
        character = access.character_for(self.membership, int(self.kwargs["character_id"]))
        if character.player_id is None:
            return XpEntry.objects.none()
        return access.ledger_visible_to(self.membership, character.player_id).order_by(
            "created_at", "pk"
        )


class PurchaseViewSet(
    _InChronicle, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """XP purchases: a player sees and asks for their own; storytellers see all and decide."""

    serializer_class = PurchaseSerializer
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[XpPurchase]:
        purchases = access.purchases_visible_to(self.membership).select_related("character")
        status = self.request.query_params.get("status")
        if status:
            if status not in PurchaseStatus.values:
                raise serializers.ValidationError(
                    {
                        "status": _("Use one of %(values)s.")
                        % {"values": ", ".join(PurchaseStatus.values)}
                    }
                )
            purchases = purchases.filter(status=status)
        return purchases.order_by("-requested_at", "-pk")

    def get_object(self) -> XpPurchase:
        return access.purchase_for(self.membership, int(self.kwargs["pk"]))

    def get_serializer_context(self) -> dict[str, Any]:
        # Schema generation builds serializers without a request in a chronicle.
        staff = "slug" in self.kwargs and chronicle_access.is_staff(self.membership)
        return {**super().get_serializer_context(), "staff": staff}

    def _out(self, purchase: XpPurchase) -> dict[str, Any]:
        return PurchaseSerializer(purchase, context=self.get_serializer_context()).data

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=PurchaseStatus.values, required=False),
        ]
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    def _arguments(self, request: Request) -> tuple[Character, dict[str, Any], str]:
        data = PurchaseInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        character = access.character_for_owner(self.membership, values.pop("character"))
        teacher = _teacher(self.membership, values.pop("teacher", None))
        note = values.pop("note", "")
        return character, {**values, "teacher": teacher}, note

    @extend_schema(
        request=PurchaseInputSerializer,
        responses={201: PurchaseSerializer},
        description="Ask for a purchase (XP-01); refused with every rule problem, each "
        "beside its field. Asking twice for the same thing returns the pending request.",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        character, values, note = self._arguments(request)
        purchase = services.purchase_request(
            character=character,
            by=chronicle_access.acting_user(request.user),
            note=note,
            **values,
        )
        return Response(self._out(purchase), status=201)

    @extend_schema(
        request=PurchaseInputSerializer,
        responses={200: QuoteSerializer},
        description="The cost and every rule problem, writing nothing (the live preview).",
    )
    @action(detail=False, methods=["post"])
    def quote(self, request: Request, slug: str) -> Response:
        character, values, _ = self._arguments(request)
        quote = services.purchase_quote(
            character=character, staff=chronicle_access.is_staff(self.membership), **values
        )
        return Response(QuoteSerializer(quote).data)

    @extend_schema(request=ApproveSerializer, responses={200: PurchaseSerializer})
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, slug: str, pk: str) -> Response:
        purchase = self.get_object()
        chronicle_access.require_staff(self.membership)
        body = ApproveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        purchase = services.purchase_approve(
            purchase=purchase,
            by=chronicle_access.acting_user(request.user),
            teacher=_teacher(self.membership, body.validated_data.get("teacher")),
        )
        return Response(self._out(purchase))

    @extend_schema(request=RejectSerializer, responses={200: PurchaseSerializer})
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, slug: str, pk: str) -> Response:
        purchase = self.get_object()
        chronicle_access.require_staff(self.membership)
        body = RejectSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        purchase = services.purchase_reject(
            purchase=purchase,
            by=chronicle_access.acting_user(request.user),
            note=body.validated_data["note"],
        )
        return Response(self._out(purchase))

    @extend_schema(request=None, responses={200: PurchaseSerializer})
    @action(detail=True, methods=["post"])
    def withdraw(self, request: Request, slug: str, pk: str) -> Response:
        purchase = self.get_object()
        purchase = services.purchase_withdraw(
            purchase=purchase, by=chronicle_access.acting_user(request.user)
        )
        return Response(self._out(purchase))


class DiablerieStepSerializer(serializers.ModelSerializer):
    class Meta:
        model = Diablerie
        fields = ["id", "victim_name", "victim_generation", "occurred_on", "generation_step"]
        read_only_fields = fields


class DiablerieViewSet(_InChronicle, viewsets.GenericViewSet):
    """XP-05: a player's own diableries, whose queued generation step they may decline."""

    serializer_class = DiablerieStepSerializer
    lookup_value_regex = r"\d+"

    @extend_schema(
        request=None,
        responses={200: DiablerieStepSerializer},
        description="Decline the queued generation step of this diablerie (XP-05); other "
        "purchases may then go ahead. Only the diablerist's player; anyone else gets 404. "
        "Declining twice changes nothing.",
    )
    @action(detail=True, methods=["post"])
    def decline(self, request: Request, slug: str, character_id: str, pk: str) -> Response:
        diablerie = access.own_diablerie_for(self.membership, int(character_id), int(pk))
        diablerie = services.diablerie_step_decline(
            diablerie=diablerie, by=chronicle_access.acting_user(request.user)
        )
        return Response(DiablerieStepSerializer(diablerie).data)


def register(router: SimpleRouter) -> None:
    router.register(r"chronicles/(?P<slug>[-\w]+)/sheets", SheetViewSet, basename="api-sheet")
    router.register(
        r"chronicles/(?P<slug>[-\w]+)/characters/(?P<character_id>\d+)/ledger",
        LedgerViewSet,
        basename="api-ledger",
    )
    router.register(
        r"chronicles/(?P<slug>[-\w]+)/purchases", PurchaseViewSet, basename="api-purchase"
    )
    router.register(
        r"chronicles/(?P<slug>[-\w]+)/characters/(?P<character_id>\d+)/diableries",
        DiablerieViewSet,
        basename="api-diablerie",
    )
