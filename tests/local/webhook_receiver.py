"""Webhook receivers for the local stack's tests: an HTTP server on 127.0.0.1 that records every POST and
answers as it is told (fail the first N, answer slowly), and the URL of a receiver that is down."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ocr_platform.outputs.webhook_signing import EVENT_ID_HEADER, SIGNATURE_HEADER, verify


@dataclass(frozen=True)
class ReceivedPost:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def event_id(self) -> str:
        return self.headers.get(EVENT_ID_HEADER, "")

    @property
    def job_id(self) -> str:
        return str(json.loads(self.body).get("job_id", ""))

    def signed_by(self, secret: bytes) -> bool:
        return verify(secret, self.body, self.headers.get(SIGNATURE_HEADER, ""))


class WebhookReceiver:
    """Records each POST; answers 500 to the first ``fail_first`` POSTs of each event (``X-OCR-Event-Id``), and
    answers every POST after ``delay_seconds``, with ``answer`` as the body."""

    def __init__(self, *, fail_first: int = 0, delay_seconds: float = 0.0, answer: bytes = b"") -> None:
        self.fail_first = fail_first
        self.delay_seconds = delay_seconds
        self.answer = answer
        self.posts: list[ReceivedPost] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                post = ReceivedPost(self.path, dict(self.headers.items()), body, time.time())
                with receiver._lock:
                    receiver.posts.append(post)
                    failing = len(receiver.of_event(post.event_id)) <= receiver.fail_first
                time.sleep(receiver.delay_seconds)
                self.send_response(500 if failing else 200)
                self.send_header("Content-Length", str(len(receiver.answer)))
                self.end_headers()
                self.wfile.write(receiver.answer)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def of_event(self, event_id: str) -> list[ReceivedPost]:
        return [post for post in self.posts if post.event_id == event_id]

    def wait_for(self, count: int, timeout: float = 60.0) -> list[ReceivedPost]:
        """The POSTs once there are at least ``count`` of them; ``AssertionError`` after ``timeout``."""
        deadline = time.monotonic() + timeout
        while len(self.posts) < count:
            assert time.monotonic() < deadline, f"{len(self.posts)} of {count} webhook POSTs after {timeout} s"
            time.sleep(0.1)
        return list(self.posts)


@contextmanager
def receiver_that_is_down() -> Iterator[str]:
    """The URL of a port on 127.0.0.1 where nothing listens (a receiver that is down)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}/hook"
