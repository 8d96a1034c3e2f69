"""The ``pp-structurev3`` route's local substitute on real tables: three PubTabNet validation images
(``tests/ocr/public_tables``, see its README), each a page that is nothing but a table.

Each is read as one table (the layout model misses two of them: the page is read as a table by the
substitute's rule, ``LocalStructureEngine.page_table``), scores at least a TEDS a little below what SLANet_plus
measured on it (benchmarks/tables.py; the route before SLANet_plus and that rule scored 0.03, 0.68 and 0.05),
and keeps the row spans of the ground truth."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ocr_platform.engines.local_structure import LocalStructureEngine

TABLES = Path(__file__).parent / "public_tables"
IGNORED_TAGS = ("thead", "tbody", "b", "i", "sup", "sub")  # as benchmarks/tables.py scores

#: image -> least TEDS (measured with SLANet_plus: 1.000, 0.862, 0.983).
MIN_TEDS = {"PMC6022086_007_00.png": 0.95, "PMC4297392_007_00.png": 0.80, "PMC2871264_002_00.png": 0.93}


@pytest.fixture(scope="module")
def structure_engine(ppocr) -> LocalStructureEngine:
    return LocalStructureEngine(ppocr, reason="PP-StructureV3 weights are not installed here")


def spans(html: str) -> list[str]:
    return sorted(re.findall(r'(?:col|row)span="\d+"', html))


@pytest.mark.parametrize("name", sorted(MIN_TEDS))
def test_a_real_table_image_is_read_as_one_table_with_its_spans(structure_engine: LocalStructureEngine, name: str) -> None:
    from table_recognition_metric import TEDS

    truth = json.loads((TABLES / "ground_truth.json").read_text(encoding="utf-8"))[name]["html"]
    rgb = np.asarray(Image.open(TABLES / name).convert("RGB"))

    blocks, raw = structure_engine.read_page(rgb, "en", {"text": 0.0, "layout": 0.0, "table": 0.0}, orientation=False)

    tables = [block for block in blocks if block["label"] == "table"]
    assert len(tables) == 1 and tables[0]["html"].startswith("<html><body><table>")
    assert TEDS(ignore_nodes=IGNORED_TAGS)(tables[0]["html"], truth) >= MIN_TEDS[name]
    assert spans(tables[0]["html"]) == spans(truth)
    assert "\t" in tables[0]["text"]  # the block's text: cells by tabs, rows by lines
    assert isinstance(raw["page_table"], bool)


def test_a_page_that_is_not_a_table_is_not_read_as_one(structure_engine: LocalStructureEngine) -> None:
    from PIL import ImageDraw

    page = Image.new("RGB", (900, 400), "white")
    draw = ImageDraw.Draw(page)
    for row in range(8):
        draw.text((40, 30 + 40 * row), "The quick brown fox jumps over the lazy dog and runs far away.", fill="black", font_size=24)
    blocks, raw = structure_engine.read_page(np.asarray(page), "en", {"text": 0.0, "layout": 0.0, "table": 0.0}, orientation=False)

    assert raw["page_table"] is False
    assert all(block["label"] != "table" for block in blocks)
