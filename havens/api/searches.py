"""Searches, finds, influence attacks (players), reinforcement attacks and hidden objects
(storytellers): the same access functions and services as the pages (HAV-25b..26, HID).

HAV-04: a player's answers carry their own searches, the locations they found once released
and whether the havens they attacked fell; never a structure's id, name, attributes, hiding
points or owners. Anything a member may not see answers 404, like what does not exist.
Every write takes a client-chosen `key`: sending it twice gives one effect."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Prefetch, QuerySet
from django.http import Http404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from characters.models import Character
from characters.rules import INFLUENCE_TYPES
from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.api import _InChronicle, created_status, last_id
from chronicle.models import Game, Membership

from .. import access
from ..models import (
    Find,
    HiddenObject,
    HiddenObjectSearch,
    InfluenceAttack,
    ReinforcementAttack,
    Search,
    Searcher,
    SearchResult,
    Structure,
    StructureStatus,
)
from ..services import searches as services
from ..words import translated

INFLUENCE_HELP = f"One of {', '.join(INFLUENCE_TYPES)}."
KEY_HELP = "Your idempotency key: the same key twice gives one effect."
UNKNOWN_CHARACTER = gettext_noop("No character of yours has that id.")


def _key(membership: Membership, key: str) -> str:
    return f"api:{membership.chronicle_id}:{membership.user_id}:{key}"


def _own_character(membership: Membership, character_id: int) -> Character:
    character = access.own_characters(membership).filter(pk=character_id).first()
    if character is None:
        raise serializers.ValidationError({"character": _(UNKNOWN_CHARACTER)})
    return character


def _chronicle_character(membership: Membership, character_id: int, field: str) -> Character:
    character = Character.objects.filter(chronicle=membership.chronicle, pk=character_id).first()
    if character is None:
        raise serializers.ValidationError({field: _("No character of this chronicle has that id.")})
    return character


def _chronicle_game(membership: Membership, game_id: int | None) -> Game | None:
    if game_id is None:
        return None
    game = Game.objects.filter(chronicle=membership.chronicle, pk=game_id).first()
    if game is None:
        raise serializers.ValidationError({"game": _("No game of this chronicle has that id.")})
    return game


def _own_find(membership: Membership, find_id: int, attacker: Character | None) -> Find:
    """HAV-25c: a current, released find of one of the member's characters (through
    `access.finds_visible_to`). An unknown id, another's find, an unreleased or a lost one,
    or one of another character than `attacker`, all get the same answer (HAV-04)."""
    finds = (
        access.finds_visible_to(membership)
        .filter(
            pk=find_id,
            cleared_at__isnull=True,
            character__in=access.own_characters(membership),
        )
        .select_related("character")
    )
    if attacker is not None:
        finds = finds.filter(character=attacker)
    find = finds.first()
    if find is None:
        raise serializers.ValidationError({"find": [_(services.UNKNOWN_HAVEN)]})
    return find


def _renamed(exc: DjangoValidationError, old: str, new: str) -> DjangoValidationError:
    """The service's refusal about `old`, told about the API's field `new`."""
    if not hasattr(exc, "error_dict"):
        return exc
    return DjangoValidationError(
        {(new if name == old else name): errors for name, errors in exc.message_dict.items()}
    )


def _id_field(**kwargs: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **kwargs)


# --- Searches ------------------------------------------------------------------------------------


class SpendSerializer(serializers.Serializer):
    character = serializers.IntegerField()
    influence = serializers.CharField()
    points = serializers.IntegerField()


class SearchSerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True, help_text="submitted, withdrawn or resolved")
    moment = serializers.CharField(read_only=True, help_text="downtime or game")
    game = serializers.IntegerField(source="cycle.game.number", read_only=True)
    searcher_count = serializers.SerializerMethodField()
    my_spends = serializers.SerializerMethodField()
    found_locations = serializers.SerializerMethodField(
        help_text="Locations found, once the results are released (HAV-25b); empty otherwise."
    )

    class Meta:
        model = Search
        fields = [
            "id",
            "target_name",
            "game",
            "moment",
            "status",
            "party_code",
            "created_at",
            "released_at",
            "searcher_count",
            "my_spends",
            "found_locations",
        ]
        read_only_fields = fields

    def get_searcher_count(self, search: Search) -> int:
        return len(search.searchers.all())

    @extend_schema_field(SpendSerializer(many=True))
    def get_my_spends(self, search: Search) -> list[dict[str, Any]]:
        own = self.context.get("own_ids", set())
        return [
            {"character": s.character_id, "influence": s.influence, "points": s.points}
            for s in search.searchers.all()
            if s.character_id in own
        ]

    def get_found_locations(self, search: Search) -> list[str]:
        if search.released_at is None:
            return []
        return [r.structure.location for r in getattr(search, "found_results", [])]


class StoredTextField(serializers.CharField):
    """A sentence a havens row keeps in English, in the request's language (havens.words)."""

    def to_representation(self, value: Any) -> str:
        return translated(str(value))


class SearchResultSerializer(serializers.ModelSerializer):
    location = serializers.CharField(source="structure.location")
    explanation = StoredTextField(read_only=True)

    class Meta:
        model = SearchResult
        fields = ["structure", "location", "spent", "hiding_points", "found", "explanation"]
        read_only_fields = fields


class StaffSearchSerializer(SearchSerializer):
    target = serializers.IntegerField(source="target_id", allow_null=True, read_only=True)
    searchers = serializers.SerializerMethodField()
    results = SearchResultSerializer(many=True, read_only=True)

    class Meta(SearchSerializer.Meta):
        fields = [*SearchSerializer.Meta.fields, "target", "searchers", "results"]
        read_only_fields = fields

    @extend_schema_field(SpendSerializer(many=True))
    def get_searchers(self, search: Search) -> list[dict[str, Any]]:
        return [
            {"character": s.character_id, "influence": s.influence, "points": s.points}
            for s in search.searchers.all()
        ]


class SearchInputSerializer(serializers.Serializer):
    character = _id_field()
    target_name = serializers.CharField(max_length=services.TARGET_NAME_MAX)
    influence = serializers.CharField(max_length=16, help_text=INFLUENCE_HELP)
    points = serializers.IntegerField(min_value=1, max_value=1000)
    key = serializers.CharField(max_length=40, help_text=KEY_HELP)


class JoinInputSerializer(serializers.Serializer):
    party_code = serializers.CharField(max_length=32)
    character = _id_field()
    influence = serializers.CharField(max_length=16, help_text=INFLUENCE_HELP)
    points = serializers.IntegerField(min_value=1, max_value=1000)
    key = serializers.CharField(max_length=40, help_text=KEY_HELP)


class WithdrawInputSerializer(serializers.Serializer):
    character = _id_field(required=False, help_text="Which of your searchers leaves (default all).")


class SearchViewSet(
    _InChronicle, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """HAV-25b: a player's own searches; storytellers see all, with the numbers."""

    lookup_value_regex = r"\d+"

    @property
    def staff(self) -> bool:
        return "slug" in self.kwargs and chronicle_access.is_staff(self.membership)

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return StaffSearchSerializer if self.staff else SearchSerializer

    def get_queryset(self) -> QuerySet[Search]:
        return self._related(access.searches_visible_to(self.membership))

    def _related(self, searches: QuerySet[Search]) -> QuerySet[Search]:
        searches = searches.select_related("cycle__game")
        prefetches: list[Any] = [
            Prefetch(
                "results",
                queryset=SearchResult.objects.filter(found=True).select_related("structure"),
                to_attr="found_results",
            )
        ]
        if self.staff:
            prefetches.append(
                Prefetch("results", queryset=SearchResult.objects.select_related("structure"))
            )
        prefetches.append("searchers")
        return searches.prefetch_related(*prefetches).order_by("-created_at", "-pk")

    def get_object(self) -> Search:
        pk = int(self.kwargs["pk"])
        if not 0 < pk <= MAX_ID:
            raise Http404(_("No such search."))
        search = self.get_queryset().filter(pk=pk).first()
        if search is None:
            raise Http404(_("No such search."))
        return search

    def get_serializer_context(self) -> dict[str, Any]:
        context = super().get_serializer_context()
        if "slug" in self.kwargs:
            context["own_ids"] = set(
                access.own_characters(self.membership).values_list("pk", flat=True)
            )
        return context

    def _out(self, search: Search, status: int = 200) -> Response:
        # Not through the visible set: a searcher who just withdrew still gets the answer.
        search = self._related(Search.objects.filter(pk=search.pk)).get()
        serializer = self.get_serializer_class()(search, context=self.get_serializer_context())
        return Response(serializer.data, status=status)

    @extend_schema(
        request=SearchInputSerializer,
        responses={201: SearchSerializer, 200: SearchSerializer},
        description="File a search (HAV-25b) naming the target in words; the answer is the "
        "same whether or not the name matches anyone. Spends influence (INF-03). The same key "
        "again answers the search it filed (200) and changes nothing.",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = SearchInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        before = last_id(Search)
        search = services.search_submit(
            character=_own_character(self.membership, data["character"]),
            target_name=data["target_name"],
            influence=data["influence"],
            points=data["points"],
            by=chronicle_access.acting_user(request.user),
            key=_key(self.membership, data["key"]),
        )
        return self._out(search, created_status(search, before))

    @extend_schema(
        request=JoinInputSerializer,
        responses={200: SearchSerializer},
        description="Join a search with the code its first searcher shared (HAV-25b).",
    )
    @action(detail=False, methods=["post"])
    def join(self, request: Request, slug: str) -> Response:
        body = JoinInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        search = services.search_join(
            party_code=data["party_code"],
            character=_own_character(self.membership, data["character"]),
            influence=data["influence"],
            points=data["points"],
            by=chronicle_access.acting_user(request.user),
            key=_key(self.membership, data["key"]),
        )
        return self._out(search)

    @extend_schema(
        request=WithdrawInputSerializer,
        responses={200: SearchSerializer},
        description="Leave a search before it is resolved; your influence is given back.",
    )
    @action(detail=True, methods=["post"])
    def withdraw(self, request: Request, slug: str, pk: str) -> Response:
        search = self.get_object()
        body = WithdrawInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        mine = access.own_characters(self.membership).filter(
            pk__in=Searcher.objects.filter(search=search).values("character_id")
        )
        if "character" in body.validated_data:
            mine = mine.filter(pk=body.validated_data["character"])
        by = chronicle_access.acting_user(request.user)
        for character in mine:
            services.search_withdraw(search=search, character=character, by=by)
        return self._out(search)


# --- Finds ---------------------------------------------------------------------------------------


class FindSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(
        read_only=True, help_text="The find's id: what an influence attack names (HAV-25c)."
    )
    character_name = serializers.CharField(source="character.name")
    location = serializers.CharField(source="structure.location")

    class Meta:
        model = Find
        fields = ["id", "character", "character_name", "location", "found_at"]
        read_only_fields = fields


class FindViewSet(_InChronicle, mixins.ListModelMixin, viewsets.GenericViewSet):
    """HAV-25b: the havens a player's characters know of, location only, once released."""

    serializer_class = FindSerializer

    def get_queryset(self) -> QuerySet[Find]:
        return (
            access.finds_visible_to(self.membership)
            .filter(cleared_at__isnull=True)
            .select_related("character", "structure")
            .order_by("pk")
        )


# --- Influence attacks -----------------------------------------------------------------------


class HavenAttackSerializer(serializers.ModelSerializer):
    attacker_name = serializers.CharField(source="attacker.name")
    location = serializers.CharField(source="structure.location")
    status = serializers.CharField(help_text="submitted, withdrawn or resolved")
    influence = serializers.CharField()
    outcome = serializers.SerializerMethodField(help_text="Whether the haven fell, once released.")

    class Meta:
        model = InfluenceAttack
        fields = [
            "id",
            "attacker",
            "attacker_name",
            "location",
            "influence",
            "points",
            "status",
            "created_at",
            "released_at",
            "outcome",
        ]
        read_only_fields = fields

    def get_outcome(self, attack: InfluenceAttack) -> str:
        return services.attack_outcome_for_attacker(attack)


class StaffHavenAttackSerializer(HavenAttackSerializer):
    explanation = StoredTextField(read_only=True)

    class Meta(HavenAttackSerializer.Meta):
        fields = [
            *HavenAttackSerializer.Meta.fields,
            "structure",
            "resistance_before",
            "resistance_after",
            "destroyed",
            "explanation",
        ]
        read_only_fields = fields


class HavenAttackInputSerializer(serializers.Serializer):
    find = _id_field(help_text="The id of one of your current finds (see finds).")
    character = _id_field(
        required=False, help_text="Optional: the attacker; it must be the find's character."
    )
    influence = serializers.CharField(max_length=16, help_text=INFLUENCE_HELP)
    points = serializers.IntegerField(min_value=1, max_value=1000)
    key = serializers.CharField(max_length=40, help_text=KEY_HELP)


class HavenAttackViewSet(_InChronicle, mixins.ListModelMixin, viewsets.GenericViewSet):
    """HAV-25c: a player's influence attacks on havens they found; storytellers see all."""

    lookup_value_regex = r"\d+"

    @property
    def staff(self) -> bool:
        return "slug" in self.kwargs and chronicle_access.is_staff(self.membership)

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return StaffHavenAttackSerializer if self.staff else HavenAttackSerializer

    def get_queryset(self) -> QuerySet[InfluenceAttack]:
        return (
            access.influence_attacks_visible_to(self.membership)
            .select_related("attacker", "structure")
            .order_by("-created_at", "-pk")
        )

    def _out(self, attack: InfluenceAttack, status: int = 200) -> Response:
        attack = self.get_queryset().get(pk=attack.pk)
        return Response(self.get_serializer_class()(attack).data, status=status)

    @extend_schema(
        request=HavenAttackInputSerializer,
        responses={201: HavenAttackSerializer, 200: HavenAttackSerializer},
        description="Attack a haven you found (HAV-25c), named by the id of your find (see "
        "finds). A find that is unknown, another's, lost, or from a search whose results are "
        "not yet released is refused exactly like one that does not exist. The same key again "
        "answers the attack it made (200).",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = HavenAttackInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        attacker = (
            _own_character(self.membership, data["character"]) if "character" in data else None
        )
        find = _own_find(self.membership, data["find"], attacker)
        before = last_id(InfluenceAttack)
        try:
            attack = services.influence_attack_submit(
                attacker=find.character,
                structure=find.structure_id,
                influence=data["influence"],
                points=data["points"],
                by=chronicle_access.acting_user(request.user),
                key=_key(self.membership, data["key"]),
            )
        except DjangoValidationError as exc:
            raise _renamed(exc, "structure", "find") from None
        return self._out(attack, created_status(attack, before))

    @extend_schema(request=None, responses={200: HavenAttackSerializer})
    @action(detail=True, methods=["post"])
    def withdraw(self, request: Request, slug: str, pk: str) -> Response:
        number = int(pk)
        attack = self.get_queryset().filter(pk=number).first() if 0 < number <= MAX_ID else None
        if attack is None:
            raise Http404(_("No such attack."))
        attack = services.influence_attack_withdraw(
            attack=attack, by=chronicle_access.acting_user(request.user)
        )
        return self._out(attack)


# --- Reinforcement attacks (staff) ----------------------------------------------------------


class AttackerSerializer(serializers.Serializer):
    character = _id_field(required=False, allow_null=True)
    name = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    potence = serializers.IntegerField(
        min_value=0, max_value=5, help_text="0 (no Potence), 1 (1a) .. 5 (3a)"
    )


class ReinforcementAttackSerializer(serializers.ModelSerializer):
    attackers = AttackerSerializer(many=True)
    results = serializers.ListField(child=serializers.BooleanField())

    class Meta:
        model = ReinforcementAttack
        fields = [
            "id",
            "structure",
            "game",
            "attackers",
            "bid",
            "reinforcement",
            "results",
            "penetrated",
            "note",
            "recorded_at",
        ]
        read_only_fields = fields


class ReinforcementPreviewInputSerializer(serializers.Serializer):
    structure = _id_field()
    potence = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=5), min_length=1, max_length=20
    )


class ReinforcementPreviewSerializer(serializers.Serializer):
    bid = serializers.IntegerField()
    reinforcement = serializers.IntegerField()
    influences_to_hold = serializers.IntegerField()
    points_to_hold = serializers.IntegerField()
    tie_winner = serializers.CharField(allow_null=True, help_text="structure, attacker or null")
    ratio_class = serializers.CharField(help_text="TST-01 class")
    any_potence_3a = serializers.BooleanField()


class ReinforcementInputSerializer(serializers.Serializer):
    structure = _id_field()
    game = _id_field()
    attackers = AttackerSerializer(many=True)
    results = serializers.ListField(
        child=serializers.BooleanField(), max_length=50, help_text="Oldest first; true: won"
    )
    note = serializers.CharField(required=False, allow_blank=True, default="")
    key = serializers.CharField(max_length=40, help_text=KEY_HELP)


def _staff_structure(membership: Membership, structure_id: int) -> Structure:
    chronicle_access.require_staff(membership)
    return access.structure_for_staff(membership, structure_id)


class ReinforcementAttackViewSet(_InChronicle, mixins.ListModelMixin, viewsets.GenericViewSet):
    """HAV-26, storytellers only: recorded reinforcement attacks, the live preview, and
    recording one (penetration, breaching, alarms)."""

    serializer_class = ReinforcementAttackSerializer

    def get_queryset(self) -> QuerySet[ReinforcementAttack]:
        chronicle_access.require_staff(self.membership)
        return ReinforcementAttack.objects.filter(
            structure__chronicle=self.membership.chronicle
        ).order_by("-recorded_at", "-pk")

    @extend_schema(
        request=ReinforcementPreviewInputSerializer,
        responses={200: ReinforcementPreviewSerializer},
        description="The bid, the reinforcement now, what holding on ties takes, and the "
        "TST-01 class, writing nothing. 3a + 2a + 2a: 99 against 100.",
    )
    @action(detail=False, methods=["post"])
    def preview(self, request: Request, slug: str) -> Response:
        chronicle_access.require_staff(self.membership)
        body = ReinforcementPreviewInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        structure = _staff_structure(self.membership, body.validated_data["structure"])
        preview = services.reinforcement_attack_preview(
            structure=structure,
            potence_levels=body.validated_data["potence"],
            house_rules=self.membership.chronicle.house_rules,
        )
        return Response(ReinforcementPreviewSerializer(preview).data)

    @extend_schema(
        request=ReinforcementInputSerializer,
        responses={201: ReinforcementAttackSerializer, 200: ReinforcementAttackSerializer},
        description="Record a reinforcement attack (HAV-26); the same key again answers the "
        "one it recorded (200).",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        chronicle_access.require_staff(self.membership)
        body = ReinforcementInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        structure = _staff_structure(self.membership, data["structure"])
        if structure.status != StructureStatus.STANDING:
            raise serializers.ValidationError(
                {"structure": _("Only a standing structure can be attacked (HAV-26).")}
            )
        game = _chronicle_game(self.membership, data["game"])
        assert game is not None
        attackers = [
            services.AttackerEntry(
                character=(
                    _chronicle_character(self.membership, row["character"], "attackers")
                    if row.get("character")
                    else None
                ),
                name=row.get("name", ""),
                potence=row["potence"],
            )
            for row in data["attackers"]
        ]
        before = last_id(ReinforcementAttack)
        attack = services.reinforcement_attack_record(
            structure=structure,
            game=game,
            attackers=attackers,
            results=data["results"],
            by=chronicle_access.acting_user(request.user),
            key=_key(self.membership, data["key"]),
            note=data["note"],
        )
        return Response(
            ReinforcementAttackSerializer(attack).data, status=created_status(attack, before)
        )


# --- Hidden objects (staff) ------------------------------------------------------------------


class HiddenObjectSerializer(serializers.ModelSerializer):
    class Meta:
        model = HiddenObject
        fields = [
            "id",
            "hider",
            "description",
            "place",
            "obfuscate_bid",
            "number",
            "game",
            "registered_at",
            "found_by",
            "found_at",
            "removed_at",
        ]
        read_only_fields = fields


class HiddenObjectInputSerializer(serializers.Serializer):
    hider = _id_field()
    description = serializers.CharField(max_length=300)
    place = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    obfuscate_bid = serializers.IntegerField(min_value=0, max_value=1000)
    number = serializers.IntegerField(help_text="1 to 10 (HID-01)")
    game = _id_field(required=False, allow_null=True)
    key = serializers.CharField(
        max_length=40,
        required=False,
        allow_blank=True,
        default="",
        help_text="Optional: the same key sent twice registers one object.",
    )


class HiddenTestSerializer(serializers.Serializer):
    object = serializers.IntegerField()
    obfuscate_bid = serializers.IntegerField()
    # "class" is a Python keyword: the field is declared under another name below.
    higher = serializers.CharField(help_text="searcher, hider or even")
    won = serializers.BooleanField(allow_null=True)


HiddenTestSerializer._declared_fields["class"] = serializers.CharField(  # noqa: SLF001
    help_text="TST-01 class"
)


class HiddenSearchSerializer(serializers.ModelSerializer):
    results = HiddenTestSerializer(many=True)

    class Meta:
        model = HiddenObjectSearch
        fields = ["id", "searcher", "number", "bid", "game", "results", "recorded_at"]
        read_only_fields = fields


class HiddenSearchInputSerializer(serializers.Serializer):
    searcher = _id_field()
    number = serializers.IntegerField(help_text="1 to 10 (HID-02)")
    game = _id_field(required=False, allow_null=True)
    won = serializers.DictField(
        child=serializers.BooleanField(),
        required=False,
        help_text="Object id → the searcher won its test; send with the same key as the first "
        "call to record the tests.",
    )
    key = serializers.CharField(max_length=40, help_text=KEY_HELP)


class HiddenObjectViewSet(
    _InChronicle, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """HID-01/02, storytellers only: the registry, registering, and the Auspex search."""

    serializer_class = HiddenObjectSerializer
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[HiddenObject]:
        return access.hidden_objects_visible_to(self.membership).order_by("number", "pk")

    def get_object(self) -> HiddenObject:
        pk = int(self.kwargs["pk"])
        obj = self.get_queryset().filter(pk=pk).first() if 0 < pk <= MAX_ID else None
        if obj is None:
            raise Http404(_("No such object."))
        return obj

    @extend_schema(
        request=HiddenObjectInputSerializer,
        responses={201: HiddenObjectSerializer, 200: HiddenObjectSerializer},
        description="Register a hidden object; the same key again answers the one it "
        "registered (200).",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        chronicle_access.require_staff(self.membership)
        body = HiddenObjectInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        before = last_id(HiddenObject)
        obj = services.hidden_object_register(
            chronicle=self.membership.chronicle,
            hider=_chronicle_character(self.membership, data["hider"], "hider"),
            description=data["description"],
            place=data["place"],
            obfuscate_bid=data["obfuscate_bid"],
            number=data["number"],
            game=_chronicle_game(self.membership, data.get("game")),
            by=chronicle_access.acting_user(request.user),
            key=_key(self.membership, data["key"]) if data["key"] else "",
        )
        return Response(HiddenObjectSerializer(obj).data, status=created_status(obj, before))

    @extend_schema(request=None, responses={200: HiddenObjectSerializer})
    @action(detail=True, methods=["post"])
    def remove(self, request: Request, slug: str, pk: str) -> Response:
        obj = services.hidden_object_remove(
            obj=self.get_object(), by=chronicle_access.acting_user(request.user)
        )
        return Response(HiddenObjectSerializer(obj).data)

    @extend_schema(
        request=HiddenSearchInputSerializer,
        responses={200: HiddenSearchSerializer},
        description="HID-02: list the tests of an Auspex search of one number; call again "
        "with the same key and `won` to record them (a win reveals the object).",
    )
    @action(detail=False, methods=["post"])
    def search(self, request: Request, slug: str) -> Response:
        chronicle_access.require_staff(self.membership)
        body = HiddenSearchInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            won = {int(k): v for k, v in (data.get("won") or {}).items()}
        except ValueError:
            raise serializers.ValidationError({"won": _("Keys are object ids.")}) from None
        record = services.hidden_object_search(
            searcher=_chronicle_character(self.membership, data["searcher"], "searcher"),
            number=data["number"],
            game=_chronicle_game(self.membership, data.get("game")),
            won=won,
            by=chronicle_access.acting_user(request.user),
            key=_key(self.membership, data["key"]),
        )
        return Response(HiddenSearchSerializer(record).data)


def register(router: SimpleRouter) -> None:
    base = r"chronicles/(?P<slug>[-\w]+)"
    router.register(f"{base}/searches", SearchViewSet, basename="api-haven-search")
    router.register(f"{base}/finds", FindViewSet, basename="api-find")
    router.register(f"{base}/haven-attacks", HavenAttackViewSet, basename="api-haven-attack")
    router.register(
        f"{base}/reinforcement-attacks",
        ReinforcementAttackViewSet,
        basename="api-reinforcement-attack",
    )
    router.register(f"{base}/hidden-objects", HiddenObjectViewSet, basename="api-hidden-object")
