"""Document text is always text: markup and script written in a document's cells, paragraphs, titles, names and
alt texts come out of every reader, every route's Markdown and hOCR as the characters they are, never as a live
element or link (rendered as CommonMark with HTML on, then parsed by an HTML5 parser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ocr_platform.core.results import EngineInfo, build_result
from ocr_platform.document import office
from ocr_platform.document.intake import IntakeLimits, read_native
from ocr_platform.document.native_pages import page_content
from ocr_platform.engines.conversion import layout_page_content
from ocr_platform.engines.regions import page_markdown
from ocr_platform.outputs.formats import markdown_document
from ocr_platform.outputs.hocr import hocr_document
from tests import hostile_text as ht

_INFO = EngineInfo(name="test", models=[], version="0")


def _markdown(path: Path) -> tuple[str, list[Any]]:
    native, units = read_native(path, pages=None, limits=IntakeLimits())
    pages = [page_content(unit, {ref: ht.PAYLOAD for ref in unit.picture_refs()}) for unit in units]
    return "\n\n---\n\n".join(page.markdown for page in pages), native.notes.warnings


@pytest.mark.parametrize("kind", sorted(ht.MAKERS))
def test_every_reader_keeps_markup_in_the_document_as_text(kind: str, tmp_path: Path) -> None:
    markdown, _ = _markdown(ht.MAKERS[kind](tmp_path / f"hostile.{kind}"))

    assert ht.live_elements(markdown) == []
    shown = ht.shown_text(markdown)
    assert ht.shown_payload(kind) in shown, shown  # the text is there, as typed


@pytest.mark.parametrize(("kind", "first"), [("docx", "_convert"), ("pptx", "pptx_markdown"), ("xlsx", "xlsx_markdown")])
def test_the_second_readers_keep_it_as_text_too(kind: str, first: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocr_platform.document import office_fallback_decks

    def failing(*args: Any) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr(office if first == "_convert" else office_fallback_decks, first, failing)

    markdown, warnings = _markdown(ht.MAKERS[kind](tmp_path / f"hostile.{kind}"))

    assert [w["code"] for w in warnings] == ["converter_fallback"]
    assert ht.live_elements(markdown) == []
    assert ht.PAYLOAD in ht.shown_text(markdown)


def test_mammoth_keeps_it_as_text_too(tmp_path: Path) -> None:
    from ocr_platform.document.office_mammoth import mammoth_markdown

    read = mammoth_markdown(ht.docx(tmp_path / "hostile.docx"))

    [(_, markdown)] = read.units
    assert ht.live_elements(markdown) == [] and ht.PAYLOAD in ht.shown_text(markdown)


def test_a_sheet_keeps_its_name_as_typed(tmp_path: Path) -> None:
    _, units = read_native(ht.xlsx(tmp_path / "hostile.xlsx"), pages=None, limits=IntakeLimits())

    assert units[0].name == "<b onclick=alert(5)>"


def test_a_picture_whose_text_reads_as_markup_stays_text(tmp_path: Path) -> None:
    _, units = read_native(ht.html(tmp_path / "hostile.html"), pages=None, limits=IntakeLimits())
    [ref] = units[0].picture_refs()

    content = page_content(units[0], {ref: ht.PAYLOAD})

    assert ht.live_elements(content.markdown) == []
    assert any(block.get("text") == ht.PAYLOAD for block in content.blocks)  # the block's text is plain text


def _ocr_page(**extra: Any) -> dict[str, Any]:
    line = {"text": ht.PAYLOAD, "polygon": [[0, 0], [90, 0], [90, 9], [0, 9]], "score": 0.9}
    return {"page": 1, "width": 100, "height": 50, "scale": 1.0, "lines": [line], **extra}


def test_an_ocr_line_that_reads_as_markup_stays_text_in_markdown_and_hocr() -> None:
    result = build_result("j", "pp-ocrv5", _INFO, [_ocr_page()])  # type: ignore[list-item]

    markdown = markdown_document(result)
    hocr = hocr_document(result)

    assert ht.live_elements(markdown) == [] and ht.PAYLOAD in ht.shown_text(markdown)
    assert ht.live_elements(hocr) == [] and ht.PAYLOAD in ht.shown_text(hocr)


def test_layout_markdown_keeps_the_page_text_as_text() -> None:
    blocks = [{"label": "title", "text": ht.PAYLOAD}, {"label": "text", "text": ht.PAYLOAD}]
    res = {"parsing_res_list": [
        {"block_label": "text", "block_content": ht.PAYLOAD, "block_bbox": [0, 0, 90, 9]},
        {"block_label": "table", "block_content": f"<table><tr><td>{ht.PAYLOAD}</td></tr></table>", "block_bbox": [0, 20, 90, 40]},
    ], "overall_ocr_res": {}}

    class Res(dict):  # PaddleX's result: a mapping with its Markdown beside it
        markdown = {"markdown_texts": f"{ht.PAYLOAD}\n\n<table><tr><td>{ht.PAYLOAD}</td></tr></table>"}

    content = layout_page_content(Res(res))

    for markdown in (page_markdown(blocks), content["markdown"], content["blocks"][1]["html"]):  # type: ignore[typeddict-item]
        assert ht.live_elements(markdown) == []
        assert ht.PAYLOAD in ht.shown_text(markdown)
    assert "<table><tr><td>" in content["markdown"]  # the pipeline's own table stays a table
