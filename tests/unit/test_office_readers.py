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


def _page_with_boilerplate() -> bytes:
    article = " ".join(f"<p>Paragraph {n} of the article tells how the harbour was rebuilt after the storm of 1953.</p>" for n in range(12))
    return (f"<!DOCTYPE html><html><body><header><nav><a href='/'>Home</a> <a href='/news'>News</a> Sign in to your account</nav>"
            f"</header><main><article><h1>The harbour</h1>{article}</article></main><aside>Trending now: 154 languages</aside>"
            "<footer>Copyright notice and cookie settings</footer></body></html>").encode()


def test_an_html_page_is_read_without_its_navigation_unless_the_whole_page_is_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_bytes(_page_with_boilerplate())

    main, _ = ocr_document(path, job_id="j", model="pp-ocrv5", engine=NoPictureEngine())
    whole, _ = ocr_document(path, job_id="j", model="pp-ocrv5", engine=NoPictureEngine(), options={"html": "page"})

    assert "harbour was rebuilt" in main["text"] and "Sign in" not in main["text"] and "154 languages" not in main["text"]
    [warning] = main["warnings"]
    assert warning["code"] == "html_main_content" and '"page"' in warning["message"]
    assert "Sign in" in whole["text"] and "154 languages" in whole["text"] and whole["warnings"] == []


def test_a_page_whose_main_content_is_too_little_of_it_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "table.html"
    rows = "".join(f"<tr><td>Grade {n}</td><td>{n * 7} MPa</td></tr>" for n in range(40))
    path.write_bytes(f"<html><body><nav>Products</nav><table>{rows}</table><footer>Contact</footer></body></html>".encode())

    result, _ = ocr_document(path, job_id="j", model="pp-ocrv5", engine=NoPictureEngine())

    assert "Grade 39" in result["text"] and result["warnings"] == []


def test_an_unknown_html_option_is_refused() -> None:
    with pytest.raises(JobError) as caught:
        ocr_document(od.HTML_TABLES, job_id="j", model="pp-ocrv5", engine=NoPictureEngine(), options={"html": "article"})
    assert caught.value.code is ErrorCode.INVALID_OPTIONS


def test_a_page_without_boilerplate_reads_the_same_either_way(tmp_path: Path) -> None:
    path = tmp_path / "plain.html"
    article = "".join(f"<p>Line {n} of a letter about the harbour.</p>" for n in range(8))
    path.write_bytes(f"<html><body><h1>A letter</h1>{article}<p>Yours, the harbour master</p></body></html>".encode())

    main, _ = ocr_document(path, job_id="j", model="pp-ocrv5", engine=NoPictureEngine())
    whole, _ = ocr_document(path, job_id="j", model="pp-ocrv5", engine=NoPictureEngine(), options={"html": "page"})

    assert main["text"] == whole["text"] and "Yours, the harbour master" in main["text"] and main["warnings"] == []


def test_the_cli_asks_for_the_whole_page_with_html_page() -> None:
    from ocr_platform.cli.command_support import engine_options
    from ocr_platform.cli.commands import _parser

    args = _parser().parse_args(["ocr", str(od.HTML_TABLES), "--model", "pp-ocrv5", "--html", "page"])
    assert engine_options(args) == {"html": "page"}
    with pytest.raises(SystemExit):
        _parser().parse_args(["ocr", str(od.HTML_TABLES), "--model", "pp-ocrv5", "--html", "article"])


def test_an_office_file_is_converted_without_importing_paddleocr_or_paddlex() -> None:
    """PaddleOCR's package import loads PaddleX (seconds); its converter alone reads the file (ocr_platform.document.doc2md)."""
    import subprocess
    import sys

    script = ("import sys; from pathlib import Path; from ocr_platform.document.intake import IntakeLimits, read_native;"
              f"_, units = read_native(Path({str(od.OFFICE / 'blk-paras-and-tables.docx')!r}), pages=None, limits=IntakeLimits());"
              "print('Lorem ipsum' in units[0].markdown, sorted(m for m in ('paddleocr', 'paddlex', 'paddle') if m in sys.modules))")
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)

    assert ran.stdout.split("\n")[-2] == "True []"
