"""Placeholder: filled in by this area's work."""
