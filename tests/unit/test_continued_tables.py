"""A table that continues on the next page becomes one table with its header once (``ocr_platform.core.tables``),
on hand-built pages: the rules, chains over several pages, the Markdown, and the same answer whether the pages
are merged at once or chunk by chunk (a split job) and then again."""

from __future__ import annotations

import copy
from typing import Any

from ocr_platform.core.chunks import merge_chunk_results
from ocr_platform.core.results import EngineInfo, build_result
from ocr_platform.core.tables import html_table_text, merge_continued_tables, merged_tables
from ocr_platform.engines.regions import page_markdown

HEADER = ["Item", "Qty", "Price"]


def table(rows: list[list[str]], *, header: list[str] | None = HEADER, th: bool = False) -> str:
    cell = "th" if th else "td"
    head = f"<tr>{''.join(f'<{cell}>{c}</{cell}>' for c in header)}</tr>" if header else ""
    body = "".join(f"<tr>{''.join(f'<td>{c}</td>' for c in row)}</tr>" for row in rows)
    return f"<html><body><table>{head}{body}</table></body></html>"


def rows(first: int, count: int) -> list[list[str]]:
    return [[f"item {n}", str(n), f"{n}.00"] for n in range(first, first + count)]


def page(number: int, *blocks: dict[str, Any], width: int = 1000) -> dict[str, Any]:
    page = {"page": number, "width": width, "height": 1400, "scale": 2.0, "lines": [], "blocks": list(blocks)}
    page["markdown"] = page_markdown(page["blocks"])
    return page


def table_block(html: str, bbox: tuple[float, float, float, float] = (50, 100, 950, 1300)) -> dict[str, Any]:
    return {"label": "table", "bbox": list(bbox), "html": html, "text": html_table_text(html)}


def text_block(label: str, text: str) -> dict[str, Any]:
    return {"label": label, "bbox": [50, 20, 400, 60], "text": text}


def document_markdown(pages: list[dict[str, Any]]) -> str:
    return "\n\n".join(p["markdown"] for p in pages if p["markdown"])


def test_a_table_that_goes_on_with_a_repeated_header_is_one_table_with_the_header_once() -> None:
    pages = [
        page(1, text_block("title", "Stock"), table_block(table(rows(1, 3))), text_block("footer", "Page 1")),
        page(2, text_block("header", "Stock, continued"), table_block(table(rows(4, 2))), text_block("text", "Notes")),
    ]

    assert merge_continued_tables(pages) == 1

    head, part = pages[0]["blocks"][1], pages[1]["blocks"][1]
    assert html_table_text(head["html"]).split("\n") == ["\t".join(HEADER)] + ["\t".join(r) for r in rows(1, 5)]
    assert part["continued_from"] == {"page": 1, "block": 1, "header_rows": 1}
    # Each page keeps what is on it: its own cells, text and box.
    assert part["html"] == table(rows(4, 2)) and part["text"] == html_table_text(table(rows(4, 2)))
    assert head["text"] == html_table_text(table(rows(1, 3)))
    markdown = document_markdown(pages)
    assert markdown.count("<table>") == 1 and markdown.count("<td>Item</td>") == 1
    assert all(f"item {n}" in markdown for n in range(1, 6)) and "Notes" in markdown
    assert "Stock, continued" not in markdown and "Page 1" not in markdown  # page furniture: its blocks only
    # The engine's own Markdown of the merged blocks is what the merge wrote (figures.py relies on it).
    assert [p["markdown"] for p in pages] == [page_markdown(p["blocks"]) for p in pages]


def test_a_part_without_a_header_is_appended_whole() -> None:
    pages = [page(1, table_block(table(rows(1, 2)))), page(2, table_block(table(rows(3, 2), header=None)))]

    assert merge_continued_tables(pages) == 1
    assert html_table_text(pages[0]["blocks"][0]["html"]).count("Item") == 1
    assert "item 4" in html_table_text(pages[0]["blocks"][0]["html"])
    assert pages[1]["blocks"][0]["continued_from"]["header_rows"] == 0


def test_a_header_read_a_little_differently_by_ocr_still_counts_as_the_header() -> None:
    pages = [page(1, table_block(table(rows(1, 2), header=["Notice Date", "Company", "Amount"]))),
             page(2, table_block(table(rows(3, 2), header=["Notice Date", "Cornpany", "Amount"])))]

    merge_continued_tables(pages)

    assert html_table_text(pages[0]["blocks"][0]["html"]).count("Notice Date") == 1


def test_data_rows_that_differ_only_in_their_numbers_are_never_taken_for_a_repeated_header() -> None:
    """As a split job's chunk sees a table: its first page continues a table whose header is in another chunk."""
    def notices(first: int, count: int) -> list[list[str]]:
        return [[f"07/{n:02d}/2015", f"Boeing Company {n}", "Long Beach", str(n), "Layoff Permanent"] for n in range(first, first + count)]

    pages = [page(1, table_block(table(notices(10, 3), header=None))), page(2, table_block(table(notices(13, 3), header=None)))]

    merge_continued_tables(pages)

    assert html_table_text(pages[0]["blocks"][0]["html"]).split("\n") == ["\t".join(row) for row in notices(10, 6)]
    assert pages[1]["blocks"][0]["continued_from"]["header_rows"] == 0


def test_three_pages_chain_into_the_first() -> None:
    pages = [page(1, table_block(table(rows(1, 3)))), page(2, table_block(table(rows(4, 3)))),
             page(3, table_block(table(rows(7, 2))), text_block("text", "End of report"))]

    assert merge_continued_tables(pages) == 2

    assert html_table_text(pages[0]["blocks"][0]["html"]).split("\n")[1:] == ["\t".join(r) for r in rows(1, 8)]
    assert [p["blocks"][0].get("continued_from") for p in pages] == [
        None, {"page": 1, "block": 0, "header_rows": 1}, {"page": 1, "block": 0, "header_rows": 1}]
    assert merged_tables(pages) == [{"page": 1, "block": 0, "pages": [1, 2, 3]}]
    assert document_markdown(pages).count("<table>") == 1


def test_what_is_not_a_continuation_stays_apart() -> None:
    cases = {
        "text after the table": [page(1, table_block(table(rows(1, 2))), text_block("text", "Total: 3 items")),
                                 page(2, table_block(table(rows(3, 2))))],
        "text before the next table": [page(1, table_block(table(rows(1, 2)))),
                                       page(2, text_block("title", "Prices"), table_block(table(rows(3, 2))))],
        "other columns": [page(1, table_block(table(rows(1, 2)))),
                          page(2, table_block(table([["a", "b"]], header=["Name", "Age"])))],
        "a header of its own": [page(1, table_block(table(rows(1, 2)))),
                                page(2, table_block(table(rows(3, 2), header=["Code", "Unit", "Cost"], th=True)))],
        "a row group header of its own": [page(1, table_block(table(rows(1, 2)))), page(2, table_block(
            table(rows(3, 2), header=["Code", "Unit", "Cost"]).replace("<table><tr>", "<table><thead><tr>", 1).replace("</tr>", "</tr></thead>", 1)))],
        "another width": [page(1, table_block(table(rows(1, 2)))),
                          page(2, table_block(table(rows(3, 2), header=None), bbox=(50, 100, 500, 1300)))],
        "not the next page": [page(1, table_block(table(rows(1, 2)))), page(3, table_block(table(rows(3, 2), header=None)))],
    }
    for name, pages in cases.items():
        before = copy.deepcopy(pages)
        assert merge_continued_tables(pages) == 0, name
        assert pages == before, name


def test_markdown_in_paddlex_form_keeps_one_table_and_no_empty_wrapper() -> None:
    """PP-StructureV3's own Markdown centres a table in a ``div`` and adds a border."""
    first, second = table(rows(1, 2)), table(rows(3, 2))
    pages = [page(1, table_block(first)), page(2, table_block(second), text_block("text", "After"))]
    pages[0]["markdown"] = '## Stock\n\n<div style="text-align: center;">' + first.replace("<table>", '<table border="1">') + "</div>\n"
    pages[1]["markdown"] = '<div style="text-align: center;">' + second.replace("<table>", '<table border="1">') + "</div>\n\nAfter"

    merge_continued_tables(pages)

    assert pages[0]["markdown"].startswith('## Stock\n\n<div style="text-align: center;"><html><body><table>')
    assert "item 4" in pages[0]["markdown"]
    assert pages[1]["markdown"] == "<!-- table continued from page 1 -->\n\nAfter"


def test_merging_chunk_by_chunk_then_the_whole_gives_what_merging_the_whole_gives() -> None:
    """A split job: each chunk's engine merged its own pages; the chunks' merge goes on over their joins."""
    def document() -> list[dict[str, Any]]:
        return [page(1, text_block("title", "Stock"), table_block(table(rows(1, 3)))),
                page(2, table_block(table(rows(4, 3)))), page(3, table_block(table(rows(7, 3)))),
                page(4, table_block(table(rows(10, 2))), text_block("text", "End"))]

    whole = document()
    merge_continued_tables(whole)
    engine = EngineInfo(name="PP-StructureV3", models=[], version="0")
    for cut in ([1, 3], [2], [1], [3], [1, 2, 3]):
        pages = document()
        chunks = [pages[a:b] for a, b in zip([0, *cut], [*cut, len(pages)], strict=True)]
        for chunk in chunks:
            merge_continued_tables(chunk)
        merged = merge_chunk_results("j", [build_result("j", "pp-structurev3", engine, chunk) for chunk in chunks])
        assert merged["pages"] == whole, cut
        assert merge_continued_tables(merged["pages"]) == 0  # the completion's call changes nothing after it
