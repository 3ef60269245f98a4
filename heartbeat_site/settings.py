"""Django settings, read from the environment (see README "Configuration").

Three modes: the default is a development set-up (DEBUG, SQLite, local Redis, loopback only);
``HEARTBEAT_CLASSROOM=1`` (``make classroom``) hosts a class from one laptop: DEBUG off, a secret key
kept in a local file, hashed and compressed static files, and the room's address (written by
``manage.py runstack`` to ``HEARTBEAT_PUBLIC_URL_FILE``) allowed and used in every link;
``HEARTBEAT_PRODUCTION=1`` switches to settings that pass ``manage.py check --deploy``
and refuses to start without a real secret key and allowed hosts.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from heartbeat_site.env import (
    database_from_url,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_secret,
    env_str,
    local_secret,
)
from heartbeat_site.room import HostsWithPublicUrl, PublicUrlFile

BASE_DIR = Path(__file__).resolve().parent.parent

PRODUCTION = env_bool("HEARTBEAT_PRODUCTION", False)
CLASSROOM = env_bool("HEARTBEAT_CLASSROOM", False)
if PRODUCTION and CLASSROOM:
    raise ImproperlyConfigured(
        "HEARTBEAT_CLASSROOM=1 (a class from one laptop) cannot be combined with HEARTBEAT_PRODUCTION=1"
    )
DEBUG = env_bool("DJANGO_DEBUG", not (PRODUCTION or CLASSROOM))
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DJANGO_DEBUG=1 cannot be combined with HEARTBEAT_PRODUCTION=1")

_DEV_SECRET = "dev-only-insecure-key-heartbeat-classroom-do-not-use-in-production"
# A class on a laptop gets a key of its own, made once and kept out of the repository (.gitignore).
_LOCAL_SECRET_FILE = BASE_DIR / ".heartbeat-secret"
SECRET_KEY = env_secret("DJANGO_SECRET_KEY", None if PRODUCTION else _DEV_SECRET) or ""
if CLASSROOM and SECRET_KEY == _DEV_SECRET:
    SECRET_KEY = local_secret(_LOCAL_SECRET_FILE)
if PRODUCTION and (len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5):
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) must hold at least 50 random characters in production"
    )

# The base of every absolute link the site gives (api/links.py): a fixed URL, or a file holding it that
# ``make classroom`` rewrites when the laptop's address changes. Its host is always an allowed host.
_public_url_path = env_str("HEARTBEAT_PUBLIC_URL_FILE", "")
PUBLIC_URL_FILE = PublicUrlFile(_public_url_path) if _public_url_path else None
ALLOWED_HOSTS = env_list(
    "DJANGO_ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost", "[::1]", "testserver"]
)
if PUBLIC_URL_FILE is not None:
    ALLOWED_HOSTS = HostsWithPublicUrl(ALLOWED_HOSTS, PUBLIC_URL_FILE)
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("DJANGO_ALLOWED_HOSTS must list the site's host names in production (comma separated)")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

PAGES_APP = "heartbeat_site.pages"
# Owned by the front-end; the site works without it (API only) until it lands.
HAS_PAGES = importlib.util.find_spec(f"{PAGES_APP}.urls") is not None

INSTALLED_APPS = [
    "daphne",  # makes `runserver` speak ASGI (websockets) in development
    "django.contrib.contenttypes",
    "django.contrib.staticfiles",
    "channels",
    "heartbeat_site.live",
    *([PAGES_APP] if HAS_PAGES else []),
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "heartbeat_site.compression.PagesAndApiGZipMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "heartbeat_site.live.api.errors.JsonErrorsForApiMiddleware",
]

ROOT_URLCONF = "heartbeat_site.urls"
ASGI_APPLICATION = "heartbeat_site.asgi.application"
WSGI_APPLICATION = "heartbeat_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.debug",
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.template.context_processors.static",
                "heartbeat_site.live.api.links.public_origin",
            ],
        },
    },
]

DATABASES = {"default": database_from_url(env_str("DATABASE_URL", "sqlite:///db.sqlite3"), base_dir=BASE_DIR)}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Live tests run Daphne and Celery in other processes: they need a file, not ":memory:",
    # and one per test session, as several people may run the suite in one checkout at once.
    DATABASES["default"]["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"heartbeat-test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
# No channel layer (CHANNEL_LAYERS): a run's live messages go from its driver to every ASGI process on a Redis
# pub/sub channel of the run's own, one subscription per process and run (heartbeat_site/live/delivery/publisher.py,
# fanout.py).

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = "heartbeat"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("HEARTBEAT_STATIC_ROOT", str(BASE_DIR / "staticfiles")))  # where collectstatic writes
STATICFILES_DIRS = [path for path in [BASE_DIR / "static"] if path.is_dir()]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION or CLASSROOM
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG  # serve straight from static/ without collectstatic while developing

# Bodies: a scenario document for 5,000 nodes is still small; anything bigger is a mistake.
HEARTBEAT_MAX_BODY_BYTES = env_int("HEARTBEAT_MAX_BODY_BYTES", 256 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = HEARTBEAT_MAX_BODY_BYTES

# Run drivers and live delivery (README "Configuration").
HEARTBEAT = {
    "MAX_RUNS": env_int("HEARTBEAT_MAX_RUNS", 20, minimum=1),
    "MAX_RUNS_PER_CLIENT": env_int("HEARTBEAT_MAX_RUNS_PER_CLIENT", 3, minimum=1),
    "MAX_NODES": env_int("HEARTBEAT_MAX_NODES", 5000, minimum=1),
    "NODE_LEVEL_NODES": env_int("HEARTBEAT_NODE_LEVEL_NODES", 100, minimum=0),
    "NODES_PER_WORKER": env_int("HEARTBEAT_NODES_PER_WORKER", 12_000, minimum=1),
    "IDLE_SECONDS": env_float("HEARTBEAT_IDLE_SECONDS", 600.0, minimum=1.0),
    "LEASE_TTL": env_float("HEARTBEAT_LEASE_TTL", 4.0, minimum=0.5, maximum=300.0),
    "FRAME_INTERVAL": env_float("HEARTBEAT_FRAME_INTERVAL", 0.1, minimum=0.02, maximum=5.0),
    "EVENT_LOG_SIZE": env_int("HEARTBEAT_EVENT_LOG_SIZE", 50_000, minimum=100),
    "FRAME_MAX_EVENTS": env_int("HEARTBEAT_FRAME_MAX_EVENTS", 2_000, minimum=10),
    "COMMAND_ACK_SECONDS": env_float("HEARTBEAT_COMMAND_ACK_SECONDS", 8.0, minimum=0.1, maximum=30.0),
    "RETENTION_SECONDS": env_int("HEARTBEAT_RETENTION_SECONDS", 7 * 24 * 3600, minimum=60),
    "DEFAULT_SPEED": env_float("HEARTBEAT_DEFAULT_SPEED", 1.0, minimum=0.1, maximum=100.0),
    "PUBLIC_URL": env_str("HEARTBEAT_PUBLIC_URL", ""),
    "REPLAY_PROCESS": env_bool("HEARTBEAT_REPLAY_PROCESS", True),
    "REPLAY_PROCESS_FROM": env_int("HEARTBEAT_REPLAY_PROCESS_FROM", 3_000, minimum=0),
    # virtual seconds between a live run's checkpoints (0: none); a takeover continues the newest
    "CHECKPOINT_SECONDS": env_float("HEARTBEAT_CHECKPOINT_SECONDS", 60.0, minimum=0.0),
    # nodes from which a driver's checkpoints are made in a process beside it (about 1 ms per node)
    "CHECKPOINT_PROCESS_FROM": env_int("HEARTBEAT_CHECKPOINT_PROCESS_FROM", 50, minimum=0),
    # checkpoints a run keeps for look-back, spread over its life, and their bytes at most (the newest always stays)
    "CHECKPOINTS_KEPT": env_int("HEARTBEAT_CHECKPOINTS_KEPT", 16, minimum=1),
    "CHECKPOINTS_KEPT_MB": env_int("HEARTBEAT_CHECKPOINTS_KEPT_MB", 256, minimum=1),
    # Watching a real cluster (docs/observe.md): off unless the operator enables it, and then only the hosts
    # and networks named here (host names and CIDRs, comma separated) may be reached
    "OBSERVE": env_bool("HEARTBEAT_OBSERVE", False),
    "OBSERVE_HOSTS": env_list("HEARTBEAT_OBSERVE_HOSTS", []),
    # the largest audit log POST /api/audit-replays reads (docs/observe.md)
    "MAX_AUDIT_BYTES": env_int("HEARTBEAT_MAX_AUDIT_BYTES", 64 * 1024 * 1024, minimum=1024),
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.channels.server": {"level": "WARNING"}},
}

if PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"

if CLASSROOM:
    # A class is served over plain HTTP on the room's address: browsers ignore Cross-Origin-Opener-Policy on such
    # an origin and log an error about it on every page (Django sends "same-origin" by default).
    SECURE_CROSS_ORIGIN_OPENER_POLICY = None
