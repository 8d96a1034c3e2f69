"""A latency and cost model of the deployed platform, from the per-page cost measured here.

    .venv/bin/python benchmarks/aws_model.py [--memory-mb 3008] [--pages-per-chunk 6] [--pages 1 10 100 500 2000]
        [--gpu-pages-per-chunk 10] [--vl-seconds-per-page 2.0]

Nothing here calls AWS. Inputs:

- the dense-page cost on one and two vCPUs measured on the 2-core development machine
  (``ocr_platform.core.defaults.DENSE_PAGE_SECONDS_*``) and Lambda's memory-to-vCPU ratio (1,769 MB per vCPU),
  through ``defaults.dense_page_seconds``;
- the processor's init phase measured on the local stack (PP-OCRv5 on ONNX Runtime: 4.7 s), as the cold
  start of every invocation in the "cold" column;
- for the ``pp-ocrv6`` route on its default backend (PP-OCRv6 tiny on faster-paddle), the same model scaled by
  what ``benchmarks/real_pages.py`` and ``benchmarks/cold_start.py`` measured for it beside PP-OCRv5 in the same
  runs (``PPOCRV6_TINY_PAGE_SHARE``, ``PPOCRV6_TINY_COLD_SHARE``);
- the fan-out of ``ocr_platform.core.chunks``: the first invocation opens the document and launches one
  asynchronous invocation per chunk (one ``Invoke`` call each, ``LAUNCH_SECONDS``), the chunks run as many at a
  time as the stage's admission limit has slots (``defaults.PROCESSOR_MAX_CONCURRENCY``, 20: a chunk without a slot
  waits for one, so 334 chunks run in ceil(334 / 20) = 17 rounds), the last one merges
  (``defaults.MERGE_SECONDS_PER_CHUNK``). A slot is taken over as soon as it is freed here; the dispatcher's retry
  of a waiting chunk (``defaults.ADMISSION_RETRY_SECONDS``) can add up to that much to each round;
- the GPU route's fan-out: the endpoint answers a long job's request with a split plan, the completion
  function sends one request per chunk (``NOTIFICATION_SECONDS`` per hop), and the chunks run as many at a
  time as the endpoint has slots (instances x concurrent invocations per instance);
- public list prices, us-east-1, as listed on the AWS pricing pages when this was written (``PRICES``,
  dated). The PaddleOCR-VL per-page time on the GPU is not measured here (no GPU on this machine): it is
  an input (``--vl-seconds-per-page``), and the GPU rows say so.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lambdas")]

from ocr_platform.core import defaults  # noqa: E402

#: Seconds of the processor's init phase (imports, ONNX Runtime sessions), measured on the local stack.
COLD_START_SECONDS = 4.7
#: An asynchronous ``Invoke`` call from the first invocation, one per chunk, and Lambda's hand-over of the event.
LAUNCH_SECONDS = 0.025
#: Download of a document from S3 in the same region, and the count of its pages.
OPEN_SECONDS = 0.5
#: The invoker's work between the SQS message and the processor's start (its DynamoDB writes and ``Invoke``).
DISPATCH_SECONDS = 0.2
#: How long a scale-out of the async endpoint from 0 instances takes before the first request runs.
GPU_SCALE_FROM_ZERO_SECONDS = 480
#: From an inference's end to the completion function acting on it: SageMaker's output write, SNS, Lambda.
NOTIFICATION_SECONDS = 1.0
#: A warm endpoint's work on a request outside its pages: the document's download and opening.
ENDPOINT_OPEN_SECONDS = 0.5
#: A dense born-digital page read with ``text_layer: auto``, as a share of the same page read by OCR: measured
#: by ``benchmarks/text_layers.py`` on 20 pages of a clinical guideline (README, "PDF text layers").
BORN_DIGITAL_PAGE_SHARE = 0.027  # 0.067 s against 2.481 s a page

#: A dense page on the ``pp-ocrv6`` route's default (PP-OCRv6 tiny on faster-paddle) as a share of the same page on
#: ``pp-ocrv5``: medians of three ``benchmarks/real_pages.py`` runs, both routes in each run (README, "Real pages").
PPOCRV6_TINY_PAGE_SHARE = 0.28  # 0.51 s against 1.85 s a page
#: Its cold start (process start to one page done) as a share of PP-OCRv5's: medians of ``benchmarks/cold_start.py``
#: ``--model pp-ocrv6`` against the default, run one after the other (docs/performance/cold-start.md).
PPOCRV6_TINY_COLD_SHARE = 0.33  # 0.78 s against 2.35 s

#: Seconds a page's forms take (``features: ["forms"]``, always on ``pp-structurev3``): pairing labels and answers and
#: finding check boxes on the page image, after OCR; the mean over 12 generated scanned forms (``tests/form_documents.py``)
#: at the CPU routes' A4 size (1654 x 2339 pixels) on the development machine (docs/performance/forms.md).
FORMS_SECONDS_PER_PAGE = 0.034

PRICES_DATE = "2026-11-23"
PRICES = {
    "lambda_gb_second": 0.0000166667,  # x86, first 6 billion GB-s per month
    "lambda_request": 0.20 / 1e6,
    "sagemaker_ml_g5_xlarge_hour": 1.408,  # SageMaker inference (real-time and asynchronous), on demand
    "s3_put": 0.005 / 1000,
    "s3_get": 0.0004 / 1000,
    "sqs_request": 0.40 / 1e6,
    "dynamodb_write": 0.625 / 1e6,  # on-demand write request unit
    "dynamodb_read": 0.125 / 1e6,  # on-demand read request unit (strongly consistent: 1 per 4 KB)
    "textract_detect_document_text_page": 1.50 / 1000,  # first million pages a month
    "textract_analyze_document_tables_page": 15.0 / 1000,
    "textract_analyze_document_forms_page": 50.0 / 1000,
    "textract_analyze_document_forms_tables_page": 65.0 / 1000,
    "textract_analyze_document_layout_page": 4.0 / 1000,
}


@dataclass(frozen=True)
class CpuRoute:
    """The CPU route at one configuration."""

    memory_mb: int = defaults.PROCESSOR_MEMORY_MB
    pages_per_chunk: int = defaults.CPU_PAGES_PER_CHUNK
    #: Born-digital pages read from their text layer (``text_layer: auto``), not dense scans.
    born_digital: bool = False
    #: A dense page's and a cold start's cost as a share of PP-OCRv5's (1.0: PP-OCRv5 itself).
    page_share: float = 1.0
    cold_share: float = 1.0
    #: Processor invocations running at once: the stage's admission limit (``ocr_platform.jobs.admission``).
    slots: int = defaults.PROCESSOR_MAX_CONCURRENCY
    #: Every page's forms read too (``features: ["forms"]``).
    forms: bool = False

    @property
    def page_seconds(self) -> float:
        seconds = defaults.dense_page_seconds(defaults.lambda_vcpus(self.memory_mb)) * self.page_share
        seconds = seconds * BORN_DIGITAL_PAGE_SHARE if self.born_digital else seconds
        return seconds + (FORMS_SECONDS_PER_PAGE if self.forms else 0.0)

    @property
    def cold_start_seconds(self) -> float:
        return COLD_START_SECONDS * self.cold_share

    @property
    def chunk_pages(self) -> int:
        """Pages in a full chunk: the planner prices a page with a text layer at ``defaults.TEXT_LAYER_PAGE_COST``."""
        if not self.born_digital:
            return self.pages_per_chunk
        return min(int(self.pages_per_chunk / defaults.TEXT_LAYER_PAGE_COST), self.pages_per_chunk * defaults.WORST_PAGE_FACTOR)

    def chunks(self, pages: int) -> int:
        return 1 if pages <= self.chunk_pages else math.ceil(pages / self.chunk_pages)

    def latency_seconds(self, pages: int, *, cold: bool) -> float:
        """Seconds from the message on the queue to ``COMPLETED`` for a document of dense pages."""
        start = self.cold_start_seconds if cold else 0.0
        chunks = self.chunks(pages)
        if chunks == 1:
            return DISPATCH_SECONDS + start + OPEN_SECONDS + pages * self.page_seconds
        first = start + OPEN_SECONDS + chunks * LAUNCH_SECONDS
        longest_chunk = start + OPEN_SECONDS + self.chunk_pages * self.page_seconds
        rounds = math.ceil(chunks / self.slots)  # the admission limit: at most `slots` chunks run at a time
        return DISPATCH_SECONDS + first + rounds * longest_chunk + chunks * defaults.MERGE_SECONDS_PER_CHUNK

    def cost_per_1000_pages(self, pages_per_document: int) -> dict[str, float]:
        """Dollars for 1,000 dense pages arriving as documents of ``pages_per_document`` pages, warm."""
        documents = 1000 / pages_per_document
        chunks = self.chunks(pages_per_document)
        split = chunks > 1
        invocations = documents * (1 + chunks if split else 1)
        seconds = 1000 * self.page_seconds + invocations * OPEN_SECONDS + documents * chunks * defaults.MERGE_SECONDS_PER_CHUNK * split
        gb = self.memory_mb / 1024
        lambda_cost = seconds * gb * PRICES["lambda_gb_second"] + invocations * PRICES["lambda_request"]
        # Per job: the invoker (about 0.2 s at 256 MB) and its request.
        lambda_cost += documents * (0.2 * 0.25 * PRICES["lambda_gb_second"] + PRICES["lambda_request"])
        s3 = documents * (3 * PRICES["s3_put"] + PRICES["s3_get"])  # upload, result.json, raw.json; the input read
        s3 += documents * chunks * split * (2 * PRICES["s3_put"] + (1 + 2) * PRICES["s3_get"])  # chunk results, merge
        sqs = documents * 3 * PRICES["sqs_request"]  # send, receive, delete
        # Writes: create, dispatch claim, dispatched, run claim, page count, one per page, completion; per
        # chunk a claim and its done mark. Reads: a few consistent GetItems per invocation.
        writes = documents * 6 + 1000 + documents * chunks * 2 * split
        dynamodb = writes * PRICES["dynamodb_write"] + invocations * 2 * PRICES["dynamodb_read"]
        return {"lambda": lambda_cost, "s3": s3, "sqs": sqs, "dynamodb": dynamodb}


@dataclass(frozen=True)
class GpuRoute:
    """The GPU route at one configuration (``vl_seconds_per_page`` is assumed, not measured)."""

    vl_seconds_per_page: float = defaults.VL_PAGE_SECONDS
    pages_per_chunk: int = defaults.GPU_PAGES_PER_CHUNK
    slots: int = defaults.MAX_INSTANCE_COUNT * defaults.MAX_CONCURRENT_INVOCATIONS_PER_INSTANCE

    def chunks(self, pages: int) -> int:
        return 1 if pages <= self.pages_per_chunk else math.ceil(pages / self.pages_per_chunk)

    def latency_seconds(self, pages: int, *, from_zero: bool) -> float:
        """Seconds from the message on the queue to ``COMPLETED`` for a document of dense pages."""
        start = DISPATCH_SECONDS + (GPU_SCALE_FROM_ZERO_SECONDS if from_zero else 0.0)
        chunks = self.chunks(pages)
        if chunks == 1:
            return start + ENDPOINT_OPEN_SECONDS + pages * self.vl_seconds_per_page + NOTIFICATION_SECONDS
        plan = ENDPOINT_OPEN_SECONDS + NOTIFICATION_SECONDS + chunks * LAUNCH_SECONDS
        rounds = math.ceil(chunks / self.slots)
        work = rounds * (ENDPOINT_OPEN_SECONDS + self.pages_per_chunk * self.vl_seconds_per_page)
        return start + plan + work + NOTIFICATION_SECONDS + chunks * defaults.MERGE_SECONDS_PER_CHUNK


def gpu_cost_per_1000_pages(vl_seconds_per_page: float, pages_per_document: int, *, from_zero: bool) -> dict[str, float]:
    """Dollars for 1,000 pages on one ml.g5.xlarge: the pages' instance time plus, when the endpoint starts
    from zero for this batch, the scale-out wait and the idle minutes before it scales in again (both billed)."""
    seconds = 1000 * vl_seconds_per_page
    if from_zero:
        seconds += GPU_SCALE_FROM_ZERO_SECONDS + defaults.IDLE_MINUTES * 60
    documents = 1000 / pages_per_document
    instance = seconds / 3600 * PRICES["sagemaker_ml_g5_xlarge_hour"]
    rest = documents * (4 * PRICES["s3_put"] + 3 * PRICES["s3_get"] + 3 * PRICES["sqs_request"] + 6 * PRICES["dynamodb_write"])
    rest += documents * 3 * PRICES["lambda_request"]  # invoker, completion, scale-in check
    return {"sagemaker": instance, "other": rest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-mb", type=int, default=defaults.PROCESSOR_MEMORY_MB)
    parser.add_argument("--pages-per-chunk", type=int, default=defaults.CPU_PAGES_PER_CHUNK)
    parser.add_argument("--pages", type=int, nargs="+", default=[1, 10, 100, 500, 2000])
    parser.add_argument("--gpu-pages-per-chunk", type=int, default=defaults.GPU_PAGES_PER_CHUNK)
    parser.add_argument("--vl-seconds-per-page", type=float, default=defaults.VL_PAGE_SECONDS,
                        help="PaddleOCR-VL on the GPU (assumed: not measured here)")
    args = parser.parse_args()
    route = CpuRoute(args.memory_mb, args.pages_per_chunk)
    vcpus = defaults.lambda_vcpus(args.memory_mb)
    v6 = CpuRoute(args.memory_mb, args.pages_per_chunk, page_share=PPOCRV6_TINY_PAGE_SHARE, cold_share=PPOCRV6_TINY_COLD_SHARE)
    for name, cpu in (("PP-OCRv5", route), ("PP-OCRv6 tiny on faster-paddle", v6)):
        print(f"CPU route, {name}, at {args.memory_mb} MB ({vcpus:.2f} vCPU): {cpu.page_seconds:.2f} s per dense page, "
              f"chunks of {args.pages_per_chunk} pages, {cpu.slots} at a time (the admission limit); cold start {cpu.cold_start_seconds:.1f} s")
        print()
        print("| dense pages | chunks | end to end, warm | end to end, every invocation cold | one invocation, no fan-out |")
        print("| --- | --- | --- | --- | --- |")
        for pages in args.pages:
            single = CpuRoute(args.memory_mb, pages, page_share=cpu.page_share, cold_share=cpu.cold_share).latency_seconds(pages, cold=True)
            over = " (over the 900 s timeout)" if single > defaults.PROCESSOR_TIMEOUT_SECONDS else ""
            print(f"| {pages} | {cpu.chunks(pages)} | {cpu.latency_seconds(pages, cold=False):.1f} s | "
                  f"{cpu.latency_seconds(pages, cold=True):.1f} s | {single:.0f} s{over} |")
        print()
    born = CpuRoute(args.memory_mb, args.pages_per_chunk, born_digital=True)
    print(f"Born-digital pages with text_layer: auto ({born.page_seconds:.3f} s a page, chunks of up to {born.chunk_pages} pages):")
    print()
    print("| born-digital pages | chunks | end to end, warm | end to end, every invocation cold |")
    print("| --- | --- | --- | --- |")
    for pages in args.pages:
        print(f"| {pages} | {born.chunks(pages)} | {born.latency_seconds(pages, cold=False):.1f} s | {born.latency_seconds(pages, cold=True):.1f} s |")
    print()
    print(f"GPU route (PaddleOCR-VL, {args.vl_seconds_per_page:g} s per page assumed), chunks of {args.gpu_pages_per_chunk} "
          f"pages; scale-out from zero {GPU_SCALE_FROM_ZERO_SECONDS} s")
    print()
    print("| pages | chunks | 1 slot (native, 1 instance), warm | 4 slots (vllm, 1 instance), warm | 4 slots, from zero | one request, no fan-out, warm |")
    print("| --- | --- | --- | --- | --- | --- |")
    native, vllm = GpuRoute(args.vl_seconds_per_page, args.gpu_pages_per_chunk, 1), GpuRoute(args.vl_seconds_per_page, args.gpu_pages_per_chunk, 4)
    for pages in args.pages:
        single = GpuRoute(args.vl_seconds_per_page, pages, 1).latency_seconds(pages, from_zero=False)
        over = " (over the 3600 s invocation timeout)" if single > defaults.INVOCATION_TIMEOUT_SECONDS else ""
        print(f"| {pages} | {native.chunks(pages)} | {native.latency_seconds(pages, from_zero=False):.1f} s | "
              f"{vllm.latency_seconds(pages, from_zero=False):.1f} s | {vllm.latency_seconds(pages, from_zero=True):.1f} s | "
              f"{single:.0f} s{over} |")
    print()
    print(f"Cost per 1,000 dense pages, list prices us-east-1 ({PRICES_DATE}):")
    print()
    print("| route | documents of | compute | S3, SQS, DynamoDB, other | total |")
    print("| --- | --- | --- | --- | --- |")
    for name, cpu in (("PP-OCRv5", route), ("PP-OCRv6 tiny on faster-paddle", v6)):
        for size in (1, 10, 100):
            parts = cpu.cost_per_1000_pages(size)
            rest = parts["s3"] + parts["sqs"] + parts["dynamodb"]
            documents = f"{size} page{'s' if size > 1 else ''}"
            print(f"| CPU ({name}, Lambda {args.memory_mb} MB) | {documents} | ${parts['lambda']:.3f} | ${rest:.3f} | "
                  f"${parts['lambda'] + rest:.3f} |")
    forms = CpuRoute(args.memory_mb, args.pages_per_chunk, forms=True)
    for size in (1, 10):
        parts, plain = forms.cost_per_1000_pages(size), route.cost_per_1000_pages(size)
        rest = parts["s3"] + parts["sqs"] + parts["dynamodb"]
        print(f"| CPU (PP-OCRv5) with forms, `features: [\"forms\"]` (Lambda {args.memory_mb} MB) | {size} page{'s' if size > 1 else ''} | "
              f"${parts['lambda']:.3f} (forms ${parts['lambda'] - plain['lambda']:.3f}) | ${rest:.3f} | ${parts['lambda'] + rest:.3f} |")
    for size in (1, 10, 100):
        parts = born.cost_per_1000_pages(size)
        rest = parts["s3"] + parts["sqs"] + parts["dynamodb"]
        print(f"| CPU, born-digital pages, text_layer auto (Lambda {args.memory_mb} MB) | {size} page{'s' if size > 1 else ''} | "
              f"${parts['lambda']:.3f} | ${rest:.3f} | ${parts['lambda'] + rest:.3f} |")
    for from_zero, label in ((False, "endpoint already up"), (True, "endpoint starts from zero, idles 10 min")):
        parts = gpu_cost_per_1000_pages(args.vl_seconds_per_page, 10, from_zero=from_zero)
        print(f"| GPU (PaddleOCR-VL, ml.g5.xlarge, {args.vl_seconds_per_page:g} s/page assumed), {label} | 10 pages | "
              f"${parts['sagemaker']:.3f} | ${parts['other']:.3f} | ${sum(parts.values()):.3f} |")
    for name, key in (("DetectDocumentText", "textract_detect_document_text_page"),
                      ("AnalyzeDocument, layout", "textract_analyze_document_layout_page"),
                      ("AnalyzeDocument, tables", "textract_analyze_document_tables_page"),
                      ("AnalyzeDocument, forms", "textract_analyze_document_forms_page"),
                      ("AnalyzeDocument, tables + forms", "textract_analyze_document_forms_tables_page")):
        print(f"| Amazon Textract {name} | any | ${1000 * PRICES[key]:.2f} | | ${1000 * PRICES[key]:.2f} |")


if __name__ == "__main__":
    main()
