from __future__ import annotations

import zoneinfo
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone as django_timezone
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from . import rules
from .tracking import tracked


def validate_timezone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(
            _("%(value)s is not a time zone name such as America/New_York.")
            % {"value": repr(value)}
        )


def validate_house_rules(value: Any) -> None:
    if not isinstance(value, dict):
        raise ValidationError(_("House rules must be a mapping of setting names to values."))
    try:
        rules.house_rules_from(value)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc


def validate_house_rule_schedule(value: Any) -> None:
    """GEN-05: a list of published changes, each naming a known setting and a game."""
    if not isinstance(value, list):
        raise ValidationError(_("The schedule of rule changes must be a list."))
    for change in value:
        if (
            not isinstance(change, dict)
            or change.get("name") not in rules.HOUSE_RULE_FIELDS
            or not isinstance(change.get("effective_game"), int)
            or not isinstance(change.get("effective_on"), str)
        ):
            raise ValidationError(
                _("%(change)s is not a rule change of this chronicle.") % {"change": repr(change)}
            )
        if not change.get("default"):
            validate_house_rules({change["name"]: change.get("value")})


@tracked("ChronicleHistory")
class Chronicle(models.Model):
    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=60, unique=True)
    timezone = models.CharField(
        max_length=64, default="America/New_York", validators=[validate_timezone]
    )
    # Only the settings the STs changed; `house_rules` merges them over SPEC's defaults.
    house_rule_overrides = models.JSONField(
        default=dict, blank=True, validators=[validate_house_rules]
    )
    # GEN-05: the published changes that take effect from a later game, in the order they
    # apply: [{name, value, default, effective_game, effective_on}] (`default`: back to the
    # rules' default; `effective_on`: that game's date, kept in step by `game_update`). Kept
    # here, not only in HouseRuleChange, so that reading the settings in force costs no query.
    house_rule_schedule = models.JSONField(
        default=list, blank=True, validators=[validate_house_rule_schedule]
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.timezone)

    @property
    def house_rules(self) -> rules.HouseRules:
        """The settings in force today (GEN-05): the base overrides and every published change
        whose game has been played (dated today or earlier in the chronicle's zone)."""
        schedule = self.house_rule_schedule or []
        if not schedule:
            return rules.house_rules_from(self.house_rule_overrides)
        today = django_timezone.now().astimezone(self.tz).date().isoformat()
        return rules.house_rules_from(
            self._overrides_with(e for e in schedule if e["effective_on"] <= today)
        )

    def house_rules_for(self, game: Game | Cycle | int | None) -> rules.HouseRules:
        """The settings in force for a game (or a game's cycle, or a game number) (GEN-05):
        the base overrides and every change published to take effect from that game or an
        earlier one. None: the settings in force today. No query unless a change is scheduled
        and `game` is a cycle whose game is not loaded yet."""
        schedule = self.house_rule_schedule or []
        if game is None:
            return self.house_rules
        if not schedule:
            return rules.house_rules_from(self.house_rule_overrides)
        if isinstance(game, int):
            number = game
        elif isinstance(game, Cycle):
            number = game.game.number
        else:
            number = game.number
        return rules.house_rules_from(
            self._overrides_with(e for e in schedule if e["effective_game"] <= number)
        )

    def _overrides_with(self, changes: Iterable[dict[str, Any]]) -> dict[str, Any]:
        """The base overrides with `changes` applied in order."""
        merged = dict(self.house_rule_overrides or {})
        for change in changes:
            if change.get("default"):
                merged.pop(change["name"], None)
            else:
                merged[change["name"]] = change["value"]
        return merged


class Role(models.TextChoices):
    PLAYER = "player", _("Player")
    STORYTELLER = "storyteller", _("Storyteller")
    ADMIN = "admin", _("Admin")


@tracked("MembershipHistory")
class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.PLAYER)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "chronicle"], name="one_membership_per_user"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_known"),
        ]
        ordering = ["chronicle", "role", "user__username"]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.chronicle}"


@tracked("GameHistory", exclude=["updated_at"])
class Game(models.Model):
    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="games")
    number = models.PositiveIntegerField()
    date = models.DateField()
    start_time = models.TimeField(null=True, blank=True)
    place = models.CharField(max_length=200, blank=True)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["chronicle", "number"], name="game_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="game_number_positive"),
        ]
        ordering = ["chronicle", "date", "number"]

    def __str__(self) -> str:
        # Messages name a game through this, so it reads in the language of the page.
        return _("Game %(number)s (%(date)s)") % {
            "number": self.number,
            "date": self.date.isoformat(),
        }


class Attendance(models.Model):
    """GEN-01 / DT-04: who came to a game and whether they signed that game's waiver."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="attendances")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attendances"
    )
    waiver_signed = models.BooleanField(default=False)
    # HAV-06: the character the player played that night (the sign-in sheet's column; by
    # default their only active PC). Older rows have none: see havens' forsaking for how they
    # count. Named by string, so this ground-floor app imports nothing above it.
    character = models.ForeignKey(
        "characters.Character",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="attendances",
    )
    # XP-04: the storyteller who let this character in with black veins showing, for this game.
    black_veins_permitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "player"], name="attend_game_once"),
            models.CheckConstraint(
                condition=Q(black_veins_permitted_by__isnull=True) | Q(character__isnull=False),
                name="attend_veins_permit_names_character",
            ),
        ]
        ordering = ["game", "player__username"]

    def __str__(self) -> str:
        return f"{self.player} at {self.game}"


class CycleStatus(models.TextChoices):
    OPEN = "open", pgettext_lazy("downtime", "Open")
    CLOSED = "closed", pgettext_lazy("downtime", "Closed")
    RESOLVED = "resolved", pgettext_lazy("downtime", "Resolved (preview)")
    RELEASED = "released", pgettext_lazy("downtime", "Released")


class Cycle(models.Model):
    """The downtime period after a game (DT-01): open until its deadline, then closed,
    resolved into a preview, and released."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="cycles")
    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="cycle")
    deadline_at = models.DateTimeField(
        help_text=_("23:59 of DT-01's deadline day, chronicle time.")
    )
    status = models.CharField(
        max_length=16, choices=CycleStatus.choices, default=CycleStatus.OPEN, db_index=True
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=CycleStatus.values), name="cycle_status_known"
            ),
            models.CheckConstraint(
                condition=Q(status=CycleStatus.OPEN) | Q(closed_at__isnull=False),
                name="cycle_closed_has_time",
            ),
        ]
        ordering = ["chronicle", "deadline_at"]

    def __str__(self) -> str:
        return f"Cycle after {self.game}"

    @property
    def deadline_local(self) -> Any:
        return self.deadline_at.astimezone(self.chronicle.tz)


class CycleTransition(models.Model):
    """One row per status a cycle entered: the audit trail, and the proof that a transition
    happened once (two workers closing the same cycle cannot both insert)."""

    cycle = models.ForeignKey(Cycle, on_delete=models.CASCADE, related_name="transitions")
    status = models.CharField(max_length=16, choices=CycleStatus.choices)
    at = models.DateTimeField()
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("Empty when the deadline task closed the cycle."),
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cycle", "status"], name="cycle_transition_once"),
        ]
        ordering = ["cycle", "at"]

    def __str__(self) -> str:
        return f"{self.cycle} became {self.status} at {self.at:%Y-%m-%d %H:%M}"


@tracked("HouseRuleChangeHistory")
class HouseRuleChange(models.Model):
    """GEN-05: one published change of a house-rule setting, the record of who changed what
    and from which game. A change takes effect from `effective_game`, after the game it was
    published before (`published_game`, the next game then). Both are empty for a change that
    applied at once: before the first game, or a correction "now" (`reason` names the GEN-03
    decision). The schedule the services read is `Chronicle.house_rule_schedule`."""

    chronicle = models.ForeignKey(
        Chronicle, on_delete=models.CASCADE, related_name="house_rule_changes"
    )
    name = models.CharField(max_length=80)
    value = models.JSONField(null=True, blank=True)
    to_default = models.BooleanField(default=False)
    published_game = models.PositiveIntegerField(null=True, blank=True)
    effective_game = models.PositiveIntegerField(null=True, blank=True)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField()
    reason = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["chronicle", "-at", "-pk"]
        indexes = [models.Index(fields=["chronicle", "-at"], name="house_rule_change_by_time")]

    def __str__(self) -> str:
        when = f"from game {self.effective_game}" if self.effective_game else "at once"
        return f"{self.name} in {self.chronicle_id} {when}"


class Invitation(models.Model):
    """A link, e-mailed to one address, that lets its holder join a chronicle with a role.

    Only the token's SHA-256 is stored: the link itself exists in the e-mail alone. A link is
    single-use and expires; resending issues a new link and the old one stops working.
    `placeholder` is set when an import named a player who has no account yet: the inactive
    user that already holds their characters and ledger, which becomes the person's account
    when they accept. Such an invitation may wait without an address until staff add one."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField(blank=True)
    name = models.CharField(max_length=150, blank=True)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.PLAYER)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    placeholder = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    send_count = models.PositiveIntegerField(default=0)
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    renewal_requested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(role__in=Role.values), name="invitation_role_known"),
            # One open invitation per address and chronicle: inviting again renews it.
            models.UniqueConstraint(
                Lower("email"),
                "chronicle",
                condition=Q(accepted_at__isnull=True, revoked_at__isnull=True) & ~Q(email=""),
                name="one_open_invitation_per_address",
            ),
        ]
        ordering = ["chronicle", "-created_at"]

    def __str__(self) -> str:
        return f"Invitation of {self.email or self.name} to {self.chronicle} ({self.role})"

    def status(self, now: Any) -> str:
        if self.accepted_at is not None:
            return "accepted"
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= now:
            return "expired"
        if not self.email:
            return "needs_address"
        return "pending"


class MembershipEventKind(models.TextChoices):
    JOINED = "joined", _("Joined")
    ROLE_CHANGED = "role_changed", _("Role changed")
    LEFT = "left", _("Left")
    REMOVED = "removed", _("Removed")


class MembershipEvent(models.Model):
    """Who joined, changed role, left or was removed, by whom and when: memberships end, this
    history stays."""

    chronicle = models.ForeignKey(
        Chronicle, on_delete=models.CASCADE, related_name="membership_events"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership_events"
    )
    kind = models.CharField(max_length=16, choices=MembershipEventKind.choices)
    role_before = models.CharField(max_length=16, choices=Role.choices, blank=True)
    role_after = models.CharField(max_length=16, choices=Role.choices, blank=True)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField()
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=MembershipEventKind.values), name="membership_event_kind"
            ),
        ]
        ordering = ["chronicle", "at", "pk"]

    def __str__(self) -> str:
        return f"{self.user} {self.kind} in {self.chronicle} at {self.at:%Y-%m-%d %H:%M}"


class Profile(models.Model):
    """A person's own choices that are not Django's: the language of their pages and e-mails
    (blank: the browser's Accept-Language decides)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chronicle_profile"
    )
    language = models.CharField(
        _("language"), max_length=10, blank=True, choices=settings.LANGUAGES
    )
    # GEN-01: players are 18 or older on the game's date. Seen by the person and, as an age,
    # by the admins of their chronicles; never by storytellers or other players.
    birth_date = models.DateField(_("date of birth"), null=True, blank=True)
    # When the person was asked for it (on the account form, when joining, or once after
    # signing in): answered or skipped, they are not asked again.
    birth_date_asked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.user} ({self.language or 'browser'})"


class CalendarFeed(models.Model):
    """A member's private calendar address (`/c/<slug>/calendar/<token>.ics`), for phone
    calendars, which cannot log in. Renewing replaces the token: the old address stops at once.

    The token is kept as it is, not hashed (unlike an invitation's): like Google's secret iCal
    address it is a read-only, revocable view of a schedule the member already sees, and a
    member who adds a second phone must be able to read the address again on their account
    page. A hash would mean a new address, and every other device re-subscribing, each time.
    It goes with the membership: a member who leaves has no address left."""

    membership = models.OneToOneField(
        Membership, on_delete=models.CASCADE, related_name="calendar_feed"
    )
    token = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"Calendar feed of {self.membership}"


# --- Mail: the inbox, each person's choices, and the log of every e-mail (issue 17) -----------


class MailKind(models.TextChoices):
    """Every kind of mail Chronicle sends. The first group are notices a person may choose how
    to receive (an inbox message always, an e-mail at once, in a daily digest, or not);
    TRANSACTIONAL_KINDS are sent at once and never kept in an inbox: their link is a secret
    for one address, or they go to someone without an account."""

    RECEIPT = "receipt", _("Downtime receipts")
    REMINDER = "reminder", _("Downtime reminders")
    RESULTS = "results", _("Downtime results")
    CHARACTER = "character", _("Character approval")
    PURCHASE = "purchase", _("XP purchases")
    BOND = "bond", _("Blood bonds")
    TORPOR = "torpor", _("Torpor and captivity")
    BLOOD = "blood", _("Stored blood")
    DIABLERIE = "diablerie", _("Diablerie")
    ALARM = "alarm", _("Haven alarms")
    RENEWAL = "renewal", _("Requests for a new invitation")
    DECISION = "decision", _("Votes on decisions")
    OTHER = "other", _("Other notices")
    INVITATION = "invitation", _("Invitations")
    ACCOUNT = "account", _("E-mail address confirmations")
    PASSWORD_RESET = "password_reset", _("Password resets")
    DIGEST = "digest", _("Daily digest")


TRANSACTIONAL_KINDS = frozenset(
    {MailKind.INVITATION, MailKind.ACCOUNT, MailKind.PASSWORD_RESET, MailKind.DIGEST}
)
PERSONAL_KINDS = tuple(kind for kind in MailKind if kind not in TRANSACTIONAL_KINDS)


class MailChoice(models.TextChoices):
    IMMEDIATE = "immediate", _("E-mail at once")
    DIGEST = "digest", _("Daily digest")
    INBOX = "inbox", _("Inbox only")


class MailStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")
    SKIPPED = "skipped", _("Skipped")


class SkipReason(models.TextChoices):
    CHOICE = "choice", _("The recipient reads this kind in the inbox only.")
    NO_ADDRESS = "no_address", _("The recipient has no e-mail address.")


class MailPreference(models.Model):
    """How one person receives one kind of notice; no row means an e-mail at once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mail_preferences"
    )
    kind = models.CharField(max_length=32, choices=MailKind.choices)
    choice = models.CharField(
        max_length=16, choices=MailChoice.choices, default=MailChoice.IMMEDIATE
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="one_mail_preference_per_kind"),
            models.CheckConstraint(
                condition=Q(choice__in=MailChoice.values), name="mail_preference_choice_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.kind} by {self.choice}"


class MailLog(models.Model):
    """One e-mail, owed or sent: the admins' mail log, and the row the worker claims to send it.

    `body` is kept only while the mail is owed (an invitation's or a password reset's link is a
    secret that exists nowhere else once sent); the inbox keeps a notice's text. `key` makes a
    keyed mail (a notice, a day's digest) exist once; `next_attempt_at` is when the sweeper
    next looks at a row still queued (a lost task) or failed (the backoff)."""

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    address = models.EmailField(blank=True)
    chronicle = models.ForeignKey(
        Chronicle, null=True, blank=True, on_delete=models.CASCADE, related_name="mail_log"
    )
    kind = models.CharField(max_length=32, choices=MailKind.choices)
    key = models.CharField(max_length=160, null=True, blank=True, unique=True)
    subject = models.CharField(max_length=200)
    body = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=MailStatus.choices)
    reason = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=MailStatus.values), name="mail_log_status_known"
            ),
        ]
        indexes = [
            models.Index(fields=["chronicle", "-created_at"], name="mail_log_by_chronicle"),
            models.Index(
                fields=["next_attempt_at"],
                condition=Q(status__in=["queued", "failed"]),
                name="mail_log_owed",
            ),
        ]
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.kind} to {self.address or self.recipient_id} ({self.status})"

    @property
    def reason_text(self) -> str:
        if self.status == MailStatus.SKIPPED and self.reason in SkipReason.values:
            return str(SkipReason(self.reason).label)
        return self.reason


class Message(models.Model):
    """A notice in its recipient's inbox: every notice Chronicle sends is one, whatever became
    of its e-mail, so a mail lost to a spam filter is still read. `delivery` is the recipient's
    choice when it arrived (a later change does not move it into or out of a digest)."""

    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="inbox_messages"
    )
    chronicle = models.ForeignKey(
        Chronicle, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    kind = models.CharField(max_length=32, choices=MailKind.choices)
    key = models.CharField(max_length=160, unique=True)
    subject = models.CharField(max_length=200)
    body = models.TextField()
    delivery = models.CharField(max_length=16, choices=MailChoice.choices)
    created_at = models.DateTimeField()
    read_at = models.DateTimeField(null=True, blank=True)
    digest = models.ForeignKey(
        MailLog,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="digest_messages",
        help_text=_("The daily digest that carried this message."),
    )

    class Meta:
        indexes = [
            models.Index(fields=["recipient", "-created_at"], name="message_inbox"),
            models.Index(
                fields=["recipient"],
                condition=Q(read_at__isnull=True),
                name="message_unread",
            ),
            models.Index(
                fields=["recipient", "created_at"],
                condition=Q(delivery="digest", digest__isnull=True),
                name="message_digest_owed",
            ),
        ]
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.subject} (to {self.recipient_id})"


# --- Governance: decisions by two thirds (GEN-03 / GEN-04, issue 14) -------------------------


class DecisionBody(models.TextChoices):
    """Who votes: every current storyteller (GEN-03) or every current player (GEN-04)."""

    STORYTELLERS = "storytellers", _("Storytellers")
    PLAYERS = "players", _("Players")


class DecisionKind(models.TextChoices):
    ADD_STORYTELLER = "add_storyteller", _("Make a member a storyteller")
    REMOVE_STORYTELLER = "remove_storyteller", _("Remove a storyteller")
    REMOVE_PLAYER = "remove_player", _("Remove a player")
    SETTING_NOW = "setting_now", _("Correct a house-rule setting now")
    OTHER = "other", _("Another storytellers' decision")


class DecisionStatus(models.TextChoices):
    OPEN = "open", pgettext_lazy("decision", "Open")
    PASSED = "passed", pgettext_lazy("decision", "Passed")
    FAILED = "failed", pgettext_lazy("decision", "Failed")


class DecisionEffect(models.TextChoices):
    """What became of a decision's effect, recorded once when it closes."""

    NONE = "", _("No effect")
    APPLIED = "applied", _("Applied")
    NOT_APPLIED = "not_applied", _("Could not be applied")


class Proposal(models.Model):
    """A decision put to a vote (GEN-03 / GEN-04). The count of eligible voters and the tally are
    frozen when it closes, over everyone eligible then (not only those who voted); a passed
    proposal's effect is applied once, by the service that closes it, and what became of it is
    kept (`effect`, `effect_note`)."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="proposals")
    body = models.CharField(max_length=16, choices=DecisionBody.choices)
    kind = models.CharField(max_length=24, choices=DecisionKind.choices)
    # The member the decision is about (adding or removing); kept if they leave.
    target = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    setting_name = models.CharField(max_length=64, blank=True)
    setting_value = models.JSONField(null=True, blank=True)
    text = models.TextField(blank=True)
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    opened_at = models.DateTimeField()
    closes_at = models.DateTimeField()
    status = models.CharField(
        max_length=16, choices=DecisionStatus.choices, default=DecisionStatus.OPEN
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    yes_count = models.PositiveIntegerField(null=True, blank=True)
    no_count = models.PositiveIntegerField(null=True, blank=True)
    eligible_count = models.PositiveIntegerField(null=True, blank=True)
    effect = models.CharField(
        max_length=16, choices=DecisionEffect.choices, default=DecisionEffect.NONE, blank=True
    )
    effect_note = models.TextField(blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(body__in=DecisionBody.values), name="proposal_body_known"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=DecisionKind.values), name="proposal_kind_known"
            ),
            models.CheckConstraint(
                condition=Q(status__in=DecisionStatus.values), name="proposal_status_known"
            ),
            # GEN-04: the players' only decisions are removals.
            models.CheckConstraint(
                condition=~Q(body="players") | Q(kind__in=["remove_storyteller", "remove_player"]),
                name="proposal_players_remove_only",
            ),
            models.CheckConstraint(
                condition=Q(status="open")
                | Q(
                    closed_at__isnull=False,
                    yes_count__isnull=False,
                    no_count__isnull=False,
                    eligible_count__isnull=False,
                ),
                name="proposal_closed_has_tally",
            ),
        ]
        indexes = [
            models.Index(
                fields=["closes_at"], condition=Q(status="open"), name="proposal_open_due"
            ),
        ]
        ordering = ["chronicle", "-opened_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.body}) in {self.chronicle}"

    @property
    def is_open(self) -> bool:
        return self.status == DecisionStatus.OPEN

    @property
    def target_name(self) -> str:
        if self.target is None:
            return str(_("a former member"))
        return self.target.get_full_name() or self.target.get_username()

    @property
    def summary(self) -> str:
        """What is decided, in a line a member reads (the list, the e-mails, the page title)."""
        if self.kind == DecisionKind.ADD_STORYTELLER:
            return _("Make %(name)s a storyteller") % {"name": self.target_name}
        if self.kind == DecisionKind.REMOVE_STORYTELLER:
            return _("Remove %(name)s as a storyteller") % {"name": self.target_name}
        if self.kind == DecisionKind.REMOVE_PLAYER:
            return _("Remove %(name)s from the chronicle") % {"name": self.target_name}
        if self.kind == DecisionKind.SETTING_NOW:
            spec = rules.HOUSE_RULE_FIELDS.get(self.setting_name)
            label = gettext(spec.metadata["label"]) if spec else self.setting_name
            value = self.setting_value
            shown = (_("yes") if value else _("no")) if isinstance(value, bool) else value
            return _("Set “%(setting)s” to %(value)s now") % {"setting": label, "value": shown}
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        return first if len(first) <= 80 else first[:79] + "…"


class Ballot(models.Model):
    """One voter's vote on one proposal: secret from the others while the vote is open. A voter
    may change it until the close (the row is updated, `cast_at` moves); `counted` is set at
    the close: whether the voter was still eligible then."""

    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="ballots")
    voter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    yes = models.BooleanField()
    cast_at = models.DateTimeField()
    counted = models.BooleanField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["proposal", "voter"], name="ballot_once_per_voter"),
        ]
        ordering = ["proposal", "cast_at", "pk"]

    def __str__(self) -> str:
        return f"Ballot of {self.voter_id} on proposal {self.proposal_id}"
