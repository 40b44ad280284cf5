"""The player's downtime (DT-01/02) over the API: the same access functions and services as the
page. A player lists and changes only their own submissions; storytellers read all of them but
write none (a downtime is its player's words). ST-only fields of the desk (notes, assignee, an
unreleased result) never appear here."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from characters.models import Character, InfluenceLoan
from chronicle import access as chronicle_access
from chronicle.api import _InChronicle
from chronicle.models import Membership
from chronicle.services import current_downtime
from havens import access as havens_access
from havens.models import Structure

from .. import access
from ..models import ActionKind, DeskItem, Submission
from ..rules import CATEGORIES
from ..services import submissions as services

UNKNOWN_HAVEN = services.NO_HAVEN
STRUCTURE_ACTIONS = (ActionKind.BUILD, ActionKind.REPAIR, ActionKind.ATTACK_HAVEN)


def _actable_structure(membership: Membership, action: str, structure_id: int) -> Structure:
    """HAV-04: build/repair name one of the player's own havens, an attack one of their
    released finds; anything else (another's haven, a found one to build on) answers exactly
    like an unknown id. The service checks the character too."""
    structures = Structure.objects.filter(pk=structure_id)
    if action == ActionKind.ATTACK_HAVEN:
        found = havens_access.finds_visible_to(membership).values("structure_id")
        structures = structures.filter(pk__in=found)
    else:
        own = havens_access.structures_visible_to(membership).values("pk")
        structures = structures.filter(pk__in=own)
    structure = structures.first()
    if structure is None:
        raise serializers.ValidationError({"target_structure": gettext(UNKNOWN_HAVEN)})
    return structure


UNKNOWN_LENDER = gettext_noop("Ask this lender for the loan first (INF-03).")


class ItemSerializer(serializers.ModelSerializer):
    """What the player sees of a desk item: what they typed, its status, and the result once
    released. Plain strings, not enums: these choice sets appear elsewhere in the API."""

    kind = serializers.CharField(read_only=True)
    influence = serializers.CharField(read_only=True)
    action = serializers.CharField(read_only=True)
    power = serializers.CharField(read_only=True)
    status = serializers.CharField(read_only=True)
    result = serializers.SerializerMethodField()

    class Meta:
        model = DeskItem
        fields = [
            "id",
            "kind",
            "influence",
            "points",
            "action",
            "power",
            "target_name",
            "target_structure",
            "target_text",
            "description",
            "lender",
            "purchase",
            "status",
            "result",
            "released_at",
            "withdrawn_at",
            "created_at",
        ]
        read_only_fields = fields

    def get_result(self, item: DeskItem) -> str:
        return item.result if item.released_at is not None else ""


class SubmissionSerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True)
    character_name = serializers.CharField(source="character.name", read_only=True)
    deadline_at = serializers.DateTimeField(source="cycle.deadline_at", read_only=True)
    state = serializers.SerializerMethodField(
        help_text="open, closed_early (the storytellers closed it before its deadline) or "
        "deadline_passed."
    )
    state_text = serializers.SerializerMethodField(
        help_text="The state in one sentence, its moments in the chronicle's time zone."
    )
    closed_at = serializers.DateTimeField(source="cycle.closed_at", read_only=True, allow_null=True)
    items = ItemSerializer(many=True, read_only=True)
    votes = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = [
            "id",
            "cycle",
            "character",
            "character_name",
            "status",
            "notes",
            "game_report",
            "version",
            "deadline_at",
            "state",
            "state_text",
            "closed_at",
            "created_at",
            "updated_at",
            "submitted_at",
            "items",
            "votes",
        ]
        read_only_fields = fields

    def get_votes(self, submission: Submission) -> dict[str, str]:
        return services.vote_choices(submission)

    def get_state(self, submission: Submission) -> str:
        return services.downtime_state(submission.cycle, self._now()).value

    def get_state_text(self, submission: Submission) -> str:
        return services.state_text(submission.cycle, self._now())

    def _now(self) -> dt.datetime:
        # One "now" for every row of a response.
        now: dt.datetime = self.context.setdefault("now", timezone.now())
        return now


class StartSerializer(serializers.Serializer):
    character = serializers.IntegerField(min_value=1)


class SaveSerializer(serializers.Serializer):
    notes = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    game_report = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    version = serializers.IntegerField(min_value=1)


class ActionSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=64)
    action = serializers.CharField(max_length=20, help_text="An influence action kind (INF-02).")
    influence = serializers.CharField(
        max_length=16,
        help_text="An influence type (INF-01) the action accepts (INF-02): herd only herd, "
        "research only occult, acquire any but herd, every other action any type.",
    )
    points = serializers.IntegerField(min_value=1, max_value=50)
    target_name = serializers.CharField(max_length=120, required=False, allow_blank=True)
    target_structure = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    target_text = serializers.CharField(max_length=300, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True)
    lender = serializers.IntegerField(min_value=1, required=False, allow_null=True)


class WithdrawSerializer(serializers.Serializer):
    item = serializers.IntegerField(min_value=1)


class PowerSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=64)
    power = serializers.CharField(max_length=20, help_text="A special power kind (DIS-09).")
    target_name = serializers.CharField(max_length=120, required=False, allow_blank=True)
    description = serializers.CharField()


class LoanSerializer(serializers.Serializer):
    lender_name = serializers.CharField(max_length=120)
    influence = serializers.CharField(max_length=16)
    points = serializers.IntegerField(min_value=1, max_value=50)


class VotesSerializer(serializers.Serializer):
    picks = serializers.DictField(
        child=serializers.IntegerField(min_value=1, allow_null=True),
        help_text="Category -> the id of a character who attended the cycle's game (feared, "
        "liked, respected) or of a player who attended (roleplaying, costume), as listed by "
        "`cast/`; null clears (DT-06).",
    )


class NomineeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class CastSerializer(serializers.Serializer):
    feared = NomineeSerializer(many=True)
    liked = NomineeSerializer(many=True)
    respected = NomineeSerializer(many=True)
    roleplaying = NomineeSerializer(many=True)
    costume = NomineeSerializer(many=True)


def _item_ids(submission: Submission) -> set[int]:
    """The submission's items before a keyed add: a replay answers one of these (200)."""
    return set(DeskItem.objects.filter(submission=submission).values_list("pk", flat=True))


class SubmissionViewSet(
    _InChronicle, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Downtime submissions: a player's own; storytellers read all."""

    serializer_class = SubmissionSerializer
    # ASCII digits only: a regex \d also takes other scripts' digits.
    lookup_value_regex = r"[0-9]+"

    def get_queryset(self) -> QuerySet[Submission]:
        return (
            access.submissions_visible_to(self.membership)
            # The cycle's chronicle: its zone for `state_text`, in the same query.
            .select_related("cycle", "cycle__chronicle", "character")
            # One query each for all rows' items and votes (with nominees): no per-row query.
            .prefetch_related("items", services.votes_prefetch())
            .order_by("-cycle__deadline_at", "character__name", "pk")
        )

    def get_object(self) -> Submission:
        return access.submission_for(self.membership, int(self.kwargs["pk"]))

    def _own(self) -> Submission:
        return access.own_submission_for(self.membership, int(self.kwargs["pk"]))

    def _out(self, submission: Submission, status: int = 200) -> Response:
        submission = access.submission_for(self.membership, submission.pk)
        return Response(SubmissionSerializer(submission).data, status=status)

    @extend_schema(
        request=StartSerializer,
        responses={201: SubmissionSerializer, 200: SubmissionSerializer},
        description="The character's downtime of the current cycle, created as a draft on "
        "first use (201); when it exists already, that one (200). Refused after the deadline "
        "(DT-01).",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = StartSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        character = (
            Character.objects.filter(
                chronicle=self.membership.chronicle, player_id=self.membership.user_id
            )
            .filter(pk=body.validated_data["character"])
            .first()
        )
        if character is None:
            raise serializers.ValidationError({"character": gettext("No such character.")})
        cycle = current_downtime(self.membership.chronicle, open_only=False)
        if cycle is None:
            raise serializers.ValidationError(gettext("No game has been played yet (DT-01)."))
        existed = Submission.objects.filter(cycle=cycle, character=character).exists()
        submission = services.submission_for_edit(
            character=character, cycle=cycle, by=chronicle_access.acting_user(request.user)
        )
        return self._out(submission, status=200 if existed else 201)

    @extend_schema(request=SaveSerializer, responses={200: SubmissionSerializer})
    @action(detail=True, methods=["post"])
    def save(self, request: Request, slug: str, pk: str) -> Response:
        body = SaveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        submission = services.submission_save(
            submission=self._own(),
            by=chronicle_access.acting_user(request.user),
            **body.validated_data,
        )
        return self._out(submission)

    @extend_schema(request=None, responses={200: SubmissionSerializer})
    @action(detail=True, methods=["post"])
    def submit(self, request: Request, slug: str, pk: str) -> Response:
        submission = services.submission_submit(
            submission=self._own(), by=chronicle_access.acting_user(request.user)
        )
        return self._out(submission)

    @extend_schema(
        request=ActionSerializer,
        responses={201: ItemSerializer, 200: ItemSerializer},
        description="Add an influence action (201); the same key again answers the item it "
        "made (200) and changes nothing.",
    )
    @action(detail=True, methods=["post"])
    def actions(self, request: Request, slug: str, pk: str) -> Response:
        submission = self._own()
        known = _item_ids(submission)
        body = ActionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        values = dict(body.validated_data)
        structure = None
        if values.get("target_structure") and values["action"] in STRUCTURE_ACTIONS:
            structure = _actable_structure(
                self.membership, values["action"], values["target_structure"]
            )
        lender = None
        if values.get("lender"):
            loan = (
                InfluenceLoan.objects.filter(
                    cycle=submission.cycle,
                    borrower=submission.character,
                    lender_id=values["lender"],
                    withdrawn_at__isnull=True,
                )
                .select_related("lender")
                .first()
            )
            if loan is None:
                raise serializers.ValidationError({"lender": gettext(UNKNOWN_LENDER)})
            lender = loan.lender
        item = services.influence_action_add(
            submission=submission,
            by=chronicle_access.acting_user(request.user),
            influence=values["influence"],
            points=values["points"],
            action=values["action"],
            key=values["key"],
            target_name=values.get("target_name", ""),
            target_structure=structure,
            target_text=values.get("target_text", ""),
            description=values.get("description", ""),
            lender=lender,
        )
        return Response(ItemSerializer(item).data, status=200 if item.pk in known else 201)

    @extend_schema(request=WithdrawSerializer, responses={200: ItemSerializer})
    @action(detail=True, methods=["post"])
    def withdraw(self, request: Request, slug: str, pk: str) -> Response:
        submission = self._own()
        body = WithdrawSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        item = submission.items.filter(pk=body.validated_data["item"]).first()
        if item is None:
            raise serializers.ValidationError({"item": gettext("No such item.")})
        item = services.item_withdraw(item=item, by=chronicle_access.acting_user(request.user))
        return Response(ItemSerializer(item).data)

    @extend_schema(
        request=PowerSerializer,
        responses={201: ItemSerializer, 200: ItemSerializer},
        description="Add a power used in downtime (201); the same key again answers the item "
        "it made (200) and changes nothing.",
    )
    @action(detail=True, methods=["post"])
    def powers(self, request: Request, slug: str, pk: str) -> Response:
        body = PowerSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        submission = self._own()
        known = _item_ids(submission)
        item = services.power_add(
            submission=submission,
            by=chronicle_access.acting_user(request.user),
            **body.validated_data,
        )
        return Response(ItemSerializer(item).data, status=200 if item.pk in known else 201)

    @extend_schema(request=LoanSerializer, responses={201: None})
    @action(detail=True, methods=["post"])
    def loans(self, request: Request, slug: str, pk: str) -> Response:
        body = LoanSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        loan = services.loan_request(
            submission=self._own(),
            by=chronicle_access.acting_user(request.user),
            **body.validated_data,
        )
        return Response({"id": loan.pk, "confirmed": loan.confirmed_at is not None}, status=201)

    @extend_schema(request=VotesSerializer, responses={200: SubmissionSerializer})
    @action(detail=True, methods=["post"])
    def votes(self, request: Request, slug: str, pk: str) -> Response:
        submission = self._own()
        body = VotesSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.votes_cast(
            submission=submission,
            by=chronicle_access.acting_user(request.user),
            picks=body.validated_data["picks"],
        )
        return self._out(submission)

    @extend_schema(
        request=None,
        responses={200: CastSerializer},
        description="Who may be picked in each vote category (DT-06): the characters, or the "
        "players, who attended the cycle's game, by name only; never the caller or their own "
        "characters.",
    )
    @action(detail=True, methods=["get"])
    def cast(self, request: Request, slug: str, pk: str) -> Response:
        submission = self._own()
        cast = services.cast_for(submission.cycle)
        return Response(
            {
                category: [
                    {"id": n.id, "name": n.name}
                    for n in cast.offered(category, self.membership.user_id)
                ]
                for category in CATEGORIES
            }
        )


def register(router: SimpleRouter) -> None:
    router.register(
        r"chronicles/(?P<slug>[-\w]+)/submissions", SubmissionViewSet, basename="api-submission"
    )
