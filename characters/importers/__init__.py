"""Importers of outside formats, beside the data they produce (DESIGN: import, export and
history). Each parses with a parser safe against entity expansion and builds a plan without
touching the database; `characters.services.imports` validates the whole plan and writes it in
one transaction.

- `grapevine`: Grapevine 3's XML exchange files (`.gex`, `.gv2` saved as XML): parsing, the one
  mapping table from the real world's names onto the house rules', dates, and the plan.
- `grapevine_export`: characters and XP histories written back as Grapevine 3 XML.
"""
