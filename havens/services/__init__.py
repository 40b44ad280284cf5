"""The only code that writes havens' state, one module per area:

- `ownership`: design and upgrade, contributions (influence spends), repairs, transfer, will,
  forsaking, crypt destruction by majority, theft control; and the downtime resolution of
  ownership changes, forsaking, theft and construction (HAV-01..24);
- `searches`: haven searches, influence attacks, reinforcement attacks and alarms, mobile
  havens moving, objects hidden on site; and their downtime resolution (HAV-25..26, HID).

Each service is keyword-only, typed, atomic, reads "now" once, and raises Django's
`ValidationError` naming the rule (e.g. "(HAV-23)") when the house rules refuse. Resolution
services take a cycle and are idempotent: run twice, they give the effects of one run.
"""
