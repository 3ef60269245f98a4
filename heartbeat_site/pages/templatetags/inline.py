"""``{% inline_script "js/theme.js" %}``: a small script of static/ written into the page itself.

The two scripts that must run before the first paint (the theme, the font re-shaping) are under 1 KB each;
as files they cost a phone on classroom Wi-Fi a request each, both holding up the first paint. Inline they
arrive with the HTML. The file stays the one source (and the one the tests and linters read).
"""

from __future__ import annotations

import functools

from django import template
from django.conf import settings
from django.contrib.staticfiles import finders
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


def script_text(path: str) -> str:
    found = finders.find(path)
    if not found:
        raise template.TemplateSyntaxError(f"inline_script: no static file {path!r}")
    with open(found, encoding="utf-8") as source:
        text = source.read()
    if "</script" in text.lower():
        raise template.TemplateSyntaxError(f"inline_script: {path!r} holds '</script', which would end the element")
    return text


_cached_text = functools.lru_cache(maxsize=16)(script_text)


@register.simple_tag
def inline_script(path: str) -> SafeString:
    text = script_text(path) if settings.DEBUG else _cached_text(path)  # files change while developing
    return format_html("<script>{}</script>", mark_safe(text))
