"""API Gateway's HTTP API with its JWT authorizer, for the local stack's jobs API.

moto keeps Cognito users and signs their tokens but serves no API: this module does what API Gateway does
in front of the deployed jobs API. It listens on a port, matches the stack's routes, verifies the
``Authorization: Bearer`` token as the JWT authorizer does (signature with the issuer's keys, issuer,
audience, expiry; a refusal is API Gateway's own 401 ``{"message":"Unauthorized"}`` and the function does
not run), then invokes the function synchronously with the payload 2.0 event
(``ocr_platform.local.events.http_api_event``) and answers with what it returned. CORS preflights are
answered for the configured origins, as the API's CORS configuration does.

The issuer's keys are moto's: moto signs every user pool's tokens with one RSA key, whose public JWKS ships
in the moto package (the deployed authorizer fetches the pool's JWKS from Cognito instead).
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from ocr_platform.inputs.jobs_api import ROUTES
from ocr_platform.local.events import http_api_event
from ocr_platform.local.invoke_api import RequestTooLargeError

if TYPE_CHECKING:
    from ocr_platform.local.lambda_runtime import LambdaRuntime

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 10 * 1024 * 1024


def moto_signing_keys() -> dict[str, Any]:
    """The JWKS of the key moto signs Cognito tokens with."""
    import moto.cognitoidp

    path = Path(moto.cognitoidp.__file__).parent / "resources" / "jwks-public.json.gz"
    return dict(json.loads(gzip.decompress(path.read_bytes())))


@dataclass(frozen=True)
class JwtAuthorizer:
    """An HTTP API JWT authorizer: a token is valid when its signature verifies with the issuer's keys, ``iss``
    is the issuer, ``aud`` (or an access token's ``client_id``) is an audience, and it has not expired."""

    issuer: str
    audience: Sequence[str]
    keys: dict[str, Any]

    def claims(self, authorization: str | None) -> dict[str, Any] | None:
        """The token's claims, or ``None`` when API Gateway would refuse it."""
        from joserfc import jwt
        from joserfc.errors import JoseError
        from joserfc.jwk import KeySet

        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        try:
            claims = dict(jwt.decode(token.strip(), KeySet.import_key_set(self.keys), algorithms=["RS256"]).claims)  # type: ignore[arg-type]
        except (JoseError, ValueError):
            return None
        audience = claims.get("aud") or claims.get("client_id")
        now = time.time()
        if claims.get("iss") != self.issuer or audience not in self.audience:
            return None
        if not isinstance(claims.get("exp"), (int, float)) or claims["exp"] <= now or claims.get("nbf", 0) > now:
            return None
        return claims


def _route(method: str, path: str) -> tuple[str, dict[str, str]] | None:
    for route in ROUTES:
        route_method, template = route.split(" ", 1)
        pattern = "^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template) + "$"
        if method == route_method and (match := re.match(pattern, path)):
            return route, match.groupdict()
    return None


class LocalHttpApi:
    """The jobs API on ``127.0.0.1:port`` in front of ``function`` in the local Lambda runtime."""

    def __init__(self, *, lambdas: LambdaRuntime, function: str, authorizer: JwtAuthorizer, port: int,
                 cors_origins: Sequence[str] = ()) -> None:
        self.lambdas = lambdas
        self.function = function
        self.authorizer = authorizer
        self.cors_origins = tuple(cors_origins)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> str:
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-http-api", daemon=True)
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        """One request, as API Gateway answers it: status, headers, body."""
        url = urlsplit(raw_path)
        origin = headers.get("origin")
        cors = {"Access-Control-Allow-Origin": origin, "Vary": "Origin"} if origin and origin in self.cors_origins else {}
        if method == "OPTIONS" and cors:
            return 204, {**cors, "Access-Control-Allow-Methods": "GET,POST", "Access-Control-Allow-Headers": "authorization,content-type",
                         "Access-Control-Max-Age": "600"}, b""
        matched = _route(method, url.path)
        if matched is None:
            return 404, {"Content-Type": "application/json", **cors}, b'{"message":"Not Found"}'
        claims = self.authorizer.claims(headers.get("authorization"))
        if claims is None:
            return 401, {"Content-Type": "application/json", "www-authenticate": "Bearer", **cors}, b'{"message":"Unauthorized"}'
        route_key, path_parameters = matched
        event = http_api_event(
            method, url.path, route_key=route_key, claims={k: str(v) for k, v in claims.items()},
            body=body.decode("utf-8", errors="replace") if body else None, query=dict(parse_qsl(url.query)) or None,
            path_parameters=path_parameters or None, headers=headers, request_id=str(uuid.uuid4()),
            time_epoch_ms=int(time.time() * 1000),
        )
        try:
            result = self.lambdas.invoke(self.function, event)
        except RequestTooLargeError as err:  # the event is over Lambda's 6 MB: the integration fails
            logger.warning("Jobs API function not invoked: %s", err)
            return 500, {"Content-Type": "application/json", **cors}, b'{"message":"Internal Server Error"}'
        if result.error is not None or not isinstance(result.payload, dict):
            logger.warning("Jobs API function failed: %s", result.error)
            return 500, {"Content-Type": "application/json", **cors}, b'{"message":"Internal Server Error"}'
        payload = result.payload
        answer_headers = {str(k): str(v) for k, v in (payload.get("headers") or {}).items()}
        return int(payload.get("statusCode", 200)), {**answer_headers, **cors}, str(payload.get("body") or "").encode()


def _handler(api: LocalHttpApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                status, headers, body = 413, {"Content-Type": "application/json"}, b'{"message":"Request Entity Too Large"}'
            else:
                request_headers = {name.lower(): value for name, value in self.headers.items()}
                status, headers, body = api.answer(self.command, self.path, request_headers, self.rfile.read(length))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_OPTIONS = _serve  # noqa: N815 - http.server naming

        def log_message(self, fmt: str, *args: Any) -> None:
            logger.debug("%s " + fmt, self.address_string(), *args)

    return Handler
