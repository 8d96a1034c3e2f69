"""The platform's plain defaults, each written once; ``ocr_platform.core.defaults`` re-exports them.

Constants only, grouped by the part of the stack they configure, each with the reason for its value. The
functions computing limits from them live in ``ocr_platform.core.limits``; both are read as
``ocr_platform.core.defaults.NAME`` (that module says who reads what). Plain Python without AWS or CDK imports:
the zip Lambdas import it as well as the CDK app.
"""

from __future__ import annotations

from ocr_platform.core.routing import MODEL_TABLE

# ----- stage and models ---------------------------------------------------------------------------

STAGE = "dev"
MODELS: tuple[str, ...] = tuple(MODEL_TABLE)
#: Fail closed: a layout model whose pipeline cannot be built fails ``engine_unavailable``.
ENGINE_FALLBACK = False
#: A job's ``language`` when it names none: PaddleOCR's code for English, read by the multilingual PP-OCRv5
#: recogniser (Chinese, English, Japanese). Not ``auto``: docs/using-it/languages.md has the measurements.
LANGUAGE = "en"

# ----- SageMaker async endpoint (PaddleOCR-VL) ----------------------------------------------------

INSTANCE_TYPE = "ml.g5.xlarge"
VARIANT_NAME = "AllTraffic"
MAX_INSTANCE_COUNT = 1
#: The default ``native`` backend runs one prediction at a time (see ``VL_BACKEND_MAX_CONCURRENCY``).
MAX_CONCURRENT_INVOCATIONS_PER_INSTANCE = 1
#: InvokeEndpointAsync's ``InvocationTimeoutSeconds``; 3600 is SageMaker's maximum.
INVOCATION_TIMEOUT_SECONDS = 3600
#: InvokeEndpointAsync's ``RequestTTLSeconds``: how long a request may wait in SageMaker's queue before it
#: expires (with an error notification). SageMaker's own default and maximum, 6 h; sent explicitly so the
#: sweeper's GPU deadline can count it.
REQUEST_TTL_SECONDS = 21_600
INFLIGHT_MARGIN_SECONDS = 300
IDLE_MINUTES = 10
IDLE_BACKLOG_THRESHOLD = 0.1
ENDPOINT_BASE_IMAGE = ""
#: The endpoint host: driver 580 / CUDA 13.0 (``ocr_infra.gpu_host``), which runs the image's CUDA 12.9; without an
#: AMI version an ``ml.g5`` host runs driver 470 / CUDA 11.4, and ``-gpu-3-1`` runs CUDA 12.4 at most.
ENDPOINT_AMI_VERSION = "al2023-ami-sagemaker-inference-gpu-4-1"
#: The CUDA the endpoint image is built for: ``ARG CUDA_VERSION`` of containers/vl-endpoint/Dockerfile.
ENDPOINT_IMAGE_CUDA = "12.9"
#: ContainerStartupHealthCheckTimeoutInSeconds (60..3600): how long a new instance's container may take to answer
#: ``/ping`` 200. A cold start loads PaddleOCR-VL's layout model and 0.9B VLM from the image onto the GPU (about
#: 1-3 minutes); 20 minutes leaves room for a slow volume and the vLLM backend's server start.
ENDPOINT_STARTUP_TIMEOUT_SECONDS = 1200
ENDPOINT_BAKE_MODELS = ""
ENDPOINT_VL_BACKEND = "native"
#: The PaddleOCR-VL pipeline versions of the pinned paddleocr (``PaddleOCRVL(pipeline_version=...)``) and
#: the layout model and VLM each one runs, as PaddleX's ``PaddleOCR-VL*.yaml`` pipeline configs name them
#: (tests/ocr/test_layout_engines.py checks this table against the installed package). The endpoint image
#: bakes the chosen version's two models.
VL_VERSION_MODELS: dict[str, tuple[str, str]] = {
    "v1": ("PP-DocLayoutV2", "PaddleOCR-VL-0.9B"),
    "v1.5": ("PP-DocLayoutV3", "PaddleOCR-VL-1.5-0.9B"),
    "v1.6": ("PP-DocLayoutV3", "PaddleOCR-VL-1.6-0.9B"),
}
#: The newest version PaddleOCR 3.7 ships (also its own default).
ENDPOINT_VL_VERSION = "v1.6"
#: How many requests each VL backend really works on at once in one instance. ``native`` (PaddleOCR's
#: in-process VLM) serializes its predictions with a lock, so a second request admitted to the container
#: would only wait there with SageMaker's invocation timeout already running; ``vllm`` batches concurrent
#: requests in its generation server. ``max_concurrent_invocations_per_instance`` may not exceed it: the
#: requests beyond it wait in SageMaker's own queue, where the timeout has not started.
VL_BACKEND_MAX_CONCURRENCY: dict[str, int] = {"native": 1, "vllm": 4}

# ----- CPU processor Lambda (container image) -----------------------------------------------------

#: The most memory a new account's Lambda quota allows.
PROCESSOR_MEMORY_MB = 3008
PROCESSOR_EPHEMERAL_STORAGE_MB = 10240
#: Lambda's maximum.
PROCESSOR_TIMEOUT_SECONDS = 900
PROCESSOR_RETRY_ATTEMPTS = 0
#: Lambda's maximum age of an event in its async queue.
PROCESSOR_MAX_EVENT_AGE_HOURS = 6
PROCESSOR_BAKE_MODELS = ""

# ----- admission control: how much of the account's Lambda concurrency the platform may take --------------

#: How the processor's concurrency is bounded. ``dispatcher`` (every account): the invoker and the chunk
#: launcher take a slot of the stage's processor semaphore (``ocr_platform.jobs.admission``) before each
#: invocation; work without a slot waits in the job queue. ``reserved``: the function's reserved concurrency
#: is set to ``PROCESSOR_MAX_CONCURRENCY`` and Lambda's async queue holds what is throttled; only where the
#: account's unreserved concurrency stays at least ``MIN_UNRESERVED_CONCURRENCY`` (``ocr-platform doctor``).
PROCESSOR_CONCURRENCY_MODE = "dispatcher"
PROCESSOR_CONCURRENCY_MODES: tuple[str, ...] = ("dispatcher", "reserved")
#: Processor invocations (whole jobs and chunks) running at once in a stage: 20 x 6 pages / 13.6 s = about
#: 530 dense pages a minute at 3,008 MB (:func:`processor_pages_per_minute`).
PROCESSOR_MAX_CONCURRENCY = 20
#: The invoker's SQS event source runs at most this many invokers at once (its ``MaximumConcurrency``, 2..1000);
#: one hand-over takes well under a second, so 5 invokers hand over far more jobs than the processor runs.
INVOKER_MAX_CONCURRENCY = 5
#: The webhook deliverer's SQS event source, likewise (each invocation POSTs up to 10 webhooks in turn).
WEBHOOK_DELIVERER_MAX_CONCURRENCY = 5
#: The DLQ consumer's SQS event source: the smallest ``MaximumConcurrency`` SQS allows.
DLQ_CONSUMER_MAX_CONCURRENCY = 2
#: Lambda refuses a reserved concurrency that would leave the account fewer unreserved executions than this
#: (AWS Lambda API reference, PutFunctionConcurrency: "leave at least 100 simultaneous executions unreserved").
MIN_UNRESERVED_CONCURRENCY = 100
#: A job that finds every processor slot taken goes back to the queue for this long (plus jitter) before
#: the invoker tries it again; a new message each time, so waiting never counts towards the DLQ.
ADMISSION_RETRY_SECONDS = 20
#: A slot is the work item's until it ends (released by the processor, or by the completion function when
#: the processor crashed) or until its lease runs out: the processor's timeout plus this margin.
ADMISSION_LEASE_MARGIN_SECONDS = 120

# ----- page fan-out and the per-page cost it is derived from ----------------------------------------

#: Seconds one dense page costs PP-OCRv5 mobile on ONNX Runtime with one intra-op thread: A4 pages of a
#: two-column medical guideline (58-112 lines, about 4,000 characters each) rendered at scale 2, measured on
#: the 2-core development machine with two such workers running at once (``benchmarks/fan_out.py``).
DENSE_PAGE_SECONDS_ONE_VCPU = 3.2
#: The same pages with two intra-op threads in one worker: 2.06 s/page. Amdahl's law through the two
#: measurements gives the part of a page's work that does not run in parallel: 3.2 x (s + (1 - s) / 2) =
#: 2.06, so s = 0.29 (see :func:`dense_page_seconds`).
DENSE_PAGE_SECONDS_TWO_VCPUS = 2.06
#: A page may cost this many times a dense one before a chunk is at risk: the timeout check at synth
#: (:func:`worst_chunk_seconds`) prices every page at it. Measured pages range 0.3-2.1 s here; 3x leaves
#: room for pages denser than the guideline and for a slower host.
WORST_PAGE_FACTOR = 3
#: Lambda gives a function one vCPU per 1,769 MB of memory (6 vCPUs at 10,240 MB).
LAMBDA_MB_PER_VCPU = 1769
#: Seconds a chunk spends outside its pages, priced high: a cold start that loads the models (about 5 s in the
#: image) and the download of the largest document admitted (200 MiB).
CHUNK_OVERHEAD_SECONDS = 30
#: What the merge costs per chunk, priced high: two GETs and the JSON of 6 dense pages (deletes go 1,000 keys a call).
MERGE_SECONDS_PER_CHUNK = 0.2
#: The CPU route splits a job of more pages than this into chunks of at most this many, one processor
#: invocation each. 6 dense pages take 6 x 2.26 s = 13.6 s at the default 3,008 MB, so a 100-page document
#: (17 chunks at once) ends in 28 s even when every invocation starts cold, 19 s warm
#: (``benchmarks/aws_model.py``; 8 pages would take 31.6 s cold). Smaller chunks gain less each time and
#: cost one more invocation, cold start and merge step per chunk.
CPU_PAGES_PER_CHUNK = 6
#: What a PDF page with a text layer costs the CPU route with ``text_layer: auto``, in dense OCR pages: the
#: chunk planner's price for it (``chunks.plan_chunks``). Measured (``benchmarks/text_layers.py``, README
#: "PDF text layers") at 0.067 s against 2.48 s a page on dense born-digital pages, 0.027; priced at 0.1 for
#: pages whose figures still need OCR.
TEXT_LAYER_PAGE_COST = 0.1
#: The most pages one job may read, on either route. Chunks keep each invocation and each request short, so
#: the limit is no longer a timeout: 2,000 pages are 334 CPU chunks or 200 GPU chunks; the merge reads their
#: partial results (about 32 MB of dense pages).
MAX_PAGES = 2000
#: Seconds PaddleOCR-VL takes per dense page on the endpoint's GPU. Not measured: the development machine has
#: no GPU and cannot download the VL weights. An assumed figure, the input of the GPU route's limits below
#: and of ``benchmarks/aws_model.py``'s GPU rows; replace it with a measurement on the instance type used.
VL_PAGE_SECONDS = 2.0
#: Seconds one endpoint request spends outside its pages, priced high: the download of the largest document
#: admitted (200 MiB) and its opening, on a warm instance.
ENDPOINT_REQUEST_OVERHEAD_SECONDS = 30
#: The GPU route splits a job of more pages than this into chunks of at most this many, one async request
#: each. A chunk is 10 x 2 s = 20 s of GPU work, so its fixed cost (the download and opening, under a second
#: warm) stays near 2 %, and a 40-page document already fills the 4 slots of a ``vllm`` instance. Every
#: request stays far inside the invocation timeout (:func:`worst_endpoint_request_seconds`: 90 s of 3600 s).
GPU_PAGES_PER_CHUNK = 10

# ----- zip Lambdas --------------------------------------------------------------------------------

INVOKER_MEMORY_MB = 256
INVOKER_TIMEOUT_SECONDS = 60
INVOKER_BATCH_SIZE = 1
#: Enough for the largest endpoint output it admits (:func:`completion_memory_floor_mb`: 446 MB).
COMPLETION_MEMORY_MB = 512
#: The largest endpoint output (``result.json`` of a SageMaker job) the completion function reads. A dense
#: 1,000-page result measures about 16 MB, so 50 MB is three times the largest document ``max_pages`` admits.
MAX_ENDPOINT_OUTPUT_BYTES = 50 * 1024 * 1024
#: Memory a warm zip function holds before its work: Python, boto3, Powertools.
COMPLETION_BASELINE_MB = 96
#: Bytes the completion function holds per output byte at its peak: the body read from S3, its decoded
#: text, the parsed document, the validated copy and the serialized ``result.json``. Measured 6.0x above the
#: body for 3 MB and 16 MB outputs (``tests/unit/test_completion_memory.py`` keeps it honest), rounded up.
OUTPUT_MEMORY_FACTOR = 7
COMPLETION_TIMEOUT_SECONDS = 300
SCALE_IN_MEMORY_MB = 128
SCALE_IN_TIMEOUT_SECONDS = 30
#: It archives one small object and updates one item per record.
DLQ_CONSUMER_MEMORY_MB = 256
DLQ_CONSUMER_TIMEOUT_SECONDS = 60
#: It may settle a GPU job from its output in S3, as the completion function would: the same memory.
SWEEPER_MEMORY_MB = COMPLETION_MEMORY_MB
SWEEPER_TIMEOUT_SECONDS = 300
#: Lambda's retries of a failed asynchronous invocation of the functions SNS invokes (completion,
#: scale-in) before their event is parked; the sweeper's schedule retries none (the next run sweeps again).
ASYNC_RETRY_ATTEMPTS = 2
#: The largest document intake reads, and so the largest upload the jobs API's presigned POST admits.
MAX_DOCUMENT_BYTES = 200 * 1024 * 1024
#: The largest answer of the network-isolated endpoint the functions that finish GPU jobs admit: result.json, the
#: page images and a result.pdf about the document's size (a ZIP, ``ocr_platform.gpu.endpoint_payloads``).
MAX_ENDPOINT_ANSWER_BYTES = MAX_ENDPOINT_OUTPUT_BYTES + 2 * MAX_DOCUMENT_BYTES
#: Office (DOCX, PPTX, XLSX) and HTML inputs (ocr_platform.document.office, .html_input, .zip_safety). An Office file
#: is a ZIP, refused (``archive_too_large``) when its parts would unpack to more than ``MAX_UNPACKED_BYTES``; its XML
#: parts to more than ``MAX_UNPACKED_XML_BYTES`` (python-docx and openpyxl hold them as trees: a 14 MB sheet took
#: 366 MB and 10 s, so 64 MiB stays under 2 GB of the processor's 3 GB); when one part of over 1 MiB is compressed
#: more than ``MAX_ZIP_RATIO`` to 1 (a sheet of 200,000 rows of zeros is 15 to 1); or when it has more than
#: ``MAX_ZIP_ENTRIES`` parts. An HTML file larger than ``MAX_HTML_BYTES`` is refused (``document_too_large``):
#: reading a 4 MiB page took 180 MB at its peak (45 times its size) and 8.6 s on 2 busy cores. At most
#: ``MAX_EMBEDDED_PICTURES`` pictures of one file are read by OCR (the rest are left out of the text, and a
#: ``pictures_unread`` warning says so).
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
MAX_UNPACKED_XML_BYTES = 64 * 1024 * 1024
MAX_ZIP_RATIO = 200
MAX_ZIP_ENTRIES = 10_000
MAX_HTML_BYTES = 10 * 1024 * 1024
MAX_EMBEDDED_PICTURES = 200
#: The work budget of one Office or HTML file (``ocr_platform.document.work_budget``), counted from what the file
#: declares before any reader runs; a file over it fails ``document_too_large`` naming the limit. Measured on 2 cores
#: (paddleocr 3.7's converter, openpyxl 3.1): a 100,000-cell sheet took 2.8 s and 56 MB, so ``OFFICE_CELL_BYTES``
#: (about 560 B, rounded up) and ``OFFICE_CELL_MICROSECONDS`` (28 us) per cell, a merged or spanned cell counted
#: as the cells it covers (``defaults.max_office_cells`` derives the budget from the processor's memory).
#: Sheets and slides, hidden ones included, are read one part each, a shared part again for each use.
OFFICE_CELL_BYTES = 600
OFFICE_CELL_MICROSECONDS = 28
#: A DOCX paragraph: 2,000 took the converter 15.6 s and 6,000 took 48 s (8 ms each, whatever their length).
OFFICE_PARAGRAPH_MILLISECONDS = 8
#: How long reading one Office file's content may take (before its pictures' OCR): an eighth of the processor's
#: 900 s timeout, so a file within its budget always leaves the time its pages need.
OFFICE_READ_SECONDS = 112
#: The share of the processor's memory one document's tables may take (the rest: the runtime, the models, pictures).
OFFICE_MEMORY_SHARE_PERCENT = 33
MAX_OFFICE_UNITS = 1_000
#: Any one part of an Office file, whatever its name or type, may unpack to at most this; the XML its readers parse,
#: a shared part counted each time it is used, as much. The readers hold a part as a tree: a 42 MB sheet of a
#: million cells took 488 MB and 21.7 s (12 bytes per byte), so 64 MiB is about 800 MB of the processor's 3008.
MAX_PART_BYTES = 64 * 1024 * 1024
MAX_PARSED_XML_BYTES = 64 * 1024 * 1024
#: HTML elements (Beautiful Soup holds each as an object; markdownify walks each): 290,000 table cells took 13.3 s
#: and 327 MB (46 us and 1.1 KB each); their nesting stays well inside Python's recursion limit (markdownify recurses).
MAX_HTML_NODES = 300_000
MAX_HTML_DEPTH = 256
#: The pixels of all pictures one Office or HTML file embeds, as their headers declare them: each is decoded (shrunk
#: to the page budget as it is) and read by OCR; one of 79.2 million pixels took 2.0 to 2.6 s and about 490 MB above the engine's.
MAX_PICTURE_PIXELS = 150_000_000
#: A PDF page's drawing instructions, unpacked (``ocr_platform.document.pdf_budget``): a page of a million small
#: rectangles (13 MB of them) took pdfium 398 MB, about 30 bytes of memory per byte (``defaults.max_page_content_bytes``).
PDF_CONTENT_MEMORY_FACTOR = 30
#: pdfminer.six's second reading of a PDF page whose text pdfium leaves out (``document.layer_reread``), in pure
#: Python: a page drawing 790 KB of text unpacked took it 7.9 s and 785 MB (about 100,000 bytes a second and 1 KB
#: of memory per byte), where the public pages it is for draw at most 64 KB (``defaults.max_reread_content_bytes``).
PDF_REREAD_SECONDS = 3
PDF_REREAD_BYTES_PER_SECOND = 100_000
#: ``PlatformConfig.work_budget``: no limit of the work budget raised or lowered (``NAME=VALUE`` items).
WORK_BUDGET: tuple[str, ...] = ()

#: How long a jobs API upload form (presigned POST) and a result link (presigned GET) stay valid.
UPLOAD_URL_SECONDS = 900
RESULT_URL_SECONDS = 300
API_MEMORY_MB = 256
API_TIMEOUT_SECONDS = 10
#: The jobs API's default stage: requests per second, and the burst, across all callers.
API_THROTTLE_RATE = 50
API_THROTTLE_BURST = 100
#: Browser origins the jobs API answers cross-origin requests from: none until a console is deployed.
CONSOLE_ORIGINS: tuple[str, ...] = ()
#: It copies one object and writes one item and one message per event.
INGEST_MEMORY_MB = 256
INGEST_TIMEOUT_SECONDS = 60
POWERTOOLS_LAYER_VERSION = 27

# ----- queue, data and operations -----------------------------------------------------------------

#: AWS's guidance for a queue that triggers a Lambda: at least 5, because a throttled poll counts as a
#: receive; with fewer, valid jobs are dead-lettered while processors hold the account's concurrency.
MIN_MAX_RECEIVE_COUNT = 5
MAX_RECEIVE_COUNT = MIN_MAX_RECEIVE_COUNT
#: AWS's guidance for a queue that triggers a Lambda: a visibility timeout of at least 6 x its timeout.
MIN_VISIBILITY_TIMEOUT_FACTOR = 6
VISIBILITY_TIMEOUT_FACTOR = MIN_VISIBILITY_TIMEOUT_FACTOR
QUEUE_RETENTION_DAYS = 4
#: SQS's maximum: a message the DLQ consumer cannot handle waits there for an operator.
DLQ_RETENTION_DAYS = 14
#: 0 would keep job items forever.
JOB_TTL_DAYS = 30
#: A job whose pages fail (a page that cannot be rendered or decoded, an engine error on that page) still
#: completes with the pages that were read, up to this share of its selected pages, in percent; past it the
#: job fails naming the pages. A quarter: one bad page in four is still a document worth returning (a
#: scanned appendix, a damaged insert), while a document that loses more than a quarter is more likely broken
#: as a whole (a damaged file, an engine that cannot read its pages), and a result missing that much misleads
#: more than it helps. A one-page job whose page fails still fails (100%). 0 fails a job on any bad page, as
#: before; 100 completes it as long as one page was read.
MAX_FAILED_PAGE_PERCENT = 25
ASYNC_IO_EXPIRY_DAYS = 7
ACCESS_LOG_RETENTION_DAYS = 90
LOG_RETENTION_DAYS = 30
RETAIN_DATA = True
#: Both buckets keep an overwritten or deleted object's previous version for ``ASYNC_IO_EXPIRY_DAYS``.
VERSIONED_BUCKET = True
#: No KMS key of the stage's own: AWS's keys encrypt everything at rest ($1 a month plus requests with one).
CUSTOMER_MANAGED_KEY = False
#: No VPC: the functions call only AWS APIs (VPC endpoints for one cost $43.80 to $87.60 a month).
VPC = False
#: No e-mail subscription to the operations topic.
ALARM_EMAIL = ""
SWEEPER_INTERVAL_MINUTES = 15
FAILED_JOB_RATE_PERCENT = 25
FAILED_JOB_RATE_MIN_JOBS = 10

# ----- completion events, webhooks and URL input --------------------------------------------------

#: The EventBridge bus that receives the completion events: the account's default bus.
EVENT_BUS_NAME = "default"
#: A webhook delivery that failed is tried again after 30 s, then after twice as long each time, up to
#: one hour between attempts, for at least 24 hours (``webhook_delivery_attempts`` counts the attempts).
WEBHOOK_FIRST_RETRY_SECONDS = 30
WEBHOOK_MAX_RETRY_INTERVAL_SECONDS = 3600
WEBHOOK_RETRY_WINDOW_SECONDS = 24 * 3600
#: One POST to a receiver: connect, send and answer within 10 s, or the attempt failed.
WEBHOOK_TIMEOUT_SECONDS = 10
#: It sends at most 10 webhooks per invocation, one after the other, each bounded by the timeout above.
WEBHOOK_BATCH_SIZE = 10
WEBHOOK_DELIVERER_MEMORY_MB = 256
WEBHOOK_DELIVERER_TIMEOUT_SECONDS = WEBHOOK_BATCH_SIZE * WEBHOOK_TIMEOUT_SECONDS + 20
#: The webhook queue keeps a message 4 days: the longest retry window (3 days) and its last wait fit.
WEBHOOK_QUEUE_RETENTION_DAYS = 4
#: A job whose terminal write has not been followed by its event this long after it finished (the writer
#: crashed in between) gets its event and webhook from the sweeper, with the same event id.
NOTIFICATION_GRACE_SECONDS = 120
#: Fetching a document submitted by URL: the whole exchange, redirects included, and at most 5 redirects.
URL_FETCH_TIMEOUT_SECONDS = 30
URL_FETCH_MAX_REDIRECTS = 5
#: What the invoker needs after a fetch: storing the document in S3 and handing the job over.
URL_FETCH_MARGIN_SECONDS = 20
#: A result of at most this many bytes comes inline in the jobs API's answer; a larger one by presigned URL.
INLINE_RESULT_MAX_BYTES = 1024 * 1024


# ----- margins the derived deadlines add ----------------------------------------------------------

#: The redrive of a message to the DLQ, and the DLQ consumer failing its job.
DEAD_LETTER_MARGIN_SECONDS = 600
#: The processor's on-failure destination (the completion function) reporting a crash or an expired event.
FAILURE_DESTINATION_MARGIN_SECONDS = 300
#: A SageMaker success or error notification reaching the completion function.
NOTIFICATION_MARGIN_SECONDS = 600
#: How long after SageMaker wrote a GPU job's output (or error body) the sweeper settles the job from S3
#: itself: the notification has had its chance to finish it.
SETTLE_GRACE_SECONDS = NOTIFICATION_MARGIN_SECONDS
