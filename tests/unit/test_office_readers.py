"""No silent empty and no false corrupt: an Office file's readers are tried in turn until one finds its text; a file
in which none finds text completes with a ``no_text`` warning naming what each saw; only a file that no reader
opens is ``corrupt_document``."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ocr_platform.core.errors import ErrorCode, JobError
from ocr_platform.core.results import EngineInfo
from ocr_platform.document import office
from ocr_platform.document.intake import IntakeLimits, read_native
from ocr_platform.engines import EngineOutput
from ocr_platform.engines.reading import ocr_document
from tests import office_documents as od

TEAMS_CHAT = od.OFFICE / "unstructured-teams_chat.docx"


class NoPictureEngine:
    """Plumbing only: these files have no picture for an engine to read."""

    info = EngineInfo(name="none", models=[], version="0")

    def predict(self, path: Path, **kwargs: Any) -> EngineOutput:
        raise AssertionError("no picture to read")


def test_a_docx_that_the_converter_and_docx2python_fail_on_is_read_by_mammoth() -> None:
    result, _ = ocr_document(TEAMS_CHAT, job_id="j", model="pp-ocrv5", engine=NoPictureEngine())

    assert "OK. Yeah." in result["text"] and "Dennis Forsythe" in result["text"]
    [warning] = result["warnings"]
    assert (warning["code"], warning["ran"]) == ("converter_fallback", "mammoth")
    assert "list index out of range" in warning["reason"]


def test_a_converter_that_reads_no_text_is_followed_by_a_reader_that_finds_some(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(office, "_convert", lambda named, kind: SimpleNamespace(markdown="", metadata={}, images={}))

    native, [unit] = read_native(od.DOCX_TEXT, pages=None, limits=IntakeLimits())

    assert "Lorem ipsum" in unit.markdown
    [warning] = native.notes.warnings
    assert (warning["code"], warning["ran"], warning["reason"]) == ("converter_fallback", "docx2python", "PaddleOCR's converter read no text")


def _docx(document_xml: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(od.DOCX_TEXT) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info.filename, document_xml if info.filename == "word/document.xml" else source.read(info.filename))
    return out.getvalue()


def test_a_docx_without_text_completes_with_a_warning_naming_what_each_reader_saw(tmp_path: Path) -> None:
    import docx

    path = tmp_path / "blank.docx"
    docx.Document().save(str(path))

    result, _ = ocr_document(path, job_id="j", model="pp-ocrv5", engine=NoPictureEngine())

    assert result["text"].strip() == ""
    [warning] = result["warnings"]
    assert warning["code"] == "no_text"
    for reader in ("PaddleOCR's converter", "docx2python", "mammoth"):
        assert reader in warning["reason"]
    assert warning["message"].startswith("No text was found in this DOCX file")


def test_an_html_page_without_text_says_so(tmp_path: Path) -> None:
    path = tmp_path / "empty.html"
    path.write_text("<!DOCTYPE html><html><body><div></div><script>var words = 1;</script></body></html>")

    result, _ = ocr_document(path, job_id="j", model="pp-ocrv5", engine=NoPictureEngine())

    assert [w["code"] for w in result["warnings"]] == ["no_text"]
    assert "Beautiful Soup" in result["warnings"][0]["reason"]


def test_only_a_docx_that_no_reader_opens_is_corrupt_and_the_error_says_what_each_reader_met(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(_docx(b"<w:document xmlns:w='http://schemas.openxmlformats.org/wordprocessingml/2006/main'><w:body><w:p>"))

    with pytest.raises(JobError) as caught:
        read_native(path, pages=None, limits=IntakeLimits())

    assert caught.value.code is ErrorCode.CORRUPT_DOCUMENT
    for reader in ("PaddleOCR's converter failed", "docx2python failed", "mammoth failed"):
        assert reader in caught.value.message
