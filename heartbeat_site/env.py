"""Typed readers for environment variables that fail loudly.

A misspelt boolean or a negative cap must stop the process at start-up with a message
naming the variable, not surface later as odd behaviour (healthchecks' ``hc/settings.py``
does the same). Secrets may come from a file named by ``<NAME>_FILE`` (Docker/K8s secrets).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    return None if value is None else value.strip()


def env_str(name: str, default: str) -> str:
    value = _raw(name)
    return default if value is None or value == "" else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean: use one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number") from None
    _check_range(name, number, minimum, maximum)
    return number


def env_float(name: str, default: float, *, minimum: float | None = None, maximum: float | None = None) -> float:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ImproperlyConfigured(f"{name}={value!r} must be a finite number")
    _check_range(name, number, minimum, maximum)
    return number


def _check_range(name: str, number: float, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} must be >= {minimum}")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name}={number} must be <= {maximum}")


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_secret(name: str, default: str | None = None) -> str | None:
    """Read ``NAME`` or the contents of the file named by ``NAME_FILE`` (not both)."""
    direct = _raw(name)
    path = _raw(f"{name}_FILE")
    if direct and path:
        raise ImproperlyConfigured(f"set either {name} or {name}_FILE, not both")
    if path:
        try:
            return Path(path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={path!r} cannot be read: {exc.strerror}") from None
    return direct or default


def database_from_url(url: str, *, base_dir: Path) -> dict:
    """Translate ``sqlite:///path`` or ``postgres://user:pass@host:port/db`` into a DATABASES entry."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        raw_path = unquote(parts.path)
        # sqlite:///relative.db -> "/relative.db"; sqlite:////abs/path.db -> "//abs/path.db"
        path = raw_path[1:] if raw_path.startswith("/") else raw_path
        if not path:
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no SQLite file")
        name = Path(path) if Path(path).is_absolute() else base_dir / path
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": name,
            # Web and worker processes write concurrently: WAL plus a busy timeout avoids "locked".
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"},
        }
    if parts.scheme in {"postgres", "postgresql", "pgsql"}:
        database = unquote(parts.path.lstrip("/"))
        if not database:
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no database")
        options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": database,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "OPTIONS": options,
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL={url!r}: scheme {parts.scheme!r} is not supported (use sqlite or postgres)"
    )


def local_secret(path: Path) -> str:
    """A secret kept in ``path``, made there (readable by its owner only) the first time it is asked for.

    A class hosted on a laptop needs a real secret key without anyone having to make one: it is
    generated once and stays the same across restarts, so nothing signed before a restart breaks.
    """
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ImproperlyConfigured(f"{path} cannot be read: {exc.strerror}") from None
    secret = secrets.token_urlsafe(50)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process of the site made it a moment ago
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(secret + "\n")
    return secret
