"""Character creation over the API (CRE-01..09): the same draft, quote and services as the
wizard's pages, under /api/chronicles/<slug>/drafts/."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from chronicle import access as chronicle_access
from chronicle.api import _InChronicle

from .. import access, rules
from ..models import CLAN_CHOICES, DISCIPLINE_CHOICES, Approval, Character, Creature, Sect
from ..services import creation
from ..services.creation import DisadvantagePick, DisciplinePick, Draft, Quote

LEVEL_OR_NONE = [("", "none"), *((code, code) for code in rules.LEVELS)]
MAX = creation.MAX_RATING


class DisciplinePickSerializer(serializers.Serializer):
    discipline = serializers.ChoiceField(choices=DISCIPLINE_CHOICES)
    free = serializers.ChoiceField(
        choices=[("", "none"), ("1a", "1a"), ("1b", "1b")],
        default="",
        help_text="Free basic in-clan levels taken (CRE-01): 1a, or 1b for 1a and 1b.",
    )
    top = serializers.ChoiceField(
        choices=LEVEL_OR_NONE,
        default="",
        help_text="Highest level owned after freebies; empty for the free levels only.",
    )


class DisadvantageSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    major = serializers.BooleanField(default=False)
    physical = serializers.BooleanField(default=False)
    hideously_ugly = serializers.BooleanField(default=False)


def _ratings(help_text: str) -> serializers.DictField:
    return serializers.DictField(
        child=serializers.IntegerField(min_value=0, max_value=MAX),
        required=False,
        default=dict,
        help_text=help_text,
    )


class DraftSerializer(serializers.Serializer):
    """The wizard's draft: package allocation, disadvantages and freebie purchases."""

    name = serializers.CharField(max_length=120)
    creature = serializers.ChoiceField(choices=Creature.choices, default=Creature.KINDRED)
    clan = serializers.ChoiceField(choices=[("", "none"), *CLAN_CHOICES], default="")
    chosen_disciplines = serializers.ListField(
        child=serializers.ChoiceField(choices=DISCIPLINE_CHOICES), default=list, max_length=3
    )
    clan_bonus = serializers.CharField(max_length=32, default="", allow_blank=True)
    physical = serializers.IntegerField(default=0, min_value=0, max_value=MAX)
    social = serializers.IntegerField(default=0, min_value=0, max_value=MAX)
    mental = serializers.IntegerField(default=0, min_value=0, max_value=MAX)
    abilities = _ratings("Package abilities: name to rating (5 points over at least 3).")
    willpower = serializers.IntegerField(default=0, min_value=0, max_value=MAX)
    influences = _ratings("Package influences: business, government, herd, occult, underworld.")
    disciplines = DisciplinePickSerializer(many=True, default=list)
    disadvantages = DisadvantageSerializer(many=True, default=list)
    generation = serializers.IntegerField(default=13, min_value=1, max_value=15)
    extra_physical = serializers.IntegerField(default=0, min_value=0, max_value=MAX)
    extra_social = serializers.IntegerField(default=0, min_value=0, max_value=MAX)
    extra_mental = serializers.IntegerField(default=0, min_value=0, max_value=MAX)
    extra_willpower = serializers.IntegerField(default=0, min_value=0, max_value=MAX)
    extra_abilities = _ratings("Ability points bought with freebies.")
    extra_influences = _ratings("Influence points bought with freebies.")
    sewer_lore = serializers.IntegerField(default=0, min_value=0, max_value=rules.MAX_SEWER_LORE)
    background_questionnaire = serializers.CharField(default="", allow_blank=True)
    background_story = serializers.CharField(default="", allow_blank=True)
    sect = serializers.ChoiceField(choices=[("", "none"), *Sect.choices], default="")
    protean_form = serializers.ChoiceField(
        choices=[("", "none"), *((form, form) for form in rules.PROTEAN_FORMS)],
        default="",
        help_text="Wolf or Bat for Protean 2a: required for a Gangrel (CRE-08).",
    )
    feeding_demographic = serializers.CharField(
        max_length=120,
        default="",
        allow_blank=True,
        help_text="Required for a Ventrue: a group under 20% of people (CLN-01).",
    )
    embrace_earth = serializers.BooleanField(
        default=False,
        help_text="A Tzimisce confirms it keeps earth from its embrace (CLN-01).",
    )

    def to_draft(self) -> Draft:
        data = dict(self.validated_data)
        data["chosen_disciplines"] = tuple(data["chosen_disciplines"])
        data["disciplines"] = tuple(DisciplinePick(**d) for d in data["disciplines"])
        data["disadvantages"] = tuple(DisadvantagePick(**d) for d in data["disadvantages"])
        return Draft(**data)


class CreationQuoteSerializer(serializers.Serializer):
    cost = serializers.IntegerField(help_text="Freebies this draft spends (CRE-01).")
    freebies = serializers.IntegerField(help_text="Freebies of the package (CRE-01).")
    lines = serializers.SerializerMethodField()
    problems = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Every rule problem by field; each sentence cites its rule ID.",
    )

    def get_lines(self, quote: Quote) -> list[dict[str, Any]]:
        return [{"item": label, "cost": cost} for label, cost in quote.lines]


class DraftOutSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    approval = serializers.ChoiceField(choices=Approval.choices)
    approval_note = serializers.CharField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    approved_at = serializers.DateTimeField(allow_null=True)
    background_approved_at = serializers.DateTimeField(allow_null=True)
    draft = serializers.SerializerMethodField()
    quote = serializers.SerializerMethodField()

    @extend_schema(responses=DraftSerializer)  # type: ignore[misc]
    def get_draft(self, character: Character) -> dict[str, Any]:
        return dict(DraftSerializer(_as_payload(Draft.from_character(character))).data)

    @extend_schema(responses=CreationQuoteSerializer)  # type: ignore[misc]
    def get_quote(self, character: Character) -> dict[str, Any]:
        return dict(CreationQuoteSerializer(creation.draft_quote(character)).data)


def _as_payload(draft: Draft) -> dict[str, Any]:
    data = draft.creation_json() | {
        "name": draft.name,
        "creature": draft.creature,
        "clan": draft.clan,
        "chosen_disciplines": list(draft.chosen_disciplines),
        "clan_bonus": draft.clan_bonus,
        "generation": draft.generation,
        "background_questionnaire": draft.background_questionnaire,
        "background_story": draft.background_story,
    }
    return data


class ReturnSerializer(serializers.Serializer):
    note = serializers.CharField(max_length=2000)


class DraftViewSet(
    _InChronicle,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Characters in creation: a player sees their own, storytellers every one (CRE-09)."""

    serializer_class = DraftOutSerializer
    lookup_value_regex = r"\d+"
    http_method_names = ["get", "post", "put", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[Character]:
        return (
            access.characters_visible_to(self.membership)
            .exclude(approval=Approval.APPROVED)
            .select_related("chronicle")
            .order_by("pk")
        )

    def get_object(self) -> Character:
        return access.character_for(self.membership, int(self.kwargs["pk"]))

    def _out(self, character: Character, code: int = status.HTTP_200_OK) -> Response:
        character.refresh_from_db()
        return Response(DraftOutSerializer(character).data, status=code)

    @extend_schema(request=DraftSerializer, responses={201: DraftOutSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        payload = DraftSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        character = creation.character_draft_create(
            chronicle=self.membership.chronicle,
            player=chronicle_access.acting_user(request.user),
            draft=payload.to_draft(),
        )
        return self._out(character, status.HTTP_201_CREATED)

    @extend_schema(request=DraftSerializer, responses=DraftOutSerializer)
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Replace the whole draft (only its player or an ST, while draft or returned)."""
        character = self.get_object()
        payload = DraftSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        creation.character_draft_update(
            character=character,
            by=chronicle_access.acting_user(request.user),
            draft=payload.to_draft(),
        )
        return self._out(character)

    @extend_schema(
        request=None,
        responses={204: None},
        description="Delete a character still in creation, never approved (its player or an "
        "ST): it frees a place under the open-drafts limit.",
    )
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        creation.character_draft_delete(
            character=self.get_object(), by=chronicle_access.acting_user(request.user)
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=DraftSerializer,
        responses=CreationQuoteSerializer,
        description="The freebie quote of a draft without saving it: cost, freebies, and every "
        "problem by field (CRE-01).",
    )
    @action(detail=False, methods=["post"])
    def check(self, request: Request, slug: str) -> Response:
        payload = DraftSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        quote = creation.creation_quote(
            payload.to_draft(), house_rules=self.membership.chronicle.house_rules
        )
        return Response(CreationQuoteSerializer(quote).data)

    @extend_schema(request=None, responses=DraftOutSerializer, description="CRE-09: submit.")
    @action(detail=True, methods=["post"])
    def submit(self, request: Request, slug: str, pk: str) -> Response:
        character = self.get_object()
        creation.character_submit(
            character=character, by=chronicle_access.acting_user(request.user)
        )
        return self._out(character)

    @extend_schema(
        request=None, responses=DraftOutSerializer, description="CRE-09: approve (storytellers)."
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, slug: str, pk: str) -> Response:
        character = access.character_for_staff(self.membership, int(pk))
        creation.character_approve(
            character=character, by=chronicle_access.acting_user(request.user)
        )
        return self._out(character)

    @extend_schema(
        request=ReturnSerializer,
        responses=DraftOutSerializer,
        description="CRE-09: send back to the player with a note (storytellers).",
    )
    @action(detail=True, methods=["post"], url_path="return")
    def return_to_player(self, request: Request, slug: str, pk: str) -> Response:
        character = access.character_for_staff(self.membership, int(pk))
        payload = ReturnSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        creation.character_return(
            character=character,
            by=chronicle_access.acting_user(request.user),
            note=payload.validated_data["note"],
        )
        return self._out(character)

    @extend_schema(
        request=None,
        responses=DraftOutSerializer,
        description="CRE-09: approve the background (storytellers).",
    )
    @action(detail=True, methods=["post"], url_path="background-approve")
    def background_approve(self, request: Request, slug: str, pk: str) -> Response:
        character = access.character_for_staff(self.membership, int(pk))
        creation.background_approve(
            character=character, by=chronicle_access.acting_user(request.user)
        )
        return self._out(character)


def register(router: SimpleRouter) -> None:
    router.register(r"chronicles/(?P<slug>[-\w]+)/drafts", DraftViewSet, basename="api-draft")
