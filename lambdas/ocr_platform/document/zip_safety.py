"""ZIP containers opened safely: an Office file (DOCX, PPTX, XLSX) is a ZIP, checked here before any library reads it.

Only the central directory is read (no part is unpacked), and the file is refused with a ``JobError``:

- ``corrupt_document``: not a readable ZIP (truncated: its central directory is missing or damaged);
- ``archive_too_large``: a ZIP bomb, or simply too big to unpack in a processor's memory: more parts than
  ``max_entries``, parts declaring more than ``max_unpacked_bytes`` together, XML parts declaring more than
  ``max_xml_bytes`` (the libraries hold their trees in memory, about 26 times their size), or one part
  compressed more than ``max_ratio`` to 1. A part never unpacks to more than the size it declares (``zipfile`` stops there and fails
  its CRC check), so the declared sizes bound what reading the file costs.

>>> import io, zipfile
>>> buffer = io.BytesIO()
>>> with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
...     archive.writestr("word/document.xml", "<w:document/>")
>>> sorted(checked_names(buffer, ZipLimits()))
['word/document.xml']
>>> checked_names(io.BytesIO(buffer.getvalue()[:-30]), ZipLimits())
Traceback (most recent call last):
ocr_platform.core.errors.JobError: corrupt_document: The file is a damaged or truncated ZIP container (an Office file): File is not a zip file
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ocr_platform.core import defaults
from ocr_platform.core.errors import ErrorCode, JobError

#: Parts smaller than this may compress any amount (an empty sheet's XML is mostly repeated tags).
_RATIO_FLOOR_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ZipLimits:
    """What one ZIP container may unpack to (defaults: ``defaults.MAX_UNPACKED_BYTES``, ``MAX_ZIP_RATIO``, ``MAX_ZIP_ENTRIES``)."""

    max_unpacked_bytes: int = defaults.MAX_UNPACKED_BYTES
    max_ratio: int = defaults.MAX_ZIP_RATIO
    max_entries: int = defaults.MAX_ZIP_ENTRIES
    max_xml_bytes: int = defaults.MAX_UNPACKED_XML_BYTES


def checked_names(source: Path | IO[bytes], limits: ZipLimits) -> set[str]:
    """The part names of the ZIP at ``source`` once its central directory passes ``limits``; ``JobError`` if not."""
    try:
        with zipfile.ZipFile(source) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as err:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The file is a damaged or truncated ZIP container (an Office file): {err}") from None
    if len(infos) > limits.max_entries:
        raise JobError(ErrorCode.ARCHIVE_TOO_LARGE, f"The file holds {len(infos):,} parts; at most {limits.max_entries:,} are read.")
    total = sum(info.file_size for info in infos)
    if total > limits.max_unpacked_bytes:
        raise JobError(
            ErrorCode.ARCHIVE_TOO_LARGE,
            f"The file would unpack to {total:,} bytes; the limit is {limits.max_unpacked_bytes:,} (a ZIP bomb, or too large to read).",
        )
    xml = sum(info.file_size for info in infos if info.filename.lower().endswith((".xml", ".rels")))
    if xml > limits.max_xml_bytes:
        raise JobError(
            ErrorCode.ARCHIVE_TOO_LARGE,
            f"The file's XML parts would unpack to {xml:,} bytes; the limit is {limits.max_xml_bytes:,} (split the document).",
        )
    for info in infos:
        if info.file_size > _RATIO_FLOOR_BYTES and info.file_size > limits.max_ratio * max(info.compress_size, 1):
            raise JobError(
                ErrorCode.ARCHIVE_TOO_LARGE,
                f"The part {info.filename!r} is compressed {info.file_size // max(info.compress_size, 1):,} to 1; "
                f"more than {limits.max_ratio} to 1 is refused as a ZIP bomb.",
            )
    return {info.filename for info in infos}
