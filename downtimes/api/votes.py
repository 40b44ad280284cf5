"""The vote tally (admins, DT-06..09) and the game-report picks (storytellers, DT-05): the same
services as the pages. Votes are secret: players get 403, strangers to the chronicle 404."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.api import _InChronicle, created_status, last_id
from chronicle.models import Cycle

from ..models import ReportPick, Submission, SubmissionStatus
from ..services import votes as services

CYCLE_PARAM = OpenApiParameter(
    "cycle",
    OpenApiTypes.INT,
    description="The cycle, named by its game's number (default: the latest closed cycle).",
)


def _cycle(membership: Any, raw: str | None) -> Cycle | None:
    cycles = chronicle_access.cycles_visible_to(membership)
    if raw is None:
        ordered = cycles.order_by("-game__date", "-pk")
        return ordered.exclude(status="open").first() or ordered.first()
    # isdecimal, not isdigit: int() refuses "²"; cycle_for bounds the number.
    if not raw.isdecimal():
        raise Http404(gettext("No such cycle."))
    return chronicle_access.cycle_for(membership, int(raw))


# --- Tally ---------------------------------------------------------------------------------------


class TallyRowSerializer(serializers.Serializer):
    nominee = serializers.CharField(help_text="Character id (in character) or player id.")
    name = serializers.CharField()
    player_name = serializers.CharField()
    votes = serializers.IntegerField(help_text="Toreador in-character ballots count twice.")
    ballots = serializers.IntegerField()
    doubled = serializers.IntegerField(help_text="Ballots of a Toreador, counted x2 (DT-06).")
    rank = serializers.IntegerField()
    winner = serializers.BooleanField()
    tied = serializers.BooleanField()
    announced = serializers.BooleanField(help_text="Among the top two announced (DT-09).")


class CategoryTallySerializer(serializers.Serializer):
    category = serializers.CharField(help_text="feared, liked, respected, roleplaying, costume")
    title = serializers.CharField(source="label")
    in_character = serializers.BooleanField()
    winning_places = serializers.IntegerField()
    tie_at_the_top = serializers.BooleanField()
    rows = TallyRowSerializer(many=True)


class AwardSerializer(serializers.Serializer):
    player = serializers.CharField(help_text="The player's user id.")
    name = serializers.CharField()
    xp = serializers.DecimalField(
        max_digits=6, decimal_places=1, help_text="The award XP setting is a decimal."
    )
    won = serializers.ListField(child=serializers.CharField())
    attended = serializers.BooleanField()
    waiver_signed = serializers.BooleanField()
    eligible = serializers.BooleanField(
        help_text="Attended and signed the waiver (DT-04), of age on the game's date (GEN-01)."
    )


class VoteTallySerializer(serializers.Serializer):
    game = serializers.IntegerField(source="cycle.game.number")
    cycle_status = serializers.CharField(source="cycle.status")
    ballots = serializers.IntegerField()
    voters = serializers.IntegerField()
    count_error = serializers.CharField(
        source="error", help_text="Why the stored ballots cannot be counted, if so (else empty)."
    )
    categories = CategoryTallySerializer(many=True)
    awards = AwardSerializer(many=True)


class _OneObjectSchema(AutoSchema):
    """The tally is one object per cycle, not a list, though it answers at the list route."""

    def _is_list_view(self, serializer: Any = None) -> bool:
        return False


class VoteTallyViewSet(_InChronicle, viewsets.GenericViewSet):
    """DT-06..09: a cycle's tally, winners and ties, the awards and the top two to announce.
    Computed from the votes every time; admins only."""

    serializer_class = VoteTallySerializer
    schema = _OneObjectSchema()
    pagination_class = None

    @extend_schema(parameters=[CYCLE_PARAM], responses={200: VoteTallySerializer})
    def list(self, request: Request, slug: str) -> Response:
        chronicle_access.require_admin(self.membership)
        cycle = _cycle(self.membership, request.query_params.get("cycle"))
        if cycle is None:
            raise Http404(gettext("No downtime cycle yet."))
        return Response(VoteTallySerializer(services.tally_for(cycle=cycle)).data)


# --- Report picks --------------------------------------------------------------------------------


class ReportPickSerializer(serializers.ModelSerializer):
    game = serializers.IntegerField(source="cycle.game.number", read_only=True)
    character = serializers.CharField(source="submission.character.name", read_only=True)
    game_report = serializers.CharField(source="submission.game_report", read_only=True)

    class Meta:
        model = ReportPick
        fields = [
            "id",
            "submission",
            "game",
            "character",
            "game_report",
            "sanitized_text",
            "published",
            "picked_at",
        ]
        read_only_fields = fields


class ReportPickInputSerializer(serializers.Serializer):
    submission = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    sanitized_text = serializers.CharField(required=False, allow_blank=True, default="")
    published = serializers.BooleanField(required=False, default=False)


class ReportPickUpdateSerializer(serializers.Serializer):
    sanitized_text = serializers.CharField(allow_blank=True)
    published = serializers.BooleanField()


class ReportPickViewSet(
    _InChronicle,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """DT-05: the picked game reports (storytellers): pick (at most 4 per cycle), change the
    sanitized text and publish flag, unpick."""

    serializer_class = ReportPickSerializer
    lookup_value_regex = r"\d+"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        chronicle_access.require_staff(self.membership)

    def get_queryset(self) -> QuerySet[ReportPick]:
        picks = ReportPick.objects.filter(cycle__chronicle=self.membership.chronicle)
        raw = self.request.query_params.get("cycle")
        if raw is not None and self.action == "list":
            cycle = _cycle(self.membership, raw)
            picks = picks.filter(cycle=cycle)
        return picks.select_related("cycle__game", "submission__character").order_by("pk")

    def get_object(self) -> ReportPick:
        pk = int(self.kwargs["pk"])
        pick = self.get_queryset().filter(pk=pk).first() if 0 < pk <= MAX_ID else None
        if pick is None:
            raise Http404(gettext("No such pick."))
        return pick

    def _out(self, pick: ReportPick, code: int = 200) -> Response:
        return Response(ReportPickSerializer(self.get_queryset().get(pk=pick.pk)).data, status=code)

    @extend_schema(parameters=[CYCLE_PARAM])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=ReportPickInputSerializer,
        responses={201: ReportPickSerializer, 200: ReportPickSerializer},
        description="Pick a submitted downtime's game report (DT-05). A 5th pick in a cycle is "
        "refused; picking the same report twice gives one pick (the second answers it, 200).",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = ReportPickInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        submission = Submission.objects.filter(
            pk=data["submission"],
            cycle__chronicle=self.membership.chronicle,
            status=SubmissionStatus.SUBMITTED,
        ).first()
        if submission is None:
            raise serializers.ValidationError(
                {"submission": gettext("No submitted downtime of this chronicle has that id.")}
            )
        before = last_id(ReportPick)
        pick = services.report_pick(
            submission=submission,
            by=chronicle_access.acting_user(request.user),
            sanitized_text=data["sanitized_text"],
            published=data["published"],
        )
        return self._out(pick, created_status(pick, before))

    @extend_schema(request=ReportPickUpdateSerializer, responses={200: ReportPickSerializer})
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        pick = self.get_object()
        body = ReportPickUpdateSerializer(
            data={
                "sanitized_text": request.data.get("sanitized_text", pick.sanitized_text),
                "published": request.data.get("published", pick.published),
            }
        )
        body.is_valid(raise_exception=True)
        pick = services.report_pick_update(
            pick=pick,
            by=chronicle_access.acting_user(request.user),
            **body.validated_data,
        )
        return self._out(pick)

    @extend_schema(request=None, responses={204: None})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        services.report_unpick(
            pick=self.get_object(), by=chronicle_access.acting_user(request.user)
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


def register(router: SimpleRouter) -> None:
    router.register(
        r"chronicles/(?P<slug>[-\w]+)/vote-tally", VoteTallyViewSet, basename="api-vote-tally"
    )
    router.register(
        r"chronicles/(?P<slug>[-\w]+)/report-picks", ReportPickViewSet, basename="api-report-pick"
    )
