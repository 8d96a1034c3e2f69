"""The copy of an Office file its readers read: every character of the document's text escaped for Markdown.

PaddleOCR's converter (and docx2python, which the DOCX fallback uses) writes a document's text into Markdown and
table HTML as it finds it, beside its own tags: a cell holding ``<script>alert(4)</script>`` came out as a live
element inside ``<td>``. The readers cannot be told to escape, so the text is escaped where they read it: in the
package's XML, each text node (Word's ``w:t``, DrawingML's ``a:t`` in slides, charts and shapes, a sheet's
shared and inline strings ``t`` and values ``v``, a chart's cached values, an equation's ``m:t``) and each sheet's
name is replaced by ``ocr_platform.core.markup.escape_text`` of itself. The libraries then hand over
``&lt;script&gt;``, which every reader of the Markdown shows as ``<script>``; a number holds no character that
changes. An external hyperlink whose target is not ``http(s)``, ``mailto`` or ``#`` (a ``javascript:`` link)
points at ``#`` instead.

Only XML parts whose bytes hold something to escape (``&``, a CDATA section, a ``]`` before ``(``, ``[``, ``:``) or a
hyperlink are parsed (lxml, entities and network off); the others are copied as they are. A part that cannot be
parsed is refused with ``UnreadablePart``: no reader may then see its text unescaped.

>>> _escaped_xml(b'<w:p xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
...              b"<w:r><w:t>&lt;b&gt;Tea &amp; cake&lt;/b&gt;</w:t></w:r></w:p>").split(b"<w:r>")[1]
b'<w:t>&amp;lt;b&amp;gt;Tea &amp;amp; cake&amp;lt;/b&amp;gt;</w:t></w:r></w:p>'
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from pathlib import Path

from ocr_platform.core.markup import escape_text

#: The text elements (by local name) whose content a reader puts in its Markdown.
_TEXT_ELEMENTS = frozenset({"t", "v"})
_NEEDS_ESCAPE = re.compile(rb"&|<!\[CDATA\[|\][(\[:]|Target=\"|<(?:\w+:)?sheet\b")
_SAFE_TARGET = re.compile(r"^(?:https?:|mailto:|#)", re.IGNORECASE)
_HYPERLINK = "/relationships/hyperlink"


class UnreadablePart(ValueError):
    """An XML part of the package that lxml cannot parse (the readers could not either)."""


def escaped_package(source: Path, target: Path, content_types: Callable[[bytes], bytes] | None = None) -> None:
    """Write the Office file at ``source`` to ``target`` with its text escaped (``content_types`` rewrites
    ``[Content_Types].xml`` on the way, as ``ocr_platform.document.office`` does for a macro-enabled twin)."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as copy:
        for info in original.infolist():
            data = original.read(info.filename)
            name = info.filename.lower()
            if name == "[content_types].xml":
                data = content_types(data) if content_types else data
            elif name.endswith((".xml", ".rels")) and _NEEDS_ESCAPE.search(data):
                data = _escaped_xml(data)
            copy.writestr(info, data)


def _escaped_xml(data: bytes) -> bytes:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, strip_cdata=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as err:
        raise UnreadablePart(str(err)) from None
    changed = False
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        local = etree.QName(element).localname
        if local in _TEXT_ELEMENTS and element.text:
            element.text = escape_text(element.text)
            changed = True
        elif local == "sheet" and element.get("name"):
            element.set("name", escape_text(element.get("name", "")))
            changed = True
        elif local == "Relationship" and element.get("Type", "").endswith(_HYPERLINK) and not _SAFE_TARGET.match(element.get("Target", "")):
            element.set("Target", "#")
            changed = True
    if not changed:
        return data
    tree = root.getroottree()
    return etree.tostring(tree, xml_declaration=True, encoding=tree.docinfo.encoding or "UTF-8", standalone=tree.docinfo.standalone)
