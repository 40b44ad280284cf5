"""The people API: start a chronicle, invitations, roles, removal and leaving, through the same
access checks and services as the pages."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import access
from ..models import Invitation, Membership, Role
from ..services import people as services
from . import ChronicleSerializer, ChronicleViewSet, MembershipSerializer, MembershipViewSet
from . import _InChronicle as InChronicle

# --- Serializers ---------------------------------------------------------------------------------


class ChronicleStartSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    slug = serializers.SlugField(max_length=60)
    timezone = serializers.CharField(max_length=64, help_text="An IANA name such as Europe/Rome.")
    first_game = serializers.DateField(required=False, allow_null=True)
    first_game_start = serializers.TimeField(required=False, allow_null=True)
    place = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class InviteeSerializer(serializers.Serializer):
    email = serializers.EmailField()
    name = serializers.CharField(max_length=150, required=False, allow_blank=True, default="")
    role = serializers.ChoiceField(choices=Role.choices, default=Role.PLAYER)


class InvitationsCreateSerializer(serializers.Serializer):
    invitees = serializers.ListField(child=InviteeSerializer(), allow_empty=False, max_length=200)


class InvitationSerializer(serializers.ModelSerializer):
    state = serializers.SerializerMethodField(
        help_text="pending, needs_address, expired, accepted or revoked."
    )
    invited_by = serializers.CharField(source="invited_by.username", default=None, read_only=True)

    class Meta:
        model = Invitation
        fields = [
            "id",
            "email",
            "name",
            "role",
            "state",
            "invited_by",
            "created_at",
            "sent_at",
            "expires_at",
            "accepted_at",
            "revoked_at",
            "renewal_requested_at",
        ]
        read_only_fields = fields

    def get_state(self, invitation: Invitation) -> str:
        return invitation.status(self.context.get("now") or timezone.now())


class ResendSerializer(serializers.Serializer):
    email = serializers.EmailField(
        required=False, help_text="Only for an imported player's invitation that has none."
    )


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class EndSerializer(serializers.Serializer):
    characters = serializers.ChoiceField(
        choices=[("retired", "retired"), ("npc", "npc")],
        default="retired",
        help_text="What becomes of the member's active characters.",
    )


class AcceptSerializer(serializers.Serializer):
    token = serializers.CharField(max_length=100)


# --- Views ---------------------------------------------------------------------------------------


class ChronicleStartViewSet(mixins.CreateModelMixin, ChronicleViewSet):
    """The chronicles the caller belongs to; POST starts one, with the caller as its admin."""

    @extend_schema(request=ChronicleStartSerializer, responses={201: ChronicleSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = ChronicleStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        chronicle = services.chronicle_start(
            creator=access.acting_user(request.user),
            timezone_name=values.pop("timezone"),
            **values,
        )
        return Response(ChronicleSerializer(chronicle).data, status=status.HTTP_201_CREATED)


class PeopleMembershipViewSet(mixins.UpdateModelMixin, mixins.DestroyModelMixin, MembershipViewSet):
    """The roster. Admins change roles (PATCH); admins remove anyone and storytellers remove
    players (DELETE, with `characters`); anyone leaves (POST leave/)."""

    http_method_names = ["get", "patch", "delete", "post", "head", "options"]

    @extend_schema(request=RoleSerializer, responses={200: MembershipSerializer})
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        target = access.member_for_change(self.membership, int(self.kwargs["user_id"]))
        data = RoleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        changed = services.membership_role_change(
            membership=self.membership, target=target, role=data.validated_data["role"]
        )
        return Response(MembershipSerializer(changed).data)

    @extend_schema(exclude=True)
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self.partial_update(request, *args, **kwargs)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "characters", str, enum=["retired", "npc"], description="Default retired."
            )
        ],
        responses={204: None},
    )
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        target = access.member_for_change(self.membership, int(self.kwargs["user_id"]))
        data = EndSerializer(data={**request.query_params.dict(), **_body(request)})
        data.is_valid(raise_exception=True)
        services.membership_end(
            membership=self.membership,
            target=target,
            characters=data.validated_data["characters"],
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=EndSerializer, responses={204: None})
    @action(detail=False, methods=["post"])
    def leave(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = EndSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.membership_end(
            membership=self.membership,
            target=self.membership,
            characters=data.validated_data["characters"],
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


def _body(request: Request) -> dict[str, Any]:
    return dict(request.data) if isinstance(request.data, dict) else {}


class InvitationViewSet(InChronicle, mixins.ListModelMixin, viewsets.GenericViewSet):
    """Invitations of a chronicle, for its storytellers and admins."""

    serializer_class = InvitationSerializer
    unpaginated_actions = ("create",)  # the invitations made, a bare array
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[Invitation]:
        return access.invitations_visible_to(self.membership).order_by("-created_at", "-pk")

    def get_serializer_context(self) -> dict[str, Any]:
        return super().get_serializer_context() | {"now": timezone.now()}

    @extend_schema(
        request=InvitationsCreateSerializer, responses={201: InvitationSerializer(many=True)}
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # A player is refused before their input is read, as on every staff endpoint.
        access.require_staff(self.membership)
        data = InvitationsCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        made = services.invitations_create(
            membership=self.membership,
            invitees=[services.Invitee(**row) for row in data.validated_data["invitees"]],
        )
        body = InvitationSerializer(
            [invitation for invitation, _token in made],
            many=True,
            context=self.get_serializer_context(),
        ).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=ResendSerializer, responses={200: InvitationSerializer})
    @action(detail=True, methods=["post"])
    def resend(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        invitation = access.invitation_for(self.membership, int(self.kwargs["pk"]))
        data = ResendSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        invitation, _token = services.invitation_resend(
            membership=self.membership,
            invitation=invitation,
            email=data.validated_data.get("email"),
        )
        return Response(
            InvitationSerializer(invitation, context=self.get_serializer_context()).data
        )

    @extend_schema(request=None, responses={200: InvitationSerializer})
    @action(detail=True, methods=["post"])
    def revoke(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        invitation = access.invitation_for(self.membership, int(self.kwargs["pk"]))
        invitation = services.invitation_revoke(membership=self.membership, invitation=invitation)
        return Response(
            InvitationSerializer(invitation, context=self.get_serializer_context()).data
        )


class InvitationAcceptView(APIView):
    """A logged-in user takes up an invitation sent to their own address (the token from the
    e-mailed link). New people accept on the link's page, where they set a password."""

    @extend_schema(
        request=AcceptSerializer,
        responses={
            200: inline_serializer(
                "AcceptedMembership",
                {"chronicle": ChronicleSerializer(), "role": serializers.CharField()},
            )
        },
    )
    def post(self, request: Request) -> Response:
        data = AcceptSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership: Membership = services.invitation_accept(
            token=data.validated_data["token"], user=access.acting_user(request.user)
        )
        return Response(
            {"chronicle": ChronicleSerializer(membership.chronicle).data, "role": membership.role}
        )
