"""What PaddleOCR's converter leaves out of a DOCX, added to its Markdown: each picture's alt text beside the
picture, and the document's comments after its text.

Both are read from the copy whose text is escaped (``ocr_platform.document.office_text``) with lxml (entities and
network off): a picture's alt text is its drawing's ``wp:docPr`` ``descr`` (else ``title``), an attribute, escaped
here; a comment is a ``w:comment`` of ``word/comments.xml``, its author (an attribute, escaped here) and its text.
The converter writes pictures as ``<img src="images/…">`` placeholders in the order their drawings stand in the
body; when it wrote as many as the body has pictures, each alt text follows its picture (``Alt text: …``, on a line
of its own, or after a ``<br>`` inside a table cell), else the alt texts follow the text. Comments come last, one
paragraph each: ``Comment (Author): text``.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from ocr_platform.core.markup import escape_text

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_PLACEHOLDER = re.compile(r'<img src="images/[^"]+">')


def with_extras(escaped: Path, markdown: str) -> str:
    """``markdown`` (the converter's, of the DOCX at ``escaped``) with its pictures' alt texts and its comments."""
    try:
        with zipfile.ZipFile(escaped) as archive:
            body = _xml(archive, "word/document.xml")
            comments = _xml(archive, "word/comments.xml")
    except (zipfile.BadZipFile, OSError, KeyError):
        return markdown
    if body is not None:
        markdown = _with_alt_texts(markdown, _alt_texts(body))
    notes = _comments(comments) if comments is not None else []
    return "\n\n".join(part for part in [markdown, *notes] if part)


def _xml(archive: zipfile.ZipFile, name: str) -> Any:
    from lxml import etree

    if name not in archive.namelist():
        return None
    try:
        return etree.fromstring(archive.read(name), etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    except etree.XMLSyntaxError:
        return None


def _alt_texts(body: Any) -> list[str]:
    """Each picture's alt text in body order ('' for none)."""
    found = []
    for drawing in body.iter(f"{{{_WP}}}inline", f"{{{_WP}}}anchor"):
        if next(drawing.iter(f"{{{_A}}}blip"), None) is None:
            continue
        properties = drawing.find(f"{{{_WP}}}docPr")
        text = "" if properties is None else (properties.get("descr") or properties.get("title") or "")
        found.append(" ".join(text.split()))
    return found


def _with_alt_texts(markdown: str, alts: list[str]) -> str:
    if not any(alts):
        return markdown
    places = list(_PLACEHOLDER.finditer(markdown))
    if len(places) != len(alts):
        return "\n\n".join([markdown, *(f"Alt text: {escape_text(alt)}" for alt in alts if alt)])
    out, position = [], 0
    for match, alt in zip(places, alts, strict=True):
        out.append(markdown[position: match.end()])
        position = match.end()
        if alt:
            in_table = markdown.count("<table", 0, match.start()) > markdown.count("</table>", 0, match.start())
            out.append(f"{'<br>' if in_table else chr(10) * 2}Alt text: {escape_text(alt)}")
    out.append(markdown[position:])
    return "".join(out)


def _comments(root: Any) -> list[str]:
    found = []
    for comment in root.iter(f"{{{_W}}}comment"):
        text = " ".join(" ".join("".join(t.text or "" for t in p.iter(f"{{{_W}}}t")) for p in comment.iter(f"{{{_W}}}p")).split())
        if text:
            author = " ".join((comment.get(f"{{{_W}}}author") or "").split())
            found.append(f"Comment ({escape_text(author)}): {text}" if author else f"Comment: {text}")
    return found
