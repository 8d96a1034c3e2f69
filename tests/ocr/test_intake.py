"""Document intake: types from bytes, page selection, limits and every refusal code (no OCR involved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocr_platform.core.errors import JobError
from ocr_platform.document.intake import DocumentType, IntakeLimits, detect_type, open_document, parse_page_selection
from tests import documents


def _code(path: Path, **kwargs) -> str:
    with pytest.raises(JobError) as info:
        with open_document(path, **kwargs) as doc:
            list(doc.pages())
    return info.value.code


@pytest.mark.parametrize(
    ("key", "kind", "pages"),
    [("png", DocumentType.PNG, 1), ("jpeg", DocumentType.JPEG, 1), ("image_pdf", DocumentType.PDF, 2),
     ("vector_pdf", DocumentType.PDF, 3), ("tiff", DocumentType.TIFF, 3)],
)
def test_types_are_detected_from_bytes_whatever_the_name(docs: dict[str, Path], tmp_path: Path, key: str, kind: DocumentType, pages: int) -> None:
    misnamed = tmp_path / "upload.bin"
    misnamed.write_bytes(docs[key].read_bytes())
    with open_document(misnamed) as doc:
        assert (doc.type, doc.page_count) == (kind, pages)


def test_bmp_and_webp_are_accepted(tmp_path: Path) -> None:
    page = documents.render_page(["hello"], size=(300, 200))
    for fmt in ("BMP", "WEBP"):
        path = tmp_path / f"p.{fmt.lower()}"
        page.save(path, format=fmt)
        with open_document(path) as doc:
            [image] = list(doc.pages())
        assert (image.page, image.width, image.height, image.scale) == (1, 300, 200, 1.0)


def test_pdf_pages_render_at_the_configured_scale_with_1_based_numbers(docs: dict[str, Path]) -> None:
    with open_document(docs["vector_pdf"], pages="1,3", limits=IntakeLimits(render_scale=1.5)) as doc:
        rendered = list(doc.pages())
    assert [p.page for p in rendered] == [1, 3]
    assert rendered[0].scale == 1.5
    assert (rendered[0].width, rendered[0].height) == (round(595.28 * 1.5), round(841.89 * 1.5))


def test_huge_pages_are_downscaled_to_the_pixel_budget(docs: dict[str, Path]) -> None:
    limits = IntakeLimits(render_scale=2.0, max_page_pixels=500_000)
    with open_document(docs["vector_pdf"], pages="1", limits=limits) as doc:
        [page] = list(doc.pages())
    assert page.width * page.height <= 500_000 * 1.01
    assert page.scale < 2.0


def test_page_beyond_any_readable_scale_is_refused(docs: dict[str, Path]) -> None:
    assert _code(docs["png"], limits=IntakeLimits(max_page_pixels=10_000)) == "page_too_large"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [(None, [1, 2, 3, 4, 5]), ("2", [2]), ("1-3,5", [1, 2, 3, 5]), (" 4-5 , 1 ", [1, 4, 5]), ("3,3,2-3", [2, 3])],
)
def test_page_selection(spec: str | None, expected: list[int]) -> None:
    assert parse_page_selection(spec, 5) == expected


@pytest.mark.parametrize("spec", ["0", "3-2", "6", "1-9", "a", "1;2"])
def test_invalid_page_selection_is_refused(spec: str) -> None:
    with pytest.raises(JobError) as info:
        parse_page_selection(spec, 5)
    assert info.value.code == "invalid_pages"


def test_page_selection_is_checked_against_the_real_page_count(docs: dict[str, Path]) -> None:
    assert _code(docs["tiff"], pages="4") == "invalid_pages"


def test_page_count_limit(docs: dict[str, Path]) -> None:
    assert _code(docs["vector_pdf"], limits=IntakeLimits(max_pages=2)) == "too_many_pages"
    with open_document(docs["vector_pdf"], pages="1-2", limits=IntakeLimits(max_pages=2)) as doc:
        assert len(list(doc.pages())) == 2


def test_size_limit(docs: dict[str, Path]) -> None:
    assert _code(docs["png"], limits=IntakeLimits(max_bytes=1000)) == "document_too_large"


def test_encrypted_pdf(docs: dict[str, Path]) -> None:
    assert _code(docs["encrypted"]) == "encrypted_pdf"


def test_truncated_pdf_and_image(docs: dict[str, Path], tmp_path: Path) -> None:
    pdf = tmp_path / "cut.pdf"
    pdf.write_bytes(docs["image_pdf"].read_bytes()[:400])
    png = tmp_path / "cut.png"
    png.write_bytes(docs["png"].read_bytes()[:2000])
    assert _code(pdf) in {"corrupt_document", "empty_document"}
    assert _code(png) == "corrupt_document"


def test_empty_file_and_unsupported_types(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    text = tmp_path / "notes.pdf"
    text.write_text("just some text pretending to be a pdf")
    docx = tmp_path / "letter.docx"
    docx.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    assert _code(empty) == "empty_document"
    assert _code(text) == "unsupported_type"
    assert _code(docx) == "corrupt_document"  # a ZIP signature with no archive behind it: a damaged Office file


def test_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    assert _code(documents.write_bomb_png(tmp_path / "bomb.png")) == "page_too_large"
    assert _code(documents.write_bomb_png(tmp_path / "big.png", 9000, 9000), limits=IntakeLimits(max_image_pixels=50_000_000)) == "page_too_large"


def test_detect_type_magic_numbers() -> None:
    assert detect_type(b"junk\n%PDF-1.7") is DocumentType.PDF
    assert detect_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") is DocumentType.WEBP
    assert detect_type(b"MM\x00*rest") is DocumentType.TIFF
