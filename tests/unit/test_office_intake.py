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
    assert err.value.code == "document_too_large"
    assert err.value.message.startswith("The HTML file nests its elements 257 deep; the limit is 256 deep (max_html_depth")


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


def test_a_legacy_binary_word_file_is_read_from_its_piece_table() -> None:
    native, [page] = read_native(od.LEGACY_DOC, pages=None, limits=IntakeLimits())

    assert (native.kind, page.unit, page.markdown) == ("doc", "document", "Test OLE file, saved as Word 97-2003 Document.")


#: docx2python 3.5.0's test files that paddleocr's converter cannot read, though Word opens them.
STRICT_DOCX = od.OFFICE / "docx2python-strict.docx"
RENAMED_DOCX = od.OFFICE / "docx2python-renamed_document_xml.docx"
VML_PICTURE_DOCX = od.OFFICE / "docx2python-has_pict.docx"


def _rewritten(source: Path, part: str, data: bytes | None) -> bytes:
    """``source`` with ``part`` replaced by ``data`` (dropped when ``None``)."""
    out = io.BytesIO()
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as copy:
        for info in original.infolist():
            if info.filename != part:
                copy.writestr(info.filename, original.read(info.filename))
            elif data is not None:
                copy.writestr(info.filename, data)
    return out.getvalue()


def test_a_strict_open_xml_docx_is_read_by_the_fallback_with_its_lists_and_table() -> None:
    native, [page] = read_native(STRICT_DOCX, pages=None, limits=IntakeLimits())
    assert native.kind == "docx" and native.office is not None and native.office.strict
    assert "- Bullet1\n- Bullet2\n1. Number1\n2. Number2" in page.markdown
    assert "<tr><td>Cellaa</td><td>Cellab</td></tr><tr><td>Cellba</td><td>Cellbb</td></tr>" in page.markdown
    [warning] = native.notes.warnings
    assert (warning["code"], warning["ran"]) == ("converter_fallback", "docx2python")
    assert "no relationship of type" in warning["reason"] and "DOCX" in warning["message"]


def test_a_docx_with_a_vml_picture_is_read_by_the_fallback_with_its_picture_in_place() -> None:
    native, [page] = read_native(VML_PICTURE_DOCX, pages=None, limits=IntakeLimits())
    assert [w["code"] for w in native.notes.warnings] == ["converter_fallback"]
    assert "list index out of range" in native.notes.warnings[0]["reason"]
    assert "BOEHRINGER INGELHEIM GROUP OF COMPANIES" in page.markdown and "Test heading" in page.markdown
    assert page.picture_refs() == ["images/image1.png"] and page.pictures["images/image1.png"][:4] == b"\x89PNG"
    assert native.notes.unplaced_pictures == 0


def test_the_main_part_is_found_from_the_package_relationships_not_its_usual_name() -> None:
    native, [page] = read_native(RENAMED_DOCX, pages=None, limits=IntakeLimits())  # word/blah_blah.xml
    assert native.kind == "docx" and native.notes.warnings == []
    assert page.markdown == "This is a link to [my website](http://www.shayallenhill.com/)."


def test_a_strict_file_neither_reader_can_read_says_to_save_it_as_transitional(tmp_path: Path) -> None:
    path = _write(tmp_path, "strict.docx", _rewritten(STRICT_DOCX, "word/document.xml", b"<not-xml"))
    with pytest.raises(JobError) as err:
        read_native(path, pages=None, limits=IntakeLimits())
    assert err.value.code == "unsupported_type" and "Strict Open XML" in err.value.message and "Transitional" in err.value.message


@pytest.mark.parametrize(("part", "data", "words"), [("word/document.xml", None, "does not hold it"),
                                                     ("word/document.xml", b"<w:document><broken", "cannot be read")])
def test_a_docx_missing_or_breaking_its_main_part_stays_corrupt(tmp_path: Path, part: str, data: bytes | None, words: str) -> None:
    path = _write(tmp_path, "broken.docx", _rewritten(od.DOCX_TEXT, part, data))
    with pytest.raises(JobError) as err:
        read_native(path, pages=None, limits=IntakeLimits())
    assert err.value.code == "corrupt_document" and words in err.value.message, err.value.message


@pytest.mark.parametrize(("name", "words"), [("test_rst_admonitions.html", "Will Robinson"),
                                             ("test_txt_001.html", "Algen generates opionated ORM classes")])
def test_html_fragments_starting_with_an_aside_or_with_words_are_html(name: str, words: str) -> None:
    native, [page] = read_native(od.OFFICE / name, pages=None, limits=IntakeLimits())
    assert native.kind == "html" and words in page.markdown


@pytest.mark.parametrize(("source", "plain", "other", "words"), [
    (od.DOCX_TEXT, b"wordprocessingml.document", b"wordprocessingml.template", "Lorem ipsum dolor sit amet"),
    (od.PPTX_MIXED, b"presentationml.presentation", b"presentationml.slideshow", "Cell text 1"),
    (od.PPTX_MIXED, b"presentationml.presentation", b"presentationml.template", "Cell text 1"),
])
def test_templates_and_slide_shows_are_read_by_the_converter(tmp_path: Path, source: Path, plain: bytes, other: bytes, words: str) -> None:
    with zipfile.ZipFile(source) as archive:
        types = archive.read("[Content_Types].xml").replace(plain + b".main+xml", other + b".main+xml")
    path = _write(tmp_path, "other", _rewritten(source, "[Content_Types].xml", types))
    native, pages = read_native(path, pages=None, limits=IntakeLimits())
    assert native.notes.warnings == [] and words in pages[0].markdown


def _converter_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from ocr_platform.document import office

    def failing(named: Path, kind: str) -> None:
        raise RuntimeError("converter bug")

    monkeypatch.setattr(office, "_convert", failing)


def test_a_pptx_is_read_slide_by_slide_by_python_pptx_first(monkeypatch: pytest.MonkeyPatch) -> None:
    _converter_fails(monkeypatch)  # the converter is only the second reader of a PPTX: never asked here
    native, [slide] = read_native(od.PPTX_MIXED, pages=None, limits=IntakeLimits())
    assert native.notes.warnings == []
    assert "<tr><td>Col head 1</td><td>Col head 2</td></tr><tr><td>Cell text 1</td><td>Cell text 2</td></tr>" in slide.markdown
    assert "Test text" in slide.markdown and "Group test text" in slide.markdown and len(slide.picture_refs()) == 2
    _, [second] = read_native(od.PPTX_PICTURES, pages="2", limits=IntakeLimits())
    assert (second.number, len(second.picture_refs())) == (2, 2)


def test_a_pptx_python_pptx_fails_on_is_read_by_the_converter(monkeypatch: pytest.MonkeyPatch) -> None:
    from ocr_platform.document import office_fallback_decks

    def failing(path: Path) -> None:
        raise KeyError("a part python-pptx wants")

    monkeypatch.setattr(office_fallback_decks, "pptx_markdown", failing)
    native, [slide] = read_native(od.PPTX_MIXED, pages=None, limits=IntakeLimits())
    assert [(w["code"], w["requested"], w["ran"]) for w in native.notes.warnings] == [("converter_fallback", "python-pptx", "PaddleOCR's converter")]
    assert "Col head 1" in slide.markdown


def test_an_xlsx_is_read_sheet_by_sheet_by_openpyxl_its_picture_in_its_cell(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _converter_fails(monkeypatch)
    native, [sheet] = read_native(od.xlsx_with_picture(tmp_path / "book.xlsx"), pages=None, limits=IntakeLimits())
    assert native.notes.warnings == []
    assert sheet.name == "Sheet1" and '<tr><td>1</td><td></td><td><img src="images/Sheet1_1.png"></td></tr><tr><td>2</td>' in sheet.markdown
    [ref] = sheet.picture_refs()
    assert sheet.pictures[ref][:4] == b"\x89PNG"
