"""``{% module_preloads "js/run-page.js" ... %}``: a ``<link rel="modulepreload">`` for every module
the given entry modules import, directly or not.

Without them a browser finds a module's imports only once that module has arrived and been
parsed: the run page's 45 modules came in five rounds, and on a phone (a slow CPU parses each
round late) the last arrived a second after the first. With the whole list in the HTML they are
all requested at once, beside the entry scripts.

Imports are read from the files as served (``static/``): static ``import ... from "./x.js"``,
``export ... from`` and ``import "./x.js"``; a dynamic ``import()`` is left to load when it is
needed. The hrefs are the unhashed paths the browser resolves those relative imports to.
"""

from __future__ import annotations

import functools
import posixpath
import re

from django import template
from django.conf import settings
from django.contrib.staticfiles import finders
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

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


@register.simple_tag
def module_preloads(*entries: str) -> SafeString:
    modules = module_graph(entries) if settings.DEBUG else _cached_graph(entries)  # files change while developing
    prefix = settings.STATIC_URL if settings.STATIC_URL.startswith("/") else "/" + settings.STATIC_URL
    return format_html_join("\n", '<link rel="modulepreload" href="{}">', ((prefix + module,) for module in modules))

