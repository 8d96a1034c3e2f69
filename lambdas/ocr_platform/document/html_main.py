"""An HTML page's main content, without its navigation and boilerplate, chosen by readability-lxml.

A page saved from the web holds menus, sidebars, language lists, cookie notices and footers around the article a
reader wants (markitdown's Wikipedia test page: "move to sidebar", "154 languages", "You are encouraged to create
an account"). readability-lxml (a well-kept port of Mozilla's Readability scoring, over lxml) picks the block of
the page that holds its main content. It is used only where a page shows boilerplate (``nav``, ``header``,
``footer``, ``aside``, a navigation or banner role, a ``sidebar``/``menu``/``navbar`` id or class) and only when
the main content keeps at least ``MIN_MAIN_SHARE`` of the page's words: a search results page, where Readability
keeps a hundredth of the text, is read whole, and a table-heavy datasheet without such markup is never scored.
A job's ``options.html`` ``page`` reads the whole page always (``ocr_platform.engines.options.HTML_CONTENT``).

>>> has_boilerplate(b'<html><body><nav><a href="/">Home</a></nav><p>Text</p></body></html>'), has_boilerplate(b"<p>Text</p>")
(True, False)
"""

from __future__ import annotations

import re

#: The least share of the page's words the main content must keep to be read instead of the whole page. Measured
#: on the two corpora (docs/performance/document-corpora.md) with readability-lxml 0.8.4: the Wikipedia page keeps
#: 50 % (its article), the blog 63 %, unstructured's page with scripts 85 %, and a search results page 1 %
#: (Readability's scoring misses its results, so it is read whole).
MIN_MAIN_SHARE = 0.4
_BOILERPLATE = re.compile(rb"<(?:nav|header|footer|aside)\b|role=[\"']?(?:navigation|banner|contentinfo)"
                          rb"|(?:id|class)=[\"'][^\"']*\b(?:sidebar|navbar|menu|footer|site-header)\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")


def has_boilerplate(data: bytes) -> bool:
    """Whether the page shows navigation or boilerplate markup."""
    return bool(_BOILERPLATE.search(data))


def main_content(data: bytes, whole_markdown: str) -> str | None:
    """The page's main content as HTML, or ``None`` when the page should be read whole (no boilerplate, nothing
    found, or too little of the page's words kept: ``MIN_MAIN_SHARE`` of ``whole_markdown``'s)."""
    if not has_boilerplate(data):
        return None
    from bs4.dammit import UnicodeDammit
    from readability import Document

    markup = UnicodeDammit(data, is_html=True).unicode_markup or ""
    try:
        summary = Document(markup).summary(html_partial=True)
    except Exception:  # noqa: BLE001 - Readability raises its own and lxml's errors on pages it cannot score
        return None
    kept = len(_WORD.findall(re.sub(r"<[^>]+>", " ", summary)))
    whole = len(_WORD.findall(whole_markdown))
    return summary if whole and kept >= MIN_MAIN_SHARE * whole else None
