"""S3's checks of a browser upload (a POST with a signed policy), which moto's server does not make.

A presigned POST is only as safe as S3's enforcement of its policy: the jobs API hands a browser a form for
one key, one content type and a size range, and S3 refuses any upload that strays from them. moto stores
whatever is posted, so the local stack puts this WSGI middleware in front of moto: for a form POST to a
bucket that carries a ``policy`` it checks what S3 checks and answers S3's error documents:

- the signature (SigV4 over the base64 policy, with the signing key of the credential it names; a SigV2
  form is refused, as S3 refuses it on buckets created since June 2020);
- the policy's expiration;
- every condition: exact matches (``{"key": ...}``, ``["eq", "$field", ...]``), ``starts-with``, and
  ``content-length-range`` against the file's size;
- every form field the upload sends is covered by a condition (apart from the policy, the signature, the
  file and ``x-ignore-*``), as S3 requires.

Anything else passes through to moto untouched.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from xml.sax.saxutils import escape

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
_UNSIGNED_FIELDS = {"policy", "x-amz-signature", "file"}


class PostPolicyError(Exception):
    def __init__(self, status: str, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = f"AWS4{secret}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def check_post_policy(bucket: str, fields: Mapping[str, str], file_size: int, *, secrets: Mapping[str, str], now: datetime | None = None) -> None:
    """Raise ``PostPolicyError`` where S3 would refuse this upload (``fields`` with lower-case names)."""
    if "awsaccesskeyid" in fields:  # a Signature Version 2 form: S3 takes only SigV4 on buckets made since 2020
        raise PostPolicyError("400 Bad Request", "InvalidRequest",
                              "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.")
    policy_b64 = fields.get("policy", "")
    try:
        policy = json.loads(base64.b64decode(policy_b64))
    except ValueError:
        raise PostPolicyError("400 Bad Request", "InvalidPolicyDocument", "Invalid Policy: Invalid JSON.") from None
    access_key, date, region, service, _ = (fields.get("x-amz-credential", "") + "/////").split("/", 4)
    secret = secrets.get(access_key)
    expected = hmac.new(_signing_key(secret or "", date, region, service), policy_b64.encode(), hashlib.sha256).hexdigest()
    if secret is None or not hmac.compare_digest(expected, fields.get("x-amz-signature", "")):
        raise PostPolicyError("403 Forbidden", "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")
    expiration = datetime.fromisoformat(str(policy.get("expiration", "")).replace("Z", "+00:00"))
    if expiration <= (now or datetime.now(UTC)):
        raise PostPolicyError("403 Forbidden", "AccessDenied", "Invalid according to Policy: Policy expired.")
    values = {**fields, "bucket": bucket}
    covered: set[str] = set()
    for condition in policy.get("conditions", []):
        if isinstance(condition, dict):
            [(name, value)] = condition.items()
            condition = ["eq", f"${name}", value]
        operator, subject, *rest = condition
        if operator == "content-length-range":
            low, high = int(subject), int(rest[0])
            if file_size > high:
                raise PostPolicyError("400 Bad Request", "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size")
            if file_size < low:
                raise PostPolicyError("400 Bad Request", "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")
            continue
        name = str(subject).lstrip("$").lower()
        covered.add(name)
        actual = values.get(name, "")
        if (operator == "eq" and actual != rest[0]) or (operator == "starts-with" and not actual.startswith(rest[0])):
            raise PostPolicyError("403 Forbidden", "AccessDenied",
                                  f"Invalid according to Policy: Policy Condition failed: {json.dumps(condition)}")
    extra = sorted(n for n in fields if n not in covered and n not in _UNSIGNED_FIELDS and not n.startswith("x-ignore-"))
    if extra:
        raise PostPolicyError("403 Forbidden", "AccessDenied",
                              f"Invalid according to Policy: Extra input fields: {', '.join(extra)}")


def enforce_post_policies(app: WsgiApp, *, secrets: Mapping[str, str]) -> WsgiApp:
    """``app`` (moto's WSGI application) behind S3's checks of POST-policy uploads."""
    from werkzeug.formparser import parse_form_data

    def middleware(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        content_type = environ.get("CONTENT_TYPE", "")
        bucket = environ.get("PATH_INFO", "").strip("/")
        if environ.get("REQUEST_METHOD") != "POST" or not content_type.startswith("multipart/form-data") or not bucket or "/" in bucket:
            return app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        probe = {**environ, "wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body))}
        _, form, files = parse_form_data(probe)
        fields = {name.lower(): value for name, value in form.items()}
        if "policy" in fields:
            upload = files.get("file")
            size = len(upload.read()) if upload is not None else 0
            try:
                check_post_policy(bucket, fields, size, secrets=secrets)
            except PostPolicyError as err:
                document = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{err.code}</Code>'
                            f"<Message>{escape(err.message)}</Message></Error>").encode()
                start_response(err.status, [("Content-Type", "application/xml"), ("Content-Length", str(len(document)))])
                return [document]
        environ["wsgi.input"], environ["CONTENT_LENGTH"] = io.BytesIO(body), str(len(body))
        return app(environ, start_response)

    return middleware


def moto_server_with_post_policies(ip_address: str, port: int, *, secrets: Mapping[str, str]) -> Any:
    """moto's threaded server with :func:`enforce_post_policies` in front of its application."""
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    class Server(ThreadedMotoServer):
        def _server_entry(self) -> None:
            app = enforce_post_policies(DomainDispatcherApplication(create_backend_app), secrets=secrets)
            self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
            self._server_ready_event.set()
            self._server.serve_forever()

    return Server(ip_address=ip_address, port=port, verbose=False)
