"""The URL rules of the platform's outbound HTTP: which URLs and addresses ``ocr_platform.core.safe_http`` may reach.

Pure checks, no connection: ``check_url`` (a URL's syntax under a ``UrlPolicy``), ``allowed_addresses`` (a
host's DNS answer, refused if any address is not public) and ``refusal_reason`` (why an address is refused),
with the two errors a request raises (``BlockedUrlError``, ``HttpFailure``) and ``display_url`` (a URL as
messages show it). ``safe_http`` runs the exchange under these rules and re-exports every name here.

>>> check_url("http://example.com/doc.pdf", UrlPolicy.PUBLIC_HTTPS)
Traceback (most recent call last):
...
ocr_platform.core.url_policy.BlockedUrlError: URL http://example.com/doc.pdf must use https (plain http is refused)
"""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse
from enum import StrEnum
from typing import Literal

MAX_URL_LENGTH = 2048
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
    ocr_platform.core.url_policy.BlockedUrlError: URL https://example.com/ carries a user name or password (user:pass@); credentials in URLs are refused
    >>> check_url("http://127.0.0.1:8080/x", UrlPolicy.LOCAL).hostname
    '127.0.0.1'
    >>> check_url("https://10.0.0.8/hook", UrlPolicy.LOCAL)
    Traceback (most recent call last):
    ...
    ocr_platform.core.url_policy.BlockedUrlError: URL https://10.0.0.8/hook names a private address the platform never connects to
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
    ascii_host(split.hostname, shown)
    try:
        literal = ipaddress.ip_address(split.hostname)
    except ValueError:
        literal = None
    if literal is not None and (refusal := refusal_reason(literal, policy)) is not None:
        raise BlockedUrlError(f"URL {shown} names {refusal} the platform never connects to")
    return split


def ascii_host(hostname: str, shown: str) -> str:
    """The host as it goes on the wire (IDNA for a non-ASCII name); ``shown`` is the URL its refusal names."""
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
    ocr_platform.core.url_policy.BlockedUrlError: host 169.254.169.254 is a link-local address (the instance metadata service) the platform never connects to
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
