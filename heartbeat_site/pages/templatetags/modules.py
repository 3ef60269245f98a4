"""The run page's modules: ``{% module_import_map "js/run-page.js" ... %}`` in the head and
``{% scripts_after_first_paint ... %}`` at the end of the body.

Without preloads a browser finds a module's imports only once that module has arrived and been
parsed: the run page's 45 modules came in five rounds, and on a phone (a slow CPU parses each
round late) the last arrived a second after the first. So the whole graph is asked for at once
(``<link rel="modulepreload">`` for each), but after the page's first paint
(``js/after-first-paint.js``): asked for in the head, they shared a phone's link with the
stylesheets that paint awaits and held it up by a second or more.

Imports are read from the files as served (``static/``): static ``import ... from "./x.js"``,
``export ... from`` and ``import "./x.js"``; a dynamic ``import()`` is left to load when it is
needed.

With hashed static files (``make classroom``, production) a module's relative imports still name
the unhashed files (Django's own rewriting of module imports, tried, stops collectstatic with a
missing-file error on these modules), so the head carries an import map from each module's
unhashed URL to its hashed one: every module then comes from a hashed URL, cached for good, and a
new version of one is never mixed with an old cached one. The preloads name the hashed URLs the
map resolves to.
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

IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;'"]*?(?:\bfrom\s*)?["'](\.{1,2}/[^"']+)["']""", re.MULTILINE)


def imports_of(path: str) -> list[str]:
    """The static paths of the modules ``path`` (a static path, e.g. ``js/run-page.js``) imports; none
    for a path that is not a static file (the browser reports that one)."""
    found = finders.find(path)
    if not found:
        return []
    with open(found, encoding="utf-8") as source:
        text = source.read()
    base = posixpath.dirname(path)
    return [posixpath.normpath(posixpath.join(base, spec)) for spec in IMPORT.findall(text)]


def module_graph(entries: tuple[str, ...]) -> list[str]:
    """Every module reachable from ``entries``, the entries left out, in the order first met."""
    seen: dict[str, None] = dict.fromkeys(entries)
    queue = list(entries)
    while queue:
        for module in imports_of(queue.pop(0)):
            if module not in seen:
                seen[module] = None
                queue.append(module)
    return [module for module in seen if module not in entries]


_cached_graph = functools.lru_cache(maxsize=32)(module_graph)


def import_map(modules: list[str]) -> SafeString:
    """``<script type="importmap">`` from each module's unhashed URL to the URL it is served at; empty when
    they are the same (development serves the files as they are)."""
    prefix = settings.STATIC_URL if settings.STATIC_URL.startswith("/") else "/" + settings.STATIC_URL
    imports = {prefix + module: staticfiles_storage.url(module) for module in modules}
    imports = {plain: served for plain, served in imports.items() if plain != served}
    if not imports:
        return mark_safe("")
    text = json.dumps({"imports": imports}, separators=(",", ":"))  # static paths hold no "</"
    return format_html('<script type="importmap">{}</script>\n', mark_safe(text))


@register.simple_tag
def module_import_map(*entries: str) -> SafeString:
    """The import map alone, for the page's head: it must come before any module is asked for."""
    modules = module_graph(entries) if settings.DEBUG else _cached_graph(entries)  # files change while developing
    return import_map([*entries, *modules])


@register.simple_tag
def scripts_after_first_paint(*entries: str, classic: str = "") -> SafeString:
    """The plan ``js/after-first-paint.js`` (written in after it) follows once the page has painted: a preload for
    every module of the graph, then ``classic`` (a plain script the modules use) and the entry modules in order."""
    modules = module_graph(entries) if settings.DEBUG else _cached_graph(entries)
    scripts = [{"src": staticfiles_storage.url(classic), "module": False}] if classic else []
    scripts += [{"src": staticfiles_storage.url(entry), "module": True} for entry in entries]
    plan = {"preload": [staticfiles_storage.url(module) for module in modules], "scripts": scripts}
    text = json.dumps(plan, separators=(",", ":"))  # static paths hold no "</"
    return format_html('<script type="application/json" id="after-first-paint">{}</script>\n{}', mark_safe(text),
                       inline_script("js/after-first-paint.js"))
