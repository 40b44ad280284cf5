"""The character list and one character through the API (CLN filters), scoped by
`characters.access`: a player reads their own characters, storytellers every one.

Two serializers rather than one with a hidden field: the player's has no `st_notes` at all, so
no code path can leak them (DESIGN: ST notes are never shown to players)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from drf_spectacular.utils import (
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers, viewsets
from rest_framework.routers import SimpleRouter

from chronicle.access import is_staff
from chronicle.api import _InChronicle

from .. import rules
from ..access import character_for, characters_visible_to
from ..forms.roster import FILTER_CHOICES, RosterFilterForm
from ..models import CLAN_CHOICES, Character, Sect, Title


class TitleSerializer(serializers.ModelSerializer):
    class Meta:
        model = Title
        fields = ["name", "city"]
        read_only_fields = fields


class TraitsSerializer(serializers.Serializer):
    physical = serializers.IntegerField()
    social = serializers.IntegerField()
    mental = serializers.IntegerField()


class InfluencesSerializer(serializers.Serializer):
    business = serializers.IntegerField()
    government = serializers.IntegerField()
    herd = serializers.IntegerField()
    occult = serializers.IntegerField()
    underworld = serializers.IntegerField()


class CharacterSerializer(serializers.ModelSerializer):
    """What a player may read of a character (their own)."""

    player = serializers.CharField(
        source="player.username",
        read_only=True,
        allow_null=True,
        default=None,
        help_text="The player's username; null for NPCs.",
    )
    # Blank for a character without a sect or clan (an NPC, a ghoul): in the schema's enum too.
    clan = serializers.ChoiceField(choices=CLAN_CHOICES, allow_blank=True, read_only=True)
    sect = serializers.ChoiceField(choices=Sect.choices, allow_blank=True, read_only=True)
    traits = serializers.SerializerMethodField()
    influences = serializers.SerializerMethodField()
    titles = TitleSerializer(many=True, read_only=True)

    class Meta:
        model = Character
        fields = [
            "id",
            "name",
            "player",
            "creature",
            "clan",
            "sect",
            "generation",
            "status",
            "approval",
            "traits",
            "influences",
            "titles",
        ]
        read_only_fields = fields

    @extend_schema_field(TraitsSerializer)
    def get_traits(self, character: Character) -> dict[str, int]:
        return {
            "physical": character.physical,
            "social": character.social,
            "mental": character.mental,
        }

    @extend_schema_field(InfluencesSerializer)
    def get_influences(self, character: Character) -> dict[str, int]:
        return {name: getattr(character, name) for name in rules.INFLUENCE_TYPES}


class StaffCharacterSerializer(CharacterSerializer):
    """A storyteller's view: the player's, plus the private ST notes."""

    class Meta(CharacterSerializer.Meta):
        fields = [*CharacterSerializer.Meta.fields, "st_notes"]
        read_only_fields = fields


# Two schemas, as two serializers: a player's character has no st_notes at all (and may have
# no other property), a storyteller's always has them. Exactly one matches any response.
CHARACTER_FOR_READER = PolymorphicProxySerializer(
    component_name="CharacterForReader",
    serializers=[CharacterSerializer, StaffCharacterSerializer],
    resource_type_field_name=None,
)
CHARACTERS_FOR_READER = PolymorphicProxySerializer(
    component_name="CharacterForReader",
    serializers=[CharacterSerializer, StaffCharacterSerializer],
    resource_type_field_name=None,
    many=True,
)


FILTER_PARAMETERS = [
    OpenApiParameter("q", str, description="Part of the character's name or player's username."),
    *(
        OpenApiParameter(name, str, enum=[value for value, _ in choices])
        for name, choices in FILTER_CHOICES.items()
    ),
]


@extend_schema_view(
    list=extend_schema(
        parameters=FILTER_PARAMETERS,
        description="Storytellers and admins list every character of the chronicle (with "
        "st_notes: StaffCharacter); a player lists their own (Character, without st_notes).",
        responses=CHARACTERS_FOR_READER,
    ),
    retrieve=extend_schema(
        description="One character; st_notes only for storytellers and admins "
        "(StaffCharacter), never for a player (Character).",
        responses=CHARACTER_FOR_READER,
    ),
)
class CharacterViewSet(_InChronicle, viewsets.ReadOnlyModelViewSet):
    lookup_value_regex = r"\d+"

    def get_serializer_class(self) -> type[CharacterSerializer]:
        if getattr(self, "swagger_fake_view", False):
            return StaffCharacterSerializer
        if is_staff(self.membership):
            return StaffCharacterSerializer
        return CharacterSerializer

    def get_queryset(self) -> QuerySet[Character]:
        form = RosterFilterForm(self.request.query_params)
        if not form.is_valid():
            raise ValidationError(dict(form.errors.as_data()))
        return (
            form.apply(characters_visible_to(self.membership))
            .select_related("player")
            .prefetch_related("titles")
            .order_by("name", "pk")
        )

    def get_object(self) -> Character:
        return character_for(self.membership, int(self.kwargs["pk"]))


def register(router: SimpleRouter) -> None:
    router.register(
        r"chronicles/(?P<slug>[-\w]+)/characters", CharacterViewSet, basename="api-character"
    )
