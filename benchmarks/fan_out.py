"""Benchmark page fan-out on the local stack: one long PDF end to end, split into chunks or not.

    .venv/bin/python benchmarks/fan_out.py [--pdf FILE] [--pages 60]

Runs the same document through the local stack (real handlers, real PP-OCRv5, the local Lambda runtime)
three ways, each on a fresh in-process stack with warm processor environments:

- ``off``: one invocation reads every page (``cpu_pages_per_chunk`` = the page count), 1 environment with
  ONNX Runtime on every core;
- ``on, 1 worker``: split into chunks of ``cpu_pages_per_chunk`` (6) pages, 1 processor environment (the
  chunks take turns);
- ``on, N workers``: split, one environment per core, each with one ONNX Runtime thread (the default).

It prints the wall time from submit to COMPLETED, pages/s, and the speed-up over ``off``. ``--pdf`` takes a
real document (the README uses ``resources/issue-604.pdf`` from pypdf's sdist: ``pip download
--no-binary :all: --no-deps pypdf``); without it, dense pages are generated here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas"), str(ROOT / "infra")]

from ocr_platform.core import defaults  # noqa: E402


def generated_pdf(path: Path, pages: int) -> Path:
    from tests.documents import ENGLISH_PAGES, write_vector_pdf

    lines = [line for page in ENGLISH_PAGES for line in page]
    return write_vector_pdf(path, [[f"Page {n}", *(lines * 5)[:36]] for n in range(1, pages + 1)])


def run_once(pdf: Path, page_selection: str, *, pages_per_chunk: int, workers: int, workdir: Path) -> tuple[float, dict]:
    """Submit the document to a fresh local stack; return (seconds from submit to COMPLETED, the job item)."""
    from ocr_infra.config import PlatformConfig
    from ocr_platform.cli.client import OcrClient, PlatformResources
    from ocr_platform.local.stack import LocalOptions, LocalStack
    from tests.documents import ENGLISH_PAGES, write_png
    from tests.local.campaign import prepare_model_cache

    prepare_model_cache(workdir / "models")
    os.environ.update({"OCR_MODEL_HUB": "off", "OCR_MODEL_CACHE_DIR": str(workdir / "models"), "OCR_PRELOAD_MODELS": "pp-ocrv5"})
    config = PlatformConfig(stage="local", engine_fallback=True, cpu_pages_per_chunk=pages_per_chunk)
    stack = LocalStack(config, LocalOptions(period_seconds=0.5, visibility_timeout_seconds=2, processor_concurrency=workers))
    info = stack.start()
    try:
        stack.lambdas.wait_initialized(timeout=300.0)
        os.environ.update(info.client_environment())
        client = OcrClient(PlatformResources(info.bucket, info.queue_url, info.table))
        warm_page = write_png(workdir / "warm.png", ENGLISH_PAGES[0])
        warm = [client.submit(warm_page, model="pp-ocrv5")["job_id"] for _ in range(workers)]
        for job_id in warm:
            assert client.wait(job_id, poll_seconds=0.1, timeout=300)["status"] == "COMPLETED"
        started = time.perf_counter()
        # OCR on every page, as the fan-out is priced and measured for it (a text layer would make pages cheap).
        job = client.submit(pdf, model="pp-ocrv5", pages=page_selection, options={"text_layer": "ignore"})
        done = client.wait(job["job_id"], poll_seconds=0.1, timeout=3600)
        seconds = time.perf_counter() - started
        assert done["status"] == "COMPLETED", done
        return seconds, dict(done)
    finally:
        stack.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, help="a real PDF (default: generated dense pages)")
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--one", nargs=2, type=int, metavar=("PAGES_PER_CHUNK", "WORKERS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        pdf = args.pdf or generated_pdf(workdir / "generated.pdf", args.pages)
        selection = f"1-{args.pages}"
        if args.one:  # one configuration, in a process of its own (moto's state is per process)
            seconds, job = run_once(pdf, selection, pages_per_chunk=args.one[0], workers=args.one[1], workdir=workdir)
            print(json.dumps({"seconds": seconds, "chunks": job.get("chunk_count", 1)}))
            return
        runs = [("off", args.pages, 1), ("on, 1 worker", defaults.CPU_PAGES_PER_CHUNK, 1),
                (f"on, {cores} workers", defaults.CPU_PAGES_PER_CHUNK, cores)]
        print(f"{pdf.name}, pages {selection}, {cores} cores")
        print("| fan-out | chunks | processor environments x ORT threads | submit -> COMPLETED | pages/s | speed-up |")
        print("| --- | --- | --- | --- | --- | --- |")
        baseline = None
        for name, per_chunk, workers in runs:
            command = [sys.executable, __file__, "--pdf", str(pdf), "--pages", str(args.pages), "--one", str(per_chunk), str(workers)]
            measured = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
            seconds = measured["seconds"]
            baseline = baseline or seconds
            threads = max(1, cores // workers)
            print(f"| {name} | {measured['chunks']} | {workers} x {threads} | {seconds:.1f} s | "
                  f"{args.pages / seconds:.2f} | {baseline / seconds:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
