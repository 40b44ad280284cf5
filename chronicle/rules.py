"""Chronicle-wide house rules: deadlines, votes of the governing bodies, test ratios, and the
per-chronicle settings that settle every INTERPRETATION of SPEC.md.

Pure Python: standard library only, no clock (callers pass dates in).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import inspect
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

TUESDAY = 1  # date.weekday(): Monday is 0


# --- Words a person reads ----------------------------------------------------------------------
# The rules stay free of Django, yet their refusals reach players in Italian and Catalan. Every
# rules module marks such a message with `_()` (or `ngettext()`) from here, interpolating with
# `%` after the call, never inside an f-string, so `makemessages` finds it. Outside Django the
# marks return the English text; once Django is loaded, ChronicleConfig.ready() installs its
# gettext here, so a refusal is worded in the language active where it is raised (the request's,
# or the recipient's in a mail).


def _english(message: str) -> str:
    return message


def _english_plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


_translate: Callable[[str], str] = _english
_translate_plural: Callable[[str, str, int], str] = _english_plural


def install_translations(
    translate: Callable[[str], str], translate_plural: Callable[[str, str, int], str]
) -> None:
    """Called once by the chronicle app; tests of the rules alone never call it."""
    global _translate, _translate_plural
    _translate, _translate_plural = translate, translate_plural


def _(message: str) -> str:
    return _translate(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    return _translate_plural(singular, plural, count)


_CONTEXT_SEPARATOR = "\x04"


def pgettext(context: str, message: str) -> str:
    """One English word with two senses ("Business" the influence, a business): gettext's
    context, looked up exactly as Django's pgettext does, through the installed gettext."""
    result = _translate(f"{context}{_CONTEXT_SEPARATOR}{message}")
    return message if _CONTEXT_SEPARATOR in result else result


def gettext_noop(message: str) -> str:
    """Marks a module-level text for the catalog without translating it yet (it is read
    before any language is active); whoever shows it passes it through gettext then."""
    return message


def whole_number(
    name: str, value: object, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """Every app's rules check their counts through this: a clear ValueError, never a wrong
    number. bool is an int subclass; True as a count is a caller's mistake, not a 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, got {value!r}.")
    if minimum is not None and value < minimum:
        raise ValueError(
            _("%(name)s must be at least %(minimum)s, got %(value)s.")
            % {"name": name, "minimum": minimum, "value": value}
        )
    if maximum is not None and value > maximum:
        raise ValueError(
            _("%(name)s must be at most %(maximum)s, got %(value)s.")
            % {"name": name, "maximum": maximum, "value": value}
        )
    return value


def downtime_deadline(
    game_date: dt.date, *, weekday: int = TUESDAY, weeks_after: int = 2
) -> dt.date:
    """DT-01: the second Tuesday strictly after the game; the deadline is 23:59 that day in the
    chronicle's time zone.

    INTERPRETATION (setting): Tuesdays are counted strictly after the game date, so a game on a
    Tuesday has its deadline two weeks later, not one.
    """
    if isinstance(game_date, dt.datetime) or not isinstance(game_date, dt.date):
        raise ValueError(f"game_date must be a date (without a time), got {game_date!r}.")
    if not 0 <= whole_number("weekday", weekday) <= 6:
        raise ValueError("weekday must be 0 (Monday) to 6 (Sunday).")
    if whole_number("weeks_after", weeks_after) < 1:
        raise ValueError("weeks_after must be at least 1.")
    days_to_first = (weekday - game_date.weekday()) % 7 or 7
    try:
        return game_date + dt.timedelta(days=days_to_first + 7 * (weeks_after - 1))
    except OverflowError:
        raise ValueError(
            _("%(date)s is too far in the future to have a deadline.") % {"date": game_date}
        ) from None


def deadline_moment(
    deadline_day: dt.date, tz: dt.tzinfo, *, at: dt.time = dt.time(23, 59)
) -> dt.datetime:
    """DT-01: the aware moment a downtime stops being accepted (`submitted_at < deadline`)."""
    return dt.datetime.combine(deadline_day, at, tzinfo=tz)


def at_game_window(
    game_date: dt.date, previous_game_date: dt.date | None, deadline: dt.datetime, tz: dt.tzinfo
) -> tuple[dt.datetime, dt.datetime]:
    """INF-04 / DT-01: when something recorded "at the game" for a game's downtime may have
    happened: from the start of the previous game's day (requests are made at a game or told to
    an ST before it; a chronicle's first game looks back `AT_GAME_LOOKBACK` days) to the
    downtime's deadline, in the chronicle's zone. INTERPRETATION: the source gives no window;
    this one refuses a moment of another cycle (or the year 1) and nothing a real game sees."""
    if previous_game_date is not None and previous_game_date < game_date:
        first_day = previous_game_date
    else:
        first_day = game_date - dt.timedelta(days=AT_GAME_LOOKBACK)
    return dt.datetime.combine(first_day, dt.time(0, 0), tzinfo=tz), deadline


AT_GAME_LOOKBACK = 28


def check_moment_in_window(
    moment: dt.datetime, *, opens: dt.datetime, closes: dt.datetime, tz: dt.tzinfo
) -> None:
    """Refuse a typed moment outside [opens, closes] (aware moments), naming the window in the
    chronicle's zone `tz`."""
    for name, value in (("moment", moment), ("opens", opens), ("closes", closes)):
        if not isinstance(value, dt.datetime) or value.utcoffset() is None:
            raise ValueError(f"{name} must be an aware moment, got {value!r}.")
    if not opens <= moment <= closes:
        raise ValueError(
            _("Pick a moment of this game's downtime: between %(opens)s and %(closes)s (INF-04).")
            % {
                "opens": opens.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
                "closes": closes.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
            }
        )


def supermajority_passes(yes: int, eligible: int) -> bool:
    """GEN-03 / GEN-04: a decision passes with yes votes from at least two thirds of everyone
    eligible (all current STs, or all current players), whether they voted or not."""
    yes = whole_number("yes", yes)
    eligible = whole_number("eligible", eligible)
    if eligible < 1:
        raise ValueError(_("At least one person must be eligible to vote."))
    if not 0 <= yes <= eligible:
        raise ValueError(
            _("yes votes must be between 0 and %(eligible)s (the eligible voters).")
            % {"eligible": eligible}
        )
    return 3 * yes >= 2 * eligible


def rule_change_effective_ok(published_game: int, effective_game: int) -> bool:
    """GEN-05: a rule change is published at least one game before it takes effect:
    `effective_game > published_game` (game numbers). The published game is the next game to
    be played when the change is published, so the earliest a change can take effect is the
    game after it."""
    published_game = whole_number("published_game", published_game, minimum=1)
    effective_game = whole_number("effective_game", effective_game, minimum=1)
    return effective_game > published_game


def supermajority_needed(eligible: int) -> int:
    """GEN-03 / GEN-04: the fewest yes votes that pass among `eligible` voters (what a ballot
    page shows as "4 of 5 needed"); the smallest `yes` for which `supermajority_passes`."""
    eligible = whole_number("eligible", eligible)
    if eligible < 1:
        raise ValueError(_("At least one person must be eligible to vote."))
    return -(-2 * eligible // 3)


# GEN-03 / GEN-04: what each voting body may decide. The storytellers decide any ST change
# ("adding or removing STs, removing players, and other ST functions"; correcting a house-rule
# setting at once is one of those, GEN-05); the players may only remove an ST or a player.
DECISION_BODIES = ("storytellers", "players")
DECISION_KINDS: dict[str, tuple[str, ...]] = {
    "storytellers": (
        "add_storyteller",
        "remove_storyteller",
        "remove_player",
        "setting_now",
        "other",
    ),
    "players": ("remove_storyteller", "remove_player"),
}


def decision_kind_allowed(body: str, kind: str) -> bool:
    """GEN-03 / GEN-04: whether `body` ("storytellers" or "players") may decide `kind`."""
    if body not in DECISION_KINDS:
        raise ValueError(
            _("%(body)s is not a voting body; use storytellers or players.") % {"body": body}
        )
    return kind in DECISION_KINDS[body]


# --- GEN-01: players are 18 or older -------------------------------------------------------------

MINIMUM_PLAYER_AGE = 18  # GEN-01, the rules text: "Minors (under 18) are not permitted"
EARLIEST_BIRTH_YEAR = 1900  # GEN-01: an earlier date of birth is a typing mistake


def _plain_date(name: str, value: object) -> dt.date:
    if isinstance(value, dt.datetime) or not isinstance(value, dt.date):
        raise ValueError(f"{name} must be a date (without a time), got {value!r}.")
    return value


def birth_date_checked(birth_date: dt.date, *, today: dt.date) -> dt.date:
    """GEN-01: a date of birth a person may give: not in the future, not before 1900."""
    birth_date = _plain_date("birth_date", birth_date)
    today = _plain_date("today", today)
    if birth_date > today:
        raise ValueError(_("A date of birth cannot be in the future; check the date."))
    if birth_date.year < EARLIEST_BIRTH_YEAR:
        raise ValueError(
            _("A date of birth before %(year)s cannot be right; check the year.")
            % {"year": EARLIEST_BIRTH_YEAR}
        )
    return birth_date


def age_on(birth_date: dt.date, day: dt.date) -> int:
    """GEN-01: a person's age in whole years on `day` (a birthday counts from its morning).

    Someone born on 29 February has their birthday on 1 March in a year without one: they
    reach the legal age on 1 March, not on 28 February (as the law of Italy, the UK and most
    US states reads it).
    """
    birth_date = _plain_date("birth_date", birth_date)
    day = _plain_date("day", day)
    if day < birth_date:
        raise ValueError(
            _("%(day)s is before the date of birth %(born)s.") % {"day": day, "born": birth_date}
        )
    years = day.year - birth_date.year
    # (2, 29) sorts after (2, 28) and before (3, 1): the 29 February rule falls out of it.
    if (day.month, day.day) < (birth_date.month, birth_date.day):
        years -= 1
    return years


def adult_on(
    birth_date: dt.date | None, day: dt.date, *, minimum_player_age: int = MINIMUM_PLAYER_AGE
) -> bool:
    """GEN-01: whether a player may play a game on `day` (the game's date): at least
    `minimum_player_age` (a setting, 18 by the text) on that day.

    No date given (None): the player counts as an adult, as everyone did before dates of birth
    were recorded; they are asked for it once, and the sign-in sheet shows the storytellers
    "age not given" so they can check at the door.
    """
    minimum = whole_number("minimum_player_age", minimum_player_age, minimum=0)
    day = _plain_date("day", day)
    if birth_date is None:
        return True
    if day < _plain_date("birth_date", birth_date):
        return False  # not born yet on that day
    return age_on(birth_date, day) >= minimum


RATIO_CLASSES = ("automatic", "wins_ties_retest", "wins_ties", "even")


def ratio_class(high: int, low: int, *, zero_low_is_automatic: bool = True) -> str:
    """TST-01: the class of a test between a high bid and a low bid.

    - `automatic`: high >= 4 x low, the high side wins without a test;
    - `wins_ties_retest`: 2 x low <= high < 4 x low, high wins ties and retests a first loss;
    - `wins_ties`: low < high < 2 x low, high wins ties;
    - `even`: equal bids, play until someone wins.

    INTERPRETATION (setting): a positive bid against 0 counts as automatic.
    """
    high = whole_number("high", high)
    low = whole_number("low", low)
    if low < 0:
        raise ValueError(_("Bids cannot be negative."))
    if high < low:
        raise ValueError(
            _("high (%(high)s) must be at least low (%(low)s); swap the bids.")
            % {"high": high, "low": low}
        )
    if high == low:
        return "even"
    if low == 0:
        return "automatic" if zero_low_is_automatic else "wins_ties_retest"
    if high >= 4 * low:
        return "automatic"
    if high >= 2 * low:
        return "wins_ties_retest"
    return "wins_ties"


# --- Per-chronicle house-rule settings --------------------------------------------------------


def _setting(default: Any, rule: str, label: str, choices: tuple[str, ...] = ()) -> Any:
    return dataclasses.field(
        default=default, metadata={"rule": rule, "label": label, "choices": choices}
    )


@dataclasses.dataclass(frozen=True)
class HouseRules:
    """Every INTERPRETATION and placeholder number of SPEC.md (the numbers the source never
    states, SRC-06), with SPEC's default.

    A chronicle stores only the values its STs changed; `house_rules_from` merges them over
    these defaults and refuses unknown names and values of the wrong kind.
    """

    # General
    month_is_game_cycle: bool = _setting(
        True, "GEN", gettext_noop("A rules 'month' is one game cycle")
    )
    minimum_player_age: int = _setting(
        MINIMUM_PLAYER_AGE,
        "GEN-01",
        gettext_noop("Minimum age of a player on the game's date (no sign-in, no XP below it)"),
    )
    cheating_second_offense_fraction: Decimal = _setting(
        Decimal("0.5"),
        "GEN-02",
        gettext_noop("Share of lifetime earned XP removed at a 2nd cheating offense"),
    )
    open_drafts_per_player: int = _setting(
        3,
        "GEN",
        gettext_noop("Character drafts a player may have open at once (drafts and returned)"),
    )
    decision_vote_days: int = _setting(
        7,
        "GEN-03/04",
        gettext_noop("Days a vote on a decision stays open, unless its proposer sets another"),
    )
    zero_low_bid_is_automatic: bool = _setting(
        True, "TST-01", gettext_noop("A positive bid against a bid of 0 wins automatically")
    )
    # Clans and creation
    ventrue_herd_mode: str = _setting(
        "double_cost",
        "CLN-03",
        gettext_noop("What 'Herd costs twice as much' means for Ventrue"),
        ("double_cost", "half_yield"),
    )
    free_basic_discipline_levels: int = _setting(
        3, "CRE-01", gettext_noop("Free basic in-clan discipline levels for a new kindred")
    )
    clan_disadvantages_replace_minimum: bool = _setting(
        True,
        "CRE-02",
        gettext_noop("Malkavian/Nosferatu disadvantage rules replace the general minimum"),
    )
    ghoul_disciplines_out_of_clan: bool = _setting(
        True, "CRE-03", gettext_noop("Ghouls pay out-of-clan prices for their disciplines")
    )
    starting_generation: int = _setting(
        13, "CRE-05", gettext_noop("Generation every character starts at")
    )
    generation_step_cost: int = _setting(
        2, "CRE-05/XP-03", gettext_noop("Cost per generation step (not Caitiff)")
    )
    caitiff_generation_step_cost: int = _setting(
        3, "CRE-05", gettext_noop("Cost per generation step, Caitiff")
    )
    lowest_creation_generation: int = _setting(
        8, "CRE-05", gettext_noop("Lowest generation a non-Caitiff may buy at creation")
    )
    trait_cost: int = _setting(1, "CRE-06", gettext_noop("Cost of one trait"))
    ability_cost: int = _setting(1, "CRE-06", gettext_noop("Cost of one ability"))
    willpower_cost: int = _setting(3, "CRE-06", gettext_noop("Cost of one willpower"))
    extra_control_cost: int = _setting(
        0, "CRE-06", gettext_noop("Cost of one extra control trait (0 = not for sale yet)")
    )
    generation_table_base: int = _setting(
        10,
        "CRE-07",
        gettext_noop("Trait, willpower and blood maximum at 13th generation (+1 per step down)"),
    )
    gangrel_only_choose_form_at_creation: bool = _setting(
        True,
        "CRE-08",
        gettext_noop("Only Gangrel choose Wolf or Bat at creation; others at first 2a"),
    )
    background_blocks_freebies: bool = _setting(
        False, "CRE-09", gettext_noop("An unapproved background also blocks creation freebies")
    )
    # Disciplines and control
    discipline_cost_basic: int = _setting(
        3, "DIS-03", gettext_noop("Base cost of a 1a or 1b level")
    )
    discipline_cost_intermediate: int = _setting(
        6, "DIS-03", gettext_noop("Base cost of a 2a or 2b level")
    )
    discipline_cost_advanced: int = _setting(9, "DIS-03", gettext_noop("Base cost of a 3a level"))
    caitiff_surcharge_at_creation: bool = _setting(
        True, "DIS-06", gettext_noop("The Caitiff +1 per out-of-clan level applies at creation too")
    )
    caitiff_chosen_count_in_clan_for_teaching: bool = _setting(
        True,
        "DIS-07",
        gettext_noop("A Caitiff's three chosen disciplines count as in-clan for teaching"),
    )
    discipline_levels_per_cycle: int = _setting(
        1, "DIS-08", gettext_noop("Discipline levels a character may buy per cycle in play")
    )
    # CLN-01 Tremere text ("may be bought any time") read against DIS-08 (out-of-clan in
    # downtime only): the clan's rule is the more specific (issue 14).
    tremere_paths_any_time: bool = _setting(
        True,
        "CLN-01",
        gettext_noop("A Tremere may buy the other two Thaumaturgy paths at the game too"),
    )
    control_adjust_before_cap: bool = _setting(
        True, "CTL-01", gettext_noop("Clan and Animalism adjustments apply before the control cap")
    )
    # Blood and bonds
    kine_blood_months: int = _setting(
        3, "BLD-03", gettext_noop("Months before stored kine blood is unusable")
    )
    mixed_kindred_blood_expires: bool = _setting(
        False, "BLD-03", gettext_noop("Mixed kindred blood expires like kine blood")
    )
    herd_yield: int = _setting(3, "BLD-04", gettext_noop("Blood per point of Herd"))
    hunting_excess_becomes_stored: bool = _setting(
        True, "BLD-04", gettext_noop("Herd blood beyond the pool becomes stored blood")
    )
    regnant_drink_refreshes_bond: bool = _setting(
        True,
        "BND-02",
        gettext_noop("Drinking the regnant's own blood refreshes a pure bond's timer"),
    )
    pure_bond_months: int = _setting(
        12, "BND-03", gettext_noop("Months a pure bond lasts after the last drink")
    )
    bond_months_after_death: int = _setting(
        1, "BND-03/06", gettext_noop("Months a bond lasts after the regnant's or donor's death")
    )
    shared_bond_months: int = _setting(
        6,
        "BND-06",
        gettext_noop("Months a shared bond (and partial counts) last after the last drink"),
    )
    shared_bond_drinks: int = _setting(
        6, "BND-04", gettext_noop("Drinks of one donor that make a shared bond")
    )
    # Influence
    influence_lapses_each_cycle: bool = _setting(
        True, "INF-03", gettext_noop("Unspent influence lapses at the end of each cycle")
    )
    influence_money_value: int = _setting(
        0,
        "INF-05",
        gettext_noop("Money value of one influence point when cashed in (0 = ST decides)"),
    )
    # Havens
    theft_control_games: int = _setting(
        2, "HAV-07", gettext_noop("Consecutive games of control before a thief owns a haven")
    )
    forsake_after_absent_games: int = _setting(
        6, "HAV-06", gettext_noop("Games absent in a row before a haven is forsaken")
    )
    crypt_in_mobile_haven_is_mobile: bool = _setting(
        True, "HAV-23", gettext_noop("A crypt inside a mobile outer haven counts as mobile")
    )
    mobile_havens_hiding_doubled: bool = _setting(
        True, "HAV-25", gettext_noop("Mobile havens get doubled hiding points")
    )
    attack_needs_earlier_find: bool = _setting(
        True,
        "HAV-25c",
        gettext_noop("An influence attack needs the haven found before this downtime"),
    )
    potence_3a_breach_after_tests: int = _setting(
        2,
        "HAV-26",
        gettext_noop("Failed tests after which a Potence 3a attacker breaches automatically"),
    )
    no_potence_attacker_adds: int = _setting(
        4, "HAV-26", gettext_noop("What an attacker without Potence adds to the bid"), ("4", "0")
    )
    # Downtimes and XP
    deadline_weeks_after_game: int = _setting(
        2, "DT-01", gettext_noop("The downtime deadline is this many Tuesdays after the game")
    )
    no_downtime_xp: Decimal = _setting(
        Decimal("2.5"), "DT-03", gettext_noop("XP for a cycle with no downtime")
    )
    submitted_downtime_xp: Decimal = _setting(
        Decimal("2.5"), "DT-03", gettext_noop("Base XP for a submitted downtime")
    )
    game_report_xp: Decimal = _setting(
        Decimal("3"), "DT-05", gettext_noop("XP per picked game report")
    )
    game_report_picks: int = _setting(
        4, "DT-05", gettext_noop("Game reports the STs may pick per cycle")
    )
    # DT-REL (a house rule of this project, not of the rules document; issue 12): desk items
    # still New or In progress and XP purchases waiting for sign-off hold the release back.
    # Off, the storytellers confirm each unfinished group before releasing instead.
    unfinished_blocks_release: bool = _setting(
        False,
        "DT-REL",
        gettext_noop("Unfinished desk items and purchases waiting for sign-off block the release"),
    )
    vote_award_xp: Decimal = _setting(Decimal("3"), "DT-07", gettext_noop("XP per vote award"))
    toreador_vote_weight: int = _setting(
        2, "DT-06", gettext_noop("Weight of a Toreador's in-character vote")
    )
    retirement_spent_fraction: Decimal = _setting(
        Decimal("0.5"), "XP-06", gettext_noop("Share of spent XP returned on death or retirement")
    )
    # CRE-04 "rebuilt as a kindred with the same XP": the XP spent on the ghoul or kine comes
    # back for the rebuild (off: only the player's current balance, as for a return, XP-07).
    embrace_refunds_spent_xp: bool = _setting(
        True,
        "CRE-04",
        gettext_noop("An embraced ghoul or kine gets back the XP spent on it for its rebuild"),
    )
    item_lifetime_months: int = _setting(
        6, "ITM-02", gettext_noop("Months an item lasts before expiring")
    )
    item_repair_fraction: Decimal = _setting(
        Decimal("0.5"),
        "ITM-02",
        gettext_noop(
            "Repair cost as a share of the item's cost (rounded up, min 1, always below the cost)"
        ),
    )
    item_repair_free_at_cost_one: bool = _setting(
        True, "ITM-02", gettext_noop("Repairing an item that costs 1 is free (off: it costs 1)")
    )
    torpor_hold_cycles: int = _setting(1, "TOR-01", gettext_noop("Cycles a torpor hold may last"))


HOUSE_RULE_FIELDS: dict[str, dataclasses.Field[Any]] = {
    f.name: f for f in dataclasses.fields(HouseRules)
}

_ONE = Decimal(1)
# Numbers outside these make no sense for the rule (a 0-week deadline, a 150% refund); every
# other number setting runs from 0 up.
SETTING_BOUNDS: dict[str, tuple[int | Decimal, int | Decimal | None]] = {
    "cheating_second_offense_fraction": (0, _ONE),
    "retirement_spent_fraction": (0, _ONE),
    "item_repair_fraction": (0, _ONE),
    "starting_generation": (1, 15),
    "lowest_creation_generation": (1, 15),
    "generation_table_base": (1, None),
    "kine_blood_months": (1, None),
    "herd_yield": (1, None),
    "pure_bond_months": (1, None),
    "shared_bond_months": (1, None),
    "shared_bond_drinks": (1, None),
    "theft_control_games": (1, None),
    "forsake_after_absent_games": (1, None),
    "toreador_vote_weight": (1, None),
    "item_lifetime_months": (1, None),
    "deadline_weeks_after_game": (1, 8),
    "minimum_player_age": (0, 99),
    "decision_vote_days": (1, 60),
    "open_drafts_per_player": (1, 50),
}


def setting_bounds(name: str) -> tuple[int | Decimal, int | Decimal | None]:
    return SETTING_BOUNDS.get(name, (0, None))


def _coerce(name: str, field: dataclasses.Field[Any], raw: object) -> Any:
    kind = type(field.default)
    choices = field.metadata["choices"]
    shown = {"name": name, "raw": repr(raw)}
    if kind is bool:
        if not isinstance(raw, bool):
            raise ValueError(_("%(name)s: expected true or false, got %(raw)s.") % shown)
        return raw
    if kind is int:
        if isinstance(raw, bool):
            raise ValueError(_("%(name)s: expected a whole number, got %(raw)s.") % shown)
        try:
            value: Any = int(str(raw))
        except ValueError:
            raise ValueError(_("%(name)s: expected a whole number, got %(raw)s.") % shown) from None
    elif kind is Decimal:
        if isinstance(raw, bool):
            raise ValueError(_("%(name)s: expected a number, got %(raw)s.") % shown)
        try:
            value = Decimal(str(raw))
        except InvalidOperation:
            raise ValueError(_("%(name)s: expected a number, got %(raw)s.") % shown) from None
        if not value.is_finite():
            raise ValueError(_("%(name)s: expected a number, got %(raw)s.") % shown)
    else:
        value = str(raw)
    if kind in (int, Decimal) and not choices:
        minimum, maximum = setting_bounds(name)
        if value < minimum:
            raise ValueError(
                _("%(name)s: must be at least %(minimum)s, got %(raw)s.")
                % {**shown, "minimum": minimum}
            )
        if maximum is not None and value > maximum:
            raise ValueError(
                _("%(name)s: must be at most %(maximum)s, got %(raw)s.")
                % {**shown, "maximum": maximum}
            )
    if choices and str(value) not in choices:
        raise ValueError(
            _("%(name)s: must be one of %(choices)s; got %(raw)s.")
            % {**shown, "choices": ", ".join(choices)}
        )
    return value


def house_rules_from(overrides: Mapping[str, object] | None) -> HouseRules:
    """Merge a chronicle's stored overrides over the defaults, refusing unknown names and values
    of the wrong kind (with a message naming the setting)."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(HOUSE_RULE_FIELDS))
    if unknown:
        raise ValueError(
            ngettext(
                "Unknown house-rule setting(s): %(names)s.",
                "Unknown house-rule setting(s): %(names)s.",
                len(unknown),
            )
            % {"names": ", ".join(unknown)}
        )
    values = {name: _coerce(name, HOUSE_RULE_FIELDS[name], raw) for name, raw in overrides.items()}
    return HouseRules(**values)


def house_rules_overrides(rules: HouseRules) -> dict[str, Any]:
    """The JSON-storable values of `rules` that differ from the defaults."""
    defaults = HouseRules()
    changed: dict[str, Any] = {}
    for name in HOUSE_RULE_FIELDS:
        value = getattr(rules, name)
        if value != getattr(defaults, name):
            changed[name] = str(value) if isinstance(value, Decimal) else value
    return changed


@functools.lru_cache(maxsize=512)
def _setting_names(function: Callable[..., object]) -> tuple[str, ...]:
    """The house-rule settings `function` takes: a function's signature never changes, and
    `inspect.signature` is slow enough to show in a resolution that asks once per subject."""
    return tuple(
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name in HOUSE_RULE_FIELDS
    )


def settings_for(function: Callable[..., object], house_rules: HouseRules) -> dict[str, Any]:
    """The chronicle's settings that `function` takes as keyword-only arguments: every rules
    function names its INTERPRETATION settings exactly as `HouseRules` does, so a service calls
    `rule(x, **settings_for(rule, chronicle.house_rules))` and never wires one by hand."""
    return {name: getattr(house_rules, name) for name in _setting_names(function)}
