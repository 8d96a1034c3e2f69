"""Email messages (``.eml``; Outlook's ``.msg`` in ``ocr_platform.document.email_msg``) told from their bytes and read
as one document: the message, then each attachment.

A file is an email when its first lines are RFC 5322 header fields (``Name: value``, folded lines allowed, an mbox
``From `` line before them) of which at least two are a message's own (``From``, ``To``, ``Subject``, ``Date``,
``Message-ID``, ``MIME-Version``, ``Received``, ``Return-Path``, ``Content-Type`` …). It is checked before HTML, so
a message whose body is HTML is read as a message, not as a page of MIME headers and base64.

Python's ``email`` package parses it (``policy.default``: headers decoded, bodies decoded from base64 and
quoted-printable into text in their charset). ``Mail`` is what both formats become: the headers a reader wants
(From, To, Cc, Date, Subject), the body (HTML preferred to plain text, as a mail client shows it), pictures the
HTML shows inline (``cid:`` references), and the attachments in order, a forwarded message (``message/rfc822``)
as a nested ``Mail``.

``mail_pages`` turns a ``Mail`` into the document's parts (``unit`` ``part``), each marked with where it came from
(``message``, ``attachment 1: invoice.pdf``, ``attachment 2: fwd.eml > attachment 1: scan.png``): the message
page (its headers as a small table, then its body: HTML through ``ocr_platform.document.html_input`` with its
inline pictures embedded, so OCR reads them, text escaped as paragraphs); an attachment as a page that holds its
bytes, read later by its own reader and route (``ocr_platform.engines.attachment_reading``); a nested message's
parts after it.

>>> looks_like_email(b"Return-Path: <a@b.c>\\nFrom: Ann <a@b.c>\\nSubject: Hi\\n\\nBody"), looks_like_email(b"Name: x\\nAge: 3\\n")
(True, False)
"""

from __future__ import annotations

import base64
import email
import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from typing import Any

from ocr_platform.core.markup import escape_text
from ocr_platform.document.native_pages import NativePage

_FIELD = re.compile(rb"^([!-9;-~]+):[ \t]?(.*)$")
_MAIL_FIELDS = frozenset({b"from", b"to", b"cc", b"subject", b"date", b"message-id", b"mime-version", b"received", b"return-path",
                          b"content-type", b"delivered-to", b"reply-to", b"in-reply-to", b"references", b"sender", b"x-mailer",
                          b"thread-topic", b"thread-index", b"dkim-signature", b"authentication-results", b"x-original-to"})
_SHOWN = ("From", "To", "Cc", "Date", "Subject")
_CID = re.compile(r"""(src\s*=\s*["']?)cid:([^"'\s>]+)""", re.IGNORECASE)
#: How deep forwarded messages may nest (each level is a message inside an attachment of the one above).
MAX_DEPTH = 5


@dataclass
class Attachment:
    """A file attached to a message: its name, content type and bytes; a forwarded message parsed as ``message``."""

    name: str
    content_type: str
    data: bytes = b""
    message: Mail | None = None


@dataclass
class Mail:
    """A message as its reader shows it."""

    headers: list[tuple[str, str]]
    text: str = ""
    html: str = ""
    inline: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # content id -> (content type, bytes)
    attachments: list[Attachment] = field(default_factory=list)


def looks_like_email(head: bytes) -> bool:
    """Whether the first bytes are a message's header block (see the module's docstring); a message saved as
    UTF-16 or UTF-32 is read as its text."""
    head = _narrow(head, cut=True)
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    if lines and lines[0].startswith(b"From "):
        lines = lines[1:]
    known = 0
    for line in lines[:-1] if len(head) >= 1024 else lines:  # the last line of a cut head may be cut
        if not line.strip():
            break
        if line[:1] in (b" ", b"\t"):
            continue  # a folded header line
        found = _FIELD.match(line)
        if not found:
            return False
        known += found.group(1).lower() in _MAIL_FIELDS
    return known >= 2


def read_eml(data: bytes, depth: int = 0) -> Mail:
    """The message in ``data`` (RFC 5322 / MIME)."""
    message = email.message_from_bytes(_narrow(data), policy=policy.default)
    return _mail(message, depth)


def _narrow(data: bytes, *, cut: bool = False) -> bytes:
    """``data`` as UTF-8 when it is UTF-16 or UTF-32 text (a byte-order mark, or every other byte zero); else as it is."""
    from ocr_platform.document.plain_text import decode, wide_encoding

    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (b"\x00" in data[:512] and wide_encoding(data)):
        text = decode(data, cut=cut)
        return text.encode("utf-8") if text is not None else data
    return data


def _mail(message: EmailMessage, depth: int) -> Mail:
    mail = Mail([(name, " ".join(str(message.get(name, "")).split())) for name in _SHOWN if message.get(name)])
    html_part = _body(message, "html")
    text_part = _body(message, "plain")
    mail.html = _content(html_part) if html_part is not None else ""
    mail.text = _content(text_part) if text_part is not None else ""
    for part in _leaves(message):
        if part is html_part or part is text_part:
            continue
        content_id = str(part.get("Content-ID", "")).strip().strip("<>")
        if content_id and part.get_content_maintype() == "image" and part.get_content_disposition() != "attachment":
            mail.inline[content_id] = (part.get_content_type(), part.get_payload(decode=True) or b"")
            continue
        if part.get_content_type() == "message/rfc822" or _is_child_message(part):
            inner = part.get_payload()
            nested = inner[0] if isinstance(inner, list) and inner else None
            name = part.get_filename() or str(nested.get("Subject", "forwarded message")) if nested is not None else "forwarded message"
            if nested is not None and depth < MAX_DEPTH:
                mail.attachments.append(Attachment(f"{name}", "message/rfc822", message=_mail(nested, depth + 1)))
            continue
        if part.get_content_disposition() in ("attachment", "inline") or part.get_filename():
            mail.attachments.append(Attachment(part.get_filename() or f"part{len(mail.attachments) + 1}", part.get_content_type(),
                                               part.get_payload(decode=True) or b""))
    return mail


def _leaves(message: Any) -> list[Any]:
    """The message's parts that are no container, a forwarded message counted as one (not opened here)."""
    if not message.is_multipart():
        return [message]
    found = []
    for part in message.iter_parts():
        if part.get_content_maintype() == "message" or not part.is_multipart():
            found.append(part)
        else:
            found.extend(_leaves(part))
    return found


def _is_child_message(part: Any) -> bool:
    return part.get_content_maintype() == "message" and isinstance(part.get_payload(), list)


def _body(message: EmailMessage, subtype: str) -> Any:
    try:
        return message.get_body(preferencelist=(subtype,))
    except (KeyError, LookupError):
        return None


def _content(part: Any) -> str:
    try:
        return str(part.get_content())
    except (LookupError, UnicodeError, KeyError, ValueError):  # an unknown charset: the bytes as Latin-1
        return (part.get_payload(decode=True) or b"").decode("latin-1")


def mail_pages(mail: Mail, *, where: str = "message", first: int = 1) -> tuple[list[NativePage], list[str]]:
    """The parts of ``mail`` as pages numbered from ``first``: the message, then each attachment (bytes for its
    reader) and a nested message's parts; and the names of attachments left out (nesting past ``MAX_DEPTH``)."""
    markdown, pictures = message_markdown(mail)
    pages = [NativePage(first, "part", markdown, None, pictures, part=where)]
    skipped: list[str] = []
    prefix = "" if where == "message" else f"{where} > "
    for index, attachment in enumerate(mail.attachments, start=1):
        label = f"{prefix}attachment {index}: {attachment.name}"
        if attachment.message is not None:
            nested, nested_skipped = mail_pages(attachment.message, where=label, first=first + len(pages))
            pages.extend(nested)
            skipped.extend(nested_skipped)
        else:
            pages.append(NativePage(first + len(pages), "part", "", None, part=label, attachment=attachment.data))
    return pages, skipped


def message_markdown(mail: Mail) -> tuple[str, dict[str, bytes]]:
    """The message page: its headers as a two-column table, then its body; and the pictures the body shows."""
    rows = "".join(f"<tr><th>{escape_text(name)}</th><td>{escape_text(value)}</td></tr>" for name, value in mail.headers)
    parts = [f"<table>{rows}</table>"] if rows else []
    if mail.html.strip():
        from ocr_platform.document.html_input import read_html

        body = read_html(_CID.sub(lambda m: m.group(1) + _data_uri(mail, m.group(2)), mail.html).encode("utf-8"))
        return "\n\n".join(part for part in [*parts, body.markdown] if part), dict(body.pictures)
    if mail.text.strip():
        parts.extend(escape_text(block.strip("\n")) for block in re.split(r"\n\s*\n", mail.text.replace("\r\n", "\n")) if block.strip())
    return "\n\n".join(part for part in parts if part), {}


def _data_uri(mail: Mail, content_id: str) -> str:
    found = mail.inline.get(content_id)
    if found is None:
        return "cid:" + content_id
    content_type, data = found
    return f"data:{content_type};base64,{base64.b64encode(data).decode()}"
