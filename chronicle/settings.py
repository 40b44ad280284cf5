"""Settings, read from the environment (see `.env.example` for every variable).

Bad values stop start-up with a message naming the variable: a typo in production must not
quietly fall back to a development default.
"""

from __future__ import annotations

import datetime as dt
import os
import zoneinfo
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONCE as CSP_NONCE
from csp.constants import NONE as CSP_NONE
from csp.constants import SELF as CSP_SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CHRONICLE_VAR_DIR") or BASE_DIR / "var")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}."
    )


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number; got {raw!r}.") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set it in the environment (see .env.example), "
            "or set DEBUG=1 for local development."
        )
    SECRET_KEY = "django-insecure-development-only-key-never-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

TIME_ZONE = os.environ.get("TIME_ZONE") or "UTC"
if TIME_ZONE not in zoneinfo.available_timezones():
    raise ImproperlyConfigured(f"TIME_ZONE {TIME_ZONE!r} is not an IANA time zone name.")
USE_TZ = True
USE_I18N = True
LANGUAGE_CODE = "en"
# The troupes Chronicle is written for: the US, Italy and Catalonia.
LANGUAGES = [
    ("en", "English"),
    ("it", "Italiano"),
    ("ca", "Català"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
# The header's language switcher sets Django's language cookie for a year, also for people
# who are not signed in (a signed-in person's choice is saved on their Profile as well).
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"

INSTALLED_APPS = [
    # Django's admin, for the deployment's superusers only (chronicle/admin_site.py).
    "chronicle.admin_site.SuperuserAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    # API tokens, stored hashed and expiring (issue 16); DRF's authtoken is gone.
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "axes",
    "pgtrigger",
    # Issue 16: history of every change (triggers; chronicle/tracking.py, chronicle/history.py).
    "pghistory",
    "chronicle",
    "characters",
    "havens",
    "downtimes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Permissions-Policy everywhere, Cache-Control: private, no-store when signed in.
    "chronicle.security.SecurityHeadersMiddleware",
    # Content-Security-Policy with a per-request nonce (CONTENT_SECURITY_POLICY below).
    "chronicle.security.NonceCSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "chronicle.middleware.SessionBackendMiddleware",
    # The language cookie, else Accept-Language, else LANGUAGE_CODE ...
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Issue 16: the acting user, URL and method on every history event (PostgreSQL only).
    "chronicle.history_context.HistoryMiddleware",
    # ... unless the signed-in person saved a language on their account.
    "chronicle.middleware.ProfileLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a lockout raised by authenticate() into a response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "chronicle.urls"
WSGI_APPLICATION = "chronicle.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "chronicle.context_processors.chronicles",
                "chronicle.security.csp_nonce",
            ],
        },
    }
]

_default_db = f"sqlite:///{VAR_DIR / 'chronicle.sqlite3'}"
try:
    DATABASES = {
        "default": dj_database_url.parse(
            os.environ.get("DATABASE_URL") or _default_db,
            conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
            conn_health_checks=True,
        )
    }
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a database URL we understand: {exc}") from exc
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite cannot share one long-lived connection between threads well, and the worker and the
    # web server write the same file: wait for the lock instead of failing at once.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
# A connection pooler between the processes and PostgreSQL (README, "Growing past one machine").
# PgBouncer's transaction pooling hands each transaction whichever server session is free, so
# nothing may outlive a transaction: no named (server-side) cursors, which QuerySet.iterator()
# opens. Django already turns psycopg's prepared statements off; the time zone Django sets is a
# parameter PgBouncer tracks per client. Session pooling (or none) needs nothing.
DATABASE_POOLER = os.environ.get("DATABASE_POOLER", "").strip().lower()
if DATABASE_POOLER == "transaction":
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
elif DATABASE_POOLER not in ("", "session"):
    raise ImproperlyConfigured(
        f"DATABASE_POOLER must be empty, 'session' or 'transaction', not {DATABASE_POOLER!r}"
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's, loading the person's Profile (their language) with them in one query.
    "chronicle.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Login throttling: Django itself does not throttle logins.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = env_int("AXES_COOLOFF_HOURS", 1)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# How many proxies stand in front of the web processes (AXES_PROXY_COUNT, 0 = none): the client
# is that many addresses from the right of X-Forwarded-For (chronicle/client_ip.py, through
# django-ipware). django-axes and the password-reset throttle both read it.
CHRONICLE_PROXY_COUNT = env_int("AXES_PROXY_COUNT", 0)
AXES_CLIENT_IP_CALLABLE = "chronicle.client_ip.client_ip"
# Password resets (chronicle/views/mail.py): requests per address and per client address.
CHRONICLE_RESET_LIMIT_PER_ADDRESS = env_int("CHRONICLE_RESET_LIMIT_PER_ADDRESS", 3)
CHRONICLE_RESET_LIMIT_PER_CLIENT = env_int("CHRONICLE_RESET_LIMIT_PER_CLIENT", 10)
CHRONICLE_RESET_WINDOW_SECONDS = env_int("CHRONICLE_RESET_WINDOW_SECONDS", 60 * 60)

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or VAR_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "chronicle" / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# E-mail: console in development; set EMAIL_BACKEND and EMAIL_HOST (etc.) in production.
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "chronicle@localhost")

# Security headers everywhere; cookies, HTTPS redirect and HSTS once we are in production.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No inline script or style without the response's nonce, no 'unsafe-inline' (issue 16).
# Templates write nonce="{{ csp_nonce }}"; htmx's own <style> is off (meta htmx-config).
CONTENT_SECURITY_POLICY: dict[str, Any] = {
    "DIRECTIVES": {
        "default-src": [CSP_SELF],
        "script-src": [CSP_SELF, CSP_NONCE],
        "style-src": [CSP_SELF, CSP_NONCE],
        "img-src": [CSP_SELF, "data:"],
        "font-src": [CSP_SELF],
        "connect-src": [CSP_SELF],
        "object-src": [CSP_NONE],
        "base-uri": [CSP_SELF],
        "frame-ancestors": [CSP_NONE],
        "form-action": [CSP_SELF],
    },
}
SESSION_COOKIE_HTTPONLY = True
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    LANGUAGE_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    # /health is probed over plain HTTP from inside the deployment (docker healthcheck).
    SECURE_REDIRECT_EXEMPT = [r"^health$"]

# API tokens (django-rest-knox): each log-in at /api/auth/token/ makes a new one, lasting this
# many days; a password change or reset, or deactivating the account, revokes them all.
API_TOKEN_TTL_DAYS = env_int("API_TOKEN_TTL_DAYS", 30)
REST_KNOX = {
    "TOKEN_TTL": dt.timedelta(days=API_TOKEN_TTL_DAYS),
    "AUTH_HEADER_PREFIX": "Token",  # what clients of DRF's tokens already send
    "AUTO_REFRESH": False,
}

REST_FRAMEWORK = {
    # Token first, so an unauthenticated call gets 401 with a WWW-Authenticate header.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # knox's hashed, expiring tokens, in the token owner's saved language.
        "chronicle.api_auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "chronicle.api_schema.AutoSchema",
    "EXCEPTION_HANDLER": "chronicle.api_errors.exception_handler",
    # DRF's three, with a JSON parser that refuses nesting too deep (400, not RecursionError).
    "DEFAULT_PARSER_CLASSES": [
        "chronicle.api_parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "chronicle.pagination.Pagination",
    "PAGE_SIZE": 100,
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

# The schema describes the API's shape, never data; it is public on a development server (so
# `make run` shows it) and behind a login elsewhere unless API_SCHEMA_PUBLIC says otherwise.
_SCHEMA_PUBLIC = env_bool("API_SCHEMA_PUBLIC", DEBUG)
SPECTACULAR_SETTINGS: dict[str, Any] = {
    "TITLE": "Chronicle API",
    "DESCRIPTION": "Chronicles, games, attendance and downtime cycles. "
    'Errors always have the shape {"error": {"code", "message", "fields"}}.',
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": [
        "rest_framework.permissions.AllowAny"
        if _SCHEMA_PUBLIC
        else "rest_framework.permissions.IsAuthenticated"
    ],
    "COMPONENT_SPLIT_REQUEST": True,
    # Several models have a "status" or a discipline choice: name each choice set once.
    "ENUM_NAME_OVERRIDES": {
        "CycleStatusEnum": "chronicle.models.CycleStatus",
        "CharacterStatusEnum": "characters.models.Status",
        "PurchaseStatusEnum": "characters.models.PurchaseStatus",
        "DisciplineEnum": "characters.models.DISCIPLINE_CHOICES",
    },
    # Swagger UI served from our own static files: no CDN at run time.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Every operation documents its error statuses with the one Error shape
    # (chronicle/api_schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "chronicle.api_schema.add_error_responses",
    ],
    # Request bodies are documented as JSON, what the API's clients send: a form body carries
    # no types, so fuzzing it against a typed schema tests nothing (forms still work).
    "PARSER_WHITELIST": ["chronicle.api_parsers.JSONParser"],
}

# Django's cache holds the password-reset throttle's counts, so every web process must share it:
# CACHE_URL=redis://host:6379/1 wherever more than one runs. Without it (make run, tests) each
# process keeps its own in memory.
_CACHE_URL = os.environ.get("CACHE_URL", "").strip()
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _CACHE_URL}
        if _CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Celery. The embedded default is kombu's filesystem transport under var/, so `make run` needs
# no broker server; production and CI use Redis (CELERY_BROKER_URL=redis://...).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
_BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {
    # Well above the longest step, so a slow step is not redelivered to a second worker.
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 6 * 60 * 60),
}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport does not create its folders; a fresh clone has none.
    for _folder in ("queue", "processed", "control"):
        (_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS.update(
        {
            "data_folder_in": str(_BROKER_DIR / "queue"),
            "data_folder_out": str(_BROKER_DIR / "queue"),
            "processed_folder": str(_BROKER_DIR / "processed"),
            # Else kombu writes its broadcast exchanges to ./control in the working directory.
            "control_folder": str(_BROKER_DIR / "control"),
            "store_processed": False,
        }
    )
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# A task that was running when its worker died goes back to the queue, and a worker takes one
# message at a time: measured here, without these a job is lost when a worker is killed.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = False
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Celery's Django fixup closes the task's database connection after this many tasks instead of
# after every task, so a busy worker does not open a new PostgreSQL session per task.
CELERY_DB_REUSE_MAX = env_int("CELERY_DB_REUSE_MAX", 100)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "axes": {"level": "WARNING"},
        # WeasyPrint narrates each step of every PDF (and of its own stylesheets on import) at
        # INFO; fontTools likewise while subsetting fonts.
        "weasyprint": {"level": "WARNING"},
        "fontTools": {"level": "WARNING"},
    },
}

# DT-10: subjects (characters or players) per resolution task; about one task per 500.
CHRONICLE_PIPELINE_CHUNK_SIZE = env_int("CHRONICLE_PIPELINE_CHUNK_SIZE", 500)

# People: who may start a chronicle, whether strangers may sign up without an invitation, how
# long an invitation link lives, and the address e-mailed links point to.
CHRONICLE_OPEN_CREATION = env_bool("CHRONICLE_OPEN_CREATION", True)
CHRONICLE_OPEN_REGISTRATION = env_bool("CHRONICLE_OPEN_REGISTRATION", False)
CHRONICLE_INVITATION_DAYS = env_int("CHRONICLE_INVITATION_DAYS", 7)
if not 1 <= CHRONICLE_INVITATION_DAYS <= 90:
    raise ImproperlyConfigured(
        f"CHRONICLE_INVITATION_DAYS must be from 1 to 90; got {CHRONICLE_INVITATION_DAYS}."
    )
CHRONICLE_BASE_URL = os.environ.get("CHRONICLE_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
if not CHRONICLE_BASE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured(
        f"CHRONICLE_BASE_URL must start with http:// or https://; got {CHRONICLE_BASE_URL!r}."
    )

# Issue 16 (chronicle/tracking.py): each history event's time is the moment of the change, not
# its transaction's start, so the changes one service makes read in the order they happened.
PGHISTORY_CREATED_AT_FUNCTION = "clock_timestamp()"
