"""safe_http against a real local server: bodies, caps, the total deadline, redirects, and the SSRF guard.

The server (``LocalServer``) is a ``ThreadingHTTPServer`` on 127.0.0.1 with an ephemeral port, so the
requests that reach it use ``UrlPolicy.LOCAL`` (loopback allowed). Name resolution is faked with a
patched ``socket.getaddrinfo`` where a test needs a host to resolve to a given address; connections are
observed by wrapping urllib3's ``create_connection``.
"""

from __future__ import annotations

import datetime
import io
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import urllib3.util.connection

from ocr_platform.core import safe_http
from ocr_platform.core.safe_http import BlockedUrlError, HttpFailure, UrlPolicy, allowed_addresses, check_url, request

LOCAL = UrlPolicy.LOCAL
PUBLIC = UrlPolicy.PUBLIC_HTTPS
DOC = b"%PDF-1.7\n" + bytes(range(256)) * 8 + b"\n%%EOF\n"
ENDLESS_SAFETY_BYTES = 64 * 1024 * 1024  # the endless stream stops here whatever happens


# -- the local server ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    host: str | None
    body: bytes


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, tls: ssl.SSLContext | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stop = threading.Event()
        self.seen: list[Seen] = []
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_side=True)


class _Handler(BaseHTTPRequestHandler):
    """Routes (first path segment):

    ``/files/<name>?type=<content type>``: 200, ``DOC``; ``/status/<code>``; ``/empty``: 200, no body;
    ``/big/<n>``: n bytes with a Content-Length; ``/big-chunked/<n>``: n bytes chunked; ``/big-close/<n>``:
    n bytes, no length, delimited by the connection's close; ``/endless``: a chunked body that never ends;
    ``/trickle``: announces 1000 bytes, sends one every 0.2 s; ``/stall``: never answers; ``/late-stall``:
    answers after 0.6 s, sends 10 of 100 bytes, then nothing;
    ``/redirect?to=<url>&code=<3xx>``; ``/chain/<n>``: n redirects, then 200; ``/echo``: the request back.
    """

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def _route(self) -> None:
        split = urlsplit(self.path)
        parts = split.path.strip("/").split("/")
        query = {k: v[0] for k, v in parse_qs(split.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.seen.append(Seen(self.command, self.path, self.headers.get("Host"), body))
        try:
            self._answer(parts, query, body)
        except OSError:
            pass  # the client went away (as it does when it stops reading)

    def _answer(self, parts: list[str], query: dict[str, str], body: bytes) -> None:
        route, arg = parts[0], (parts[1] if len(parts) > 1 else "")
        if route == "files":
            self._reply(200, DOC, {"Content-Type": query.get("type", "application/octet-stream")})
        elif route == "status":
            self._reply(int(arg), b"nothing here\n", {"Content-Type": "text/plain"})
        elif route == "empty":
            self._reply(200, b"", {"Content-Type": "application/pdf"})
        elif route == "big":
            self._reply(200, b"x" * int(arg), {})
        elif route == "big-chunked":
            self._chunked(int(arg))
        elif route == "big-close":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"x" * int(arg))
            self.close_connection = True
        elif route == "endless":
            self._chunked(None)
        elif route == "trickle":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(1000):
                self.wfile.write(b"x")
                if self.server.stop.wait(0.2):
                    return
        elif route == "late-stall":
            if self.server.stop.wait(0.6):
                return
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"x" * 10)
            self.server.stop.wait(10)
            self.close_connection = True
        elif route == "stall":
            self.server.stop.wait(10)
            self.close_connection = True
        elif route == "redirect":
            self._reply(int(query.get("code", "302")), b"", {"Location": query["to"]})
        elif route == "chain":
            left = int(arg)
            if left > 0:
                self._reply(302, b"", {"Location": f"/chain/{left - 1}"})
            else:
                self._reply(200, b"end of chain", {})
        elif route == "echo":
            headers = "\n".join(f"{k.lower()}: {v}" for k, v in self.headers.items())
            self._reply(200, f"{self.command}\n{headers}\n\n".encode() + body, {"Content-Type": "text/plain", "X-Echo": "a"})
        else:
            self._reply(404, b"no such route\n", {})

    def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def _chunked(self, size: int | None) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        sent, piece = 0, b"y" * 4096
        while (size is None and sent < ENDLESS_SAFETY_BYTES and not self.server.stop.is_set()) or (size is not None and sent < size):
            data = piece if size is None else piece[: size - sent]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            sent += len(data)
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True


class LocalServer:
    """A scripted HTTP(S) server on 127.0.0.1, on an ephemeral port, serving from a thread."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self._server = _Server(tls)
        self.port = self._server.server_address[1]
        self.scheme = "https" if tls else "http"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def seen(self) -> list[Seen]:
        return self._server.seen

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def close(self) -> None:
        self._server.stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.close()


# -- helpers: fake DNS, a connection spy, a test CA -------------------------------------------------


def fake_dns(monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[str]]) -> list[str]:
    """Make each name in ``answers`` resolve to its addresses (others resolve for real); return the names asked."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host not in answers:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, port, 0, 0))
            if ":" in a
            else (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, port))
            for a in answers[host]
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def connection_spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Record the (address, port) of every connection urllib3 opens."""
    real: Callable[..., socket.socket] = urllib3.util.connection.create_connection
    connected: list[tuple[str, int]] = []

    def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        connected.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(urllib3.util.connection, "create_connection", create_connection)
    return connected


@dataclass(frozen=True)
class CaFiles:
    ca_file: str
    cert_file: str  # the server's certificate, for docs.example.test, signed by the CA
    key_file: str


@pytest.fixture(scope="session")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> CaFiles:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    root = tmp_path_factory.mktemp("tls")
    now = datetime.datetime.now(datetime.UTC)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "safe_http test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "docs.example.test")]))
        .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("docs.example.test")]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    files = {"ca.pem": ca.public_bytes(pem), "leaf.pem": leaf.public_bytes(pem)}
    files["leaf.key"] = leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    for name, data in files.items():
        (root / name).write_bytes(data)
    return CaFiles(str(root / "ca.pem"), str(root / "leaf.pem"), str(root / "leaf.key"))


@pytest.fixture
def tls_server(test_ca: CaFiles) -> Iterator[tuple[LocalServer, list[str]]]:
    """An HTTPS LocalServer presenting the docs.example.test certificate; also the SNI names it was sent."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(test_ca.cert_file, test_ca.key_file)
    sni: list[str] = []

    def record_sni(_sock: Any, name: str | None, _ctx: Any) -> None:
        sni.append(name or "")

    context.sni_callback = record_sni
    local = LocalServer(tls=context)
    yield local, sni
    local.close()


# -- successful exchanges ----------------------------------------------------------------------------


def test_get_returns_the_status_body_headers_and_final_url(server: LocalServer) -> None:
    url = server.url("/files/scan.pdf?type=application/pdf")
    response = request("GET", url, policy=LOCAL, timeout_seconds=5)
    assert (response.status, response.body, response.url) == (200, DOC, url)
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-length"] == str(len(DOC))
    assert 0 < response.elapsed_seconds < 5


def test_post_sends_the_body_and_the_real_host_header(server: LocalServer) -> None:
    response = request("POST", server.url("/echo"), policy=LOCAL, body=b'{"job": "j1"}', headers={"Content-Type": "application/json"}, timeout_seconds=5)
    assert response.status == 200
    assert response.body.startswith(b"POST\n")
    assert response.body.endswith(b'\n\n{"job": "j1"}')
    assert f"host: 127.0.0.1:{server.port}".encode() in response.body
    assert b"content-type: application/json" in response.body
    assert server.seen[-1] == Seen("POST", "/echo", f"127.0.0.1:{server.port}", b'{"job": "j1"}')


def test_a_sink_receives_the_body_and_the_response_holds_none(server: LocalServer) -> None:
    sink = io.BytesIO()
    response = request("GET", server.url("/files/a.pdf"), policy=LOCAL, timeout_seconds=5, max_bytes=len(DOC), sink=sink)
    assert response.status == 200
    assert response.body == b""
    assert sink.getvalue() == DOC  # exactly max_bytes is within the cap


def test_connects_to_the_checked_address_not_the_name_again(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name that resolves once to loopback, then (rebound) to a private address: only the first answer is
    used, and the server is asked for the real host name."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host != "docs.example.test":
            return real(host, port, *args, **kwargs)
        asked.append(host)
        address = "127.0.0.1" if len(asked) == 1 else "10.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    connected = connection_spy(monkeypatch)
    response = request("GET", server.url("/files/a.pdf", host="docs.example.test"), policy=LOCAL, timeout_seconds=5)
    assert response.status == 200 and response.body == DOC
    assert asked == ["docs.example.test"]
    assert connected == [("127.0.0.1", server.port)]
    assert server.seen[-1].host == f"docs.example.test:{server.port}"


def test_a_non_2xx_status_is_returned_not_raised(server: LocalServer) -> None:
    response = request("GET", server.url("/status/404"), policy=LOCAL, timeout_seconds=5)
    assert (response.status, response.body) == (404, b"nothing here\n")


# -- redirects -------------------------------------------------------------------------------------------


def test_without_max_redirects_a_3xx_is_the_response(server: LocalServer) -> None:
    response = request("GET", server.url("/redirect?to=/files/a.pdf&code=301"), policy=LOCAL, timeout_seconds=5)
    assert response.status == 301
    assert response.headers["location"] == "/files/a.pdf"
    assert [s.path for s in server.seen] == ["/redirect?to=/files/a.pdf&code=301"]


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_relative_redirect_on_the_same_server_is_followed(server: LocalServer, code: int) -> None:
    response = request("GET", server.url(f"/redirect?to=files/b.pdf&code={code}"), policy=LOCAL, timeout_seconds=5, max_redirects=1)
    assert (response.status, response.body, response.url) == (200, DOC, server.url("/files/b.pdf"))


def test_a_chain_within_max_redirects_is_followed(server: LocalServer) -> None:
    response = request("GET", server.url("/chain/3"), policy=LOCAL, timeout_seconds=5, max_redirects=3)
    assert (response.status, response.body, response.url) == (200, b"end of chain", server.url("/chain/0"))


def test_a_chain_longer_than_max_redirects_fails(server: LocalServer) -> None:
    with pytest.raises(HttpFailure) as caught:
        request("GET", server.url("/chain/4"), policy=LOCAL, timeout_seconds=5, max_redirects=3)
    assert caught.value.kind == "redirects"
    assert caught.value.reason == f"GET {server.url('/chain/4')} redirected more than 3 times"
    assert len(server.seen) == 4  # the fifth hop is never requested


def test_post_does_not_follow_redirects(server: LocalServer) -> None:
    response = request("POST", server.url("/redirect?to=/echo"), policy=LOCAL, body=b"{}", timeout_seconds=5, max_redirects=3)
    assert response.status == 302
    assert [s.method for s in server.seen] == ["POST"]


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("http://10.0.0.1/", "a private address"),
        ("http://169.254.169.254/latest/meta-data/", "the instance metadata service"),
        ("http://[::ffff:10.0.0.1]/", "IPv4-mapped"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "the instance metadata service"),
        ("ftp://127.0.0.1/x", "must use http or https"),
    ],
)
def test_a_redirect_to_a_refused_address_is_blocked_before_connecting(server: LocalServer, monkeypatch: pytest.MonkeyPatch, target: str, why: str) -> None:
    connected = connection_spy(monkeypatch)
    started = time.monotonic()
    with pytest.raises(BlockedUrlError) as caught:
        request("GET", server.url(f"/redirect?to={target}"), policy=LOCAL, timeout_seconds=5, max_redirects=3)
    assert time.monotonic() - started < 1
    assert "redirected to" in str(caught.value) and why in str(caught.value)
    assert connected == [("127.0.0.1", server.port)]


# -- size caps -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["big", "big-chunked", "big-close"])
def test_a_body_over_the_cap_is_too_large(server: LocalServer, route: str) -> None:
    sink = io.BytesIO()
    with pytest.raises(HttpFailure) as caught:
        request("GET", server.url(f"/{route}/100001"), policy=LOCAL, timeout_seconds=5, max_bytes=100_000, sink=sink)
    assert caught.value.kind == "too_large"
    assert "100000-byte limit" in caught.value.reason
    assert len(sink.getvalue()) <= 100_000


@pytest.mark.parametrize("route", ["big", "big-chunked", "big-close"])
def test_a_body_at_the_cap_is_accepted(server: LocalServer, route: str) -> None:
    response = request("GET", server.url(f"/{route}/100000"), policy=LOCAL, timeout_seconds=5, max_bytes=100_000)
    assert response.status == 200
    assert len(response.body) == 100_000


def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    """Content-Length says 100001: nothing of the body is read (the sink stays empty)."""
    local = LocalServer()
    try:
        sink = io.BytesIO()
        with pytest.raises(HttpFailure, match="the body is 100001 bytes") as caught:
            request("GET", local.url("/big/100001"), policy=LOCAL, timeout_seconds=5, max_bytes=100_000, sink=sink)
        assert caught.value.kind == "too_large"
        assert sink.getvalue() == b""
    finally:
        local.close()


def test_an_endless_body_stops_at_the_cap(server: LocalServer) -> None:
    started = time.monotonic()
    with pytest.raises(HttpFailure) as caught:
        request("GET", server.url("/endless"), policy=LOCAL, timeout_seconds=10, max_bytes=1_000_000)
    assert caught.value.kind == "too_large"
    assert time.monotonic() - started < 2


# -- the total deadline and failures -------------------------------------------------------------


def test_a_trickling_body_hits_the_total_deadline(server: LocalServer) -> None:
    started = time.monotonic()
    with pytest.raises(HttpFailure) as caught:
        request("GET", server.url("/trickle"), policy=LOCAL, timeout_seconds=1)
    elapsed = time.monotonic() - started
    assert caught.value.kind == "timeout"
    assert "within 1s" in caught.value.reason
    assert 0.9 <= elapsed < 2


def test_a_silent_server_hits_the_total_deadline(server: LocalServer) -> None:
    started = time.monotonic()
    with pytest.raises(HttpFailure) as caught:
        request("GET", server.url("/stall"), policy=LOCAL, timeout_seconds=1)
    assert caught.value.kind == "timeout"
    assert 0.9 <= time.monotonic() - started < 2


def test_a_body_that_stops_after_late_headers_hits_the_total_deadline(server: LocalServer) -> None:
    """Headers after 0.6 s, then silence: the read must end at the 1 s deadline, not a full read timeout later."""
    started = time.monotonic()
    with pytest.raises(HttpFailure) as caught:
        request("GET", server.url("/late-stall"), policy=LOCAL, timeout_seconds=1)
    assert caught.value.kind == "timeout"
    assert 0.9 <= time.monotonic() - started < 1.3


def test_the_deadline_covers_redirects_too(server: LocalServer) -> None:
    """A redirect to the trickle: the hop before it counts against the same one second."""
    started = time.monotonic()
    with pytest.raises(HttpFailure) as caught:
        request("GET", server.url("/redirect?to=/trickle"), policy=LOCAL, timeout_seconds=1, max_redirects=1)
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < 2


def test_a_refused_connection_is_unreachable() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(HttpFailure) as caught:
        request("GET", f"http://127.0.0.1:{port}/", policy=LOCAL, timeout_seconds=2)
    assert caught.value.kind == "unreachable"
    assert "could not connect" in caught.value.reason


def test_a_dns_failure_is_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_such_name(*_: Any, **__: Any) -> list[Any]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
    with pytest.raises(HttpFailure) as caught:
        request("GET", "https://nowhere.example.test/doc.pdf", policy=PUBLIC, timeout_seconds=2)
    assert caught.value.kind == "unreachable"
    assert caught.value.reason.startswith("GET https://nowhere.example.test/doc.pdf: could not resolve host nowhere.example.test: ")


def test_an_unreachable_first_address_falls_back_to_the_next(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name answering with two loopback addresses, the first refusing connections (no listener there)."""
    fake_dns(monkeypatch, {"docs.example.test": ["127.0.0.2", "127.0.0.1"]})
    connected = connection_spy(monkeypatch)
    response = request("GET", server.url("/files/a.pdf", host="docs.example.test"), policy=LOCAL, timeout_seconds=5)
    assert response.status == 200
    assert connected == [("127.0.0.2", server.port), ("127.0.0.1", server.port)]


# -- TLS: connect to the checked address, verify the real name -------------------------------------


def test_https_verifies_the_certificate_against_the_host_name(
    tls_server: tuple[LocalServer, list[str]], test_ca: CaFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    local, sni = tls_server
    fake_dns(monkeypatch, {"docs.example.test": ["127.0.0.1"]})
    connected = connection_spy(monkeypatch)
    monkeypatch.setattr(safe_http, "_ca_bundle", lambda: test_ca.ca_file)
    response = request("GET", local.url("/files/a.pdf", host="docs.example.test"), policy=LOCAL, timeout_seconds=5)
    assert (response.status, response.body) == (200, DOC)
    assert connected == [("127.0.0.1", local.port)]
    assert sni == ["docs.example.test"]
    assert local.seen[-1].host == f"docs.example.test:{local.port}"


def test_https_refuses_a_certificate_for_another_name(
    tls_server: tuple[LocalServer, list[str]], test_ca: CaFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    local, _ = tls_server
    fake_dns(monkeypatch, {"other.example.test": ["127.0.0.1"]})
    monkeypatch.setattr(safe_http, "_ca_bundle", lambda: test_ca.ca_file)
    with pytest.raises(HttpFailure) as caught:
        request("GET", local.url("/files/a.pdf", host="other.example.test"), policy=LOCAL, timeout_seconds=5)
    assert caught.value.kind == "unreachable"
    assert "TLS failed" in caught.value.reason
    assert local.seen == []


def test_https_refuses_a_certificate_from_an_untrusted_ca(tls_server: tuple[LocalServer, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    local, _ = tls_server
    fake_dns(monkeypatch, {"docs.example.test": ["127.0.0.1"]})
    with pytest.raises(HttpFailure) as caught:
        request("GET", local.url("/files/a.pdf", host="docs.example.test"), policy=LOCAL, timeout_seconds=5)
    assert caught.value.kind == "unreachable"
    assert "certificate verify failed" in caught.value.reason
    assert local.seen == []


# -- the policy: URL syntax ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://example.com/doc.pdf", "must use https"),
        ("ftp://example.com/doc.pdf", "must use https, not 'ftp'"),
        ("example.com/doc.pdf", "must use https, not 'no scheme'"),
        ("https://user:pw@example.com/doc.pdf", "user name or password"),
        ("https://user@example.com/doc.pdf", "user name or password"),
        ("https:///doc.pdf", "has no host"),
        ("https://example.com:0/doc.pdf", "port 0"),
        ("https://example.com:70000/doc.pdf", "malformed"),
        ("https://example.com:port/doc.pdf", "malformed"),
        ("https://[::1/doc.pdf", "malformed"),
        ("https://example.com/a b.pdf", "space or control character"),
        ("https://example.com/a\r\nX-Injected: 1", "space or control character"),
        ("https://example.com/" + "a" * 2048, "at most 2048"),
    ],
)
def test_check_url_refuses(url: str, why: str) -> None:
    with pytest.raises(BlockedUrlError, match=why.replace("(", r"\(").replace(")", r"\)")):
        check_url(url, PUBLIC)


def test_check_url_does_not_echo_a_query_string() -> None:
    with pytest.raises(BlockedUrlError) as caught:
        check_url("http://example.com/doc.pdf?X-Amz-Signature=secret", PUBLIC)
    assert "secret" not in str(caught.value)


def test_check_url_accepts() -> None:
    split = check_url("https://Example.com:8443/a/b.pdf?x=1", PUBLIC)
    assert (split.scheme, split.hostname, split.port, split.path, split.query) == ("https", "example.com", 8443, "/a/b.pdf", "x=1")
    assert check_url("http://127.0.0.1:8080/x", LOCAL).port == 8080
    assert check_url("https://[2606:4700::1]/x", PUBLIC).hostname == "2606:4700::1"


def test_public_https_refuses_http_and_loopback_with_requests() -> None:
    with pytest.raises(BlockedUrlError, match="must use https"):
        request("GET", "http://example.com/", policy=PUBLIC, timeout_seconds=1)
    with pytest.raises(BlockedUrlError, match="a loopback address"):
        request("GET", "https://127.0.0.1/", policy=PUBLIC, timeout_seconds=1)
    with pytest.raises(BlockedUrlError, match="a loopback address"):
        request("GET", "https://[::1]:8443/", policy=PUBLIC, timeout_seconds=1)
    with pytest.raises(BlockedUrlError, match="user name or password"):
        request("GET", "https://user:pw@example.com/", policy=PUBLIC, timeout_seconds=1)


# -- the policy: addresses -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("169.254.169.254", "a link-local address (the instance metadata service)"),
        ("169.254.10.10", "a link-local address"),
        ("fd00:ec2::254", "the instance metadata service"),
        ("fe80::1", "a link-local address"),
        ("::ffff:10.0.0.1", "an IPv4-mapped IPv6 address of 10.0.0.1, a private address"),
        ("::ffff:169.254.169.254", "IPv4-mapped IPv6 address of 169.254.169.254, a link-local address"),
        ("2002:a00:1::", "IPv4-mapped IPv6 address of 10.0.0.1"),  # 6to4
        ("64:ff9b::a9fe:a9fe", "IPv4-mapped IPv6 address of 169.254.169.254"),  # NAT64
        ("100.64.0.1", "a shared (carrier-grade NAT) address"),
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("224.0.0.251", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("fc00::1", "a private address"),
    ],
)
def test_public_https_refuses_a_host_resolving_to_a_non_public_address(monkeypatch: pytest.MonkeyPatch, address: str, why: str) -> None:
    fake_dns(monkeypatch, {"docs.example.test": [address]})
    connected = connection_spy(monkeypatch)
    with pytest.raises(BlockedUrlError) as caught:
        request("GET", "https://docs.example.test/doc.pdf", policy=PUBLIC, timeout_seconds=2)
    message = str(caught.value)
    assert message.startswith(f"host docs.example.test resolves to {address}, ")
    assert why in message and message.endswith("the platform never connects to")
    assert connected == []


def test_one_private_address_among_public_ones_refuses_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"docs.example.test": ["93.184.215.14", "2606:4700::6810:84e5", "10.0.0.7"]})
    with pytest.raises(BlockedUrlError, match="resolves to 10.0.0.7, a private address"):
        allowed_addresses("docs.example.test", 443, PUBLIC)


def test_public_addresses_are_allowed_in_the_resolvers_order(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"docs.example.test": ["2606:4700::6810:84e5", "93.184.215.14", "93.184.215.14"]})
    assert allowed_addresses("docs.example.test", 443, PUBLIC) == ["2606:4700::6810:84e5", "93.184.215.14"]


@pytest.mark.parametrize(("address", "why"), [("10.0.0.1", "a private address"), ("169.254.169.254", "instance metadata"), ("100.64.0.1", "shared")])
def test_local_still_refuses_private_and_metadata_addresses(monkeypatch: pytest.MonkeyPatch, address: str, why: str) -> None:
    with pytest.raises(BlockedUrlError, match=why):
        allowed_addresses(address, 80, LOCAL)
    fake_dns(monkeypatch, {"docs.example.test": [address]})
    with pytest.raises(BlockedUrlError, match=why):
        request("GET", "http://docs.example.test/", policy=LOCAL, timeout_seconds=1)


def test_local_allows_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"localhost.test": ["127.0.0.1", "::1", "127.1.2.3"]})
    assert allowed_addresses("localhost.test", 80, LOCAL) == ["127.0.0.1", "::1", "127.1.2.3"]
    with pytest.raises(BlockedUrlError, match="loopback"):
        allowed_addresses("localhost.test", 80, PUBLIC)


def test_credentials_are_not_forwarded_to_another_origin(server: LocalServer) -> None:
    """A redirect to another origin (the same server under the name localhost) drops Authorization."""
    other = server.url("/echo", host="localhost")
    response = request("GET", server.url(f"/redirect?to={other}"), policy=LOCAL, headers={"Authorization": "Bearer t", "X-Keep": "1"},
                       timeout_seconds=5, max_redirects=1)
    assert response.status == 200 and response.url == other
    assert b"authorization" not in response.body
    assert b"x-keep: 1" in response.body
