"""Born-digital PDFs in non-Latin scripts read through the default settings, scored against poppler's pdftotext.

Every PDF under ``tests/documents/text_layers`` (public files; ``SOURCES.md`` there names each one's origin and
licence) is read as ``ocr-platform ocr FILE --model pp-ocrv6`` reads it (``ocr_document`` with the default
language and options, so ``text_layer: auto``), then written in every output format (json, md, hocr, alto,
textract and the searchable PDF), so a text layer that a writer cannot encode fails here. Each page's text is
scored by word F1 (``tests.text_layer_corpus.corpus_f1``) against poppler's ``pdftotext`` extraction of the same
page, independent of pdfium (``scripts/setup.sh`` installs Debian's poppler-utils).

    .venv/bin/python benchmarks/text_layer_corpus.py [--only NAME ...] [--json ROWS] [--markdown FROM_ROWS]

``--markdown ROWS`` prints the tables of docs/performance/text-layers.md (one per script) from a run's ``--json``
rows, with ``NOTES`` saying why each file under 0.95 is.

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
#: Word F1 every file reads at, or ``NOTES`` says why it cannot.
TARGET = 0.95
#: The script a file is filed under where its reference cannot say (``corpus_script`` reads pdftotext's text).
SCRIPT_OVERRIDES = {
    "pdfjs-xiaobiaosong.pdf": "Chinese",  # pdftotext's text is GBK read as Latin-1
    "pdfjs-bug1175962.pdf": "Old Hungarian",
    "pdfjs-issue5874.pdf": "Urdu",
    "pdfjs-thuluthfeatures.pdf": "Arabic (a font's test sheet)",
    "pdfjs-issue7426.pdf": "Bhaiksuki",
    "pdfjs-issue2884-reduced.pdf": "Japanese",  # the ink reads 簡易公募型/公募型競争入札; layer and pdftotext say other Han
    "pdfjs-issue20232.pdf": "Cyrillic",
}
#: Files whose word F1 says nothing of how the platform reads a true layer: the layer or the reference is wrong (``NOTES``).
NOT_TRUE = frozenset({
    "pdfjs-complex-ttf-font.pdf", "pdfjs-issue20232.pdf", "pdfjs-issue5874.pdf", "pdfjs-thuluthfeatures.pdf", "pdfjs-issue2884-reduced.pdf",
    "pdfjs-xiaobiaosong.pdf", "pdfplumber-issue-842-example.pdf", "docling-right-to-left-02.pdf",
})
#: Why a file reads under ``TARGET``: its layer is itself wrong, or the reference is.
NOTES = {
    "pdfjs-complex-ttf-font.pdf": (
        "layer itself wrong: 61 % of its characters have no Unicode mapping, the embedded fonts' own maps confirm none of "
        "pdfium's guesses, and what is mapped is scattered across scripts; refused and OCR'd (Cyrillic, Greek and Myanmar need "
        "their own languages; `language_mismatch`)"
    ),
    "pdfjs-issue20232.pdf": (
        "layer itself wrong: its font's codes, read as Unicode, name Hangul (`킘킽킲.` for `Перв.`), and the ink reads otherwise; "
        "refused and OCR'd with `en` (`language_mismatch`: `--lang ru` reads it)"
    ),
    "pdfjs-issue5874.pdf": (
        "layer itself wrong: 65 % unmapped, pdfium's guesses are CJK and symbols over Urdu Nastaliq ink; refused and OCR'd "
        "(`language_mismatch`)"
    ),
    "pdfjs-thuluthfeatures.pdf": "layer itself wrong: 73 % unmapped (a font's test sheet of Thuluth glyphs); refused and OCR'd",
    "pdfjs-issue2884-reduced.pdf": (
        "layer itself wrong, and pdftotext's reading with it: the ink reads `4.6 簡易公募型/公募型競争入札`, which OCR reads exactly; "
        "the layer says `䋴䋮䋶糫 蒭鍍伴俘緌鍍伴俘 勢渡袱糫`"
    ),
    "pdfjs-xiaobiaosong.pdf": "the reference is wrong: pdftotext decodes the GBK text as Latin-1 mojibake; the layer (pdfium) is the true text",
    "pdfplumber-issue-842-example.pdf": (
        "the reference counts words twice: the PDF draws its labels twice over each other (`股票代码：股票代码：300218`), which "
        "pdftotext keeps; and the logo's `安利 ANLI`, an image, is read by OCR and is not in pdftotext's text"
    ),
    "docling-right-to-left-02.pdf": (
        "layer itself wrong: its font's map names other letters than the ink's (`لخصووة فووا مجووخحت` where the page reads "
        "`خاصة في مجالات`; docling's own reading of the file has the same wrong letters); pdftotext keeps stretched glyphs "
        "drawn over each other as repeated letters that pdfium reads once"
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="file names to read (default: all)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", type=Path, help="write each file's row here")
    parser.add_argument("--markdown", type=Path, help="print the docs tables from these rows (a run's --json) and stop")
    args = parser.parse_args()
    if args.markdown:
        print(tables(json.loads(args.markdown.read_text(encoding="utf-8"))))
        return
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


def tables(rows: list[dict]) -> str:
    """A summary per script, then one markdown table per script: each file's pages, word F1 (mean, lowest page), where
    its text came from, and why a file under ``TARGET`` is (``NOTES``)."""
    for row in rows:
        row["script"] = SCRIPT_OVERRIDES.get(row["file"], row.get("script", "?"))
    scripts = sorted({row["script"] for row in rows})
    out = [
        "| script | files | at 0.95 or more | word F1, mean of its files | mean of its files whose layer and reference are true |",
        "| --- | --- | --- | --- | --- |",
    ]
    for script in scripts:
        group = [row for row in rows if row["script"] == script and "error" not in row]
        true = [row for row in group if row["file"] not in NOT_TRUE]
        passed = sum(1 for row in group if row["min_f1"] >= TARGET)
        mean_true = f"{sum(row['f1'] for row in true) / len(true):.3f}" if true else "(none)"
        out.append(f"| {script} | {len(group)} | {passed} | {sum(row['f1'] for row in group) / len(group):.3f} | {mean_true} |")
    out.append("")
    for script in scripts:
        group = [row for row in rows if row.get("script", "?") == script]
        passed = sum(1 for row in group if (row.get("min_f1") or 0) >= TARGET)
        out += [f"**{script}** ({passed} of {len(group)} files at {TARGET} or more)", "",
                "| file | pages | word F1 (mean / lowest page) | text from | s | why under 0.95 |", "| --- | --- | --- | --- | --- | --- |"]
        for row in group:
            if "error" in row:
                out.append(f"| `{row['file']}` | | crashed: {row['error']} | | | |")
                continue
            sources = ", ".join(f"{name} {count}" for name, count in sorted(row["sources"].items()))
            note = NOTES.get(row["file"], "") if row["min_f1"] < TARGET else ""
            out.append(f"| `{row['file']}` | {row['pages']} | {row['f1']:.3f} / {row['min_f1']:.3f} | {sources} | {row['seconds']:.2f} | {note} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    main()
