"""The between-games pipeline's API (issue 6, DT-10): the same services as the resolution pages.

- `resolution/` (storytellers and admins): each cycle's status and latest run's progress;
  POST close, resolve and release; GET the release plan and the XP report.
- `resolution/<game>/outcomes/` (storytellers and admins): the preview, paginated, each with its
  override; POST or DELETE `override` on one outcome.
- `results/` (every member): the caller's own released outcomes, only what a player reads.

A player gets 403 on the storytellers' endpoints, a stranger to the chronicle 404. The chronicle
app's `cycles/` endpoint stays the members' read of a cycle.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema, extend_schema_field, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.api import _InChronicle
from chronicle.api_errors import error_body
from chronicle.models import Cycle, CycleStatus

from ..forms.cycles import MAX_XP, NOTE_MAX
from ..models import Outcome, OutcomeOverride
from ..selectors import progress_by_cycle, release_plan_key
from ..services import pipeline
from ..services import release as release_service
from ..services.pipeline import Progress
from ..services.steps import outcome_step_order

ERROR = inline_serializer(
    "ResolutionError",
    {"error": serializers.DictField(child=serializers.CharField())},
)


# --- Serializers -------------------------------------------------------------------------------


class StepProgressSerializer(serializers.Serializer):
    name = serializers.CharField()
    # The metaclass takes declared fields out of the class, so this does not shadow
    # Field.label at run time; the stubs cannot know that.
    label = serializers.CharField()  # type: ignore[assignment]
    done = serializers.IntegerField(help_text="Chunks of this step done.")
    total = serializers.IntegerField(help_text="Chunks of this step in all.")


class ProgressSerializer(serializers.Serializer):
    run = serializers.IntegerField(source="run.number", help_text="The latest run's number.")
    status = serializers.CharField(source="run.status", help_text="running, done or superseded")
    started_at = serializers.DateTimeField(source="run.started_at")
    finished_at = serializers.DateTimeField(source="run.finished_at", allow_null=True)
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()
    steps = StepProgressSerializer(many=True)


class ResolutionCycleSerializer(serializers.ModelSerializer):
    game_number = serializers.IntegerField(source="game.number", read_only=True)
    progress = serializers.SerializerMethodField(
        help_text="The latest resolution's progress, per step in DT-10 order; null before the "
        "first."
    )

    class Meta:
        model = Cycle
        fields = [
            "game_number",
            "status",
            "deadline_at",
            "closed_at",
            "resolved_at",
            "released_at",
            "progress",
        ]
        read_only_fields = fields

    @extend_schema_field(ProgressSerializer(allow_null=True))
    def get_progress(self, cycle: Cycle) -> dict[str, Any] | None:
        progress: Progress | None = self.context.get("progress", {}).get(cycle.pk)
        return None if progress is None else dict(ProgressSerializer(progress).data)


class UnfinishedSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="desk or purchases")
    label = serializers.CharField()  # type: ignore[assignment]
    count = serializers.IntegerField()
    field = serializers.CharField(
        help_text="The release's confirmation for this group (true to release anyway)."
    )


class XpGroupSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The ledger kind of these entries (e.g. purchase).")
    label = serializers.CharField()  # type: ignore[assignment]
    entries = serializers.IntegerField(source="count")
    total = serializers.DecimalField(max_digits=9, decimal_places=1)


class ReleasePlanSerializer(serializers.Serializer):
    xp_entries = serializers.IntegerField(help_text="XP ledger entries the release writes.")
    xp_total = serializers.DecimalField(max_digits=9, decimal_places=1)
    players = serializers.IntegerField(help_text="Players who get one summary e-mail each.")
    haven_outcomes = serializers.IntegerField()
    overrides = serializers.IntegerField()
    outcomes = serializers.IntegerField()
    key = serializers.CharField(
        help_text="Name it in the release to release only this preview (409 if it changed)."
    )
    unfinished = UnfinishedSerializer(
        many=True,
        help_text="Non-empty groups of unfinished work (desk items still New or In progress, "
        "XP purchases waiting for sign-off): the release needs each one's confirmation.",
    )
    blocked = serializers.BooleanField(
        help_text="The house rule unfinished_blocks_release (DT-REL) is on and work is "
        "unfinished: the release is refused (409) until it is done."
    )
    outside_release = XpGroupSerializer(
        many=True,
        help_text="Ledger entries of this cycle the release does not write (purchases charged "
        "at sign-off, XP-01), by kind; the XP report lists them apart.",
    )


class ReleaseSerializer(serializers.Serializer):
    key = serializers.CharField(
        required=False,
        max_length=64,
        help_text="The release plan's key: the release is refused (409) if the preview changed "
        "since. Without it, the current preview is released.",
    )
    confirm_desk = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Release with influence desk items still New or In progress (400 if some "
        "are and this is not true).",
    )
    confirm_purchases = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Release with XP purchases still waiting for sign-off (400 if some are and "
        "this is not true).",
    )


class XpLineSerializer(serializers.Serializer):
    player = serializers.CharField()
    character = serializers.CharField()
    xp = serializers.DecimalField(max_digits=7, decimal_places=1)
    reason = serializers.CharField()
    kind = serializers.CharField()
    note = serializers.CharField(help_text="The override's note, if an ST changed the award.")
    group = serializers.CharField(
        help_text="The release's own lines (the release plan's entries and total), or a group "
        "of ledger entries of the cycle outside the release."
    )
    in_release = serializers.BooleanField()


class OverrideSerializer(serializers.ModelSerializer):
    by = serializers.CharField(source="by.username", read_only=True)

    class Meta:
        model = OutcomeOverride
        fields = ["xp", "found", "note", "by", "at"]
        read_only_fields = fields


class OutcomeSerializer(serializers.ModelSerializer):
    step_label = serializers.SerializerMethodField()
    player_name = serializers.CharField(
        source="player.username", read_only=True, allow_null=True, default=None
    )
    character_name = serializers.CharField(
        source="character.name", read_only=True, allow_null=True, default=None
    )
    effective_xp = serializers.SerializerMethodField(
        help_text="The XP the release pays: the override's, else the computed one."
    )
    override = serializers.SerializerMethodField()
    # In the request's language (downtimes.wording); the English is what the columns keep.
    title = serializers.CharField(source="localized_title", read_only=True)
    explanation = serializers.CharField(source="localized_explanation", read_only=True)
    public_text = serializers.CharField(source="localized_public_text", read_only=True)

    class Meta:
        model = Outcome
        fields = [
            "id",
            "step",
            "step_label",
            "subject",
            "player",
            "player_name",
            "character",
            "character_name",
            "title",
            "explanation",
            "public_text",
            "xp",
            "effective_xp",
            "value",
            "overridable",
            "override",
        ]
        read_only_fields = fields

    def _override(self, outcome: Outcome) -> OutcomeOverride | None:
        overrides: dict[tuple[str, str], OutcomeOverride] = self.context.get("overrides", {})
        return overrides.get((outcome.step, outcome.subject))

    def get_step_label(self, outcome: Outcome) -> str:
        return str(STEP_LABELS.get(outcome.step, outcome.step))

    @extend_schema_field(serializers.DecimalField(max_digits=6, decimal_places=1, allow_null=True))
    def get_effective_xp(self, outcome: Outcome) -> Any:
        xp = pipeline.effective_xp(outcome, self.context.get("overrides", {}))
        return None if xp is None else f"{xp:.1f}"

    @extend_schema_field(OverrideSerializer(allow_null=True))
    def get_override(self, outcome: Outcome) -> dict[str, Any] | None:
        override = self._override(outcome)
        return None if override is None else dict(OverrideSerializer(override).data)


class OverrideInputSerializer(serializers.Serializer):
    xp = serializers.DecimalField(
        max_digits=None,
        decimal_places=None,
        min_value=Decimal(0),
        max_value=MAX_XP,
        required=False,
        allow_null=True,
        help_text="For an outcome overridable by 'xp': the XP to pay, in steps of 0.5.",
    )
    found = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="For an outcome overridable by 'found': whether the search finds its target.",
    )
    note = serializers.CharField(max_length=NOTE_MAX, help_text="Why; kept with the change.")


class ResultSerializer(serializers.ModelSerializer):
    game_number = serializers.IntegerField(source="cycle.game.number", read_only=True)
    step_label = serializers.SerializerMethodField()
    character_name = serializers.CharField(
        source="character.name", read_only=True, allow_null=True, default=None
    )
    text = serializers.SerializerMethodField(
        help_text="What the player reads (the summary e-mail's line, an XP override included)."
    )

    class Meta:
        model = Outcome
        fields = ["id", "game_number", "step", "step_label", "character_name", "text"]
        read_only_fields = fields

    def get_step_label(self, outcome: Outcome) -> str:
        return str(STEP_LABELS.get(outcome.step, outcome.step))

    def get_text(self, outcome: Outcome) -> str:
        overrides = self.context.get("overrides", {}).get(outcome.cycle_id, {})
        # The summary e-mail's own words, so the API, the page and the mail agree.
        return pipeline.public_line(outcome, overrides)


STEP_LABELS = dict(outcome_step_order())


# --- Views -------------------------------------------------------------------------------------


def _game_number(value: Any) -> int:
    # isdecimal, not isdigit: int() refuses "²"; cycle_for bounds the number.
    if isinstance(value, str) and value.isdecimal():
        return int(value)
    raise Http404(gettext("No such cycle."))


class _StaffOnly(_InChronicle):
    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if "slug" in self.kwargs:
            chronicle_access.require_staff(self.membership)


class ResolutionViewSet(
    _StaffOnly, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """The resolution of each downtime cycle (storytellers and admins): close, resolve (the
    workers compute the preview in DT-10 order), follow the progress, release."""

    serializer_class = ResolutionCycleSerializer
    unpaginated_actions = ("xp",)  # every XP line of the cycle, a bare array
    lookup_field = "game_number"
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[Cycle]:
        if "slug" not in self.kwargs:  # the schema generator
            return Cycle.objects.none()
        return chronicle_access.cycles_visible_to(self.membership).order_by("-deadline_at")

    def get_object(self) -> Cycle:
        return chronicle_access.cycle_for(self.membership, _game_number(self.kwargs["game_number"]))

    def _data(self, cycle: Cycle) -> dict[str, Any]:
        cycle.refresh_from_db(fields=["status", "closed_at", "resolved_at", "released_at"])
        progress = pipeline.run_progress(cycle=cycle)
        context = {"progress": {cycle.pk: progress} if progress.run else {}}
        return dict(ResolutionCycleSerializer(cycle, context=context).data)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        assert page is not None  # the project always paginates
        context = {"progress": progress_by_cycle(page)}
        return self.get_paginated_response(
            ResolutionCycleSerializer(page, many=True, context=context).data
        )

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return Response(self._data(self.get_object()))

    @extend_schema(
        request=None,
        responses={200: ResolutionCycleSerializer, 409: ERROR},
        description="Close the cycle before its deadline: submissions lock (DT-10). 409 if it "
        "was already closed.",
    )
    @action(detail=True, methods=["post"])
    def close(self, request: Request, slug: str, game_number: str) -> Response:
        cycle = self.get_object()
        if not pipeline.cycle_close_now(cycle=cycle, by=chronicle_access.acting_user(request.user)):
            cycle.refresh_from_db(fields=["status"])
            return Response(
                error_body(
                    "already_closed",
                    gettext("This cycle is already %(status)s.")
                    % {"status": cycle.get_status_display().lower()},
                ),
                status=status.HTTP_409_CONFLICT,
            )
        return Response(self._data(cycle))

    @extend_schema(
        request=None,
        responses={202: ResolutionCycleSerializer, 400: ERROR},
        description="Resolve the closed cycle into a preview, or resolve it again (overrides "
        "are kept): the steps run on the workers in DT-10 order; follow `progress`.",
    )
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, slug: str, game_number: str) -> Response:
        cycle = self.get_object()
        pipeline.cycle_resolve(cycle=cycle, by=chronicle_access.acting_user(request.user))
        return Response(self._data(cycle), status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        responses={200: ReleasePlanSerializer},
        description="What the release would do now: XP entries and their total, players "
        "e-mailed, haven outcomes and overrides applied; with the key naming this preview.",
    )
    @action(detail=True, methods=["get"], url_path="release-plan")
    def release_plan(self, request: Request, slug: str, game_number: str) -> Response:
        cycle = self.get_object()
        plan = pipeline.release_plan(cycle=cycle)
        _, key = release_plan_key(cycle, plan)
        unfinished = release_service.release_unfinished(cycle=cycle)
        return Response(
            ReleasePlanSerializer(
                {
                    **plan.__dict__,
                    "key": key,
                    "unfinished": [g for g in unfinished if g.count],
                    "blocked": release_service.unfinished_blocked(cycle, unfinished),
                    "outside_release": release_service.xp_statement(cycle=cycle).outside,
                }
            ).data
        )

    @extend_schema(
        request=ReleaseSerializer,
        responses={200: ResolutionCycleSerializer, 400: ERROR, 409: ERROR},
        description="Release the reviewed preview: XP into the ledger, haven changes, results "
        "to the players, one summary e-mail each. Cannot be undone; 409 if already released "
        "or if `key` names another preview. Each non-empty group of unfinished work in the "
        "release plan needs its confirmation (`confirm_desk`, `confirm_purchases`; 400 naming "
        "the missing ones); under the house rule DT-REL unfinished work refuses the release "
        "(409, code `unfinished`).",
    )
    @action(detail=True, methods=["post"])
    def release(self, request: Request, slug: str, game_number: str) -> Response:
        cycle = self.get_object()
        body = ReleaseSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        if cycle.status == CycleStatus.RELEASED:
            return Response(
                error_body(
                    "already_released", gettext("The results of this cycle are already released.")
                ),
                status=status.HTTP_409_CONFLICT,
            )
        key = body.validated_data.get("key")
        expected: tuple[int, str] | None = None
        if key is not None:
            run, current = release_plan_key(cycle, pipeline.release_plan(cycle=cycle))
            expected = (run, key)
            if key != current:
                return Response(
                    error_body(
                        "plan_changed",
                        gettext(
                            "The preview changed since this release plan was read; read it again."
                        ),
                    ),
                    status=status.HTTP_409_CONFLICT,
                )
        try:
            released = pipeline.cycle_release(
                cycle=cycle,
                by=chronicle_access.acting_user(request.user),
                expected_key=expected,
                confirmed_unfinished=release_service.confirmations_from(body.validated_data),
            )
        except pipeline.PreviewChanged as exc:
            return Response(
                error_body("plan_changed", " ".join(exc.messages)),
                status=status.HTTP_409_CONFLICT,
            )
        except release_service.UnfinishedBlocks as exc:
            return Response(
                error_body("unfinished", " ".join(exc.messages)),
                status=status.HTTP_409_CONFLICT,
            )
        if not released:
            return Response(
                error_body(
                    "already_released", gettext("The results of this cycle are already released.")
                ),
                status=status.HTTP_409_CONFLICT,
            )
        return Response(self._data(cycle))

    @extend_schema(
        responses={200: XpLineSerializer(many=True)},
        description="Every XP line of the cycle with its reason and group: first the release's "
        "(the preview, overrides included, until the release; the ledger's after), the same "
        "entries as the release plan counts; then the cycle's ledger entries outside the release "
        "(purchases charged at sign-off, XP-01).",
    )
    @action(detail=True, methods=["get"], url_path="xp")
    def xp(self, request: Request, slug: str, game_number: str) -> Response:
        cycle = self.get_object()
        return Response(XpLineSerializer(pipeline.xp_report(cycle=cycle), many=True).data)


class OutcomeViewSet(
    _StaffOnly, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """The preview of one cycle's resolution, in DT-10 order, each outcome with its override
    (storytellers and admins)."""

    serializer_class = OutcomeSerializer
    lookup_value_regex = r"\d+"

    @property
    def cycle(self) -> Cycle:
        cached = getattr(self, "_cycle", None)
        if cached is None:
            number = _game_number(self.kwargs["game_number"])
            cached = self._cycle = chronicle_access.cycle_for(self.membership, number)
        return cached

    def get_queryset(self) -> QuerySet[Outcome]:
        if "slug" not in self.kwargs:  # the schema generator
            return Outcome.objects.none()
        return pipeline.outcomes_for(cycle=self.cycle)

    def get_object(self) -> Outcome:
        pk = int(self.kwargs["pk"])
        if not 0 < pk <= MAX_ID:
            raise Http404(gettext("No such outcome."))
        outcome = self.get_queryset().filter(pk=pk).first()
        if outcome is None:
            raise Http404(gettext("No such outcome."))
        return outcome

    def get_serializer_context(self) -> dict[str, Any]:
        context = super().get_serializer_context()
        if "slug" in self.kwargs:
            context["overrides"] = pipeline.overrides_for(cycle=self.cycle)
        return context

    @extend_schema(
        methods=["POST"],
        request=OverrideInputSerializer,
        responses={200: OutcomeSerializer, 400: ERROR},
        description="Override the outcome, with a note: `xp` for an award, `found` for a "
        "search. Kept through re-resolving; applied by the release.",
    )
    @extend_schema(
        methods=["DELETE"],
        request=None,
        responses={204: None, 400: ERROR},
        description="Remove the outcome's override (204 whether or not it had one).",
    )
    @action(detail=True, methods=["post", "delete"])
    def override(self, request: Request, slug: str, game_number: str, pk: str) -> Response:
        outcome = self.get_object()
        by = chronicle_access.acting_user(request.user)
        if request.method == "DELETE":
            pipeline.outcome_override_remove(outcome=outcome, by=by)
            return Response(status=status.HTTP_204_NO_CONTENT)
        body = OverrideInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        pipeline.outcome_override(
            outcome=outcome, by=by, note=data["note"], xp=data.get("xp"), found=data.get("found")
        )
        return Response(OutcomeSerializer(outcome, context=self.get_serializer_context()).data)


class ResultViewSet(_InChronicle, mixins.ListModelMixin, viewsets.GenericViewSet):
    """The caller's own released results, newest cycle first: only what a player reads."""

    serializer_class = ResultSerializer

    def get_queryset(self) -> QuerySet[Outcome]:
        if "slug" not in self.kwargs:  # the schema generator
            return Outcome.objects.none()
        return pipeline.results_for(user=chronicle_access.acting_user(self.request.user)).filter(
            cycle__chronicle_id=self.membership.chronicle_id
        )

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        assert page is not None  # the project always paginates
        overrides: dict[int, dict[tuple[str, str], OutcomeOverride]] = defaultdict(dict)
        for o in OutcomeOverride.objects.filter(cycle_id__in={r.cycle_id for r in page}):
            overrides[o.cycle_id][(o.step, o.subject)] = o
        serializer = ResultSerializer(page, many=True, context={"overrides": overrides})
        return self.get_paginated_response(serializer.data)


def register(router: SimpleRouter) -> None:
    base = r"chronicles/(?P<slug>[-\w]+)"
    router.register(f"{base}/resolution", ResolutionViewSet, basename="api-resolution")
    router.register(
        rf"{base}/resolution/(?P<game_number>\d+)/outcomes",
        OutcomeViewSet,
        basename="api-resolution-outcome",
    )
    router.register(f"{base}/results", ResultViewSet, basename="api-result")
