"""Admission control on the local stack: a burst of CPU jobs and a split document under a bound of one processor,
in both modes. Every job ends COMPLETED, and never more than one processor runs at once.

The stack runs in this process on its own free ports with the real handlers, the real OCR engine and the
moto server, as the deployed stage would with ``-c ocr:processor_max_concurrency=1``:

- ``dispatcher``: the local Lambda runtime itself would run two processors at once, so the bound seen is the
  platform's own semaphore; jobs wait QUEUED in the job queue meanwhile;
- ``reserved``: the runtime's concurrency limit is the function's reserved concurrency (one execution
  environment), and the processor events wait in its asynchronous queue, as in Lambda's.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import boto3
import pytest

from ocr_platform.cli.client import OcrClient, PlatformResources
from ocr_platform.core.environment import patched_environment
from ocr_platform.jobs.admission import SLOTS_ITEM_KEY, ProcessorSlots
from ocr_platform.local.stack import LocalOptions, LocalStack
from tests import documents

BURST = 5


class SlotWatcher(threading.Thread):
    """Reads the semaphore item and the jobs' statuses every 50 ms: the most slots held and jobs QUEUED at once."""

    def __init__(self, table: str, job_ids: list[str]) -> None:
        super().__init__(daemon=True)
        self.table = boto3.resource("dynamodb").Table(table)
        self.slots = ProcessorSlots(self.table, limit=1, lease_seconds=1)  # read only: the holders and their leases
        self.job_ids = job_ids
        self.most_held = 0
        self.most_waiting_while_held = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.05):
            held = len(self.slots.holders())
            self.most_held = max(self.most_held, held)
            if held and self.job_ids:
                statuses = [self.table.get_item(Key={"job_id": j}).get("Item", {}).get("status") for j in self.job_ids]
                self.most_waiting_while_held = max(self.most_waiting_while_held, statuses.count("QUEUED"))


def _semaphore_once_released(table: str, mode: str, timeout: float = 60) -> dict | None:
    """The semaphore item, once its last holder gave its slot back: a run releases it after it has ended its job,
    so the item is waited for (with a deadline), not read once at the job's end."""
    items = boto3.resource("dynamodb").Table(table)
    deadline = time.monotonic() + timeout
    while True:
        item = items.get_item(Key={"job_id": SLOTS_ITEM_KEY}).get("Item")
        if mode != "dispatcher" or (item is not None and item["holders"] == {}) or time.monotonic() > deadline:
            return item
        time.sleep(0.2)


@pytest.mark.parametrize("mode", ["dispatcher", "reserved"])
def test_a_burst_and_a_split_document_wait_for_the_one_processor_and_all_complete(tmp_path: Path, mode: str) -> None:
    from ocr_infra.config import PlatformConfig

    png = documents.write_png(tmp_path / "invoice.png", documents.ENGLISH_PAGES[0])
    pdf = documents.write_image_pdf(tmp_path / "scan.pdf", documents.ENGLISH_PAGES[:3])
    # A stage of its own: moto's in-process backends outlive a stack, and other tests start stage "local".
    config = PlatformConfig(stage=f"adm-{mode}", engine_fallback=True, processor_max_concurrency=1, cpu_pages_per_chunk=1,
                            processor_concurrency_mode=mode)
    options = LocalOptions(period_seconds=0.5, visibility_timeout_seconds=2, retry_delays_seconds=(0.2, 0.2),
                           admission_retry_seconds=1)
    offline = {"OCR_MODEL_HUB": "off", "OCR_MODEL_CACHE_DIR": str(tmp_path / "models")}
    with patched_environment(offline):
        stack = LocalStack(config, options)
        info = stack.start()
        try:
            with patched_environment(info.client_environment()):
                client = OcrClient(PlatformResources(info.bucket, info.queue_url, info.table))
                jobs = [client.submit(png, model="pp-ocrv5")["job_id"] for _ in range(BURST)]
                split = client.submit(pdf, model="pp-ocrv5")["job_id"]
                watcher = SlotWatcher(info.table, jobs)
                watcher.start()
                try:
                    finished = {job_id: client.wait(job_id, timeout=240) for job_id in [*jobs, split]}
                finally:
                    watcher.stopped.set()
                    watcher.join()
                semaphore = _semaphore_once_released(info.table, mode)
            environments = {r.log_stream for r in stack.lambdas.invocations(stack.names["processor"])}
        finally:
            stack.stop()

    assert {job_id: item["status"] for job_id, item in finished.items()} == dict.fromkeys([*jobs, split], "COMPLETED")
    assert finished[split]["page_count"] == 3 and finished[split]["chunk_count"] == 3
    if mode == "dispatcher":
        assert watcher.most_held == 1  # never more than the bound, though the runtime could run two
        assert watcher.most_waiting_while_held >= 2  # jobs waited QUEUED while one ran
        assert semaphore is not None and semaphore["holders"] == {}  # every slot given back
    else:
        assert semaphore is None  # no semaphore: the reserved concurrency bounds the processor
        assert len(environments) == 1  # one execution environment ran every job and chunk, one at a time

