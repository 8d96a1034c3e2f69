"""The fault campaign: a mixed batch of jobs through the local stack while faults are injected.

Every job must end. Good documents end COMPLETED with their text, bad ones FAILED with their error
code, and faulted jobs end the way the fault must make them end: FAILED ``processor_crashed``,
``timed_out`` or ``inference_failed``, or COMPLETED where the platform absorbs the fault (a duplicate
SQS delivery, one message handed to two invocations at once, a notification delivered twice, a refused
scale-out, a completion handler that is down: its environment crashes on every attempt for a job's success
notification, Lambda parks the notification on the parked-events queue, and the sweeper settles the job
from the output SageMaker wrote, ``settle_grace_seconds`` later), or COMPLETED without the one corrupt page
of a document, naming it in ``pages_failed`` (FAILED ``corrupt_document`` past the share, two bad pages of
four). Afterwards nothing may be in flight, no terminal state may have changed, and no job may have had more
than one backend run (processor invocations and endpoint requests, counted per job and reported): a double hand-over is a problem, not a silent cost.

Most jobs carry a ``callback_url`` to one of four webhook receivers on 127.0.0.1: one that answers, one that
answers after a second, one that fails each event's first two POSTs, and one that is down. Every job must have its
completion event recorded (one identity however often it was published), and every webhook must end
delivered (exactly one 2xx POST of its event) or, for the receiver that is down, dead-lettered with each
attempt recorded on the job and its request on the webhook DLQ.

The faults come from the local stack's runtimes (``ocr_platform.local.faults``): a real worker process
killed mid-invocation (the processor's, the completion function's), a handler started too late for its timeout, a model container answering 500,
SQS and SNS delivering twice, SQS's event source handing one message to two invoker invocations running at
the same time (the invoker has two execution environments), moto's SageMaker refusing a capacity update.
The handlers run unchanged.

What a campaign needs is prepared before its clock starts, as the processor image is built before it
serves: the PP-OCRv5 ONNX exports go into the stack's model cache, the processor builds its engine in
Lambda's init phase (``OCR_PRELOAD_MODELS``, the engine its jobs use), and the clock starts once every
function's init phase has ended. The campaign's short timeouts scale the waits it controls, not the CPU
work of a cold start.

``tests/local/test_fault_campaign.py`` runs it with 70 jobs; ``scripts/fault_campaign.py`` runs any
number and prints the counts, or submits at a steady rate for a while (a soak) and reports throughput,
latency and the stack's memory and open files over time.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import boto3

import ocr_platform
from ocr_platform.cli.client import OcrClient, PlatformResources
from ocr_platform.core.environment import patched_environment
from ocr_platform.jobs.store import PARTITION_KEY, JobStatus
from ocr_platform.local.faults import Fault
from ocr_platform.local.stack import LocalOptions, LocalStack
from tests import documents
from tests.documents import ENGLISH_PAGES, character_error_rate
from tests.local.stack_resources import ResourceSampler, StackUsage
from tests.local.webhook_receiver import WebhookReceiver, receiver_that_is_down

MODELS = ("pp-ocrv5", "pp-structurev3", "paddleocr-vl")
PROCESSOR_TIMEOUT_SECONDS = 15
#: The campaign splits documents of more than 3 pages, on both routes: its 6- and 7-page documents run as 2
#: and 3 chunks, its 1- to 3-page ones in one invocation (one request), so both paths run under faults.
PAGES_PER_CHUNK = 3
#: Chunks this small would leave the last chunk of a 2,000-page job waiting past the request TTL on one
#: endpoint slot (the config refuses that); the campaign's documents have at most 7 pages.
MAX_PAGES = 100
#: The pages of the second chunk of the 7-page document, which the chunk faults hit.
FAULTED_CHUNK = '"pages": "4-6"'
#: The chunk faults that fail their job, whose error must name the chunk.
FAILING_CHUNK_FAULTS = ("chunk crash", "chunk timeout", "chunk model error")
#: The campaign's alarm period is 0.5 s for AWS's 60: the sweeper's settle grace (600 s deployed) scaled
#: alike, so a parked notification's job is settled from S3 within the campaign.
SETTLE_GRACE_SECONDS = 5
#: Lambda's first attempt and its two retries of an async event: a fault that hits all of them parks it.
ASYNC_ATTEMPTS = 3
COMPLETION_DOWN = "completion handler down"
#: The ONNX exports the processor image bakes (containers/cpu-ocr/Dockerfile), prepared the same way.
PREPARED_ONNX_MODELS = ("PP-OCRv5_mobile_det", "PP-OCRv5_mobile_rec", "PP-LCNet_x1_0_doc_ori", "PP-LCNet_x1_0_textline_ori")
#: The engine the processor builds in its init phase (``OCR_PRELOAD_MODELS``): the campaign's CPU jobs are pp-ocrv5, so
#: it is preloaded, as the image preloads its recommended route (pp-ocrv6) for the same reason.
PRELOADED_MODELS = "pp-ocrv5"
MAX_CER = 0.02
#: The campaign's webhook receivers, assigned round-robin (``none``: no callback_url). ``slow`` answers after
#: 1 s, ``flaky`` fails each event's first two POSTs, ``down`` listens nowhere.
WEBHOOK_RECEIVERS = ("ok", "flaky", "none", "slow", "down")
#: Webhook retries after 1 s, doubling to 2 s, for 6 s (AWS: 30 s, 1 h, 24 h).
WEBHOOK_RETRY_SECONDS = (1, 2, 6)
#: The documents of the campaign: file name and the text of each page (empty for bad files).
GOOD_DOCUMENTS: dict[str, tuple[str, list[list[str]]]] = {
    "png": ("invoice.png", ENGLISH_PAGES[:1]),
    "jpeg": ("photo.jpg", ENGLISH_PAGES[1:2]),
    "pdf2": ("scan.pdf", ENGLISH_PAGES[:2]),
    "pdf3": ("letter.pdf", ENGLISH_PAGES),
    "tiff": ("fax.tiff", ENGLISH_PAGES),
    "vector": ("digital.pdf", ENGLISH_PAGES),
    "long7": ("long.pdf", [ENGLISH_PAGES[n % 3] for n in range(7)]),
    "even6": ("even.pdf", ENGLISH_PAGES * 2),
}
#: Documents with corrupt pages (``tests.documents.with_corrupt_pages``): file name, the text of each page, and
#: the pages whose object is damaged. One bad page of four (25%, the default share) or seven leaves the job
#: COMPLETED with the other pages and ``pages_failed``; two of four (50%) fail it ``corrupt_document``.
DAMAGED_DOCUMENTS: dict[str, tuple[str, list[list[str]], tuple[int, ...]]] = {
    "bad-page4": ("damaged.pdf", [ENGLISH_PAGES[n % 3] for n in range(4)], (2,)),
    "bad-page7": ("damaged-long.pdf", [ENGLISH_PAGES[n % 3] for n in range(7)], (5,)),
    "bad-pages4": ("mostly-damaged.pdf", [ENGLISH_PAGES[n % 3] for n in range(4)], (2, 3)),
}


@dataclass(frozen=True)
class PlannedJob:
    """One job of the campaign and what must become of it."""

    job_id: str
    model: str
    document: str | None  # a key of the document set; None: a raw message is sent instead
    status: str
    code: str | None = None
    pages: str | None = None
    language: str = "en"
    raw_message: dict[str, Any] | None = None
    fault: str = "none"
    #: Which webhook receiver the job names (``WEBHOOK_RECEIVERS``), or ``none``.
    callback: str = "none"

    @property
    def expected_text(self) -> list[list[str]]:
        """The text of each page of a COMPLETED job's result, in order (the pages that must fail left out)."""
        if self.status != JobStatus.COMPLETED or not self.document:
            return []
        if self.document in DAMAGED_DOCUMENTS:
            _, pages, bad = DAMAGED_DOCUMENTS[self.document]
            return [lines for number, lines in enumerate(pages, start=1) if number not in bad]
        return GOOD_DOCUMENTS[self.document][1]

    @property
    def pages_failed(self) -> list[int]:
        """The pages a COMPLETED job's ``pages_failed`` must name."""
        if self.status != JobStatus.COMPLETED or self.document not in DAMAGED_DOCUMENTS:
            return []
        return list(DAMAGED_DOCUMENTS[self.document][2])


@dataclass
class CampaignReport:
    """What the campaign saw; ``problems`` lists every broken promise (empty: it passed)."""

    jobs: int = 0
    seconds: float = 0.0
    by_model: Counter[str] = field(default_factory=Counter)
    by_status: Counter[str] = field(default_factory=Counter)
    by_code: Counter[str] = field(default_factory=Counter)
    by_fault: Counter[str] = field(default_factory=Counter)
    faults_injected: dict[str, int] = field(default_factory=dict)
    #: Events on the parked-events queue, by job id (only a ``completion handler down`` job's may be there).
    parked_events: Counter[str] = field(default_factory=Counter)
    #: Final ``callback_status`` of the jobs with a callback_url (``delivered``, ``dead_lettered``).
    webhooks: Counter[str] = field(default_factory=Counter)
    webhook_attempts: int = 0
    events_recorded: int = 0
    processor_runs: int = 0
    endpoint_requests: int = 0
    #: Backend runs (processor invocations + endpoint requests) per job id; more than one (more than one per
    #: chunk after the first, for a split job) is a double hand-over.
    backend_runs: Counter[str] = field(default_factory=Counter)
    #: The most backend runs the jobs may have had: one each, plus one per chunk of a split job, plus the
    #: chunk events delivered twice on purpose.
    allowed_backend_runs: int = 0
    #: Jobs the processor split into chunks.
    split_jobs: int = 0
    text_checked: int = 0
    pages_completed: int = 0
    latencies: list[float] = field(default_factory=list)
    preparation_seconds: float = 0.0
    init_seconds: dict[str, float | None] = field(default_factory=dict)
    rate_per_minute: float | None = None
    usage: StackUsage | None = None
    problems: list[str] = field(default_factory=list)

    def latency(self, quantile: float) -> float:
        """Submit-to-terminal seconds of the jobs at ``quantile`` (nearest rank)."""
        ordered = sorted(self.latencies)
        return ordered[max(0, math.ceil(quantile * len(ordered)) - 1)] if ordered else 0.0

    def lines(self) -> list[str]:
        def counts(counter: Counter[str]) -> str:
            return ", ".join(f"{key} {value}" for key, value in sorted(counter.items()))

        minutes = self.seconds / 60 or 1.0
        init = ", ".join(f"{name} {'timed out' if secs is None else f'{secs:.1f} s'}" for name, secs in sorted(self.init_seconds.items()))
        pace = f"submitted at {self.rate_per_minute:g}/min" if self.rate_per_minute else "submitted at once"
        return [
            f"before the clock: model cache prepared in {self.preparation_seconds:.1f} s; init phases: {init}",
            f"jobs: {self.jobs} in {self.seconds:.1f} s ({counts(self.by_model)})",
            (
                f"throughput ({pace}): {self.jobs / minutes:.1f} jobs/min, {self.pages_completed / minutes:.1f} pages/min "
                f"(completed pages); job latency p50 {self.latency(0.5):.1f} s, p95 {self.latency(0.95):.1f} s"
            ),
            f"terminal: {counts(self.by_status)}",
            f"failure codes: {counts(self.by_code)}",
            f"jobs per fault: {counts(self.by_fault)}",
            f"faults injected: {counts(Counter(self.faults_injected))}",
            f"parked events: {sum(self.parked_events.values())} for {len(self.parked_events)} jobs (settled from S3 by the sweeper)",
            f"completion events recorded: {self.events_recorded}; webhooks: {counts(self.webhooks)} after {self.webhook_attempts} attempts",
            (
                f"backend runs: {sum(self.backend_runs.values())} for {self.jobs} jobs (processor {self.processor_runs}, "
                f"endpoint {self.endpoint_requests}; {self.split_jobs} jobs split into chunks), at most "
                f"{self.allowed_backend_runs} allowed (one per job and chunk, one more per chunk event delivered twice); "
                f"completed texts checked (CER <= {MAX_CER:.0%}): {self.text_checked}"
            ),
            *(self.usage.lines() if self.usage else []),
            f"problems: {len(self.problems)}",
            *(f"  - {problem}" for problem in self.problems),
        ]


def write_documents(root: Path) -> dict[str, Path]:
    """The good documents of ``GOOD_DOCUMENTS`` and the bad files, under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    paths = {
        "png": documents.write_png(root / "invoice.png", ENGLISH_PAGES[0]),
        "pdf2": documents.write_image_pdf(root / "scan.pdf", ENGLISH_PAGES[:2]),
        "pdf3": documents.write_image_pdf(root / "letter.pdf", ENGLISH_PAGES),
        "tiff": documents.write_tiff(root / "fax.tiff", ENGLISH_PAGES),
        "vector": documents.write_vector_pdf(root / "digital.pdf", ENGLISH_PAGES),
        # Scans, so that their pages are read by OCR and split into chunks as priced (a born-digital page with
        # text_layer: auto costs a tenth, and 7 of them would fit in one chunk).
        "long7": documents.write_image_pdf(root / "long.pdf", GOOD_DOCUMENTS["long7"][1]),
        "even6": documents.write_image_pdf(root / "even.pdf", GOOD_DOCUMENTS["even6"][1]),
        "encrypted": documents.write_vector_pdf(root / "secret.pdf", ENGLISH_PAGES[:1], password="s3cret"),
        "bomb": documents.write_bomb_png(root / "bomb.png"),
    }
    paths["jpeg"] = root / "photo.jpg"
    documents.render_page(ENGLISH_PAGES[1]).save(paths["jpeg"], format="JPEG", quality=85)
    paths["not_pdf"] = root / "notes.pdf"
    paths["not_pdf"].write_bytes(b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(range(256)) * 8)  # an MP3's tag, named .pdf: no route reads audio
    paths["truncated"] = root / "truncated.pdf"
    paths["truncated"].write_bytes(paths["pdf2"].read_bytes()[:2000])
    paths["empty"] = root / "empty.png"
    paths["empty"].write_bytes(b"")
    for key, (name, pages, bad) in DAMAGED_DOCUMENTS.items():
        paths[key] = root / name
        paths[key].write_bytes(documents.with_corrupt_pages(documents.write_image_pdf(root / f"whole-{name}", pages).read_bytes(), list(bad)))
    return paths


def plan(total: int = 54) -> tuple[list[PlannedJob], tuple[Fault, ...]]:
    """The job mix (every scenario once, then good documents round-robin up to ``total``) and its faults."""
    jobs: list[PlannedJob] = []
    faults: list[Fault] = []

    def add(label: str, model: str, document: str | None, status: str, code: str | None = None, **extra: Any) -> str:
        job_id = f"{len(jobs):03d}-{label}"
        callback = WEBHOOK_RECEIVERS[len(jobs) % len(WEBHOOK_RECEIVERS)]
        jobs.append(PlannedJob(job_id, model, document, status, code, callback=callback, **extra))
        return job_id

    done, failed = JobStatus.COMPLETED.value, JobStatus.FAILED.value
    # Good documents on every model.
    for document in GOOD_DOCUMENTS:
        for model in MODELS:
            add(f"good-{document}", model, document, done)
    # Bad input: each refusal has its own code, on whichever backend checks it.
    add("encrypted", "pp-ocrv5", "encrypted", failed, "encrypted_pdf")
    add("encrypted-vl", "paddleocr-vl", "encrypted", failed, "encrypted_pdf")
    add("not-a-pdf", "pp-structurev3", "not_pdf", failed, "unsupported_type")
    add("not-a-pdf-vl", "paddleocr-vl", "not_pdf", failed, "unsupported_type")
    add("truncated", "pp-ocrv5", "truncated", failed, "corrupt_document")
    add("truncated-vl", "paddleocr-vl", "truncated", failed, "corrupt_document")
    add("empty", "pp-structurev3", "empty", failed, "empty_document")
    add("bomb", "pp-ocrv5", "bomb", failed, "page_too_large")
    add("bad-pages", "pp-ocrv5", "png", failed, "invalid_pages", pages="7")
    add("bad-language", "pp-ocrv5", "png", failed, "unsupported_language", language="klingon")
    add("unknown-model", "tesseract", None, failed, "unknown_model", raw_message={"model": "tesseract", "document": "png"})
    add("no-input", "pp-ocrv5", None, failed, "invalid_message", raw_message={"model": "pp-ocrv5"})
    add("missing-object", "pp-ocrv5", None, failed, "input_not_found", raw_message={"model": "pp-ocrv5", "key": "documents/nowhere/a.png"})
    # One page of a document is corrupt: the job completes with the others and names it in pages_failed, on
    # both routes, in a chunk (pages 1-3 of 4: chunk 1 returns pages 1 and 3; page 5 of 7: chunk 2 returns 4
    # and 6); past the share (two of four) the job fails, naming the pages.
    for model in MODELS:
        add("bad-page", model, "bad-page4", done, fault="one page of a document is corrupt")
    add("bad-page-long", "pp-ocrv5", "bad-page7", done, fault="one page of a document is corrupt")
    for model in ("pp-ocrv5", "paddleocr-vl"):
        add("bad-pages", model, "bad-pages4", failed, "corrupt_document", fault="two pages of four are corrupt")
    # Faults, each as a job that must still end right.
    def crash(model: str) -> None:
        job = add("crash", model, "pdf3", failed, "processor_crashed", fault="processor crash mid-job")
        faults.append(Fault("processor", "crash", match=job, seconds=0.25))

    def model_error(model: str) -> None:
        job = add("model-error", "paddleocr-vl", "png", failed, "inference_failed", fault="endpoint error")
        faults.append(Fault("endpoint", "model-error", match=job))

    def duplicate_delivery(model: str) -> None:
        job = add("duplicate-delivery", model, "pdf2", done, fault="duplicate SQS delivery")
        faults.append(Fault("job-queue", "duplicate", match=job))

    def concurrent_duplicate(model: str) -> None:
        job = add("concurrent-duplicate", model, "png", done, fault="concurrent duplicate")
        faults.append(Fault("job-queue", "concurrent-duplicate", match=job))

    def success_twice(model: str) -> None:
        job = add("sns-twice", "paddleocr-vl", "pdf2", done, fault="success notification twice")
        faults.append(Fault("success-topic", "duplicate", match=job))

    def completion_down(model: str) -> None:
        job = add("completion-down", "paddleocr-vl", "png", done, fault=COMPLETION_DOWN)
        faults.append(Fault("completion", "crash", match=job, count=ASYNC_ATTEMPTS))

    for model in ("pp-ocrv5", "pp-structurev3"):
        crash(model)
    for _ in range(2):
        completion_down("paddleocr-vl")
    job = add("timeout", "pp-ocrv5", "pdf3", failed, "timed_out", fault="processor timeout")
    faults.append(Fault("processor", "delay", match=job, seconds=PROCESSOR_TIMEOUT_SECONDS - 0.3))
    for _ in range(2):
        model_error("paddleocr-vl")
    for model in MODELS:
        duplicate_delivery(model)
    for model in MODELS:
        concurrent_duplicate(model)
    for _ in range(2):
        success_twice("paddleocr-vl")
    job = add("sns-error-twice", "paddleocr-vl", "encrypted", failed, "encrypted_pdf", fault="error notification twice")
    faults.append(Fault("error-topic", "duplicate", match=job))
    # Chunk faults on a long document (chunks 1-3, 4-6, 7): its second chunk crashes, times out, or its event
    # is delivered twice. The first two fail the job once, naming the chunk; the third changes nothing.
    for model in ("pp-ocrv5", "pp-structurev3"):
        job = add("chunk-crash", model, "long7", failed, "processor_crashed", fault="chunk crash")
        faults.append(Fault("processor", "crash", match=(job, FAULTED_CHUNK), seconds=0.25))
    job = add("chunk-timeout", "pp-ocrv5", "long7", failed, "timed_out", fault="chunk timeout")
    faults.append(Fault("processor", "delay", match=(job, FAULTED_CHUNK), seconds=PROCESSOR_TIMEOUT_SECONDS - 0.3))
    for model in ("pp-ocrv5", "pp-structurev3"):
        job = add("chunk-twice", model, "long7", done, fault="chunk delivered twice")
        faults.append(Fault("processor", "duplicate", match=(job, FAULTED_CHUNK)))
    # The fan-in race: two equal chunks start together on the processor's environments and finish together;
    # one of them merges.
    for model in ("pp-ocrv5", "pp-structurev3"):
        add("fan-in-race", model, "even6", done, fault="fan-in race")
    # The GPU route: the endpoint splits the 7-page document; its second chunk request fails in the model, or
    # that request's success notification is delivered twice. The first fails the job once, naming the chunk.
    job = add("chunk-model-error", "paddleocr-vl", "long7", failed, "inference_failed", fault="chunk model error")
    faults.append(Fault("endpoint", "model-error", match=(job, FAULTED_CHUNK)))
    job = add("chunk-notification-twice", "paddleocr-vl", "long7", done, fault="chunk notification twice")
    faults.append(Fault("success-topic", "duplicate", match=f"{job}.c00001"))  # its InferenceId names the chunk
    add("gpu-split", "paddleocr-vl", "even6", done, fault="endpoint split")
    # The first two scale-outs are refused (the endpoint is "updating"): their messages come back later.
    faults.append(Fault("endpoint-capacity", "update-refused", count=2))
    # More work up to the total: good documents round-robin over models and documents, every 6th job
    # with one more fault (no timeouts: each holds the processor for its whole timeout).
    names, recurring = list(GOOD_DOCUMENTS), (duplicate_delivery, crash, success_twice, model_error, concurrent_duplicate)
    filler = 0
    while len(jobs) < total:
        n, filler = len(jobs), filler + 1
        model = MODELS[n % len(MODELS)]
        if filler % 6 == 0:
            recurring[(filler // 6 - 1) % len(recurring)](model if model != "paddleocr-vl" else "pp-ocrv5")
        else:
            add("more", model, names[(n // len(MODELS)) % len(names)], done)
    return jobs, tuple(faults)


def prepare_model_cache(cache_dir: Path) -> float:
    """Export the models the processor image bakes into ``cache_dir``, in a process of its own; the seconds it took.

    The image build does this on AWS; done in the campaign's clock, the export and its paddle imports
    would land in the first job's invocation instead.
    """
    started = time.perf_counter()
    export = (
        "import sys; from ocr_platform.engines.model_cache import ModelCache; "
        "[ModelCache(local_dir=sys.argv[1]).resolve(n, onnx=True) for n in sys.argv[2:]]"
    )
    lambdas_dir = str(Path(ocr_platform.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (lambdas_dir, os.environ.get("PYTHONPATH", "")) if p)}
    subprocess.run([sys.executable, "-c", export, str(cache_dir), *PREPARED_ONNX_MODELS], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - started


def run_campaign(
    workdir: Path, total: int = 54, *, timeout: float = 900.0, rate_per_minute: float | None = None,
    sample_seconds: float | None = None,
) -> CampaignReport:
    """Start a local stack with the campaign's faults, run the job mix through it, check every promise.

    Args:
        workdir: documents, the model cache and nothing else of the campaign go here.
        total: jobs in the mix (at least its scenarios).
        timeout: seconds to wait, after the last submission, for every job to end.
        rate_per_minute: submit at this steady rate (a soak); ``None`` submits every job at once.
        sample_seconds: sample the stack's memory and open files this often; ``None``: not at all.
    """
    from ocr_infra.config import PlatformConfig

    jobs, faults = plan(total)
    paths = write_documents(workdir / "documents")
    offline = {
        "OCR_MODEL_HUB": "off",  # every model from installed packages
        "OCR_MODEL_CACHE_DIR": str(workdir / "models"),
        "OCR_PRELOAD_MODELS": PRELOADED_MODELS,
    }
    config = PlatformConfig(
        stage="local", engine_fallback=True, versioned_bucket=True, cpu_pages_per_chunk=PAGES_PER_CHUNK,
        gpu_pages_per_chunk=PAGES_PER_CHUNK, max_pages=MAX_PAGES,
        settle_grace_seconds=SETTLE_GRACE_SECONDS,
    )
    options = LocalOptions(period_seconds=0.5, visibility_timeout_seconds=2, retry_delays_seconds=(0.2, 0.2), faults=faults,
                           processor_timeout_seconds=PROCESSOR_TIMEOUT_SECONDS, webhook_retry_seconds=WEBHOOK_RETRY_SECONDS)
    report = CampaignReport(jobs=len(jobs), rate_per_minute=rate_per_minute)
    report.preparation_seconds = prepare_model_cache(workdir / "models")
    with patched_environment(offline), _webhook_receivers() as receivers:
        stack = LocalStack(config, options)
        info = stack.start()
        try:
            report.init_seconds = stack.lambdas.wait_initialized(timeout=120.0)
            with patched_environment(info.client_environment()):
                client = OcrClient(PlatformResources(info.bucket, info.queue_url, info.table))
                with ResourceSampler(sample_seconds) if sample_seconds else nullcontext() as sampler:
                    started = time.perf_counter()
                    urls = {name: receiver if isinstance(receiver, str) else receiver.url for name, receiver in receivers.items()}
                    submitter = _Submitter(client, jobs, paths, info, rate_per_minute, urls)
                    submitter.start()
                    first_terminal = _wait_all_terminal(client, jobs, submitter, timeout, report)
                    report.seconds = time.perf_counter() - started
                report.usage = sampler.usage() if sampler is not None else None
                _settle(stack, info)
                _check(stack, info, client, jobs, first_terminal, report)
                _check_notifications(info, client, jobs, receivers, report)
        finally:
            stack.stop()
    return report


class _Submitter(threading.Thread):
    """Submits the jobs in order, all at once or at a steady rate; ``submitted`` grows as it goes."""

    def __init__(
        self, client: OcrClient, jobs: list[PlannedJob], paths: dict[str, Path], info: Any, rate_per_minute: float | None,
        callback_urls: dict[str, str],
    ) -> None:
        super().__init__(name="campaign-submitter", daemon=True)
        self.client, self.jobs, self.paths, self.info = client, jobs, paths, info
        self.callback_urls = callback_urls
        self.interval = 60.0 / rate_per_minute if rate_per_minute else 0.0
        self.submitted: list[PlannedJob] = []
        self.error: Exception | None = None

    def run(self) -> None:
        sqs, s3 = boto3.client("sqs"), boto3.client("s3")
        started = time.monotonic()
        try:
            for index, job in enumerate(self.jobs):
                if (wait := started + index * self.interval - time.monotonic()) > 0:
                    time.sleep(wait)
                self._submit(job, sqs, s3)
                self.submitted.append(job)
        except Exception as err:  # noqa: BLE001 - reported by the waiter as a problem
            self.error = err

    def _submit(self, job: PlannedJob, sqs: Any, s3: Any) -> None:
        paths, info = self.paths, self.info
        if job.raw_message is None:
            assert job.document is not None
            self.client.submit(
                paths[job.document], model=job.model, job_id=job.job_id, pages=job.pages, language=job.language,
                callback_url=self.callback_urls.get(job.callback),
            )
            return
        # What a producer that skips the client may send: no item written first, a raw SQS message.
        body: dict[str, Any] = {"job_id": job.job_id, "model": job.raw_message["model"]}
        if job.callback in self.callback_urls:
            body["callback_url"] = self.callback_urls[job.callback]
        if "document" in job.raw_message:
            key = f"documents/{job.job_id}/{paths[job.raw_message['document']].name}"
            s3.upload_file(str(paths[job.raw_message["document"]]), info.bucket, key)
            body["input"] = f"s3://{info.bucket}/{key}"
        elif "key" in job.raw_message:
            body["input"] = f"s3://{info.bucket}/{job.raw_message['key']}"
        sqs.send_message(QueueUrl=info.queue_url, MessageBody=json.dumps(body))


def _wait_all_terminal(
    client: OcrClient, jobs: list[PlannedJob], submitter: _Submitter, timeout: float, report: CampaignReport
) -> dict[str, dict[str, Any]]:
    """Poll the submitted jobs until every job is terminal; the first terminal item of each (to prove it never changes)."""
    terminal: dict[str, dict[str, Any]] = {}
    dynamodb = boto3.resource("dynamodb")
    table = client.store.table.name
    deadline = time.monotonic() + timeout
    while len(terminal) < len(jobs) and time.monotonic() < deadline:
        if submitter.is_alive():
            deadline = time.monotonic() + timeout
        pending = [job.job_id for job in list(submitter.submitted) if job.job_id not in terminal]
        for start in range(0, len(pending), 100):  # BatchGetItem's limit
            keys = [{PARTITION_KEY: job_id} for job_id in pending[start:start + 100]]
            response = dynamodb.batch_get_item(RequestItems={table: {"Keys": keys, "ConsistentRead": True}})
            for item in response["Responses"].get(table, []):
                if item.get("status") in (JobStatus.COMPLETED, JobStatus.FAILED):
                    terminal[item["job_id"]] = item
        if submitter.error is not None:
            report.problems.append(f"submitting stopped: {submitter.error!r} [not injected]")
            break
        time.sleep(0.5)
    for job in jobs:
        if job.job_id not in terminal:
            report.problems.append(
                f"{job.job_id}: not terminal after {timeout:.0f} s ({(client.store.get(job.job_id) or {}).get('status')}) {_injected(job)}"
            )
    return terminal


def _injected(job: PlannedJob) -> str:
    return "[not injected]" if job.fault == "none" else f"[injected: {job.fault}]"


def _seconds_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def _settle(stack: LocalStack, info: Any, timeout: float = 60.0) -> None:
    """Let late deliveries (duplicates, retries, notifications) arrive before the final checks."""
    sqs = boto3.client("sqs")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        quiet = all(queue_depth(sqs, url) == 0 for url in (info.queue_url, info.dlq_url, info.resources["webhook_queue_url"]))
        if quiet and stack.sagemaker.backlog() == 0 and stack.lambdas.wait_idle(timeout=1.0):
            time.sleep(2.0)  # one more SQS poll and SNS delivery round
            if stack.lambdas.wait_idle(timeout=1.0):
                return
        time.sleep(0.5)


def queue_depth(sqs: Any, url: str) -> int:
    """Messages on the queue, visible or in flight."""
    attributes = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


def _check(stack: LocalStack, info: Any, client: OcrClient, jobs: list[PlannedJob], first: dict[str, dict[str, Any]], report: CampaignReport) -> None:
    s3, sqs = boto3.client("s3"), boto3.client("sqs")
    processor_runs = Counter(
        (record.event or {}).get("job_id") for record in stack.lambdas.invocations(stack.names["processor"]) if isinstance(record.event, dict)
    )
    endpoint_requests = Counter(stack.sagemaker.accepted_requests())
    report.processor_runs, report.endpoint_requests = sum(processor_runs.values()), sum(endpoint_requests.values())
    report.backend_runs = processor_runs + endpoint_requests
    report.faults_injected = stack.faults.counts()
    # Every version of every result.json, in one paginated listing: one call per job scanned moto's whole
    # versioned bucket each time, and at 500 jobs one of them outlived botocore's 60 s read timeout.
    result_writes: Counter[str] = Counter()
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=info.bucket, Prefix="results/"):
        result_writes.update(version["Key"] for version in page.get("Versions", []))
    chunk_objects: Counter[str] = Counter()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=info.bucket, Prefix="chunks/"):
        chunk_objects.update(obj["Key"].split("/")[1] for obj in page.get("Contents", []))
    for job in jobs:
        item = client.store.get(job.job_id) or {}
        status, code = item.get("status"), (item.get("error") or {}).get("code")
        report.by_model[job.model] += 1
        report.by_status[str(status)] += 1
        report.by_fault[job.fault] += 1
        if code:
            report.by_code[code] += 1
        if (latency := _seconds_between(item.get("created_at"), item.get("finished_at"))) is not None:
            report.latencies.append(latency)
        tag = _injected(job)
        # A split job has one processor run per chunk after the one that opened it; a chunk event delivered
        # twice adds one run, which must find the chunk done and change nothing.
        allowed = 1 + int(item.get("chunk_count") or 0) + (job.fault == "chunk delivered twice")
        report.allowed_backend_runs += allowed
        report.split_jobs += bool(item.get("chunk_count"))
        if (runs := report.backend_runs[job.job_id]) > allowed:
            report.problems.append(
                f"{job.job_id}: {runs} backend runs (processor {processor_runs[job.job_id]}, endpoint {endpoint_requests[job.job_id]}): "
                f"handed over more than once (at most {allowed}) {tag}"
            )
        if (status, code) != (job.status, job.code):
            message = (item.get("error") or {}).get("message", "")
            report.problems.append(f"{job.job_id}: {status} {code or ''} ({message}), expected {job.status} {job.code or ''} {tag}")
            continue
        if job.document in DAMAGED_DOCUMENTS and status == JobStatus.FAILED and not all(
            f"page {n}: " in (item.get("error") or {}).get("message", "") for n in DAMAGED_DOCUMENTS[job.document][2]
        ):
            report.problems.append(f"{job.job_id}: its error does not name the failed pages: {item.get('error')} {tag}")
        if job.fault in FAILING_CHUNK_FAULTS and not (item.get("error") or {}).get("message", "").startswith("chunk 2 of 3 (pages 4-6): "):
            report.problems.append(f"{job.job_id}: its error does not name the failed chunk: {item.get('error')} {tag}")
        if job.job_id in first and {k: first[job.job_id].get(k) for k in ("status", "finished_at", "error", "result")} != {
            k: item.get(k) for k in ("status", "finished_at", "error", "result")
        }:
            report.problems.append(f"{job.job_id}: its terminal state changed after it was first seen {tag}")
        if status == JobStatus.COMPLETED:
            key = f"results/{job.job_id}/result.json"
            if (writes := result_writes[key]) != 1:
                report.problems.append(f"{job.job_id}: result.json was written {writes} times {tag}")
            if chunk_objects[job.job_id]:
                report.problems.append(f"{job.job_id}: {chunk_objects[job.job_id]} chunk result(s) left under chunks/ {tag}")
            result = client.result(job.job_id)
            failed = [failure["page"] for failure in item.get("pages_failed") or []]
            if failed != job.pages_failed or [f["page"] for f in result.get("pages_failed", [])] != job.pages_failed:
                report.problems.append(f"{job.job_id}: pages_failed {failed}, expected {job.pages_failed} {tag}")
            if len(result["pages"]) != len(job.expected_text):
                report.problems.append(f"{job.job_id}: {len(result['pages'])} pages in the result, expected {len(job.expected_text)} {tag}")
            for index, lines in enumerate(job.expected_text):
                recognised = "\n".join(line["text"] for line in result["pages"][index]["lines"])
                if (cer := character_error_rate(recognised, "\n".join(lines))) > MAX_CER:
                    report.problems.append(f"{job.job_id}: page {index + 1} CER {cer:.3f} > {MAX_CER} {tag}")
            report.text_checked += 1
            report.pages_completed += int(item.get("page_count") or 0)
    for status in (JobStatus.QUEUED, JobStatus.PROCESSING):
        for item in client.store.list_by_status(status):
            report.problems.append(f"{item['job_id']}: still {status} [not injected]")
    for name, url in (("job queue", info.queue_url), ("DLQ", info.dlq_url)):
        if (depth := queue_depth(sqs, url)) != 0:
            report.problems.append(f"{depth} message(s) left on the {name} [not injected]")
    if stack.sagemaker.backlog() != 0:
        report.problems.append(f"{stack.sagemaker.backlog()} endpoint request(s) still queued or in flight [not injected]")
    _check_parked_events(sqs, info, jobs, report)
    # Function errors come from the injected crashes and timeouts only: the processor's, and the completion
    # function's for the jobs whose completion handler is down.
    injected = {
        stack.names["processor"]: report.faults_injected.get("processor:crash", 0) + report.faults_injected.get("processor:delay", 0),
        stack.names["completion"]: report.faults_injected.get("completion:crash", 0),
    }
    errors = {name: counts["errors"] for name, counts in stack.lambdas.stats().items() if counts["errors"]}
    if errors != {name: count for name, count in injected.items() if count}:
        faulted = {
            job.job_id: (job.fault, stack.names["completion"] if job.fault == COMPLETION_DOWN else stack.names["processor"])
            for job in jobs if job.fault in ("processor crash mid-job", "processor timeout", "chunk crash", "chunk timeout", COMPLETION_DOWN)
        }
        erred = [
            f"{record.function} {record.error_type} on {job_id} "
            + (f"[injected: {faulted[job_id][0]}]" if job_id in faulted and faulted[job_id][1] == record.function else "[not injected]")
            for record in stack.lambdas.invocations() if record.error_type
            for job_id in [_event_job_id(record.event, jobs)]
        ]
        report.problems.append(f"function errors {errors}; expected only the injected {injected}: {'; '.join(erred)}")
    for fault in stack.options.faults:
        if f"{fault.target}:{fault.action}" not in report.faults_injected:
            report.problems.append(f"fault {fault.target}:{fault.action} ({fault.match or 'any'}) was never injected [injected, but never fired]")


def _event_job_id(event: Any, jobs: list[PlannedJob]) -> str | None:
    """The job an invocation's event is about: its ``job_id``, or the planned job its text names (an SNS event)."""
    if isinstance(event, dict) and event.get("job_id"):
        return str(event["job_id"])
    text = json.dumps(event)
    return next((job.job_id for job in jobs if job.job_id in text), None)


def _check_parked_events(sqs: Any, info: Any, jobs: list[PlannedJob], report: CampaignReport) -> None:
    """Exactly one parked event per ``completion handler down`` job (Lambda's destination record of its
    success notification, after every attempt failed), and nothing else on the parked-events queue."""
    url = info.resources["parked_events_url"]
    seen: set[str] = set()
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=600, WaitTimeSeconds=1).get("Messages", [])
        if not messages:
            break
        for message in messages:
            if message["MessageId"] in seen:
                continue
            seen.add(message["MessageId"])
            record = json.loads(message["Body"])
            context = record.get("requestContext", {})
            job_id = _event_job_id(record.get("requestPayload"), jobs) or "?"
            report.parked_events[job_id] += 1
            if context.get("condition") != "RetriesExhausted" or context.get("approximateInvokeCount") != ASYNC_ATTEMPTS:
                report.problems.append(f"parked event of {job_id} is not Lambda's record after {ASYNC_ATTEMPTS} attempts: {context}")
    expected = Counter(job.job_id for job in jobs if job.fault == COMPLETION_DOWN)
    for job_id in sorted(set(expected) | set(report.parked_events)):
        if report.parked_events[job_id] != expected[job_id]:
            tag = "[injected: completion handler down]" if expected[job_id] else "[not injected]"
            report.problems.append(f"{job_id}: {report.parked_events[job_id]} parked event(s), expected {expected[job_id]} {tag}")


@contextmanager
def _webhook_receivers() -> Iterator[dict[str, Any]]:
    """The campaign's receivers by name: a running ``WebhookReceiver``, or the URL of one that is down."""
    with (
        WebhookReceiver() as ok, WebhookReceiver(delay_seconds=1.0) as slow, WebhookReceiver(fail_first=2) as flaky,
        receiver_that_is_down() as down,
    ):
        yield {"ok": ok, "slow": slow, "flaky": flaky, "down": down}


def _check_notifications(info: Any, client: OcrClient, jobs: list[PlannedJob], receivers: dict[str, Any], report: CampaignReport) -> None:
    """Every job's completion event recorded under one identity; every webhook delivered once or dead-lettered."""
    sqs = boto3.client("sqs")
    events: dict[str, list[dict[str, Any]]] = {}
    for body in _drain(sqs, info.resources["job_events_url"]):
        event = json.loads(body)
        events.setdefault(event["detail"]["job_id"], []).append(event)
    report.events_recorded = sum(len(published) for published in events.values())
    parked = Counter(json.loads(body)["job_id"] for body in _drain(sqs, info.resources["webhook_dlq_url"]))
    for job in jobs:
        item = client.store.get(job.job_id) or {}
        tag = _injected(job)
        published = events.get(job.job_id, [])
        if not published:
            report.problems.append(f"{job.job_id}: no completion event was published {tag}")
        elif len({event["detail"]["event_id"] for event in published}) != 1 or published[0]["detail"]["status"] != item.get("status"):
            report.problems.append(f"{job.job_id}: its completion events disagree: {[e['detail'].get('status') for e in published]} {tag}")
        if item.get("notification_pending"):
            report.problems.append(f"{job.job_id}: still in the notification outbox {tag}")
        if job.callback == "none":
            continue
        state, attempts = item.get("callback_status"), item.get("callback_attempts", [])
        report.webhooks[str(state)] += 1
        report.webhook_attempts += len(attempts)
        if [a.get("attempt") for a in attempts] != list(range(1, len(attempts) + 1)):
            report.problems.append(f"{job.job_id}: webhook attempts not recorded one by one: {attempts} {tag}")
        if job.callback == "down":
            if state != "dead_lettered" or len(attempts) < 2 or parked[job.job_id] != 1:
                report.problems.append(
                    f"{job.job_id}: webhook to a receiver that is down: {state} after {len(attempts)} attempts, "
                    f"{parked[job.job_id]} on the webhook DLQ (expected dead_lettered, >= 2, 1) {tag}"
                )
            continue
        posts = receivers[job.callback].of_event(published[0]["detail"]["event_id"]) if published else []
        answered = bool(attempts) and attempts[-1].get("status_code") == 200
        if state != "delivered" or not answered or len(posts) != (3 if job.callback == "flaky" else 1):
            report.problems.append(
                f"{job.job_id}: webhook to the {job.callback} receiver: {state}, {len(posts)} POST(s), attempts {attempts} {tag}"
            )
    if sum(parked.values()) != sum(job.callback == "down" for job in jobs):
        report.problems.append(f"webhook DLQ holds {sum(parked.values())} requests, expected one per job naming the receiver that is down")


def _drain(sqs: Any, url: str) -> list[str]:
    """Every message body on a queue (received once each, then deleted)."""
    bodies: list[str] = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
        for message in messages:
            bodies.append(message["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return bodies

