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
SECURE_SSL_REDIRECT = False
# No collectstatic in tests: serve from the apps' folders, as in development.
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
os.makedirs(STATIC_ROOT, exist_ok=True)  # noqa: F405
