"""Benchmark the pipeline on the local stack: start-up, per-job overhead, and throughput.

    .venv/bin/python benchmarks/local_pipeline.py [--jobs 20]

Prints:
- the local stack's start-up (supervisor up, before any model loads) and ``local up`` wall time;
- one single-page job end to end (submit -> COMPLETED, model warm) against ``ocr`` on the same page in
  this process: the difference is the pipeline's own overhead (S3, SQS, DynamoDB, invoker, async invoke);
- pages per minute for N single-page jobs queued at once.

Uses a private state directory, so it neither reuses nor stops a local stack you already run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lambdas")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20)
    args = parser.parse_args()

    from ocr_platform.cli.client import OcrClient, PlatformResources
    from ocr_platform.cpu.job_runner import ocr_document
    from ocr_platform.engines.ppocrv5 import PPOCRv5Engine
    from ocr_platform.engines.settings import PaddleSettings
    from ocr_platform.local import supervisor
    from tests.documents import ENGLISH_PAGES, write_png

    with tempfile.TemporaryDirectory() as tmp:
        os.environ[supervisor.STATE_DIR_ENV] = str(Path(tmp) / "state")
        os.environ.setdefault("OCR_MODEL_HUB", "off")
        page = write_png(Path(tmp) / "page.png", ENGLISH_PAGES[0])

        t0 = time.perf_counter()
        info, _ = supervisor.up()
        up_wall = time.perf_counter() - t0
        os.environ.update(info.client_environment())
        client = OcrClient(PlatformResources(info.bucket, info.queue_url, info.table))
        try:
            warm = client.wait(client.submit(page, model="pp-ocrv5")["job_id"], poll_seconds=0.05)  # loads the model
            assert warm["status"] == "COMPLETED", warm
            singles = []
            for _ in range(3):
                t1 = time.perf_counter()
                job = client.wait(client.submit(page, model="pp-ocrv5")["job_id"], poll_seconds=0.02)
                singles.append(time.perf_counter() - t1)
                assert job["status"] == "COMPLETED", job

            engine = PPOCRv5Engine(PaddleSettings(allow_hub_download=False, bucket=None))
            ocr_document(page, job_id="w", model="pp-ocrv5", engine=engine)
            in_process = []
            for _ in range(3):
                t2 = time.perf_counter()
                ocr_document(page, job_id="b", model="pp-ocrv5", engine=engine)
                in_process.append(time.perf_counter() - t2)
            del engine

            t3 = time.perf_counter()
            ids = [client.submit(page, model="pp-ocrv5")["job_id"] for _ in range(args.jobs)]
            finished = [client.wait(job_id, timeout=3600, poll_seconds=0.2) for job_id in ids]
            batch_s = time.perf_counter() - t3
            completed = sum(j["status"] == "COMPLETED" for j in finished)
        finally:
            supervisor.down()

    best_single, best_local = min(singles), min(in_process)
    print(f"local stack start-up (supervisor, before model load): {info.startup_seconds:.2f} s; `local up` wall: {up_wall:.2f} s")
    print(f"1-page job end to end (warm): {best_single:.2f} s; `ocr` in-process on the same page: {best_local:.2f} s; "
          f"pipeline overhead: {best_single - best_local:.2f} s")
    print(f"{args.jobs} queued single-page jobs: {completed} COMPLETED in {batch_s:.1f} s = {60 * completed / batch_s:.1f} pages/min "
          f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
