"""Forms of the characters app, one module per area."""
