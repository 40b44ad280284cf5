"""The project's URLs: the one place, with settings.py and celery.py, that names every app."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from characters import api as characters_api
from chronicle import api, views
from downtimes import api as downtimes_api
from havens import api as havens_api

router = SimpleRouter()
router.register("chronicles", api.ChronicleViewSet, basename="api-chronicle")
router.register(
    r"chronicles/(?P<slug>[-\w]+)/memberships", api.MembershipViewSet, basename="api-membership"
)
router.register(r"chronicles/(?P<slug>[-\w]+)/games", api.GameViewSet, basename="api-game")
router.register(r"chronicles/(?P<slug>[-\w]+)/cycles", api.CycleViewSet, basename="api-cycle")
characters_api.register(router)
havens_api.register(router)
downtimes_api.register(router)

chronicle_pages = [
    path("", views.dashboard, name="dashboard"),
    path("games/", views.game_list, name="game_list"),
    path("games/new/", views.game_create, name="game_create"),
    path("games/<int:number>/", views.game_detail, name="game_detail"),
    path("games/<int:number>/edit/", views.game_edit, name="game_edit"),
    path("games/<int:number>/sign-in/", views.game_sign_in, name="game_sign_in"),
    path("settings/", views.house_rules, name="house_rules"),
    path("cycles/", views.cycle_list, name="cycle_list"),
    path("cycles/<int:number>/", views.cycle_detail, name="cycle_detail"),
    path("cycles/<int:number>/close/", views.cycle_close, name="cycle_close"),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("health", views.health, name="health"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("c/<slug:slug>/", include(chronicle_pages)),
    path("c/<slug:slug>/", include("characters.urls")),
    path("c/<slug:slug>/", include("havens.urls")),
    path("c/<slug:slug>/", include("downtimes.urls")),
    path("api/auth/token/", api.TokenView.as_view(), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include(router.urls)),
    path("api/<path:rest>", views.api_not_found),
    path("admin/", admin.site.urls),
]

handler404 = "chronicle.views.page_not_found"
handler403 = "chronicle.views.permission_denied"
handler400 = "chronicle.views.bad_request"
handler500 = "chronicle.views.server_error"
