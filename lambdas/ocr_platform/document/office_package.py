"""Which Office file a ZIP is, told from the package's own description rather than from fixed part names.

An Office Open XML package says what it holds: ``_rels/.rels`` names its main part (the ``officeDocument``
relationship) and ``[Content_Types].xml`` gives that part's content type (an ``Override``, else the ``Default`` of
its extension). So a DOCX whose main part is not at ``word/document.xml`` is still a DOCX. A package written as
Strict Open XML (ISO/IEC 29500 Strict; its relationship types start with ``http://purl.oclc.org/ooxml/``) is
told apart: most libraries read only the Transitional form that Word, PowerPoint and Excel save by default.

Both parts are parsed by lxml with entities and network access off. A package without them (a hand-made ZIP)
is told by its conventional main part, as before.

>>> kind_of("application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml")
'docx'
>>> kind_of("application/vnd.ms-excel.sheet.macroEnabled.main+xml"), kind_of("application/xml")
('xlsx', None)
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from dataclasses import dataclass
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError

#: The conventional main parts, for a package that does not describe itself.
CONVENTIONAL_PARTS = {"word/document.xml": "docx", "ppt/presentation.xml": "pptx", "xl/workbook.xml": "xlsx"}
_STRICT_PREFIX = "http://purl.oclc.org/ooxml/"
_OFFICE_DOCUMENT = re.compile(r"^(?:http://schemas\.openxmlformats\.org/officeDocument/2006|http://purl\.oclc\.org/ooxml/officeDocument)"
                              r"/relationships/officeDocument$")
#: Main-part content types (Transitional and Strict share them): documents, templates, shows, macro-enabled twins.
_KINDS = tuple(
    (re.compile(rf"^application/vnd\.(?:openxmlformats-officedocument\.{family}\.(?:{main})|ms-{ms}\.(?:{main})\.macroenabled)\.main\+xml$"), kind)
    for family, ms, main, kind in (
        ("wordprocessingml", "word", "document|template", "docx"),
        ("presentationml", "powerpoint", "presentation|slideshow|template", "pptx"),
        ("spreadsheetml", "excel", "sheet|template", "xlsx"),
    )
)


@dataclass(frozen=True)
class MainPart:
    """A package's main part: its ``kind`` (``docx``, ``pptx``, ``xlsx``), its part ``name``, and whether the
    package is written as Strict Open XML."""

    kind: str
    name: str
    strict: bool = False


def kind_of(content_type: str) -> str | None:
    """The Office kind of a main part's content type; ``None`` for any other."""
    lowered = content_type.strip().lower()
    return next((kind for pattern, kind in _KINDS if pattern.match(lowered)), None)


def main_part(archive: zipfile.ZipFile, names: set[str]) -> MainPart | None:
    """The package's main part, from ``_rels/.rels`` and ``[Content_Types].xml``; ``None`` when it is no Office
    file. ``corrupt_document`` when the package names a main part it does not hold."""
    rels = _xml(archive, "_rels/.rels", names)
    types = _xml(archive, "[Content_Types].xml", names)
    if rels is None or types is None:
        return next((MainPart(kind, part) for part, kind in CONVENTIONAL_PARTS.items() if part in names), None)
    target = None
    strict = False
    for relation in rels.iter("{*}Relationship"):
        if _OFFICE_DOCUMENT.match(relation.get("Type", "")) and relation.get("TargetMode") != "External":
            target = posixpath.normpath(relation.get("Target", "").lstrip("/"))
            strict = relation.get("Type", "").startswith(_STRICT_PREFIX)
            break
    if target is None:
        return next((MainPart(kind, part) for part, kind in CONVENTIONAL_PARTS.items() if part in names), None)
    kind = kind_of(_content_type(types, target))
    if kind is None:
        return None
    if target not in names:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The Office file names its main part {target!r} but does not hold it "
                       "(parts are missing); the file is damaged.")
    return MainPart(kind, target, strict)


def _content_type(types: Any, part: str) -> str:
    overrides = {o.get("PartName", "").lstrip("/").lower(): o.get("ContentType", "") for o in types.iter("{*}Override")}
    if part.lower() in overrides:
        return overrides[part.lower()]
    defaults = {d.get("Extension", "").lower(): d.get("ContentType", "") for d in types.iter("{*}Default")}
    return defaults.get(posixpath.splitext(part)[1].lstrip(".").lower(), "")


def _xml(archive: zipfile.ZipFile, name: str, names: set[str]) -> Any:
    """A package part parsed safely; ``None`` when absent or not XML."""
    from lxml import etree

    if name not in names:
        return None
    try:
        data = archive.read(name)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The part {name!r} of the Office file is damaged: {err}") from None
    try:
        return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    except etree.XMLSyntaxError:
        return None
