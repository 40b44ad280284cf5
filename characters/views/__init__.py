"""HTML pages of the characters app, one module per area (see `characters/urls.py`)."""
