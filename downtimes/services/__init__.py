"""The only code that writes downtimes' state, one module per area:

- `submissions`: the player's downtime (DT-01/02): drafts, submit until the deadline, the six
  sections (influence actions, loans, XP purchases, special powers, game report, votes),
  receipts and reminders;
- `desk`: the storytellers' influence desk: statuses, assignees, notes, results, conflicts,
  bulk changes, at-game requests (INF-04);
- `votes`: the tally and awards (DT-06..09) and the game-report picks (DT-05).

Each service is keyword-only, typed, atomic, reads "now" once, and raises Django's
`ValidationError` naming the rule (e.g. "(DT-01)") when the house rules refuse.
"""
