"""Outlook messages (``.msg``) read into the same ``Mail`` as an ``.eml`` (``ocr_platform.document.email_input``).

A ``.msg`` is an OLE compound file (MS-OXMSG) whose streams hold the message's properties: ``__substg1.0_XXXXYYYY``
is property ``XXXX`` of type ``YYYY`` (``001F`` UTF-16 text, ``001E`` 8-bit text, ``0102`` bytes). The message
has a subject (``0037``), a sender (``0C1A``, ``0C1F``/``5D01``), display To and Cc lines (``0E04``, ``0E03``), a
sent time (``0039`` in the fixed-size property stream), a text body (``1000``) and an HTML body (``1013``).
Each attachment is a storage ``__attach_version1.0_#n`` with its bytes (``3701``), its file name (``3707``, else
``3704``, ``3001``), content type (``370E``) and content id (``3712``, for a picture the HTML shows inline); an
attached Outlook message is a storage (``3701000D``) laid out like the top one, read the same way. olefile reads
the streams; nothing in the file runs.

extract-msg (the Python library made for ``.msg``) reads the same properties, but needs a package published as
source only (``red-black-tree-mod``; the CPU image installs wheels only) and brings oletools and 0.6 s of import
time; the properties a reader needs are these few.
"""

from __future__ import annotations

import datetime
import struct
from pathlib import Path
from typing import Any

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.document.email_input import MAX_DEPTH, Attachment, Mail

_ATTACH = "__attach_version1.0_#"


def is_msg(streams: set[str]) -> bool:
    """Whether an OLE file's streams are an Outlook message's."""
    return "__properties_version1.0" in streams and any(name.startswith("__substg1.0_") for name in streams)


def read_msg(path: Path) -> Mail:
    """The Outlook message at ``path``."""
    import olefile

    try:
        with olefile.OleFileIO(str(path)) as ole:
            return _mail(ole, "", 0)
    except (OSError, ValueError, EOFError, struct.error, olefile.olefile.OleFileError) as err:
        raise JobError(ErrorCode.CORRUPT_DOCUMENT, f"The Outlook message cannot be read: {err}") from None


def _mail(ole: Any, root: str, depth: int) -> Mail:
    def text(prop: str) -> str:
        return _text(ole, root, prop)

    sender = text("0C1A")
    address = text("5D01") or text("0C1F")
    headers = [("From", f"{sender} <{address}>" if sender and address and address not in sender else sender or address),
               ("To", text("0E04")), ("Cc", text("0E03")), ("Date", _sent(ole, root)), ("Subject", text("0037"))]
    html = _bytes(ole, root, "10130102") or text("1013").encode("utf-8")
    mail = Mail([(name, " ".join(value.split())) for name, value in headers if value.strip()], text=text("1000"),
                html=_decode_html(html) if html else "")
    parts = [part for part in root.split("/") if part]
    level = len(parts)
    storages = sorted({entry[level] for entry in ole.listdir(streams=True, storages=True)
                       if entry[:level] == parts and len(entry) > level and entry[level].startswith(_ATTACH)})
    for storage in storages:
        base = f"{root}{storage}/"
        name = _text(ole, base, "3707") or _text(ole, base, "3704") or _text(ole, base, "3001") or storage
        if ole.exists(f"{base}__substg1.0_3701000D"):
            if depth < MAX_DEPTH:
                nested = _mail(ole, f"{base}__substg1.0_3701000D/", depth + 1)
                subject = dict(nested.headers).get("Subject", "")
                mail.attachments.append(Attachment(_text(ole, base, "3001") or subject or "attached message", "message/rfc822", message=nested))
            continue
        data = _bytes(ole, base, "37010102")
        content_id = _text(ole, base, "3712").strip("<>")
        content_type = _text(ole, base, "370E") or "application/octet-stream"
        if content_id and content_type.startswith("image/") and content_id in mail.html:
            mail.inline[content_id] = (content_type, data)
        else:
            mail.attachments.append(Attachment(name, content_type, data))
    return mail


def _bytes(ole: Any, root: str, tag: str) -> bytes:
    name = f"{root}__substg1.0_{tag}"
    return bytes(ole.openstream(name).read()) if ole.exists(name) else b""


def _text(ole: Any, root: str, prop: str) -> str:
    unicode = _bytes(ole, root, f"{prop}001F")
    if unicode:
        return unicode.decode("utf-16-le", errors="replace").rstrip("\x00")
    return _bytes(ole, root, f"{prop}001E").decode("cp1252", errors="replace").rstrip("\x00")


def _decode_html(data: bytes) -> str:
    from ocr_platform.document.plain_text import decode

    return decode(data) or data.decode("latin-1")


def _sent(ole: Any, root: str) -> str:
    """The message's sent time (``PR_CLIENT_SUBMIT_TIME``, a FILETIME in the fixed-size property stream), in UTC."""
    name = f"{root}__properties_version1.0"
    data = bytes(ole.openstream(name).read()) if ole.exists(name) else b""
    header = 32 if not root else 24
    for at in range(header, len(data) - 15, 16):
        tag = struct.unpack_from("<I", data, at)[0]
        if tag in (0x00390040, 0x0E060040):
            filetime = struct.unpack_from("<Q", data, at + 8)[0]
            if filetime:
                moment = datetime.datetime(1601, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(microseconds=filetime // 10)
                return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return ""
