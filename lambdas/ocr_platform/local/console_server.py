"""The web console on the local stack: the repository's ``console/`` files, served as CloudFront serves them
from the console bucket, with the ``config.json`` that points them at the local jobs API and at moto's
Cognito (whose server answers the browser's cross-origin calls as Cognito does)."""

from __future__ import annotations

import json
import mimetypes
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ocr_platform.inputs.console_publish import CONSOLE_DIR

#: What the deployed distribution adds to every answer (its response headers policy), kept here too.
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "Cache-Control": "no-store",
}


class ConsoleServer:
    """Serves ``console/`` and ``config.json`` on ``127.0.0.1:port``."""

    def __init__(self, port: int, config: Mapping[str, Any], directory: Path = CONSOLE_DIR) -> None:
        self.directory = directory
        self.config = dict(config)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> str:
        threading.Thread(target=self._server.serve_forever, name="local-console", daemon=True).start()
        return self.url

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def file(self, path: str) -> tuple[int, str, bytes]:
        name = path.split("?", 1)[0].lstrip("/") or "index.html"
        if name == "config.json":
            return 200, "application/json", json.dumps(self.config).encode()
        target = (self.directory / name).resolve()
        if self.directory.resolve() not in target.parents or not target.is_file():
            return 404, "text/plain", b"Not Found"
        return 200, mimetypes.guess_type(target.name)[0] or "application/octet-stream", target.read_bytes()


def _handler(console: ConsoleServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            status, content_type, body = console.file(self.path)
            self.send_response(status)
            for name, value in {"Content-Type": content_type, "Content-Length": str(len(body)), **SECURITY_HEADERS}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args: Any) -> None:
            return None

    return Handler
