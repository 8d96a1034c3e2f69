"""The signature on every webhook POST, and how a receiver checks it.

The platform signs ``<timestamp>.<body>`` with HMAC-SHA256 under the stage's secret (AWS Secrets Manager)
and sends ``X-OCR-Signature: t=<timestamp>,v1=<hex digest>``. A receiver recomputes the digest over the
raw body it got, compares in constant time, and refuses a timestamp more than ``TOLERANCE_SECONDS`` away
from its own clock, so a captured request cannot be replayed later. The README shows the same check in
Python and in JavaScript.

>>> header = sign(b"secret", b'{"job_id":"j1"}', timestamp=1_800_000_000)
>>> header
't=1800000000,v1=184434709c77e7d0f000394b2e689749040bddd6044ddb8f2872a5e43b350dbe'
>>> verify(b"secret", b'{"job_id":"j1"}', header, now=1_800_000_100)
True
>>> verify(b"secret", b'{"job_id":"j2"}', header, now=1_800_000_100)      # another body
False
>>> verify(b"secret", b'{"job_id":"j1"}', header, now=1_800_000_900)      # replayed 15 min later
False
"""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "X-OCR-Signature"
EVENT_ID_HEADER = "X-OCR-Event-Id"
ATTEMPT_HEADER = "X-OCR-Delivery-Attempt"
#: How far a signature's timestamp may be from the receiver's clock.
TOLERANCE_SECONDS = 300


def signature(secret: bytes, body: bytes, timestamp: int) -> str:
    """The hex HMAC-SHA256 of ``<timestamp>.<body>``."""
    return hmac.new(secret, str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()


def sign(secret: bytes, body: bytes, *, timestamp: int | None = None) -> str:
    """The ``X-OCR-Signature`` value for ``body`` at ``timestamp`` (default: now)."""
    when = int(time.time()) if timestamp is None else timestamp
    return f"t={when},v1={signature(secret, body, when)}"


def verify(secret: bytes, body: bytes, header: str, *, now: float | None = None, tolerance_seconds: int = TOLERANCE_SECONDS) -> bool:
    """Whether ``header`` is a valid signature of ``body`` made within ``tolerance_seconds`` of ``now``."""
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_seconds:
        return False
    return hmac.compare_digest(signature(secret, body, timestamp), parts.get("v1", ""))
