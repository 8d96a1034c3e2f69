"""``text_layer: auto`` against ``ignore`` on the ``pp-ocrv5`` route, in one run: s/page and word F1 per kind of page.

- **dense born-digital**: pages 2-21 of pypdf's ``resources/issue-604.pdf`` (a two-column landscape clinical
  guideline, 2,400-3,200 characters a page, a logo on every page and some figures). Reference: pypdf's
  extraction of each page.
- **scanned**: OCRmyPDF's ``tests/resources/linn.pdf`` (a two-column scan, no text layer). Reference: ``linn.txt``.
- **scanned with an earlier OCR layer**: the test suite's report pages, scanned at 150 DPI, each carrying
  an invisible layer of its own text (``tests.documents.write_scan_with_layer``; reference: that text), and
  pypdf's ``Seige_of_Vicksburg_Sample_OCR.pdf`` (a real scan with a real earlier OCR; reference: its own layer,
  so its F1 says how far each mode agrees with that OCR, not with the truth).

Both modes read every set in the same process, one after the other, the engine loaded once; ``--repeat``
keeps each mode's fastest pass. The public files come from source distributions (``--sdists DIR`` finds
or fetches them with pip, as ``benchmarks/real_pages.py`` does).

    .venv/bin/python benchmarks/text_layers.py --sdists /tmp/sdists

Not part of the test suite; the README reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas"), str(ROOT / "benchmarks")]

from real_pages import sdist_file  # noqa: E402

DENSE_PAGES = "2-21"
MODES = ("ignore", "auto")


@dataclass
class Document:
    kind: str
    path: Path
    pages: str | None
    references: list[str]


def documents(sdists: Path, workdir: Path) -> list[Document]:
    from pypdf import PdfReader

    from tests.documents import BORN_DIGITAL_PAGES, ENGLISH_PAGES, write_scan_with_layer

    guideline = sdist_file(sdists, "pypdf", "resources/issue-604.pdf")
    reader = PdfReader(guideline)
    first, last = (int(n) for n in DENSE_PAGES.split("-"))
    dense = [reader.pages[n - 1].extract_text() for n in range(first, last + 1)]
    linn = sdist_file(sdists, "ocrmypdf", "tests/resources/linn.pdf")
    linn_text = sdist_file(sdists, "ocrmypdf", "tests/resources/linn.txt").read_text(encoding="utf-8")
    vicksburg = sdist_file(sdists, "pypdf", "resources/Seige_of_Vicksburg_Sample_OCR.pdf")
    layered = []
    for index, lines in enumerate([*ENGLISH_PAGES, *BORN_DIGITAL_PAGES]):
        path = write_scan_with_layer(workdir / f"layered-{index}.pdf", lines, lines)
        layered.append(Document("scanned + earlier OCR layer (generated)", path, None, ["\n".join(lines)]))
    return [
        Document("dense born-digital", guideline, DENSE_PAGES, dense),
        Document("scanned (no layer)", linn, None, [linn_text]),
        *layered,
        Document("scanned + earlier OCR layer (Vicksburg)", vicksburg, None, [page.extract_text() for page in PdfReader(vicksburg).pages]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdists", type=Path, default=Path(tempfile.gettempdir()) / "ocr-sdists")
    parser.add_argument("--repeat", type=int, default=1, help="read every set this many times per mode; keep the fastest")
    args = parser.parse_args()
    args.sdists.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("OCR_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ocr-benchmark-models"))

    from ocr_platform.core.results import page_text
    from ocr_platform.core.text_metrics import word_f1
    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
    from ocr_platform.engines.settings import PaddleSettings

    engine = PPOCRv5Engine(PaddleSettings(allow_hub_download=False, bucket=None))
    with tempfile.TemporaryDirectory() as workdir:
        docs = documents(args.sdists, Path(workdir))
        kinds = list(dict.fromkeys(doc.kind for doc in docs))
        seconds = {(kind, mode): float("inf") for kind in kinds for mode in MODES}
        scores: dict[tuple[str, str], list[float]] = {}
        sources: dict[tuple[str, str], dict[str, int]] = {}
        pages: dict[str, int] = {}
        for _ in range(args.repeat):
            for mode in MODES:
                for kind in kinds:
                    elapsed, f1s, counted, seen = 0.0, [], 0, {}
                    for doc in (d for d in docs if d.kind == kind):
                        # A new engine per document would reload models; a new TextLayerChoice per predict is
                        # what a job gets (fonts verified once per document).
                        started = time.perf_counter()
                        output = engine.predict(doc.path, pages=doc.pages, options={"text_layer": mode})
                        elapsed += time.perf_counter() - started
                        counted += len(output.pages)
                        for page, reference in zip(output.pages, doc.references, strict=False):
                            f1s.append(word_f1(reference, page_text(page)))
                            seen[page.get("text_source", "ocr")] = seen.get(page.get("text_source", "ocr"), 0) + 1
                    pages[kind] = counted
                    seconds[kind, mode] = min(seconds[kind, mode], elapsed / counted)
                    scores[kind, mode], sources[kind, mode] = f1s, seen
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print("| pages | kind | ignore s/page | auto s/page | speed-up | ignore word F1 | auto word F1 | auto text_source |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind in kinds:
        ignore_s, auto_s = seconds[kind, "ignore"], seconds[kind, "auto"]
        f1 = {mode: sum(scores[kind, mode]) / len(scores[kind, mode]) for mode in MODES}
        used = ", ".join(f"{name} {count}" for name, count in sorted(sources[kind, "auto"].items()))
        print(f"| {pages[kind]} | {kind} | {ignore_s:.3f} | {auto_s:.3f} | {ignore_s / auto_s:.1f}x | {f1['ignore']:.3f} | {f1['auto']:.3f} | {used} |")


if __name__ == "__main__":
    main()
