"""Hostile Office and HTML files against the work budget: each case's time and peak memory until it is refused.

Every file of issue 42's table is built in code (tests/hostile_files.py, nothing stored) and read by the CPU
route's reading path (``native_result``; a PDF's pages rendered one by one, as the page loop does) in its own
child process under a 1.5 GiB address-space ceiling, as the
hostile-input tests do (tests/ocr/test_hostile_budget.py). For each case: the file's size, the child's wall time
(Python's start and imports included), its peak resident memory (``VmHWM``), and the refusal.

``--picture`` also times one DOCX holding one picture just under the per-image limit (79.2 million pixels, within
the budget, so it is read) through ``ocr_document`` with the real PP-OCRv5 engine: the picture is shrunk to the
page budget as it is decoded.

    PYTHONPATH=lambdas .venv/bin/python benchmarks/hostile_budget.py [--picture]

Not part of the test suite; docs/using-it/office-and-html.md reports its figures with the machine they ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]

from tests.hostile_files import CASES, docx_big_picture, run_child  # noqa: E402


def _cases(folder: Path) -> None:
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print("| input | size | seconds | peak MB | outcome |")
    print("| --- | ---: | ---: | ---: | --- |")
    for case in CASES:
        path = case.build(folder / f"{case.name}.{case.suffix}")
        outcome = run_child(path, timeout=60)
        message = str(outcome["message"])
        named = message.split("(")[-1].split(",")[0] if "(" in message else message
        print(f"| {case.name} | {path.stat().st_size:,} B | {outcome['seconds']:.2f} | {int(outcome['peak_kb']) // 1024} "  # type: ignore[call-overload]
              f"| {outcome['code']} ({named}) |", flush=True)
        path.unlink()


def _picture(folder: Path) -> None:
    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
    from ocr_platform.engines.reading import ocr_document
    from ocr_platform.engines.settings import PaddleSettings

    engine = PPOCRv5Engine(PaddleSettings.from_env())
    path = docx_big_picture(folder / "one-picture.docx", 1)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    ocr_document(path, job_id="picture", model="pp-ocrv5", engine=engine)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"one 8,900 x 8,900 picture in a {path.stat().st_size:,} B DOCX: read in {seconds:.2f} s, "
          f"peak {peak // 1024} MB (engine loaded: {before // 1024} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--picture", action="store_true", help="also read one picture near the image limit with PP-OCRv5")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        _cases(Path(folder))
        if args.picture:
            _picture(Path(folder))


if __name__ == "__main__":
    main()
