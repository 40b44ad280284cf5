"""Characters and everything the house rules keep about them (SPEC CLN, CRE, DIS, CTL, BLD, BND,
INF ratings, XP, ITM, SEW, TOR, MSC).

Models hold data and constraints only; `services.py` is the one writer, `rules.py` the
arithmetic. Timers (bonds, kine blood, torpor holds, captives, black veins) are due-date columns
that the sweepers of `tasks.py` read (DESIGN: timers as due-date columns).
"""

from __future__ import annotations

from decimal import Decimal

import pgtrigger
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from chronicle.models import Chronicle, Cycle, Game
from chronicle.tracking import tracked

from . import rules

# --- Choices ------------------------------------------------------------------------------------


class Creature(models.TextChoices):
    KINDRED = "kindred", _("Kindred")
    GHOUL = "ghoul", _("Ghoul")
    KINE = "kine", _("Kine")
    ANIMAL_GHOUL = "animal_ghoul", _("Animal ghoul")


class Sect(models.TextChoices):
    CAMARILLA = "camarilla", _("Camarilla")
    SABBAT = "sabbat", _("Sabbat")
    INDEPENDENT = "independent", _("Independent")
    ANARCH = "anarch", _("Anarch")


class Status(models.TextChoices):
    ACTIVE = "active", _("Active")
    RETIRED = "retired", _("Retired")
    DEAD = "dead", _("Dead")
    TORPOR = "torpor", _("Torpor")
    STAKED = "staked", _("Staked")
    NPC = "npc", _("NPC")


class Approval(models.TextChoices):
    """CRE-09: a new character is a draft until an ST approves it."""

    DRAFT = "draft", _("Draft")
    SUBMITTED = "submitted", _("Waiting for ST approval")
    RETURNED = "returned", _("Returned with a note")
    APPROVED = "approved", _("Approved")


CLAN_CHOICES = [(key, clan.title) for key, clan in rules.CLANS.items()]
DISCIPLINE_CHOICES = [(key, title) for key, title in rules.DISCIPLINE_TITLES.items()]
LEVEL_CHOICES = [(number, code) for code, number in rules.LEVEL_NUMBERS.items()]
# INF-01: the five influences, as a player reads them ("Business" the influence, not a firm).
INFLUENCE_LABELS = {
    "business": pgettext_lazy("influence", "Business"),
    "government": pgettext_lazy("influence", "Government"),
    "herd": pgettext_lazy("influence", "Herd"),
    "occult": pgettext_lazy("influence", "Occult"),
    "underworld": pgettext_lazy("influence", "Underworld"),
}
INFLUENCE_CHOICES = [(name, INFLUENCE_LABELS[name]) for name in rules.INFLUENCE_TYPES]


@tracked("CharacterHistory", exclude=["updated_at"])
class Character(models.Model):
    chronicle = models.ForeignKey(Chronicle, on_delete=models.PROTECT, related_name="characters")
    # NPCs have no player.
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="characters",
    )
    name = models.CharField(max_length=120)
    creature = models.CharField(max_length=16, choices=Creature.choices, default=Creature.KINDRED)
    clan = models.CharField(max_length=16, choices=CLAN_CHOICES, blank=True)
    # Caitiff's three chosen disciplines, or a Tremere's Thaumaturgy path (CLN-01).
    chosen_disciplines = models.JSONField(default=list, blank=True)
    # CLN-01 creation bonus choice, e.g. Toreador "herd" or "social".
    clan_bonus = models.CharField(max_length=32, blank=True)
    sect = models.CharField(max_length=16, choices=Sect.choices, blank=True)
    generation = models.PositiveSmallIntegerField(default=13)
    physical = models.PositiveSmallIntegerField(default=0)
    social = models.PositiveSmallIntegerField(default=0)
    mental = models.PositiveSmallIntegerField(default=0)
    # {"investigation": 2, "brawl": 1}: SRC-02 says the ability list is lost, so names are free.
    abilities = models.JSONField(default=dict, blank=True)
    willpower = models.PositiveSmallIntegerField(default=0)
    extra_control = models.PositiveSmallIntegerField(default=0)
    childer = models.PositiveSmallIntegerField(default=0)
    sewer_lore = models.PositiveSmallIntegerField(default=0)
    # INF-01: the five permanent ratings.
    business = models.PositiveSmallIntegerField(default=0)
    government = models.PositiveSmallIntegerField(default=0)
    herd = models.PositiveSmallIntegerField(default=0)
    occult = models.PositiveSmallIntegerField(default=0)
    underworld = models.PositiveSmallIntegerField(default=0)
    # CRE-08 / CLN-01 flags.
    protean_form = models.CharField(
        max_length=4, choices=[("wolf", _("Wolf")), ("bat", _("Bat"))], blank=True
    )
    feeding_demographic = models.CharField(max_length=120, blank=True)
    embrace_earth = models.BooleanField(default=False)
    # Freebies spent at creation, as the creation service computed them from the rules.
    freebies_spent = models.PositiveSmallIntegerField(default=0)
    # The creation wizard's raw choices (package allocation, freebie purchases, free and bought
    # levels, disadvantages) while in draft: the 7/5/3 split and the freebies cannot be told
    # apart once summed into the columns above, and approval re-checks them (CRE-01).
    creation = models.JSONField(default=dict, blank=True)

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    approval = models.CharField(max_length=16, choices=Approval.choices, default=Approval.DRAFT)
    approval_note = models.TextField(blank=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    # CRE-09: questionnaire (mandatory) and story (optional), approved by an ST.
    background_questionnaire = models.TextField(blank=True)
    background_story = models.TextField(blank=True)
    background_approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    background_approved_at = models.DateTimeField(null=True, blank=True)

    # Private to storytellers; never serialized for players.
    st_notes = models.TextField(blank=True)

    died_on = models.DateField(null=True, blank=True)
    retired_on = models.DateField(null=True, blank=True)
    embraced_on = models.DateField(null=True, blank=True)  # CRE-04: breaks every bond
    # XP-07 / CRE-04: how many times the character was reopened as a draft to be rebuilt (a
    # return from retirement, an embrace), and the XP it had spent before the last rebuild, which
    # a later XP-06 credit does not count again (XP-07a).
    rebuilds = models.PositiveSmallIntegerField(default=0)
    xp_spent_before_rebuild = models.DecimalField(
        max_digits=7, decimal_places=1, default=Decimal(0)
    )
    # CTL-02: control fell below 1, so the character became a storyteller-run NPC: when, and
    # why (an English sentence of services/control.py, shown in each reader's language). The
    # player stays linked, as for any PC the storytellers keep as an NPC (characters_leave_play).
    npc_since = models.DateTimeField(null=True, blank=True)
    npc_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Imported from a Grapevine file (characters/importers/): the file's name and when, the key
    # a second import of the same file finds it by ("id:<file's id>" or "name:<name>"), what
    # has no place on the sheet kept as text, and the file's own data for the export back
    # (with what the import wrote, so a re-import can say what the storytellers changed since).
    imported_from = models.CharField(max_length=255, blank=True)
    imported_at = models.DateTimeField(null=True, blank=True)
    grapevine_key = models.CharField(max_length=160, blank=True)
    imported_notes = models.TextField(blank=True)
    imported_data = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["name", "pk"]
        indexes = [
            models.Index(fields=["chronicle", "status"]),
            models.Index(
                fields=["chronicle", "grapevine_key"],
                condition=~Q(grapevine_key=""),
                name="character_grapevine_key",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(generation__gte=1) & Q(generation__lte=15), name="character_generation"
            ),
            models.CheckConstraint(condition=Q(sewer_lore__lte=8), name="character_sewer_lore"),
            # XP-07: one active PC per player and chronicle.
            models.UniqueConstraint(
                fields=["chronicle", "player"],
                condition=Q(status="active", approval="approved", player__isnull=False),
                name="one_active_pc_per_player",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def influences(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in rules.INFLUENCE_TYPES}

    @property
    def influence_total(self) -> int:
        return sum(self.influences.values())

    @property
    def kind(self) -> str:
        """The rules' kind: animal ghouls are built like ghouls (CRE-03)."""
        return "ghoul" if self.creature == Creature.ANIMAL_GHOUL else str(self.creature)


@tracked("TitleHistory")
class Title(models.Model):
    """A title held in a city, e.g. Prince of Chicago."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="titles")
    name = models.CharField(max_length=60)
    city = models.CharField(max_length=80)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["character", "name", "city"], name="title_once")
        ]

    def __str__(self) -> str:
        return f"{self.name} of {self.city}"


class Acquired(models.TextChoices):
    CREATION = "creation", _("At creation")
    PLAY = "play", _("In play")


@tracked("DisciplineLevelHistory")
class DisciplineLevel(models.Model):
    """One owned level (DIS-01/02), with how it was acquired (DIS-04..08)."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="disciplines")
    discipline = models.CharField(max_length=24, choices=DISCIPLINE_CHOICES)
    level = models.PositiveSmallIntegerField(choices=LEVEL_CHOICES)
    acquired = models.CharField(max_length=8, choices=Acquired.choices)
    free = models.BooleanField(default=False)  # CRE-01 free basic in-clan level
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, null=True, blank=True)
    teacher = models.ForeignKey(
        Character, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    cost = models.PositiveSmallIntegerField(default=0)
    purchase = models.ForeignKey(
        "XpPurchase",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="levels_granted",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["discipline", "level"]
        constraints = [
            models.UniqueConstraint(
                fields=["character", "discipline", "level"], name="discipline_level_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.discipline} {self.code}"

    @property
    def code(self) -> str:
        return rules.level_code(self.level)

    @property
    def title(self) -> str:
        return rules.level_name(self.discipline, self.code)


@tracked("RitualHistory")
class Ritual(models.Model):
    """DIS-10: a character's rituals; a Tremere starts with one free basic ritual."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="rituals")
    name = models.CharField(max_length=120)
    free = models.BooleanField(default=False)
    learned_on = models.DateField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


@tracked("DisadvantageHistory")
class Disadvantage(models.Model):
    """CRE-02: a disadvantage or derangement."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="disadvantages")
    name = models.CharField(max_length=120)
    major = models.BooleanField(default=False)
    physical = models.BooleanField(default=False)
    hideously_ugly = models.BooleanField(default=False)
    derangement = models.BooleanField(default=False)

    class Meta:
        ordering = ["-major", "name"]

    def __str__(self) -> str:
        return self.name


# --- XP (XP-01..07, GEN-02, DT awards) ---------------------------------------------------------


class XpKind(models.TextChoices):
    AWARD = "award", _("Award")
    PURCHASE = "purchase", _("Purchase")
    RETIREMENT = "retirement", _("Retirement or death")
    CORRECTION = "correction", _("Correction")
    REVERSAL = "reversal", _("Reversal")
    PENALTY = "penalty", _("Penalty")
    OPENING = "opening", _("Opening balance")


@pgtrigger.register(
    pgtrigger.Protect(name="xp_entry_append_only", operation=pgtrigger.Update | pgtrigger.Delete)
)
class XpEntry(models.Model):
    """XP-07: the ledger is per player and chronicle, append-only; a balance is the sum of its
    entries and a correction is a reversing entry (DESIGN: money-like numbers).

    `key` makes every award and purchase idempotent: a re-run or a second click finds the key
    taken and writes nothing (unique per chronicle and player).
    """

    chronicle = models.ForeignKey(Chronicle, on_delete=models.PROTECT, related_name="xp_entries")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="xp_entries"
    )
    character = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="xp_entries"
    )
    amount = models.DecimalField(max_digits=7, decimal_places=1)
    kind = models.CharField(max_length=16, choices=XpKind.choices)
    reason = models.CharField(max_length=300)
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, null=True, blank=True)
    key = models.CharField(max_length=120)
    reverses = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="reversed_by"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["chronicle", "player", "created_at"])]
        constraints = [
            models.UniqueConstraint(fields=["chronicle", "player", "key"], name="xp_entry_key"),
            models.CheckConstraint(condition=~Q(amount=Decimal(0)), name="xp_entry_not_zero"),
        ]

    def __str__(self) -> str:
        return f"{self.amount:+} XP {self.reason}"


class PurchaseKind(models.TextChoices):
    DISCIPLINE = "discipline", _("Discipline level")
    GENERATION = "generation", _("Generation step")
    TRAIT = "trait", _("Trait")
    ABILITY = "ability", _("Ability")
    WILLPOWER = "willpower", _("Willpower")
    INFLUENCE = "influence", _("Influence")
    SEWER_LORE = "sewer_lore", _("Sewer Lore")


class PurchaseStatus(models.TextChoices):
    REQUESTED = "requested", _("Waiting for ST sign-off")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    WITHDRAWN = "withdrawn", _("Withdrawn")


class PurchaseMoment(models.TextChoices):
    DOWNTIME = "downtime", _("In downtime")
    GAME = "game", _("At the game, before play")


class XpPurchase(models.Model):
    """XP-01: a purchase in play, asked by the player and signed off by an ST; approval writes
    one ledger entry (key `purchase:<id>`)."""

    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="purchases")
    kind = models.CharField(max_length=16, choices=PurchaseKind.choices)
    discipline = models.CharField(max_length=24, choices=DISCIPLINE_CHOICES, blank=True)
    levels = models.JSONField(default=list, blank=True)  # ["1a"] for a discipline purchase
    target = models.CharField(max_length=60, blank=True)  # trait area, ability or influence
    quantity = models.PositiveSmallIntegerField(default=1)
    teacher = models.ForeignKey(
        Character, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # DIS-07 / SEW-01: the teacher as the player names them; an ST links `teacher` at sign-off.
    teacher_name = models.CharField(max_length=120, blank=True)
    diablerie = models.ForeignKey(
        "Diablerie", on_delete=models.PROTECT, null=True, blank=True, related_name="purchases"
    )
    moment = models.CharField(
        max_length=8, choices=PurchaseMoment.choices, default=PurchaseMoment.DOWNTIME
    )
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, null=True, blank=True)
    cost = models.DecimalField(max_digits=6, decimal_places=1)
    status = models.CharField(
        max_length=12, choices=PurchaseStatus.choices, default=PurchaseStatus.REQUESTED
    )
    note = models.TextField(blank=True)  # the player's
    decision_note = models.TextField(blank=True)  # the ST's, shown to the player
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    requested_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    ledger_entry = models.OneToOneField(
        XpEntry, on_delete=models.PROTECT, null=True, blank=True, related_name="purchase"
    )

    class Meta:
        ordering = ["-requested_at", "-pk"]
        indexes = [models.Index(fields=["character", "status"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} for {self.character_id} ({self.status})"


# --- Blood and bonds (BLD, BND) ----------------------------------------------------------------


class DonorType(models.TextChoices):
    KINE = "kine", _("Kine")
    KINDRED = "kindred", _("One kindred")
    MIXED_KINDRED = "mixed_kindred", _("Mixed kindred")


class StoredBlood(models.Model):
    """BLD-02: stored blood apart from the blood in the body; BLD-03 expiry as a due date."""

    holder = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="stored_blood")
    location = models.CharField(max_length=200)  # "on body" counts against BLD-01
    on_body = models.BooleanField(default=False)
    points = models.PositiveSmallIntegerField()
    donor_type = models.CharField(max_length=16, choices=DonorType.choices)
    donors = models.ManyToManyField(Character, blank=True, related_name="+")
    donor_note = models.CharField(max_length=200, blank=True)  # kine donors have no record
    collected_on = models.DateField()
    unusable_from = models.DateField(null=True, blank=True)
    expired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collected_on", "pk"]
        indexes = [
            models.Index(
                fields=["unusable_from"],
                condition=Q(expired_at__isnull=True),
                name="stored_blood_due",
            )
        ]
        constraints = [models.CheckConstraint(condition=Q(points__gte=1), name="blood_points")]

    def __str__(self) -> str:
        return f"{self.points} blood at {self.location}"


class BloodDrink(models.Model):
    """BND: one drink of kindred blood, recorded by an ST (mixed or not, with its donors)."""

    drinker = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="drinks")
    night = models.DateField()
    mixed = models.BooleanField(default=False)
    donors = models.ManyToManyField(Character, related_name="drinks_given")
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["night", "pk"]

    def __str__(self) -> str:
        return f"drink on {self.night}"


class BondBreak(models.Model):
    """BND-03 / BND-06: a ritual that broke the bond to one regnant."""

    thrall = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="bond_breaks")
    regnant = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    night = models.DateField()
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )

    def __str__(self) -> str:
        return f"bond broken on {self.night}"


class BondKind(models.TextChoices):
    PURE = "pure", _("Blood bond")
    SHARED = "shared", _("Shared bond")


class Bond(models.Model):
    """The current state of one thrall toward one regnant, as `rules.bond_state` computed it
    from the drinks (the drinks are the truth; this row is what the sweeper and the sheet read).

    `level` is the pure level (1..3) or the shared drink count; `bound` when the bond is in
    force; `due_on` is the first day it ends or lapses, for the sweeper (BND-10).
    """

    thrall = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="bonds")
    regnant = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="thrall_bonds")
    kind = models.CharField(max_length=8, choices=BondKind.choices)
    level = models.PositiveSmallIntegerField()
    bound = models.BooleanField(default=False)
    since = models.DateField(null=True, blank=True)
    due_on = models.DateField()
    ended_on = models.DateField(null=True, blank=True)
    end_reason = models.CharField(max_length=120, blank=True)
    notified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-bound", "regnant__name"]
        indexes = [
            models.Index(fields=["due_on"], condition=Q(ended_on__isnull=True), name="bond_due")
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["thrall", "regnant", "kind"],
                condition=Q(ended_on__isnull=True),
                name="one_live_bond_per_pair",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} bond level {self.level}"


class RequestSetAt(models.TextChoices):
    GAME = "game", _("At a game")
    DOWNTIME = "downtime", _("In downtime")


class RegnantRequest(models.Model):
    """BND-09: at most 4 active requests per regnant and thrall."""

    thrall = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="requests")
    regnant = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    text = models.TextField()
    set_at = models.CharField(max_length=8, choices=RequestSetAt.choices)
    created_at = models.DateTimeField()
    dropped_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.text[:60]


# --- Items (ITM) ---------------------------------------------------------------------------------


class Concealability(models.TextChoices):
    BLUE = "blue", _("Blue (jacket)")
    YELLOW = "yellow", _("Yellow (trenchcoat)")
    RED = "red", _("Red (cannot be concealed)")


@tracked("ItemHistory")
class Item(models.Model):
    """ITM-01..03."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="items")
    name = models.CharField(max_length=120)
    concealability = models.CharField(max_length=8, choices=Concealability.choices)
    armor = models.PositiveSmallIntegerField(default=0)
    purchase_cost = models.PositiveSmallIntegerField()
    potence_reinforced = models.BooleanField(default=False)
    expires_on = models.DateField()
    downgraded = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    repaired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["expires_on", "name"]
        constraints = [models.CheckConstraint(condition=Q(armor__lte=5), name="item_armor")]

    def __str__(self) -> str:
        return self.name


# --- Sewer lore (SEW) ----------------------------------------------------------------------------


class SewerLocation(models.Model):
    """SEW-03: a location is a number with a sewer level."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveIntegerField()
    level = models.PositiveSmallIntegerField()
    description = models.CharField(max_length=200, blank=True)
    defenders = models.ManyToManyField(Character, blank=True, related_name="+")

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(fields=["chronicle", "number"], name="sewer_location_number")
        ]

    def __str__(self) -> str:
        return f"sewer location {self.number} (level {self.level})"


class KnownSewerLocation(models.Model):
    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="sewer_locations"
    )
    location = models.ForeignKey(SewerLocation, on_delete=models.CASCADE, related_name="+")
    learned_on = models.DateField()
    forgotten_on = models.DateField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["character", "location"],
                condition=Q(forgotten_on__isnull=True),
                name="sewer_location_known_once",
            )
        ]

    def __str__(self) -> str:
        return f"known location {self.location_id}"


# --- Diablerie, summons, conditioning, torpor, captives (XP-04/05, MSC, TOR) --------------------


class GenerationStep(models.TextChoices):
    NONE = "none", _("No step (victim not of lower generation)")
    QUEUED = "queued", _("Step waiting for a downtime")
    TAKEN = "taken", _("Step taken")
    DECLINED = "declined", _("Declined")


class Diablerie(models.Model):
    """XP-04: date, victim and its generation; black veins for six months."""

    diablerist = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="diableries")
    victim = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    victim_name = models.CharField(max_length=120)
    victim_generation = models.PositiveSmallIntegerField()
    occurred_on = models.DateField()
    black_veins_until = models.DateField()
    veins_faded_at = models.DateTimeField(null=True, blank=True)
    generation_step = models.CharField(
        max_length=8, choices=GenerationStep.choices, default=GenerationStep.NONE
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["occurred_on", "pk"]

    def __str__(self) -> str:
        return f"diablerie of {self.victim_name} on {self.occurred_on}"


class SummonsLock(models.Model):
    """MSC-01: a won summons lock; summons needs one won in the last year."""

    holder = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="summons_locks")
    target = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    won_on = models.DateField()

    def __str__(self) -> str:
        return f"summons lock won {self.won_on}"


class Conditioning(models.Model):
    """MSC-02: permanent."""

    subject = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="conditioning")
    conditioner = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    description = models.TextField()
    recorded_on = models.DateField()

    def __str__(self) -> str:
        return self.description[:60]


class TorporHold(models.Model):
    """TOR-01: a hold for one downtime; the sweeper ends it when that cycle is over."""

    holder = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="torpor_holds")
    captive = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="held_by")
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["captive", "cycle"], name="one_hold_per_cycle")
        ]

    def __str__(self) -> str:
        return f"torpor hold in cycle {self.cycle_id}"


class CaptiveOutcome(models.TextChoices):
    RELEASED = "released", _("Released")
    KILLED = "killed", _("Killed")
    DIED = "died", _("Died: not released by the end of the next game (TOR-02)")


class Captivity(models.Model):
    """TOR-02: a PC whose body another controls must be released or killed before the end of the
    next game; `deadline_game` is that game, checked by a sweeper after it."""

    captive = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="captivities")
    captor = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    since = models.DateField()
    deadline_game = models.ForeignKey(Game, on_delete=models.PROTECT, null=True, blank=True)
    outcome = models.CharField(max_length=8, choices=CaptiveOutcome.choices, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["captive"], condition=Q(resolved_at__isnull=True), name="one_captivity"
            )
        ]

    def __str__(self) -> str:
        return f"captive since {self.since}"


class NpcVolunteer(models.Model):
    """MSC-03: first come first served; declining moves a volunteer to the end."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="+")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["chronicle", "player"], name="npc_volunteer_once")
        ]

    def __str__(self) -> str:
        return f"volunteer {self.position}"


class Notification(models.Model):
    """One e-mail a sweeper owes a player, keyed so a re-run sends it once."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=120, unique=True)
    subject = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.subject


# --- Conduct and grants (GEN-02, GEN-06) -------------------------------------------------------


class Offense(models.TextChoices):
    WARNING = "warning", _("Warning")
    HALVE_XP = "halve_xp", _("Earned XP halved")
    BAN = "ban", _("Ban")


class CheatingOffense(models.Model):
    """GEN-02: the n-th offense of a player in a chronicle and what it brought."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.PROTECT, related_name="+")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    number = models.PositiveSmallIntegerField()
    action = models.CharField(max_length=8, choices=Offense.choices)
    xp_change = models.DecimalField(max_digits=7, decimal_places=1, default=Decimal(0))
    note = models.TextField()
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(
                fields=["chronicle", "player", "number"], name="cheating_offense_number"
            )
        ]

    def __str__(self) -> str:
        return f"offense {self.number}: {self.action}"


class RespendGrant(models.Model):
    """GEN-06: an ST's grant to respend the points of one discipline or ability after a rules
    change, case by case."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="respends")
    subject = models.CharField(max_length=60)
    reason = models.TextField()
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    granted_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"respend {self.subject}"


# --- Influence spending (INF-03) ---------------------------------------------------------------


class SpendMoment(models.TextChoices):
    GAME = "game", _("At the game")
    DOWNTIME = "downtime", _("In downtime")


@pgtrigger.register(
    pgtrigger.Protect(
        name="influence_spend_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class InfluenceSpend(models.Model):
    """INF-03: one spend of one influence type by a character in a cycle (the cycle after the
    game it was spent at, or the downtime it was spent in). Append-only like the XP ledger: a
    refund is a negative entry that `reverses` the spend. `key` makes a spend idempotent (a
    second click, a re-run). What a character has left of a type in a cycle is its rating
    minus the sum of its entries for that cycle and type."""

    character = models.ForeignKey(
        Character, on_delete=models.PROTECT, related_name="influence_spends"
    )
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="influence_spends")
    influence = models.CharField(max_length=16, choices=INFLUENCE_CHOICES)
    points = models.SmallIntegerField()
    moment = models.CharField(
        max_length=8, choices=SpendMoment.choices, default=SpendMoment.DOWNTIME
    )
    reason = models.CharField(max_length=300)
    key = models.CharField(max_length=120)
    reverses = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="reversed_by"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["character", "cycle", "influence"])]
        constraints = [
            models.UniqueConstraint(fields=["character", "key"], name="influence_spend_key"),
            models.CheckConstraint(condition=~Q(points=0), name="influence_spend_not_zero"),
        ]

    def __str__(self) -> str:
        return f"{self.points:+} {self.influence} {self.reason}"


class InfluenceLoan(models.Model):
    """INF-03: points of one type lent for one cycle. They count for the borrower, and against
    the lender, once the lender confirms from their own downtime."""

    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="influence_loans")
    lender = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="loans_given")
    borrower = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="loans_taken")
    influence = models.CharField(max_length=16, choices=INFLUENCE_CHOICES)
    points = models.PositiveSmallIntegerField()
    asked_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["asked_at", "pk"]
        constraints = [
            models.CheckConstraint(condition=Q(points__gte=1), name="influence_loan_points"),
            models.CheckConstraint(
                condition=~Q(lender=models.F("borrower")), name="influence_loan_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.points} {self.influence} from {self.lender} to {self.borrower}"


# --- Imports from outside formats (Grapevine 3) -------------------------------------------------


class ImportStatus(models.TextChoices):
    PREVIEW = "preview", _("Waiting for the storytellers' choices")
    QUEUED = "queued", _("Waiting for a worker")
    RUNNING = "running", _("Importing")
    DONE = "done", _("Imported")
    FAILED = "failed", _("Failed")


class ImportJob(models.Model):
    """One upload of Grapevine files on the Import page: the files' text (parsed again by the
    worker, so nothing but this row is written before the storytellers confirm), their choices
    for the values that do not map, and the worker's progress and result. The database row, not
    the broker, is the truth: a redelivered task finds the job done and does nothing."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()
    # [{"name": "chronicle.gex", "text": "<?xml ..."}]
    files = models.JSONField(default=list)
    # {"clan:Giovanni": "", "sect:Nihilist": "anarch", ...}: the storytellers' choices.
    choices = models.JSONField(default=dict, blank=True)
    # The preview the storytellers confirmed: the worker refuses a chronicle that changed since.
    preview_digest = models.CharField(max_length=64, blank=True)
    status = models.CharField(
        max_length=8, choices=ImportStatus.choices, default=ImportStatus.PREVIEW
    )
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"import {self.pk} ({self.status})"

    @property
    def file_names(self) -> list[str]:
        return [str(f.get("name", "")) for f in self.files]

    @property
    def percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == ImportStatus.DONE else 0
        return min(100, 100 * self.progress_done // self.progress_total)
