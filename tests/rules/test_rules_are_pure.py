"""Every app's rules.py is pure: standard library (and other rules modules) only.

DESIGN.md: "rules.py ... Standard library only; no clock". A rules module that imports Django,
DRF or Celery would drag the ORM into arithmetic that must stay table-testable.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ["chronicle", "characters", "havens", "downtimes"]
RULES_FILES = [ROOT / app / "rules.py" for app in APPS if (ROOT / app / "rules.py").exists()]
FORBIDDEN = {"django", "rest_framework", "celery", "kombu", "drf_spectacular"}


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # `from . import x` / `from .models import y` inside an app: only .rules is pure.
                modules.add(f"{path.parent.name}.{node.module or 'rules'}")
            elif node.module:
                modules.add(node.module)
    return modules


def imported_roots(path: Path) -> set[str]:
    return {module.split(".")[0] for module in imported_modules(path)}


def test_the_chronicle_rules_exist() -> None:
    assert ROOT / "chronicle" / "rules.py" in RULES_FILES


@pytest.mark.parametrize("path", RULES_FILES, ids=lambda p: f"{p.parent.name}-rules")
def test_rules_import_only_the_standard_library(path: Path) -> None:
    roots = imported_roots(path)
    assert not roots & FORBIDDEN, f"{path} imports {sorted(roots & FORBIDDEN)}"
    others = {r for r in roots if r not in sys.stdlib_module_names and r not in APPS}
    assert not others, f"{path} imports non-standard modules {sorted(others)}"
    app_modules = {m for m in imported_modules(path) if m.split(".")[0] in APPS}
    impure = {m for m in app_modules if m != f"{m.split('.')[0]}.rules"}
    assert not impure, f"{path} imports app modules other than rules: {sorted(impure)}"


def test_the_check_catches_a_django_import(tmp_path: Path) -> None:
    bad = tmp_path / "rules.py"
    bad.write_text("from django.utils import timezone\nimport celery.app\nfrom .models import X\n")
    assert {"django", "celery"} <= imported_roots(bad)
    assert f"{tmp_path.name}.models" in imported_modules(bad)
