"""The GPU route's completion function publishes a result whose table runs over two pages as one table with its
header once, whatever the endpoint's image did (``core.tables``), against moto."""

from __future__ import annotations

from ocr_platform.core.tables import html_table_text
from tests.conftest import Platform
from tests.handlers.test_completion import VALID_OUTPUT, _success, _vl_job

HEAD = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Tea</td><td>4</td></tr></table>"
PART = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Jam</td><td>2</td></tr></table>"


def _page(number: int, blocks: list[dict], markdown: str) -> dict:
    return {"page": number, "width": 1000, "height": 1400, "scale": 2.0, "lines": [], "blocks": blocks, "markdown": markdown}


def test_a_table_the_endpoint_returned_on_two_pages_is_published_as_one(platform: Platform) -> None:
    _vl_job(platform)
    output = {**VALID_OUTPUT, "page_count": 2, "text": "Item\tQty\nTea\t4\fItem\tQty\nJam\t2", "pages": [
        _page(1, [{"label": "title", "bbox": [50, 20, 500, 60], "text": "Stock"},
                  {"label": "table", "bbox": [50, 100, 950, 1300], "html": HEAD, "text": html_table_text(HEAD)}], f"# Stock\n\n{HEAD}"),
        _page(2, [{"label": "table", "bbox": [50, 100, 950, 600], "html": PART, "text": html_table_text(PART)}], PART),
    ]}

    assert platform.publish("success", _success(platform, "job-vl", output)) == {"outcomes": ["completed"]}

    result = platform.read_json("results/job-vl/result.json")
    first, second = result["pages"]
    assert html_table_text(first["blocks"][1]["html"]) == "Item\tQty\nTea\t4\nJam\t2"
    assert second["blocks"][0]["continued_from"] == {"page": 1, "block": 1, "header_rows": 1}
    assert (first["markdown"].count("<table>"), second["markdown"]) == (1, "<!-- table continued from page 1 -->")
    assert result["text"] == output["text"]  # each page's text is still what is on it
