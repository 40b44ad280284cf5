"""Downtimes (DT-01..09): one submission per character and cycle with its six sections (DT-02),
the influence desk's items, votes and the game reports the STs pick.

Every influence action, special power, XP purchase and at-game request of a cycle is a
`DeskItem`, so the storytellers' queue is one table (filters, counts and bulk changes stay
set-based). What the player typed lives on the item; what the STs do with it (status,
assignee, private notes, the result released later) lives beside it, and `version` guards
two STs changing one item at once.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from characters.models import INFLUENCE_CHOICES, Character, InfluenceSpend, XpPurchase
from chronicle.models import Cycle
from chronicle.tracking import tracked
from havens.models import InfluenceAttack, Project, Search, Structure

from . import rules, wording


class SubmissionStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    SUBMITTED = "submitted", _("Submitted")


@tracked("SubmissionHistory", exclude=["updated_at", "version"])
class Submission(models.Model):
    """DT-02: a character's downtime for one cycle. Sections 1 (who you are) come from the
    account and the character; 2-4 are desk items; 5 is `game_report`; 6 the votes. A draft
    saves as the player types; submitting may be repeated until the deadline (DT-01)."""

    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="submissions")
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="submissions")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="submissions"
    )
    status = models.CharField(
        max_length=10, choices=SubmissionStatus.choices, default=SubmissionStatus.DRAFT
    )
    # Section 1's free text (the rest is read from the account and the character).
    notes = models.TextField(blank=True)
    # Section 5, kept apart from the rest (DT-05: the STs may publish a sanitized copy).
    game_report = models.TextField(blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    receipt_sent_at = models.DateTimeField(null=True, blank=True)
    reminder_sent_at = models.DateTimeField(null=True, blank=True)
    # Bumped by every save: a stale tab's autosave is told, not silently overwritten.
    version = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["cycle", "character__name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["cycle", "character"], name="submission_once"),
            models.CheckConstraint(
                condition=Q(status="draft") | Q(submitted_at__isnull=False),
                name="submission_submitted_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.character} downtime, {self.cycle}"


class ItemKind(models.TextChoices):
    INFLUENCE = "influence", _("Influence use")
    PURCHASE = "purchase", _("XP purchase")
    POWER = "power", _("Special power")
    AT_GAME = "at_game", _("Request at the game")


class ActionKind(models.TextChoices):
    """INF-02 / issue 5: what an influence action does."""

    BUILD = "build", _("Contribute to building or upgrading a haven")
    REPAIR = "repair", _("Repair a haven")
    SEARCH = "search", _("Search for a character's havens")
    ATTACK_HAVEN = "attack_haven", _("Attack a found haven")
    ATTACK_INFLUENCE = "attack_influence", _("Attack another's influence")
    INVESTIGATE = "investigate", _("Investigate")
    ACQUIRE = "acquire", _("Acquire an item")
    HERD = "herd", _("Herd blood")
    RESEARCH = "research", _("Occult research")
    LEAVE_CITY = "leave_city", _("Leave the city (INF-04)")
    OTHER = "other", _("Other")


class PowerKind(models.TextChoices):
    """DIS-09: the special powers a downtime may use; only these three may touch another
    character (conditioning, regnant requests BND-09, torpor holds TOR-01)."""

    RITUAL = "ritual", _("Ritual")
    CONDITIONING = "conditioning", _("Conditioning (3 nights)")
    REGNANT_REQUEST = "regnant_request", _("Request to a thrall (BND-09)")
    TORPOR_HOLD = "torpor_hold", _("Keep a character in torpor (TOR-01)")
    OTHER = "other", _("Other power")


class DeskStatus(models.TextChoices):
    NEW = "new", _("New")
    IN_PROGRESS = "in_progress", _("In progress")
    NEEDS_INFO = "needs_info", _("Needs information")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    RESOLVED = "resolved", _("Resolved")


@tracked("DeskItemHistory", exclude=["updated_at", "version"])
class DeskItem(models.Model):
    """One line of the influence desk (issue 5): an influence action, an XP purchase, a special
    power or an at-game request of a cycle. Player-facing fields first, then the STs'."""

    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="desk_items")
    kind = models.CharField(max_length=10, choices=ItemKind.choices)
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="desk_items")
    submission = models.ForeignKey(
        Submission, on_delete=models.PROTECT, null=True, blank=True, related_name="items"
    )
    # Influence use (INF-02/03): type, points and what it does.
    influence = models.CharField(max_length=16, choices=INFLUENCE_CHOICES, blank=True)
    points = models.PositiveIntegerField(default=0)
    action = models.CharField(max_length=20, choices=ActionKind.choices, blank=True)
    power = models.CharField(max_length=20, choices=PowerKind.choices, blank=True)
    # Targets: another character named in words (linked by the service or an ST, never shown
    # whether it matched), a structure of the player's own or found, or free text.
    target_name = models.CharField(max_length=120, blank=True)
    target_character = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    target_structure = models.ForeignKey(
        Structure, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    target_text = models.CharField(max_length=300, blank=True)
    description = models.TextField(blank=True)
    # Borrowed points name their lender, who confirms from their own downtime (INF-03).
    lender = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # What the item did when it was filed: its spend and the havens object it made.
    spend = models.OneToOneField(
        InfluenceSpend, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    purchase = models.OneToOneField(
        XpPurchase, on_delete=models.PROTECT, null=True, blank=True, related_name="desk_item"
    )
    haven_project = models.ForeignKey(
        Project, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    haven_search = models.ForeignKey(
        Search, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    haven_attack = models.OneToOneField(
        InfluenceAttack, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # At-game requests (INF-04): recorded by an ST with the time stamp.
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    requested_at = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    key = models.CharField(max_length=120)

    # The storytellers' side: never shown to players but `result` once released.
    status = models.CharField(max_length=12, choices=DeskStatus.choices, default=DeskStatus.NEW)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    st_notes = models.TextField(blank=True)
    result = models.TextField(blank=True)
    released_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField()
    version = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [
            models.Index(fields=["cycle", "status"]),
            models.Index(fields=["cycle", "kind"]),
            # The desk reads a cycle's first 50 items in this order and stops (issue 15).
            models.Index(fields=["cycle", "created_at", "id"], name="desk_item_queue_order"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["character", "key"], name="desk_item_key"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.character}"


# DT-06's categories (rules.CATEGORIES) as the ballot and the tally name them.
VOTE_CATEGORY_LABELS = {
    "feared": pgettext_lazy("vote category", "Feared"),
    "liked": pgettext_lazy("vote category", "Liked"),
    "respected": pgettext_lazy("vote category", "Respected"),
    "roleplaying": pgettext_lazy("vote category", "Roleplaying"),
    "costume": pgettext_lazy("vote category", "Costume"),
}


class Vote(models.Model):
    """DT-06: one pick of a submission in one category: a character for the in-character
    categories, a player for the out-of-character ones."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="votes")
    category = models.CharField(
        max_length=12, choices=[(c, VOTE_CATEGORY_LABELS[c]) for c in rules.CATEGORIES]
    )
    nominee_character = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    nominee_player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "category"], name="vote_once"),
            models.CheckConstraint(
                condition=Q(nominee_character__isnull=False, nominee_player__isnull=True)
                | Q(nominee_character__isnull=True, nominee_player__isnull=False),
                name="vote_one_nominee",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.category} vote of {self.submission}"


class ReportPick(models.Model):
    """DT-05: a game report the STs picked (at most 4 per cycle, +3 XP each), with the
    sanitized text they may publish."""

    submission = models.OneToOneField(
        Submission, on_delete=models.PROTECT, related_name="report_pick"
    )
    cycle = models.ForeignKey(Cycle, on_delete=models.PROTECT, related_name="report_picks")
    sanitized_text = models.TextField(blank=True)
    published = models.BooleanField(default=False)
    picked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    picked_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"Report pick: {self.submission}"


# --- The between-games pipeline (DT-10) --------------------------------------------------------


class RunStatus(models.TextChoices):
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    SUPERSEDED = "superseded", _("Superseded by a later run")
    FAILED = "failed", _("Failed: a step could not be computed")


class ResolutionRun(models.Model):
    """One resolution of a cycle into a preview. The database's run records, not the broker,
    are the truth: a chunk left pending is found here by the sweeper and enqueued again."""

    cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="resolution_runs")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=12, choices=RunStatus.choices, default=RunStatus.RUNNING)
    chunk_size = models.PositiveIntegerField()
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    # The vote awards (`votes.AwardTally.to_json()`), counted once when the run starts: every
    # awards chunk reads them here instead of counting every ballot of the cycle again.
    tally = models.JSONField(null=True, blank=True, default=None)

    class Meta:
        ordering = ["cycle", "number"]
        constraints = [
            models.UniqueConstraint(fields=["cycle", "number"], name="resolution_run_number"),
            models.UniqueConstraint(
                fields=["cycle"],
                condition=Q(status="running"),
                name="one_running_resolution_per_cycle",
            ),
        ]

    def __str__(self) -> str:
        return f"Resolution {self.number} of {self.cycle}"


class ChunkStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class StepChunk(models.Model):
    """One task's share of one step: the subjects with ids in [lo, hi] (characters or players,
    by step). A chunk's outcomes and its `done` are written in one transaction, so a worker
    that dies mid-chunk leaves it pending and nothing half-written."""

    run = models.ForeignKey(ResolutionRun, on_delete=models.CASCADE, related_name="chunks")
    position = models.PositiveSmallIntegerField(help_text=_("The step's place in DT-10's order."))
    step = models.CharField(max_length=24)
    number = models.PositiveIntegerField()
    lo = models.BigIntegerField(default=0)
    hi = models.BigIntegerField(default=0)
    status = models.CharField(
        max_length=8, choices=ChunkStatus.choices, default=ChunkStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    outcomes = models.PositiveIntegerField(default=0)
    # The last failure that was not a lost connection (those retry on their own): shown to the
    # STs when the chunk gives up.
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["run", "position", "number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "step", "number"], name="step_chunk_once"),
        ]
        indexes = [models.Index(fields=["status", "enqueued_at"])]

    def __str__(self) -> str:
        return f"{self.step} chunk {self.number} of run {self.run_id}"


class Outcome(models.Model):
    """One result of the preview: what a step will do to one subject, and why. Keyed per cycle,
    step and subject, so a re-run (or a redelivered task, or two workers) writes it once, and a
    re-resolution replaces it. Nothing here changes a balance; the release applies it.

    `explanation` is for the STs (it may name hiding points and targets); `public_text` is what
    the player reads once released."""

    cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="outcomes")
    run = models.ForeignKey(ResolutionRun, on_delete=models.CASCADE, related_name="outcomes")
    step = models.CharField(max_length=24)
    subject = models.CharField(max_length=120)
    position = models.PositiveSmallIntegerField(default=0)
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    character = models.ForeignKey(
        Character, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    title = models.CharField(max_length=200)
    explanation = models.TextField()
    public_text = models.TextField(blank=True)
    # The same three texts as phrases (`downtimes.wording`): shown in the reader's language.
    texts = models.JSONField(default=dict, blank=True)
    xp = models.DecimalField(max_digits=6, decimal_places=1, null=True, blank=True)
    # What the step computed, in a canonical form: the release compares it with what applying
    # gives, and refuses a preview that no longer matches the world.
    value = models.JSONField(default=dict, blank=True)
    # Characters whose players read this outcome once released (searchers, owners, the captive).
    readers = models.JSONField(default=list, blank=True)
    overridable = models.CharField(
        max_length=8,
        blank=True,
        help_text=_("What an ST may override: 'xp', 'found', or empty for nothing."),
    )

    class Meta:
        ordering = ["cycle", "position", "subject"]
        constraints = [
            models.UniqueConstraint(fields=["cycle", "step", "subject"], name="outcome_once"),
        ]
        # The notifications step reads a chunk's players' outcomes through this index, and
        # those naming their characters in `readers` through a GIN index on it, which only
        # PostgreSQL has (created by migration 0005 there, so not declared here).
        indexes = [models.Index(fields=["cycle", "player"], name="outcome_cycle_player")]

    def __str__(self) -> str:
        return f"{self.step} {self.subject}: {self.title}"

    def text(self, name: str) -> str:
        """`title`, `explanation` or `public_text` in the active language. The English column
        is the truth: with no phrase for it (written before phrases), or one it no longer
        matches (a correction typed in the admin), the column is shown as it is."""
        column = str(getattr(self, name))
        kept = (self.texts or {}).get(name)
        if not kept:
            return column
        english = wording.english(kept).strip()
        # A title is kept cut to its column's 200 characters.
        if english != column and not (name == "title" and english[:200] == column):
            return column
        return wording.render(kept).strip()

    @property
    def localized_title(self) -> str:
        return self.text("title")

    @property
    def localized_explanation(self) -> str:
        return self.text("explanation")

    @property
    def localized_public_text(self) -> str:
        return self.text("public_text")


class OutcomeOverride(models.Model):
    """An ST's change to one outcome, with a note. Kept apart from `Outcome` so that
    re-resolving (which replaces the outcomes) keeps every override; the release applies it."""

    cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="outcome_overrides")
    step = models.CharField(max_length=24)
    subject = models.CharField(max_length=120)
    xp = models.DecimalField(max_digits=6, decimal_places=1, null=True, blank=True)
    found = models.BooleanField(null=True, blank=True)
    note = models.TextField()
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cycle", "step", "subject"], name="outcome_override_once"
            ),
        ]

    def __str__(self) -> str:
        return f"Override of {self.step} {self.subject}"


class OutcomeReader(models.Model):
    """Who reads an outcome once released: one row per outcome and player, so the results
    page is one indexed query."""

    outcome = models.ForeignKey(Outcome, on_delete=models.CASCADE, related_name="reader_rows")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["outcome", "player"], name="outcome_reader_once"),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} reads outcome {self.outcome_id}"
