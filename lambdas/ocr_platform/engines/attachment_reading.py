"""An email's attachments, each read by its own reader and route: a PDF by its text layer or OCR, an image by OCR, an
Office, OpenDocument, HTML or text file from its content, an attached message as a message.

``ocr_platform.engines.native_reading`` hands each attachment part (``NativePage.attachment``, from
``ocr_platform.document.email_input.mail_pages``) here. Its bytes are written to a file and told by their bytes,
as any upload (``ocr_platform.document.intake.file_type``): a file read from its content is read as its own job
would read it (its pictures by the job's engine), a PDF or image by the job's engine (``predict``, with the job's
language and options). Every page it gives is marked with the part it came from (``part``: ``attachment 1:
invoice.pdf``). An attachment the platform cannot read (an unsupported type, a damaged or encrypted file, an
attached file nested past ``MAX_NESTING``) is left out and named in an ``attachments_unread`` warning.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ocr_platform.core.errors import JobError
from ocr_platform.core.results import Page, ResultWarning
from ocr_platform.document.intake import IntakeLimits, file_type, read_native
from ocr_platform.document.native_pages import NativePage
from ocr_platform.engines import Engine

#: A result warning's ``code`` when attachments of an email were not read.
ATTACHMENTS_UNREAD = "attachments_unread"
#: How deep an email attached as a file (inside an attachment of an attachment …) is opened.
MAX_NESTING = 3


@dataclass
class Attachments:
    """What reading an email's attachments gave besides pages: the engine's warnings, and the parts not read."""

    warnings: list[ResultWarning] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    engine_info: Any = None

    def warning(self) -> ResultWarning | None:
        if not self.unread:
            return None
        return {"code": ATTACHMENTS_UNREAD, "requested": f"{len(self.unread)} attachments", "ran": "left out",
                "reason": "; ".join(self.unread)[:1000],
                "message": f"{len(self.unread)} attachment(s) could not be read and are not in the result: {'; '.join(self.unread)[:300]}."}


def read_attachment(unit: NativePage, *, engine: Engine, language: str, options: dict[str, Any], limits: IntakeLimits,
                    read_unit: Callable[[NativePage], Page], found: Attachments, depth: int = 0) -> list[Page]:
    """The pages of the attachment ``unit``, each marked with its ``part``; ``[]`` (and ``found.unread``) when it
    cannot be read."""
    label = unit.part or f"part {unit.number}"
    data = unit.attachment or b""
    if not data:
        found.unread.append(f"{label} (empty)")
        return []
    with tempfile.TemporaryDirectory(prefix="attachment-") as tmp:
        path = Path(tmp) / "attachment"
        path.write_bytes(data)
        try:
            kind = file_type(path, limits)
            if kind.native:
                pages = _native_pages(path, limits, read_unit, found, label, depth, engine=engine, language=language, options=options)
            else:
                output = engine.predict(path, language=language, options=options)
                found.engine_info = found.engine_info or output.engine
                found.warnings.extend(w for w in output.warnings if w not in found.warnings)
                found.unread.extend(f"{label} page {f['page']} ({f['code']})" for f in output.pages_failed)
                pages = list(output.pages)
        except JobError as err:
            found.unread.append(f"{label} ({err.code})")
            return []
    for page in pages:
        page["part"] = f"{label} > {page['part']}" if page.get("part") and page.get("part") != "message" else label
        page["part_page"] = page["page"]
    return pages


def _native_pages(path: Path, limits: IntakeLimits, read_unit: Callable[[NativePage], Page], found: Attachments, label: str,
                  depth: int, **engine: Any) -> list[Page]:
    native, units = read_native(path, pages=None, limits=limits)
    found.warnings.extend(w for w in native.notes.warnings if w not in found.warnings)
    pages: list[Page] = []
    for unit in units:
        if unit.attachment is None:
            page = read_unit(unit)
            if unit.part:
                page["part"] = unit.part
            pages.append(page)
        elif depth + 1 >= MAX_NESTING:
            found.unread.append(f"{label} > {unit.part} (nested too deeply)")
        else:
            pages.extend(read_attachment(unit, limits=limits, read_unit=read_unit, found=found, depth=depth + 1, **engine))
    return pages
