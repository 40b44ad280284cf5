"""The downtime page and the desk written faster (issue 15) and still the same: the fields'
`{% field_block %}` writes what components/field.html writes, and the fast widget renderer
what Django's templates write, for every field those pages draw (fresh, and bound with
errors)."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.forms.renderers import DjangoTemplates
from django.template.loader import render_to_string
from django.urls import reverse

from characters.models import Character
from chronicle.forms.widgets import FAST_RENDERER
from downtimes.models import Submission
from downtimes.templatetags.downtime_fields import field_block

pytestmark = pytest.mark.django_db

PAGE_FORMS = (
    "texts_form",
    "action_form",
    "loan_form",
    "purchase_form",
    "power_form",
    "votes_form",
)


def _same_as_the_include(form: forms.BaseForm) -> int:
    checked = 0
    for field in form:
        assert field_block(field) == render_to_string("components/field.html", {"field": field})
        checked += 1
    return checked


def test_the_downtime_pages_fields_as_the_include_writes_them(
    world: Any, draft: Submission, lucien: Character
) -> None:
    url = reverse("downtime_character", args=["nightfall", lucien.pk])
    response = world.client("player_alice").get(url)
    assert response.status_code == 200
    checked = sum(_same_as_the_include(response.context[name]) for name in PAGE_FORMS)
    assert checked >= 25
    # A refusal shows the bound form with its errors beside the fields.
    refused = world.client("player_alice").post(
        reverse("downtime_action_add", args=["nightfall", lucien.pk]),
        {"influence": "nope", "points": "x", "action": "", "key": "k"},
    )
    assert refused.status_code == 400
    bound = refused.context["action_form"]
    assert bound.errors and _same_as_the_include(bound)
    assert 'class="field has-error"' in refused.content.decode()


def test_the_desks_fields_as_the_include_writes_them(world: Any) -> None:
    client = world.client("storyteller")
    desk = reverse("desk", args=[world.chronicle.slug])
    response = client.get(desk)
    assert response.status_code == 200
    for name in ("filters", "at_game_form", "bulk_form"):
        assert _same_as_the_include(response.context[name])
    bad = client.get(desk, {"status": "nope", "kind": "<b>"})
    assert bad.context["filters"].errors and _same_as_the_include(bad.context["filters"])


class Inputs(forms.Form):
    text = forms.CharField(widget=forms.TextInput(attrs={"placeholder": 'a "quote" & <tag>'}))
    number = forms.IntegerField(widget=forms.NumberInput(attrs={"min": 0, "required": True}))
    hidden = forms.CharField(widget=forms.HiddenInput)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "disabled": False}))
    email = forms.EmailField()
    when = forms.DateTimeField(
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")
    )
    sure = forms.BooleanField(required=False)


@pytest.mark.parametrize(
    "data",
    [
        None,
        {
            "text": "<script>alert('x')</script>",
            "number": "12",
            "hidden": '"&',
            "notes": "line\n<b>two</b> & 'three'",
            "email": "a@b.c",
            "when": "2024-03-01T20:30",
            "sure": "on",
        },
        {"text": "", "number": "", "notes": "", "when": "nope"},
    ],
)
def test_the_fast_renderer_writes_what_djangos_templates_write(data: Any) -> None:
    django_form = Inputs(data, renderer=DjangoTemplates())
    fast_form = Inputs(data, renderer=FAST_RENDERER)
    for name in Inputs.base_fields:
        assert str(fast_form[name]) == str(django_form[name]), name
