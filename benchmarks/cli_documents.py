"""``ocr-platform ocr`` on each sample document: seconds from the command's start to its exit, and whether a model
loaded (a file without pictures needs none: its type is decided and its text read before any engine is built).

    .venv/bin/python benchmarks/cli_documents.py               # 5 runs of each file in samples/ but the scans
    .venv/bin/python benchmarks/cli_documents.py --runs 9 samples/page.html

Each run is a fresh process of the installed command, as a user types it, writing result.json to a temporary
folder; the figure is wall time around the whole process. "model" is the result's ``timings.load`` (0 when no
engine was built).

Not part of the test suite; docs/using-it/office-and-html.md reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = ["page.html", "report.docx", "deck.pptx", "sheet.xlsx", "sheet.xls", "invoice-mail.eml"]


def _run(command: Path, document: Path, output: Path) -> tuple[float, float]:
    started = time.perf_counter()
    subprocess.run([str(command), "ocr", str(document), "--model", "pp-ocrv5", "--output", str(output)],
                   check=True, capture_output=True)
    elapsed = time.perf_counter() - started
    return elapsed, float(json.loads(output.read_text(encoding="utf-8"))["timings"].get("load", 0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("documents", nargs="*", type=Path, default=[REPO / "samples" / name for name in DOCUMENTS])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    command = Path(sys.executable).parent / "ocr-platform"
    print("| file | runs | s (median) | s (min) | model load s |\n| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "result.json"
        for document in args.documents:
            times, loads = zip(*(_run(command, document, output) for _ in range(args.runs)), strict=True)
            print(f"| `{document.name}` | {args.runs} | {statistics.median(times):.2f} | {min(times):.2f} | {statistics.median(loads):.2f} |")
    print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
