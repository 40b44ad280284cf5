"""The History tab (issue 16): the events django-pghistory recorded for one character, haven,
submission or desk item, as rows a storyteller reads: when, who, what changed (old → new).

Storytellers and admins of the chronicle only: players get 404 (the tab shows storyteller-only
fields such as `st_notes`). The events are read through pghistory's aggregate `Events` query
(one query per page whatever the number of events: the diff with each event's previous one
is computed in SQL), plus one count for the pager and one query for the users named.
History is recorded on PostgreSQL only (chronicle/tracking.py); elsewhere the page says so.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.paginator import Page, Paginator
from django.db import models
from django.http import Http404
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.utils.text import capfirst
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from . import access
from .history_context import recording
from .models import Membership
from .moments import moment_text

PAGE_SIZE = 50
PIPELINE_TASKS = ("downtimes.tasks.resolve_chunk", "downtimes.tasks.sweep_pipeline")


@dataclass(frozen=True)
class Subject:
    """What a History tab can be about: the event models shown with it (the object's own and
    those of its records, found by their key to the object), how a storyteller's object of one
    chronicle is found (the app's own access check: 404 otherwise), the page it belongs to (the
    tab's way back) and the title. Each app declares its subjects in its `history_tabs` module,
    so the chronicle app names no app above it (DESIGN, the way the export finds portability)."""

    event_models: tuple[str, ...]
    find: Callable[[Membership, int], models.Model]
    page_url: str
    title: Any


@cache
def tab_modules() -> dict[str, Any]:
    """Every installed app's `history_tabs` module, by app label."""
    found = {}
    for config in apps.get_app_configs():
        name = f"{config.name}.history_tabs"
        if importlib.util.find_spec(name):
            found[config.label] = importlib.import_module(name)
    return found


@cache
def subjects() -> dict[str, Subject]:
    """Every installed app's `history_tabs.SUBJECTS`, by kind."""
    found: dict[str, Subject] = {}
    for module in tab_modules().values():
        found.update(getattr(module, "SUBJECTS", {}))
    return found


@dataclass
class Change:
    label: str
    old: str
    new: str


@dataclass
class HistoryRow:
    at: Any
    who: str
    what: str
    action: str
    via: str
    changes: list[Change] = field(default_factory=list)


def subject_for(membership: Membership, kind: str, pk: int) -> tuple[Subject, models.Model]:
    """The object of the tab: 404 for a player (the tab is the storytellers'), for an unknown
    kind and for an object of another chronicle."""
    subject = subjects().get(kind)
    if subject is None or not access.is_staff(membership) or not 0 < pk < 2**31:
        raise Http404(gettext("No such history."))
    return subject, subject.find(membership, pk)


ACTIONS = {
    "insert": _("created"),
    "update": _("changed"),
    "delete": _("deleted"),
}


def _show(model_field: models.Field | None, value: Any, where: Any) -> str:
    """A stored value as the page shows it: a choice by its label, a moment in the
    chronicle's zone (`where`), empty as a dash."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if model_field is not None and model_field.choices:
        labels = {str(key): label for key, label in model_field.flatchoices}
        return str(labels.get(str(value), value))
    if isinstance(model_field, models.BooleanField):
        return gettext("yes") if value else gettext("no")
    if isinstance(model_field, models.DateTimeField) and isinstance(value, str):
        moment = parse_datetime(value)
        if moment is not None:
            return moment_text(moment, where)
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _field(model: type[models.Model], column: str) -> models.Field | None:
    for model_field in model._meta.concrete_fields:
        if model_field.column == column or model_field.attname == column:
            return model_field
    return None


# The chronicle app's field labels where the model's own are Django's untranslated defaults;
# each app above declares its own in `history_tabs.LABELS`.
LABELS = {
    "at": _("At"),
    "effective_game": _("Effective from game"),
    "house_rule_overrides": _("House-rule settings"),
    "house_rule_schedule": _("Scheduled house-rule changes"),
    "joined_at": _("Joined at"),
    "published_game": _("Published at game"),
    "slug": _("Address name"),
    "timezone": _("Time zone"),
    "to_default": _("Back to the default"),
    "Membership": _("Membership"),
    "HouseRuleChange": _("House-rule change"),
}


@cache
def labels() -> dict[str, dict[str, Any]]:
    """Field labels by app label: the chronicle app's and each app's `history_tabs.LABELS`;
    a model's own name under the key `Model` (its class name) in the same table."""
    found: dict[str, dict[str, Any]] = {"chronicle": LABELS}
    for label, module in tab_modules().items():
        found[label] = getattr(module, "LABELS", {})
    return found


def _label(model: type[models.Model], column: str) -> str:
    model_field = _field(model, column)
    if model_field is None:
        return column
    label = labels().get(model._meta.app_label, {}).get(model_field.name)
    if label is not None:
        return str(label)
    # Django's default label ("game report") is the form label the catalogs already translate.
    return gettext(capfirst(str(model_field.verbose_name)))


def _who(context: dict[str, Any] | None, users: dict[int, str]) -> tuple[str, str]:
    """Who made the change and through what: a person and the request, or a task."""
    context = context or {}
    task = context.get("task")
    if task:
        # The pipeline's tasks (close, resolve, release) are the between-games run.
        if str(task).startswith(PIPELINE_TASKS):
            return gettext("the between-games run"), str(task)
        return gettext("a background task"), str(task)
    user_id = context.get("user")
    who = users.get(int(user_id), gettext("someone")) if user_id else gettext("the system")
    via = f"{context.get('method', '')} {context.get('url', '')}".strip()
    return who, via


def _user_names(user_ids: set[int]) -> dict[int, str]:
    if not user_ids:
        return {}
    user_model = get_user_model()
    return {
        user.pk: (user.get_full_name() or user.get_username())
        for user in user_model._default_manager.filter(pk__in=user_ids)
    }


def _rows(events: list[Any], where: Any) -> list[HistoryRow]:
    user_ids = {
        int(e.pgh_context["user"])
        for e in events
        if e.pgh_context and e.pgh_context.get("user") and not e.pgh_context.get("task")
    }
    users = _user_names(user_ids)
    rows = []
    for event in events:
        model = apps.get_model(event.pgh_obj_model)
        who, via = _who(event.pgh_context, users)
        data = event.pgh_data or {}
        name = str(data.get("name") or data.get("title") or "")
        # A model's own name where its app gives one, else its default name ("item") as the
        # catalogs' label for it.
        own = labels().get(model._meta.app_label, {}).get(model.__name__)
        what = str(own) if own is not None else gettext(capfirst(str(model._meta.verbose_name)))
        if name:
            what = f"{what} “{name}”"
        changes: list[Change] = []
        if event.pgh_label == "update":
            for column, (old, new) in sorted((event.pgh_diff or {}).items()):
                model_field = _field(model, column)
                changes.append(
                    Change(
                        _label(model, column),
                        _show(model_field, old, where),
                        _show(model_field, new, where),
                    )
                )
        rows.append(
            HistoryRow(
                at=event.pgh_created_at,
                who=who,
                what=what,
                action=str(ACTIONS.get(event.pgh_label, event.pgh_label)),
                via=via,
                changes=changes,
            )
        )
    return rows


def history_page(
    subject: Subject, obj: models.Model, page_number: Any, where: Any = None
) -> tuple[Page, list[Any]]:
    """One page of the object's history, newest first (50 a page): the pager's page and its
    rows. Three queries whatever the number of events (count, page, users named)."""
    if not recording():
        empty: Page = Paginator([], PAGE_SIZE).get_page(1)
        return empty, []
    from pghistory.models import Events

    events = (
        Events.objects.references(obj)
        .across(*subject.event_models)
        .order_by("-pgh_created_at", "-pgh_id")
    )
    page = Paginator(events, PAGE_SIZE).get_page(page_number)
    return page, _rows(list(page.object_list), where)


def subject_title(subject: Subject, obj: models.Model) -> str:
    return str(subject.title) % {"name": obj}


def subject_url(subject: Subject, membership: Membership, obj: models.Model) -> str:
    """The page the tab belongs to: the History page links back to it."""
    return reverse(subject.page_url, args=[membership.chronicle.slug, obj.pk])


# The datetime of an event as stored, so tests and callers can compare.
__all__ = [
    "HistoryRow",
    "Subject",
    "history_page",
    "subject_for",
    "subject_title",
    "subject_url",
    "subjects",
]
