"""The only code that writes characters' state, one module per area:

- `ledger`: the XP ledger (XP-07): balance, keyed entries, reversals;
- `notify`: keyed e-mails to players, sent once after commit;
- `creation`: the creation wizard and ST approval (CRE, CLN, CRE-09);
- `purchases`: XP purchases in play and their sign-off (XP-01/02/05, DIS-03..08);
- `records`: the storytellers' records (BLD, BND, XP-04/06/07, TOR, ITM, SEW, MSC);
- `control`: CTL-02, control below 1 makes an NPC, checked by the services that change control;
- `sweepers`: the periodic timers (BND-10, BLD-03, TOR-01/02, XP-04).

Each service is keyword-only, typed, atomic, reads "now" once, and raises Django's
`ValidationError` naming the rule (e.g. "(DIS-07)") when the house rules refuse.
"""
