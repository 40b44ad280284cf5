"""The rules modules import without Django or Celery in the process (SPEC RAPI: outside checks
import them with nothing else set up). The AST check beside this one reads each file's own
imports; this one catches a package __init__ or a sibling module that drags a framework in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import chronicle.rules, characters.rules, havens.rules, downtimes.rules
roots = {m.split(".")[0] for m in sys.modules}
loaded = sorted(roots & {"django", "celery", "kombu", "rest_framework"})
print(",".join(loaded))
"""


def test_rules_modules_load_without_django_or_celery() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
