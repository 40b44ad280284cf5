# Chronicle: `make run` serves the demo chronicle; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
MANAGE := $(PY) manage.py
CELERY := $(VENV)/bin/celery

.PHONY: run test lint typecheck fmt clean bench bench-org messages backup restore

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet pip

$(VENV)/.installed-run: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed-run

var:
	mkdir -p var/broker/queue var/broker/processed

# The embedded defaults: SQLite under var/ and kombu's filesystem broker, so no server is
# needed. `make run PORT=8001` serves on another port. The demo's e-mails go to var/mail/ and
# the worker logs to var/worker.log, so the demo logins are the last lines before the server's
# own. Ctrl-C stops the web server and the worker together.
PORT ?= 8000
run: export DEBUG := $(or $(DEBUG),1)
run: $(VENV)/.installed-run | var
	@$(MANAGE) migrate --noinput -v 0
	@echo "Chronicle on http://127.0.0.1:$(PORT)/  (API docs: /api/docs/, health: /health, worker log: var/worker.log)"
	@$(MANAGE) seed_demo
	@trap 'trap - INT TERM EXIT; kill 0' INT TERM EXIT; \
	$(CELERY) -A chronicle worker --beat -Q celery,pipeline,mail --pool=solo --without-mingle --without-gossip \
		--loglevel=INFO --schedule=var/celerybeat-schedule >>var/worker.log 2>&1 & \
	$(MANAGE) runserver 127.0.0.1:$(PORT)

# DATABASE_URL / CELERY_BROKER_URL are used when set (CI: PostgreSQL and Redis).
test: $(VENV)/.installed-test
	$(PY) -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(VENV)/.installed-test
	$(VENV)/bin/mypy chronicle characters havens downtimes

fmt: $(VENV)/.installed-test
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf var $(VENV)

# The benchmark (README, "Benchmarks"): PostgreSQL (DATABASE_URL) and, for the worker and the
# rush, Redis (CELERY_BROKER_URL). `make bench`: S and M, a few minutes; `make bench-org`: L
# through a real worker, P1K/P10K/XL beside the raw-SQL bound, pages under load and the rush.
# Each writes bench/results/<time>-<title>.md and the README's latest table.
$(VENV)/.installed-bench: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[bench]'
	touch $@ $(VENV)/.installed-run

bench: $(VENV)/.installed-bench
	$(PY) bench/main.py small

bench-org: $(VENV)/.installed-bench
	$(PY) bench/main.py org

# Backups (README, "Backups and restores"): the database of DATABASE_URL (else make run's SQLite
# file). `make backup [BACKUP=path]` writes var/backups/chronicle-<UTC time>.dump (pg_dump's
# custom format; .sqlite3 for SQLite). `make restore RESTORE_TO=<database url> [BACKUP=path]
# [FORCE=1]` restores the newest backup (or BACKUP) into a fresh database, created when missing
# and refused when it holds tables unless FORCE=1, then runs migrate --check and check_invariants.
backup: export DEBUG := $(or $(DEBUG),1)
backup: $(VENV)/.installed-run
	$(MANAGE) backup_database $(if $(BACKUP),--output "$(BACKUP)")

restore: export DEBUG := $(or $(DEBUG),1)
restore: $(VENV)/.installed-run
	@test -n "$(RESTORE_TO)" || { echo "Set RESTORE_TO=<database url> (a new database)"; exit 2; }
	$(MANAGE) restore_database $(if $(BACKUP),"$(BACKUP)") --to "$(RESTORE_TO)" $(if $(filter 1,$(FORCE)),--force)

# For translators: gather every marked string into locale/<it|ca>/LC_MESSAGES/django.po, then
# compile the .mo files (committed, so a machine without gettext still serves translations).
# Needs GNU gettext (msgfmt). See README, "Languages".
LOCALES := -l it -l ca
messages: export DEBUG := $(or $(DEBUG),1)
messages: $(VENV)/.installed-run
	$(MANAGE) makemessages $(LOCALES) --add-location=file \
		--ignore=.venv --ignore=tests --ignore=bench --ignore=var
	$(MANAGE) compilemessages $(LOCALES) --ignore=.venv --ignore=var
