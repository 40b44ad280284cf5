"""Django's admin is for the deployment's superusers only (issue 16): it reads every chronicle's
rows, storyteller notes and havens included, with none of the app's access checks. Chronicle
admins (a membership role) run their chronicle through the app, which keeps each chronicle's
secrets to its own readers; `is_staff` alone opens nothing here."""

from __future__ import annotations

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest


class SuperuserAdminSite(AdminSite):
    def has_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return bool(user.is_active and user.is_superuser)


class SuperuserAdminConfig(AdminConfig):
    """In INSTALLED_APPS in place of "django.contrib.admin": `admin.site` is the site above."""

    default_site = "chronicle.admin_site.SuperuserAdminSite"
