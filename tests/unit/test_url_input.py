"""Documents submitted by URL: fetched from a real local server into a (moto) bucket, or refused with a code."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.safe_http import UrlPolicy
from ocr_platform.document.url_input import FetchedInput, fetch_input, input_file_name, is_url_input
from tests.unit.test_safe_http import DOC, LocalServer, connection_spy, fake_dns

BUCKET = "url-input-test"
MiB = 1024 * 1024


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer()
    yield local
    local.close()


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def _fetch(
    s3: Any, url: str, *, policy: UrlPolicy = UrlPolicy.LOCAL, max_bytes: int = 10 * MiB, timeout_seconds: float = 5, max_redirects: int = 3
) -> FetchedInput:
    return fetch_input(url, s3=s3, bucket=BUCKET, key_for=lambda name: f"documents/job-1/{name}", max_bytes=max_bytes,
                       timeout_seconds=timeout_seconds, max_redirects=max_redirects, policy=policy)


def _keys(s3: Any) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def _stored(s3: Any, key: str) -> bytes:
    body: bytes = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    return body


# -- fetched and stored ---------------------------------------------------------------------------------


def test_a_document_is_stored_with_its_exact_bytes_under_its_name(server: LocalServer, s3: Any) -> None:
    url = server.url("/files/Annual%20Report%202024.pdf?type=application/pdf")
    fetched = _fetch(s3, url)
    assert fetched == FetchedInput(uri=f"s3://{BUCKET}/documents/job-1/Annual_Report_2024.pdf", size=len(DOC), content_type="application/pdf", final_url=url)
    assert _keys(s3) == ["documents/job-1/Annual_Report_2024.pdf"]
    assert _stored(s3, "documents/job-1/Annual_Report_2024.pdf") == DOC


def test_the_name_comes_from_the_final_url_after_redirects(server: LocalServer, s3: Any) -> None:
    fetched = _fetch(s3, server.url("/redirect?to=/files/scan-7.png%3Ftype%3Dimage/png"))
    assert fetched.final_url == server.url("/files/scan-7.png?type=image/png")
    assert fetched.uri.endswith("/documents/job-1/scan-7.png")
    assert fetched.content_type == "image/png"
    assert _stored(s3, "documents/job-1/scan-7.png") == DOC


def test_a_url_without_a_file_name_gets_one_from_the_content_type(server: LocalServer, s3: Any) -> None:
    fetched = _fetch(s3, server.url("/files/?type=image/jpeg"))
    assert fetched.uri == f"s3://{BUCKET}/documents/job-1/document.jpg"
    assert _stored(s3, "documents/job-1/document.jpg") == DOC


def test_a_body_larger_than_the_memory_spool_is_stored_intact(server: LocalServer, s3: Any) -> None:
    """9 MiB: past the in-memory spool (8 MiB), so it goes through a temporary file and a multipart upload."""
    size = 9 * MiB
    fetched = _fetch(s3, server.url(f"/big-chunked/{size}"), max_bytes=size)
    assert fetched.size == size
    stored = _stored(s3, "documents/job-1/" + fetched.uri.rsplit("/", 1)[1])
    assert stored == b"y" * size


# -- refused or failed: a JobError with the input's code, nothing stored ---------------------------


def test_a_404_is_input_unreachable(server: LocalServer, s3: Any) -> None:
    with pytest.raises(JobError) as caught:
        _fetch(s3, server.url("/status/404"))
    assert caught.value.code == ErrorCode.INPUT_UNREACHABLE
    assert caught.value.message == f"GET {server.url('/status/404')} answered 404 Not Found"
    assert _keys(s3) == []


def test_a_redirect_not_followed_is_input_unreachable(server: LocalServer, s3: Any) -> None:
    with pytest.raises(JobError) as caught:
        _fetch(s3, server.url("/chain/1"), max_redirects=0)
    assert caught.value.code == ErrorCode.INPUT_UNREACHABLE
    assert "answered 302 Found" in caught.value.message


@pytest.mark.parametrize("route", ["big", "big-chunked", "endless"])
def test_a_document_over_the_cap_is_input_too_large(server: LocalServer, s3: Any, route: str) -> None:
    with pytest.raises(JobError) as caught:
        _fetch(s3, server.url(f"/{route}/{MiB + 1}"), max_bytes=MiB)
    assert caught.value.code == ErrorCode.INPUT_TOO_LARGE
    assert "larger than the 1 MiB limit" in caught.value.message
    assert _keys(s3) == []


def test_a_trickling_server_is_input_unreachable_at_the_deadline(server: LocalServer, s3: Any) -> None:
    started = time.monotonic()
    with pytest.raises(JobError) as caught:
        _fetch(s3, server.url("/trickle"), timeout_seconds=1)
    assert time.monotonic() - started < 2
    assert caught.value.code == ErrorCode.INPUT_UNREACHABLE
    assert caught.value.message == f"GET {server.url('/trickle')} did not complete within 1s"
    assert _keys(s3) == []


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("http://10.0.0.1/", "URL http://10.0.0.1/ names a private address"),
        ("http://169.254.169.254/latest/meta-data/",
         "URL http://169.254.169.254/latest/meta-data/ names a link-local address (the instance metadata service)"),
    ],
)
def test_a_redirect_to_the_platforms_network_is_refused(server: LocalServer, s3: Any, monkeypatch: pytest.MonkeyPatch, target: str, why: str) -> None:
    connected = connection_spy(monkeypatch)
    started = time.monotonic()
    with pytest.raises(JobError) as caught:
        _fetch(s3, server.url(f"/redirect?to={target}"))
    assert time.monotonic() - started < 1
    assert caught.value.code == ErrorCode.INPUT_UNREACHABLE
    assert caught.value.message == (
        f"the input URL was refused: GET {server.url('/redirect')}?… redirected to {target}: {why} the platform never connects to"
    )
    assert connected == [("127.0.0.1", server.port)]
    assert _keys(s3) == []


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://example.com/doc.pdf", "must use https"),
        ("https://127.0.0.1/doc.pdf", "a loopback address"),
        ("https://user:pw@example.com/doc.pdf", "user name or password"),
        ("https://docs.example.test/doc.pdf", "resolves to 10.1.2.3, a private address"),
    ],
)
def test_public_https_refuses_urls_into_the_platforms_network(s3: Any, monkeypatch: pytest.MonkeyPatch, url: str, why: str) -> None:
    fake_dns(monkeypatch, {"docs.example.test": ["10.1.2.3"]})
    with pytest.raises(JobError) as caught:
        _fetch(s3, url, policy=UrlPolicy.PUBLIC_HTTPS)
    assert caught.value.code == ErrorCode.INPUT_UNREACHABLE
    assert "refused" in caught.value.message and why in caught.value.message


def test_an_unresolvable_host_is_input_unreachable(s3: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def no_such_name(*_: Any, **__: Any) -> list[Any]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
    with pytest.raises(JobError) as caught:
        _fetch(s3, "https://nowhere.example.test/doc.pdf", policy=UrlPolicy.PUBLIC_HTTPS)
    assert caught.value.code == ErrorCode.INPUT_UNREACHABLE
    assert caught.value.message.startswith("GET https://nowhere.example.test/doc.pdf: could not resolve host nowhere.example.test: ")


def test_an_empty_body_is_an_empty_document(server: LocalServer, s3: Any) -> None:
    with pytest.raises(JobError) as caught:
        _fetch(s3, server.url("/empty"))
    assert caught.value.code == ErrorCode.EMPTY_DOCUMENT
    assert _keys(s3) == []


def test_a_presigned_urls_signature_stays_out_of_the_message(server: LocalServer, s3: Any) -> None:
    with pytest.raises(JobError) as caught:
        _fetch(s3, server.url("/status/403?X-Amz-Signature=s3cr3t"))
    assert caught.value.code == ErrorCode.INPUT_UNREACHABLE
    assert "403 Forbidden" in caught.value.message and "s3cr3t" not in caught.value.message


# -- names and detection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("https://example.com/a.pdf", True), ("http://example.com/a.pdf", True), ("HTTPS://EXAMPLE.COM/A.PDF", True),
     ("s3://bucket/a.pdf", False), ("documents/a.pdf", False), ("ftp://example.com/a.pdf", False), ("https:/x", False), ("", False)],
)
def test_is_url_input(value: str, expected: bool) -> None:
    assert is_url_input(value) is expected


@pytest.mark.parametrize(
    ("url", "content_type", "expected"),
    [
        ("https://e.com/x/scan.pdf", None, "scan.pdf"),
        ("https://e.com/x/My%20Scan%20(1).PDF?dl=1", "application/pdf", "My_Scan_1.PDF"),
        ("https://e.com/x/report", "application/pdf", "report.pdf"),
        ("https://e.com/x/photo", "image/jpeg; q=1", "photo.jpg"),
        ("https://e.com/x/fax", "image/tiff", "fax.tiff"),
        ("https://e.com/x/page", "image/png", "page.png"),
        ("https://e.com/x/bitmap", "image/bmp", "bitmap.bmp"),
        ("https://e.com/x/pic", "image/webp", "pic.webp"),
        ("https://e.com/x/blob", "application/octet-stream", "blob"),
        ("https://e.com/", None, "document"),
        ("https://e.com/", "image/png", "document.png"),
        ("https://e.com/x/..%2F..%2Fetc%2Fpasswd", None, "etc_passwd"),
        ("https://e.com/x/%E6%96%87%E4%BB%B6.pdf", None, "document.pdf"),
        ("https://e.com/x/.pdf", None, "document.pdf"),
        ("https://e.com/x/archive.tar.gz", "application/pdf", "archive.tar.gz"),
        ("https://e.com/x/v1.0-final", "application/pdf", "v1.0-final.pdf"),
        ("https://e.com/x/scan.", "image/png", "scan.png"),
        ("https://e.com/x/" + "a" * 300 + ".pdf", None, "a" * 196 + ".pdf"),
    ],
)
def test_input_file_name(url: str, content_type: str | None, expected: str) -> None:
    assert input_file_name(url, content_type) == expected
