"""The havens' codes in words on a page: a TST-01 class, which side of a test bids higher.
The codes stay what the rules and the API return; only pages put them in words."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

register = template.Library()

# chronicle.rules.RATIO_CLASSES (TST-01)
TEST_CLASSES = {
    "automatic": _("automatic: no test"),
    "wins_ties_retest": _("the higher bid wins ties and retests a first loss"),
    "wins_ties": _("the higher bid wins ties"),
    "even": _("even: play until someone wins"),
}
# Who bids higher in a test (HID-02) or wins ties (HAV-26).
SIDES = {
    "searcher": pgettext_lazy("test side", "the searcher"),
    "hider": pgettext_lazy("test side", "the hider"),
    "even": pgettext_lazy("test side", "even"),
    "structure": pgettext_lazy("test side", "the structure"),
    "attacker": pgettext_lazy("test side", "the attacker"),
}


@register.filter
def test_class(code: str) -> str:
    """`{{ row.class|test_class }}`: the TST-01 class in words, its code after it."""
    label = TEST_CLASSES.get(code)
    return f"{label} ({code})" if label else code


@register.filter
def test_side(code: str) -> str:
    """`{{ row.higher|test_side }}`: a side of a test in words."""
    return str(SIDES.get(code, code))
