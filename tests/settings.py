"""Settings for the test run: the project's own, with a key so that no .env is needed.

DATABASE_URL and CELERY_BROKER_URL still come from the environment (.ci/run sets them to
PostgreSQL and Redis); without them the tests use SQLite and the filesystem broker.
"""

import os
import tempfile

os.environ.setdefault("SECRET_KEY", "tests-only-insecure-key-0123456789-abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault(
    "CHRONICLE_VAR_DIR", os.path.join(tempfile.gettempdir(), "chronicle-tests-var")
)

from chronicle.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
# The mail task runs where its on-commit hook fires instead of through the broker, so tests read
# Django's outbox without a worker (chronicle.services.mail.sending.run_in_worker). The broker
# path itself is tested with a real worker (tests/chronicle/test_mail_worker.py).
CHRONICLE_MAIL_EAGER = True
SECURE_SSL_REDIRECT = False
# No collectstatic in tests: serve from the apps' folders, as in development.
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
os.makedirs(STATIC_ROOT, exist_ok=True)  # noqa: F405
