"""Limits derived from the platform's defaults, each a function whose docstring shows the arithmetic.

Each argument defaults to its default (``ocr_platform.core.default_values``), and ``PlatformConfig`` calls
them with its own fields, so a stage that changes one input gets consistent outputs. Read them as
``ocr_platform.core.defaults.<function>``, which re-exports them beside the values.
"""

from __future__ import annotations

from ocr_platform.core.default_values import (
    ADMISSION_LEASE_MARGIN_SECONDS,
    CHUNK_OVERHEAD_SECONDS,
    COMPLETION_BASELINE_MB,
    CPU_PAGES_PER_CHUNK,
    DEAD_LETTER_MARGIN_SECONDS,
    DENSE_PAGE_SECONDS_ONE_VCPU,
    DENSE_PAGE_SECONDS_TWO_VCPUS,
    DLQ_CONSUMER_MAX_CONCURRENCY,
    DLQ_CONSUMER_TIMEOUT_SECONDS,
    ENDPOINT_REQUEST_OVERHEAD_SECONDS,
    FAILURE_DESTINATION_MARGIN_SECONDS,
    GPU_PAGES_PER_CHUNK,
    INFLIGHT_MARGIN_SECONDS,
    INVOCATION_TIMEOUT_SECONDS,
    INVOKER_MAX_CONCURRENCY,
    INVOKER_TIMEOUT_SECONDS,
    LAMBDA_MB_PER_VCPU,
    MAX_CONCURRENT_INVOCATIONS_PER_INSTANCE,
    MAX_ENDPOINT_ANSWER_BYTES,
    MAX_ENDPOINT_OUTPUT_BYTES,
    MAX_INSTANCE_COUNT,
    MAX_PAGES,
    MERGE_SECONDS_PER_CHUNK,
    MIN_VISIBILITY_TIMEOUT_FACTOR,
    NOTIFICATION_MARGIN_SECONDS,
    OFFICE_CELL_BYTES,
    OFFICE_CELL_MICROSECONDS,
    OFFICE_MEMORY_SHARE_PERCENT,
    OFFICE_PARAGRAPH_MILLISECONDS,
    OFFICE_READ_SECONDS,
    OUTPUT_MEMORY_FACTOR,
    PDF_CONTENT_MEMORY_FACTOR,
    PDF_REREAD_BYTES_PER_SECOND,
    PDF_REREAD_SECONDS,
    PROCESSOR_MAX_CONCURRENCY,
    PROCESSOR_MAX_EVENT_AGE_HOURS,
    PROCESSOR_MEMORY_MB,
    PROCESSOR_TIMEOUT_SECONDS,
    QUEUE_RETENTION_DAYS,
    REQUEST_TTL_SECONDS,
    VISIBILITY_TIMEOUT_FACTOR,
    VL_PAGE_SECONDS,
    WEBHOOK_DELIVERER_MAX_CONCURRENCY,
    WEBHOOK_DELIVERER_TIMEOUT_SECONDS,
    WEBHOOK_FIRST_RETRY_SECONDS,
    WEBHOOK_MAX_RETRY_INTERVAL_SECONDS,
    WEBHOOK_RETRY_WINDOW_SECONDS,
    WORST_PAGE_FACTOR,
)

# ----- storage -------------------------------------------------------------------------------------


def answer_spool_storage_mb(max_answer_bytes: int = MAX_ENDPOINT_ANSWER_BYTES, free_mb: int = 512) -> int:
    """/tmp of the completion function and the sweeper, which spool an endpoint answer there: the largest answer
    beside the 512 MB every function has, rounded up to a multiple of 512 MB (50 + 2 x 200 + 512 = 962 -> 1024).

    >>> answer_spool_storage_mb()
    1024
    """
    need = -(-max_answer_bytes // (1024 * 1024)) + free_mb
    return -(-need // 512) * 512


# ----- the work of one document ---------------------------------------------------------------------


def max_office_cells(
    memory_mb: int = PROCESSOR_MEMORY_MB, share_percent: int = OFFICE_MEMORY_SHARE_PERCENT, cell_bytes: int = OFFICE_CELL_BYTES
) -> int:
    """The cells of all sheets and tables one Office file may hold (``WorkBudget.max_cells``), a merged range or a
    spanned cell counted as every cell it covers: the share of the processor's memory its tables may take, over
    what one cell costs the converter. Reading that many takes about ``office_cells_seconds``.

    >>> max_office_cells()  # 3008 MiB x 33 % / 600 B
    1734764
    """
    return memory_mb * 1024 * 1024 * share_percent // 100 // cell_bytes


def office_cells_seconds(cells: int = max_office_cells(), microseconds: int = OFFICE_CELL_MICROSECONDS) -> float:
    """How long the converter takes to read ``cells`` cells on 2 cores.

    >>> round(office_cells_seconds())  # 1,734,764 cells x 28 us
    49
    """
    return cells * microseconds / 1_000_000


def max_page_content_bytes(
    memory_mb: int = PROCESSOR_MEMORY_MB, share_percent: int = OFFICE_MEMORY_SHARE_PERCENT, factor: int = PDF_CONTENT_MEMORY_FACTOR
) -> int:
    """The unpacked drawing instructions one PDF page may hold: the same share of the processor's memory as an
    Office file's tables, over what pdfium holds per byte of them.

    >>> max_page_content_bytes()  # 3008 MiB x 33 % / 30
    34695282
    """
    return memory_mb * 1024 * 1024 * share_percent // 100 // factor


def max_reread_content_bytes(seconds: int = PDF_REREAD_SECONDS, bytes_per_second: int = PDF_REREAD_BYTES_PER_SECOND) -> int:
    """The unpacked drawing instructions of a PDF page that pdfminer.six reads a second time (``document.layer_reread``);
    a page with more keeps pdfium's reading, so a small file cannot hold the processor for minutes.

    >>> max_reread_content_bytes()  # 3 s x 100,000 bytes a second (about 300 MB at 1 KB a byte)
    300000
    """
    return seconds * bytes_per_second


def max_docx_paragraphs(seconds: int = OFFICE_READ_SECONDS, milliseconds: int = OFFICE_PARAGRAPH_MILLISECONDS) -> int:
    """The paragraphs one DOCX may have (``WorkBudget.max_paragraphs``): the reading time over one paragraph's.

    >>> max_docx_paragraphs()  # 112 s / 8 ms
    14000
    """
    return seconds * 1000 // milliseconds


# ----- queues, concurrency and deadlines -----------------------------------------------------------



def queue_visibility_timeout_seconds(
    invoker_timeout_seconds: int = INVOKER_TIMEOUT_SECONDS, factor: int = VISIBILITY_TIMEOUT_FACTOR
) -> int:
    """The job queue's visibility timeout: ``factor`` x the invoker's timeout.

    A message is not received again while the invocation that holds it may still run or be retried.

    >>> queue_visibility_timeout_seconds()  # 6 x 60 s
    360
    """
    return factor * invoker_timeout_seconds


def dispatch_lease_seconds(
    invoker_timeout_seconds: int = INVOKER_TIMEOUT_SECONDS,
    visibility_timeout_seconds: int = queue_visibility_timeout_seconds(),
) -> int:
    """How long one delivery's claim on a job's hand-over holds (``JobStore.claim_dispatch``).

    Two bounds. The lease must outlast the invocation that took it: a live invoker hands the job over, or
    is ended, within its timeout, so while the lease holds no second delivery may dispatch. And it must run
    out before SQS can deliver the message again after that invoker crashed: a redelivery comes one
    visibility timeout after the receive, and must find the lease expired to recover the job. So
    ``invoker timeout <= lease < visibility timeout``, and the lease is the invoker's timeout.

    >>> dispatch_lease_seconds()  # the invoker's 60 s (the visibility timeout is 6 x 60 s = 360 s)
    60
    >>> dispatch_lease_seconds(60, 60)
    Traceback (most recent call last):
    ...
    ValueError: the dispatch lease (the invoker's timeout, 60 s) must be shorter than the queue's visibility timeout (60 s)
    """
    if invoker_timeout_seconds >= visibility_timeout_seconds:
        raise ValueError(
            f"the dispatch lease (the invoker's timeout, {invoker_timeout_seconds} s) must be shorter than the "
            f"queue's visibility timeout ({visibility_timeout_seconds} s)"
        )
    return invoker_timeout_seconds


def lambda_vcpus(memory_mb: int = PROCESSOR_MEMORY_MB) -> float:
    """The vCPUs Lambda gives a function of ``memory_mb``: one per ``LAMBDA_MB_PER_VCPU``.

    >>> round(lambda_vcpus(), 2)  # 3008 MB
    1.7
    """
    return memory_mb / LAMBDA_MB_PER_VCPU


def processor_cpu_threads(memory_mb: int = PROCESSOR_MEMORY_MB) -> int:
    """ONNX Runtime's intra-op threads in one processor: its vCPUs, rounded up (one worker per environment).

    >>> processor_cpu_threads(), processor_cpu_threads(1024), processor_cpu_threads(10240)
    (2, 1, 6)
    """
    return max(1, -(-memory_mb // LAMBDA_MB_PER_VCPU))


def dense_page_seconds(vcpus: float = lambda_vcpus()) -> float:
    """Seconds one dense page takes on ``vcpus`` vCPUs (Amdahl's law through the two measured points).

    Below one vCPU the page gets that share of one: a 1,024 MB function is throttled to 0.58 of a core.

    >>> round(dense_page_seconds(1), 2), round(dense_page_seconds(2), 2), round(dense_page_seconds(), 2)
    (3.2, 2.06, 2.26)
    """
    serial = 2 * DENSE_PAGE_SECONDS_TWO_VCPUS / DENSE_PAGE_SECONDS_ONE_VCPU - 1
    if vcpus < 1:
        return DENSE_PAGE_SECONDS_ONE_VCPU / vcpus
    return DENSE_PAGE_SECONDS_ONE_VCPU * (serial + (1 - serial) / vcpus)


def worst_chunk_seconds(
    pages_per_chunk: int = CPU_PAGES_PER_CHUNK, memory_mb: int = PROCESSOR_MEMORY_MB, max_pages: int = MAX_PAGES
) -> float:
    """The longest one processor invocation may run: the overhead, a full chunk of worst-case pages, and the
    merge of the largest job's chunks (the last chunk to finish merges).

    An unsplit job has at most ``pages_per_chunk`` pages too, so this bounds every processor run; it must fit
    in the processor's timeout (``PlatformConfig`` refuses a config where it does not).

    >>> round(worst_chunk_seconds())  # 30 s + 6 pages x 3 x 2.26 s + 334 chunks x 0.2 s
    137
    """
    chunks = -(-max_pages // pages_per_chunk)
    pages = pages_per_chunk * WORST_PAGE_FACTOR * dense_page_seconds(lambda_vcpus(memory_mb))
    return CHUNK_OVERHEAD_SECONDS + pages + chunks * MERGE_SECONDS_PER_CHUNK


def processor_pages_per_minute(
    max_concurrency: int = PROCESSOR_MAX_CONCURRENCY, memory_mb: int = PROCESSOR_MEMORY_MB
) -> float:
    """Dense pages a minute the CPU route reads with ``max_concurrency`` processors busy (warm, no overhead).

    >>> round(processor_pages_per_minute())  # 20 x 60 s / 2.26 s a page
    531
    """
    return max_concurrency * 60 / dense_page_seconds(lambda_vcpus(memory_mb))


def peak_concurrency(
    invoker: int = INVOKER_MAX_CONCURRENCY,
    processor: int = PROCESSOR_MAX_CONCURRENCY,
    webhook_deliverer: int = WEBHOOK_DELIVERER_MAX_CONCURRENCY,
    dlq_consumer: int = DLQ_CONSUMER_MAX_CONCURRENCY,
    others: int = 10,
) -> int:
    """The most concurrent executions a stage can ask of the account at once: the bounded functions at their
    bounds plus ``others`` for the unbounded, short ones (completion, API, ingest, sweeper, scale-in, whose
    load follows the bounded ones).

    >>> peak_concurrency()  # 5 + 20 + 5 + 2 + 10
    42
    """
    return invoker + processor + webhook_deliverer + dlq_consumer + others


def processor_admission_lease_seconds(processor_timeout_seconds: int = PROCESSOR_TIMEOUT_SECONDS) -> int:
    """How long a processor slot holds without being released: the processor's timeout plus a margin.

    >>> processor_admission_lease_seconds()  # 900 + 120
    1020
    """
    return processor_timeout_seconds + ADMISSION_LEASE_MARGIN_SECONDS


def worst_endpoint_request_seconds(
    pages_per_chunk: int = GPU_PAGES_PER_CHUNK, vl_page_seconds: float = VL_PAGE_SECONDS
) -> float:
    """The longest one endpoint request may run: the overhead and a full chunk of worst-case pages.

    A job of no more than ``pages_per_chunk`` pages is one such request; a longer one is answered with a
    split plan (its pages counted, not read) and then one request per chunk. It must fit in the invocation
    timeout (``PlatformConfig`` refuses a config where it does not).

    >>> worst_endpoint_request_seconds()  # 30 s + 10 pages x 3 x 2 s
    90.0
    """
    return ENDPOINT_REQUEST_OVERHEAD_SECONDS + pages_per_chunk * WORST_PAGE_FACTOR * vl_page_seconds


def endpoint_drain_seconds(
    max_pages: int = MAX_PAGES,
    pages_per_chunk: int = GPU_PAGES_PER_CHUNK,
    slots: int = MAX_INSTANCE_COUNT * MAX_CONCURRENT_INVOCATIONS_PER_INSTANCE,
    vl_page_seconds: float = VL_PAGE_SECONDS,
) -> float:
    """How long the endpoint takes, at worst, to start the last chunk request of the largest job admitted.

    Its chunks run ``slots`` (instances x concurrent invocations per instance) at a time; the last one waits
    for every round before it. It must start within the request TTL, or SageMaker expires it. (Requests of
    other jobs queued before it add to its wait; the TTL bounds that too, and the job then fails once.)

    >>> endpoint_drain_seconds()  # (200 chunks - 1) x 90 s on 1 slot
    17910.0
    """
    chunks = -(-max_pages // pages_per_chunk)
    rounds = -(-chunks // slots) - 1
    return rounds * worst_endpoint_request_seconds(pages_per_chunk, vl_page_seconds)


def completion_memory_floor_mb(
    max_output_bytes: int = MAX_ENDPOINT_OUTPUT_BYTES, baseline_mb: int = COMPLETION_BASELINE_MB
) -> int:
    """The least memory that lets the completion function publish the largest output it admits.

    >>> completion_memory_floor_mb()  # 96 MB + 7 x 50 MB
    446
    """
    return baseline_mb + -(-OUTPUT_MEMORY_FACTOR * max_output_bytes // (1024 * 1024))


def dead_letter_visibility_timeout_seconds(dlq_consumer_timeout_seconds: int = DLQ_CONSUMER_TIMEOUT_SECONDS) -> int:
    """The DLQ's visibility timeout: AWS's minimum factor x the DLQ consumer's timeout.

    >>> dead_letter_visibility_timeout_seconds()  # 6 x 60 s
    360
    """
    return MIN_VISIBILITY_TIMEOUT_FACTOR * dlq_consumer_timeout_seconds


def inflight_window_seconds(
    invocation_timeout_seconds: int = INVOCATION_TIMEOUT_SECONDS, inflight_margin_seconds: int = INFLIGHT_MARGIN_SECONDS
) -> int:
    """How long a SageMaker job PROCESSING keeps the scale-in function from scaling the endpoint to zero.

    The longest a request may run (the invocation timeout) plus a margin.

    >>> inflight_window_seconds()  # 3600 s + 300 s
    3900
    """
    return invocation_timeout_seconds + inflight_margin_seconds


def queued_deadline_seconds(queue_retention_days: int = QUEUE_RETENTION_DAYS) -> int:
    """How long a job may stay QUEUED (from ``created_at``) before the sweeper fails it ``timed_out``.

    A QUEUED job's message is still on the queue: waiting its turn (the invoker throttled, processors
    holding the account's concurrency), or coming back after a failed receive. SQS keeps it until its
    retention period ends, and every receive either starts the job, or ends it (the last receive, the DLQ
    consumer). Only a message that outlived its retention is gone without a trace, so the deadline is
    the retention plus ``DEAD_LETTER_MARGIN_SECONDS`` for the last receive's redrive and the DLQ consumer.
    Counting receives instead would fail jobs that are only waiting their turn.

    >>> queued_deadline_seconds()  # 4 days + 600 s
    346200
    """
    return queue_retention_days * 86_400 + DEAD_LETTER_MARGIN_SECONDS


def lambda_deadline_seconds(
    processor_max_event_age_hours: int = PROCESSOR_MAX_EVENT_AGE_HOURS,
    processor_timeout_seconds: int = PROCESSOR_TIMEOUT_SECONDS,
) -> int:
    """How long a job may stay PROCESSING on the CPU processor (from ``started_at``) before it is swept.

    The invoker marks the job PROCESSING *before* its asynchronous invoke, and Lambda may hold that event
    in its async queue (throttling, a concurrency limit, an outage) for up to the max event age before the
    run starts. The run then takes at most the processor's timeout. A job younger than max event age +
    timeout can therefore still be waiting or running, so both count. A long document takes that path twice:
    the run that opens it launches its chunks, which are asynchronous events too, and each may wait and run
    as long again. Plus ``FAILURE_DESTINATION_MARGIN_SECONDS`` for the on-failure destination (the
    completion function, which normally fails an expired or crashed event first). The sweeper is the
    backstop for what reported nothing.

    >>> lambda_deadline_seconds()  # 2 x (6 h + 900 s) + 300 s
    45300
    """
    hop = processor_max_event_age_hours * 3600 + processor_timeout_seconds
    return 2 * hop + FAILURE_DESTINATION_MARGIN_SECONDS


def sagemaker_deadline_seconds(
    inflight_window: int = inflight_window_seconds(), request_ttl_seconds: int = REQUEST_TTL_SECONDS
) -> int:
    """How long a job may stay PROCESSING on the endpoint (from ``started_at``) before it is swept.

    A request may first wait in SageMaker's queue for up to its TTL (``RequestTTLSeconds``, which the
    invoker sends), then run for up to the in-flight window (:func:`inflight_window_seconds`: the invocation
    timeout plus a margin). A long document takes that path twice: its first request is answered with a
    split plan, and the chunk requests sent then may each wait and run as long again. Plus
    ``NOTIFICATION_MARGIN_SECONDS`` for the last notification to reach the completion function. A job
    younger than that can still be finished by the endpoint, so the sweeper leaves it alone: it never fails
    a job that SageMaker will still run and bill.

    >>> sagemaker_deadline_seconds()  # 2 x (21,600 s TTL + 3600 s + 300 s) + 600 s
    51600
    """
    return 2 * (request_ttl_seconds + inflight_window) + NOTIFICATION_MARGIN_SECONDS


def webhook_delivery_attempts(
    first_retry_seconds: int = WEBHOOK_FIRST_RETRY_SECONDS,
    max_interval_seconds: int = WEBHOOK_MAX_RETRY_INTERVAL_SECONDS,
    window_seconds: int = WEBHOOK_RETRY_WINDOW_SECONDS,
) -> int:
    """How many times a webhook is tried before it is dead-lettered: the first attempt, then one after each
    wait of ``webhook_retry_delay_seconds``, until the waits add up to ``window_seconds``.

    With the defaults the waits are 30, 60, 120, 240, 480, 960 and 1920 s (3,810 s), then 3,600 s each;
    24 h = 86,400 s needs ceil((86,400 - 3,810) / 3,600) = 23 more, so 1 + 7 + 23 = 31 attempts, the last
    86,610 s (24.06 h) after the first.

    >>> webhook_delivery_attempts()
    31
    >>> webhook_delivery_attempts(1, 2, 6)  # waits 1, 2, 2, 2: four retries reach 6 s
    5
    """
    attempts, waited = 1, 0
    while waited < window_seconds:
        waited += webhook_retry_delay_seconds(attempts, first_retry_seconds, max_interval_seconds)
        attempts += 1
    return attempts


def webhook_retry_delay_seconds(
    failed_attempt: int,
    first_retry_seconds: int = WEBHOOK_FIRST_RETRY_SECONDS,
    max_interval_seconds: int = WEBHOOK_MAX_RETRY_INTERVAL_SECONDS,
) -> int:
    """The wait after failed attempt number ``failed_attempt`` (1-based): doubling from the first retry's,
    capped at ``max_interval_seconds``.

    >>> [webhook_retry_delay_seconds(n) for n in (1, 2, 7, 8, 30)]
    [30, 60, 1920, 3600, 3600]
    """
    return min(max_interval_seconds, first_retry_seconds * 2 ** min(failed_attempt - 1, 30))


def webhook_queue_visibility_timeout_seconds(deliverer_timeout_seconds: int = WEBHOOK_DELIVERER_TIMEOUT_SECONDS) -> int:
    """The webhook queue's visibility timeout: AWS's 6 x the consuming function's timeout (a failed delivery
    sets its own, shorter or longer, wait before it returns).

    >>> webhook_queue_visibility_timeout_seconds()  # 6 x (10 x 10 s + 20 s)
    720
    """
    return MIN_VISIBILITY_TIMEOUT_FACTOR * deliverer_timeout_seconds


def webhook_queue_max_receive_count(delivery_attempts: int | None = None) -> int:
    """Receives of a webhook message before SQS itself moves it to the webhook DLQ: twice the scheduled
    attempts. The deliverer dead-letters a delivery by itself once its retry window is over; this only
    catches a message the deliverer keeps crashing on, or one that keeps coming back while another
    invocation holds the webhook.

    >>> webhook_queue_max_receive_count()  # 2 x 31
    62
    """
    return 2 * (webhook_delivery_attempts() if delivery_attempts is None else delivery_attempts)

