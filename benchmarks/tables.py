"""Tables on real PubTabNet images: the ``pp-structurev3`` route's local substitute, scored with TEDS.

The images and their ground-truth HTML are PubTabNet's published examples (``benchmarks/data/pubtabnet/``,
see its README). Each image is read two ways by one ``LocalStructureEngine`` (built in-process as
``tests/ocr/test_local_structure.py`` builds it, PP-OCRv5 lines, the weights installed here):

- **route**: the whole route on the image as a page (``read_structure``: layout model, then the table model
  on each table region, or on the whole page where the page is a table; see the engine). The prediction
  is the largest table block's HTML; an image where no table block comes back scores 0.
- **table model**: the installed table model alone on the whole image with the same OCR lines
  (``table_html`` on a page-sized region): what the table model can do when the table is found.

Scores: TEDS (structure and cell text) and TEDS-struct (structure only) from ``table-recognition-metric``
(``TEDS``, an APTED tree edit distance), with ``<thead>``/``<tbody>`` and the inline tags ``<b>``, ``<i>``,
``<sup>``, ``<sub>`` stripped from both sides (the routes write no row groups and read no bold). Reported:
mean TEDS, mean TEDS-struct, images with a table found, and seconds per image (OCR included; warm, the
engine loaded once).

    .venv/bin/python benchmarks/tables.py [--json out.json]

Not part of the test suite; docs/performance/tables.md reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

DATA = ROOT / "benchmarks" / "data" / "pubtabnet"
#: Tags stripped from prediction and ground truth before scoring (their text is kept).
IGNORED_TAGS = ("thead", "tbody", "b", "i", "sup", "sub")
EMPTY_TABLE = "<html><body><table></table></body></html>"


def ground_truth(folder: Path = DATA) -> dict[str, str]:
    """Image file name -> ground-truth HTML (``ground_truth.json``, written from PubTabNet's examples)."""
    entries = json.loads((folder / "ground_truth.json").read_text(encoding="utf-8"))
    return {name: entry["html"] for name, entry in entries.items()}


def scorers() -> tuple[Any, Any]:
    """TEDS and TEDS-struct, both ignoring ``IGNORED_TAGS``."""
    from table_recognition_metric import TEDS

    return TEDS(ignore_nodes=IGNORED_TAGS), TEDS(structure_only=True, ignore_nodes=IGNORED_TAGS)


def build_engine() -> Any:
    """The substitute as the tests build it: the PP-OCRv5 engine on the installed weights, no hub."""
    import os
    import tempfile

    os.environ.setdefault("OCR_MODEL_CACHE_DIR", tempfile.mkdtemp(prefix="tables-bench-cache-"))
    from ocr_platform.engines.local_structure import LocalStructureEngine
    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
    from ocr_platform.engines.settings import PaddleSettings

    ocr = PPOCRv5Engine(PaddleSettings(allow_hub_download=False, bucket=None))
    return LocalStructureEngine(ocr, reason="benchmark")


def route_table(engine: Any, rgb: Any) -> str | None:
    """The largest table block's HTML when the route reads ``rgb`` as a page, else ``None``."""
    stages = {"text": 0.0, "layout": 0.0, "table": 0.0}
    blocks, _ = engine.read_page(rgb, "en", stages, orientation=False)
    tables = [b for b in blocks if b["label"] == "table" and b.get("html")]
    if not tables:
        return None
    return max(tables, key=lambda b: (b["bbox"][2] - b["bbox"][0]) * (b["bbox"][3] - b["bbox"][1]))["html"]


def model_table(engine: Any, rgb: Any) -> str | None:
    """The table model alone on the whole image, with the image's OCR lines."""
    import numpy as np

    from ocr_platform.engines.regions import Region

    lines, _ = engine.ocr.read_image(np.ascontiguousarray(rgb[:, :, ::-1]), "en", orientation=False)
    height, width = rgb.shape[:2]
    result: str | None = engine.table_html(rgb, Region("table", (0.0, 0.0, float(width), float(height)), lines=lines))
    return result


def run(engine: Any, names: list[str], truth: dict[str, str], *, folder: Path = DATA) -> dict[str, Any]:
    """Per-mode means and per-image scores."""
    import numpy as np
    from PIL import Image

    teds, teds_struct = scorers()
    report: dict[str, Any] = {}
    for mode, read in (("route", route_table), ("table model", model_table)):
        rows = []
        read(engine, np.asarray(Image.open(folder / names[0]).convert("RGB")))  # warm-up
        for name in names:
            rgb = np.asarray(Image.open(folder / name).convert("RGB"))
            started = time.perf_counter()
            html = read(engine, rgb)
            seconds = time.perf_counter() - started
            predicted = html or EMPTY_TABLE
            rows.append({
                "image": name, "found": html is not None, "seconds": round(seconds, 3),
                "teds": round(teds(predicted, truth[name]), 4), "teds_struct": round(teds_struct(predicted, truth[name]), 4),
            })
        count = len(rows)
        report[mode] = {
            "teds": round(sum(r["teds"] for r in rows) / count, 3),
            "teds_struct": round(sum(r["teds_struct"] for r in rows) / count, 3),
            "found": sum(r["found"] for r in rows), "images": count,
            "seconds_per_image": round(sum(r["seconds"] for r in rows) / count, 3),
            "per_image": rows,
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the full report (per image) here")
    args = parser.parse_args()
    truth = ground_truth()
    engine = build_engine()
    report = run(engine, sorted(truth), truth)
    print(f"table model: {engine.info['models'][3]} ({engine.info['version']}); {platform.processor() or platform.machine()}")
    print(f"{'mode':<12} {'TEDS':>6} {'TEDS-struct':>12} {'found':>7} {'s/image':>8}")
    for mode, row in report.items():
        print(f"{mode:<12} {row['teds']:>6.3f} {row['teds_struct']:>12.3f} {row['found']:>4}/{row['images']:<2} {row['seconds_per_image']:>8.3f}")
    if args.json:
        args.json.write_text(json.dumps({"table_model": engine.info["models"][3], **report}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
