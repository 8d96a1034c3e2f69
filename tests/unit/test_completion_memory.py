"""The completion function's memory arithmetic holds for what it really allocates.

``defaults.completion_memory_floor_mb`` sizes the function from ``OUTPUT_MEMORY_FACTOR`` bytes per output
byte. This measures the peak Python allocation of the steps the completion function runs on an endpoint
output (decode, parse, validate, serialize) and fails if the factor no longer covers it.
"""

from __future__ import annotations

import json
import tracemalloc

from ocr_platform.core import defaults
from ocr_platform.core.results import validate_result
from ocr_platform.gpu.completion import MAX_OUTPUT_BYTES


def _dense_output(pages: int) -> bytes:
    line = {"text": "Invoice 12345, total amount due 678.90 EUR, payable within 30 days", "score": 0.97,
            "polygon": [[10, 10], [300, 10], [300, 60], [10, 60]]}
    document = {
        "job_id": "j", "model": "paddleocr-vl", "engine": {"name": "PaddleOCR-VL", "models": ["m"], "version": "1"},
        "page_count": pages, "text": "",
        "pages": [{"page": n, "width": 1654, "height": 2339, "scale": 2.0, "lines": [dict(line) for _ in range(60)],
                   "blocks": [{"label": "text", "bbox": [1, 2, 3, 4], "text": "y" * 200} for _ in range(20)],
                   "markdown": "z" * 3000} for n in range(1, pages + 1)],
        "timings": {"inference": 1.0},
    }
    return json.dumps(document).encode()


def test_the_memory_factor_covers_parsing_validating_and_writing_an_output() -> None:
    body = _dense_output(300)
    tracemalloc.start()
    try:
        result = validate_result(json.loads(body.decode("utf-8")), job_id="j")
        json.dumps(result, ensure_ascii=False).encode()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    held = len(body) + peak  # the body read from S3 is held throughout
    assert held <= defaults.OUTPUT_MEMORY_FACTOR * len(body), f"{held / len(body):.1f} bytes per output byte"


def test_the_deployed_memory_holds_the_largest_admitted_output() -> None:
    assert MAX_OUTPUT_BYTES == defaults.MAX_ENDPOINT_OUTPUT_BYTES
    assert defaults.COMPLETION_MEMORY_MB >= defaults.completion_memory_floor_mb(MAX_OUTPUT_BYTES)
