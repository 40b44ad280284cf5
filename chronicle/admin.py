from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import Attendance, Chronicle, Cycle, CycleTransition, Game, Membership


@admin.register(Chronicle)
class ChronicleAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "timezone"]
    prepopulated_fields = {"slug": ["name"]}

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Once games exist, the time zone fixes their deadlines and the house rules are edited
        # on the chronicle's settings page, whose service keeps open cycles in step.
        return (
            ["timezone", "house_rule_overrides", "house_rule_schedule"] if obj is not None else []
        )


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "chronicle", "role"]
    list_filter = ["chronicle", "role"]
    list_select_related = ["user", "chronicle"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Games, sign-in sheets and cycles change only through their services (the pages and the
    API), which keep the cycle's deadline and the audit trail right; here they are read."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Game)
class GameAdmin(ReadOnlyAdmin):
    list_display = ["chronicle", "number", "date", "place"]
    list_filter = ["chronicle"]


@admin.register(Attendance)
class AttendanceAdmin(ReadOnlyAdmin):
    list_display = ["game", "player", "waiver_signed", "recorded_by", "recorded_at"]
    list_select_related = ["game", "player", "recorded_by"]


@admin.register(Cycle)
class CycleAdmin(ReadOnlyAdmin):
    list_display = ["chronicle", "game", "status", "deadline_at"]
    list_filter = ["chronicle", "status"]
    list_select_related = ["chronicle", "game"]


@admin.register(CycleTransition)
class CycleTransitionAdmin(ReadOnlyAdmin):
    list_display = ["cycle", "status", "at", "by"]
