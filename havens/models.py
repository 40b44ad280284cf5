"""Havens (HAV-01..26) and objects hidden on site (HID-01..02).

Everything here but a structure's existence to its owners is secret (HAV-04): attributes,
hiding points and owner lists reach only current owners and the chronicle's storytellers, and
only through `havens.access`. A searcher learns a structure's `location`, nothing more.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from characters.models import INFLUENCE_CHOICES, Character, InfluenceSpend
from chronicle.models import Chronicle, Cycle, Game
from chronicle.tracking import tracked

from . import rules

# HAV-10..22, in the rules' order; the labels are the attributes' names on every page.
ATTRIBUTE_LABELS = {
    "alarm": pgettext_lazy("haven attribute", "Alarm"),
    "exit": pgettext_lazy("haven attribute", "Exit"),
    "camera": pgettext_lazy("haven attribute", "Camera"),
    "recorder": pgettext_lazy("haven attribute", "Recorder"),
    "hiding": pgettext_lazy("haven attribute", "Hiding"),
    "influence_resistance": pgettext_lazy("haven attribute", "Influence resistance"),
    "two_way_lock": pgettext_lazy("haven attribute", "Two way lock"),
    "one_way_lock": pgettext_lazy("haven attribute", "One way lock"),
    "timelock": pgettext_lazy("haven attribute", "Timelock"),
    "mobility": pgettext_lazy("haven attribute", "Mobility"),
    "monitor": pgettext_lazy("haven attribute", "Monitor"),
    "reinforcement": pgettext_lazy("haven attribute", "Reinforcement"),
    "seals": pgettext_lazy("haven attribute", "Seals"),
}
ATTRIBUTE_CHOICES = [(kind, ATTRIBUTE_LABELS[kind]) for kind in rules.ATTRIBUTE_KINDS]


class StructureKind(models.TextChoices):
    OUTER = "outer", _("Outer haven")
    CRYPT = "crypt", _("Crypt")


class StructureStatus(models.TextChoices):
    PLANNED = "planned", _("Planned (not yet built)")
    STANDING = "standing", _("Standing")
    DESTROYED = "destroyed", _("Destroyed")


class DestroyedBy(models.TextChoices):
    INFLUENCE_ATTACK = "influence_attack", _("Influence attack (HAV-25c)")
    FORSAKEN = "forsaken", _("Forsaken (HAV-06)")
    OUTER_FORSAKEN = "outer_forsaken", _("Its outer haven was forsaken (HAV-06)")
    CRYPT_VOTE = "crypt_vote", _("Destroyed by the outer haven's owners (HAV-03)")
    OUTER_DESTROYED = "outer_destroyed", _("Its outer haven was destroyed")
    STORYTELLER = "storyteller", _("Storyteller ruling")


@tracked("StructureHistory")
class Structure(models.Model):
    """HAV-01: an outer haven, or a crypt inside one (`outer`). Planned until its first
    contribution (HAV-02), then standing until destroyed (in downtime, HAV-05)."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.PROTECT, related_name="structures")
    kind = models.CharField(max_length=8, choices=StructureKind.choices)
    outer = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="crypts"
    )
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    # What a successful search reveals (HAV-25b): location only.
    location = models.CharField(max_length=300)
    status = models.CharField(
        max_length=10, choices=StructureStatus.choices, default=StructureStatus.PLANNED
    )
    # The character whose player designed it: sees the plan until someone contributes.
    designed_by = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField()
    built_cycle = models.ForeignKey(
        Cycle, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    destroyed_at = models.DateTimeField(null=True, blank=True)
    destroyed_cycle = models.ForeignKey(
        Cycle, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    destroyed_by = models.CharField(max_length=20, choices=DestroyedBy.choices, blank=True)
    destroyed_note = models.TextField(blank=True)
    # Bumped by every design change, so two owners editing at once see each other's change.
    version = models.PositiveIntegerField(default=1)
    # The design form's token: a double-clicked "design" plans one haven.
    key = models.CharField(max_length=120, blank=True)

    class Meta:
        ordering = ["name", "pk"]
        indexes = [models.Index(fields=["chronicle", "status"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="outer", outer__isnull=True)
                | Q(kind="crypt", outer__isnull=False),
                name="structure_crypt_inside_outer",
            ),
            models.CheckConstraint(
                condition=~Q(status="destroyed") | Q(destroyed_at__isnull=False),
                name="structure_destroyed_has_time",
            ),
            models.UniqueConstraint(
                fields=["chronicle", "key"], condition=~Q(key=""), name="structure_key"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class OwnershipHow(models.TextChoices):
    BUILT = "built", _("First contributor (HAV-02)")
    JOINED = "joined", _("Joined as partial owner")
    TRANSFER = "transfer", _("Transfer (HAV-05)")
    WILL = "will", _("Will (HAV-05)")
    THEFT = "theft", _("Theft (HAV-07)")
    STORYTELLER = "storyteller", _("Storyteller ruling")


@tracked("OwnershipHistory")
class Ownership(models.Model):
    """HAV-02: one character's ownership of a structure, from `started_at` to `ended_at`.
    Current owners are the rows without an end; one current owner is exclusive, two or more
    are partial (derived, never stored). Rows are never deleted: they are the history."""

    structure = models.ForeignKey(Structure, on_delete=models.PROTECT, related_name="ownerships")
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="ownerships")
    how = models.CharField(max_length=12, choices=OwnershipHow.choices)
    started_at = models.DateTimeField()
    started_cycle = models.ForeignKey(
        Cycle, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_cycle = models.ForeignKey(
        Cycle, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    ended_why = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["started_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["structure", "character"],
                condition=Q(ended_at__isnull=True),
                name="ownership_current_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.character} owns {self.structure}"


class ChangeKind(models.TextChoices):
    TRANSFER = "transfer", _("Transfer (HAV-05)")
    WILL = "will", _("Will on death (HAV-05)")
    FORSAKE = "forsake", _("Forsake (HAV-06)")
    ABSENCE = "absence", _("Forsaken after absence (HAV-06)")
    THEFT = "theft", _("Theft (HAV-07)")
    DESTROY_CRYPT = "destroy_crypt", _("Crypt destroyed by the outer haven's owners (HAV-03)")


class ChangeStatus(models.TextChoices):
    PENDING = "pending", _("Pending (takes effect in downtime)")
    APPLIED = "applied", _("Applied")
    CANCELLED = "cancelled", _("Cancelled")
    VOID = "void", _("Void (no longer possible)")


class OwnershipChange(models.Model):
    """HAV-05..07 / HAV-03: a change of owners or a destruction asked for now and applied by
    the downtime's resolution (`cycle`). Applying is guarded by the status, so a re-run
    applies it once."""

    structure = models.ForeignKey(Structure, on_delete=models.PROTECT, related_name="changes")
    kind = models.CharField(max_length=16, choices=ChangeKind.choices)
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="+")
    from_character = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    to_character = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # The recipient as the player named them in words (like Search.target_name); the service
    # or an ST links `to_character`.
    to_name = models.CharField(max_length=120, blank=True)
    status = models.CharField(
        max_length=10, choices=ChangeStatus.choices, default=ChangeStatus.PENDING
    )
    note = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    requested_at = models.DateTimeField()
    applied_at = models.DateTimeField(null=True, blank=True)
    outcome = models.TextField(blank=True)

    class Meta:
        ordering = ["requested_at", "pk"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.structure}"


class CryptVote(models.Model):
    """HAV-03: one owner of the outer haven in favour of destroying a crypt inside it."""

    crypt = models.ForeignKey(Structure, on_delete=models.PROTECT, related_name="crypt_votes")
    voter = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["crypt", "voter", "cycle"], name="crypt_vote_once"),
        ]

    def __str__(self) -> str:
        return f"{self.voter} votes to destroy {self.crypt}"


class AttributeState(models.TextChoices):
    ACTIVE = "active", _("Working")
    DESTROYED = "destroyed", _("Destroyed (needs repair)")
    BREACHED = "breached", _("Breached (needs repair)")
    INOPERATIVE = "inoperative", _("Inoperative after a theft (HAV-07)")


class AlarmTrigger(models.TextChoices):
    ATTACK = "attack", _("Physical attack")
    PENETRATION = "penetration", _("Physical penetration")
    FAILED_LOCK = "failed_lock", _("Failed opening of the two-way locks")


class AlarmEffect(models.TextChoices):
    AUDIBLE = "audible", _("Audible")
    SILENT = "silent", _("Silent")
    WAKE = "wake", _("Wake a Possessor or Projector")
    PAGE = "page", _("Page characters")


@tracked("AttributeHistory")
class Attribute(models.Model):
    """HAV-10..22: a built attribute of a structure. Countable kinds (alarm, exit, camera,
    locks ...) have one row per unit with quantity 1, so each lock can be destroyed and
    repaired on its own; influence resistance and reinforcement have one row each holding
    their points, which attacks lower. `cost` is what it cost to build (HAV-24 repairs)."""

    structure = models.ForeignKey(Structure, on_delete=models.PROTECT, related_name="attributes")
    kind = models.CharField(max_length=24, choices=ATTRIBUTE_CHOICES)
    quantity = models.PositiveIntegerField(default=1)
    cost = models.PositiveIntegerField()
    state = models.CharField(
        max_length=12, choices=AttributeState.choices, default=AttributeState.ACTIVE
    )
    trigger = models.CharField(max_length=12, choices=AlarmTrigger.choices, blank=True)
    effect = models.CharField(max_length=8, choices=AlarmEffect.choices, blank=True)
    note = models.CharField(max_length=200, blank=True)
    built_cycle = models.ForeignKey(
        Cycle, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["kind", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="alarm", trigger__gt="", effect__gt="")
                | (~Q(kind="alarm") & Q(trigger="", effect="")),
                name="attribute_alarm_trigger_effect",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.structure}"

    @property
    def needs_repair(self) -> bool:
        return rules.needs_repair(self.kind, self.state)


class ProjectKind(models.TextChoices):
    ATTRIBUTE = "attribute", _("Add an attribute")
    REPAIR = "repair", pgettext_lazy("haven project", "Repair")


class ProjectStatus(models.TextChoices):
    OPEN = "open", _("Collecting contributions")
    PAID = "paid", _("Fully paid (takes effect in downtime)")
    DONE = "done", _("Done")
    CANCELLED = "cancelled", _("Cancelled")


@tracked("ProjectHistory")
class Project(models.Model):
    """A purchase for a structure paid in influence, possibly over several cycles and by
    several contributors: an attribute to add or a repair. It takes effect in the downtime in
    which it is fully paid (construction step). The first contribution to a planned structure
    makes its contributor the exclusive owner (HAV-02)."""

    structure = models.ForeignKey(Structure, on_delete=models.PROTECT, related_name="projects")
    kind = models.CharField(max_length=10, choices=ProjectKind.choices)
    attribute_kind = models.CharField(max_length=24, choices=ATTRIBUTE_CHOICES, blank=True)
    quantity = models.PositiveIntegerField(default=1)
    trigger = models.CharField(max_length=12, choices=AlarmTrigger.choices, blank=True)
    effect = models.CharField(max_length=8, choices=AlarmEffect.choices, blank=True)
    repair_of = models.ForeignKey(
        Attribute, on_delete=models.PROTECT, null=True, blank=True, related_name="repairs"
    )
    cost = models.PositiveIntegerField()
    paid = models.PositiveIntegerField(default=0)
    status = models.CharField(
        max_length=10, choices=ProjectStatus.choices, default=ProjectStatus.OPEN
    )
    requested_by = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()
    paid_cycle = models.ForeignKey(
        Cycle, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # Why a paid project did not take effect (HAV-23: its structure's crypts or outer haven
    # forbid it since it was ordered); the storytellers settle it.
    held_reason = models.CharField(max_length=300, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    done_cycle = models.ForeignKey(
        Cycle, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.CheckConstraint(condition=Q(paid__lte=models.F("cost")), name="project_paid"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.attribute_kind} on {self.structure}"


class Contribution(models.Model):
    """One character's influence towards a project in a cycle; each is an influence spend of
    that cycle (INF-03)."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="contributions")
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="+")
    influence = models.CharField(max_length=16, choices=INFLUENCE_CHOICES)
    points = models.PositiveIntegerField()
    spend = models.OneToOneField(InfluenceSpend, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.points} {self.influence} from {self.character}"


class SearchMoment(models.TextChoices):
    DOWNTIME = "downtime", _("In downtime (results at the next game)")
    GAME = "game", _("At the game (results at once)")


class SearchStatus(models.TextChoices):
    SUBMITTED = "submitted", _("Submitted")
    WITHDRAWN = "withdrawn", _("Withdrawn")
    RESOLVED = "resolved", _("Resolved")


class Search(models.Model):
    """HAV-25b: a search for the havens of `target`. The searchers in one search cooperate and
    sum their spends; searchers who do not cooperate file separate searches. Others join by
    the `party_code` its first searcher shares with them in play."""

    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="haven_searches")
    # A player names the target in words: other characters are not theirs to look up, so the
    # answer must be the same whether the name matches anyone. The service links `target` to
    # the one active character of that exact name, or an ST links it on the desk.
    target_name = models.CharField(max_length=120)
    target = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    moment = models.CharField(
        max_length=8, choices=SearchMoment.choices, default=SearchMoment.DOWNTIME
    )
    party_code = models.CharField(max_length=16, unique=True)
    status = models.CharField(
        max_length=10, choices=SearchStatus.choices, default=SearchStatus.SUBMITTED
    )
    created_by = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    # For STs: why a resolved search tested nothing (no target linked, nobody left).
    explanation = models.CharField(max_length=300, blank=True)
    # Downtime results reach the searchers at the next game (HAV-25b); game ones at once.
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"Search for {self.target_name}'s havens"


class Searcher(models.Model):
    search = models.ForeignKey(Search, on_delete=models.PROTECT, related_name="searchers")
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    influence = models.CharField(max_length=16, choices=INFLUENCE_CHOICES)
    points = models.PositiveIntegerField()
    spend = models.OneToOneField(InfluenceSpend, on_delete=models.PROTECT, related_name="+")
    joined_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["search", "character"], name="searcher_once"),
        ]

    def __str__(self) -> str:
        return f"{self.character} in {self.search}"


class SearchResult(models.Model):
    """One structure a search tested, with the numbers (staff only) and the outcome. Unique
    per search and structure, so resolving twice gives one result."""

    search = models.ForeignKey(Search, on_delete=models.PROTECT, related_name="results")
    structure = models.ForeignKey(Structure, on_delete=models.PROTECT, related_name="+")
    spent = models.PositiveIntegerField()
    hiding_points = models.PositiveIntegerField()
    found = models.BooleanField()
    explanation = models.CharField(max_length=300)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["search", "structure"], name="search_result_once"),
        ]

    def __str__(self) -> str:
        return f"{self.search}: {'found' if self.found else 'not found'}"


class Find(models.Model):
    """A character knows where a structure is (HAV-25b). Cleared when a mobile haven moves
    (each downtime), or when the structure is destroyed."""

    structure = models.ForeignKey(Structure, on_delete=models.PROTECT, related_name="finds")
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    result = models.ForeignKey(
        SearchResult, on_delete=models.PROTECT, null=True, blank=True, related_name="finds"
    )
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="+")
    found_at = models.DateTimeField()
    cleared_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["structure", "character"],
                condition=Q(cleared_at__isnull=True),
                name="find_current_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.character} found {self.structure}"


class AttackStatus(models.TextChoices):
    SUBMITTED = "submitted", _("Submitted")
    WITHDRAWN = "withdrawn", _("Withdrawn")
    RESOLVED = "resolved", _("Resolved")


class InfluenceAttack(models.Model):
    """HAV-25c: a downtime influence attack on a structure the attacker has found."""

    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="haven_attacks")
    attacker = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    structure = models.ForeignKey(
        Structure, on_delete=models.PROTECT, related_name="influence_attacks"
    )
    influence = models.CharField(max_length=16, choices=INFLUENCE_CHOICES)
    points = models.PositiveIntegerField()
    spend = models.OneToOneField(InfluenceSpend, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(
        max_length=10, choices=AttackStatus.choices, default=AttackStatus.SUBMITTED
    )
    created_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    resistance_before = models.PositiveIntegerField(null=True, blank=True)
    resistance_after = models.PositiveIntegerField(null=True, blank=True)
    destroyed = models.BooleanField(null=True, blank=True)
    explanation = models.CharField(max_length=300, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.attacker} attacks {self.structure}"


class ReinforcementAttack(models.Model):
    """HAV-26: a physical attack on a structure's reinforcement, recorded by an ST at a game:
    the attackers' Potence, the bid, the reinforcement then, each 5-minute test's result
    (oldest first) and whether it was penetrated."""

    structure = models.ForeignKey(
        Structure, on_delete=models.PROTECT, related_name="reinforcement_attacks"
    )
    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="+")
    # [{"character": id or null, "name": "...", "potence": 0..5}]
    attackers = models.JSONField(default=list)
    bid = models.PositiveIntegerField()
    reinforcement = models.PositiveIntegerField()
    results = models.JSONField(default=list)
    penetrated = models.BooleanField()
    note = models.TextField(blank=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()
    key = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["-recorded_at", "-pk"]

    def __str__(self) -> str:
        return f"Attack of bid {self.bid} on {self.structure}"


class AlarmFiring(models.Model):
    """An alarm that went off (HAV-10), shown to the structure's owners."""

    alarm = models.ForeignKey(Attribute, on_delete=models.PROTECT, related_name="firings")
    game = models.ForeignKey(
        Game, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    cause = models.CharField(max_length=12, choices=AlarmTrigger.choices)
    reinforcement_attack = models.ForeignKey(
        ReinforcementAttack, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    note = models.CharField(max_length=300, blank=True)
    fired_at = models.DateTimeField()
    # Set when the firing comes from a keyed record (a lock test), so a re-send fires once.
    key = models.CharField(max_length=120, blank=True)

    class Meta:
        ordering = ["-fired_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["alarm", "key"], condition=~Q(key=""), name="alarm_firing_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.alarm} fired"


class LockTest(models.Model):
    """HAV-16: one static test against a two-way lock at a game, recorded by an ST (the
    attacker wins ties): who won, and whether a beaten lock was bypassed or destroyed."""

    lock = models.ForeignKey(Attribute, on_delete=models.PROTECT, related_name="lock_tests")
    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="+")
    attacker_won = models.BooleanField()
    outcome = models.CharField(max_length=8, blank=True)  # "bypass" / "destroy" when won
    penetrated = models.BooleanField(default=False)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()
    key = models.CharField(max_length=120, unique=True)

    class Meta:
        ordering = ["-recorded_at", "-pk"]

    def __str__(self) -> str:
        return f"Lock test on {self.lock}"


class TheftControl(models.Model):
    """HAV-07: at this game, these thieves controlled the structure (recorded by an ST)."""

    structure = models.ForeignKey(Structure, on_delete=models.PROTECT, related_name="thefts")
    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="+")
    thieves = models.ManyToManyField(Character, related_name="+")
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["structure", "game"], name="theft_control_once"),
        ]

    def __str__(self) -> str:
        return f"{self.structure} held by thieves at {self.game}"


class HiddenObject(models.Model):
    """HID-01: an object hidden on site, registered at the influence desk."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.PROTECT, related_name="+")
    game = models.ForeignKey(
        Game, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    hider = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    description = models.CharField(max_length=300)
    place = models.CharField(max_length=300, blank=True)
    obfuscate_bid = models.PositiveIntegerField()
    number = models.PositiveSmallIntegerField()
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    registered_at = models.DateTimeField()
    found_by = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    found_at = models.DateTimeField(null=True, blank=True)
    removed_at = models.DateTimeField(null=True, blank=True)
    # The register form's token: a double submit registers one object.
    key = models.CharField(max_length=120, blank=True)

    class Meta:
        ordering = ["number", "registered_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(number__gte=1) & Q(number__lte=10), name="hidden_object_number"
            ),
            models.UniqueConstraint(
                fields=["chronicle", "key"], condition=~Q(key=""), name="hidden_object_key"
            ),
        ]

    def __str__(self) -> str:
        return f"Hidden object {self.number}"


class HiddenObjectSearch(models.Model):
    """HID-02: an Auspex search of one number; `results` holds, per object tested, the bids
    and whether the searcher won the test (the ST records it)."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.PROTECT, related_name="+")
    game = models.ForeignKey(
        Game, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    searcher = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    number = models.PositiveSmallIntegerField()
    bid = models.PositiveIntegerField()
    results = models.JSONField(default=list)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()
    key = models.CharField(max_length=120)

    class Meta:
        ordering = ["-recorded_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["chronicle", "key"], name="hidden_search_key"),
        ]

    def __str__(self) -> str:
        return f"{self.searcher} searched {self.number}"
