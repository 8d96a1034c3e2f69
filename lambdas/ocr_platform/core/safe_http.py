"""Outbound HTTP(S) that cannot be pointed at the platform's own network (an SSRF guard).

The platform makes requests to URLs its users give it: it POSTs webhooks to a job's callback URL and
GETs documents submitted by URL. Left unguarded, such a URL could make a Lambda (inside the account's
network, holding an IAM role) reach what only the platform should: the instance metadata service
(``169.254.169.254``, ``fd00:ec2::254``), VPC-private services (``10.0.0.0/8`` ...), or itself on
loopback. Every request here therefore

- checks the URL's syntax under a ``UrlPolicy`` (``check_url``: https only on deployed stages, no
  ``user:pass@``, a sane port and length);
- resolves the host once and refuses it if ANY address it resolves to is not public
  (``allowed_addresses``);
- connects to the address it checked, never to the name again, so a DNS answer that changes between the
  check and the connection (DNS rebinding) cannot slip a private address in; TLS still verifies the
  certificate against the real host name (SNI and hostname check);
- re-checks every redirect target the same way before connecting to it;
- bounds the whole exchange: one total deadline (a server that trickles bytes hits it) and a cap on the
  body's size, read in chunks and never past the cap.

Callers see ``BlockedUrlError`` (the policy refused the URL: a caller's mistake to report) or
``HttpFailure`` (the request could not complete), never a urllib3 exception. The checks and the errors live in
``ocr_platform.core.url_policy``; this module runs the exchange (``request``) and re-exports them, so callers
import everything from here.

>>> check_url("http://example.com/doc.pdf", UrlPolicy.PUBLIC_HTTPS)
Traceback (most recent call last):
...
ocr_platform.core.url_policy.BlockedUrlError: URL http://example.com/doc.pdf must use https (plain http is refused)
>>> check_url("https://example.com:8443/a?b=1", UrlPolicy.PUBLIC_HTTPS).port
8443
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import BinaryIO

import urllib3
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import NewConnectionError, SSLError
from urllib3.exceptions import TimeoutError as Urllib3TimeoutError

from ocr_platform.core.url_policy import (
    MAX_URL_LENGTH,
    BlockedUrlError,
    FailureKind,
    HttpFailure,
    UrlPolicy,
    allowed_addresses,
    ascii_host,
    check_url,
    display_url,
    refusal_reason,
)

__all__ = [
    "MAX_URL_LENGTH",
    "REDIRECT_STATUSES",
    "USER_AGENT",
    "BlockedUrlError",
    "FailureKind",
    "HttpFailure",
    "HttpResponse",
    "UrlPolicy",
    "allowed_addresses",
    "check_url",
    "display_url",
    "refusal_reason",
    "request",
]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "ocr-platform"
_CHUNK_BYTES = 64 * 1024
# Headers that carry the caller's credentials: not forwarded when a redirect leaves the original origin.
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


@dataclass(frozen=True)
class HttpResponse:
    """A completed exchange.

    Attributes:
        status: the final response's status code (a 3xx when redirects were not followed).
        headers: the final response's headers, names lower-case (repeated headers joined by ", ").
        body: the body (at most ``max_bytes``); ``b""`` when it was written to a ``sink``.
        url: the final URL, after redirects.
        elapsed_seconds: wall time of the whole exchange.
    """

    status: int
    headers: dict[str, str]
    body: bytes
    url: str
    elapsed_seconds: float


# -- the exchange ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Clock:
    """The one deadline of a whole exchange."""

    started: float
    timeout_seconds: float

    @property
    def deadline(self) -> float:
        return self.started + self.timeout_seconds

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self, what: str) -> float:
        """Seconds left; ``HttpFailure("timeout")`` if none."""
        left = self.remaining()
        if left <= 0:
            raise self.expired(what)
        return left

    def expired(self, what: str) -> HttpFailure:
        return HttpFailure(f"{what} did not complete within {self.timeout_seconds:g}s", "timeout")


@dataclass(frozen=True)
class _Target:
    """One hop's checked URL, as the connection needs it."""

    url: str
    scheme: str
    host: str  # ASCII (IDNA) host name or IP literal, no brackets
    port: int
    path: str  # path and query, percent-encoded

    @classmethod
    def of(cls, url: str, policy: UrlPolicy) -> _Target:
        split = check_url(url, policy)
        assert split.hostname is not None  # check_url refuses a URL without a host
        host = ascii_host(split.hostname, display_url(url))
        path = urllib.parse.quote(split.path or "/", safe="/%:@!$&'()*+,;=-._~")
        if split.query:
            path += "?" + urllib.parse.quote(split.query, safe="/%:@!$&'()*+,;=-._~?")
        return cls(url=url, scheme=split.scheme, host=host, port=split.port or (443 if split.scheme == "https" else 80), path=path)

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def _ca_bundle() -> str | None:
    """certifi's CA bundle when it is installed, else None: the system's trust store."""
    try:
        import certifi
    except ImportError:
        return None
    return str(certifi.where())


def _pool(target: _Target, address: str) -> urllib3.HTTPConnectionPool:
    """A one-connection pool to ``address`` that speaks to ``target.host`` (SNI and certificate check)."""
    if target.scheme == "https":
        return urllib3.HTTPSConnectionPool(
            host=address,
            port=target.port,
            maxsize=1,
            retries=False,
            server_hostname=target.host,
            assert_hostname=target.host,
            cert_reqs="CERT_REQUIRED",
            ca_certs=_ca_bundle(),
        )
    return urllib3.HTTPConnectionPool(host=address, port=target.port, maxsize=1, retries=False)


def _failure(err: Exception, what: str, clock: _Clock) -> HttpFailure:
    """An urllib3 / socket error as the ``HttpFailure`` callers handle."""
    if clock.remaining() <= 0:
        return clock.expired(what)
    if isinstance(err, NewConnectionError):  # before the timeouts: urllib3 derives it from ConnectTimeoutError
        return HttpFailure(f"{what}: could not connect ({err})", "unreachable")
    if isinstance(err, Urllib3TimeoutError | TimeoutError):
        return HttpFailure(f"{what}: timed out ({err})", "timeout")
    if isinstance(err, SSLError):
        return HttpFailure(f"{what}: TLS failed ({err})", "unreachable")
    return HttpFailure(f"{what}: {type(err).__name__}: {err}", "unreachable")


def _send(
    method: str, target: _Target, addresses: list[str], body: bytes | None, headers: dict[str, str], clock: _Clock
) -> tuple[urllib3.HTTPConnectionPool, urllib3.BaseHTTPResponse]:
    """Send the request to the first of ``addresses`` that accepts a connection; return the open response."""
    what = f"{method} {display_url(target.url)}"
    for index, address in enumerate(addresses):
        left = clock.check(what)
        pool = _pool(target, address)
        try:
            response = pool.urlopen(
                method,
                target.path,
                body=body,
                headers=headers,
                retries=False,
                redirect=False,
                assert_same_host=False,
                timeout=urllib3.Timeout(connect=left, read=left),
                preload_content=False,
                decode_content=True,
                release_conn=False,
            )
        except NewConnectionError as err:
            pool.close()
            if index + 1 < len(addresses) and clock.remaining() > 0:
                continue  # e.g. an IPv6 address where the network has no IPv6 route: try the next one
            raise _failure(err, what, clock) from err
        except (Urllib3Error, OSError) as err:
            pool.close()
            raise _failure(err, what, clock) from err
        return pool, response
    raise AssertionError("allowed_addresses returns at least one address")


def _read_body(response: urllib3.BaseHTTPResponse, what: str, clock: _Clock, max_bytes: int, sink: BinaryIO | None) -> bytes:
    """Read the body in chunks, at most ``max_bytes`` of it, before the deadline."""
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > max_bytes:
        raise HttpFailure(f"{what}: the body is {int(declared)} bytes, over the {max_bytes}-byte limit", "too_large")
    # A read blocked on a silent server would outlive the deadline: cut the socket when it passes.
    watchdog = threading.Timer(clock.check(what), _cut, args=(response,))
    watchdog.daemon = True
    watchdog.start()
    kept = bytearray()
    total = 0
    try:
        while True:
            try:
                chunk = _read_some(response, min(_CHUNK_BYTES, max_bytes - total + 1))
            except (Urllib3Error, OSError) as err:
                raise _failure(err, what, clock) from err
            clock.check(what)  # also turns the empty read after a cut into a timeout, not a short body
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise HttpFailure(f"{what}: the body is over the {max_bytes}-byte limit", "too_large")
            if sink is not None:
                sink.write(chunk)
            else:
                kept += chunk
    finally:
        watchdog.cancel()
    return bytes(kept)


def _read_some(response: urllib3.BaseHTTPResponse, amount: int) -> bytes:
    """What the socket has, up to ``amount`` bytes (``read1``, urllib3 >= 2.3); an older urllib3, as an AWS
    Lambda runtime may bundle, waits for ``amount`` bytes instead, each read still under the read timeout."""
    read1 = getattr(response, "read1", None)
    return bytes(read1(amount) if read1 is not None else response.read(amount))


def _cut(response: urllib3.BaseHTTPResponse) -> None:
    """End a read blocked on a silent server: ``shutdown`` (urllib3 >= 2.3), else the socket's own."""
    try:
        shutdown = getattr(response, "shutdown", None)
        if shutdown is not None:
            shutdown()
            return
        sock = getattr(getattr(response, "_connection", None), "sock", None)
        if sock is not None:
            sock.shutdown(socket.SHUT_RD)
    except (ValueError, RuntimeError, OSError):
        pass  # already closed: nothing left to cut


def _redirect_location(response: urllib3.BaseHTTPResponse, current_url: str) -> str | None:
    """The absolute URL a redirect response points to, or None if it is not a redirect."""
    location = response.headers.get("location")
    if response.status not in REDIRECT_STATUSES or not location:
        return None
    return urllib.parse.urljoin(current_url, location.strip())


def request(
    method: str,
    url: str,
    *,
    policy: UrlPolicy,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_seconds: float,
    max_redirects: int = 0,
    max_bytes: int = 64 * 1024,
    sink: BinaryIO | None = None,
) -> HttpResponse:
    """Make one request under ``policy``, within ``timeout_seconds`` in all, reading at most ``max_bytes``.

    Redirects are followed (GET only, at most ``max_redirects``, each target checked like ``url``); with
    ``max_redirects=0`` a 3xx is returned as the response. With a ``sink`` the body is written there and
    ``HttpResponse.body`` is ``b""``. Raises ``BlockedUrlError`` (refused URL or address, redirects
    included) or ``HttpFailure`` (DNS, connection, TLS, timeout, ``too_large``, ``redirects``), whose
    reason starts with the method and the URL (``display_url``) of the hop that failed.

    >>> request("GET", "https://10.0.0.1/", policy=UrlPolicy.PUBLIC_HTTPS, timeout_seconds=5)
    Traceback (most recent call last):
    ...
    ocr_platform.core.url_policy.BlockedUrlError: URL https://10.0.0.1/ names a private address the platform never connects to
    """
    clock = _Clock(started=time.monotonic(), timeout_seconds=timeout_seconds)
    method = method.upper()
    caller_headers = {k: v for k, v in (headers or {}).items() if k.lower() != "host"}
    if not any(k.lower() == "user-agent" for k in caller_headers):
        caller_headers["User-Agent"] = USER_AGENT
    first = _Target.of(url, policy)
    target, via = first, ""
    redirects = 0
    while True:
        what = f"{method} {display_url(target.url)}"
        try:
            addresses = allowed_addresses(target.host, target.port, policy)
        except BlockedUrlError as err:
            raise BlockedUrlError(f"{via}{err}") from err
        except HttpFailure as err:
            raise HttpFailure(f"{what}: {err.reason}", err.kind) from err
        sent = caller_headers if target.origin == first.origin else {k: v for k, v in caller_headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
        pool, response = _send(method, target, addresses, body, {**sent, "Host": target.host_header}, clock)
        try:
            location = _redirect_location(response, target.url) if method == "GET" and max_redirects > 0 else None
            if location is None:
                data = _read_body(response, what, clock, max_bytes, sink)
                headers_out = {name.lower(): response.headers[name] for name in response.headers}
                return HttpResponse(status=response.status, headers=headers_out, body=data, url=target.url, elapsed_seconds=time.monotonic() - clock.started)
        finally:
            response.close()
            pool.close()
        redirects += 1
        if redirects > max_redirects:
            raise HttpFailure(f"{method} {display_url(url)} redirected more than {max_redirects} times", "redirects")
        via = f"{what} redirected to {display_url(location)}: "
        try:
            target = _Target.of(location, policy)
        except BlockedUrlError as err:
            raise BlockedUrlError(f"{via}{err}") from err
