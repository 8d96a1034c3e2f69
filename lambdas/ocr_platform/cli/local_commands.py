"""The ``ocr-platform`` commands that run on this machine: ``ocr`` (the engine in this process), ``local``
(the embedded local stack) and ``run`` (the whole pipeline on the local stack)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ocr_platform.cli.command_support import (
    check_writable,
    engine_options,
    pdf_target,
    print_json,
    print_preview,
    print_warnings,
    read_by,
    write_formatted,
)
from ocr_platform.cli.lazy_engine import LazyEngine
from ocr_platform.cli.progress import JobProgress
from ocr_platform.core.client_errors import ExitStatus, PlatformClientError, describe_aws_error
from ocr_platform.document.url_input import is_url_input

if TYPE_CHECKING:  # boto3 and the job store load only for the commands that talk to a stack, not for `ocr`
    from ocr_platform.cli.client import OcrClient
    from ocr_platform.jobs.store import JobItem


def run_local_ocr(args: argparse.Namespace) -> int:
    """``ocr-platform ocr``: intake + engine in this process; the error code and message on failure.

    The file is opened and its type decided, and every output path checked, before any model loads: a file no
    route reads is refused in well under a second, and an Office or HTML file without pictures loads no model.
    """
    import os
    import time
    import uuid

    from ocr_platform.core import defaults
    from ocr_platform.core.errors import JobError
    from ocr_platform.core.settings import ENGINE_FALLBACK_ON, ENV
    from ocr_platform.document.intake import file_type
    from ocr_platform.engines.reading import ocr_document

    if not args.file.is_file():
        raise PlatformClientError("file_not_found", f"{args.file} is not a readable file.")
    pdf = pdf_target(args)
    check_writable(args.output if args.format != "pdf" else None, pdf, args.raw_output)

    def progress(done: int, total: int) -> None:
        if total > 1:
            print(f"  page {done}/{total}", file=sys.stderr)

    started = time.perf_counter()
    # This machine, not a deployed stage: a layout model whose weights are missing here runs PP-OCRv5 with an
    # engine_fallback warning (OCR_ENGINE_FALLBACK=none in the caller's environment fails instead).
    fallback = {ENV.ENGINE_FALLBACK: os.environ.get(ENV.ENGINE_FALLBACK, ENGINE_FALLBACK_ON)}
    engine = LazyEngine(args.model, fallback)
    try:
        kind = file_type(args.file)
        if pdf and kind.native:
            print(f"error: unsupported_type: --pdf (or --format pdf) lays text over page images; a {kind.value.upper()} file "
                  "is read from its content and has none (omit it).", file=sys.stderr)
            return ExitStatus.JOB_FAILED
        result, raw = ocr_document(
            args.file, job_id=f"local-{uuid.uuid4().hex[:12]}", model=args.model, engine=engine,
            language=args.lang, pages=args.pages, options=engine_options(args), on_page=progress,
            max_failed_percent=defaults.MAX_FAILED_PAGE_PERCENT,
        )
    except JobError as err:
        print(f"error: {err.code}: {err.message}", file=sys.stderr)
        return ExitStatus.JOB_FAILED
    result["timings"]["load"] = round(engine.load_seconds, 4)
    if pdf:
        from ocr_platform.outputs.searchable_pdf import write_searchable_pdf

        write_searchable_pdf(args.file, result, pdf)
        print(f"wrote the searchable PDF {pdf}", file=sys.stderr)
    if args.format != "pdf":
        from ocr_platform.outputs.formats import FormatUnavailable, render

        try:
            write_formatted(render(args.format, result), args.output)
        except FormatUnavailable as err:
            print(f"error: {err.code}: {err}", file=sys.stderr)
            return ExitStatus.JOB_FAILED
    if args.raw_output:
        args.raw_output.write_text(json.dumps(raw, ensure_ascii=False, default=str), encoding="utf-8")
    lines = sum(len(p["lines"]) for p in result["pages"])
    print(
        f"{read_by(result)}: {result['page_count']} page(s), {lines} line(s) in {time.perf_counter() - started:.1f} s"
        + (f" -> {args.output}" if args.output else ""),
        file=sys.stderr,
    )
    if args.output:
        print_preview(result["text"])
    print_warnings(result["warnings"])
    return ExitStatus.OK


def run_local_stack_command(args: argparse.Namespace) -> int:
    """``ocr-platform local up|down|status|env``."""
    from ocr_platform.local import supervisor

    if args.action == "env":
        running = supervisor.running_stack()
        if running is None:
            raise PlatformClientError("no_local_stack", "no local stack is running; run `ocr-platform local up`")
        print("\n".join(running.export_lines()))
        return ExitStatus.OK
    if args.action == "up":
        info, started = supervisor.up()
        print(f"local stack {'started' if started else 'already running'} (pid {info.pid}, start-up {info.startup_seconds:.2f} s)", file=sys.stderr)
        print(info.console_sign_in(), file=sys.stderr)
        print_json(info.client_environment())
        return 0
    if args.action == "down":
        print("local stack stopped" if supervisor.down() else "no local stack was running", file=sys.stderr)
        return 0
    running = supervisor.running_stack()
    if running is None:
        print("no local stack is running", file=sys.stderr)
        return 1
    print(running.console_sign_in(), file=sys.stderr)
    print_json({"pid": running.pid, "started_at": running.started_at, **running.client_environment()})
    return 0


def _console_user(info: Any) -> str | None:
    """The ``sub`` of the local console's user, whose jobs the console lists (``None`` on an older stack)."""
    import boto3

    if not info.user_pool_id or not info.console_user:
        return None
    user = boto3.client("cognito-idp").admin_get_user(UserPoolId=info.user_pool_id, Username=info.console_user)
    return next((a["Value"] for a in user["UserAttributes"] if a["Name"] == "sub"), None)


def run_pipeline(args: argparse.Namespace) -> int:
    """``ocr-platform run``: submit to the local stack like ``submit``, follow the job live, write the result."""
    import os
    import time

    import boto3

    from ocr_platform.cli.client import OcrClient, PlatformResources
    from ocr_platform.local import supervisor

    if not is_url_input(args.file) and not Path(args.file).is_file():
        raise PlatformClientError("file_not_found", f"{args.file} is not a readable file.")
    if args.output is None and args.format != "pdf":
        from ocr_platform.outputs.formats import FORMATS

        args.output = Path(FORMATS[args.format].file_name)
    pdf = pdf_target(args)
    check_writable(args.output if args.format != "pdf" else None, pdf)
    if pdf and not is_url_input(args.file):
        _refuse_pdf_of_native(Path(args.file))
    started = time.perf_counter()
    try:
        info, started_now = supervisor.up()
    except (RuntimeError, TimeoutError) as err:
        raise PlatformClientError("local_stack_failed", str(err)) from None
    if started_now:
        print(f"local stack started in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    os.environ.update(info.client_environment())
    client = OcrClient(PlatformResources(info.bucket, info.queue_url, info.table))
    sagemaker = boto3.client("sagemaker")
    submitted = time.perf_counter()
    job = client.submit(
        args.file, model=args.model, language=args.lang, pages=args.pages, options=engine_options(args), owner=_console_user(info),
        callback_url=args.callback_url,
    )
    job_id = job["job_id"]
    print(f"job {job_id}: {args.model} on {job.get('file_name', args.file)}", file=sys.stderr)
    if info.console_url:
        print(f"  console: {info.console_url}/#/jobs/{job_id}", file=sys.stderr)
        print(f"  {info.console_sign_in()}", file=sys.stderr)

    pages = JobProgress()
    polled: dict[str, Any] = {}  # the last item ``progress`` saw and what it made of it

    def progress(job: JobItem) -> tuple[Any, ...]:
        seen: tuple[Any, ...] = (job["status"], job.get("backend", ""))
        if job.get("backend") == "sagemaker" and job["status"] == "PROCESSING":
            variant = sagemaker.describe_endpoint(EndpointName=info.endpoint)["ProductionVariants"][0]
            seen += ("GPU instance up" if int(variant.get("CurrentInstanceCount", 0)) else "queued until the GPU instance starts",)
        # a line every HEARTBEAT_SECONDS while nothing else changes, so a slow step is never silent
        heartbeat = int((time.perf_counter() - submitted) // HEARTBEAT_SECONDS)
        polled.update(job=job, seen=(*seen, pages.step(job), heartbeat))
        return polled["seen"]

    shown: list[tuple[Any, ...]] = []

    def show(job: JobItem) -> None:
        seen = polled["seen"] if polled.get("job") is job else progress(job)  # wait() just computed it
        if shown and shown[-1] == seen:  # the first poll found the job as submitted
            return
        shown.append(seen)
        details = ", ".join(x for x in seen[1:] if isinstance(x, str) and x)
        line = pages.line(job, now=time.perf_counter())
        print(f"  {time.perf_counter() - submitted:6.1f} s  {line}" + (f" ({details})" if details else ""), file=sys.stderr)

    show(job)  # QUEUED, as written: a fast stack may have moved it on before the first poll
    job = client.wait(job_id, timeout=args.timeout, poll_seconds=0.2, on_change=show, progress=progress)
    if job["status"] == "FAILED":
        print(f"error: {job['error']['code']}: {job['error']['message']}", file=sys.stderr)
        return ExitStatus.JOB_FAILED
    try:
        _finish_run(client, args, job_id, pdf, submitted)
    except Exception as err:  # noqa: BLE001 - the job is done: say where its result is rather than fail it
        problem = describe_aws_error(err) if not isinstance(err, OSError) else PlatformClientError("output_unwritable", str(err))
        print(f"warning: {problem.code}: {problem.message}", file=sys.stderr)
        print(f"job {job_id} COMPLETED: its result is {job.get('result')} (save it with `ocr-platform result {job_id} --output FILE`)",
              file=sys.stderr)
    return ExitStatus.OK


#: Seconds between the progress lines ``run`` prints while a job's state does not change.
HEARTBEAT_SECONDS = 10.0


def _refuse_pdf_of_native(path: Path) -> None:
    """``--pdf`` asks for text laid over page images; an Office or HTML file has none, so it is refused up front."""
    from ocr_platform.core.errors import JobError
    from ocr_platform.document.intake import file_type

    try:
        kind = file_type(path)
    except JobError:
        return  # the job says what is wrong with the file
    if kind.native:
        raise PlatformClientError(
            "unsupported_type",
            f"--pdf (or --format pdf) lays text over page images; a {kind.value.upper()} file is read from its content and has none (omit it).",
        )


def _finish_run(client: OcrClient, args: argparse.Namespace, job_id: str, pdf: Path | None, submitted: float) -> None:
    """A COMPLETED job's result written where ``run`` was asked, and its summary: what read the pages."""
    import time

    result = client.result(job_id)
    if args.format != "pdf":
        write_formatted(client.formatted(job_id, args.format), args.output)
    lines = sum(len(p["lines"]) for p in result["pages"])
    print(
        f"COMPLETED in {time.perf_counter() - submitted:.1f} s: {result['page_count']} page(s), {lines} line(s), "
        f"read by {read_by(result)} -> {pdf if args.format == 'pdf' else args.output}",
        file=sys.stderr,
    )
    print_preview(result["text"])
    print_warnings(result.get("warnings", []))
    if pdf:
        client.save_searchable_pdf(job_id, pdf)
        print(f"wrote the searchable PDF {pdf}", file=sys.stderr)
    if args.callback_url:
        _report_webhook(client, job_id)


def _report_webhook(client: OcrClient, job_id: str, *, wait_seconds: float = 30.0) -> None:
    """Say what became of the job's webhook: delivered, dead-lettered, or still being retried by the stack."""
    import time

    deadline = time.monotonic() + wait_seconds
    told = 0
    while True:
        job = client.status(job_id)
        ended = job.get("callback_status") in ("delivered", "dead_lettered")
        attempts = job.get("callback_attempts", [])
        # Each failed attempt that was retried is said, as it happens (the retries take tens of seconds) or, when
        # the delivery ended before ``run`` looked, at once; the last attempt of an ended delivery is the summary's.
        retried = attempts[:-1] if ended else attempts
        for number, attempt in enumerate(retried[told:], start=told + 1):
            print(f"  webhook attempt {number} failed ({attempt.get('status_code') or attempt.get('error', '?')}); the stack retries it",
                  file=sys.stderr)
        told = max(told, len(retried))
        if ended or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    last = attempts[-1] if attempts else {}
    outcome = f"HTTP {last['status_code']}" if "status_code" in last else last.get("error", "no attempt yet")
    state = job.get("callback_status", "pending")
    more = "" if state in ("delivered", "dead_lettered") else "; the local stack keeps retrying it"
    print(f"webhook {state} after {len(attempts)} attempt(s) ({outcome}){more}", file=sys.stderr)
