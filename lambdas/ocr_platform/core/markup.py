"""Document text kept as text wherever a result holds markup (Markdown, table HTML): escaped where it becomes markup.

A result's Markdown is read by people and rendered as HTML by others (a frontend, a wiki, a notebook), so every
character that came from a document (a cell, a paragraph, a title, an alt text, a line the engine read) must
render as the character it is, never as an element or a link. ``escape_text`` does that for text placed in
Markdown or in an HTML table: ``&``, ``<`` and ``>`` as HTML entities, and a ``]`` that would close a Markdown
link (``](``, ``][``, ``]:``) as ``&#93;``. CommonMark decodes entities in text and in HTML blocks alike and never
reads them as structure, so the same escaped text is right in a paragraph, a heading and a ``<td>``; a reader of
the plain text gets it back with ``html.unescape`` (``ocr_platform.document.native_pages.plain_text``).

``escape_foreign_tags`` is for Markdown written by a library that puts document text in it unescaped beside its
own few tags (PaddleX's layout Markdown): all but the ``allowed`` tags is escaped as text, so the library's tables
and pictures stay while no text of the page becomes an element.

>>> escape_text('<script>alert(1)</script> & [click](javascript:alert(2))')
'&lt;script&gt;alert(1)&lt;/script&gt; &amp; [click&#93;(javascript:alert(2))'
>>> escape_foreign_tags('<table><tr><td><img src=x onerror=alert(1)></td></tr></table>', {"table", "tr", "td"})
'<table><tr><td>&lt;img src=x onerror=alert(1)&gt;</td></tr></table>'
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection

_LINK_CLOSE = re.compile(r"\](?=[(\[:])")
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)\b([^<>]*)>")


def escape_text(text: str) -> str:
    """``text`` as Markdown (or HTML) that renders as exactly these characters: no element, no link."""
    return _LINK_CLOSE.sub("&#93;", html.escape(text, quote=False))


def escape_foreign_tags(markdown: str, allowed: Collection[str]) -> str:
    """``markdown`` escaped (``escape_text``) but for its ``allowed`` tags (by name, any case) whose attributes hold
    no event handler or script URL."""
    kept: list[tuple[int, int]] = []
    for match in _TAG.finditer(markdown):
        attributes = match.group(3).lower()
        if match.group(2).lower() in allowed and not re.search(r"\bon\w+\s*=|javascript:|vbscript:", attributes):
            kept.append((match.start(), match.end()))
    parts: list[str] = []
    position = 0
    for start, end in kept:
        parts.append(escape_text(markdown[position:start]))
        parts.append(markdown[start:end])
        position = end
    parts.append(escape_text(markdown[position:]))
    return "".join(parts)
