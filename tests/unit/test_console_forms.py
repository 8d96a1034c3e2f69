"""The web console draws a page's forms over it (``console/app.js``, ``drawPage``): each label and its answer
outlined and joined, each check box by its state, hovering one tells the pair. The console's own files run in
headless Chromium on a page of ``result.json``'s shape; the whole console against the local stack is
tests/local/test_e2e.py."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium

CONSOLE = Path(__file__).resolve().parents[2] / "console"


def _quad(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


PAGE = {
    "page": 1, "width": 1000, "height": 800, "scale": 1.0,
    "lines": [{"text": "Name: Ada Lovelace", "polygon": _quad(100, 100, 500, 140), "score": 0.98}],
    "key_values": [
        {"key": {"text": "Name:", "polygon": _quad(100, 100, 190, 140), "words": []},
         "value": {"text": "Ada Lovelace", "polygon": _quad(210, 100, 500, 140), "words": []}, "confidence": 0.95, "source": "layout"},
        {"key": {"text": "Phone:", "polygon": _quad(100, 200, 200, 240), "words": []}, "value": None, "confidence": 0.7, "source": "layout"},
        {"key": {"text": "Cash", "polygon": _quad(150, 300, 230, 340), "words": []},
         "value": {"text": ":selected:", "polygon": _quad(100, 302, 136, 338), "words": [], "state": "selected"},
         "confidence": 0.8, "source": "layout"},
    ],
    "selection_marks": [
        {"state": "selected", "polygon": _quad(100, 302, 136, 338), "confidence": 0.9},
        {"state": "unselected", "polygon": _quad(300, 302, 336, 338), "confidence": 0.9},
    ],
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from chromium(window="1200x900")


def test_the_result_view_draws_each_pair_and_each_check_box(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    for name in ("index.html", "app.js", "style.css"):
        shutil.copy(CONSOLE / name, tmp_path / name)
    browser.get((tmp_path / "index.html").as_uri())
    browser.execute_script("document.getElementById('result-view').hidden = false; drawPage(arguments[0], '');", json.loads(json.dumps(PAGE)))

    svg = browser.find_element(By.CSS_SELECTOR, "#page-holder svg")
    assert len(svg.find_elements(By.CSS_SELECTOR, "polygon.kv-key")) == 3
    assert len(svg.find_elements(By.CSS_SELECTOR, "polygon.kv-value")) == 1  # a blank has none; a box is drawn as a mark
    assert len(svg.find_elements(By.CSS_SELECTOR, "line.kv-link")) == 2
    assert [m.get_attribute("class") for m in svg.find_elements(By.CSS_SELECTOR, "polygon.mark")] == ["mark selected", "mark unselected"]
    ActionChains(browser).move_to_element(svg.find_elements(By.CSS_SELECTOR, "polygon.kv-key")[0]).perform()
    assert browser.find_element(By.ID, "hover").text == "Name: → Ada Lovelace (confidence 0.95)"
    assert browser.find_element(By.ID, "forms").get_attribute("type") == "checkbox"
