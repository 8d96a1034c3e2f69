"""Real pages, every CPU route and backend side by side with raw PaddleOCR and faster-paddle: s/page and word F1.

The documents are public test files that ship in two source distributions (``pip download
--no-binary :all: --no-deps pypdf==7.1.0 ocrmypdf==17.13.0``; ``--sdists DIR`` finds or fetches them):

- **dense**: pages 2-5 of pypdf's ``resources/issue-604.pdf``, a two-column landscape clinical guideline
  (58-112 lines and about 4,000 characters a page). Reference: the PDF's own text layer.
- **turned**: the same four pages turned 90, 180 and 270 degrees (the PDF's ``/Rotate``, as a scanner
  or phone app writes it; every engine gets the pages as a viewer shows them).
- **scans**: OCRmyPDF's ``tests/resources/linn.pdf`` (a two-column scan) and ``cardinal.pdf`` (the
  same scan turned 0, 90, 180 and 270 degrees). Reference: ``linn.txt`` beside them.

The ``pp-structurev3`` row is its local substitute (PP-StructureV3's own weights cannot be had offline),
scored on its lines. Every engine reads the same pages rendered at scale 2 (144 DPI) in one process, one
after the other,
on one machine; ``--repeat`` reads the dense set again and keeps each engine's fastest pass, since a
shared 2-core VM's speed drifts between minutes. Word F1 is ``ocr_platform.core.text_metrics.word_f1``.

    .venv/bin/python benchmarks/real_pages.py --sdists /tmp/sdists
    .venv/bin/python benchmarks/real_pages.py --dense-only --engines "v6 route" --engines faster  # some rows, dense set only

faster-paddle 1.0.4 (the ``ocr`` extra) is both a row of its own, called as its README says (no orientation),
and the ``pp-ocrv6`` route's default backend (``engines.faster_paddle``).

Not part of the test suite; the README reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

SDISTS = {"pypdf": "7.1.0", "ocrmypdf": "17.13.0"}
DENSE_PAGES = [2, 3, 4, 5]
TURNS = (90, 180, 270)
SCALE = 2.0


@dataclass
class PageSet:
    name: str
    pdf: Path
    references: list[str]
    images: list[bytes]  # PNG renders at SCALE, as a viewer shows the pages


def sdist_file(directory: Path, name: str, member: str) -> Path:
    """``member`` of the ``name`` sdist, unpacked under ``directory`` (downloaded there with pip if absent)."""
    version = SDISTS[name]
    target = directory / f"{name}-{version}" / member
    if target.is_file():
        return target
    archive = directory / f"{name}-{version}.tar.gz"
    if not archive.is_file():
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
                        "-d", str(directory), f"{name}=={version}"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(directory, filter="data")
    return target


def page_set(name: str, pdf: Path, references: list[str]) -> PageSet:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    images = []
    for index in range(len(doc)):
        buffer = io.BytesIO()
        doc[index].render(scale=SCALE).to_pil().convert("RGB").save(buffer, format="PNG")
        images.append(buffer.getvalue())
    return PageSet(name, pdf, references, images)


def build_sets(sdists: Path, workdir: Path) -> list[PageSet]:
    import pypdfium2 as pdfium

    guideline = pdfium.PdfDocument(sdist_file(sdists, "pypdf", "resources/issue-604.pdf"))
    layer = [guideline[n - 1].get_textpage().get_text_range() for n in DENSE_PAGES]
    sets = []
    for turn in (0, *TURNS):
        out = pdfium.PdfDocument.new()
        out.import_pages(guideline, [n - 1 for n in DENSE_PAGES])
        for index in range(len(out)):
            out[index].set_rotation(turn)
        path = workdir / f"dense-{turn}.pdf"
        out.save(path)
        sets.append(page_set("dense" if turn == 0 else f"turned {turn}", path, layer))
    linn_text = sdist_file(sdists, "ocrmypdf", "tests/resources/linn.txt").read_text(encoding="utf-8")
    sets.append(page_set("scan", sdist_file(sdists, "ocrmypdf", "tests/resources/linn.pdf"), [linn_text]))
    sets.append(page_set("scan turned 0/90/180/270", sdist_file(sdists, "ocrmypdf", "tests/resources/cardinal.pdf"), [linn_text] * 4))
    return sets


# An engine reads a page set and returns the text of each page.
Reader = Callable[[PageSet], list[str]]


def route_reader(model: str, options: dict) -> Reader:
    from ocr_platform.engines import get_engine

    engine = get_engine(model)

    def read(pages: PageSet) -> list[str]:
        # Recognition itself is measured: the dense pages' own text layer is not used (benchmarks/text_layers.py
        # measures text_layer: auto).
        output = engine.predict(pages.pdf, options={"text_layer": "ignore", **options})
        return ["\n".join(line["text"] for line in page["lines"]) for page in output.pages]

    return read


def raw_paddleocr_reader() -> Reader:
    """PaddleOCR 3.7's ``PaddleOCR`` with its own defaults, on the same PP-OCRv5 mobile weights."""
    import numpy as np
    from paddleocr import PaddleOCR
    from PIL import Image

    from ocr_platform.engines.model_cache import ModelCache

    cache = ModelCache()
    ocr = PaddleOCR(
        text_detection_model_name="PP-OCRv5_mobile_det", text_detection_model_dir=str(cache.resolve("PP-OCRv5_mobile_det")),
        text_recognition_model_name="PP-OCRv5_mobile_rec", text_recognition_model_dir=str(cache.resolve("PP-OCRv5_mobile_rec")),
        use_doc_orientation_classify=False, use_doc_unwarping=False, use_textline_orientation=False,
    )

    def read(pages: PageSet) -> list[str]:
        texts = []
        for png in pages.images:
            bgr = np.ascontiguousarray(np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))[:, :, ::-1])
            [res] = list(ocr.predict(bgr))
            texts.append("\n".join(res["rec_texts"]))
        return texts

    return read


def faster_paddle_reader(size: str) -> Reader | None:
    try:
        from faster_paddle import OcrEngine
    except ImportError:
        return None
    engine = OcrEngine(model_size=size)
    return lambda pages: [engine.ocr(png)["text"] for png in pages.images]


def measure(read: Reader, pages: PageSet) -> tuple[float, float, list[float]]:
    from ocr_platform.core.text_metrics import word_f1

    started = time.perf_counter()
    texts = read(pages)
    seconds = (time.perf_counter() - started) / len(texts)
    scores = [word_f1(ref, text) for ref, text in zip(pages.references, texts, strict=True)]
    return seconds, sum(scores) / len(scores), scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdists", type=Path, default=Path(tempfile.gettempdir()) / "ocr-benchmark-sdists")
    parser.add_argument("--repeat", type=int, default=2, help="passes over the dense set; the fastest counts")
    parser.add_argument("--skip-raw", action="store_true", help="leave out raw PaddleOCR (about 10 s a page)")
    parser.add_argument("--engines", action="append", default=[], help="only the rows whose name contains this (repeatable)")
    parser.add_argument("--dense-only", action="store_true", help="only the dense set (s/page and F1)")
    args = parser.parse_args()
    os.environ.setdefault("OCR_MODEL_HUB", "off")
    # As on the local stack: PP-StructureV3's own weights are not obtainable offline, so its route runs
    # the local substitute (PP-OCRv5 lines + PP-Structure layout and table models) and says so.
    os.environ.setdefault("OCR_ENGINE_FALLBACK", "on")
    args.sdists.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        sets = build_sets(args.sdists, Path(tmp))
        rows: list[tuple[str, Callable[[], Reader | None]]] = [
            ("pp-ocrv5 route", lambda: route_reader("pp-ocrv5", {})),
            ("pp-ocrv5 route, orientation off", lambda: route_reader("pp-ocrv5", {"orientation": False})),
            ("pp-ocrv6 route, faster-paddle tiny (default)", lambda: route_reader("pp-ocrv6", {})),
            ("pp-ocrv6 route, faster-paddle small", lambda: route_reader("pp-ocrv6", {"variant": "small"})),
            ("pp-ocrv6 route, paddleocr small", lambda: route_reader("pp-ocrv6", {"backend": "paddleocr", "variant": "small"})),
            ("pp-structurev3 route (its local substitute)", lambda: route_reader("pp-structurev3", {})),
            ("raw PaddleOCR defaults, PP-OCRv5 mobile", lambda: None if args.skip_raw else raw_paddleocr_reader()),
            ("faster-paddle 1.0.4 alone, PP-OCRv6 tiny", lambda: faster_paddle_reader("tiny")),
            ("faster-paddle 1.0.4 alone, PP-OCRv6 small", lambda: faster_paddle_reader("small")),
        ]
        chosen = [(name, make) for name, make in rows if not args.engines or any(part in name for part in args.engines)]
        engines = [(name, make()) for name, make in chosen]
        if args.dense_only:
            sets = sets[:1]
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}", file=sys.stderr)
        header = ["engine", "dense s/page", "dense F1", *[s.name + " F1" for s in sets[1:]]]
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for name, read in engines:
            if read is None:
                print(f"| {name} | not run |" + " |" * (len(header) - 2))
                continue
            dense = min((measure(read, sets[0]) for _ in range(max(1, args.repeat))), key=lambda m: m[0])
            cells = [f"{dense[0]:.2f}", f"{dense[1]:.3f}"]
            for pages in sets[1:]:
                _, f1, per_page = measure(read, pages)
                cells.append(f"{f1:.3f}" if len(per_page) == 1 else f"{f1:.3f} ({' / '.join(f'{v:.2f}' for v in per_page)})")
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
