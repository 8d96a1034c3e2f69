"""X-Ray tracing of the Lambda handlers: one Powertools ``Tracer``, and the job id on every trace that handles a job.

A job crosses several functions (the invoker, the CPU processor or the GPU endpoint's notification, the
completion function, perhaps the sweeper or the DLQ consumer) and each invocation is its own trace, or a
part of the invoker's. The ``job_id`` annotation is what joins them: X-Ray indexes annotations, so the
trace search ``annotation.job_id = "<job id>"`` lists every invocation that touched that job.

Where a handler deals with one job per invocation it annotates the invocation (``annotate_job``); where an
invocation may touch several (a batch of SQS records, a sweep), each job gets its own subsegment
(``@tracer.capture_method`` on the record handler, or :func:`job_subsegment`), since a second annotation with
the same key on one subsegment would replace the first.

Outside Lambda (tests, the local stack, a developer's shell) Powertools disables the tracer by itself
(no ``LAMBDA_TASK_ROOT``, or ``POWERTOOLS_TRACE_DISABLED=true``): every call here is then a no-op, and
nothing tries to reach an X-Ray daemon.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from aws_lambda_powertools import Tracer

#: The annotation that follows one job through every function (``annotation.job_id = "..."``).
JOB_ID_ANNOTATION = "job_id"
#: The routing key of the job, to narrow a search to one route (``annotation.model = "paddleocr-vl"``).
MODEL_ANNOTATION = "model"
#: Only AWS SDK calls and outbound HTTP (webhooks, documents by URL) get subsegments: ``patch_all`` would
#: import and wrap every library X-Ray knows (requests, sqlite3, httpx, ...) at each cold start.
PATCHED_MODULES = ("botocore", "httplib")

tracer = Tracer(patch_modules=PATCHED_MODULES)


def annotate_job(job_id: str | None, *, model: str | None = None) -> None:
    """Put the job id (and its model) on the current segment, so the job's trace search finds this invocation.

    ``None`` or an empty id (a message too malformed to name its job) annotates nothing.
    """
    if not job_id:
        return
    tracer.put_annotation(JOB_ID_ANNOTATION, job_id)
    if model:
        tracer.put_annotation(MODEL_ANNOTATION, model)


@contextmanager
def job_subsegment(name: str, job_id: str, **annotations: str) -> Iterator[None]:
    """A subsegment of its own for one job among several in an invocation, annotated with its id.

    Used where one invocation finishes several jobs (the sweeper), so that each job's annotation survives.
    Disabled tracing makes this a no-op subsegment.
    """
    with tracer.provider.in_subsegment(f"## {name}") as subsegment:
        subsegment.put_annotation(JOB_ID_ANNOTATION, job_id)
        for key, value in annotations.items():
            if value:
                subsegment.put_annotation(key, value)
        yield
