"""A page's modules: ``{% module_import_map "js/pages/run.js" %}`` in the head and, on the run and comparison
pages, ``{% scripts_after_first_paint ... %}`` at the end of the body (a page of a few modules loads its one
entry with a plain ``<script type="module">``).

Modules import each other by bare specifiers, ``import { x } from "#js/store.js"`` for ``static/js/store.js``:
node (the tests, ``tsc``) resolves them through package.json's ``imports``, a browser through the import map
this writes into the page's head. The map names each module the page can reach at the URL the static files
storage gives it: in development the plain ``/static/js/store.js``; with hashed static files (``make
classroom``, production) ``/static/js/store.<hash>.js``, so every module comes from a hashed URL, cached for
good, and a new version of one is never mixed with an old cached one. A vendor package (the builder's YAML
parser) is imported by its name, and its own modules' relative imports are mapped from their unhashed URLs.
(Django's own rewriting of module imports, tried, stops collectstatic with a missing-file error on these
modules.) A module missing from the map fails to load in development as it would in a class.

Without preloads a browser finds a module's imports only once that module has arrived and been parsed: the
run page's 45 modules came in five rounds, and on a phone (a slow CPU parses each round late) the last arrived
a second after the first. So the whole graph is asked for at once (``<link rel="modulepreload">`` for each),
but after the page's first paint (``js/after-first-paint.js``): asked for in the head, they shared a phone's
link with the stylesheets that paint awaits and held it up by a second or more.
"""

from __future__ import annotations

import functools
import json
import posixpath
import re

from django import template
from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import staticfiles_storage
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from heartbeat_site.pages.templatetags.inline import inline_script

register = template.Library()

#: A module of static/js is imported as "#js/" and its path there ("#js/store.js" is static/js/store.js), as
#: package.json "imports" tells node.
PREFIX = "#"
#: The packages the modules import by name, and their entry module (scripts/copy-vendor.mjs copies them there);
#: node and tsc find the same package in node_modules.
VENDOR_MODULES = {"yaml": "vendor/yaml/index.js"}
#: What a module loads when it is evaluated: ``import ... from``, ``export ... from`` and ``import "..."``.
STATIC_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;'"]*?(?:\bfrom\s*)?["']([^"']+)["']""", re.MULTILINE)
#: What it may load later: ``import()``, and ``import.meta.resolve()`` (a worker's script); these also match the
#: ``import("...")`` types of its JSDoc comments, modules the page loads anyway.
LATER_IMPORT = re.compile(r"""\bimport(?:\.meta\.resolve)?\s*\(\s*["']([^"']+)["']""")


def static_path(specifier: str, importer: str) -> str | None:
    """The static path of the module ``importer`` (a static path) names by ``specifier``: a bare "#js/..." one,
    a vendor package's name, or a path relative to it (a vendor package's modules import each other so)."""
    if specifier.startswith(PREFIX):
        return specifier.removeprefix(PREFIX)
    if specifier in VENDOR_MODULES:
        return VENDOR_MODULES[specifier]
    if specifier.startswith(("./", "../")):
        return posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    return None


def imports_of(path: str, patterns: tuple[re.Pattern[str], ...]) -> list[tuple[str, str]]:
    """``(specifier, static path)`` of each module the static file ``path`` (e.g. ``js/pages/run.js``) names
    through ``patterns``; none for a path that is not a static file (the browser reports that one)."""
    found = finders.find(path)
    if not found:
        return []
    with open(found, encoding="utf-8") as source:
        text = source.read()
    named = [(spec, static_path(spec, path)) for pattern in patterns for spec in pattern.findall(text)]
    return [(spec, module) for spec, module in named if module is not None]


def module_graph(entries: tuple[str, ...], later: bool = False) -> dict[str, str]:
    """Every module reachable from ``entries`` (the entries left out) by what each loads when it is evaluated,
    and with ``later`` by what it may load later too: its specifier -> its static path, in the order first met
    (a relative specifier is keyed by its path's URL, which is what the browser looks up)."""
    patterns = (STATIC_IMPORT, LATER_IMPORT) if later else (STATIC_IMPORT,)
    prefix = settings.STATIC_URL if settings.STATIC_URL.startswith("/") else "/" + settings.STATIC_URL
    graph: dict[str, str] = {}
    seen = set(entries)
    queue = list(entries)
    while queue:
        for specifier, module in imports_of(queue.pop(0), patterns):
            graph.setdefault(specifier if not specifier.startswith(".") else prefix + module, module)
            if module not in seen:
                seen.add(module)
                queue.append(module)
    return graph


_cached_graph = functools.lru_cache(maxsize=64)(module_graph)


def graph(entries: tuple[str, ...], later: bool = False) -> dict[str, str]:
    """``module_graph``, read again on every page while developing (the files change), else once."""
    return module_graph(entries, later) if settings.DEBUG else _cached_graph(entries, later)


def import_map(entries: tuple[str, ...]) -> dict[str, str]:
    """Each specifier the modules of ``entries`` use -> the URL the module is served at (a URL the browser finds by
    itself, as a vendor module's relative import in development, is left out)."""
    imports = {specifier: staticfiles_storage.url(module) for specifier, module in graph(entries, True).items()}
    return {specifier: served for specifier, served in imports.items() if specifier != served}


@register.simple_tag
def module_import_map(*entries: str) -> SafeString:
    """``<script type="importmap">`` for the page's head: it must come before any module is asked for. None for
    entries that import nothing."""
    imports = import_map(entries)
    if not imports:
        return mark_safe("")
    text = json.dumps({"imports": imports}, separators=(",", ":"))  # static paths hold no "</"
    return format_html('<script type="importmap">{}</script>\n', mark_safe(text))


@register.simple_tag
def scripts_after_first_paint(*entries: str, classic: str = "") -> SafeString:
    """The plan ``js/after-first-paint.js`` (written in after it) follows once the page has painted: a preload for
    every module the entries load, then ``classic`` (a plain script the modules use) and the entry modules in
    order."""
    scripts = [{"src": staticfiles_storage.url(classic), "module": False}] if classic else []
    scripts += [{"src": staticfiles_storage.url(entry), "module": True} for entry in entries]
    modules = dict.fromkeys(graph(entries).values())
    plan = {"preload": [staticfiles_storage.url(module) for module in modules], "scripts": scripts}
    text = json.dumps(plan, separators=(",", ":"))  # static paths hold no "</"
    return format_html('<script type="application/json" id="after-first-paint">{}</script>\n{}', mark_safe(text),
                       inline_script("js/after-first-paint.js"))
