"""Forms of the downtimes app, one module per area (shape only; the services check the rules)."""
