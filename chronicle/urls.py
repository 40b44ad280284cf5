"""The project's URLs: the one place, with settings.py and celery.py, that names every app."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from characters import api as characters_api
from chronicle import api, views
from chronicle.api import people as people_api
from chronicle.views import calendar as calendar_views
from chronicle.views import governance as governance_views
from chronicle.views import history as history_views
from chronicle.views import languages as language_views
from chronicle.views import mail as mail_views
from chronicle.views import people, styleguide
from chronicle.views import portability as portability_views
from downtimes import api as downtimes_api
from havens import api as havens_api

router = SimpleRouter()
router.register("chronicles", people_api.ChronicleStartViewSet, basename="api-chronicle")
router.register(
    r"chronicles/(?P<slug>[-\w]+)/memberships",
    people_api.PeopleMembershipViewSet,
    basename="api-membership",
)
router.register(
    r"chronicles/(?P<slug>[-\w]+)/invitations",
    people_api.InvitationViewSet,
    basename="api-invitation",
)
router.register(r"chronicles/(?P<slug>[-\w]+)/games", api.GameViewSet, basename="api-game")
router.register(r"chronicles/(?P<slug>[-\w]+)/cycles", api.CycleViewSet, basename="api-cycle")
characters_api.register(router)
havens_api.register(router)
downtimes_api.register(router)

chronicle_pages = [
    path("", views.dashboard, name="dashboard"),
    # Issue 16: the History tab of a character, haven, submission or desk item (staff only).
    path(
        "characters/<int:pk>/history/",
        history_views.object_history,
        {"kind": "character"},
        name="character_history",
    ),
    path(
        "havens/<int:pk>/history/",
        history_views.object_history,
        {"kind": "haven"},
        name="haven_history",
    ),
    path(
        "downtime/submissions/<int:pk>/history/",
        history_views.object_history,
        {"kind": "submission"},
        name="submission_history",
    ),
    path(
        "desk/items/<int:pk>/history/",
        history_views.object_history,
        {"kind": "desk-item"},
        name="desk_item_history",
    ),
    path("games/", views.game_list, name="game_list"),
    path("games/new/", views.game_create, name="game_create"),
    path("games/<int:number>/", views.game_detail, name="game_detail"),
    path("games/<int:number>/edit/", views.game_edit, name="game_edit"),
    path("games/<int:number>/sign-in/", views.game_sign_in, name="game_sign_in"),
    path("settings/", views.house_rules, name="house_rules"),
    path("settings/reset/", views.house_rule_reset, name="house_rule_reset"),
    path("style-guide/", styleguide.style_guide, name="style_guide"),
    path("cycles/", views.cycle_list, name="cycle_list"),
    path("cycles/<int:number>/", views.cycle_detail, name="cycle_detail"),
    path("cycles/<int:number>/close/", views.cycle_close, name="cycle_close"),
    # People: invitations, roles, removal and leaving (the People list is in characters)
    path("invitations/", people.invitation_list, name="invitation_list"),
    path(
        "invitations/<int:invitation_id>/resend/",
        people.invitation_resend,
        name="invitation_resend",
    ),
    path(
        "invitations/<int:invitation_id>/revoke/",
        people.invitation_revoke,
        name="invitation_revoke",
    ),
    path("people/<int:user_id>/role/", people.member_role, name="member_role"),
    path("people/<int:user_id>/remove/", people.member_remove, name="member_remove"),
    path("leave/", people.leave, name="leave"),
    # Decisions by two thirds (GEN-03 / GEN-04)
    path("decisions/", governance_views.decision_list, name="decision_list"),
    path("decisions/new/", governance_views.decision_new, name="decision_new"),
    path(
        "decisions/<int:proposal_id>/",
        governance_views.decision_detail,
        name="decision_detail",
    ),
    # The chronicle's mail log (admins)
    path("mail/", mail_views.mail_log, name="mail_log"),
    path("mail/<int:log_id>/retry/", mail_views.mail_log_retry, name="mail_log_retry"),
    # Calendar feeds: a member's (logged in) and the private address phones subscribe to
    path("calendar.ics", calendar_views.calendar_member, name="calendar"),
    path("calendar/renew/", calendar_views.calendar_feed_renew, name="calendar_feed_renew"),
    path("calendar/<slug:token>.ics", calendar_views.calendar_feed, name="calendar_feed"),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("health", views.health, name="health"),
    path("accounts/signup/", people.signup, name="signup"),
    # Before Django's: the reset page whose mail leaves from a worker (issue 17).
    path("accounts/password_reset/", mail_views.password_reset, name="password_reset"),
    # Before Django's: asks an account without a date of birth for it once (GEN-01).
    path("accounts/login/", people.LoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("inbox/", mail_views.inbox, name="inbox"),
    path("inbox/read-all/", mail_views.inbox_read_all, name="inbox_read_all"),
    path("inbox/<int:message_id>/", mail_views.message_detail, name="message_detail"),
    path("account/mail/", mail_views.mail_preferences, name="mail_preferences"),
    path("account/", people.account, name="account"),
    path("account/tokens/revoke-all/", people.api_tokens_revoke_all, name="api_tokens_revoke_all"),
    path("account/tokens/<str:token_id>/revoke/", people.api_token_revoke, name="api_token_revoke"),
    path("account/birth-date/", people.birth_date_ask, name="birth_date_ask"),
    path("language/", language_views.language_set, name="language_set"),
    path("account/email/<str:token>/", people.account_email_confirm, name="account_email_confirm"),
    path("chronicles/new/", people.chronicle_new, name="chronicle_new"),
    path("invitations/<str:token>/", people.invitation_accept, name="invitation_accept"),
    path("invitations/<str:token>/renew/", people.invitation_renew, name="invitation_renew"),
    path("c/<slug:slug>/", include(chronicle_pages)),
    path("c/<slug:slug>/", include("characters.urls")),
    path("c/<slug:slug>/", include("havens.urls")),
    path("c/<slug:slug>/", include("downtimes.urls")),
    path("api/auth/token/", api.TokenView.as_view(), name="api-token"),
    path("api/auth/logout/", api.TokenLogoutView.as_view(), name="api-logout"),
    path("api/auth/logout-all/", api.TokenLogoutAllView.as_view(), name="api-logout-all"),
    path(
        "api/invitations/accept/",
        people_api.InvitationAcceptView.as_view(),
        name="api-invitation-accept",
    ),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include(router.urls)),
    path("api/<path:rest>", views.api_not_found),
    path("admin/", admin.site.urls),
]

# Export and import
urlpatterns += [
    path("account/data/", portability_views.account_data_export, name="account_data_export"),
    path(
        "c/<slug:slug>/settings/export/",
        portability_views.chronicle_export_start,
        name="chronicle_export_start",
    ),
    path(
        "c/<slug:slug>/settings/export/<slug:job>/",
        portability_views.chronicle_export_status,
        name="chronicle_export_status",
    ),
    path(
        "c/<slug:slug>/settings/export/<slug:job>/download/",
        portability_views.chronicle_export_download,
        name="chronicle_export_download",
    ),
]

handler404 = "chronicle.views.page_not_found"
handler403 = "chronicle.views.permission_denied"
handler400 = "chronicle.views.bad_request"
handler500 = "chronicle.views.server_error"
