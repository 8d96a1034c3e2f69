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
``HttpFailure`` (the request could not complete), never a urllib3 exception.

>>> check_url("http://example.com/doc.pdf", UrlPolicy.PUBLIC_HTTPS)
Traceback (most recent call last):
...
ocr_platform.core.safe_http.BlockedUrlError: URL http://example.com/doc.pdf must use https (plain http is refused)
>>> check_url("https://example.com:8443/a?b=1", UrlPolicy.PUBLIC_HTTPS).port
8443
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import BinaryIO, Literal

import urllib3
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import NewConnectionError, SSLError
from urllib3.exceptions import TimeoutError as Urllib3TimeoutError

MAX_URL_LENGTH = 2048
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "ocr-platform"
_CHUNK_BYTES = 64 * 1024
# Headers that carry the caller's credentials: not forwarded when a redirect leaves the original origin.
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")  # RFC 6598 carrier-grade NAT
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: a NAT64 gateway would reach the embedded IPv4
_METADATA_ADDRESSES = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})

FailureKind = Literal["unreachable", "timeout", "too_large", "redirects"]
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class UrlPolicy(StrEnum):
    """Which URLs a request may go to.

    ``PUBLIC_HTTPS`` (deployed stages): https only, and every address the host resolves to must be public.
    ``LOCAL`` (the local test stack only): http or https, and loopback (``127.0.0.0/8``, ``::1``) is
    allowed too; every other address is refused exactly as under ``PUBLIC_HTTPS``.
    """

    PUBLIC_HTTPS = "public-https"
    LOCAL = "local"


class BlockedUrlError(ValueError):
    """The policy refuses the URL; the message says why and what to do instead."""


class HttpFailure(Exception):
    """The request could not complete: DNS failure, refused connection, timeout, TLS error, too many
    redirects or a body over the cap (``kind`` says which family; ``reason`` is the readable cause).

    >>> err = HttpFailure("GET https://example.com/ took longer than 5s", "timeout")
    >>> err.kind, str(err)
    ('timeout', 'GET https://example.com/ took longer than 5s')
    """

    def __init__(self, reason: str, kind: FailureKind) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind: FailureKind = kind


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


def display_url(url: str) -> str:
    """``url`` as messages and logs show it: no query or fragment (a presigned URL's signature stays out).

    >>> display_url("https://bucket.s3.amazonaws.com/scan.pdf?X-Amz-Signature=abc#p2")
    'https://bucket.s3.amazonaws.com/scan.pdf?…'
    >>> display_url("https://example.com/a.pdf")
    'https://example.com/a.pdf'
    """
    try:
        split = urllib.parse.urlsplit(url)
    except ValueError:
        return url[:100]
    shown = urllib.parse.urlunsplit((split.scheme, split.netloc.rpartition("@")[2], split.path, "", ""))
    return shown + ("?…" if split.query else "")


# -- URL and address checks -----------------------------------------------------------------------


def check_url(url: str, policy: UrlPolicy) -> urllib.parse.SplitResult:
    """Check ``url``'s syntax under ``policy`` (no DNS; a host given as an IP address is checked as an address)
    and return it split; raise ``BlockedUrlError``.

    >>> check_url("https://user:pw@example.com/", UrlPolicy.PUBLIC_HTTPS)
    Traceback (most recent call last):
    ...
    ocr_platform.core.safe_http.BlockedUrlError: URL https://example.com/ carries a user name or password (user:pass@); credentials in URLs are refused
    >>> check_url("http://127.0.0.1:8080/x", UrlPolicy.LOCAL).hostname
    '127.0.0.1'
    >>> check_url("https://10.0.0.8/hook", UrlPolicy.LOCAL)
    Traceback (most recent call last):
    ...
    ocr_platform.core.safe_http.BlockedUrlError: URL https://10.0.0.8/hook names a private address the platform never connects to
    """
    if len(url) > MAX_URL_LENGTH:
        raise BlockedUrlError(f"URL is {len(url)} characters long; at most {MAX_URL_LENGTH} are accepted")
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        raise BlockedUrlError(f"URL {display_url(url)!r} contains a space or control character; percent-encode it")
    try:
        split = urllib.parse.urlsplit(url)
        port = split.port
    except ValueError as err:
        raise BlockedUrlError(f"URL {display_url(url)} is malformed ({err})") from err
    shown = display_url(url)
    allowed_schemes = ("https",) if policy is UrlPolicy.PUBLIC_HTTPS else ("http", "https")
    if split.scheme not in allowed_schemes:
        if split.scheme == "http":
            raise BlockedUrlError(f"URL {shown} must use https (plain http is refused)")
        raise BlockedUrlError(f"URL {shown} must use {' or '.join(allowed_schemes)}, not {split.scheme or 'no scheme'!r}")
    if split.username is not None or split.password is not None or "@" in split.netloc:
        raise BlockedUrlError(f"URL {shown} carries a user name or password (user:pass@); credentials in URLs are refused")
    if not split.hostname:
        raise BlockedUrlError(f"URL {shown} has no host")
    if port is not None and not 1 <= port <= 65535:
        raise BlockedUrlError(f"URL {shown} has port {port}; a port must be 1-65535")
    _ascii_host(split.hostname, shown)
    try:
        literal = ipaddress.ip_address(split.hostname)
    except ValueError:
        literal = None
    if literal is not None and (refusal := refusal_reason(literal, policy)) is not None:
        raise BlockedUrlError(f"URL {shown} names {refusal} the platform never connects to")
    return split


def _ascii_host(hostname: str, shown: str) -> str:
    """The host as it goes on the wire (IDNA for a non-ASCII name)."""
    try:
        return hostname.encode("idna").decode("ascii")
    except UnicodeError as err:
        raise BlockedUrlError(f"URL {shown} has an invalid host name {hostname!r} ({err})") from err


def allowed_addresses(host: str, port: int, policy: UrlPolicy) -> list[str]:
    """Resolve ``host`` and return its addresses, in the resolver's order, if every one is allowed.

    One refused address refuses the host (a name answering with a public and a private address could
    otherwise be connected to the private one). A resolver failure raises ``HttpFailure("unreachable")``.

    >>> allowed_addresses("127.0.0.1", 80, UrlPolicy.LOCAL)
    ['127.0.0.1']
    >>> allowed_addresses("169.254.169.254", 80, UrlPolicy.LOCAL)
    Traceback (most recent call last):
    ...
    ocr_platform.core.safe_http.BlockedUrlError: host 169.254.169.254 is a link-local address (the instance metadata service) the platform never connects to
    """
    name = host.strip("[]")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as err:
        raise HttpFailure(f"could not resolve host {name}: {err}", "unreachable") from err
    addresses: list[str] = []
    for _family, _type, _proto, _canonname, sockaddr in infos:
        text = str(sockaddr[0]).split("%", 1)[0]  # drop an IPv6 zone ("fe80::1%eth0")
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise HttpFailure(f"could not resolve host {name}: no addresses", "unreachable")
    for text in addresses:
        address = ipaddress.ip_address(text)
        refusal = refusal_reason(address, policy)
        if refusal is not None:
            where = f"host {name} is" if text == name else f"host {name} resolves to {text},"
            raise BlockedUrlError(f"{where} {refusal} the platform never connects to")
    return addresses


def refusal_reason(address: _Address, policy: UrlPolicy) -> str | None:
    """Why ``policy`` refuses to connect to ``address`` (a phrase like "a private address"), or None.

    >>> refusal_reason(ipaddress.ip_address("10.1.2.3"), UrlPolicy.PUBLIC_HTTPS)
    'a private address'
    >>> refusal_reason(ipaddress.ip_address("::ffff:10.0.0.1"), UrlPolicy.PUBLIC_HTTPS)
    'an IPv4-mapped IPv6 address of 10.0.0.1, a private address'
    >>> refusal_reason(ipaddress.ip_address("::1"), UrlPolicy.LOCAL) is None
    True
    >>> refusal_reason(ipaddress.ip_address("93.184.215.14"), UrlPolicy.PUBLIC_HTTPS) is None
    True
    """
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            inner = refusal_reason(embedded, policy)
            return None if inner is None else f"an IPv4-mapped IPv6 address of {embedded}, {inner}"
    if address.is_loopback:
        return None if policy is UrlPolicy.LOCAL else "a loopback address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_link_local or address in _METADATA_ADDRESSES:
        return "a link-local address (the instance metadata service)" if address in _METADATA_ADDRESSES else "a link-local address"
    if address in _SHARED_ADDRESS_SPACE:
        return "a shared (carrier-grade NAT) address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "a non-public address"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for: IPv4-mapped (``::ffff:a.b.c.d``), 6to4 or NAT64."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


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
        host = _ascii_host(split.hostname, display_url(url))
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
    ocr_platform.core.safe_http.BlockedUrlError: URL https://10.0.0.1/ names a private address the platform never connects to
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
