"""Office and HTML files at intake: the type told from the bytes, the units counted, and each bad input refused
with its own code before any engine runs (no traceback, no hang)."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest

from ocr_platform.core.errors import JobError
from ocr_platform.document.intake import DocumentType, IntakeLimits, file_type, open_document, read_native, selected_pages
from tests import office_documents as od


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("source", "kind", "units"),
    [(od.DOCX_PICTURES, DocumentType.DOCX, [1]), (od.PPTX_PICTURES, DocumentType.PPTX, [1, 2]),
     (od.XLSX_TEXT, DocumentType.XLSX, [1]), (od.HTML_TABLES, DocumentType.HTML, [1])],
)
def test_the_type_comes_from_the_bytes_whatever_the_name(tmp_path: Path, source: Path, kind: DocumentType, units: list[int]) -> None:
    renamed = _write(tmp_path, "upload.bin", source.read_bytes())  # no extension: the bytes decide
    assert file_type(renamed) is kind and kind.native
    assert selected_pages(renamed, pages=None, limits=IntakeLimits()) == units


def test_slides_are_pages_and_a_selection_outside_them_is_refused(tmp_path: Path) -> None:
    deck = _write(tmp_path, "deck", od.PPTX_PICTURES.read_bytes())
    native, pages = read_native(deck, pages="2", limits=IntakeLimits())
    assert (native.kind, native.unit, [p.number for p in pages], [p.unit for p in pages]) == ("pptx", "slide", [2], ["slide"])
    with pytest.raises(JobError) as err:
        selected_pages(deck, pages="3", limits=IntakeLimits())
    assert err.value.code == "invalid_pages"


def test_pictures_are_handed_back_beside_the_text(tmp_path: Path) -> None:
    _, [page] = read_native(od.DOCX_PICTURES, pages=None, limits=IntakeLimits())
    refs = page.picture_refs()  # five placements of three pictures, each handed back as the file has it
    assert len(refs) == 5 and len(set(page.pictures.values())) == 3 and all(page.pictures[ref][:4] == b"\x89PNG" for ref in refs)


def test_an_office_file_is_not_opened_as_page_images_and_says_which_routes_read_it(tmp_path: Path) -> None:
    with pytest.raises(JobError) as err, open_document(od.DOCX_TEXT):
        pass
    assert err.value.code == "unsupported_type"
    assert "pp-ocrv5, pp-ocrv6, pp-structurev3" in err.value.message and "paddleocr-vl" in err.value.message


@pytest.mark.parametrize(
    ("make", "code", "words"),
    [(od.encrypted_docx, "encrypted_document", "password protected"),
     (od.zip_bomb, "archive_too_large", "ZIP bomb"),
     (od.truncated_docx, "corrupt_document", "truncated"),
     (od.huge_html, "document_too_large", "HTML files are read up to")],
)
def test_each_bad_input_fails_with_its_own_code_quickly(tmp_path: Path, make, code: str, words: str) -> None:  # noqa: ANN001
    path = _write(tmp_path, "input", make())
    started = time.perf_counter()
    with pytest.raises(JobError) as err:
        selected_pages(path, pages=None, limits=IntakeLimits())
    assert (err.value.code, words in err.value.message) == (code, True), err.value.message
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize(("limits", "words"), [(IntakeLimits(max_unpacked_bytes=50_000), "would unpack to"),
                                               (IntakeLimits(max_unpacked_xml_bytes=20_000), "XML parts would unpack to")])
def test_a_file_that_would_unpack_past_the_limit_is_refused_from_its_directory(limits: IntakeLimits, words: str) -> None:
    with pytest.raises(JobError) as err:
        selected_pages(od.DOCX_PICTURES, pages=None, limits=limits)
    assert err.value.code == "archive_too_large" and words in err.value.message


def test_html_nested_past_what_can_be_converted_is_refused_not_crashed(tmp_path: Path) -> None:
    path = _write(tmp_path, "deep.html", b"<html><body>" + b"<div>" * 100_000 + b"text" + b"</div>" * 100_000)
    with pytest.raises(JobError) as err:
        read_native(path, pages=None, limits=IntakeLimits())
    assert (err.value.code, err.value.message) == ("corrupt_document", "The HTML file is nested too deeply to be read.")


def test_a_zip_that_is_no_office_file_is_an_unsupported_type(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(JobError) as err:
        selected_pages(_write(tmp_path, "a.zip", buffer.getvalue()), pages=None, limits=IntakeLimits())
    assert err.value.code == "unsupported_type" and "not a DOCX, PPTX or XLSX" in err.value.message


def test_a_macro_enabled_file_is_read_without_its_macros(tmp_path: Path) -> None:
    path = _write(tmp_path, "macro.docm", od.docm())
    native, [page] = read_native(path, pages=None, limits=IntakeLimits())
    assert native.macro_enabled and native.kind == "docx"
    assert "Lorem ipsum dolor sit amet" in page.markdown and "AutoOpen" not in page.markdown


def test_html_scripts_styles_and_remote_pictures_are_dropped_and_embedded_ones_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, "page.html", od.html_with_picture())
    _, [page] = read_native(path, pages=None, limits=IntakeLimits())
    assert page.markdown.startswith("# Quarterly report")
    assert "script ran" not in page.markdown and "color: red" not in page.markdown and "example.com" not in page.markdown
    assert "remote chart" in page.markdown and "- first point" in page.markdown
    [ref] = page.picture_refs()
    assert page.pictures[ref] == od.PICTURE.read_bytes()


def test_html_tables_keep_their_spans(tmp_path: Path) -> None:
    _, [page] = read_native(od.HTML_TABLES, pages=None, limits=IntakeLimits())
    assert '<td colspan="3">Cells may span columns.</td>' in page.markdown
    assert '<td colspan="2" rowspan="2">Table cells contain body elements.</td>' in page.markdown


def test_a_legacy_binary_word_file_is_refused_saying_what_to_save_it_as() -> None:
    with pytest.raises(JobError) as err:
        selected_pages(od.LEGACY_DOC, pages=None, limits=IntakeLimits())
    assert (err.value.code, err.value.message) == (
        "unsupported_type", "The file is Word 97-2003 (.doc); save it as .docx, .pptx or .xlsx (or as PDF) and resubmit.")
