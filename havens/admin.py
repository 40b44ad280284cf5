"""Django admin for havens: read-only views of what the services write. Every change goes
through the pages and the API, whose services apply the house rules (HAV-23 design checks,
influence spends, changes that take effect in downtime)."""

from __future__ import annotations

from django.contrib import admin

from chronicle.admin import ReadOnlyAdmin

from .models import Attribute, HiddenObject, Ownership, Search, Structure


class OwnershipInline(admin.TabularInline):
    model = Ownership
    extra = 0
    can_delete = False
    fields = ("character", "how", "started_at", "ended_at", "ended_why")
    readonly_fields = list(fields)


class AttributeInline(admin.TabularInline):
    model = Attribute
    extra = 0
    can_delete = False
    fields = ("kind", "quantity", "state", "trigger", "effect", "cost")
    readonly_fields = list(fields)


@admin.register(Structure)
class StructureAdmin(ReadOnlyAdmin):
    list_display = ["name", "chronicle", "kind", "status", "location"]
    list_filter = ["chronicle", "kind", "status"]
    search_fields = ["name", "location"]
    inlines = [OwnershipInline, AttributeInline]


@admin.register(Search)
class SearchAdmin(ReadOnlyAdmin):
    list_display = ["target_name", "cycle", "moment", "status", "released_at"]
    list_filter = ["status", "moment"]


@admin.register(HiddenObject)
class HiddenObjectAdmin(ReadOnlyAdmin):
    list_display = ["description", "chronicle", "number", "obfuscate_bid", "found_at"]
    list_filter = ["chronicle", "number"]
