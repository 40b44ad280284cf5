"""Django admin for characters: read-only views of what the services write. Every change goes
through the pages and the API, whose services apply the house rules and keep the XP ledger
append-only (a correction is a reversing entry, never an edit)."""

from __future__ import annotations

from django.contrib import admin

from chronicle.admin import ReadOnlyAdmin

from .models import (
    Bond,
    Character,
    CheatingOffense,
    Diablerie,
    DisciplineLevel,
    Item,
    StoredBlood,
    XpEntry,
    XpPurchase,
)


class DisciplineInline(admin.TabularInline):
    model = DisciplineLevel
    fk_name = "character"
    extra = 0
    can_delete = False
    fields = ("discipline", "level", "acquired", "cost", "cycle", "teacher")
    readonly_fields = list(fields)


@admin.register(Character)
class CharacterAdmin(ReadOnlyAdmin):
    list_display = ["name", "chronicle", "player", "creature", "clan", "status", "approval"]
    list_filter = ["chronicle", "creature", "clan", "status", "approval"]
    list_select_related = ["chronicle", "player"]
    search_fields = ["name", "player__username"]
    inlines = [DisciplineInline]


@admin.register(XpEntry)
class XpEntryAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "chronicle", "player", "amount", "kind", "reason"]
    list_filter = ["chronicle", "kind"]
    list_select_related = ["chronicle", "player"]
    search_fields = ["player__username", "reason", "key"]


@admin.register(XpPurchase)
class XpPurchaseAdmin(ReadOnlyAdmin):
    list_display = ["requested_at", "character", "kind", "cost", "status", "decided_by"]
    list_filter = ["status", "kind"]
    list_select_related = ["character", "decided_by"]


for model in (Bond, StoredBlood, Item, Diablerie, CheatingOffense):
    admin.site.register(model, ReadOnlyAdmin)
