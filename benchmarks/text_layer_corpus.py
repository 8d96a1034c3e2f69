"""Born-digital PDFs in non-Latin scripts read through the default settings, scored against poppler's pdftotext.

Every PDF under ``tests/documents/text_layers`` (public files; ``SOURCES.md`` there names each one's origin and
licence) is read as ``ocr-platform ocr FILE --model pp-ocrv6`` reads it (``ocr_document`` with the default
language and options, so ``text_layer: auto``), then written in every output format (json, md, hocr, alto,
textract and the searchable PDF), so a text layer that a writer cannot encode fails here. Each page's text is
scored by word F1 (``tests.text_layer_corpus.corpus_f1``) against poppler's ``pdftotext`` extraction of the same
page, independent of pdfium (``scripts/setup.sh`` installs Debian's poppler-utils).

    .venv/bin/python benchmarks/text_layer_corpus.py [--only NAME ...] [--markdown]

Not part of the test suite (``tests/ocr/test_text_layer_corpus.py`` runs a sample); the figures are in
docs/performance/text-layers.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

CORPUS = ROOT / "tests" / "documents" / "text_layers"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="file names to read (default: all)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", type=Path, help="write each file's row here")
    args = parser.parse_args()
    os.environ.setdefault("OCR_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ocr-benchmark-models"))

    from ocr_platform.engines import get_engine
    from tests.text_layer_corpus import CORPUS_MODEL, read_and_score

    engine = get_engine(CORPUS_MODEL)
    files = sorted(p for p in args.corpus.glob("*.pdf") if not args.only or p.name in args.only)
    rows = []
    for path in files:
        started = time.perf_counter()
        try:
            row = read_and_score(path, engine)
        except Exception as err:  # noqa: BLE001 - a crash is a row of the table, with its traceback
            traceback.print_exc()
            row = {"file": path.name, "error": f"{type(err).__name__}: {err}"}
        row["seconds"] = round(time.perf_counter() - started, 3)
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    if args.json:
        args.json.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
