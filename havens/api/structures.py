"""Havens' ownership and construction API (HAV-01..24), under /api/chronicles/<slug>/havens/:
the same access functions, selectors and services as the pages. A haven the caller may not
see answers 404 exactly like a missing one, before any input is read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from characters.models import Character
from chronicle import access as chronicle_access
from chronicle.access import MAX_ID
from chronicle.api import _InChronicle, created_status, last_id
from chronicle.models import Game

from .. import access, rules, selectors
from ..models import Attribute, Contribution, Project, ProjectStatus, Structure
from ..services import ownership as services

# Plain strings with the values in help texts, not enums: "kind" and "status" name other
# choice sets elsewhere in the API, and the services check every value anyway.
KINDS_HELP = "outer or crypt (HAV-01)."
ATTRIBUTE_HELP = "One of: " + ", ".join(rules.ATTRIBUTE_KINDS) + " (HAV-10..22)."
UNKNOWN_CHARACTER = gettext_noop("No character you may act for has that id.")

# --- Serializers -------------------------------------------------------------------------------


class HavenOwnerSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()


class HavenAttributeSerializer(serializers.ModelSerializer):
    kind = serializers.CharField(read_only=True, help_text=ATTRIBUTE_HELP)
    state = serializers.CharField(read_only=True)
    trigger = serializers.CharField(read_only=True)
    effect = serializers.CharField(read_only=True)

    class Meta:
        model = Attribute
        fields = ["id", "kind", "quantity", "state", "trigger", "effect", "note", "cost"]
        read_only_fields = fields


class HavenProjectSerializer(serializers.ModelSerializer):
    kind = serializers.CharField(read_only=True, help_text="attribute or repair")
    attribute_kind = serializers.CharField(read_only=True)
    status = serializers.CharField(read_only=True)
    trigger = serializers.CharField(read_only=True)
    effect = serializers.CharField(read_only=True)

    class Meta:
        model = Project
        fields = [
            "id",
            "kind",
            "attribute_kind",
            "quantity",
            "trigger",
            "effect",
            "repair_of",
            "cost",
            "paid",
            "status",
        ]
        read_only_fields = fields


class HavenStructureSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="structure.pk")
    kind = serializers.CharField(source="structure.kind", help_text=KINDS_HELP)
    name = serializers.CharField(source="structure.name")
    location = serializers.CharField(source="structure.location")
    description = serializers.CharField(source="structure.description")
    status = serializers.CharField(source="structure.status", help_text="planned, standing...")
    version = serializers.IntegerField(source="structure.version")
    ownership = serializers.CharField(help_text="exclusive, partial or none (HAV-02).")
    owners = HavenOwnerSerializer(many=True)
    attributes = HavenAttributeSerializer(many=True)
    projects = HavenProjectSerializer(many=True)
    hiding_points = serializers.IntegerField(
        allow_null=True, help_text="Storytellers only (HAV-25); null for players."
    )


class HavenAttributeLineSerializer(serializers.Serializer):
    kind = serializers.CharField(max_length=24, help_text=ATTRIBUTE_HELP)
    quantity = serializers.IntegerField(min_value=1, max_value=services.MAX_QUANTITY, default=1)
    trigger = serializers.CharField(
        max_length=12, required=False, allow_blank=True, default="", help_text="Alarms only."
    )
    effect = serializers.CharField(
        max_length=8, required=False, allow_blank=True, default="", help_text="Alarms only."
    )


def _id_field(**extra: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **extra)


class HavenDesignInputSerializer(serializers.Serializer):
    character = _id_field()
    kind = serializers.CharField(max_length=8, help_text=KINDS_HELP)
    outer = _id_field(required=False, allow_null=True, help_text="Crypts: the outer haven.")
    name = serializers.CharField(max_length=services.NAME_MAX)
    location = serializers.CharField(max_length=300)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    attributes = HavenAttributeLineSerializer(many=True)
    key = serializers.CharField(
        max_length=40,
        required=False,
        allow_blank=True,
        default="",
        help_text="Optional idempotency key: sending it again returns the haven it planned.",
    )


class HavenCheckInputSerializer(serializers.Serializer):
    kind = serializers.CharField(max_length=8, help_text=KINDS_HELP)
    outer = _id_field(required=False, allow_null=True)
    attributes = HavenAttributeLineSerializer(many=True)


class HavenUpgradeInputSerializer(serializers.Serializer):
    character = _id_field()
    attributes = HavenAttributeLineSerializer(many=True)
    version = serializers.IntegerField(
        required=False, allow_null=True, help_text="The design version you edited."
    )


class HavenUpgradeCheckSerializer(serializers.Serializer):
    attributes = HavenAttributeLineSerializer(many=True)


class HavenQuoteLineSerializer(serializers.Serializer):
    kind = serializers.CharField()
    quantity = serializers.IntegerField()
    trigger = serializers.CharField()
    effect = serializers.CharField()
    cost = serializers.IntegerField(allow_null=True)


class HavenQuoteProblemSerializer(serializers.Serializer):
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()


class HavenDesignQuoteSerializer(serializers.Serializer):
    lines = HavenQuoteLineSerializer(many=True)
    total = serializers.IntegerField()
    problems = HavenQuoteProblemSerializer(many=True)


class HavenContributeInputSerializer(serializers.Serializer):
    project = _id_field()
    character = _id_field()
    influence = serializers.CharField(max_length=16, help_text="One of the 5 influence types.")
    points = serializers.IntegerField(min_value=1, max_value=services.MAX_QUANTITY)
    key = serializers.CharField(
        max_length=40, help_text="Any unique string; sending it again pays once."
    )


class HavenContributionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    project = serializers.IntegerField(source="project_id")
    character = serializers.IntegerField(source="character_id")
    influence = serializers.CharField()
    points = serializers.IntegerField()
    cycle = serializers.IntegerField(source="cycle_id")


class HavenActorSerializer(serializers.Serializer):
    character = _id_field()


class HavenRepairInputSerializer(HavenActorSerializer):
    attribute = _id_field()


class HavenProjectActionSerializer(HavenActorSerializer):
    project = _id_field()


class HavenHandOverInputSerializer(HavenActorSerializer):
    to_name = serializers.CharField(
        max_length=services.NAME_MAX,
        required=False,
        allow_blank=True,
        default="",
        help_text="Players: the recipient's character name.",
    )
    to_character = _id_field(
        required=False, allow_null=True, help_text="Storytellers only: the recipient's id."
    )
    note = serializers.CharField(required=False, allow_blank=True, default="")


class HavenCryptVoteInputSerializer(HavenActorSerializer):
    crypt = _id_field(help_text="A crypt inside this outer haven (HAV-03).")


class HavenChangeSerializer(serializers.Serializer):
    """What the asker sees of a change: never whether a named recipient matched (HAV-04)."""

    id = serializers.IntegerField()
    kind = serializers.CharField(help_text="transfer, will, forsake, destroy_crypt...")
    status = serializers.CharField()
    to_name = serializers.CharField(help_text="The recipient as named, for a transfer or will.")
    note = serializers.CharField()


class HavenCryptVoteSerializer(serializers.Serializer):
    crypt = serializers.IntegerField(source="crypt_id")
    voter = serializers.IntegerField(source="voter_id")
    cycle = serializers.IntegerField(source="cycle_id")


class HavenTheftControlInputSerializer(serializers.Serializer):
    game = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="Game number.")
    thieves = serializers.ListField(child=_id_field(), min_length=1, max_length=20)


class HavenTheftControlSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    game = serializers.IntegerField(source="game.number")
    thieves = serializers.SerializerMethodField()

    def get_thieves(self, control: Any) -> list[int]:
        return sorted(t.pk for t in control.thieves.all())


class HavenChangeCancelSerializer(serializers.Serializer):
    change = _id_field()


# --- Views -------------------------------------------------------------------------------------


def _requests(lines: Sequence[dict[str, Any]]) -> list[services.AttributeRequest]:
    return [
        services.AttributeRequest(
            line["kind"], line["quantity"], line.get("trigger", ""), line.get("effect", "")
        )
        for line in lines
    ]


class StructureViewSet(
    _InChronicle, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Havens a member may see (HAV-04): players their own and their plans; storytellers all."""

    serializer_class = HavenStructureSerializer
    lookup_value_regex = r"\d+"
    unpaginated_actions = ("list",)  # a bare array: a member has a handful of havens

    def get_queryset(self) -> QuerySet[Structure]:
        return access.structures_visible_to(self.membership).order_by("name", "pk")

    def get_object(self) -> Structure:
        return access.structure_for(self.membership, int(self.kwargs["pk"]))

    def _rows(self, structures: list[Structure]) -> list[dict[str, Any]]:
        """A fixed number of queries whatever the number of structures."""
        owners = selectors.current_owners(structures)
        attributes = selectors.built_attributes(structures)
        projects: dict[int, list[Project]] = {s.pk: [] for s in structures}
        for project in Project.objects.filter(
            structure_id__in=list(projects),
            status__in=[ProjectStatus.OPEN, ProjectStatus.PAID],
        ).order_by("created_at", "pk"):
            projects[project.structure_id].append(project)
        staff = chronicle_access.is_staff(self.membership)
        hiding = (
            selectors.hiding_points_for(
                structures, house_rules=self.membership.chronicle.house_rules
            )
            if staff
            else {}
        )
        return [
            {
                "structure": s,
                "ownership": selectors.ownership_label(len(owners[s.pk])),
                "owners": owners[s.pk],
                "attributes": attributes[s.pk],
                "projects": projects[s.pk],
                "hiding_points": hiding.get(s.pk),
            }
            for s in structures
        ]

    def _out(self, structure: Structure) -> dict[str, Any]:
        return HavenStructureSerializer(self._rows([structure])[0]).data

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        rows = self._rows(list(self.get_queryset()))
        return Response(HavenStructureSerializer(rows, many=True).data)

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return Response(self._out(self.get_object()))

    def _character(self, character_id: int) -> Character:
        character = access.acting_characters(self.membership).filter(pk=character_id).first()
        if character is None:
            raise serializers.ValidationError({"character": _(UNKNOWN_CHARACTER)})
        return character

    def _outer(self, outer_id: int | None) -> Structure | None:
        if outer_id is None:
            return None
        outer = access.structures_visible_to(self.membership).filter(pk=outer_id).first()
        if outer is None:
            raise serializers.ValidationError({"outer": _(services.UNKNOWN_OUTER)})
        return outer

    def _key(self, key: str) -> str:
        """The caller's key, scoped to this chronicle and user like every API key."""
        if not key:
            return ""
        return f"api:{self.membership.chronicle_id}:{self.membership.user_id}:{key}"

    def _body(self, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
        body = serializer_class(data=self.request.data)
        body.is_valid(raise_exception=True)
        return dict(body.validated_data)

    @extend_schema(
        request=HavenDesignInputSerializer,
        responses={201: HavenStructureSerializer, 200: HavenStructureSerializer},
        description="Plan a haven (HAV-01, HAV-23); refused with every rule problem. The same "
        "key again answers the haven it planned (200) and changes nothing.",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = self._body(HavenDesignInputSerializer)
        before = last_id(Structure)
        structure = services.structure_design(
            character=self._character(data["character"]),
            by=chronicle_access.acting_user(request.user),
            kind=data["kind"],
            name=data["name"],
            location=data["location"],
            description=data["description"],
            outer=self._outer(data.get("outer")),
            attributes=_requests(data["attributes"]),
            key=self._key(data["key"]),
        )
        # A replayed key returns the first haven: through access, in case it has since
        # changed hands (HAV-04).
        structure = access.structure_for(self.membership, structure.pk)
        return Response(self._out(structure), status=created_status(structure, before))

    @extend_schema(
        request=HavenCheckInputSerializer,
        responses={200: HavenDesignQuoteSerializer},
        description="The cost of each line and every rule problem of a design; writes nothing.",
    )
    @action(detail=False, methods=["post"])
    def check(self, request: Request, slug: str) -> Response:
        data = self._body(HavenCheckInputSerializer)
        quote = services.design_quote(
            chronicle=self.membership.chronicle,
            kind=data["kind"],
            outer=self._outer(data.get("outer")),
            attributes=_requests(data["attributes"]),
        )
        return Response(HavenDesignQuoteSerializer(quote).data)

    @extend_schema(request=HavenUpgradeInputSerializer, responses={200: HavenStructureSerializer})
    @action(detail=True, methods=["post"])
    def upgrade(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        data = self._body(HavenUpgradeInputSerializer)
        services.structure_upgrade(
            structure=structure,
            character=self._character(data["character"]),
            by=chronicle_access.acting_user(request.user),
            attributes=_requests(data["attributes"]),
            version=data.get("version"),
        )
        return Response(self._out(self.get_object()))

    @extend_schema(
        request=HavenUpgradeCheckSerializer,
        responses={200: HavenDesignQuoteSerializer},
        operation_id="chronicles_havens_upgrade_check",
        description="The cost and problems of adding these lines to the current design.",
    )
    @action(detail=True, methods=["post"], url_path="check")
    def check_upgrade(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        data = self._body(HavenUpgradeCheckSerializer)
        quote = services.upgrade_quote(
            structure=structure, attributes=_requests(data["attributes"])
        )
        return Response(HavenDesignQuoteSerializer(quote).data)

    @extend_schema(
        request=HavenContributeInputSerializer,
        responses={201: HavenContributionSerializer, 200: HavenContributionSerializer},
        description="Pay influence into a project of this haven (HAV-02, INF-03); the same "
        "key twice pays once (the replay answers the first payment, 200).",
    )
    @action(detail=True, methods=["post"])
    def contribute(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        data = self._body(HavenContributeInputSerializer)
        project = structure.projects.filter(pk=data["project"]).first()
        if project is None:
            raise serializers.ValidationError({"project": _("This haven has no such project.")})
        before = last_id(Contribution)
        contribution = services.project_contribute(
            project=project,
            character=self._character(data["character"]),
            influence=data["influence"],
            points=data["points"],
            by=chronicle_access.acting_user(request.user),
            key=f"{request.user.pk}:{data['key']}",
        )
        return Response(
            HavenContributionSerializer(contribution).data,
            status=created_status(contribution, before),
        )

    @extend_schema(request=HavenRepairInputSerializer, responses={201: HavenProjectSerializer})
    @action(detail=True, methods=["post"])
    def repair(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        data = self._body(HavenRepairInputSerializer)
        attribute = structure.attributes.filter(pk=data["attribute"]).first()
        if attribute is None:
            raise serializers.ValidationError({"attribute": _("This haven has no such attribute.")})
        project = services.repair_request(
            attribute=attribute,
            character=self._character(data["character"]),
            by=chronicle_access.acting_user(request.user),
        )
        return Response(HavenProjectSerializer(project).data, status=201)

    @extend_schema(request=HavenProjectActionSerializer, responses={200: HavenProjectSerializer})
    @action(detail=True, methods=["post"], url_path="cancel-project")
    def cancel_project(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        data = self._body(HavenProjectActionSerializer)
        project = structure.projects.filter(pk=data["project"]).first()
        if project is None:
            raise serializers.ValidationError({"project": _("This haven has no such project.")})
        project = services.project_cancel(
            project=project,
            character=self._character(data["character"]),
            by=chronicle_access.acting_user(request.user),
        )
        return Response(HavenProjectSerializer(project).data)

    def _hand_over(self, request: Request, service: Any) -> Response:
        structure = self.get_object()
        data = self._body(HavenHandOverInputSerializer)
        to_character = None
        if data.get("to_character") is not None:
            chronicle_access.require_staff(self.membership)
            to_character = self._character(data["to_character"])
        change = service(
            structure=structure,
            from_character=self._character(data["character"]),
            by=chronicle_access.acting_user(request.user),
            to_character=to_character,
            to_name=data["to_name"],
            note=data["note"],
        )
        return Response(HavenChangeSerializer(change).data, status=201)

    @extend_schema(
        request=HavenHandOverInputSerializer,
        responses={201: HavenChangeSerializer},
        description="Ask for a transfer, applied in downtime (HAV-05).",
    )
    @action(detail=True, methods=["post"])
    def transfer(self, request: Request, slug: str, pk: str) -> Response:
        return self._hand_over(request, services.structure_transfer_request)

    @extend_schema(
        request=HavenHandOverInputSerializer,
        responses={201: HavenChangeSerializer},
        description="Set a will, applied when the character dies (HAV-05).",
    )
    @action(detail=True, methods=["post"])
    def will(self, request: Request, slug: str, pk: str) -> Response:
        return self._hand_over(request, services.structure_will_set)

    @extend_schema(request=HavenActorSerializer, responses={201: HavenChangeSerializer})
    @action(detail=True, methods=["post"])
    def forsake(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        data = self._body(HavenActorSerializer)
        change = services.structure_forsake_request(
            structure=structure,
            character=self._character(data["character"]),
            by=chronicle_access.acting_user(request.user),
        )
        return Response(HavenChangeSerializer(change).data, status=201)

    @extend_schema(request=HavenCryptVoteInputSerializer, responses={201: HavenCryptVoteSerializer})
    @action(detail=True, methods=["post"], url_path="crypt-vote")
    def crypt_vote(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        data = self._body(HavenCryptVoteInputSerializer)
        crypt = Structure.objects.filter(outer=structure, pk=data["crypt"]).first()
        if crypt is None:
            raise serializers.ValidationError(
                {"crypt": _("No crypt inside this haven has that id.")}
            )
        vote = services.crypt_destroy_vote(
            crypt=crypt,
            voter=self._character(data["character"]),
            by=chronicle_access.acting_user(request.user),
        )
        return Response(HavenCryptVoteSerializer(vote).data, status=201)

    @extend_schema(request=HavenChangeCancelSerializer, responses={200: HavenChangeSerializer})
    @action(detail=True, methods=["post"], url_path="cancel-change")
    def cancel_change(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        data = self._body(HavenChangeCancelSerializer)
        change = access.own_changes(self.membership, structure).filter(pk=data["change"]).first()
        if change is None:
            raise serializers.ValidationError({"change": _("This haven has no such change.")})
        change = services.change_cancel(
            change=change, by=chronicle_access.acting_user(request.user)
        )
        return Response(HavenChangeSerializer(change).data)

    @extend_schema(
        request=HavenTheftControlInputSerializer,
        responses={201: HavenTheftControlSerializer},
        description="Storytellers: at this game, these thieves controlled the haven (HAV-07).",
    )
    @action(detail=True, methods=["post"], url_path="theft-control")
    def theft_control(self, request: Request, slug: str, pk: str) -> Response:
        structure = self.get_object()
        chronicle_access.require_staff(self.membership)
        data = self._body(HavenTheftControlInputSerializer)
        game = Game.objects.filter(chronicle=self.membership.chronicle, number=data["game"]).first()
        if game is None:
            raise serializers.ValidationError(
                {"game": _("No game of this chronicle has that number.")}
            )
        thieves = list(access.acting_characters(self.membership).filter(pk__in=data["thieves"]))
        if len(thieves) != len(set(data["thieves"])):
            raise serializers.ValidationError({"thieves": _(UNKNOWN_CHARACTER)})
        control = services.theft_control_record(
            structure=structure,
            game=game,
            thieves=thieves,
            by=chronicle_access.acting_user(request.user),
        )
        return Response(HavenTheftControlSerializer(control).data, status=201)


def register(router: SimpleRouter) -> None:
    router.register(r"chronicles/(?P<slug>[-\w]+)/havens", StructureViewSet, basename="api-haven")
