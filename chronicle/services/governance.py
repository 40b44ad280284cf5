"""Decisions by two thirds (GEN-03 / GEN-04, issue 14): proposals, secret ballots, the close.

Storytellers put any storytellers' decision to every current storyteller (admins included, see
`access.VOTING_ROLES`); players put the removal of a storyteller or a player to every current
player. A proposal passes when `rules.supermajority_passes(yes, eligible)` holds over everyone
eligible when it closes, whether they voted or not. It closes at its deadline (the beat task
`proposals_close_due`, or the first page that shows it afterwards) exactly once: the close locks
the proposal's row and only an open one past its deadline is closed, so two workers, or a worker
and a page, cannot both count it. The same transaction applies a passed proposal's effect
through the people and settings services, and records what became of it.

Ballots are secret while the vote is open: a voter sees their own vote only. After the close the
tally and who voted are shown; how each person voted stays stored, never shown. A voter may
change their vote until the close (the row is updated), so a vote never closes early.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import access, rules
from ..models import (
    Ballot,
    Chronicle,
    DecisionBody,
    DecisionEffect,
    DecisionKind,
    DecisionStatus,
    MailKind,
    Membership,
    Proposal,
    Role,
)
from ..moments import moment_text
from . import people
from .mail import deliver
from .settings import REASON_MAX, house_rule_correct_now

TARGET_KINDS = frozenset(
    {DecisionKind.ADD_STORYTELLER, DecisionKind.REMOVE_STORYTELLER, DecisionKind.REMOVE_PLAYER}
)
MAX_TEXT = 2000
# A sweep closes at most this many proposals; the next minute takes the rest.
SWEEP_BATCH = 200


def _name(user: Any) -> str:
    return user.get_full_name() or user.get_username()


def _yes_no(raw: str) -> bool | None:
    word = raw.strip().casefold()
    if word in {"true", "yes", "on", "1", _("yes").casefold()}:
        return True
    if word in {"false", "no", "off", "0", _("no").casefold()}:
        return False
    return None


def setting_value_parse(name: str, raw: object) -> Any:
    """The JSON-storable value of house-rule setting `name` typed as `raw` (a form's text, or a
    value already typed), checked by the rules as a saved setting is; refusals name the field."""
    spec = rules.HOUSE_RULE_FIELDS.get(name)
    if spec is None:
        raise ValidationError({"setting_name": _("Choose one of the house-rule settings.")})
    value: object = raw
    if isinstance(spec.default, bool) and not isinstance(raw, bool):
        value = _yes_no(str(raw))
        if value is None:
            raise ValidationError({"setting_value": _("Answer yes or no for this setting.")})
    elif isinstance(raw, str):
        value = raw.strip()
        if not value:
            raise ValidationError({"setting_value": _("Give the setting's new value.")})
    try:
        typed = getattr(rules.house_rules_from({name: value}), name)
    except ValueError as exc:
        raise ValidationError({"setting_value": str(exc)}) from None
    return str(typed) if isinstance(typed, Decimal) else typed


def _check_target(kind: str, target: Membership | None) -> None:
    if target is None:
        raise ValidationError({"target": _("Choose the member this decision is about.")})
    name = _name(target.user)
    if kind == DecisionKind.ADD_STORYTELLER and target.role != Role.PLAYER:
        raise ValidationError({"target": _("%(name)s is a storyteller already.") % {"name": name}})
    if kind == DecisionKind.REMOVE_STORYTELLER and target.role not in access.STAFF_ROLES:
        raise ValidationError({"target": _("%(name)s is not a storyteller.") % {"name": name}})
    if kind == DecisionKind.REMOVE_PLAYER and target.role != Role.PLAYER:
        raise ValidationError({"target": _("%(name)s is not a player.") % {"name": name}})


def _url(proposal: Proposal) -> str:
    return settings.CHRONICLE_BASE_URL + reverse(
        "decision_detail", args=[proposal.chronicle.slug, proposal.pk]
    )


@transaction.atomic
def proposal_open(
    *,
    membership: Membership,
    kind: str,
    body: str | None = None,
    target_user_id: int | None = None,
    setting_name: str = "",
    setting_value: object = "",
    text: str = "",
    days: int | None = None,
    now: dt.datetime | None = None,
) -> Proposal:
    """Put a decision to a vote of the proposer's body (GEN-03 for storytellers, GEN-04 for
    players); each voter is told. `days` (default: the chronicle's `decision_vote_days`) sets the
    deadline. A second open vote on the same question is refused."""
    now = now or timezone.now()
    chronicle = membership.chronicle
    body = body or access.body_of(membership)
    access.require_may_propose(membership, body)
    if not rules.decision_kind_allowed(body, kind):
        raise ValidationError(
            {
                "kind": _("The players may only vote to remove a storyteller or a player (GEN-04).")
                if body == DecisionBody.PLAYERS
                else _("Choose one of the storytellers' decisions.")
            }
        )
    # One proposal at a time per chronicle, so two people opening the same vote make one.
    Chronicle.objects.select_for_update().filter(pk=chronicle.pk).first()
    text = text.strip()
    if len(text) > MAX_TEXT:
        raise ValidationError({"text": _("Keep it under %(max)s characters.") % {"max": MAX_TEXT}})
    if days is None:
        days = chronicle.house_rules.decision_vote_days
    low, high = rules.setting_bounds("decision_vote_days")
    if not low <= days <= (high or days):
        raise ValidationError(
            {"days": _("A vote stays open %(low)s to %(high)s days.") % {"low": low, "high": high}}
        )
    target: Membership | None = None
    value: Any = None
    same = Proposal.objects.filter(chronicle=chronicle, body=body, kind=kind, status="open")
    if kind in TARGET_KINDS:
        if target_user_id is not None:
            target = (
                Membership.objects.filter(chronicle=chronicle, user_id=target_user_id)
                .select_related("user")
                .first()
            )
        _check_target(kind, target)
        assert target is not None
        same = same.filter(target_id=target.user_id)
    elif kind == DecisionKind.SETTING_NOW:
        value = setting_value_parse(setting_name, setting_value)
        same = same.filter(setting_name=setting_name)
    elif not text:
        raise ValidationError({"text": _("Describe the decision the storytellers vote on.")})
    if kind != DecisionKind.OTHER and same.exists():
        raise ValidationError(_("A vote on this is already open."))
    proposal = Proposal.objects.create(
        chronicle=chronicle,
        body=body,
        kind=kind,
        target=target.user if target else None,
        setting_name=setting_name if kind == DecisionKind.SETTING_NOW else "",
        setting_value=value,
        text=text,
        proposed_by=membership.user,
        opened_at=now,
        closes_at=now + dt.timedelta(days=days),
    )
    _tell_voters(proposal, now)
    return proposal


def _tell_voters(proposal: Proposal, now: dt.datetime) -> None:
    """Each voter but the proposer: a vote opened, until when, and where to cast it."""
    url = _url(proposal)

    # Functions, so each voter reads it in their own language (deliver renders them).
    def subject() -> str:
        return _("A vote opened: %(summary)s") % {"summary": proposal.summary}

    def body() -> str:
        return _(
            "A decision is put to your vote in %(chronicle)s: %(summary)s.\n"
            "It needs yes votes from two thirds of everyone who may vote, counted when the "
            "vote closes on %(closes)s. Your vote is secret until then.\n%(url)s"
        ) % {
            "chronicle": proposal.chronicle.name,
            "summary": proposal.summary,
            "closes": moment_text(proposal.closes_at, proposal.chronicle),
            "url": url,
        }

    for voter in access.voters_of(proposal.chronicle, proposal.body):
        if voter.user_id == proposal.proposed_by_id:
            continue
        deliver(
            kind=MailKind.DECISION,
            user=voter.user,
            chronicle=proposal.chronicle,
            key=f"decision:{proposal.pk}:opened:{voter.user_id}",
            subject=subject,
            body=body,
            now=now,
        )


@transaction.atomic
def ballot_cast(
    *, membership: Membership, proposal: Proposal, yes: bool, now: dt.datetime | None = None
) -> Ballot:
    """A voter's vote, or their changed vote, while the proposal is open."""
    now = now or timezone.now()
    if not access.may_vote_on(membership, proposal):
        raise PermissionDenied(
            _("Only the chronicle's storytellers vote on this.")
            if proposal.body == DecisionBody.STORYTELLERS
            else _("Only the chronicle's players vote on this.")
        )
    # The close takes this lock too: a vote is counted or refused, never lost in between.
    locked = Proposal.objects.select_for_update().get(pk=proposal.pk)
    if locked.status != DecisionStatus.OPEN or locked.closes_at <= now:
        raise ValidationError(
            _("This vote closed on %(closed)s; votes are no longer taken.")
            % {"closed": moment_text(locked.closes_at, membership.chronicle)}
        )
    ballot, _created = Ballot.objects.update_or_create(
        proposal=locked, voter=membership.user, defaults={"yes": yes, "cast_at": now}
    )
    return ballot


def own_ballot(membership: Membership, proposal: Proposal) -> Ballot | None:
    """The member's own vote: the only one anybody sees while the vote is open."""
    return Ballot.objects.filter(proposal=proposal, voter_id=membership.user_id).first()


def voted_on(membership: Membership, proposals: list[Proposal]) -> set[int]:
    """Which of these proposals the member has voted on (their own ballots only): one query."""
    if not proposals:
        return set()
    return set(
        Ballot.objects.filter(
            voter_id=membership.user_id, proposal_id__in=[p.pk for p in proposals]
        ).values_list("proposal_id", flat=True)
    )


def voters_who_voted(proposal: Proposal) -> list[str]:
    """After the close: the names of those whose vote was counted (not how they voted)."""
    if proposal.is_open:
        return []
    ballots = (
        Ballot.objects.filter(proposal=proposal, counted=True)
        .select_related("voter")
        .order_by("voter__username")
    )
    return [_name(ballot.voter) for ballot in ballots]


@transaction.atomic
def proposal_close(*, proposal_id: int, now: dt.datetime | None = None) -> Proposal | None:
    """Close one proposal whose deadline has passed: freeze the eligible voters and the tally,
    decide, apply a passed decision's effect and tell everyone concerned. Returns None when there
    was nothing to close (still open, or already closed by someone else): idempotent."""
    now = now or timezone.now()
    locked = (
        Proposal.objects.select_for_update(of=("self",))
        .select_related("chronicle", "target", "proposed_by")
        .filter(pk=proposal_id, status=DecisionStatus.OPEN, closes_at__lte=now)
        .first()
    )
    if locked is None:
        return None
    voters = list(access.voters_of(locked.chronicle, locked.body))
    eligible_ids = {voter.user_id for voter in voters}
    ballots = list(Ballot.objects.filter(proposal=locked))
    yes = sum(1 for b in ballots if b.yes and b.voter_id in eligible_ids)
    no = sum(1 for b in ballots if not b.yes and b.voter_id in eligible_ids)
    eligible = len(eligible_ids)
    # GEN-03 / GEN-04: two thirds of all current voters, not of those who voted. With nobody
    # left to vote, nothing can pass.
    passed = eligible >= 1 and rules.supermajority_passes(yes, eligible)
    Ballot.objects.filter(proposal=locked, voter_id__in=eligible_ids).update(counted=True)
    Ballot.objects.filter(proposal=locked).exclude(voter_id__in=eligible_ids).update(counted=False)
    locked.status = DecisionStatus.PASSED if passed else DecisionStatus.FAILED
    locked.closed_at = now
    locked.yes_count, locked.no_count, locked.eligible_count = yes, no, eligible
    if passed:
        locked.effect, locked.effect_note = _apply(locked, now)
        if locked.effect == DecisionEffect.APPLIED:
            locked.applied_at = now
    locked.save()
    _tell_result(locked, voters, now)
    return locked


def _apply(proposal: Proposal, now: dt.datetime) -> tuple[str, str]:
    """The effect of a passed decision, once (the caller holds the proposal's lock and only an
    open proposal gets here). An effect that can no longer apply is recorded, never raised."""
    if proposal.kind == DecisionKind.OTHER:
        return DecisionEffect.NONE, ""
    target: Membership | None = None
    if proposal.kind in TARGET_KINDS:
        target = (
            Membership.objects.filter(chronicle=proposal.chronicle, user_id=proposal.target_id or 0)
            .select_related("user", "chronicle")
            .first()
        )
        if target is None:
            return DecisionEffect.NOT_APPLIED, _("%(name)s is no longer a member.") % {
                "name": proposal.target_name
            }
    try:
        if target is not None:
            _check_target(proposal.kind, target)
        # A savepoint: a refused effect (the last admin, a setting no longer valid) leaves
        # nothing half-done, and the decision's result is still recorded.
        with transaction.atomic():
            _effect(proposal, target, now)
    except ValidationError as exc:
        return DecisionEffect.NOT_APPLIED, " ".join(exc.messages)
    except ValueError as exc:
        return DecisionEffect.NOT_APPLIED, str(exc)
    return DecisionEffect.APPLIED, ""


def _effect(proposal: Proposal, target: Membership | None, now: dt.datetime) -> None:
    """Through the services that own each change: people for roles and removals, settings for
    a setting corrected now (GEN-05's exception, which needs this recorded vote)."""
    rule = "GEN-04" if proposal.body == DecisionBody.PLAYERS else "GEN-03"
    note = f"{rule} decision {proposal.pk}"
    if proposal.kind == DecisionKind.SETTING_NOW:
        reason = f"{note}: {proposal.text}" if proposal.text else note
        house_rule_correct_now(
            chronicle=proposal.chronicle,
            overrides={proposal.setting_name: proposal.setting_value},
            by=None,
            reason=reason if len(reason) <= REASON_MAX else reason[: REASON_MAX - 1] + "…",
        )
        return
    assert target is not None
    if proposal.kind == DecisionKind.REMOVE_PLAYER:
        people.membership_remove(target=target, by=None, now=now)
        return
    role = Role.STORYTELLER if proposal.kind == DecisionKind.ADD_STORYTELLER else Role.PLAYER
    people.membership_role_set(target=target, role=role, by=None, note=note, now=now)


def _tell_result(proposal: Proposal, voters: list[Membership], now: dt.datetime) -> None:
    """Everyone concerned: the voters, the proposer and the member the decision is about; for a
    players' vote, the storytellers too."""
    recipients: dict[int, Any] = {voter.user_id: voter.user for voter in voters}
    for user in (proposal.proposed_by, proposal.target):
        if user is not None:
            recipients.setdefault(user.pk, user)
    if proposal.body == DecisionBody.PLAYERS:
        for member in access.voters_of(proposal.chronicle, DecisionBody.STORYTELLERS):
            recipients.setdefault(member.user_id, member.user)
    url = _url(proposal)

    def subject() -> str:
        return (
            _("Decision passed: %(summary)s")
            if proposal.status == DecisionStatus.PASSED
            else _("Decision failed: %(summary)s")
        ) % {"summary": proposal.summary}

    def body() -> str:
        lines = [
            _(
                "The vote in %(chronicle)s closed: %(yes)s yes and %(no)s no, of %(eligible)s "
                "who could vote (%(needed)s yes votes were needed)."
            )
            % {
                "chronicle": proposal.chronicle.name,
                "yes": proposal.yes_count,
                "no": proposal.no_count,
                "eligible": proposal.eligible_count,
                "needed": rules.supermajority_needed(proposal.eligible_count or 1),
            }
        ]
        if proposal.effect == DecisionEffect.APPLIED:
            lines.append(_("The decision has been carried out."))
        elif proposal.effect == DecisionEffect.NOT_APPLIED:
            lines.append(
                _("The decision could not be carried out: %(why)s") % {"why": proposal.effect_note}
            )
        lines.append(url)
        return "\n".join(lines)

    for user_id, user in recipients.items():
        deliver(
            kind=MailKind.DECISION,
            user=user,
            chronicle=proposal.chronicle,
            key=f"decision:{proposal.pk}:result:{user_id}",
            subject=subject,
            body=body,
            now=now,
        )


def proposals_close_due(
    *, chronicle: Chronicle | None = None, now: dt.datetime | None = None
) -> list[int]:
    """Close every open proposal whose deadline has passed (the beat task, and a decisions page
    for its chronicle), each in its own transaction. Returns the ids this call closed."""
    now = now or timezone.now()
    due = Proposal.objects.filter(status=DecisionStatus.OPEN, closes_at__lte=now)
    if chronicle is not None:
        due = due.filter(chronicle=chronicle)
    ids = list(due.order_by("closes_at", "pk").values_list("pk", flat=True)[:SWEEP_BATCH])
    return [pk for pk in ids if proposal_close(proposal_id=pk, now=now) is not None]


def proposal_refresh(proposal: Proposal, *, now: dt.datetime | None = None) -> Proposal:
    """The proposal as it stands: one opened after its deadline is closed first (lazily, when
    the beat task has not come by yet)."""
    now = now or timezone.now()
    if proposal.is_open and proposal.closes_at <= now:
        proposal_close(proposal_id=proposal.pk, now=now)
        proposal.refresh_from_db()
    return proposal


def open_votes_for(membership: Membership, now: dt.datetime) -> list[Proposal]:
    """The open votes the member may cast and has not (the dashboard's card): one query."""
    return list(
        Proposal.objects.filter(
            chronicle_id=membership.chronicle_id,
            body=access.body_of(membership),
            status=DecisionStatus.OPEN,
            closes_at__gt=now,
        )
        .exclude(ballots__voter_id=membership.user_id)
        .select_related("target")
        .order_by("closes_at", "pk")[:5]
    )
