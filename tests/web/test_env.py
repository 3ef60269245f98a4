"""Settings helpers fail loudly, naming the variable."""

import re

import pytest
from django.core.exceptions import ImproperlyConfigured

from heartbeat_site.env import database_from_url, env_bool, env_float, env_int, env_list, env_secret


def test_env_bool_accepts_usual_spellings(monkeypatch):
    monkeypatch.setenv("X_FLAG", "Yes")
    assert env_bool("X_FLAG", False) is True
    monkeypatch.setenv("X_FLAG", "off")
    assert env_bool("X_FLAG", True) is False


def test_env_bool_rejects_garbage_naming_the_variable(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG='maybe' is not a boolean"):
        env_bool("X_FLAG", False)


def test_env_int_range_and_type(monkeypatch):
    monkeypatch.setenv("X_NUM", "12")
    assert env_int("X_NUM", 1, minimum=1) == 12
    monkeypatch.setenv("X_NUM", "0")
    with pytest.raises(ImproperlyConfigured, match="X_NUM=0 must be >= 1"):
        env_int("X_NUM", 1, minimum=1)
    monkeypatch.setenv("X_NUM", "twelve")
    with pytest.raises(ImproperlyConfigured, match="not a whole number"):
        env_int("X_NUM", 1)


def test_env_float_rejects_nan(monkeypatch):
    monkeypatch.setenv("X_F", "nan")
    with pytest.raises(ImproperlyConfigured, match="finite"):
        env_float("X_F", 1.0)


def test_env_list_and_default(monkeypatch):
    monkeypatch.delenv("X_LIST", raising=False)
    assert env_list("X_LIST", ["a"]) == ["a"]
    monkeypatch.setenv("X_LIST", " a.example, b.example ,,")
    assert env_list("X_LIST", []) == ["a.example", "b.example"]


def test_secret_from_file(monkeypatch, tmp_path):
    secret = tmp_path / "key"
    secret.write_text("s3cr3t\n")
    monkeypatch.delenv("X_SECRET", raising=False)
    monkeypatch.setenv("X_SECRET_FILE", str(secret))
    assert env_secret("X_SECRET") == "s3cr3t"
    monkeypatch.setenv("X_SECRET", "also")
    with pytest.raises(ImproperlyConfigured, match="either X_SECRET or X_SECRET_FILE"):
        env_secret("X_SECRET")


def test_secret_file_missing(monkeypatch, tmp_path):
    monkeypatch.delenv("X_SECRET", raising=False)
    monkeypatch.setenv("X_SECRET_FILE", str(tmp_path / "nope"))
    with pytest.raises(ImproperlyConfigured, match="cannot be read"):
        env_secret("X_SECRET")


def test_database_urls(tmp_path):
    sqlite = database_from_url("sqlite:///db.sqlite3", base_dir=tmp_path)
    assert sqlite["NAME"] == tmp_path / "db.sqlite3"
    absolute = database_from_url("sqlite:////var/tmp/x.db", base_dir=tmp_path)
    assert str(absolute["NAME"]) == "/var/tmp/x.db"
    pg = database_from_url("postgres://u:p%40ss@db.example:5433/heart?sslmode=require", base_dir=tmp_path)
    assert (pg["ENGINE"], pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == (
        "django.db.backends.postgresql",
        "heart",
        "u",
        "p@ss",
        "db.example",
        "5433",
    )
    assert pg["OPTIONS"] == {"sslmode": "require"}
    with pytest.raises(ImproperlyConfigured, match="scheme 'mysql' is not supported"):
        database_from_url("mysql://x/y", base_dir=tmp_path)


def test_runstack_rejects_an_unknown_asgi_server_before_starting_anything(monkeypatch):
    from django.core.management import CommandError, call_command

    monkeypatch.setenv("HEARTBEAT_ASGI_SERVER", "gunicorn")
    monkeypatch.setattr(
        "heartbeat_site.live.management.commands.runstack.ensure_redis", lambda: pytest.fail("Redis started")
    )
    with pytest.raises(CommandError, match="HEARTBEAT_ASGI_SERVER='gunicorn' is not an ASGI server"):
        call_command("runstack")


def test_make_run_uses_the_configured_redis_and_names_one_that_does_not_answer():
    """`make run` (manage.py runstack) never replaces a Redis someone configured: a REDIS_URL that does
    not answer is an error naming it, one that answers is used as it is."""
    from heartbeat_site import embedded_redis

    server = embedded_redis.start_embedded()
    try:
        assert embedded_redis.ensure_redis({"REDIS_URL": server.url}) == (server.url, None)
    finally:
        server.stop()
    silent = f"redis://127.0.0.1:{embedded_redis.free_port()}/0"
    with pytest.raises(RuntimeError, match=re.escape(f"REDIS_URL={silent} does not answer")):
        embedded_redis.ensure_redis({"REDIS_URL": silent})


def test_make_run_without_redis_url_takes_the_local_one_else_starts_its_own(monkeypatch):
    from heartbeat_site import embedded_redis

    local = embedded_redis.start_embedded()
    try:
        monkeypatch.setattr(embedded_redis, "DEFAULT_URL", local.url)  # a Redis on the usual port
        assert embedded_redis.ensure_redis({}) == (local.url, None)
    finally:
        local.stop()
    monkeypatch.setattr(embedded_redis, "DEFAULT_URL", f"redis://127.0.0.1:{embedded_redis.free_port()}/0")  # none
    url, embedded = embedded_redis.ensure_redis({})
    try:
        assert embedded is not None and url == embedded.url and embedded_redis.redis_answers(url)
    finally:
        embedded.stop()
    assert not embedded_redis.redis_answers(url)  # stopped with the stack
