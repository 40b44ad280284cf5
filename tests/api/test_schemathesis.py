"""The served schema is the contract (issue 16): Schemathesis fuzzes every operation of
/api/schema/ through WSGI (no server) as four roles, anonymous, a player, a storyteller and an
admin of the demo chronicle, with every check it has. 0 failures.

What runs, per role and operation (a fixed seed: `deterministic`):

- CI: the examples phase, the fuzzing phase (5 examples; CHRONICLE_FUZZ_EXAMPLES asks for more)
  and the coverage phase. The admin, who reaches every operation (a storyteller's and the
  admin-only ones, tests/authz_matrix.txt), runs the whole coverage phase: every boundary
  value, wrong type, missing part and undeclared method the schema implies. The other three
  run the coverage cases no other phase makes (COVERAGE_ONLY_SCENARIOS: undeclared methods but
  OPTIONS, missing required parts, malformed and unsupported content types), so that the two
  checks only that phase runs, `unsupported_method` and `missing_required_header`, run for
  every role.
- A deep run by hand, CHRONICLE_FUZZ_COVERAGE=1: the whole coverage phase for all four roles
  (with OPTIONS): some 6,300 coverage cases a role, against about 6,300 + 3 × 750 in CI.

Times on the 2-core machine, with another test run beside it: the module without the coverage
phase 4m43s; as CI runs it now 5m43s (the admin's whole coverage phase 3m09s of it); the deep
run 12m15s in one process under load (its anonymous, player and storyteller parts alone, on a
quieter machine, 3m54s).

The demo chronicle (seed_demo) is built once for the module inside a transaction that is rolled
back at its end; each role's run is a test of its own (one more savepoint), and each example
runs in a savepoint of its own, so a write never changes what the next example finds.

`positive_data_acceptance` also allows 400: a request the schema allows can still be one the
house rules refuse (a game on a date already taken, XP the character does not have), and the
API answers that with 400 in the one error shape, documented on every write.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.core.management import call_command
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from django.test import Client, override_settings
from schemathesis.config import SchemathesisConfig
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import CoveragePhaseData, CoverageScenario

from chronicle.management.commands.seed_demo import DEMO_PASSWORD, DEMO_SLUG

# The demo is seeded in a module fixture: the mark lets pytest-django set the test database up.
pytestmark = pytest.mark.django_db

ROLES = {"anonymous": None, "player": "alice", "storyteller": "st_lucia", "admin": "admin"}
# Few enough examples that the module (4 roles × every operation, a fixed seed) stays within a
# few minutes on CI's machine; CHRONICLE_FUZZ_EXAMPLES asks for more.
MAX_EXAMPLES = int(os.environ.get("CHRONICLE_FUZZ_EXAMPLES", "5"))
# CHRONICLE_FUZZ_COVERAGE=1: the deep run, the whole coverage phase for every role.
DEEP = os.environ.get("CHRONICLE_FUZZ_COVERAGE") == "1"
# The coverage cases the other roles run in CI: those no other phase makes, for the checks that
# only the coverage phase runs (`unsupported_method`, `missing_required_header`) and the
# content-type probes.
COVERAGE_ONLY_SCENARIOS = {
    CoverageScenario.UNSPECIFIED_HTTP_METHOD,
    CoverageScenario.MISSING_PARAMETER,
    CoverageScenario.MALFORMED_CONTENT_TYPE,
    CoverageScenario.UNSUPPORTED_CONTENT_TYPE,
}


def config(*, restricted: bool) -> SchemathesisConfig:
    coverage: dict[str, Any] = {"enabled": True}
    if restricted:
        # OPTIONS is left out: `unsupported_method` does not judge it (DRF answers it with the
        # view's metadata, 200).
        coverage["unexpected-methods"] = ["get", "put", "post", "delete", "patch", "trace", "query"]
    return SchemathesisConfig.from_dict(
        {
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "database": "none",
            },
            "phases": {"coverage": coverage},
            "parameters": {"slug": DEMO_SLUG},
            "checks": {
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "400", "401", "403", "404", "409", "429"]
                },
            },
        }
    )


def token_for(username: str) -> str:
    """An API token the way a client gets one (POST /api/auth/token/)."""
    response = Client().post(
        "/api/auth/token/",
        {"username": username, "password": DEMO_PASSWORD},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return str(response.json()["token"])


@pytest.fixture(scope="module")
def demo(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, str | None]]:
    # Schemathesis's WSGI client calls the app as http://localhost.
    with django_db_blocker.unblock(), override_settings(ALLOWED_HOSTS=["localhost", "testserver"]):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            call_command("seed_demo", stdout=io.StringIO())
            tokens = {
                role: None if username is None else token_for(username)
                for role, username in ROLES.items()
            }
            # As Django's test client does around its requests: the end of a request must not
            # close the connection that holds the module's transaction.
            signals.request_started.disconnect(close_old_connections)
            signals.request_finished.disconnect(close_old_connections)
            try:
                yield tokens
            finally:
                signals.request_started.connect(close_old_connections)
                signals.request_finished.connect(close_old_connections)
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def load(demo: dict[str, str | None], *, restricted: bool) -> Any:
    loaded = schemathesis.openapi.from_wsgi(
        "/api/schema/",
        get_wsgi_application(),
        config=config(restricted=restricted),
        headers={"Authorization": f"Token {demo['admin']}"},
    )
    if restricted:

        def filter_case(context: Any, case: Any) -> bool:
            data = case.meta.phase.data if case.meta is not None else None
            if not isinstance(data, CoveragePhaseData):
                return True
            return data.scenario in COVERAGE_ONLY_SCENARIOS

        loaded.hook(filter_case)
    return loaded


@pytest.fixture(scope="module")
def api_schema(demo: dict[str, str | None]) -> Any:
    """The whole coverage phase."""
    return load(demo, restricted=False)


@pytest.fixture(scope="module")
def restricted_schema(demo: dict[str, str | None], api_schema: Any) -> Any:
    """The coverage cases of COVERAGE_ONLY_SCENARIOS only (the whole phase in a deep run)."""
    return api_schema if DEEP else load(demo, restricted=True)


schema = schemathesis.pytest.from_fixture("api_schema")
restricted = schemathesis.pytest.from_fixture("restricted_schema")


@pytest.fixture(autouse=True)
def _node_id(request: Any) -> None:
    # Schemathesis 4's lazy schemas read the private `_nodeid`, which pytest 9 no longer has.
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


def _without_credentials(case: Any) -> bool:
    """A coverage case that leaves the Authorization header out on purpose (the token-only
    logout operations): the role's token must not put it back."""
    data = case.meta.phase.data if case.meta is not None else None
    return (
        isinstance(data, CoveragePhaseData)
        and data.scenario == CoverageScenario.MISSING_PARAMETER
        and data.parameter_location == ParameterLocation.HEADER
        and (data.parameter or "").lower() == "authorization"
    )


def call(case: Any, token: str | None) -> None:
    if _without_credentials(case):
        token = None
    headers = {} if token is None else {"Authorization": f"Token {token}"}
    with transaction.atomic():
        case.call_and_validate(headers=headers)
        transaction.set_rollback(True)


@restricted.parametrize()
def test_anonymous(case: Any, demo: dict[str, Any], db: None) -> None:
    call(case, demo["anonymous"])


@restricted.parametrize()
def test_player(case: Any, demo: dict[str, Any], db: None) -> None:
    call(case, demo["player"])


@restricted.parametrize()
def test_storyteller(case: Any, demo: dict[str, Any], db: None) -> None:
    call(case, demo["storyteller"])


@schema.parametrize()
def test_admin(case: Any, demo: dict[str, Any], db: None) -> None:
    call(case, demo["admin"])
