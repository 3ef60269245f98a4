"""Every page's modules through its import map (heartbeat_site/pages/templatetags/modules.py): the modules import
each other by bare specifiers ("#js/store.js"), which a browser resolves only through the page's map. In
development the map names the plain files; in a class (``make classroom``: hashed static files, collected) the
hashed ones, so a phone caches every module for good. A page whose map lacks a module its scripts import would
load none of them."""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from heartbeat_site.pages.cards import builtin_scenarios
from heartbeat_site.pages.templatetags.modules import VENDOR_MODULES as VENDOR

from .conftest import post_json

pytestmark = pytest.mark.django_db

STATIC = Path(__file__).resolve().parents[2] / "static"
# import "x"; import|export ... from "x"; import("x"); import.meta.resolve("x")
SPECIFIER = re.compile(r"""(?:^\s*import\s*|^\s*(?:import|export)\b[^;'"]*?\bfrom\s*"""
                       r"""|\bimport(?:\.meta\.resolve)?\(\s*)["']([^"']+)["']""", re.MULTILINE)


def page_urls(api) -> list[str]:
    run = post_json(api, "/api/runs", {"lesson": "kubelet-crash-walkthrough"}).json()
    return ["/", "/myths/", "/build/", "/observe/", f"/scenarios/{builtin_scenarios()[0].name}/", f"/runs/{run['id']}/"]


def entry_and_map(html: str) -> tuple[str, dict[str, str]]:
    """The page's one entry module (a module script, or the last script of its after-first-paint plan) and its
    import map (none: an empty one)."""
    plan = re.search(r'<script type="application/json" id="after-first-paint">(.*?)</script>', html)
    entries = ([s["src"] for s in json.loads(plan.group(1))["scripts"] if s["module"]] if plan
               else re.findall(r'<script type="module" src="([^"]+)"', html))
    assert len(entries) == 1, entries
    found = re.search(r'<script type="importmap">(.*?)</script>', html)
    return entries[0], json.loads(found.group(1))["imports"] if found else {}


def unmapped(imports: dict[str, str], entry: str, hashed: bool) -> list[str]:
    """What the page's modules import, from ``entry`` (its static path) on, that the browser would not find
    through the map at the URL it should: a bare specifier always needs the map; a vendor module's relative
    import only when the files are hashed (without the map it would come from the unhashed file)."""
    missing, seen, queue = [], {entry}, [entry]
    while queue:
        module = queue.pop()
        for specifier in SPECIFIER.findall((STATIC / module).read_text(encoding="utf-8")):
            if specifier.startswith("."):
                target = posixpath.normpath(posixpath.join(posixpath.dirname(module), specifier))
                key = "/static/" + target
                if hashed and key not in imports:
                    missing.append(f"{module} imports {specifier}")
            else:
                target = VENDOR.get(specifier) or specifier.removeprefix("#js/")
                target = target if target.startswith("vendor/") else "js/" + target
                key = specifier
                if key not in imports:
                    missing.append(f"{module} imports {specifier}")
                elif not hashed and imports[key] != "/static/" + target:
                    missing.append(f"{specifier} -> {imports[key]}")
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return missing


def test_in_development_each_pages_map_names_every_module_its_entry_reaches_at_its_plain_url(api, dispatched):
    for url in page_urls(api):
        entry, imports = entry_and_map(api.get(url).content.decode())
        assert re.fullmatch(r"/static/js/pages/[a-z]+\.js", entry), (url, entry)
        assert unmapped(imports, entry.removeprefix("/static/"), hashed=False) == [], url


def test_in_a_class_each_pages_map_and_entry_name_hashed_files_that_were_collected(api, dispatched, settings,
                                                                                   tmp_path):
    settings.DEBUG = False
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {**settings.STORAGES,
                         "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}}
    call_command("collectstatic", interactive=False, verbosity=0)
    manifest = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    plain = {"/static/" + hashed: "/static/" + name for name, hashed in manifest.items()}
    for url in page_urls(api):
        entry, imports = entry_and_map(api.get(url).content.decode())
        assert url == "/observe/" or "#js/api.js" in imports, (url, imports)  # the observe page imports nothing
        for specifier, served in [("entry", entry), *imports.items()]:
            assert re.fullmatch(r"/static/(js|vendor)/[\w/.-]+\.[0-9a-f]{12}\.js", served), (url, specifier, served)
            assert (tmp_path / served.removeprefix("/static/")).is_file(), (url, served)
        assert unmapped(imports, plain[entry].removeprefix("/static/"), hashed=True) == [], url
