"""The chronicle app's REST API: the same access functions and services as the pages."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.db.models import Max, Model, QuerySet
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, inline_serializer
from knox.models import AuthToken
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.authentication import BaseAuthentication
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.decorators import action
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import access, services
from ..api_auth import TokenAuthentication
from ..api_errors import error_body
from ..models import Attendance, Chronicle, Cycle, Game, Membership
from ..services import api_tokens

# --- Keyed creates -----------------------------------------------------------------------------


def last_id(model: type[Model]) -> int:
    """The highest id of `model` before a keyed create: the object the create answers existed
    already (a replayed key, 200) when its id is at most this, and is new (201) above it."""
    return int(model._default_manager.aggregate(top=Max("pk"))["top"] or 0)


def created_status(obj: Model, before: int) -> int:
    return status.HTTP_201_CREATED if int(obj.pk) > before else status.HTTP_200_OK


# --- Serializers ------------------------------------------------------------------------------


class ChronicleSerializer(serializers.ModelSerializer):
    class Meta:
        model = Chronicle
        fields = ["slug", "name", "timezone"]


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    user_id = serializers.IntegerField(read_only=True)

    class Meta:
        model = Membership
        fields = ["user_id", "username", "role", "joined_at"]


class CycleSerializer(serializers.ModelSerializer):
    game_number = serializers.IntegerField(source="game.number", read_only=True)
    deadline_local = serializers.SerializerMethodField(
        help_text="The deadline in the chronicle's time zone (ISO 8601 with offset)."
    )

    class Meta:
        model = Cycle
        fields = [
            "game_number",
            "status",
            "deadline_at",
            "deadline_local",
            "closed_at",
            "resolved_at",
            "released_at",
        ]
        read_only_fields = fields

    def get_deadline_local(self, cycle: Cycle) -> str:
        return cycle.deadline_local.isoformat()


class CycleSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = Cycle
        fields = ["status", "deadline_at"]
        read_only_fields = fields


class GameSerializer(serializers.ModelSerializer):
    number = serializers.IntegerField(
        min_value=1,
        max_value=services.MAX_GAME_NUMBER,
        required=False,
        help_text="Omit to take the next number.",
    )
    cycle = CycleSummarySerializer(read_only=True)

    class Meta:
        model = Game
        fields = ["number", "date", "start_time", "place", "notes", "cycle"]

    def validate_number(self, value: int) -> int:
        if isinstance(self.instance, Game) and value != self.instance.number:
            raise serializers.ValidationError(_("A game's number cannot change."))
        return value


class AttendanceSerializer(serializers.ModelSerializer):
    player_id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(source="player.username", read_only=True)
    # HAV-06: the character played (null on lines recorded before the sheet had the column).
    character_id = serializers.IntegerField(read_only=True, allow_null=True)
    # XP-04: a storyteller let this character in with black veins showing.
    black_veins_permitted = serializers.SerializerMethodField()

    class Meta:
        model = Attendance
        fields = [
            "player_id",
            "username",
            "character_id",
            "waiver_signed",
            "black_veins_permitted",
            "recorded_at",
        ]
        read_only_fields = fields

    def get_black_veins_permitted(self, attendance: Attendance) -> bool:
        return attendance.black_veins_permitted_by_id is not None


class SignInLineSerializer(serializers.Serializer):
    player_id = serializers.IntegerField(min_value=1, max_value=access.MAX_ID)
    attended = serializers.BooleanField()
    waiver_signed = serializers.BooleanField(default=False)
    # HAV-06: left out or null, the character the sheet holds, else the player's only active one.
    character_id = serializers.IntegerField(
        min_value=1, max_value=access.MAX_ID, allow_null=True, default=None
    )
    # XP-04: left out or null, the permission the sheet holds for that character stays.
    permit_black_veins = serializers.BooleanField(allow_null=True, default=None)


class SignInSheetSerializer(serializers.Serializer):
    lines = SignInLineSerializer(many=True, allow_empty=False)


# --- Views ------------------------------------------------------------------------------------


class ChronicleViewSet(viewsets.ReadOnlyModelViewSet):
    """The chronicles the caller belongs to."""

    serializer_class = ChronicleSerializer
    lookup_field = "slug"

    def get_queryset(self) -> QuerySet[Chronicle]:
        return access.chronicles_for(self.request.user).order_by("name")

    def get_object(self) -> Chronicle:
        return access.membership_for(self.request.user, self.kwargs["slug"]).chronicle


class _InChronicle:
    """Resolves `slug` from the URL to the caller's membership, or 404."""

    kwargs: dict[str, Any]
    request: Any

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        # Before any input is read: a stranger to the chronicle learns nothing, not even
        # whether their input would have been valid.
        self.membership  # noqa: B018
        # A query parameter given must say something: `?status=` is refused, not read as "any"
        # (issue 16; the schema documents no empty value). Only for a method the view answers:
        # any other is a 405 whatever its query.
        method = request.method.lower() if request.method else ""
        if method not in self.http_method_names or not hasattr(self, method):  # type: ignore[attr-defined]
            return
        blank = sorted(
            name
            for name, values in request.query_params.lists()
            if any(not str(value).strip() for value in values)
        )
        if blank:
            raise exceptions.ValidationError(
                {name: [_("This parameter needs a value.")] for name in blank}
            )

    @property
    def membership(self) -> Membership:
        cached = getattr(self, "_membership", None)
        if cached is None:
            cached = access.membership_for(self.request.user, self.kwargs["slug"])
            self._membership = cached
        return cached


class MembershipViewSet(_InChronicle, viewsets.ReadOnlyModelViewSet):
    """The roster: storytellers and admins see everyone; a player sees themself."""

    serializer_class = MembershipSerializer
    lookup_field = "user_id"
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[Membership]:
        return access.memberships_visible_to(self.membership).order_by("user__username")

    def get_object(self) -> Membership:
        return access.member_for(self.membership, int(self.kwargs["user_id"]))


class GameViewSet(
    _InChronicle,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """The games calendar. Everyone in the chronicle reads it; storytellers and admins write."""

    serializer_class = GameSerializer
    unpaginated_actions = ("attendance",)  # the whole sign-in sheet, a bare array
    lookup_field = "number"
    lookup_value_regex = r"\d+"
    http_method_names = ["get", "post", "put", "patch", "head", "options"]

    def get_queryset(self) -> QuerySet[Game]:
        return access.games_visible_to(self.membership).order_by("date", "number")

    def get_object(self) -> Game:
        number = int(self.kwargs["number"])
        if self.request.method in ("PATCH", "PUT"):
            return access.game_for_edit(self.membership, number)
        return access.game_for(self.membership, number)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        access.require_staff(self.membership)
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer: serializers.BaseSerializer) -> None:
        serializer.instance = services.game_create(
            chronicle=self.membership.chronicle, **serializer.validated_data
        )

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # PATCH only (no `update`, so the router maps no PUT and Allow never names it): a PUT
        # that left out a field would silently keep its old value.
        return mixins.UpdateModelMixin.update(self, request, *args, partial=True, **kwargs)  # type: ignore[arg-type]

    def perform_update(self, serializer: serializers.BaseSerializer) -> None:
        assert isinstance(serializer.instance, Game)
        data = dict(serializer.validated_data)
        data.pop("number", None)  # validate_number refused any change; the same is a no-op
        serializer.instance = services.game_update(game=serializer.instance, **data)

    @extend_schema(
        request=SignInSheetSerializer,
        responses={200: AttendanceSerializer(many=True)},
        description="Read the sign-in sheet (a player sees only their own line), or, as a "
        "storyteller, record attendance and waivers (GEN-01, DT-04), the character each "
        "player played (HAV-06; by default their only active character) and permission to "
        "enter with black veins (XP-04). A line with attended=false removes the player from "
        "the sheet.",
    )
    @action(detail=True, methods=["get", "put"], url_path="attendance")
    def attendance(self, request: Request, slug: str, number: str) -> Response:
        if request.method == "PUT":
            game = access.game_for_edit(self.membership, int(number))
            sheet = SignInSheetSerializer(data=request.data)
            sheet.is_valid(raise_exception=True)
            services.attendance_record(
                game=game,
                lines=[services.SignIn(**line) for line in sheet.validated_data["lines"]],
                by=access.acting_user(request.user),
            )
        else:
            game = access.game_for(self.membership, int(number))
        rows = access.attendance_visible_to(self.membership, game)
        return Response(AttendanceSerializer(rows, many=True).data)


class CycleViewSet(_InChronicle, viewsets.ReadOnlyModelViewSet):
    """Downtime cycles, named by the number of the game they follow."""

    serializer_class = CycleSerializer
    lookup_field = "game_number"
    lookup_value_regex = r"\d+"

    def get_queryset(self) -> QuerySet[Cycle]:
        return access.cycles_visible_to(self.membership).order_by("-deadline_at")

    def get_object(self) -> Cycle:
        return access.cycle_for(self.membership, int(self.kwargs["game_number"]))

    @extend_schema(
        request=None,
        responses={
            200: CycleSerializer,
            409: inline_serializer(
                "CycleAlreadyClosed",
                {"error": serializers.DictField(child=serializers.CharField())},
            ),
        },
        description="Close the cycle before its deadline (storytellers and admins).",
    )
    @action(detail=True, methods=["post"])
    def close(self, request: Request, slug: str, game_number: str) -> Response:
        cycle = access.cycle_for_edit(self.membership, int(game_number))
        closed = services.cycle_close(cycle=cycle, by=access.acting_user(request.user))
        cycle.refresh_from_db()
        if not closed:
            already = {
                "closed": _("This cycle is already closed."),
                "resolved": _("This cycle is already resolved."),
                "released": _("This cycle is already released."),
            }
            return Response(
                error_body("already_closed", already.get(cycle.status, already["closed"])),
                status=status.HTTP_409_CONFLICT,
            )
        return Response(CycleSerializer(cycle).data)


_TOKEN_ISSUED = inline_serializer(
    "TokenIssued",
    fields={
        "token": serializers.CharField(help_text="Send as `Authorization: Token <token>`."),
        "expiry": serializers.DateTimeField(help_text="When the token stops working."),
    },
)


@extend_schema(request=AuthTokenSerializer, responses={200: _TOKEN_ISSUED})
class TokenView(APIView):
    """Exchange a username and password for a new API token (each log-in makes its own, which
    expires after API_TOKEN_TTL_DAYS); throttled like the login page."""

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes = [AllowAny]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = AuthTokenSerializer(data=request.data, context={"request": request})
        try:
            serializer.is_valid(raise_exception=True)
        except exceptions.ValidationError:
            # django-axes marks the request it was given (DRF's, here) when the account is
            # locked; without this the client would see an ordinary "wrong password".
            if getattr(request, "axes_locked_out", False):
                return Response(
                    error_body("locked_out", _("Too many failed log-ins; try again later.")),
                    status=status.HTTP_429_TOO_MANY_REQUESTS,
                )
            raise
        user = serializer.validated_data["user"]
        token, key = api_tokens.token_issue(user=user)
        # As a page log-in: last_login, and django-axes forgets the failures before it.
        user_logged_in.send(sender=user.__class__, request=request, user=user)
        expiry = serializers.DateTimeField().to_representation(token.expiry)
        return Response({"token": key, "expiry": expiry})


@extend_schema(request=None, responses={204: None})
class TokenLogoutView(APIView):
    """Revoke the token this request is made with (token authentication only)."""

    authentication_classes = [TokenAuthentication]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        user = access.acting_user(request.user)
        token = request.auth
        if not isinstance(token, AuthToken):  # only TokenAuthentication lets a caller in here
            raise exceptions.NotAuthenticated()
        api_tokens.token_revoke(user=user, token_id=token.digest)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(request=None, responses={204: None})
class TokenLogoutAllView(APIView):
    """Revoke every API token of the caller, this one included (token authentication only)."""

    authentication_classes = [TokenAuthentication]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        api_tokens.tokens_revoke_all(user=access.acting_user(request.user))
        return Response(status=status.HTTP_204_NO_CONTENT)
