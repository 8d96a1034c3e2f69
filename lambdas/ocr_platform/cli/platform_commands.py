"""The ``ocr-platform`` commands that talk to a platform: ``submit``, ``status``, ``result`` and ``models seed``
(to the stack ``resolve_target`` finds), ``console publish`` (to a deployed stack) and ``doctor`` (the account)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ocr_platform.cli.command_support import check_writable, engine_options, pdf_target, print_json, print_warnings, write_formatted
from ocr_platform.cli.progress import JobProgress
from ocr_platform.core.client_errors import ExitStatus, PlatformClientError
from ocr_platform.document.url_input import is_url_input

if TYPE_CHECKING:  # boto3 loads only for the commands that talk to a stack, not for `ocr`
    from ocr_platform.cli.client import OcrClient


def run_platform_command(args: argparse.Namespace) -> int:
    """``submit``, ``status``, ``result`` and ``models seed`` against the platform ``resolve_target`` finds."""
    import os

    from ocr_platform.cli.client import OcrClient, resolve_target

    if args.command == "models":
        _check_model_dirs(args.model_dirs)
    if args.command == "submit" and not is_url_input(args.file) and not Path(args.file).is_file():
        raise PlatformClientError("file_not_found", f"{args.file} is not a readable file.")
    if args.command == "result":
        check_writable(args.output if args.format != "pdf" else None, pdf_target(args))
    target = resolve_target(args.stack, region=args.region)
    os.environ.update(target.environment)
    resources = target.resources
    if args.command == "models":
        from ocr_platform.engines.model_cache import seed_cache

        for key in seed_cache(resources.bucket, args.model_dirs):
            print(f"s3://{resources.bucket}/{key}")
        return ExitStatus.OK
    client = OcrClient(resources)
    if args.command in ("status", "result") and args.job_id.startswith("s3://"):
        args.job_id = client.inbox_job_id(args.job_id)
    if args.command == "submit":
        job = client.submit(
            args.file, model=args.model, language=args.lang, pages=args.pages, options=engine_options(args),
            callback_url=args.callback_url,
        )
        print(f"submitted job {job['job_id']} ({job['model']}, {job.get('file_name', args.file)}) to the {target.source}", file=sys.stderr)
        if not args.wait:
            print_json(job)
            return ExitStatus.OK
        return _wait_and_print(client, job["job_id"], args.timeout)
    if args.command == "status":
        if args.wait:
            return _wait_and_print(client, args.job_id, args.timeout, not_written_yet=True)
        job = client.status(args.job_id)
        print_json(job)
        print_warnings(job.get("warnings", []))
        return ExitStatus.JOB_FAILED if job["status"] == "FAILED" else ExitStatus.OK
    pdf = pdf_target(args)
    if args.format == "json":
        document = client.result(args.job_id)
        if args.output:
            args.output.write_text(json.dumps(document, indent=2, ensure_ascii=False))
            print(f"wrote {args.output} ({document['page_count']} page(s))", file=sys.stderr)
        else:
            print_json(document)
    elif args.format != "pdf":
        write_formatted(client.formatted(args.job_id, args.format), args.output)
        if args.output:
            print(f"wrote {args.output} ({args.format})", file=sys.stderr)
    if pdf:
        client.save_searchable_pdf(args.job_id, pdf)
        print(f"wrote the searchable PDF {pdf}", file=sys.stderr)
    return ExitStatus.OK


def _wait_and_print(client: OcrClient, job_id: str, timeout: float, *, not_written_yet: bool = False) -> int:
    """Poll the job to its end, one progress line per change on stderr, then print its item (``submit --wait``,
    ``status --wait``); ``not_written_yet``: a missing item is one its producer has not written yet."""
    import time

    pages = JobProgress()
    job = client.wait(
        job_id, timeout=timeout, progress=lambda j: (j["status"], pages.step(j)), until_written=not_written_yet,
        on_change=lambda j: print(f"  {pages.line(j, now=time.monotonic())}", file=sys.stderr),
    )
    print_json(job)
    print_warnings(job.get("warnings", []))
    return ExitStatus.OK if job["status"] == "COMPLETED" else ExitStatus.JOB_FAILED


def _check_model_dirs(model_dirs: list[Path]) -> None:
    """``models seed`` refuses, before it looks for a platform, a path that is not a model directory."""
    from ocr_platform.engines.model_cache import is_model_dir

    for model_dir in model_dirs:
        if not model_dir.is_dir():
            raise PlatformClientError("not_a_model_dir", f"{model_dir} is not a directory; name a model directory (e.g. PP-OCRv5_mobile_det).")
        if not is_model_dir(model_dir):
            raise PlatformClientError(
                "not_a_model_dir",
                f"{model_dir} is not a model directory: it needs inference.yml and inference.pdiparams (or model.safetensors).",
            )


def run_console_command(args: argparse.Namespace) -> int:
    """``ocr-platform console publish --stack NAME``: the console's files and config.json to the stack's console."""
    import boto3

    from ocr_platform.cli.client import stack_outputs
    from ocr_platform.inputs.console_publish import publish_console

    region = args.region or boto3.session.Session().region_name
    if not region:
        raise PlatformClientError("no_region", "No AWS region is set; pass --region or set AWS_DEFAULT_REGION.")
    outputs = stack_outputs(args.stack, region=region)
    keys = publish_console(outputs, region, s3=boto3.client("s3", region_name=region), cloudfront=boto3.client("cloudfront"))
    print(f"published {len(keys)} file(s) to s3://{outputs['ConsoleBucketName']}; open {outputs['ConsoleUrl']}", file=sys.stderr)
    return ExitStatus.OK


def run_doctor(args: argparse.Namespace) -> int:
    """``ocr-platform doctor``: one line per check of ``ocr_platform.cli.doctor``; exit 1 when one FAILs."""
    from ocr_platform.cli import doctor

    results = doctor.diagnose(profile=args.profile, region=args.region, context_options=args.context)
    print(doctor.format_results(results))
    return doctor.exit_status(results)
