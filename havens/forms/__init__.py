"""Forms of the havens app, one module per area (shape only; the services check the rules)."""
