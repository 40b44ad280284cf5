from __future__ import annotations

import zoneinfo
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from . import rules


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
        return rules.house_rules_from(self.house_rule_overrides)


class Role(models.TextChoices):
    PLAYER = "player", _("Player")
    STORYTELLER = "storyteller", _("Storyteller")
    ADMIN = "admin", _("Admin")


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
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "player"], name="attend_game_once"),
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
